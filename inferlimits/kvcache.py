"""The KV cache: bytes for a batch and a context, and how many sequences fit beside the weights.

K is cache bytes per token per sequence (``models.kv_bytes_per_token``), L the tokens each
sequence keeps, B the batch, W the weight bytes.
"""
from __future__ import annotations

import math

from . import datafiles
from .units import fraction, non_negative, positive


def kv_cache_bytes(kv_bytes_per_token: float, batch: float, context_tokens: float) -> float:
    """Cache of a whole batch: B x K x L bytes."""
    return (positive("batch", batch) * positive("kv_bytes_per_token", kv_bytes_per_token)
            * non_negative("context_tokens", context_tokens))


def batch_where_cache_equals_weights(weight_bytes: float, kv_bytes_per_token: float,
                                     context_tokens: float) -> float:
    """The batch at which the caches weigh as much as the weights: B = W / (K x L)."""
    return positive("weight_bytes", weight_bytes) / (
        positive("kv_bytes_per_token", kv_bytes_per_token) * positive("context_tokens", context_tokens))


def memory_left_for_cache_bytes(capacity_bytes: float, weight_bytes: float,
                                usable_fraction: float = 1.0) -> float:
    """Bytes left for the cache once the weights are loaded: capacity x usable fraction - W
    (zero when the weights do not fit)."""
    usable = positive("capacity_bytes", capacity_bytes) * fraction("usable_fraction", usable_fraction)
    return max(0.0, usable - positive("weight_bytes", weight_bytes))


def max_sequences(capacity_bytes: float, weight_bytes: float, kv_bytes_per_token: float,
                  context_tokens: float, usable_fraction: float = 1.0) -> int:
    """Whole sequences of ``context_tokens`` whose caches fit beside the weights:
    floor((capacity x usable fraction - W) / (K x L))."""
    left = memory_left_for_cache_bytes(capacity_bytes, weight_bytes, usable_fraction)
    per_sequence = positive("kv_bytes_per_token", kv_bytes_per_token) * positive("context_tokens", context_tokens)
    return math.floor(left / per_sequence)


# ---- the cache in the memory ceiling ------------------------------------------------------------

def cache_limited_tokens_per_s(bandwidth_bytes_per_s: float, kv_bytes_per_token: float,
                               context_tokens: float, efficiency: float = 1.0) -> float:
    """The large-batch limit of the memory ceiling B x BW / (W + B x K x L): BW / (K x L).

    With many sequences every generated token costs its own cache read, and the shared weights no
    longer matter. ``efficiency`` is the fraction of peak bandwidth sustained."""
    bw = positive("bandwidth_bytes_per_s", bandwidth_bytes_per_s) * fraction("efficiency", efficiency)
    return bw / (positive("kv_bytes_per_token", kv_bytes_per_token) * positive("context_tokens", context_tokens))


def cache_share_of_step_bytes(weight_bytes: float, kv_bytes_per_token: float, context_tokens: float,
                              batch: float) -> float:
    """Share of a decode step's bytes that are cache reads: B x K x L / (W + B x K x L).

    The same number is the memory ceiling as a share of its large-batch limit BW / (K x L): half
    of it at B = W / (K x L), nine tenths at nine times that batch."""
    cache = kv_cache_bytes(kv_bytes_per_token, batch, context_tokens)
    return cache / (positive("weight_bytes", weight_bytes) + cache)


def batch_where_math_binds(peak_flop_per_s: float, bandwidth_bytes_per_s: float, weight_bytes: float,
                           flops_per_token: float, kv_bytes_per_token: float = 0.0,
                           context_tokens: float = 0.0) -> float:
    """The batch at which the memory ceiling B x BW / (W + B x K x L) reaches the math ceiling P / F:

        B = P x W / (BW x F - P x K x L),

    and ``math.inf`` when BW x F <= P x K x L: then the cache reads alone keep decode below the
    math ceiling at every batch. Weights only (K x L = 0) it is the balance point times W / F."""
    p = positive("peak_flop_per_s", peak_flop_per_s)
    bw = positive("bandwidth_bytes_per_s", bandwidth_bytes_per_s)
    w = positive("weight_bytes", weight_bytes)
    f = positive("flops_per_token", flops_per_token)
    kl = non_negative("kv_bytes_per_token", kv_bytes_per_token) * non_negative("context_tokens", context_tokens)
    room = bw * f - p * kl
    return p * w / room if room > 0 else math.inf


def max_context_tokens(capacity_bytes: float, weight_bytes: float, kv_bytes_per_token: float, batch: float,
                       usable_fraction: float = 1.0) -> int:
    """The longest context each of B sequences can keep beside the weights:
    floor((capacity x usable fraction - W) / (B x K)) tokens."""
    left = memory_left_for_cache_bytes(capacity_bytes, weight_bytes, usable_fraction)
    return math.floor(left / (positive("batch", batch) * positive("kv_bytes_per_token", kv_bytes_per_token)))


# ---- shrinking the cache ------------------------------------------------------------------------

def kv_cache_reduction(baseline_bytes_per_token: float, new_bytes_per_token: float) -> float:
    """The cut a design makes in the cache, as a fraction: 1 - K_new / K_baseline."""
    return 1.0 - (positive("new_bytes_per_token", new_bytes_per_token)
                  / positive("baseline_bytes_per_token", baseline_bytes_per_token))


def bits_per_element_for_reduction(baseline_bytes_per_token: float, elements_per_token: float,
                                   reduction: float) -> float:
    """Bits each cached number may take for a cache of ``elements_per_token`` numbers per token to be
    ``reduction`` smaller than the baseline: 8 x (1 - r) x K_baseline / elements."""
    r = fraction("reduction", reduction)
    if r >= 1:
        raise ValueError(f"reduction must be below 1 (a cache of zero bytes); got {reduction!r}")
    return 8.0 * (1.0 - r) * positive("baseline_bytes_per_token", baseline_bytes_per_token) / positive(
        "elements_per_token", elements_per_token)


def published_kv_cache_reduction(model_name: str) -> tuple[float, str]:
    """The cache reduction a model's publisher states (as a fraction) and where it is stated, read
    from the model's row in ``data/models.toml``."""
    row = datafiles.load("models.toml")["models"].get(model_name) if isinstance(model_name, str) else None
    if not row or "published_kv_cache_reduction_percent" not in row:
        raise ValueError(f"model_name must be a model whose row states a cache reduction; got {model_name!r}")
    return row["published_kv_cache_reduction_percent"] / 100, row["published_kv_cache_reduction_source"]
