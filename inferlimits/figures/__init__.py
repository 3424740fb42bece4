"""Figure specs, one module per family (``roofline``, ...). Each module has a ``spec`` function
of plain values returning ``{"data": [...], "layout": {...}}`` and a ``panel`` helper that makes
it interactive in both modes (see ``inferlimits.figures.interactive``). This module holds the shared
style: every colour that draws a line or a marker reaches 3:1 contrast against the white plot
(WCAG's non-text contrast; the browser tests measure every drawn line); ``translucent`` makes
fills, whose edges carry the colour at full strength."""
from __future__ import annotations

import math

FONT = dict(family="Helvetica, Arial, sans-serif", size=14)
ACCENT = "#c0392b"
INK = "#1f4e79"
FAINT = "#8c8c8c"      # 3.4:1 on white: light enough to sit behind, dark enough to read
PALETTE = ["#1f4e79", "#c0392b", "#2e8b57", "#b9770e", "#7d3c98", "#566573", "#17a589"]


def _book_template() -> dict:
    """plotly's "plotly_white" cut to what the book's figures use: its 2-D layout and its scatter and
    bar defaults. The full template brings defaults for every trace type and every kind of axis,
    some 7 kB in each figure's JSON; these are about 3 kB, and draw the same figures."""
    import plotly.io as pio  # noqa: PLC0415

    full = pio.templates["plotly_white"].to_plotly_json()
    unused = ("polar", "ternary", "scene", "geo", "coloraxis", "colorscale")
    return dict(data={k: full["data"][k] for k in ("scatter", "bar")},
                layout={k: v for k, v in full["layout"].items() if k not in unused})


#: the template every figure of the book is drawn with
TEMPLATE = _book_template()


def translucent(color: str, alpha: float) -> str:
    """``#rrggbb`` as ``rgba(r, g, b, alpha)``, for fills."""
    r, g, b = (int(color[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r}, {g}, {b}, {alpha})"


def base_layout(title: str, x_title: str, y_title: str, x_log: bool = False, y_log: bool = False,
                x_range: tuple[float, float] | None = None, y_range: tuple[float, float] | None = None,
                legend: bool = False) -> dict:
    """Shared look; fixed axis ranges (given in data units) so nothing jumps while sliding."""
    def axis(title, log, rng):
        a = dict(title=title, type="log" if log else "linear")
        if log:
            a["dtick"] = 1
        if rng:
            a["range"] = [math.log10(v) for v in rng] if log else list(rng)
        return a

    return dict(title=dict(text=title, x=0.02, xanchor="left"), template=TEMPLATE, font=FONT,
                height=560, margin=dict(l=70, r=20, t=60, b=60), showlegend=legend,
                legend=dict(orientation="h", y=-0.25),
                xaxis=axis(x_title, x_log, x_range), yaxis=axis(y_title, y_log, y_range))
