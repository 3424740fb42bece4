"""Chapter 6's timeline: one decode step on a time axis, the host's launches against the GPU's
kernels, in eager mode and captured in one CUDA Graph (``overhead.launch_timeline``). The kernels'
times come from the book's byte and math model (``overhead.eager_step_kernels``), the launches from
the assumed host cost per launch; nothing is measured. Two panels share the four rows: the whole
step, and a close-up of its first launches, where each launch and each kernel can be seen."""
from __future__ import annotations

import math

from inferlimits.arithmetic.overhead import (MICROSECOND, StepTimeline, eager_step_kernels, launch_assumptions,
                                             launch_timeline)
from inferlimits.data.hardware import accelerator
from inferlimits.data.models import model
from inferlimits.figures import ACCENT, INK, base_layout
from inferlimits.figures.display import Figure

MS = 1e3                    # seconds to milliseconds
DIGITS = 4                  # ms rounded to 0.1 µs: below a pixel in either panel
MIN_DRAWN_S = 0.1 * MICROSECOND   # a kernel shorter than this is drawn as a tick, not a bar
#: the rows, top to bottom: (mode, what runs there) -> y
ROWS = {("eager", "host"): 3, ("eager", "GPU"): 2, ("graph", "host"): 1, ("graph", "GPU"): 0}
ROW_LABELS = {3: "eager: host", 2: "eager: GPU", 1: "CUDA Graph: host", 0: "CUDA Graph: GPU"}
BAR = 16                    # px: a row's bar


def step_timelines(accelerator_name: str, model_name: str, weight_precision: str,
                   microseconds_per_launch: float) -> tuple[StepTimeline, StepTimeline]:
    """(eager, graph): one batch-1 decode step with no context, each kernel's time max(bytes / BW,
    FLOPs / P) on ``accelerator_name``, each launch ``microseconds_per_launch`` of host time."""
    a, c = accelerator(accelerator_name), model(model_name).config
    kernels = eager_step_kernels(c, weight_precision=weight_precision)
    seconds = [k.seconds(a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s) for k in kernels]
    t = microseconds_per_launch * MICROSECOND
    return launch_timeline(seconds, t), launch_timeline(seconds, t, graph=True)


def _ms(v: float) -> float:
    return round(v * MS, DIGITS)


def _merged(spans, within: float = 1e-12) -> list[tuple[float, float]]:
    """Spans that touch joined into one: the time something runs without a break."""
    out: list[list[float]] = []
    for start, end in spans:
        if out and start - out[-1][1] <= within:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return [(s, e) for s, e in out]


def _segments(spans, row: int) -> tuple[list, list]:
    """x and y of a line drawn as separate segments, one per span (None between them)."""
    x, y = [], []
    for start, end in spans:
        x += [_ms(start), _ms(end), None]
        y += [row, row, None]
    return x, y


def close_up_s(microseconds_per_launch: float) -> float:
    """The close-up's end: the launches of the first layer and the kernel before it, rounded up
    to the next 0.05 ms."""
    launches = launch_assumptions().kernels_per_layer + 1
    return math.ceil(launches * microseconds_per_launch / 50) * 50 * MICROSECOND


def timeline_spec(accelerator_name: str, model_name: str, weight_precision: str,
                  microseconds_per_launch: float) -> dict:
    """Four rows on one time axis in ms (eager host, eager GPU, graph host, graph GPU), in two
    panels. On top, the whole step: the host's back-to-back launches make one bar, and the GPU's
    kernels a bar wherever they run without a break (a run shorter than 0.1 µs is too short to
    draw). Below, a close-up of the first layer's launches: each launch between two white ticks,
    the GPU's runs of kernels as bars, and in eager mode a tick where each kernel too short to draw
    starts."""
    eager, graph = step_timelines(accelerator_name, model_name, weight_precision, microseconds_per_launch)
    n = len(eager.kernels)
    whole_end = math.ceil(eager.step_s * MS) + 1        # ms, the whole step's axis, with room after its end
    close = close_up_s(microseconds_per_launch)
    modes = {"eager": eager, "graph": graph}
    line = dict(type="scatter", mode="lines", hoverinfo="skip")
    data = []

    # the whole step: what runs without a break
    for mode, tl in modes.items():
        hx, hy = _segments(_merged(tl.launches), ROWS[mode, "host"])
        gx, gy = _segments([s for s in _merged(tl.kernels) if s[1] - s[0] >= MIN_DRAWN_S], ROWS[mode, "GPU"])
        launches = f"{n:,} launches of {microseconds_per_launch:g} µs, one after another" if mode == "eager" \
            else f"one launch of {microseconds_per_launch:g} µs"
        data += [dict(line, x=hx, y=hy, line=dict(color=INK, width=BAR), showlegend=False,
                      name=f"{ROW_LABELS[ROWS[mode, 'host']]}, whole step: {launches}"),
                 dict(line, x=gx, y=gy, line=dict(color=ACCENT, width=BAR), showlegend=False,
                      name=f"{ROW_LABELS[ROWS[mode, 'GPU']]}, whole step: running kernels"
                           + (" as they arrive" if mode == "eager" else " back to back"))]
    ends = [(eager.step_s, ROWS["eager", "GPU"]), (graph.step_s, ROWS["graph", "GPU"])]
    data.append(dict(type="scatter", mode="markers+text", x=[_ms(e) for e, _ in ends], y=[r for _, r in ends],
                     marker=dict(symbol="line-ns-open", size=26, color=INK, line=dict(width=2, color=INK)),
                     text=[f"the step ends: {e * MS:.1f} ms" for e, _ in ends], textposition=["top left", "middle right"],
                     cliponaxis=False, name="the step ends", showlegend=False,
                     hovertemplate="the step ends at %{x:.2f} ms<extra></extra>"))
    # the graph's one launch is too short to see on this axis: a label says where it is
    data.append(dict(type="scatter", mode="text", x=[_ms(graph.host_s)], y=[ROWS["graph", "host"]],
                     text=[f"\u2002one launch, {microseconds_per_launch:g} µs (see the close-up)"], textposition="middle right",
                     cliponaxis=False, name="the graph's launch", showlegend=False, hoverinfo="skip"))

    # the close-up: each launch, and the GPU's kernels
    seen = dict(line, xaxis="x2", yaxis="y2")
    for mode, tl in modes.items():
        # the launches follow one another without a gap: one line, a white tick where each begins
        edges = sorted({_ms(min(x, close)) for s in tl.launches if s[0] < close for x in s})
        inside = [s for s in tl.kernels if s[0] < close]
        gx, gy = _segments([(s, min(e, close)) for s, e in _merged(inside) if e - s >= MIN_DRAWN_S], ROWS[mode, "GPU"])
        data += [dict(seen, x=edges, y=[ROWS[mode, "host"]] * len(edges), mode="lines+markers",
                      line=dict(color=INK, width=BAR),
                      marker=dict(symbol="line-ns-open", size=BAR + 4, color="white", line=dict(width=1.5, color="white")),
                      showlegend=False,
                      name=f"{ROW_LABELS[ROWS[mode, 'host']]}, close-up: launches of {microseconds_per_launch:g} µs, "
                           "where each begins and ends"),
                 dict(seen, x=gx, y=gy, line=dict(color=ACCENT, width=BAR), showlegend=False,
                      name=f"{ROW_LABELS[ROWS[mode, 'GPU']]}, close-up: running kernels")]
    # in eager mode most kernels are far too short to see; a tick marks where each starts (back to
    # back in the graph, they are inside its one bar)
    short = sorted({_ms(s) for s, e in eager.kernels if s < close and e - s < MIN_DRAWN_S})
    data.append(dict(type="scatter", mode="markers", x=short, y=[ROWS["eager", "GPU"]] * len(short), xaxis="x2",
                     yaxis="y2",
                     marker=dict(symbol="line-ns-open", size=BAR + 6, color=ACCENT, line=dict(width=1.5, color=ACCENT)),
                     name="eager: a kernel too short to draw (under 0.1 µs), where it starts",
                     hovertemplate="a short kernel starts at %{x:.4f} ms<extra></extra>"))

    title = f"One decode step of {model_name} on the {accelerator_name}, batch 1: eager launches against one CUDA Graph"
    layout = base_layout(title, "time since the step began (ms), the whole step",
                         "", x_range=(0, whole_end), y_range=(-0.6, 3.6), legend=True)
    rows = dict(tickmode="array", tickvals=list(ROW_LABELS), ticktext=list(ROW_LABELS.values()),
                range=[-0.6, 3.6], showgrid=False, zeroline=False, fixedrange=True)
    layout["yaxis"] = dict(rows, domain=[0.6, 1.0], title="")
    layout["yaxis2"] = dict(rows, domain=[0.0, 0.4], anchor="x2", title="")
    layout["xaxis"].update(anchor="y", fixedrange=True)
    layout["xaxis2"] = dict(title=f"time since the step began (ms), its first {close * MS:g} ms",
                            range=[0, close * MS], anchor="y2", fixedrange=True)
    layout["height"] = 640
    layout["margin"] = dict(l=140, r=30, t=60, b=120)
    layout["legend"] = dict(orientation="h", y=-0.2, yanchor="top")
    return {"data": data, "layout": layout}


def timeline_figure(accelerator_name: str, model_name: str, weight_precision: str, microseconds_per_launch: float,
                    div_id: str = "fig-overhead-timeline") -> Figure:
    """The timeline as a static figure (no controls), shown in both modes."""
    import plotly.graph_objects as go  # noqa: PLC0415

    spec = timeline_spec(accelerator_name, model_name, weight_precision, microseconds_per_launch)
    return Figure(go.Figure(spec["data"], spec["layout"]), div_id)
