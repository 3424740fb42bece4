"""The figure of low-precision serving (chapter 7): aggregate decode tokens/s against batch for a
model on an accelerator, with its weights stored in one format and its math run in one precision,
beside BF16 weights with BF16 math; the knee of each, and where a chosen batch lands."""
from __future__ import annotations

import math
from functools import cache

from inferlimits.arithmetic.generation import decode_point
from inferlimits.data.hardware import MATH_PRECISIONS, accelerator
from inferlimits.figures.interactive import Control, doubling_stops, panel as _panel
from inferlimits.arithmetic.kvcache import fit, max_sequences
from inferlimits.data.models import cached_tokens, kv_bytes_per_token, model, weight_bytes
from inferlimits.arithmetic.precision import decode_in_order_on, decode_math_rate, decode_on, knee_on, runnable_math
from inferlimits.figures import FAINT, INK, base_layout
from inferlimits.figures.batching import rounded
from inferlimits.figures.roofline import PRECISION_COLOURS

TOKENS_RANGE = (10.0, 3e7)                 # aggregate tokens/s, fixed y axis
BATCH_RANGE = (1, 65_536)                  # fixed x axis
CURVE = doubling_stops(1, 65_536, 4)       # the batches the curves are drawn through
BATCHES = tuple(2 ** i for i in range(17))  # 1 to 65,536, the slider's stops on a page without a kernel
CONTEXTS = (0, *doubling_stops(128, 131_072, 2))
WEIGHTS = ("BF16", "FP8", "INT8", "INT4", "NVFP4", "MXFP4")
KV = ("BF16", "FP8")
#: the pairs the hosted page's one dropdown offers, and their names
SCHEMES = {("BF16", "BF16"): "BF16 weights, BF16 math",
           ("FP8", "BF16"): "FP8 weights only (BF16 math)",
           ("INT4", "BF16"): "INT4 weights only (BF16 math)",
           ("FP8", "FP8"): "FP8 weights and FP8 math",
           ("INT4", "FP8"): "INT4 weights, FP8 math",
           ("NVFP4", "FP4"): "NVFP4 weights and FP4 math"}
REFERENCE = ("BF16", "BF16")


@cache
def _curve(accelerator_name, model_name, weight_precision, math_precision, kv_precision, context_tokens):
    """The lower ceiling at every batch of ``CURVE`` whose weights and caches fit (None beyond),
    the memory ceiling alone, the ceiling with the elementwise kernels counted apart
    (``decode_in_order_on``), the math ceiling, and the knee (remembered: the hosted page's states
    redraw the same curves for every stop of the batch slider)."""
    a, c = accelerator(accelerator_name), model(model_name).config
    kept, k = cached_tokens(c, context_tokens), kv_bytes_per_token(c, kv_precision)
    stored = weight_bytes(c, weight_precision)
    rate = decode_math_rate(a, c, weight_precision, math_precision, context_tokens)
    lower, memory, in_order = [], [], []
    for b in CURVE:
        if fit(a.capacity_bytes, stored, k, b, kept).fits:
            p = decode_point(c, rate, a.bandwidth_bytes_per_s, b, context_tokens, weight_precision, kv_precision)
            lower.append(p.ceiling), memory.append(p.memory_ceiling)
            in_order.append(decode_in_order_on(a, c, b, context_tokens, weight_precision, kv_precision,
                                               math_precision).ceiling)
        else:
            lower.append(None), memory.append(None), in_order.append(None)
    math_ceiling = decode_point(c, rate, a.bandwidth_bytes_per_s, 1, context_tokens, weight_precision,
                                kv_precision).math_ceiling
    knee = knee_on(a, c, context_tokens, weight_precision, kv_precision, math_precision)
    return tuple(lower), tuple(memory), tuple(in_order), math_ceiling, knee


def _most(a, c, weight_precision, kv_precision, context_tokens) -> int | None:
    """The largest batch whose caches fit beside the weights (None: any batch, no cache counted)."""
    kept = cached_tokens(c, context_tokens)
    if not kept:
        return None if fit(a.capacity_bytes, weight_bytes(c, weight_precision)).fits else 0
    return max(0, max_sequences(a.capacity_bytes, weight_bytes(c, weight_precision),
                                kv_bytes_per_token(c, kv_precision), kept))


def spec(accelerator_name: str, model_name: str, weight_precision: str, math_precision: str, kv_precision: str,
         batch: float, context_tokens: float) -> dict:
    """Decode tokens/s against batch: the chosen pair of weight format and math precision (its
    lower ceiling, its memory ceiling dotted beyond the knee, its ceiling with the elementwise kernels
    counted apart, its math ceiling flat), BF16 weights with BF16 math in grey, both knees, and a
    marker at ``batch``."""
    a, c = accelerator(accelerator_name), model(model_name).config
    label = SCHEMES.get((weight_precision, math_precision), f"{weight_precision} weights, {math_precision} math")
    # a pair the part cannot run is drawn with BF16 math, and the title says why
    math_precision, problem = runnable_math(a, weight_precision, math_precision)
    title = (f"{model_name} on the {accelerator_name}: {label}, {kv_precision} cache, {context_tokens:,.0f} tokens of context"
             + (f" ({problem}: drawn with BF16 math)" if problem else ""))
    colour = PRECISION_COLOURS[math_precision]
    ref_lower, _, _, ref_math, ref_knee = _curve(accelerator_name, model_name, *REFERENCE, kv_precision, context_tokens)
    hover = "batch %{x:,.0f} → %{y:,.4g} tokens/s<extra>%{fullData.name}</extra>"
    data = [dict(type="scatter", x=list(CURVE), y=rounded(ref_lower), mode="lines",
                 line=dict(color=FAINT, width=3), name="BF16 weights, BF16 math", hovertemplate=hover)]
    b = max(1, round(batch))
    most = _most(a, c, weight_precision, kv_precision, context_tokens)
    if most == 0:  # the weights alone do not fit: no curve, and the marker says so at every batch
        data += [dict(type="scatter", x=[], y=[], mode="lines", name=label),
                 dict(type="scatter", x=[], y=[], mode="lines", name="memory ceiling beyond the knee"),
                 dict(type="scatter", x=[], y=[], mode="lines", name="kernels in order"),
                 dict(type="scatter", x=[], y=[], mode="lines", name="math ceiling"),
                 dict(type="scatter", x=[], y=[], mode="markers+text", name="knee"),
                 dict(type="scatter", x=[b], y=[TOKENS_RANGE[0] * 3], mode="markers+text", marker=dict(size=14, color=INK),
                      text=[f"B = {b:,}: {weight_precision} weights do not fit in the {a.name}'s usable memory"],
                      textposition="top right", name="this batch")]
    else:
        lower, memory, in_order, math_ceiling, knee = _curve(accelerator_name, model_name, weight_precision, math_precision,
                                                   kv_precision, context_tokens)
        beyond = [m if x >= knee else None for x, m in zip(CURVE, memory)] if math.isfinite(knee) else []
        point = decode_on(a, c, b, context_tokens, weight_precision, kv_precision, math_precision)
        ordered = decode_in_order_on(a, c, b, context_tokens, weight_precision, kv_precision, math_precision)
        fits_here = most is None or b <= most
        both = math.isfinite(knee) and math.isfinite(ref_knee)
        knee_text = f"knee: B ≈ {knee:,.0f}" if math.isfinite(knee) else "memory-bound at every batch"
        ref_text = f"BF16 knee: B ≈ {ref_knee:,.0f}" if math.isfinite(ref_knee) else ""
        data += [
            dict(type="scatter", x=list(CURVE), y=rounded(lower), mode="lines", line=dict(color=colour, width=4),
                 name=label, hovertemplate=hover),
            dict(type="scatter", x=list(CURVE) if beyond else [], y=rounded(beyond), mode="lines",
                 line=dict(color=colour, width=1.5, dash="dot"), name="memory ceiling beyond the knee",
                 hovertemplate=hover),
            dict(type="scatter", x=list(CURVE), y=rounded(in_order), mode="lines",
                 line=dict(color=colour, width=2, dash="dashdot"),
                 name="kernels in order, one kind after another", hovertemplate=hover),
            dict(type="scatter", x=list(BATCH_RANGE), y=rounded([math_ceiling] * 2), mode="lines",
                 line=dict(color=colour, width=1.5, dash="dash"), name=f"math ceiling ({math_precision} math)",
                 hovertemplate=hover),
            dict(type="scatter", x=[knee, ref_knee] if both else [], y=rounded([math_ceiling, ref_math]) if both else [],
                 mode="markers+text", marker=dict(size=10, color=INK, symbol="diamond"),
                 text=[knee_text, ref_text], textposition=["top left", "bottom right"], name="knee",
                 hoverinfo="skip"),
            dict(type="scatter", x=[b], y=rounded([point.ceiling if fits_here else TOKENS_RANGE[0] * 3]),
                 mode="markers+text", marker=dict(size=14, color=INK), textposition="bottom right",
                 text=[f"B = {b:,}: {point.ceiling:,.0f} tokens/s, {point.wall} ({ordered.ceiling:,.0f} in order)"
                       if fits_here
                       else f"B = {b:,}: does not fit (at most {most:,})"],
                 name="this batch", hovertemplate=hover)]
    layout = base_layout(title, "batch B (sequences decoded together)",
                         "aggregate decode tokens per second (ceiling)", x_log=True, y_log=True,
                         x_range=BATCH_RANGE, y_range=TOKENS_RANGE, legend=True)
    layout["legend"] = dict(orientation="h", x=0, y=-0.3, yanchor="top")
    layout["margin"] = dict(l=70, r=20, t=100, b=170)
    layout["height"] = 680
    return {"data": data, "layout": layout}


def panel(names, model_names, accelerator_name: str = "B200 (HGX)", model_name: str = "Llama-3.1-8B",
          weight_precision: str = "BF16", math_precision: str = "BF16", kv_precision: str = "BF16",
          batch: float = 1, context_tokens: float = 0, div_id: str = "fig-precision"):
    """Every choice live with a kernel (accelerator, model, weights, math, cache, batch, context);
    on a page without a kernel, one dropdown over the pairs of ``SCHEMES`` and the batch slider."""
    controls = [Control("accelerator_name", "accelerator", list(names)),
                Control("model_name", "model", list(model_names)),
                Control("weight_precision", "weights", WEIGHTS),
                Control("math_precision", "math", MATH_PRECISIONS),
                Control("kv_precision", "KV cache", KV),
                Control("batch", "batch (B)", BATCHES, kind="slider", stops=doubling_stops(1, 65_536, 4)),
                Control("context_tokens", "context (L)", CONTEXTS, kind="slider")]
    schemes = Control(("weight_precision", "math_precision"), "weights and math", list(SCHEMES), labels=SCHEMES)
    values = dict(accelerator_name=accelerator_name, model_name=model_name, weight_precision=weight_precision,
                  math_precision=math_precision, kv_precision=kv_precision, batch=batch,
                  context_tokens=context_tokens)
    return _panel(spec, values, controls, div_id, static_dropdown=schemes, static_slider="batch")


# ---- the chapter's tables ------------------------------------------------------------------------

#: each chip generation the chapter names, its vendor, and its parts in the book's data
GENERATIONS = (("Ampere", "NVIDIA", ("A100 40GB SXM", "A100 80GB SXM", "A100 80GB PCIe")),
               ("Ada", "NVIDIA", ("L4", "L40S", "RTX 4090")),
               ("Hopper", "NVIDIA", ("H100 SXM", "H100 PCIe", "H200 SXM", "H20")),
               ("Blackwell", "NVIDIA", ("B200 (HGX)", "B200 (GB200)", "B300 (HGX)", "B300 (GB300)")),
               ("CDNA 3", "AMD", ("MI300X", "MI325X")),
               ("CDNA 4", "AMD", ("MI355X",)))


def _chip(name: str) -> str:
    """A part's name without its memory size or its form factor: "H100 SXM" is an H100."""
    return " ".join(w for w in name.split() if w not in ("SXM", "PCIe", "40GB", "80GB") and not w.startswith("("))


def generations():
    """The chip generations vendors name, one row each: its vendor and the parts of the book's data
    that belong to it, each chip once ("H100 SXM" and "H100 PCIe" are one H100)."""
    from inferlimits.figures.tables import _table

    rows = []
    for generation, vendor, names in GENERATIONS:
        parts = [accelerator(n).name for n in names]   # every name is in the data
        rows.append([generation, vendor, ", ".join(dict.fromkeys(_chip(n) for n in parts))])
    return _table(["generation", "vendor", "parts in this book"], rows, "lll")


#: what a table of weight-and-math pairs can show (``schemes_table``): its header and how to compute it
SCHEME_COLUMNS = ("held (GB)", "read per step (GB)", "one user: tokens/s", "math rate (TFLOP/s)",
                  "ridge (FLOP/byte)", "knee, weights alone (sequences)", "knee, whole step (sequences)",
                  "knee, kernels in order (sequences)", "prefill compute-bound from (tokens)", "first token (ms)")
#: the chapter's three tables of pairs, each with the pair first and six columns at most: one user and
#: the first token (the main table), the main line's two knees beside the ridge, and the rest, which a
#: refinement shows (the memory held, the effective rate, the products' knee and the prefill crossover)
MAIN_COLUMNS = ("read per step (GB)", "one user: tokens/s", "first token (ms)")
KNEE_COLUMNS = ("ridge (FLOP/byte)", "knee, weights alone (sequences)", "knee, whole step (sequences)")
REFINED_COLUMNS = ("held (GB)", "math rate (TFLOP/s)", "knee, kernels in order (sequences)",
                   "prefill compute-bound from (tokens)")


def scheme_cells(model_name: str, accelerator_name: str, weight_precision: str, math_precision: str,
                 prompt_tokens: int) -> dict[str, str] | str:
    """Every column of ``SCHEME_COLUMNS`` for one pair of weight format and math precision, for
    ``model_name`` on ``accelerator_name`` with no context, as the table prints it; or, for a pair
    the part cannot run or whose weights do not fit, the reason. The knees are the weights alone
    (``knee_weights_only_on``), the whole step under one max() (``knee_on``) and the kernels in
    order (``knee_in_order_on``); the first token is the ideal prefill of ``prompt_tokens``."""
    from inferlimits.arithmetic.precision import (crossover_on, decode_math_rate, knee_in_order_on,
                                                  knee_weights_only_on, prefill_on, scheme_problem)
    from inferlimits.data.units import GB
    from inferlimits.figures.tables import _g

    def batch(knee: float) -> str:
        return _g(knee) if math.isfinite(knee) else "never"

    c, a = model(model_name).config, accelerator(accelerator_name)
    wp, mp = weight_precision, math_precision
    stored = weight_bytes(c, wp)
    problem = scheme_problem(a, wp, mp)
    if problem or not fit(a.capacity_bytes, stored).fits:
        return problem or f"does not fit ({stored / GB:,.1f} GB of weights)"
    one = decode_on(a, c, 1, 0, wp, "BF16", mp)
    rate = decode_math_rate(a, c, wp, mp)
    return {"held (GB)": _g(stored / GB, 1), "read per step (GB)": _g(one.weight_bytes / GB, 2),
            "one user: tokens/s": _g(one.ceiling), "math rate (TFLOP/s)": _g(rate / 1e12),
            "ridge (FLOP/byte)": _g(rate / a.bandwidth_bytes_per_s),
            "knee, weights alone (sequences)": batch(knee_weights_only_on(a, c, wp, mp)),
            "knee, whole step (sequences)": batch(knee_on(a, c, 0, wp, "BF16", mp)),
            "knee, kernels in order (sequences)": batch(knee_in_order_on(a, c, 0, wp, "BF16", mp)),
            "prefill compute-bound from (tokens)": _g(crossover_on(a, c, wp, "BF16", mp)),
            "first token (ms)": f"{prefill_on(a, c, prompt_tokens, wp, 'BF16', mp).time_s * 1e3:,.1f}"}


def schemes_table(model_name: str, accelerator_name: str, schemes, prompt_tokens: int,
                  columns=MAIN_COLUMNS):
    """One row per pair ``(weight format, math precision)`` of ``schemes`` and the ``columns``
    (a choice from ``SCHEME_COLUMNS``) of ``scheme_cells``; a pair that cannot run or does not fit
    says why in its first column. The first token's header names the prompt."""
    from inferlimits.figures.tables import _table

    unknown = [h for h in columns if h not in SCHEME_COLUMNS]
    if unknown or not columns:
        raise ValueError(f"columns must be a non-empty choice from {SCHEME_COLUMNS}; got {unknown or columns!r}")
    rows = []
    for wp, mp in schemes:
        cells = scheme_cells(model_name, accelerator_name, wp, mp, prompt_tokens)
        label = f"{wp} weights, {mp} math"
        rows.append([label, cells, *["–"] * (len(columns) - 1)] if isinstance(cells, str)
                    else [label, *(cells[h] for h in columns)])
    header = [h.replace("first token (ms)", f"first token of {prompt_tokens:,} (ms)") for h in columns]
    return _table(["weights and math", *header], rows)
