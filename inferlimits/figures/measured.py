"""Published measurements against the book's expected rates (appendix A3): ``scoreboard``, each
run's expected figure, predicted by a fit that never saw its source, against its measured figure,
on log axes, coloured by category."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import plotly.graph_objects as go

from inferlimits.figures import FAINT, PALETTE, base_layout, translucent

#: the diagonal, where expected equals measured
ROOF = "#222222"
#: the colour of each category; a run in several takes the first in this order, so that the rarer
#: kinds stand out (a speculative MoE run on eight GPUs is drawn as speculative)
COLOURS = {"speculative": PALETTE[4], "first token": PALETTE[1], "MoE": PALETTE[2],
                 "multi-GPU": PALETTE[3], "batched": PALETTE[6], "batch 1": PALETTE[0]}
#: the legend's words for each colour, which say what the order leaves in it
NAMES = {"speculative": "speculative", "first token": "first token", "MoE": "MoE",
               "multi-GPU": "multi-GPU, dense", "batched": "batched, one GPU, dense",
               "batch 1": "batch 1, one GPU, dense"}
RANGE = (0.2, 2_000_000.0)   # both axes, in each run's own unit
#: the band drawn around the diagonal: expected within this share of measured
BAND = 0.25
#: how far a run outside the chosen category fades
FADED = 0.12
#: what hovering over a run shows: its key, its setup, both figures in its unit, and its source
HOVER = ("<b>%{text}</b><br>%{customdata[0]}<br>measured %{x:,.3~r} %{customdata[1]}, "
         "expected %{y:,.3~r}<br>source: %{customdata[2]}<extra></extra>")


def colour_category(categories: Sequence[str]) -> str:
    """The category a run is coloured by: the first of ``COLOURS`` it belongs to."""
    for c in COLOURS:
        if c in categories:
            return c
    raise ValueError(f"categories must include one of {', '.join(COLOURS)}; got {list(categories)!r}")


def scoreboard(points: Sequence[Mapping[str, object]], band: float = BAND) -> go.Figure:
    """Each run's expected figure (predicted by a fit that never saw its source) against its measured
    figure, both in the run's own unit, on log axes: the diagonal where they agree, a band of
    ±``band`` around it, one colour per category (``colour_category``), and a dropdown that fades
    the runs outside one category.

    ``points``: one mapping per run with ``key``, ``categories`` (those of
    ``expected.CATEGORIES`` it belongs to), ``setup`` and ``source`` (words), ``measured``,
    ``expected`` and ``unit``."""
    if not 0 < band < 1:
        raise ValueError(f"band must be a share between 0 and 1; got {band!r}")
    if not points:
        raise ValueError("points must hold at least one run")
    lo, hi = RANGE
    for p in points:
        for field in ("measured", "expected"):
            if not lo <= float(p[field]) <= hi:
                raise ValueError(f"{field} of {p['key']} ({p[field]}) lies outside the axes {lo:g} to {hi:g}")
    fig = go.Figure(layout=base_layout(
        "The book's expected figure against the published one, each run predicted without its source",
        "measured, in the run's own unit (tokens/s, or ms for a time)", "expected by the book (the same unit)",
        x_log=True, y_log=True, x_range=RANGE, y_range=RANGE, legend=True))
    fig.add_trace(go.Scatter(x=[lo, hi, hi, lo], y=[lo * (1 - band), hi * (1 - band), hi * (1 + band), lo * (1 + band)],
                             fill="toself", mode="lines", line=dict(width=0), fillcolor=translucent(FAINT, 0.3),
                             name=f"within {band:.0%}", hoverinfo="skip"))
    fig.add_trace(go.Scatter(x=[lo, hi], y=[lo, hi], mode="lines", line=dict(color=ROOF, width=2),
                             name="expected = measured", hoverinfo="skip"))
    groups = {c: [p for p in points if colour_category(p["categories"]) == c] for c in COLOURS}
    shown = [c for c, group in groups.items() if group]
    for c in shown:
        group = groups[c]
        fig.add_trace(go.Scatter(
            x=[_round(p["measured"]) for p in group], y=[_round(p["expected"]) for p in group], mode="markers",
            name=NAMES[c], text=[p["key"] for p in group],
            customdata=[[p["setup"], p["unit"], p["source"]] for p in group], hovertemplate=HOVER,
            marker=dict(size=9, color=COLOURS[c], line=dict(color="white", width=1)),
            selected=dict(marker=dict(opacity=1.0)), unselected=dict(marker=dict(opacity=FADED))))
    traces = list(range(2, 2 + len(shown)))
    buttons = [dict(label="every run", method="restyle", args=[{"selectedpoints": [None] * len(shown)}, traces])]
    for c in COLOURS:
        picked = [[i for i, p in enumerate(groups[s]) if c in p["categories"]] for s in shown]
        if any(picked):
            buttons.append(dict(label=c, method="restyle", args=[{"selectedpoints": picked}, traces]))
    fig.update_layout(height=680, margin=dict(t=100), updatemenus=[dict(
        name="runs shown", buttons=buttons, active=0, x=1.0, y=1.02, xanchor="right", yanchor="bottom",
        direction="down")])
    return fig


def _round(x: object) -> float:
    """Four significant figures: what the axes and the hover show (the JSON stays short)."""
    return float(f"{float(x):.4g}")
