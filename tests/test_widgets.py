"""Kernel-side control panels: every control at its extremes and in the middle redraws the
figure in place (same FigureWidget, new data) and never raises."""
from __future__ import annotations

import ipywidgets as W

from inferlimits import hardware, widgets

NAMES = list(hardware.accelerators())


def _snapshot(fig):
    return [(t.visible, tuple(t.x or ()), tuple(t.y or ()), tuple(t.text or ()) if isinstance(t.text, tuple) else t.text)
            for t in fig.data]


def _positions(control):
    if isinstance(control, W.Dropdown):
        return list(control.options)
    lo, hi = control.min, control.max
    return [lo, (lo + hi) / 2, hi, lo]


def test_roofline_panel_redraws_in_place_for_every_control_position():
    panel = widgets.roofline_panel(NAMES, "B200 (HGX)", 1.0)
    fig = panel.figure
    for control in panel.controls:
        for value in _positions(control):
            if control.value == value:
                continue
            before = _snapshot(fig)
            if isinstance(control, W.FloatLogSlider):
                control.value = 10 ** value
            else:
                control.value = value
            assert panel.figure is fig, "the figure must be updated, not replaced"
            assert _snapshot(fig) != before, f"{control.description}={value} did not change the figure"


def test_panel_carries_the_static_figure_for_pages_without_a_kernel():
    bundle = widgets.roofline_panel(NAMES, "B200 (HGX)", 1.0, div_id="fig-test")._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert 'id="fig-test"' in bundle["text/html"] and "Plotly.newPlot" in bundle["text/html"]
    assert "<script src=" not in bundle["text/html"], "plotly.js is served once by the site, not per figure"
