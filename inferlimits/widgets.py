"""Control panels for a live kernel: ipywidgets controls that redraw a plotly FigureWidget in
place (traces updated, never re-created).

Each panel's output also carries the static figure (plotly's own controls) as ``text/html``:
Jupyter shows the live widgets, the hosted book (which drops the widget view) shows the static
figure. Widget ranges stay inside what the arithmetic accepts, so no position raises.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import ipywidgets as W
import plotly.graph_objects as go

from . import figures
from .display import figure_html


class Panel(W.VBox):
    """Controls above a FigureWidget, with the static figure for pages without a kernel."""

    def __init__(self, controls: list[W.Widget], figure: go.FigureWidget, static: go.Figure, div_id: str):
        super().__init__([W.HBox(controls), figure])
        self.controls, self.figure = controls, figure
        self._static_html = figure_html(static, div_id)
        self._div_id = div_id

    def _repr_mimebundle_(self, **kwargs):
        bundle = super()._repr_mimebundle_(**kwargs) or {}
        bundle = dict(bundle)
        bundle["text/html"] = self._static_html
        bundle["text/plain"] = f"<control panel {self._div_id}: live with a kernel, static without one>"
        return bundle


def roofline_panel(names: Sequence[str], selected: str, intensity_flop_per_byte: float,
                   div_id: str = "fig-roofline") -> Panel:
    """GPU dropdown and a log slider of arithmetic intensity over the roofline."""
    gpu = W.Dropdown(options=list(names), value=selected, description="accelerator")
    lo, hi = figures.INTENSITY_RANGE
    intensity = W.FloatLogSlider(value=intensity_flop_per_byte, base=10, min=math.log10(lo) + 0.3,
                                 max=math.log10(hi) - 0.3, step=0.05, description="FLOP/byte",
                                 readout_format=".3g", continuous_update=True)
    fig = go.FigureWidget(figures.roofline_figure(names, selected, intensity_flop_per_byte))

    def redraw(_change=None):
        state = figures.roofline_state(names, gpu.value, intensity.value)
        with fig.batch_update():
            figures.apply_roofline_state(fig, state, names)

    gpu.observe(redraw, names="value")
    intensity.observe(redraw, names="value")
    static = figures.roofline_static(names, selected, intensity_flop_per_byte)
    return Panel([gpu, intensity], fig, static, div_id)
