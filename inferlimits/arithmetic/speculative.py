"""Speculative decoding: a cheap draft proposes k tokens, the target model checks all of them (and
adds one of its own) in one pass, so one read of the target's weights can yield several tokens.

Notation as in ``generation``, and k draft tokens per step, a the chance that the target accepts
a draft token given that it accepted every one before it. The book takes a to be the same for every
position and independent of what came before (the assumption of Leviathan et al., 2023); real
acceptance falls with the position and varies with the text.
"""
from __future__ import annotations

import math

from dataclasses import dataclass

from inferlimits.data.hardware import Accelerator
from inferlimits.arithmetic.kvcache import fit
from inferlimits.data.models import Config, cached_tokens, kv_bytes_per_token, weight_bytes
from inferlimits.arithmetic.parallel import cache_share, tensor_parallel_on
from inferlimits.data.units import non_negative, positive, whole

#: The book's example of a draft: an assumed acceptance rate a of 0.7 (each draft token accepted with
#: chance 0.7 given that every one before it was: 0.44 of the drafted tokens, in the accepted / drafted
#: terms of ``draft_acceptance_rate``), four drafted per step (the defaults of chapter 9's figure and
#: the index card's lever).
EXAMPLE_ACCEPTANCE = 0.7
EXAMPLE_DRAFT_TOKENS = 4


def expected_tokens_per_step(acceptance: float, draft_tokens: int) -> float:
    """Tokens one verification step yields on average: the accepted prefix of the k draft tokens
    and the target's own next token, 1 + a + a^2 + ... + a^k = (1 - a^(k+1)) / (1 - a); 1 at a = 0,
    k + 1 at a = 1."""
    a = non_negative("acceptance", acceptance)
    if a > 1:
        raise ValueError(f"acceptance is a probability and must be at most 1; got {acceptance!r}")
    k = whole("draft_tokens", draft_tokens, 0)
    return float(k + 1) if a == 1.0 else (1.0 - a ** (k + 1)) / (1.0 - a)


def estimated_speedup(acceptance: float, draft_tokens: int, draft_cost: float) -> float:
    """The speed-up of speculative decoding at one sequence while decode is memory-bound, estimated:
    S(k) = E_k[tokens] / (1 + k c). A round yields E_k[tokens] (``expected_tokens_per_step``) for
    one verification, which reads what a plain step reads and so takes about one plain step, and
    k draft steps of c plain steps each (c, ``draft_cost``: the draft's step time over the
    target's). 1 with no draft (k = 0). ``speculative_on`` counts the verification's larger math
    and activations, and any batch."""
    k = whole("draft_tokens", draft_tokens, 0)
    return expected_tokens_per_step(acceptance, k) / (1.0 + k * non_negative("draft_cost", draft_cost))


def draft_acceptance_rate(acceptance: float, draft_tokens: int) -> float:
    """The share of drafted tokens the target accepts, accepted / drafted, from the book's a (the
    chance that a draft token is accepted given that every one before it was):
    r = (a + a^2 + ... + a^k) / k = (E[tokens per round] - 1) / k. vLLM logs this share as its
    "draft acceptance rate" (num_accepted_tokens / num_draft_tokens, vllm/v1/spec_decode/metrics.py);
    its "mean acceptance length" is E[tokens per round]. A token drafted after the first rejection
    counts as drafted and never as accepted, so r < a for 0 < a < 1 and k > 1 (r = a for k = 1):
    a = 0.7 and k = 4 give r = 0.443."""
    a = non_negative("acceptance", acceptance)
    if a > 1:
        raise ValueError(f"acceptance is a probability and must be at most 1; got {acceptance!r}")
    k = whole("draft_tokens", draft_tokens, 1)
    if a in (0.0, 1.0):
        return a
    # a (1 - a^k) / ((1 - a) k), with 1 - a^k as -expm1(k ln a): no cancellation as a nears 1
    return a * -math.expm1(k * math.log(a)) / ((1.0 - a) * k)


def acceptance_from_draft_rate(draft_rate: float, draft_tokens: int) -> float:
    """The inverse of ``draft_acceptance_rate``: the book's a from a measured accepted / drafted
    share r over rounds of k draft tokens, the root in [0, 1] of (a + a^2 + ... + a^k) / k = r. The
    left side rises with a from 0 to 1, so the root is unique; found by bisection to the last bit."""
    r = non_negative("draft_rate", draft_rate)
    if r > 1:
        raise ValueError(f"draft_rate is a share of the drafted tokens and must be at most 1; got {draft_rate!r}")
    k = whole("draft_tokens", draft_tokens, 1)
    if r in (0.0, 1.0):
        return r
    low, high = 0.0, 1.0
    while (mid := (low + high) / 2) not in (low, high):   # halve until the floats run out
        if draft_acceptance_rate(mid, k) < r:
            low = mid
        else:
            high = mid
    return mid


def verify_step_s(a: Accelerator, c: Config, batch: float = 1, draft_tokens: int = 0, context_tokens: float = 0.0,
                  weight_precision: str = "BF16", kv_precision: str = "BF16", math_precision: str = "BF16",
                  gpus: int = 1) -> float:
    """The target checking k + 1 tokens for each of B sequences in one pass: the weights those
    B (k + 1) tokens touch, read once; each sequence's cache read once (its k + 1 tokens attend to
    the same cache); math and activations for B (k + 1) tokens:
    max(B (k + 1) F / P, (W + B K L + B (k + 1) A) / BW). With k = 0 it is a plain decode step; on
    T GPUs in tensor parallelism (``parallel.tensor_parallel_on``) each reads and multiplies its
    share, and the all-reduces carry the B (k + 1) tokens."""
    q = whole("draft_tokens", draft_tokens, 0) + 1
    return tensor_parallel_on(a, c, gpus, batch, context_tokens, weight_precision, kv_precision, math_precision,
                              tokens_per_sequence=q).step_s


@dataclass(frozen=True)
class SpeculativeStep:
    """One round of speculative decoding for a batch: k draft steps, then one verification."""

    batch: float
    tokens_per_step: float   # expected tokens each sequence gains per round
    verify_s: float
    draft_s: float
    plain_s: float           # a plain decode step of the same batch, for comparison
    fits: bool = True        # the weights (the draft's too) and every sequence's cache in memory

    @property
    def round_s(self) -> float:
        return self.verify_s + self.draft_s

    @property
    def per_user(self) -> float:
        return self.tokens_per_step / self.round_s

    @property
    def aggregate(self) -> float:
        return self.batch * self.per_user

    @property
    def speedup(self) -> float:
        """Against plain decoding of the same batch: tokens per round x plain step / round."""
        return self.tokens_per_step * self.plain_s / self.round_s


def speculative_on(a: Accelerator, c: Config, draft: Config | None, batch: float = 1,
                   acceptance: float = EXAMPLE_ACCEPTANCE, draft_tokens: int = EXAMPLE_DRAFT_TOKENS,
                   context_tokens: float = 0.0, weight_precision: str = "BF16", kv_precision: str = "BF16",
                   math_precision: str = "BF16", gpus: int = 1) -> SpeculativeStep:
    """Speculative decoding of ``batch`` sequences of ``c`` on ``a``, with ``draft`` proposing k
    tokens (k plain decode steps of the draft model at the same batch; ``None``: a draft that costs
    nothing, such as looking the next tokens up in the prompt, the upper bound of the gain). On
    ``gpus`` GPUs both models run in tensor parallelism. Fit first: ``fits`` says whether both
    models' weights and every sequence's caches fit in each GPU's memory."""
    B = positive("batch", batch)
    k = whole("draft_tokens", draft_tokens, 0)
    L = non_negative("context_tokens", context_tokens)
    T = whole("gpus", gpus)

    def plain(model: Config) -> float:
        return verify_step_s(a, model, B, 0, L, weight_precision, kv_precision, math_precision, T)

    draft_s = 0.0 if draft is None or k == 0 else k * plain(draft)
    models = [c] if draft is None else [c, draft]
    held = sum(weight_bytes(m, weight_precision) / T for m in models)
    cache = sum(kv_bytes_per_token(m, kv_precision) * cache_share(m, T) * cached_tokens(m, L + k) for m in models)
    return SpeculativeStep(B, expected_tokens_per_step(acceptance, k),
                           verify_step_s(a, c, B, k, L, weight_precision, kv_precision, math_precision, T),
                           draft_s, plain(c), fit(a.capacity_bytes, held, cache, B, 1).fits)
