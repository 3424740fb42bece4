"""Slide-ready static exports: each chapter's key figures at their default settings, drawn with
matplotlib and written to ``figures/`` as SVG and PNG. Deterministic: exporting twice gives
identical files.

Each export is the figure exactly as its chapter draws it: read from the static figure in the
chapter's committed outputs (the one the hosted book shows, at the values the chapter opens it
with), so that a slide can never drift from its chapter. Re-executing a chapter whose figure
changed therefore calls for a new export (a test says so). Chapter 12's figures are measurements
of the machine that executed it, and keep the label that says which machine and when.

    python -m inferlimits.export            # write figures/
    python -m inferlimits.export --check    # exit 1 if a committed export is out of date
"""
from __future__ import annotations

import html
import io
import json
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.colors import to_rgb  # noqa: E402
from matplotlib.ticker import NullFormatter, NullLocator  # noqa: E402

from .plotlyhtml import figure_spec  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "figures"
CHAPTERS = ROOT / "chapters"
DASHES = {"dot": ":", "dash": "--", "dashdot": "-.", "longdash": "--", "solid": "-", None: "-"}
INK = "#1f4e79"


def committed_figure(notebook: Path, div_id: str) -> dict:
    """The spec (data and layout) of the figure that a notebook's committed outputs draw in the
    div ``div_id``, read from the ``Plotly.newPlot("div_id", data, layout, config)`` call in its
    ``text/html`` output. Nothing is recomputed; a missing figure is an error, never a guess."""
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    for cell in nb.get("cells", []):
        for output in cell.get("outputs", []):
            page = output.get("data", {}).get("text/html", "")
            spec = figure_spec("".join(page) if isinstance(page, list) else page, div_id)
            if spec is not None:
                return spec
    raise ValueError(f"{notebook.name} has no committed output drawing the figure {div_id!r}; "
                     "execute the chapter (make outputs) and export again")


@dataclass(frozen=True)
class Slide:
    """One exported figure: the figure drawn in the div ``div_id`` of chapter ``chapter`` (its
    file name without ``.ipynb``), with ``caption``, if any, as a line under it."""

    chapter: str
    div_id: str
    caption: str = ""

    def spec(self) -> dict:
        return committed_figure(CHAPTERS / f"{self.chapter}.ipynb", self.div_id)

    def render(self) -> dict[str, bytes]:
        return render(self.spec(), caption=self.caption)


_MEASURED = ("Measured when chapter 12 was last executed; drawn from the figure data committed in "
             "chapters/12_measure.ipynb, not re-measured.")

#: name -> slide; every chapter has at least one (a test checks).
SLIDES: dict[str, Slide] = {
    "01_roofline": Slide("01_two_speeds", "fig-roofline"),
    "02_decode_ceiling": Slide("02_decode", "fig-decode-ceiling"),
    "03_prefill": Slide("03_prefill", "fig-prefill"),
    "04_batch_throughput": Slide("04_batching", "fig-batch-throughput"),
    "05_kv_memory": Slide("05_kv_cache", "fig-kv-memory"),
    "06_third_wall": Slide("06_overhead", "fig-third-wall"),
    "07_precision": Slide("07_low_precision", "fig-precision"),
    "08_moe": Slide("08_moe", "fig-moe"),
    "09_tensor_parallel": Slide("09_serving_at_scale", "fig-tensor-parallel"),
    "09_speculative": Slide("09_serving_at_scale", "fig-speculative"),
    "09_frontier": Slide("09_serving_at_scale", "fig-frontier"),
    "10_index_card": Slide("10_index_card", "fig-index-card"),
    "11_worked_capacity": Slide("11_worked_example", "fig-worked-capacity"),
    "11_worked_step": Slide("11_worked_example", "fig-worked-step"),
    "12_machine_roofline": Slide("12_measure", "fig-machine-roofline", _MEASURED),
    "12_machine_decode": Slide("12_measure", "fig-machine-decode", _MEASURED),
}


def _color(c, default=INK):
    if not c:
        return default
    m = re.match(r"rgba?\(([^)]*)\)", str(c))
    if m:
        parts = [float(v) for v in m.group(1).split(",")]
        rgb = [v / 255 for v in parts[:3]]
        return (*rgb, parts[3]) if len(parts) == 4 else tuple(rgb)
    return c


def _nums(values):
    return [math.nan if v is None else v for v in (values or [])]


def _plain(s) -> str:
    """Plotly's bits of HTML as plain text: ``<br>`` a new line, other tags dropped."""
    s = re.sub(r"<br\s*/?>", "\n", str(s))
    return html.unescape(re.sub(r"<[^>]+>", "", s))


def _text(t):
    return _plain(t.get("text", "") if isinstance(t, dict) else (t or ""))


def _axis_key(name: str) -> str:
    """The layout key of a trace's axis: "x" -> "xaxis", "y2" -> "yaxis2"."""
    return f"{name[0]}axis{name[1:]}"


def _axis(ax, which: str, a: dict) -> None:
    a = a or {}
    set_scale, set_lim, set_label = ((ax.set_xscale, ax.set_xlim, ax.set_xlabel) if which == "x"
                                     else (ax.set_yscale, ax.set_ylim, ax.set_ylabel))
    log = a.get("type") == "log"
    if log:
        set_scale("log")
    if a.get("range") and a.get("type") != "category":
        lo, hi = a["range"]
        set_lim(*((10 ** lo, 10 ** hi) if log else (lo, hi)))
    set_label(_text(a.get("title")))
    axis = ax.xaxis if which == "x" else ax.yaxis
    if a.get("tickvals"):
        labels = a.get("ticktext") or [f"{v:,g}" for v in a["tickvals"]]
        axis.set_ticks(a["tickvals"], [_plain(v) for v in labels])
        axis.set_minor_locator(NullLocator())
        axis.set_minor_formatter(NullFormatter())
    if a.get("autorange") == "reversed":
        (ax.invert_xaxis if which == "x" else ax.invert_yaxis)()


# ---- text where plotly puts it -------------------------------------------------------------------------

_VERTICAL = {"top": ("bottom", 1), "middle": ("center", 0), "bottom": ("top", -1)}
_HORIZONTAL = {"left": ("right", -1), "center": ("center", 0), "right": ("left", 1)}


def _placed(position, gap: float) -> dict:
    """Where plotly's ``textposition`` ("top left", "middle right", ...) puts a label next to its
    point, as annotate() keywords; ``gap`` in points."""
    words = (position or "middle center").split()
    if len(words) == 1:
        words = ["middle", words[0]] if words[0] in _HORIZONTAL else [words[0], "center"]
    va, dy = _VERTICAL.get(words[0], ("center", 0))
    ha, dx = _HORIZONTAL.get(words[1], ("center", 0))
    return dict(xytext=(dx * gap, dy * gap), textcoords="offset points", ha=ha, va=va)


_BACKING = dict(boxstyle="square,pad=0.15", facecolor="white", edgecolor="none", alpha=0.7)   # legible over lines


def _label(ax, s: str, xy, size: float, color, where: dict) -> None:
    """A text label; a block hung below its point (``va="top"``) keeps its ``<b>`` lines bold."""
    lines = re.split(r"<br\s*/?>", str(s))
    # a pale backing for a short label among the lines; a block of text stands on its own
    style = dict(fontsize=size, color=color, annotation_clip=False, bbox=_BACKING if len(lines) == 1 else None)
    if len(lines) == 1 or where["va"] != "top" or not any("<b>" in ln for ln in lines):
        ax.annotate(_plain(s), xy, linespacing=1.35, **style, **where)
        return
    dx, dy = where["xytext"]
    for i, ln in enumerate(lines):
        ax.annotate(_plain(ln), xy, **style, **{**where, "xytext": (dx, dy - i * size * 1.35)},
                    fontweight="bold" if "<b>" in ln else "normal")


def _ink_on(color) -> str:
    """Dark text on light bars, white on dark ones."""
    try:
        r, g, b = to_rgb(color if not isinstance(color, tuple) else color[:3])
    except ValueError:
        return "#222222"
    return "white" if 0.299 * r + 0.587 * g + 0.114 * b < 0.55 else "#222222"


@dataclass
class _Panel:
    """One matplotlib Axes standing for a plotly (xaxis, yaxis) pair, and what its traces share."""

    ax: object
    xaxis: dict
    yaxis: dict
    previous_y: list | None = None

    def __post_init__(self):
        self.categories = {"x": {}, "y": {}}
        self.stacked: dict = {}

    def place(self, which: str, values):
        """Category names become positions 0, 1, 2, ... in order of first appearance."""
        if not values or not any(isinstance(v, str) for v in values):
            return values
        seen = self.categories[which]
        return [seen.setdefault(v, len(seen)) if isinstance(v, str) else v for v in values]

    def base(self, which: str) -> float:
        a = self.xaxis if which == "x" else self.yaxis
        return 10 ** a["range"][0] if a.get("type") == "log" and a.get("range") else 0.0


def _bar(p: _Panel, t: dict, label, stack: bool) -> None:
    """Vertical or horizontal (``orientation="h"``) bars, stacked under ``barmode="stack"``, with
    their text inside the bar or just beyond its end."""
    ax, marker = p.ax, t.get("marker", {}) or {}
    colors = marker.get("color")
    colors = [_color(c) for c in colors] if isinstance(colors, list) else _color(colors)
    horizontal = t.get("orientation") == "h"
    cats, along = ("y", "x") if horizontal else ("x", "y")
    where = p.place(cats, t.get(cats))
    values = _nums(t.get(along))
    base = p.base(along)
    starts = [p.stacked.get(w, base) if stack else base for w in where]
    ends = [s + v if stack else v for s, v in zip(starts, values)]          # NaN where there is no bar
    lengths = [e - s for s, e in zip(starts, ends)]
    if horizontal:
        ax.barh(where, lengths, left=starts, height=0.7, color=colors, label=label)
    else:
        ax.bar(where, lengths, bottom=starts, width=0.6, color=colors, label=label)
    if stack:
        p.stacked.update({w: e for w, e in zip(where, ends) if not math.isnan(e)})
    texts = t.get("text") or []
    texts = [texts] * len(where) if isinstance(texts, str) else texts
    inside = t.get("textposition", "auto") in ("inside", "auto")
    log = (p.xaxis if horizontal else p.yaxis).get("type") == "log"
    for i, (w, start, end, s) in enumerate(zip(where, starts, ends, texts)):
        if not s:
            continue
        if inside and not math.isnan(end):
            at = math.sqrt(start * end) if log else (start + end) / 2
            color = colors[i] if isinstance(colors, list) else colors
            ax.annotate(_plain(s), (at, w) if horizontal else (w, at), ha="center", va="center", fontsize=10,
                        color=_ink_on(color))
            continue
        at = start if math.isnan(end) else end
        beyond = (dict(xytext=(4, 0), ha="left", va="center") if horizontal
                  else dict(xytext=(0, 3), ha="center", va="bottom"))
        ax.annotate(_plain(s), (at, w) if horizontal else (w, at), textcoords="offset points", fontsize=10,
                    color="#222222", annotation_clip=False, **beyond)


def _scatter(p: _Panel, t: dict, label) -> None:
    ax = p.ax
    x, y = p.place("x", _nums(t.get("x"))), p.place("y", _nums(t.get("y")))
    line, marker = t.get("line", {}) or {}, t.get("marker", {}) or {}
    marker_color = marker.get("color") if isinstance(marker.get("color"), str) else None
    color = _color(line.get("color") or marker_color)
    mode = t.get("mode", "lines")
    if t.get("fill") in ("tozeroy", "tonexty"):
        base = p.previous_y if t["fill"] == "tonexty" and p.previous_y is not None else [0.0] * len(y)
        ax.fill_between(x, base, y, color=_color(t.get("fillcolor"), color), alpha=0.35, linewidth=0)
    if t.get("fill") == "toself":
        ax.fill(x, y, facecolor=_color(t.get("fillcolor"), color), alpha=t.get("opacity", 0.35), linewidth=0,
                label=label)
        label = None
    elif "lines" in mode and "markers" not in mode:
        ax.plot(x, y, color=color, linewidth=line.get("width", 2), linestyle=DASHES.get(line.get("dash"), "-"),
                label=label)
        label = None
    if "markers" in mode and "lines" in mode:   # one legend entry showing both
        ax.plot(x, y, color=color, linewidth=line.get("width", 2), linestyle=DASHES.get(line.get("dash"), "-"),
                marker="o", markersize=(marker.get("size") or 8) * 0.6, markerfacecolor=_color(marker_color, color),
                markeredgecolor=_color(marker_color, color), label=label)
    elif "markers" in mode:
        ax.plot(x, y, linestyle="none", marker="o", markersize=(marker.get("size") or 8) * 0.6,
                color=_color(marker_color, color), label=label)
    if "text" in mode:
        texts = t.get("text") or []
        texts = [texts] * len(x) if isinstance(texts, str) else texts
        font = t.get("textfont", {}) or {}
        size = font.get("size", 14) * 10 / 14
        gap = 3 + ((marker.get("size") or 8) * 0.3 if "markers" in mode else 0)
        positions = t.get("textposition")
        positions = positions if isinstance(positions, list) else [positions] * len(x)
        ink = _color(font.get("color") or line.get("color") or marker_color, "#333333")
        for xi, yi, s, pos in zip(x, y, texts, positions):
            if s and not (isinstance(xi, float) and math.isnan(xi)):
                _label(ax, s, (xi, yi), size, ink, _placed(pos, gap))
    p.previous_y = y


# ---- the layout: one Axes, or one per (xaxis, yaxis) pair placed by the axes' domains ----------------

def _pairs(spec: dict) -> list[tuple[str, str]]:
    """The (xaxis, yaxis) pairs the traces draw on, in order of first use."""
    pairs = []
    for t in spec["data"]:
        pair = (t.get("xaxis") or "x", t.get("yaxis") or "y")
        if pair not in pairs:
            pairs.append(pair)
    return pairs or [("x", "y")]


def _plot_area(layout: dict, width_in: float, height_in: float) -> tuple[float, float, float, float]:
    """Left, bottom, width, height of the area inside the layout's margins, as figure fractions
    (plotly's margins are pixels of a figure ``layout.height`` pixels tall)."""
    margin = {"l": 80, "r": 80, "t": 100, "b": 80, **(layout.get("margin") or {})}
    inch = height_in / layout.get("height", 450)
    left, right = margin["l"] * inch / width_in, margin["r"] * inch / width_in
    bottom, top = margin["b"] * inch / height_in, margin["t"] * inch / height_in
    return left, bottom, 1 - left - right, 1 - bottom - top


def _subplots(fig, layout: dict, pairs, area) -> dict:
    """An Axes per pair at its axes' domains; axes that plotly shares (the same x axis in two
    pairs, or ``matches``) share here too, and only the anchored one shows its ticks."""
    left, bottom, width, height = area
    panels, first_with = {}, {}
    for xa, ya in pairs:
        xs, ys = layout.get(_axis_key(xa), {}) or {}, layout.get(_axis_key(ya), {}) or {}
        (x0, x1), (y0, y1) = xs.get("domain", [0, 1]), ys.get("domain", [0, 1])
        share_x = first_with.get(("x", xa)) or first_with.get(("x", xs.get("matches")))
        share_y = first_with.get(("y", ya)) or first_with.get(("y", ys.get("matches")))
        ax = fig.add_axes((left + x0 * width, bottom + y0 * height, (x1 - x0) * width, (y1 - y0) * height),
                          sharex=share_x, sharey=share_y)
        first_with.setdefault(("x", xa), ax)
        first_with.setdefault(("y", ya), ax)
        panels[(xa, ya)] = _Panel(ax, xs, ys)
    for (xa, ya), p in panels.items():
        if sum(1 for q in panels if q[0] == xa) > 1 and p.xaxis.get("anchor", "y") != ya:
            p.ax.tick_params(axis="x", labelbottom=False)
            p.xaxis = {k: v for k, v in p.xaxis.items() if k != "title"}
    return panels


def _ncol(labels, width_in: float, horizontal: bool) -> int:
    if not horizontal:
        return 1
    longest = max(len(s) for s in labels) * 10 * 0.55 / 72 + 0.6   # inches: 10 pt text, the handle
    most = max(1, min(len(labels), int(width_in // longest)))
    return math.ceil(len(labels) / math.ceil(len(labels) / most))   # rows as even as they can be


def _legend(fig, panels: dict, layout: dict, single: bool, area, width_in: float):
    handles, labels = [], []
    for p in panels.values():
        for h, lab in zip(*p.ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(_plain(lab))
    if not handles:
        return
    spec = layout.get("legend") or {}
    x, y = spec.get("x"), spec.get("y")
    horizontal = spec.get("orientation") == "h"
    ncol = _ncol(labels, width_in * area[2], horizontal)
    style = dict(frameon=False, fontsize=10, ncol=ncol)
    ax = next(iter(panels.values())).ax
    if single and x is not None and x > 1:
        ax.legend(handles, labels, loc="center left", bbox_to_anchor=(1.01, 0.5 if y is None else y), **style)
    elif single and y is not None and y < 0:
        ax.legend(handles, labels, loc="upper left" if x == 0 else "upper center",
                  bbox_to_anchor=(0 if x == 0 else 0.5, -0.12), **style)
    elif single or x is None or y is None:
        ax.legend(handles, labels, **style)
    else:
        v = {"top": "upper", "bottom": "lower"}.get(spec.get("yanchor"), "center")
        h = {"left": "left", "right": "right"}.get(spec.get("xanchor"), "center")
        left, bottom, width, height = area
        fig.legend(handles, labels, loc="center" if v == h == "center" else f"{v} {h}",
                   bbox_to_anchor=(left + x * width, bottom + y * height), **style)


def _title(fig, ax, layout: dict, single: bool, area, height_in: float) -> None:
    """The title's first line in 14 pt; a second (plotly's ``<br><sub>``) smaller, beneath it."""
    main, _, sub = _text(layout.get("title")).partition("\n")
    if single:
        ax.set_title(main, loc="left", fontsize=14, pad=24 if sub else 6)
        if sub:
            ax.annotate(sub, (0, 1), xycoords="axes fraction", xytext=(0, 6), textcoords="offset points",
                        ha="left", va="bottom", fontsize=11, color="#444444")
        return
    x = (layout.get("title") or {}).get("x", 0.02) if isinstance(layout.get("title"), dict) else 0.02
    top = 1 - 0.2 / height_in
    fig.text(x, top, main, ha="left", va="top", fontsize=14)
    if sub:
        fig.text(x, top - 0.3 / height_in, sub, ha="left", va="top", fontsize=11, color="#444444")


def draw(spec: dict, width_in: float = 10.0, height_in: float = 6.0, *, caption: str = ""):
    """A matplotlib figure from a figure spec (scatter and bar traces, fills, log axes, shapes,
    annotations, legend).

    One Axes when every trace draws on plotly's x and y; otherwise one per (xaxis, yaxis) pair,
    placed by the axes' ``domain`` inside the layout's margins, in a figure as much taller than
    ``height_in`` as ``layout.height`` is than 560 px. Text, the legend and tick values go where
    the layout puts them."""
    layout = spec["layout"]
    pairs = _pairs(spec)
    single = pairs == [("x", "y")]
    if single:
        fig, ax = plt.subplots(figsize=(width_in, height_in), dpi=100)
        panels = {("x", "y"): _Panel(ax, layout.get("xaxis", {}) or {}, layout.get("yaxis", {}) or {})}
        area = (0.0, 0.0, 1.0, 1.0)
    else:
        height_in *= max(1.0, layout.get("height", 560) / 560)
        fig = plt.figure(figsize=(width_in, height_in), dpi=100)
        area = _plot_area(layout, width_in, height_in)
        panels = _subplots(fig, layout, pairs, area)
    stack = layout.get("barmode") == "stack"
    for t in spec["data"]:
        if t.get("visible", True) in (False, "legendonly"):
            continue
        p = panels[(t.get("xaxis") or "x", t.get("yaxis") or "y")]
        label = t.get("name") if t.get("showlegend", True) and layout.get("showlegend") else None
        if t.get("type", "scatter") == "bar":
            _bar(p, t, label, stack)
        else:
            _scatter(p, t, label)
    for shape in layout.get("shapes", []) or []:
        p = panels.get((shape.get("xref", "x"), shape.get("yref", "y")))
        if p and shape.get("type", "line") == "line":
            p.ax.plot([shape["x0"], shape["x1"]], [shape["y0"], shape["y1"]],
                      color=_color((shape.get("line") or {}).get("color"), "#555"),
                      linestyle=DASHES.get((shape.get("line") or {}).get("dash")), linewidth=1)
    for note in layout.get("annotations", []) or []:
        p = panels.get((note.get("xref", "x"), note.get("yref", "y")))
        if p:
            p.ax.annotate(_plain(note.get("text", "")), (note["x"], note["y"]), fontsize=10)
    for p in panels.values():
        ax = p.ax
        _axis(ax, "x", p.xaxis)
        _axis(ax, "y", p.yaxis)
        for which, seen in p.categories.items():
            if seen:
                axis = ax.xaxis if which == "x" else ax.yaxis
                axis.set_ticks(list(seen.values()), [_plain(c) for c in seen])
                (ax.set_xlim if which == "x" else ax.set_ylim)(-0.5, len(seen) - 0.5)
                if (p.xaxis if which == "x" else p.yaxis).get("autorange") == "reversed":
                    (ax.invert_xaxis if which == "x" else ax.invert_yaxis)()
    first = next(iter(panels.values())).ax
    _title(fig, first, layout, single, area, height_in)
    for p in panels.values():
        ax = p.ax
        if p.xaxis.get("visible") is False and p.yaxis.get("visible") is False:
            ax.set_axis_off()
            continue
        ax.set_axisbelow(True)
        grid = [w for w in ("x", "y") if not (p.categories[w] or (p.xaxis if w == "x" else p.yaxis).get("type")
                                               == "category")]
        if grid:
            ax.grid(True, which="major", axis="both" if len(grid) == 2 else grid[0], color="#e5e5e5", linewidth=0.8)
    if layout.get("showlegend"):
        _legend(fig, panels, layout, single, area, width_in)
    for p in panels.values():
        for side in ("top", "right"):
            p.ax.spines[side].set_visible(False)
    if caption:
        fig.text(0.01, 0.01, caption, ha="left", va="bottom", fontsize=9, color="#555555")
    if single:
        fig.tight_layout(rect=(0, 0.3 / height_in, 1, 1) if caption else None)
    return fig


def render(spec: dict, *, caption: str = "") -> dict[str, bytes]:
    """The SVG and PNG bytes of a spec, identical on every run."""
    plt.rcParams["svg.hashsalt"] = "inferlimits"
    fig = draw(spec, caption=caption)
    out = {}
    for ext, meta in (("svg", {"Date": None}), ("png", {"Software": None})):
        buf = io.BytesIO()
        fig.savefig(buf, format=ext, metadata=meta, dpi=150 if ext == "png" else None)
        out[ext] = buf.getvalue()
    plt.close(fig)
    return out


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    OUT.mkdir(exist_ok=True)
    for name, slide in SLIDES.items():
        for ext, data in slide.render().items():
            path = OUT / f"{name}.{ext}"
            if check:
                if not path.exists() or path.read_bytes() != data:
                    stale.append(path.name)
            else:
                path.write_bytes(data)
                print(f"wrote {path.relative_to(OUT.parent)}")
    if stale:
        print("out of date (run `make figures`):", ", ".join(stale))
    return 1 if stale else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
