"""Figures of the worked example (chapter 12): the A100's memory plan for Qwen2.5-32B, stacked in GB,
in GiB and as the plan writes it; and the time of one decode step against context length,
memory beside math, with the plan's times drawn in."""
from __future__ import annotations

import math

from inferlimits.arithmetic.generation import decode_point
from inferlimits.figures.interactive import Control, doubling_stops, panel as _panel, step_stops
from inferlimits.arithmetic.kvcache import kv_cache_bytes, max_context_tokens, max_sequences, usable_memory_fraction
from inferlimits.data.models import kv_bytes_per_token
from inferlimits.data.units import GB, GIB
from inferlimits.checks.worked_example import Setting, claim
from inferlimits.figures import ACCENT, FAINT, INK, PALETTE, base_layout, translucent

#: Cache accountings of the capacity figure: label -> (KV precision, factor on the cache). The
#: factor of the third is the plan's, read from its claims (``Setting.factor``).
CACHE_LABELS = ("BF16 cache (the config)", "FP8 cache", "BF16 cache × the plan's factor")
CONTEXTS = (1024, 2048, 4096, 8192, 16_384, 32_768, 65_536, 131_072)   # static slider stops
CONTEXT_RANGE = (512, 131_072)
USABLES = step_stops(0.8, 1.0, 0.01)   # live slider; below 0.77 the weights alone would not fit
MEMORY_RANGE = (0.0, 100.0)
BARS = ("in GB<br>(10⁹ bytes)", "the same, in GiB<br>(2³⁰ bytes)", "the plan's<br>figures")
SLOTS = list(range(len(BARS)))   # the bars' places on the x axis, named by BARS as tick labels (a lighter page
                                 # than repeating the names in every trace of every slider stop)


def _cache(label: str, s: Setting) -> tuple[str, float]:
    if label not in CACHE_LABELS:
        raise ValueError(f"cache must be one of {', '.join(CACHE_LABELS)}; got {label!r}")
    return {"BF16 cache (the config)": ("BF16", 1.0), "FP8 cache": ("FP8", 1.0),
            "BF16 cache × the plan's factor": ("BF16", s.factor)}[label]


def capacity_spec(cache: str, context_tokens: float, usable_fraction: float | None = None) -> dict:
    """The memory plan stacked three ways: weights, the caches of as many whole sequences of
    ``context_tokens`` as fit, what is left unused, and the reserve kept free; in GB and in GiB
    with the book's usable share (or ``usable_fraction``), and with the plan's own figures
    (its 80, 76 and 65, its cache factor, always at its 95%)."""
    usable_fraction = usable_memory_fraction() if usable_fraction is None else usable_fraction
    s = Setting()
    precision, factor = _cache(cache, s)
    L = max(1.0, float(context_tokens))
    cap, w = s.a.capacity_bytes, s.w
    per_seq = factor * kv_cache_bytes(kv_bytes_per_token(s.c, precision), 1, L)
    n = max_sequences(cap, w, per_seq / L, L, usable_fraction)
    usable = usable_fraction * cap
    ours = [w, n * per_seq, usable - w - n * per_seq, cap - usable]
    # the plan, in its own numbers: 80 total, 76 usable, 65 weights, its 2.5x cache
    doc_total, doc_usable, doc_w = (claim(k).stated_base() for k in ("gpu_memory", "usable", "plan_weights"))
    doc_seq = s.factor * kv_cache_bytes(s.k, 1, L)
    doc_n = max(0, math.floor((doc_usable - doc_w) / doc_seq))
    doc = [doc_w, doc_n * doc_seq, doc_usable - doc_w - doc_n * doc_seq, doc_total - doc_usable]
    # five decimals: far finer than the bars can show, and a lighter page than full floats
    columns = [[round(x / unit, 5) for x in col] for col, unit in ((ours, GB), (ours, GIB), (doc, GB))]
    names = ["weights", "KV caches", "usable, unused", "reserve (not usable)"]
    colors = [INK, PALETTE[3], translucent(PALETTE[2], 0.35), FAINT]
    data = []
    for i, (name, color) in enumerate(zip(names, colors)):
        ys = [col[i] for col in columns]
        data.append(dict(type="bar", x=SLOTS, y=ys, name=name, marker=dict(color=color),
                         text=[f"{y:,.1f}" if y >= 2 else "" for y in ys], textposition="inside",
                         hovertemplate="%{y:,.2f}<extra>" + name + "</extra>"))
    counts = [n, n, doc_n]
    tops = [sum(col) for col in columns]
    data.append(dict(type="scatter", x=SLOTS, y=[round(t + 3, 2) for t in tops], mode="text", showlegend=False,
                     text=[f"{k:,} sequence{'s' if k != 1 else ''}" for k in counts],
                     hoverinfo="skip", name="sequences"))
    layout = base_layout(f"{cache}, {L:,.0f}-token contexts, {usable_fraction:.0%} usable", "",
                         "memory (in the unit each bar names)", y_range=MEMORY_RANGE, legend=True)
    layout["barmode"] = "stack"
    layout["height"] = 600
    layout["xaxis"].pop("dtick", None)
    layout["xaxis"].update(type="linear", tickvals=SLOTS, ticktext=list(BARS), range=[-0.5, len(BARS) - 0.5])
    layout["legend"] = dict(orientation="v", x=1.02, xanchor="left", y=0.5, yanchor="middle")
    return {"data": data, "layout": layout}


def capacity_panel(cache: str = CACHE_LABELS[0], context_tokens: float = 2048, usable_fraction: float | None = None,
                   div_id: str = "fig-worked-capacity"):
    """Cache dropdown and context slider (both modes); usable share (with a kernel), the book's rule
    unless given."""
    usable_fraction = usable_memory_fraction() if usable_fraction is None else usable_fraction
    controls = [Control("cache", "KV cache", list(CACHE_LABELS)),
                Control("context_tokens", "context (tokens)", CONTEXTS, kind="slider",
                        stops=doubling_stops(CONTEXT_RANGE[0], CONTEXT_RANGE[1])),
                Control("usable_fraction", "usable share", USABLES, kind="slider")]
    values = dict(cache=cache, context_tokens=context_tokens, usable_fraction=usable_fraction)
    return _panel(capacity_spec, values, controls, div_id, static_dropdown="cache", static_slider="context_tokens")


# ---- the time of one decode step ------------------------------------------------------------------

SHARES = ("100%", "85%", "70%")        # share of the datasheet bandwidth reached
BATCHES = (1, 4, 16, 64)     # static slider stops (every fourfold step: a lighter page)
BATCH_RANGE = (1, 64)
CURVE = [round(256 * 2 ** (i / 2)) for i in range(19)]   # 256 to 131,072 tokens, two points per doubling (a lighter page)
TIME_RANGE_MS = (0.05, 300.0)
STEP_CONTEXT_RANGE = (256, 131_072)
TICKS = (256, 1024, 4096, 16_384, 65_536, 131_072)
LABEL_AT = 2048   # where the lines are labelled (a point of CURVE)


def _short(x: float) -> float:
    """Three significant figures, as the chapter's text writes its times: enough to draw, and a
    lighter page."""
    return float(f"{x:.3g}")


def _share(label: str) -> float:
    if label not in SHARES:
        raise ValueError(f"bandwidth_share must be one of {', '.join(SHARES)}; got {label!r}")
    return float(label.rstrip("%")) / 100


def step_spec(bandwidth_share: str, batch: float, usable_fraction: float | None = None) -> dict:
    """One decode step of ``batch`` sequences against the context each keeps, drawn only as far as
    the caches fit beside the weights in the usable memory (the book's share, or ``usable_fraction``,
    e.g. the plan's 95%): the memory time (W + B x (K x L + A)) / BW, the math time B x F(L) / P,
    and the plan's three times as bands. The lines end at the longest context that fits: the
    curve's first point past it is drawn there."""
    s = Setting()
    share, b = _share(bandwidth_share), max(1, round(batch))
    p, bw = s.a.dense_bf16_flops_per_s, share * s.a.bandwidth_bytes_per_s
    longest = max_context_tokens(s.a.capacity_bytes, s.w, s.k, b, usable_fraction)
    # the curve's contexts, its first point past the longest context moved onto it, so that the
    # lines stop where the caches stop fitting and not at the last point of the curve before it
    past = next((i for i, L in enumerate(CURVE) if L > longest), len(CURVE))
    xs = list(CURVE)
    if past < len(CURVE) and longest >= 1:
        xs[past] = longest
    fits = [L <= longest for L in xs]
    points = [decode_point(s.c, p, bw, b, L) for L in xs]
    mem = [_short(x.bytes / bw * 1e3) if ok else None for x, ok in zip(points, fits)]
    math_ms = [_short(x.flops / p * 1e3) if ok else None for x, ok in zip(points, fits)]
    x0, x1 = STEP_CONTEXT_RANGE

    def band(key, color):
        cl = claim(key)
        lo, hi = cl.stated_base(0), cl.stated_base(-1)
        if cl.bound == "<":   # an upper bound: everything below it
            lo = TIME_RANGE_MS[0] / 1e3
        return dict(type="scatter", x=[x0, x1, x1, x0, x0], y=[lo * 1e3, lo * 1e3, hi * 1e3, hi * 1e3, lo * 1e3],
                    fill="toself", mode="lines", line=dict(color=color, width=1), fillcolor=translucent(color, 0.3),
                    name=f"the plan: “{cl.wording}”", hoverinfo="skip")

    reading = (f"batch {b}: each cache fits up to {longest:,} tokens" if longest < x1
               else f"batch {b}: every context drawn fits")
    at = CURVE.index(LABEL_AT)
    bands = [claim(key) for key in ("latency", "step_time", "compute")]
    band_y = [math.sqrt(c.stated_base(0) * c.stated_base(-1)) * 1e3 if not c.bound
              else TIME_RANGE_MS[0] * 1.3 for c in bands]
    labels = dict(x=[x0 * 1.1] * 4 + [LABEL_AT, LABEL_AT],
                  y=[_short(y) for y in (TIME_RANGE_MS[1] * 0.6, *band_y, (mem[at] or TIME_RANGE_MS[0]) * 0.6,
                                         (math_ms[at] or TIME_RANGE_MS[0]) * 0.55)],
                  text=[reading, *[f"the plan: {c.wording}" for c in bands], "memory time", "math time"])
    data = [
        band("latency", PALETTE[4]), band("step_time", PALETTE[1]), band("compute", PALETTE[2]),
        dict(type="scatter", x=xs, y=mem, mode="lines",
             line=dict(color=INK, width=3), name="memory time (where the caches fit)",
             hovertemplate="%{x:,.0f} tokens → %{y:.2f} ms<extra>memory</extra>"),
        dict(type="scatter", x=xs, y=math_ms, mode="lines", line=dict(color=ACCENT, width=3),
             name="math time", hovertemplate="%{x:,.0f} tokens → %{y:.3f} ms<extra>math</extra>"),
        dict(type="scatter", mode="text", textposition="middle right", showlegend=False, hoverinfo="skip",
             name="labels", **labels),
    ]
    usable = "" if usable_fraction is None else f", {usable_fraction:.0%} usable"
    layout = base_layout(f"One decode step: batch {b}, {bandwidth_share} of {s.a.bandwidth_bytes_per_s / GB:,.0f} GB/s"
                         f"{usable}",
                         "context length (tokens per sequence)", "time of one step (ms)", x_log=True, y_log=True,
                         x_range=STEP_CONTEXT_RANGE, y_range=TIME_RANGE_MS)
    layout["xaxis"].pop("dtick")
    layout["xaxis"].update(tickvals=list(TICKS), ticktext=[f"{x:,}" for x in TICKS])
    layout["height"] = 600
    return {"data": data, "layout": layout}


def step_panel(bandwidth_share: str = SHARES[0], batch: float = 1, div_id: str = "fig-worked-step",
               usable_fraction: float | None = None):
    """Bandwidth-share dropdown and batch slider, in both modes; the caches fit in the book's usable
    share, or in ``usable_fraction`` (fixed, not a control)."""
    controls = [Control("bandwidth_share", "bandwidth reached", list(SHARES)),
                Control("batch", "batch", BATCHES, kind="slider", stops=doubling_stops(min(BATCHES), max(BATCHES)))]
    values = dict(bandwidth_share=bandwidth_share, batch=batch, usable_fraction=usable_fraction)
    return _panel(step_spec, values, controls, div_id, static_dropdown="bandwidth_share", static_slider="batch")
