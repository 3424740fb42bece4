"""Serving many users at once: each user's speed against the fleet's throughput as the batch grows,
with the prompts that keep arriving.

A server under continuous batching keeps B sequences decoding; each generates n tokens after a
prompt of S tokens, so on average B / n sequences finish every step and as many new prompts must be
read in. With chunked prefill those prompt tokens ride in the same forward passes as the decode
tokens: a step carries B decode tokens and, on average, B S / n prompt tokens. The prefill/decode
crossover of chapter 3 applies to all the tokens of a step together. Each chunk of a prompt re-reads
the weights with the step it rides in, and attends to the cache of the chunks before it.

Notation as in ``generation``; G GPUs in tensor parallelism (``parallel``), C the token budget of
one step (vLLM's ``max_num_batched_tokens``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from .activations import activation_bytes_per_token
from .generation import decode_flops_per_token, prefill_flops, weight_bytes_read_per_step
from .hardware import Accelerator
from .kvcache import fit
from .models import Config, cached_tokens, kv_bytes_per_token, weight_bytes
from .parallel import cache_share, tensor_parallel_communication_s
from .precision import decode_math_rate, prefill_math_rate
from .units import non_negative, positive

#: a user reading as the text arrives: a common target for each user's speed, in tokens/s
READING_TOKENS_PER_S = 20


def mixed_step_s(a: Accelerator, c: Config, decode_tokens: float, prompt_tokens: float, context_tokens: float,
                 prompt_length: float, chunk_tokens: float | None = None, gpus: int = 1, weight_precision: str = "BF16",
                 kv_precision: str = "BF16", math_precision: str = "BF16") -> float:
    """One forward pass on G GPUs carrying D decode tokens (one per sequence, each with L tokens
    of cache) and Q prompt tokens (chunks of prompts S long):
    max((D F_dec + Q F_pre / S) / (G P), (W(D + Q) / G + s (D K L + Q K + (Q / c) K (S - c) / 2) + (D A_dec + Q A_pre) / G) / BW)
    + communication, where W(D + Q) are the weights those tokens touch, s the cache share
    (``parallel.cache_share``) and F_pre / S a prompt token's share of its prompt's FLOPs. Each
    prompt token writes its cache; a prompt read in chunks of c tokens (``chunk_tokens``, default
    the whole prompt) reads, once per chunk, the cache of its earlier chunks, (S - c) / 2 tokens on
    average."""
    D = non_negative("decode_tokens", decode_tokens)
    Q = non_negative("prompt_tokens", prompt_tokens)
    if D + Q <= 0:
        raise ValueError("decode_tokens + prompt_tokens must be positive; a step carries at least one token")
    L = non_negative("context_tokens", context_tokens)
    S = positive("prompt_length", prompt_length)
    chunk = S if chunk_tokens is None else min(positive("chunk_tokens", chunk_tokens), S)
    G = gpus
    share = cache_share(c, G)
    flops_decode = D * decode_flops_per_token(c, L) / (G * decode_math_rate(a, c, weight_precision, math_precision, L))
    flops_prompt = Q * prefill_flops(c, S) / S / (G * prefill_math_rate(a, c, S, weight_precision, math_precision))
    k = kv_bytes_per_token(c, kv_precision)
    cache = share * (D * k * cached_tokens(c, L) + Q * k + Q / chunk * k * cached_tokens(c, (S - chunk) / 2))
    act = (D * activation_bytes_per_token(c, "decode") + Q * activation_bytes_per_token(c, "prefill")) / G
    memory = (weight_bytes_read_per_step(c, weight_precision, D + Q) / G + cache + act) / a.bandwidth_bytes_per_s
    sampled = D + Q / S   # logits for every decode token, and for the last token of each prompt
    return max(flops_decode + flops_prompt, memory) + tensor_parallel_communication_s(a, c, G, D + Q,
                                                                                      logits_tokens=sampled)


@dataclass(frozen=True)
class ServingPoint:
    """A server of G GPUs holding B sequences: each user's decode speed, every user's tokens
    together, and the time a new request waits for its first token."""

    batch: float
    gpus: int
    step_s: float        # a mean step: B decode tokens and B S / n prompt tokens
    first_token_s: float
    fits: bool

    @property
    def per_user(self) -> float:
        return 1.0 / self.step_s

    @property
    def aggregate(self) -> float:
        return self.batch / self.step_s

    @property
    def per_gpu(self) -> float:
        return self.aggregate / self.gpus


def serving_point(a: Accelerator, c: Config, batch: float, prompt_tokens: float = 1024, output_tokens: float = 256,
                  gpus: int = 1, step_tokens: int = 8192, weight_precision: str = "BF16", kv_precision: str = "BF16",
                  math_precision: str = "BF16") -> ServingPoint:
    """Continuous batching with chunked prefill, in steady state. A mean step carries the B decode
    tokens (mean context S + n / 2) and the B S / n prompt tokens that keep the batch full. A new
    prompt is read in chunks of what the step's budget C leaves beside the decode tokens,
    C - B, so its first token comes after ceil(S / (C - B)) steps of B + min(S, C - B) tokens.
    Fit first: every GPU holds its share of the weights and of the B caches at full length S + n.
    The first token's time is a lower bound: it leaves out the wait for a step in flight and for a
    free place in the batch."""
    B = positive("batch", batch)
    S, n = positive("prompt_tokens", prompt_tokens), positive("output_tokens", output_tokens)
    C = positive("step_tokens", step_tokens)
    if C <= B:
        raise ValueError(f"step_tokens ({C:g}) must exceed the batch ({B:g}): every step carries one token of each sequence")
    L = S + n / 2
    chunk = min(S, C - B)
    args = (chunk, gpus, weight_precision, kv_precision, math_precision)
    step = mixed_step_s(a, c, B, B * S / n, L, S, *args)
    first = math.ceil(S / chunk) * mixed_step_s(a, c, B, chunk, L, S, *args)
    cache = B * kv_bytes_per_token(c, kv_precision) * cached_tokens(c, S + n) * cache_share(c, gpus)
    fits = fit(a.capacity_bytes, weight_bytes(c, weight_precision) / gpus, cache, 1, 1).fits
    return ServingPoint(B, gpus, step, first, fits)
