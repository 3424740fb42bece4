"""Published measurements against their ceilings: one point per measurement, measured rate against
the book's ceiling under the same conditions, on log axes, with the roof (measured = ceiling) and
the book's half-way line; a dropdown shows one family of hardware or of weight precision."""
from __future__ import annotations

import plotly.graph_objects as go

from inferlimits.arithmetic.generation import COMPUTE_BOUND, MEMORY_BOUND, OVERHEAD_BOUND
from inferlimits.arithmetic.measured import NEAR, Comparison
from inferlimits.figures import ACCENT, INK, PALETTE, base_layout

RANGE = (5.0, 500_000.0)      # tokens per second, both axes
COLOURS = {MEMORY_BOUND: INK, COMPUTE_BOUND: PALETTE[2], OVERHEAD_BOUND: ACCENT}
ROOF, HALF = "#222222", "#777777"
#: the dropdown's families: a label and the test a measurement must pass
HARDWARE = (("A100", lambda m: m.accelerator.startswith("A100")),
            ("H100 and H200", lambda m: m.accelerator.startswith(("H100", "H200"))),
            ("B200", lambda m: m.accelerator.startswith("B200")),
            ("MI300X", lambda m: m.accelerator == "MI300X"),
            ("Apple and CPU", lambda m: m.accelerator.startswith(("Apple", "AMD EPYC"))))
PRECISIONS = (("16-bit weights", lambda m: m.weight_precision in ("BF16", "FP16")),
              ("8-bit weights", lambda m: m.weight_precision in ("FP8", "INT8", "Q8_0")),
              ("4-bit weights", lambda m: m.weight_precision in ("INT4", "Q4_0")))


def _hover(c: Comparison) -> str:
    m = c.measurement
    devices = f"{m.gpus} × {m.accelerator}" if m.gpus > 1 else m.accelerator
    batch = "unstated" if m.batch is None else f"{m.batch:,}"
    return (f"<b>{m.model}</b> on {devices}<br>weights {m.weight_precision}, math {m.math_precision}, "
            f"batch {batch}<br>measured {c.measured:,.4g}, ceiling {c.ceiling:,.4g} ({c.unit})<br>"
            f"{c.share:.0%} of the ceiling: {c.regime}<br>{m.framework[:70]}<br>source: {m.source[:90]}"
            + ("" if m.clear else "<br><i>a condition is unclear: not used for a claim</i>"))


def figure(comparisons: list[Comparison]) -> go.Figure:
    """Every comparison as a point; open markers for rows whose conditions are unclear."""
    lo, hi = RANGE
    fig = go.Figure(layout=base_layout("Published measurements against the book's ceilings",
                                       "the book's ceiling under the same conditions (tokens per second)",
                                       "measured (tokens per second)", x_log=True, y_log=True, x_range=RANGE,
                                       y_range=RANGE, legend=True))
    fig.add_trace(go.Scatter(x=[lo, hi], y=[lo, hi], mode="lines", line=dict(color=ROOF, width=2),
                             name="measured = ceiling (the roof)", hoverinfo="skip"))
    fig.add_trace(go.Scatter(x=[lo, hi], y=[lo * NEAR, hi * NEAR], mode="lines", name="half the ceiling",
                             line=dict(color=HALF, width=2, dash="dash"), hoverinfo="skip"))
    for regime, colour in COLOURS.items():  # legend entries only
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", marker=dict(color=colour, size=10),
                                 name=regime))
    for c in comparisons:
        colour = COLOURS[c.regime]
        fig.add_trace(go.Scatter(
            x=[c.ceiling], y=[c.measured], mode="markers", showlegend=False, hovertemplate=_hover(c) + "<extra></extra>",
            marker=dict(size=11, color=colour if c.measurement.clear else "white", line=dict(color=colour, width=2))))
    fixed = [True] * (2 + len(COLOURS))
    buttons = [dict(label="every measurement", method="restyle", args=[{"visible": fixed + [True] * len(comparisons)}])]
    for label, keep in HARDWARE + PRECISIONS:
        shown = [keep(c.measurement) for c in comparisons]
        if any(shown):
            buttons.append(dict(label=label, method="restyle", args=[{"visible": fixed + shown}]))
    fig.update_layout(height=640, margin=dict(t=100), updatemenus=[dict(
        name="measurements shown", buttons=buttons, active=0, x=1.0, y=1.02, xanchor="right", yanchor="bottom", direction="down")])
    return fig
