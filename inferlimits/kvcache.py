"""The KV cache: bytes for a batch and a context, and how many sequences fit beside the weights.

K is cache bytes per token per sequence (``models.kv_bytes_per_token``), L the tokens each
sequence keeps, B the batch, W the weight bytes.
"""
from __future__ import annotations

import math

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
