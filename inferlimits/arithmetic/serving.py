"""Serving many users at once: each user's speed against the fleet's throughput as the batch grows,
with the prompts that keep arriving.

A server under continuous batching keeps B sequences decoding; each generates n tokens after a
prompt of S tokens, so on average B / n sequences finish every step and as many new prompts must be
read in. With chunked prefill those prompt tokens ride in the same forward passes as the decode
tokens: a step carries B decode tokens and, on average, B S / n prompt tokens. The prefill/decode
crossover of chapter 3 applies to all the tokens of a step together. Each chunk of a prompt re-reads
the weights with the step it rides in, and attends to the cache of the chunks before it.

Notation as in ``generation``; T GPUs in tensor parallelism (``parallel``), C the token budget of
one step (vLLM's ``max_num_batched_tokens``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from inferlimits.arithmetic.activations import activation_bytes_per_token, tensor_parallel_activation_share
from inferlimits.arithmetic.generation import decode_flops_per_token, prefill_flops, weight_bytes_read_per_step
from inferlimits.data.hardware import Accelerator
from inferlimits.data.models import Config, cached_tokens, kv_bytes_per_token
from inferlimits.arithmetic.parallel import cache_share, tensor_parallel_communication_s, tensor_parallel_fit
from inferlimits.arithmetic.precision import decode_math_rate, prefill_math_rate
from inferlimits.data.units import non_negative, positive, whole

#: the book's line for each user's speed, in tokens/s: between MLPerf's bounds for Llama-2-70B below
READING_TOKENS_PER_S = 20
#: MLPerf Inference's bounds on the time per output token (TPOT: the mean interval between a
#: request's output tokens), in seconds, for Llama-2-70B in its interactive and conversational
#: categories (mlcommons/inference_policies inference_rules.adoc, commit ac93e89c: "Conversational
#: category: TTFT/TPOT: 2000 ms/200 ms. Interactive category: TTFT/TPOT: 450 ms/40 ms"). Each bound
#: holds for the 99th percentile of the requests' TPOTs, not their mean (the rules' scenario table:
#: "Server/Interactive ... Tail Latency 99%"; mlcommons/inference loadgen/mlperf.conf:
#: "*.Server.target_latency_percentile = 99", "llama2-70b-interactive.Server.tpot_latency = 40")
MLPERF_LLAMA2_70B_TPOT_S = {"interactive": 0.040, "conversational": 0.200}
#: C, the tokens one step may carry: vLLM's default ``max_num_batched_tokens`` for its API server on
#: GPUs of 70 GiB or more other than the A100 (vllm/engine/arg_utils.py:
#: "UsageContext.OPENAI_API_SERVER: 8192"), the book's default
STEP_TOKENS = 8192


def mixed_step_s(a: Accelerator, c: Config, decode_tokens: float, prompt_tokens: float, context_tokens: float,
                 prompt_length: float, chunk_tokens: float | None = None, gpus: int = 1, weight_precision: str = "BF16",
                 kv_precision: str = "BF16", math_precision: str = "BF16") -> float:
    """One forward pass on T GPUs carrying D decode tokens (one per sequence, each with L tokens
    of cache) and Q prompt tokens (chunks of prompts S long):
    max((D F_dec + Q F_pre / S) / (T P), (W(D + Q) / T + s (D K L + Q K + (Q / c) K (S - c) / 2) + D A_dec,T + Q A_pre,T) / BW)
    + communication, where W(D + Q) are the weights those tokens touch, s the cache share
    (``parallel.cache_share``), A_T one GPU's share of a token's activations
    (``activations.tensor_parallel_activation_share``) and F_pre / S a prompt token's share of its
    prompt's FLOPs. Each
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
    T = whole("gpus", gpus)
    share = cache_share(c, T)
    flops_decode = D * decode_flops_per_token(c, L) / (T * decode_math_rate(a, c, weight_precision, math_precision, L))
    flops_prompt = Q * prefill_flops(c, S) / S / (T * prefill_math_rate(a, c, S, weight_precision, math_precision))
    k = kv_bytes_per_token(c, kv_precision)
    cache = share * (D * k * cached_tokens(c, L) + Q * k + Q / chunk * k * cached_tokens(c, (S - chunk) / 2))
    act = (D * activation_bytes_per_token(c, "decode") * tensor_parallel_activation_share(c, "decode", T)
           + Q * activation_bytes_per_token(c, "prefill") * tensor_parallel_activation_share(c, "prefill", T))
    memory = (weight_bytes_read_per_step(c, weight_precision, D + Q) / T + cache + act) / a.bandwidth_bytes_per_s
    sampled = D + Q / S   # logits for every decode token, and for the last token of each prompt
    return max(flops_decode + flops_prompt, memory) + tensor_parallel_communication_s(a, c, T, D + Q,
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
    keeps_up: bool = True  # the step's token budget holds the prompt tokens that arrive per step

    @property
    def steady(self) -> bool:
        """Whether the point can be held at all: it fits, and the prompts do not queue without end."""
        return self.fits and self.keeps_up

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
                  gpus: int = 1, step_tokens: int = STEP_TOKENS, weight_precision: str = "BF16", kv_precision: str = "BF16",
                  math_precision: str = "BF16") -> ServingPoint:
    """Continuous batching with chunked prefill, in steady state, with requests always waiting (the
    batch stays full). A mean step carries the B decode tokens (mean context S + n / 2) and the
    B S / n prompt tokens that keep the batch full; it keeps up only while B (1 + S / n) <= C, the
    step's token budget (otherwise prompts queue without end: ``keeps_up`` is False). A new prompt
    waits on average half a mean step for the step in flight, then is read in chunks of what the
    budget leaves beside the decode tokens, C - B, in ceil(S / (C - B)) steps, each carrying at
    least a mean step's prompt tokens: first token = step / 2 + ceil(S / (C - B)) x
    step(B, max(C - B, B S / n)), with C - B at most S. It leaves out any wait for a free place in
    the batch. Fit first: every GPU holds its share of the weights and of the B caches at full
    length S + n (``parallel.tensor_parallel_fit``)."""
    B = positive("batch", batch)
    S, n = positive("prompt_tokens", prompt_tokens), positive("output_tokens", output_tokens)
    C = positive("step_tokens", step_tokens)
    if C <= B:
        raise ValueError(f"step_tokens ({C:g}) must exceed the batch ({B:g}): every step carries one token of each sequence")
    L = S + n / 2
    chunk = min(S, C - B)
    args = (chunk, gpus, weight_precision, kv_precision, math_precision)
    arriving = B * S / n
    step = mixed_step_s(a, c, B, arriving, L, S, *args)
    first = step / 2 + math.ceil(S / chunk) * mixed_step_s(a, c, B, max(chunk, arriving), L, S, *args)
    fits = tensor_parallel_fit(a, c, gpus, B, S + n, weight_precision, kv_precision).fits
    return ServingPoint(B, gpus, step, first, fits, B + arriving <= C)
