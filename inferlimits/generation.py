"""Decode and prefill: the ceilings on tokens per second, time to first token, and the regime a
measured rate puts you in.

Notation (the book's): B batch (sequences decoded together), W weight bytes read per step,
K KV-cache bytes per token per sequence, L tokens in each sequence's cache, BW bandwidth
(bytes/s), P peak math rate (FLOP/s), F FLOPs per generated token.
"""
from __future__ import annotations

from .models import Config, active_param_count, cached_tokens
from .roofline import COMPUTE_BOUND, MEMORY_BOUND, step_time_s
from .units import fraction, non_negative, positive

OVERHEAD_BOUND = "far below both ceilings (overhead-bound)"


# ---- FLOPs ----------------------------------------------------------------------------------

def attention_flops_per_token(c: Config, context_tokens: float) -> float:
    """Attention's own math for one new token that looks back over L cached tokens:
    2 x layers x heads x (d_qk + d_v) x L (scores q.k, then the weighted sum of values)."""
    L = cached_tokens(c, context_tokens)
    return 2.0 * c.num_hidden_layers * c.num_attention_heads * (c.head_dim_qk + c.head_dim_v) * L


def decode_flops_per_token(c: Config, context_tokens: float = 0.0) -> float:
    """F = 2 x active parameters (a multiply and an add per weight) + attention over the context."""
    return 2.0 * active_param_count(c) + attention_flops_per_token(c, context_tokens)


def prefill_flops(c: Config, prompt_tokens: float) -> float:
    """FLOPs to read a prompt of S tokens: 2 x active parameters x S for the matrix products,
    plus causal attention, where token i looks at i tokens:
    layers x heads x (d_qk + d_v) x S x (S + 1), the term that grows with S squared."""
    S = positive("prompt_tokens", prompt_tokens)
    linear = 2.0 * active_param_count(c) * S
    attention = c.num_hidden_layers * c.num_attention_heads * (c.head_dim_qk + c.head_dim_v) * S * (S + 1)
    return linear + attention


# ---- decode ceilings ------------------------------------------------------------------------

def decode_bytes_per_step(weight_bytes: float, batch: float = 1, kv_bytes_per_token: float = 0.0,
                          context_tokens: float = 0.0) -> float:
    """Bytes one decode step reads: the weights once, shared by the batch, plus every sequence's
    own cache, W + B x K x L."""
    return (positive("weight_bytes", weight_bytes)
            + positive("batch", batch) * non_negative("kv_bytes_per_token", kv_bytes_per_token)
            * non_negative("context_tokens", context_tokens))

def memory_ceiling_tokens_per_s(bandwidth_bytes_per_s: float, weight_bytes: float, batch: float = 1,
                                kv_bytes_per_token: float = 0.0, context_tokens: float = 0.0,
                                efficiency: float = 1.0) -> float:
    """Aggregate decode tokens/s that memory allows: B x BW / (W + B x K x L).

    With B = 1 and L = 0 this is BW / W. ``efficiency`` is the fraction of peak bandwidth a real
    kernel sustains (1 = the datasheet figure)."""
    B = positive("batch", batch)
    bw = positive("bandwidth_bytes_per_s", bandwidth_bytes_per_s) * fraction("efficiency", efficiency)
    moved = decode_bytes_per_step(weight_bytes, B, kv_bytes_per_token, context_tokens)
    return B * bw / moved


def math_ceiling_tokens_per_s(peak_flop_per_s: float, flops_per_token: float) -> float:
    """Aggregate tokens/s that math allows: P / F. It does not grow with batch: batching spends
    idle math, it does not add any."""
    return positive("peak_flop_per_s", peak_flop_per_s) / positive("flops_per_token", flops_per_token)


def decode_step_time_s(peak_flop_per_s: float, bandwidth_bytes_per_s: float, weight_bytes: float,
                       flops_per_token: float, batch: float = 1, kv_bytes_per_token: float = 0.0,
                       context_tokens: float = 0.0) -> float:
    """One decode step for B sequences: max(B x F / P, (W + B x K x L) / BW)."""
    B = positive("batch", batch)
    moved = decode_bytes_per_step(weight_bytes, B, kv_bytes_per_token, context_tokens)
    return step_time_s(B * positive("flops_per_token", flops_per_token), moved, peak_flop_per_s, bandwidth_bytes_per_s)


def decode_intensity_flop_per_byte(weight_bytes: float, flops_per_token: float, batch: float = 1,
                                   kv_bytes_per_token: float = 0.0, context_tokens: float = 0.0) -> float:
    """Decode's arithmetic intensity: B x F / (W + B x K x L) FLOP per byte."""
    B = positive("batch", batch)
    moved = decode_bytes_per_step(weight_bytes, B, kv_bytes_per_token, context_tokens)
    return B * positive("flops_per_token", flops_per_token) / moved


# ---- prefill -----------------------------------------------------------------------------------

def time_to_first_token_s(c: Config, prompt_tokens: float, peak_flop_per_s: float,
                          bandwidth_bytes_per_s: float, weight_bytes: float,
                          kv_bytes_per_token: float) -> float:
    """Ideal time to first token: max(prefill FLOPs / P, (W + S x K) / BW), the prompt read in
    one pass that fetches the weights once and writes S tokens of cache."""
    S = positive("prompt_tokens", prompt_tokens)
    moved = positive("weight_bytes", weight_bytes) + S * positive("kv_bytes_per_token", kv_bytes_per_token)
    return step_time_s(prefill_flops(c, S), moved, peak_flop_per_s, bandwidth_bytes_per_s)


# ---- where a measurement sits ------------------------------------------------------------------

def regime(measured_tokens_per_s: float, memory_ceiling: float, math_ceiling: float,
           near: float = 0.5) -> str:
    """Name the regime of a measured rate: within a factor ``near`` of the lower ceiling it is
    bound by that wall (memory or compute); further below both, the two-resource model no longer
    describes the system (overhead-bound)."""
    x = positive("measured_tokens_per_s", measured_tokens_per_s)
    mem = positive("memory_ceiling", memory_ceiling)
    math_ = positive("math_ceiling", math_ceiling)
    nr = fraction("near", near)
    ceiling = min(mem, math_)
    if x > ceiling * 1.000001:
        raise ValueError(f"measured_tokens_per_s ({x:g}) is above the lower ceiling ({ceiling:g}); "
                         "check the inputs (dense FLOPs, weight precision, batch)")
    if x < nr * ceiling:
        return OVERHEAD_BOUND
    return MEMORY_BOUND if mem <= math_ else COMPUTE_BOUND
