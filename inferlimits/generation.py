"""Decode and prefill: the ceilings on tokens per second, time to first token, and the regime a
measured rate puts you in.

Notation (the book's): B batch (sequences decoded together), W weight bytes read per step,
K KV-cache bytes per token per sequence, L tokens in each sequence's cache, BW bandwidth
(bytes/s), P peak math rate (FLOP/s), F FLOPs per generated token.
"""
from __future__ import annotations

import math
from functools import cache

from .models import Config, active_param_count, cached_tokens, embedding_params
from .roofline import COMPUTE_BOUND, MEMORY_BOUND, step_time_s
from .units import bytes_per_element, fraction, non_negative, positive

OVERHEAD_BOUND = "far below both ceilings (overhead-bound)"


# ---- FLOPs ----------------------------------------------------------------------------------

@cache
def _active_params(c: Config) -> int:
    """``active_param_count``, remembered per config (figures call it for every point)."""
    return active_param_count(c)


def _attention_flop_coefficient(c: Config) -> float:
    """a = layers x heads x (d_qk + d_v): attention's FLOPs per (query, key) pair are 2a, half for
    the score q.k and half for weighting the value."""
    return float(c.num_hidden_layers * c.num_attention_heads * (c.head_dim_qk + c.head_dim_v))


def attention_flops_per_token(c: Config, context_tokens: float) -> float:
    """Attention's own math for one new token that looks back over L cached tokens:
    2 x layers x heads x (d_qk + d_v) x L (scores q.k, then the weighted sum of values)."""
    L = cached_tokens(c, context_tokens)
    return 2.0 * _attention_flop_coefficient(c) * L


def decode_flops_per_token(c: Config, context_tokens: float = 0.0) -> float:
    """F = 2 x active parameters (a multiply and an add per weight) + attention over the context."""
    return 2.0 * _active_params(c) + attention_flops_per_token(c, context_tokens)


def prefill_attention_flops(c: Config, prompt_tokens: float) -> float:
    """Causal attention over a prompt of S tokens, where token i looks at i tokens:
    layers x heads x (d_qk + d_v) x S x (S + 1), the term that grows with S squared.
    (A sliding window, as in Mistral-7B-v0.1, would cap it; it is not modelled here.)"""
    S = positive("prompt_tokens", prompt_tokens)
    return _attention_flop_coefficient(c) * S * (S + 1)


def prefill_flops(c: Config, prompt_tokens: float) -> float:
    """FLOPs to read a prompt of S tokens: 2 x active parameters x S for the matrix products,
    plus causal attention, layers x heads x (d_qk + d_v) x S x (S + 1)."""
    S = positive("prompt_tokens", prompt_tokens)
    return 2.0 * _active_params(c) * S + prefill_attention_flops(c, S)


def prefill_attention_share(c: Config, prompt_tokens: float) -> float:
    """Attention's share of the prefill FLOPs for a prompt of S tokens:
    a x S x (S + 1) / (2 x N x S + a x S x (S + 1)) = a(S + 1) / (2N + a(S + 1)),
    with a = layers x heads x (d_qk + d_v) and N the active parameters."""
    return prefill_attention_flops(c, prompt_tokens) / prefill_flops(c, prompt_tokens)


def prompt_tokens_at_attention_share(c: Config, share: float) -> float:
    """The prompt length S at which attention's share of prefill FLOPs reaches ``share`` (f),
    from a(S + 1) / (2N + a(S + 1)) = f:  S = 2N x f / (a x (1 - f)) - 1.

    Raises ValueError when f is 1 or more (never reached) or below the share a one-token prompt
    already has."""
    f = fraction("share", share)
    if f >= 1:
        raise ValueError(f"share must be below 1: attention never does all of the work; got {share!r}")
    a = _attention_flop_coefficient(c)
    S = 2.0 * _active_params(c) * f / (a * (1.0 - f)) - 1.0
    if S < 1:
        raise ValueError(f"share {share!r} is below attention's share of a one-token prompt "
                         f"({prefill_attention_share(c, 1):.3g})")
    return S


# ---- decode ceilings ------------------------------------------------------------------------

def weight_bytes_read_per_token(c: Config, weight_precision: str = "BF16") -> float:
    """Weight bytes one token actually reads at batch 1: every weight it passes through (the
    active ones, for a mixture of experts), except that an untied input embedding table gives
    only the token's own row: (N_active - V x h + h) x bytes per weight. A tied table is read in
    full anyway, as the output head. The book's round ceilings use all stored weights instead."""
    b = bytes_per_element(weight_precision, "weight_precision")
    skipped = 0 if c.tie_word_embeddings else embedding_params(c) - c.hidden_size
    return (_active_params(c) - skipped) * b


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

def prefill_bytes_moved(weight_bytes: float, kv_bytes_per_token: float, prompt_tokens: float) -> float:
    """Bytes a one-pass prefill moves: the weights once, shared by every prompt token, and the
    S tokens of cache it writes, W + S x K (activations are left out: a few MB)."""
    return (positive("weight_bytes", weight_bytes)
            + positive("prompt_tokens", prompt_tokens) * positive("kv_bytes_per_token", kv_bytes_per_token))


def prefill_intensity_flop_per_byte(c: Config, prompt_tokens: float, weight_bytes: float,
                                    kv_bytes_per_token: float) -> float:
    """Prefill's arithmetic intensity: prefill FLOPs / (W + S x K). With b bytes per weight and a
    short prompt this is about 2N x S / (N x b) = 2S / b, so S FLOP per byte at BF16."""
    return prefill_flops(c, prompt_tokens) / prefill_bytes_moved(weight_bytes, kv_bytes_per_token, prompt_tokens)


def prefill_crossover_prompt_tokens(c: Config, peak_flop_per_s: float, bandwidth_bytes_per_s: float,
                                    weight_bytes: float, kv_bytes_per_token: float) -> float:
    """The prompt length S* at which prefill turns compute-bound: its intensity reaches the
    balance point R = P / BW, that is prefill FLOPs / P = (W + S x K) / BW. With
    a = layers x heads x (d_qk + d_v) and N the active parameters this is the quadratic

        a S^2 + (2N + a - R K) S - R W = 0,   S* = 2 R W / (beta + sqrt(beta^2 + 4 a R W)),

    beta = 2N + a - R K (the positive root, in a form without cancellation). For short prompts
    S* is about R x b / 2 with b bytes per weight: the balance point itself at BF16."""
    R = (positive("peak_flop_per_s", peak_flop_per_s)
         / positive("bandwidth_bytes_per_s", bandwidth_bytes_per_s))
    W = positive("weight_bytes", weight_bytes)
    K = positive("kv_bytes_per_token", kv_bytes_per_token)
    a = _attention_flop_coefficient(c)
    beta = 2.0 * _active_params(c) + a - R * K
    return 2.0 * R * W / (beta + math.sqrt(beta * beta + 4.0 * a * R * W))


def time_to_first_token_s(c: Config, prompt_tokens: float, peak_flop_per_s: float,
                          bandwidth_bytes_per_s: float, weight_bytes: float,
                          kv_bytes_per_token: float) -> float:
    """Ideal time to first token: max(prefill FLOPs / P, (W + S x K) / BW), the prompt read in
    one pass that fetches the weights once and writes S tokens of cache."""
    S = positive("prompt_tokens", prompt_tokens)
    moved = prefill_bytes_moved(weight_bytes, kv_bytes_per_token, S)
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
