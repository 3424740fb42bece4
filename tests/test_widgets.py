"""Kernel-side control panels: every control at its extremes and in the middle redraws the
figure in place (same FigureWidget, new data) and never raises. Each chapter's panels are listed
in PANELS with the arguments its chapter uses."""
from __future__ import annotations

import ipywidgets as W
import pytest

from inferlimits import hardware
from inferlimits.figures import roofline

NAMES = list(hardware.accelerators())

PANELS = {
    "roofline": lambda: roofline.panel(NAMES, "B200 (HGX)", 1.0, div_id="fig-test"),
}


def _snapshot(fig):
    return [tuple(repr(t[k]) for k in ("visible", "x", "y", "text")) for t in fig.data] + [repr(fig.layout.title.text)]


def _positions(control):
    if isinstance(control, (W.Dropdown, W.SelectionSlider)):
        return list(control.options)
    lo, hi = control.min, control.max
    if isinstance(control, W.FloatLogSlider):
        lo, hi = 10 ** lo, 10 ** hi
        return [lo, (lo * hi) ** 0.5, hi, lo]
    mid = (lo + hi) // 2 if isinstance(control, W.IntSlider) else (lo + hi) / 2
    return [lo, mid, hi, lo]


@pytest.mark.parametrize("name", PANELS)
def test_every_control_position_redraws_in_place(name):
    panel = PANELS[name]()
    fig = panel.figure
    for control in panel.controls:
        for value in _positions(control):
            if control.value == value:
                continue
            before = _snapshot(fig)
            control.value = value
            assert panel.figure is fig, "the figure must be updated, not replaced"
            assert _snapshot(fig) != before, f"{control.description}={value} did not change the figure"


@pytest.mark.parametrize("name", PANELS)
def test_panels_carry_the_static_figure_for_pages_without_a_kernel(name):
    bundle = PANELS[name]()._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert 'id="fig-test"' in bundle["text/html"] and "Plotly.newPlot" in bundle["text/html"]
    assert "<script src=" not in bundle["text/html"], "plotly.js is served once by the site, not per figure"
