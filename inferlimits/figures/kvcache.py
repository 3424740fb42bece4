"""Figures of the KV cache (chapter 5): memory against context length, the caches stacked on the
weights below the accelerator's usable memory, and the decode tokens/s ceiling against batch for
several context lengths, drawn only as far as the caches fit."""
from __future__ import annotations

from collections.abc import Sequence

from inferlimits.arithmetic.activations import activation_bytes_per_token
from inferlimits.arithmetic.generation import decode_point, weight_bytes_read_per_step
from inferlimits.data.hardware import accelerator
from inferlimits.figures.interactive import Control, doubling_stops, panel as _panel
from inferlimits.arithmetic.kvcache import (batch_where_cache_equals_weights, cache_limited_tokens_per_s,
                                            kv_cache_bytes, max_context_tokens, max_sequences,
                                            memory_left_for_cache_bytes, usable_memory_fraction)
from inferlimits.data.models import cached_tokens, kv_bytes_per_token, model, weight_bytes
from inferlimits.data.units import GB
from inferlimits.figures import ACCENT, FAINT, INK, PALETTE, base_layout, translucent
from inferlimits.figures.batching import legend_below_slider, rounded

CONTEXT_RANGE = (256, 131_072)          # tokens, fixed x axis of the memory figure
MEMORY_RANGE = (0.0, 300.0)             # GB, fixed y axis
BATCH_RANGE = (1, 1024)
TOKENS_RANGE = (10.0, 1e6)              # tokens/s
CONTEXT_CURVE = [round(256 * 2 ** (i / 4)) for i in range(37)]   # 256 to 131,072, four points per doubling
BATCH_CURVE = [round(2 ** (i / 4), 3) for i in range(41)]        # 1 to 1,024, four points per doubling
BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)   # static slider stops of the ceiling figure
MEMORY_BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256)        # and of the memory figure
CONTEXTS = (0, 2048, 8192, 32_768, 131_072)               # the ceiling figure's curves
KV_PRECISIONS = ("BF16", "FP8", "INT4")


def _fits_label(c, context_length: int, w: float, k: float, batch: int, usable: float) -> tuple[float | None, str]:
    """Where weights + caches reach usable memory, and a sentence saying so."""
    if memory_left_for_cache_bytes(usable, w, 1.0) == 0:
        return None, "the weights alone exceed the usable memory"
    longest = max_context_tokens(usable, w, k, batch, 1.0)
    window = c.sliding_window
    if window and longest >= window:
        return None, f"every context fits if the engine frees what falls out of the {window:,}-token window"
    limit = min(context_length, CONTEXT_RANGE[1])
    if longest >= limit:
        return None, f"the model's longest context ({limit:,} tokens) fits"
    if longest < 1:
        return None, "not even one token per sequence fits"
    return float(longest), f"each sequence fits up to {longest:,} tokens"


def memory_spec(model_name: str, accelerator_name: str, batch: float, kv_precision: str = "BF16") -> dict:
    """Weights, and weights plus the caches of ``batch`` sequences, against context length (up to
    the model's supported context), with the accelerator's usable memory (capacity x the book's
    usable share) as a line."""
    m = model(model_name)
    c = m.config
    a = accelerator(accelerator_name)
    b = max(1, round(batch))
    w, k = weight_bytes(c), kv_bytes_per_token(c, kv_precision)
    usable_fraction = usable_memory_fraction()
    usable = a.capacity_bytes * usable_fraction
    xs = [x if x <= m.context_length else None for x in CONTEXT_CURVE]
    total = rounded([None if x is None else (w + kv_cache_bytes(k, b, cached_tokens(c, x))) / GB for x in xs])
    at, label = _fits_label(c, m.context_length, w, k, b, usable)
    data = [
        dict(type="scatter", x=CONTEXT_CURVE, y=[w / GB] * len(CONTEXT_CURVE), mode="lines", fill="tozeroy",
             line=dict(color=INK, width=2), fillcolor=translucent(INK, 0.35), name="weights",
             hovertemplate="weights %{y:.1f} GB<extra></extra>"),
        dict(type="scatter", x=xs, y=total, mode="lines", fill="tonexty", line=dict(color=PALETTE[3], width=3),
             fillcolor=translucent(PALETTE[3], 0.35), name="weights + KV caches of the batch",
             hovertemplate="context %{x:,.0f} tokens → %{y:.1f} GB in all<extra></extra>"),
        dict(type="scatter", x=list(CONTEXT_RANGE), y=[usable / GB] * 2, mode="lines+text",
             line=dict(color=ACCENT, width=2, dash="dash"), name="usable memory",
             text=[f"usable: {usable_fraction:.0%} of {a.capacity_bytes / GB:,.1f} GB", ""], textposition="top right",
             hoverinfo="skip"),
        dict(type="scatter", x=[at], y=[usable / GB if at else None], mode="markers", marker=dict(size=12, color=ACCENT),
             name="memory full", hovertemplate="full at %{x:,.0f} tokens<extra></extra>"),
        dict(type="scatter", x=[CONTEXT_RANGE[0] * 1.1], y=[MEMORY_RANGE[1] * 0.95], mode="text",
             text=[f"batch {b:,}, {kv_precision} cache: {label}"], textposition="middle right",
             showlegend=False, hoverinfo="skip", name="reading"),
    ]
    layout = base_layout(f"{model_name}: weights and KV caches on the {accelerator_name}",
                         "context length (tokens per sequence)", "memory (GB, 10⁹ bytes)", x_log=True,
                         x_range=CONTEXT_RANGE, y_range=MEMORY_RANGE, legend=True)
    ticks = [256 * 2 ** i for i in range(10)]
    layout["xaxis"].update(tickmode="array", dtick=None, tickvals=ticks, ticktext=[f"{t // 1024}K" if t >= 1024 else str(t) for t in ticks])
    legend_below_slider(layout)
    return {"data": data, "layout": layout}


def ceiling_spec(model_name: str, accelerator_name: str, batch: float, kv_precision: str = "BF16") -> dict:
    """The decode tokens/s ceiling (lower of memory and math) against batch for several context
    lengths, each curve drawn only up to the largest batch whose caches fit beside the weights
    (a cross marks it); markers where the caches weigh as much as the weights a step reads, and at
    ``batch`` where it fits; the large-batch limits BW / (K x L + A) as faint lines."""
    m = model(model_name)
    c = m.config
    a = accelerator(accelerator_name)
    p, bw = a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s
    b = max(1, round(batch))
    stored, w, k = weight_bytes(c), weight_bytes_read_per_step(c), kv_bytes_per_token(c, kv_precision)
    act = activation_bytes_per_token(c)
    usable_fraction = usable_memory_fraction()
    data, even, full, chosen, limits = [], ([], [], []), ([], []), ([], [], []), ([], [])
    for i, L in enumerate(CONTEXTS):
        kept = cached_tokens(c, L)
        most = max_sequences(a.capacity_bytes, stored, k, kept) if kept else (
            BATCH_RANGE[1] if memory_left_for_cache_bytes(a.capacity_bytes, stored) > 0 else 0)

        def ceiling(x):
            return decode_point(c, p, bw, x, L, kv_precision=kv_precision).ceiling

        name = "no context" if L == 0 else f"{L:,} tokens of context"
        shown = L <= m.context_length
        data.append(dict(type="scatter", x=BATCH_CURVE,
                         y=rounded([ceiling(x) if x <= most else None for x in BATCH_CURVE]), mode="lines",
                         line=dict(color=PALETTE[i], width=3), name=name, visible=shown,
                         hovertemplate="batch %{x:.0f} → %{y:,.0f} tokens/s<extra>%{fullData.name}</extra>"))
        if not shown:
            continue
        if b <= most:
            chosen[0].append(b), chosen[1].append(ceiling(b)), chosen[2].append(f"{ceiling(b):,.0f}")
        if kept > 0:
            half = batch_where_cache_equals_weights(w, k, kept)
            if BATCH_RANGE[0] <= half <= min(BATCH_RANGE[1], most):
                even[0].append(half), even[1].append(ceiling(half)), even[2].append(f"{half:.0f}")
            if BATCH_RANGE[0] <= most <= BATCH_RANGE[1]:
                full[0].append(most), full[1].append(ceiling(most))
            lim = cache_limited_tokens_per_s(bw, k, kept, act)
            limits[0].extend(list(BATCH_RANGE) + [None]), limits[1].extend([lim, lim, None])
    data += [
        dict(type="scatter", x=limits[0], y=limits[1], mode="lines", line=dict(color=FAINT, width=1, dash="dot"),
             name="large-batch limit BW / (K × L + A)", hoverinfo="skip"),
        dict(type="scatter", x=even[0], y=even[1], mode="markers", marker=dict(size=10, color="white",
             line=dict(color=INK, width=2)), name="caches weigh as much as the weights", customdata=even[2],
             hovertemplate="caches = weights at batch %{customdata}<extra></extra>"),
        dict(type="scatter", x=full[0], y=full[1], mode="markers", marker=dict(size=12, symbol="x", color=ACCENT),
             name=f"memory full ({usable_fraction:.0%} usable): no larger batch fits",
             hovertemplate="memory full at batch %{x}<extra></extra>"),
        dict(type="scatter", x=chosen[0], y=chosen[1], mode="markers+text", marker=dict(size=9, color=INK),
             text=chosen[2], textposition="middle right", name="chosen batch", hoverinfo="skip"),
    ]
    layout = base_layout(f"{model_name} on the {accelerator_name}, {kv_precision} cache: decode ceiling",
                         "batch (sequences decoded together)", "tokens per second, all sequences together",
                         x_log=True, y_log=True, x_range=BATCH_RANGE, y_range=TOKENS_RANGE, legend=True)
    return {"data": data, "layout": legend_below_slider(layout)}


def _controls(models: Sequence[str], accelerators: Sequence[str], batches: Sequence[int]) -> list[Control]:
    return [Control("model_name", "model", list(models)),
            Control("batch", "batch", batches, kind="slider", stops=doubling_stops(min(batches), max(batches))),
            Control("accelerator_name", "accelerator", list(accelerators)),
            Control("kv_precision", "KV precision", KV_PRECISIONS)]


def memory_panel(models: Sequence[str], accelerators: Sequence[str], model_name: str, accelerator_name: str,
                 batch: float, kv_precision: str = "BF16", div_id: str = "fig-kv-memory"):
    """Model dropdown and batch slider (both modes); accelerator and KV precision (with a kernel)."""
    values = dict(model_name=model_name, accelerator_name=accelerator_name, batch=batch, kv_precision=kv_precision)
    return _panel(memory_spec, values, _controls(models, accelerators, MEMORY_BATCHES), div_id,
                  static_dropdown="model_name", static_slider="batch")


def ceiling_panel(models: Sequence[str], accelerators: Sequence[str], model_name: str, accelerator_name: str,
                  batch: float, kv_precision: str = "BF16", div_id: str = "fig-kv-ceiling"):
    """Model dropdown and batch slider (both modes); accelerator and KV precision (with a kernel)."""
    values = dict(model_name=model_name, accelerator_name=accelerator_name, batch=batch, kv_precision=kv_precision)
    return _panel(ceiling_spec, values, _controls(models, accelerators, BATCHES), div_id,
                  static_dropdown="model_name", static_slider="batch")
