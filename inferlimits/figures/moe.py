"""The figure of mixture-of-experts decode (chapter 8): as the batch grows, the routed experts a
step touches in each MoE layer, the weight bytes the step reads, and the aggregate tokens/s ceiling,
for an MoE model beside a dense model that reads the same active weights at every batch (its
"dense twin": the same math per token, the same cache and activations, W fixed at one token's).

The model runs on G accelerators taken as one device with G times the memory, bandwidth and math
(experts spread by expert parallelism, the rest split by tensor parallelism); the traffic between
them is not counted here."""
from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cache

from IPython.display import Markdown

from inferlimits.arithmetic.activations import activation_bytes_per_token
from inferlimits.arithmetic.generation import (decode_flops_per_token, decode_point, experts_touched_per_layer,
                                               math_ceiling_tokens_per_s, memory_ceiling_tokens_per_s,
                                               weight_bytes_read_per_step)
from inferlimits.data.hardware import MATH_PRECISIONS, accelerator
from inferlimits.figures.interactive import Control, doubling_stops, panel as _panel
from inferlimits.arithmetic.kvcache import batch_where_math_binds, fit
from inferlimits.data.models import cached_tokens, kv_bytes_per_token, model, weight_bytes
from inferlimits.arithmetic.precision import (decode_math_rate, knee_in_order_on, knee_in_order_weights_only_on,
                                              knee_on, knee_weights_only_on, runnable_math, scheme_problem)
from inferlimits.data.units import GB
from inferlimits.figures import ACCENT, FAINT, INK, base_layout
from inferlimits.figures.batching import rounded

BATCH_RANGE = (1, 65_536)
CURVE = doubling_stops(1, 65_536, 4)
BATCHES = tuple(2 ** i for i in range(17))      # the slider's stops on a page without a kernel
GPUS = (1, 2, 4, 8, 16, 32, 64)
CONTEXTS = (0, *doubling_stops(128, 131_072, 2))
WEIGHTS = ("BF16", "FP8", "INT4", "NVFP4", "MXFP4", "MXFP4 experts")
GB_RANGE = (0.3, 3_000.0)
TOKENS_RANGE = (3.0, 3e7)


def two_figures(x: float) -> str:
    """A batch to two significant figures, with thousands separators ("16,000", "280"); "never"
    for ``math.inf``. Knees rest on an estimate of the activation traffic, so more figures would
    claim more than the model knows."""
    if math.isinf(x) and x > 0:
        return "never"
    if not (math.isfinite(x) and x > 0):
        raise ValueError(f"x must be a positive batch or math.inf; got {x!r}")
    return f"{round(x, 1 - math.floor(math.log10(x))):,.0f}"


def smallest_group(accelerator_name: str, model_name: str, weight_precision: str) -> int | None:
    """The fewest accelerators of ``GPUS`` whose usable memory together holds the stored weights
    (None when even the largest group cannot)."""
    a, stored = accelerator(accelerator_name), weight_bytes(model(model_name).config, weight_precision)
    return next((g for g in GPUS if fit(g * a.capacity_bytes, stored).fits), None)


@cache
def _curves(model_name, accelerator_name, weight_precision, math_precision, gpus, context_tokens):
    """Weight bytes per step and both ceilings at every batch of ``CURVE`` (None where the caches no
    longer fit), the math ceiling P / F (the same for both: the same math per token), both knees,
    and one token's weight bytes; remembered per setup."""
    a, c = accelerator(accelerator_name), model(model_name).config
    kept, k = cached_tokens(c, context_tokens), kv_bytes_per_token(c)
    stored = weight_bytes(c, weight_precision)
    p = gpus * decode_math_rate(a, c, weight_precision, math_precision, context_tokens)
    bw, cap = gpus * a.bandwidth_bytes_per_s, gpus * a.capacity_bytes
    w1, act = weight_bytes_read_per_step(c, weight_precision, 1), activation_bytes_per_token(c)
    f = decode_flops_per_token(c, context_tokens)
    top = math_ceiling_tokens_per_s(p, f)
    read, moe, twin = [], [], []
    for b in CURVE:
        ok = fit(cap, stored, k, b, kept).fits
        point = decode_point(c, p, bw, b, context_tokens, weight_precision) if ok else None
        read.append(point.weight_bytes / GB if ok else None)
        moe.append(point.ceiling if ok else None)
        twin.append(min(memory_ceiling_tokens_per_s(bw, w1, b, k, kept, 1.0, act), top) if ok else None)
    knee = knee_on(a, c, context_tokens, weight_precision, "BF16", math_precision)  # G cancels in P / BW
    twin_knee = batch_where_math_binds(p, bw, w1, f, k, kept, act)
    return tuple(read), tuple(moe), tuple(twin), top, knee, twin_knee, w1 / GB


def spec(model_name: str, accelerator_name: str, weight_precision: str, math_precision: str, gpus: int,
         batch: float, context_tokens: float) -> dict:
    """Three panels sharing the batch axis: experts touched per MoE layer, weight bytes per step,
    and aggregate decode tokens/s, for ``model_name`` and its dense twin on ``gpus`` accelerators."""
    a, c = accelerator(accelerator_name), model(model_name).config
    if not c.is_moe:
        raise ValueError(f"model_name must be a mixture-of-experts model; got {model_name!r}")
    E, k = c.routed_experts, c.num_experts_per_tok
    b = max(1, round(batch))
    where = f"{gpus} × {accelerator_name}" if gpus > 1 else f"one {accelerator_name}"
    title = f"{model_name} ({weight_precision} weights, {math_precision} math) on {where}"
    # a pair the part cannot run is drawn with BF16 math, and the title says why
    math_precision, why = runnable_math(a, weight_precision, math_precision)
    if why:
        title += f" ({why}: drawn with BF16 math)"
    stored = weight_bytes(c, weight_precision)
    problem = None if fit(gpus * a.capacity_bytes, stored).fits else (
        f"its {stored / GB:,.0f} GB of weights do not fit in {where} "
        f"(try {smallest_group(accelerator_name, model_name, weight_precision) or 'more'} GPUs)")
    hover = "batch %{x:,.0f}: %{y:,.4g}<extra>%{fullData.name}</extra>"
    touched = [experts_touched_per_layer(c, x) for x in CURVE]
    here = experts_touched_per_layer(c, b)
    data = [dict(type="scatter", x=list(CURVE), y=rounded(touched), mode="lines", line=dict(color=ACCENT, width=3),
                 name=f"routed experts touched per layer (of {E})", xaxis="x", yaxis="y", hovertemplate=hover),
            dict(type="scatter", x=list(BATCH_RANGE), y=[E, E], mode="lines+text",
                 line=dict(color=FAINT, width=1, dash="dot"), text=["", f"all {E}"], textposition="bottom left",
                 name="all experts", xaxis="x", yaxis="y", hoverinfo="skip"),
            dict(type="scatter", x=[b], y=rounded([here]), mode="markers+text", marker=dict(size=11, color=INK),
                 text=[f"{here:,.1f} of {E}"], textposition="bottom right" if b > 256 else "top left",
                 name="experts this batch touches", xaxis="x", yaxis="y", hoverinfo="skip")]
    if problem:
        empty = dict(type="scatter", x=[], y=[], mode="lines")
        data += [dict(empty, name=n, xaxis=x, yaxis=y) for n, x, y in (
            ("weights read per step, MoE", "x2", "y2"), ("weights read per step, dense twin", "x2", "y2"),
            ("tokens/s, MoE", "x3", "y3"), ("tokens/s, dense twin", "x3", "y3"))]
        data.append(dict(type="scatter", x=[2], y=[TOKENS_RANGE[1] / 3], mode="text", text=[f"cannot run: {problem}"],
                         textposition="bottom right", name="this batch", xaxis="x3", yaxis="y3"))
    else:
        read, moe, twin, top, knee, twin_knee, w1 = _curves(model_name, accelerator_name, weight_precision,
                                                            math_precision, gpus, context_tokens)
        point = decode_point(c, gpus * decode_math_rate(a, c, weight_precision, math_precision, context_tokens),
                             gpus * a.bandwidth_bytes_per_s, b, context_tokens, weight_precision)
        fits = fit(gpus * a.capacity_bytes, stored, kv_bytes_per_token(c), b, cached_tokens(c, context_tokens)).fits
        label = (f"B = {b:,}: {experts_touched_per_layer(c, b):,.1f} experts, "
                 + (f"{point.ceiling:,.0f} tokens/s ({point.per_user:,.1f} per user)" if fits else "does not fit"))
        knees = [(knee, f"MoE knee B ≈ {two_figures(knee)}"),
                 (twin_knee, f"dense twin's knee B ≈ {two_figures(twin_knee)}")]
        knees = [(x, s) for x, s in knees if math.isfinite(x)]
        data += [
            dict(type="scatter", x=list(CURVE), y=rounded(read), mode="lines", line=dict(color=ACCENT, width=3),
                 name="weights read per step, MoE (GB)", xaxis="x2", yaxis="y2", hovertemplate=hover),
            dict(type="scatter", x=list(BATCH_RANGE), y=rounded([w1, w1]), mode="lines",
                 line=dict(color=INK, width=2, dash="dash"), name="weights read per step, dense twin (GB)",
                 xaxis="x2", yaxis="y2", hovertemplate=hover),
            dict(type="scatter", x=list(CURVE), y=rounded(moe), mode="lines", line=dict(color=ACCENT, width=3),
                 name="tokens/s ceiling, MoE", xaxis="x3", yaxis="y3", hovertemplate=hover),
            dict(type="scatter", x=list(CURVE), y=rounded(twin), mode="lines", line=dict(color=INK, width=2, dash="dash"),
                 name="tokens/s ceiling, dense twin", xaxis="x3", yaxis="y3", hovertemplate=hover),
            dict(type="scatter", x=[b] + [x for x, _ in knees],
                 y=rounded([point.ceiling if fits else None] + [top] * len(knees)),
                 mode="markers+text", marker=dict(size=11, color=INK),
                 text=[label] + [s for _, s in knees], textposition="top left" if b > 256 else "top right",
                 name="this batch", xaxis="x3", yaxis="y3", hoverinfo="skip"),
        ]
    layout = base_layout(title, "batch B (sequences decoded together)", "", x_log=True, x_range=BATCH_RANGE, legend=True)
    axis = layout["xaxis"]
    layout["xaxis"] = dict(axis, title=None, anchor="y", matches="x3", showticklabels=False)
    layout["xaxis2"] = dict(axis, title=None, anchor="y2", matches="x3", showticklabels=False)
    layout["xaxis3"] = dict(axis, anchor="y3")
    layout["yaxis"] = dict(title="experts per layer", domain=[0.72, 1.0], range=[0, E * 1.08], anchor="x")
    layout["yaxis2"] = dict(title="weights per step (GB)", type="log", dtick=1, domain=[0.38, 0.66],
                            range=[math.log10(v) for v in GB_RANGE], anchor="x2")
    layout["yaxis3"] = dict(title="tokens/s (ceiling)", type="log", dtick=1, domain=[0.0, 0.32],
                            range=[math.log10(v) for v in TOKENS_RANGE], anchor="x3")
    layout["legend"] = dict(orientation="h", x=0, y=-0.2, yanchor="top")
    layout["height"] = 980
    layout["margin"] = dict(l=80, r=20, t=100, b=230)
    return {"data": data, "layout": layout}


def setups(accelerator_name: str, model_names) -> dict[tuple, str]:
    """For each MoE model, the setup the hosted page shows: its published format (with FP8 math
    where the weights are FP8 and the part multiplies FP8), on the fewest accelerators that hold
    it; keyed as the page's dropdown sets them, (model, weights, math, GPUs), with its label."""
    a = accelerator(accelerator_name)
    out = {}
    for name in model_names:
        m = model(name)
        wp = m.published_format
        mp = "FP8" if wp == "FP8" and a.supports("FP8") else "BF16"
        g = smallest_group(accelerator_name, name, wp)
        if g is not None:
            out[(name, wp, mp, g)] = f"{name} ({wp}, {g} GPU{'s' if g > 1 else ''})"
    return out


def panel(model_names, names, model_name: str, accelerator_name: str = "H200 SXM", weight_precision: str | None = None,
          math_precision: str | None = None, gpus: int | None = None, batch: float = 1, context_tokens: float = 0,
          div_id: str = "fig-moe"):
    """Model, accelerator, weights, math and GPU count as dropdowns and batch and context as
    sliders with a kernel; on a page without one, a dropdown over each model's published setup
    (``setups``) and the batch slider. Defaults: the model's published setup."""
    choices = setups(accelerator_name, model_names)
    default = next(k for k in choices if k[0] == model_name)
    wp = weight_precision or default[1]
    mp = math_precision or default[2]
    g = gpus or default[3]
    controls = [Control("model_name", "model", list(model_names)),
                Control("accelerator_name", "accelerator", list(names)),
                Control("weight_precision", "weights", WEIGHTS),
                Control("math_precision", "math", MATH_PRECISIONS),
                Control("gpus", "GPUs", GPUS),
                Control("batch", "batch (B)", BATCHES, kind="slider", stops=doubling_stops(1, 65_536, 4)),
                Control("context_tokens", "context (L)", CONTEXTS, kind="slider")]
    static = Control(("model_name", "weight_precision", "math_precision", "gpus"), "model (as published)",
                     list(choices), labels=choices)
    values = dict(model_name=model_name, accelerator_name=accelerator_name, weight_precision=wp, math_precision=mp,
                  gpus=g, batch=batch, context_tokens=context_tokens)
    return _panel(spec, values, controls, div_id, static_dropdown=static, static_slider="batch")


def knee_ranges(accelerator_name: str, rows: Sequence[tuple[str, str, str, str]]) -> Markdown:
    """The decode knee as a range, one row per (model, weight format, math precision, how it is
    run) on ``accelerator_name``, no context: a table of weight format x math format x (whole step,
    kernels in order), in six columns. The low end of a range counts the weights alone, as if every
    hand-off between kernels stayed on chip (``knee_weights_only_on``); the high end sends every
    hand-off through HBM in BF16, ``activations``' count, an upper estimate (``knee_on``). The whole
    step takes one max() over all its bytes and math; the same two ends with the kernels counted in
    order come from ``knee_in_order_weights_only_on`` and ``knee_in_order_on``. Beside them: the
    step's ridge at its effective math rate, and the activation bytes over the weight bytes a step
    moves at the high whole-step knee,

        B* x A / W(B*),

    which says how much of the high end the activations set. ``how`` (may be empty) follows the
    pair in brackets. Knees to two significant figures."""
    from inferlimits.figures.tables import _table

    a = accelerator(accelerator_name)
    out = []
    for name, wp, mp, how in rows:
        c = model(name).config
        problem = scheme_problem(a, wp, mp)
        if problem:
            raise ValueError(f"rows: {name} with {wp} weights and {mp} math cannot run on {accelerator_name}: "
                             f"{problem}")
        high = knee_on(a, c, 0, wp, "BF16", mp)
        share = (f"{high * activation_bytes_per_token(c) / weight_bytes_read_per_step(c, wp, high):,.1f}"
                 if math.isfinite(high) else "–")
        pair = f"{wp} × {mp}" + (f" ({how})" if how else "")
        out.append([name, pair, f"{decode_math_rate(a, c, wp, mp) / a.bandwidth_bytes_per_s:,.0f}",
                    f"{two_figures(knee_weights_only_on(a, c, wp, mp))} – {two_figures(high)}",
                    f"{two_figures(knee_in_order_weights_only_on(a, c, wp, mp))} – "
                    f"{two_figures(knee_in_order_on(a, c, 0, wp, 'BF16', mp))}", share])
    return _table(["model", "weights × math (how it is run)", "ridge (FLOP/byte)",
                   "knee, whole step: weights alone – every hand-off (B)",
                   "knee, kernels in order: weights alone – every hand-off (B)",
                   "activations ÷ weights, at the high whole-step knee"], out, "llrrrr")
