"""The precision the math runs in, apart from the precision the weights are stored in.

A serving engine chooses two things: the format each weight is stored in (``weight_precision``,
which sets the bytes a step reads: ``models.component_formats``) and the precision its tensor cores
multiply in (``math_precision``, which sets the rate: ``Accelerator.math_flops_per_s``). They go
together only one way round: a product can run at a precision no wider than its weights were
stored in only if the weights are converted first, so

* weights stored in a format that precision multiplies natively (FP8 weights at FP8, NVFP4 or
  MXFP4 at FP4), or in a strictly narrower one (INT4 or FP4 weights widened to FP8 in the kernel,
  "W4A8"), run at ``math_precision``;
* every other product runs at the 16-bit rate: weight-only formats (INT4, GPTQ/AWQ, GGUF) are
  converted to BF16 ("W4A16"), and the parts a checkpoint keeps in 16 bits (output head, router,
  attention in gpt-oss) stay there.

Attention over the cache or the prompt multiplies activations by activations, not weights; the
book runs it at ``attention_precision``, BF16 unless stated (FlashAttention-style kernels
convert an FP8 cache to 16 bits before the math).

A step's math time is then the sum of its parts' FLOPs over their rates, and its *effective* rate
P = F / (sum of F_i / P_i) is what ``generation``'s formulas take as the peak: with BF16
everywhere it is the BF16 rate, exactly. The ``*_on`` functions fill everything in for a model on
an accelerator.

Those take one max() over the whole step, as if every byte could move while any math ran. Kernels
run one after another, though: the elementwise ones (norms, rotary embeddings, SiLU, copies) have
no math to hide their bytes under, attention's cache cannot hide under the products' math, and an
MoE model's experts, each with only its own tokens' rows, cannot borrow the dense products' spare
math. ``decode_in_order_on`` counts each kind of kernel apart and adds them. The narrower the math,
the more that matters: it shortens the products, not the rest.
"""
from __future__ import annotations

from dataclasses import dataclass

from inferlimits.arithmetic.activations import ATTENTION, ELEMENTWISE, PRODUCT, ROUTED, activation_bytes_by_part
from inferlimits.arithmetic.generation import (COMPUTE_BOUND, MEMORY_BOUND, DecodePoint, PrefillPoint, _first_crossing,
                                               attention_flops_per_token, decode_flops_per_token, decode_knee_batch,
                                               decode_point, experts_touched_per_layer, prefill_attention_flops,
                                               prefill_crossover_tokens, prefill_point, weight_bytes_read_per_step,
                                               weights_read_per_step)
from inferlimits.data.hardware import MATH_BITS, MATH_PRECISIONS, Accelerator
from inferlimits.data.models import (COMPONENTS, EXPERTS, MATRICES, VOCABULARY, Config, cached_tokens,
                                     component_formats, kv_bytes_per_token, multiplied_weights, routed_experts_read,
                                     weights_bytes)
from inferlimits.data.units import fraction, non_negative, positive, storage_format

#: the precision a product falls back to: 16-bit math, which every part here has
WIDE = "BF16"


def _math(math_precision: str, name: str = "math_precision") -> str:
    if math_precision not in MATH_PRECISIONS:
        raise ValueError(f"{name} must be one of {', '.join(MATH_PRECISIONS)}; got {math_precision!r}")
    return math_precision


def product_math(weight_format: str, math_precision: str) -> str:
    """The precision a weight product runs at when the engine multiplies in ``math_precision``:
    that precision if the weights' format is multiplied at it as stored, or is strictly narrower
    than it (widened in the kernel without loss); else BF16."""
    f = storage_format(weight_format, "weight_format")
    m = _math(math_precision)
    return m if f.math == m or f.element_bits < MATH_BITS[m] else WIDE


def scheme_error(weight_precision: str, math_precision: str) -> str | None:
    """Why the decoder's quantized matrices, stored in ``weight_precision``, cannot be multiplied
    in ``math_precision`` (math narrower than the weights, or of another kind: BF16 weights at FP8,
    INT8 weights at FP8, FP8 at FP4), or None when they can. Parts kept in 16 bits run at BF16
    under any math; that is no error."""
    m = _math(math_precision)
    if m == WIDE:
        return None
    formats = component_formats(weight_precision)
    quantized = sorted({formats[p] for p in (MATRICES, EXPERTS) if storage_format(formats[p]).element_bits < 16})
    if not quantized:
        return f"{m} math cannot multiply {weight_precision} weights: quantize them to {m} or narrower first"
    for f in quantized:
        if product_math(f, m) != m:
            return f"{m} math cannot multiply weights stored in {f} as they are"
    return None


def check_scheme(weight_precision: str, math_precision: str) -> None:
    """A ValueError naming ``math_precision`` when ``scheme_error`` finds the pair impossible."""
    problem = scheme_error(weight_precision, math_precision)
    if problem:
        raise ValueError(f"math_precision {math_precision}: {problem}")


def scheme_problem(a: Accelerator, weight_precision: str, math_precision: str) -> str | None:
    """Why a pair of weight and math precision cannot run on ``a`` (a sentence), or None."""
    if not a.supports(math_precision):
        return f"the {a.name} has no {math_precision} tensor cores"
    return scheme_error(weight_precision, math_precision)


def runnable_math(a: Accelerator, weight_precision: str, math_precision: str) -> tuple[str, str | None]:
    """The math precision a figure draws a pair with: ``math_precision`` where ``a`` can run the
    pair, else BF16, which every pair can run, with the reason (``scheme_problem``) for a note. A
    control set to an impossible pair then still shows something, and says why it is not that."""
    problem = scheme_problem(a, weight_precision, math_precision)
    return (WIDE, problem) if problem else (math_precision, None)


def product_flops_by_precision(c: Config, weight_precision: str, math_precision: str,
                               head_share: float = 1.0) -> dict[str, float]:
    """The FLOPs of one token's weight products (2 per weight it multiplies), by the precision each
    runs at (``product_math``). ``head_share`` scales the output head (a prefill multiplies it for
    one prompt position only: 1/S of it per token)."""
    share = fraction("head_share", head_share)
    w = multiplied_weights(c)
    formats = component_formats(weight_precision)
    out: dict[str, float] = {}
    for part in COMPONENTS:
        n = getattr(w, part) * (share if part == VOCABULARY else 1.0)
        if n:
            p = product_math(formats[part], math_precision)
            out[p] = out.get(p, 0.0) + 2.0 * n
    return out


def _seconds(parts: dict[str, float], a: Accelerator) -> float:
    """The time of FLOPs by precision at ``a``'s rates."""
    return sum(f / a.math_flops_per_s(p) for p, f in parts.items() if f)


def _rate(parts: dict[str, float], a: Accelerator) -> float:
    """F / sum(F_i / P_i): the one rate that does the parts' math in the same time."""
    return sum(parts.values()) / _seconds(parts, a)


def decode_math_rate(a: Accelerator, c: Config, weight_precision: str = "BF16", math_precision: str = "BF16",
                     context_tokens: float = 0.0, attention_precision: str = WIDE) -> float:
    """P, the effective math rate of a decode step: its weight products at their precisions and
    its attention over L cached tokens at ``attention_precision``, 2N + attention FLOPs over their
    summed times."""
    check_scheme(weight_precision, math_precision)
    parts = product_flops_by_precision(c, weight_precision, math_precision)
    attention = attention_flops_per_token(c, non_negative("context_tokens", context_tokens))
    parts[_math(attention_precision, "attention_precision")] = parts.get(attention_precision, 0.0) + attention
    return _rate(parts, a)


def prefill_math_rate(a: Accelerator, c: Config, prompt_tokens: float, weight_precision: str = "BF16",
                      math_precision: str = "BF16", attention_precision: str = WIDE) -> float:
    """P, the effective math rate of a prefill of S tokens: the weight products of S tokens (the
    output head once), and causal attention over the prompt at ``attention_precision``."""
    S = positive("prompt_tokens", prompt_tokens)
    check_scheme(weight_precision, math_precision)
    parts = {p: f * S for p, f in product_flops_by_precision(c, weight_precision, math_precision, 1.0 / S).items()}
    attention = prefill_attention_flops(c, S)
    parts[_math(attention_precision, "attention_precision")] = parts.get(attention_precision, 0.0) + attention
    return _rate(parts, a)


def decode_on(a: Accelerator, c: Config, batch: float = 1, context_tokens: float = 0.0,
              weight_precision: str = "BF16", kv_precision: str = "BF16", math_precision: str = "BF16",
              efficiency: float = 1.0, activation_precision: str = "BF16",
              attention_precision: str = WIDE) -> DecodePoint:
    """``generation.decode_point`` on ``a``, its math at the step's effective rate."""
    p = decode_math_rate(a, c, weight_precision, math_precision, context_tokens, attention_precision)
    return decode_point(c, p, a.bandwidth_bytes_per_s, batch, context_tokens, weight_precision, kv_precision,
                        activation_precision, efficiency)


def prefill_on(a: Accelerator, c: Config, prompt_tokens: float, weight_precision: str = "BF16",
               kv_precision: str = "BF16", math_precision: str = "BF16", activation_precision: str = "BF16",
               attention_precision: str = WIDE) -> PrefillPoint:
    """``generation.prefill_point`` on ``a``, its math at the pass's effective rate."""
    p = prefill_math_rate(a, c, prompt_tokens, weight_precision, math_precision, attention_precision)
    return prefill_point(c, p, a.bandwidth_bytes_per_s, prompt_tokens, weight_precision, kv_precision,
                         activation_precision)


def knee_on(a: Accelerator, c: Config, context_tokens: float = 0.0, weight_precision: str = "BF16",
            kv_precision: str = "BF16", math_precision: str = "BF16", activation_precision: str = "BF16",
            attention_precision: str = WIDE) -> float:
    """The batch at which decode turns compute-bound on ``a`` (``generation.decode_knee_batch`` at
    the step's effective rate, which does not depend on the batch)."""
    p = decode_math_rate(a, c, weight_precision, math_precision, context_tokens, attention_precision)
    return decode_knee_batch(c, p, a.bandwidth_bytes_per_s, context_tokens, weight_precision, kv_precision,
                             activation_precision)


def crossover_on(a: Accelerator, c: Config, weight_precision: str = "BF16", kv_precision: str = "BF16",
                 math_precision: str = "BF16", activation_precision: str = "BF16",
                 attention_precision: str = WIDE) -> float:
    """The prompt length at which prefill turns compute-bound on ``a``. With every product and
    attention at one rate this is ``generation.prefill_crossover_tokens``; otherwise the effective
    rate changes with the prompt (attention's share grows) and the crossing is found numerically."""
    check_scheme(weight_precision, math_precision)
    parts = product_flops_by_precision(c, weight_precision, math_precision)
    if set(parts) | {attention_precision} == {WIDE}:
        return prefill_crossover_tokens(c, a.math_flops_per_s(WIDE), a.bandwidth_bytes_per_s, weight_precision,
                                        kv_precision, activation_precision)

    def memory_bound(S: float) -> bool:
        return prefill_on(a, c, S, weight_precision, kv_precision, math_precision, activation_precision,
                          attention_precision).wall != COMPUTE_BOUND

    return _first_crossing(memory_bound)


def ridge_flop_per_byte(a: Accelerator, math_precision: str = "BF16") -> float:
    """The balance point at ``math_precision``: its dense rate over the bandwidth. Halving the
    width of the math doubles it on every part that has the narrower mode at twice the rate."""
    return a.math_flops_per_s(_math(math_precision)) / a.bandwidth_bytes_per_s


# ---- the kernels counted one kind after another ------------------------------------------------------

@dataclass(frozen=True)
class InOrderStep:
    """A decode step of ``batch`` sequences counted one kind of kernel after another. Each part
    (``activations.PARTS``) is its own run of kernels with its own math time and memory time: the
    weight products (with the weights they read), the routed experts' products (the experts the
    batch touches), attention (the cache and its own activations) and the elementwise kernels
    (norms, rotary embeddings, SiLU, copies: bytes only). A part takes the larger of its two times;
    the parts add, because one kind's spare math cannot hide another kind's bytes."""

    batch: float
    parts: tuple[tuple[str, float, float], ...]   # (part, math_s, memory_s)

    @property
    def time_s(self) -> float:
        return sum(max(m, b) for _, m, b in self.parts)

    @property
    def ceiling(self) -> float:
        """Aggregate tokens/s: one token per sequence per step."""
        return self.batch / self.time_s

    @property
    def math_s(self) -> float:
        return sum(m for _, m, _ in self.parts)

    @property
    def memory_s(self) -> float:
        """Every part's memory time but the elementwise kernels'."""
        return sum(b for p, _, b in self.parts if p != ELEMENTWISE)

    @property
    def elementwise_s(self) -> float:
        return next(b for p, _, b in self.parts if p == ELEMENTWISE)

    @property
    def wall(self) -> str:
        """Compute-bound once every kind of weight product is (attention and the elementwise
        kernels aside: at decode they are memory-bound at any batch but MLA's)."""
        products = [(m, b) for p, m, b in self.parts if p in (PRODUCT, ROUTED)]
        return COMPUTE_BOUND if all(m >= b for m, b in products) else MEMORY_BOUND


def decode_in_order_on(a: Accelerator, c: Config, batch: float = 1, context_tokens: float = 0.0,
                       weight_precision: str = "BF16", kv_precision: str = "BF16", math_precision: str = "BF16",
                       activation_precision: str = "BF16", attention_precision: str = WIDE) -> InOrderStep:
    """A decode step on ``a`` counted one kind of kernel after another (``InOrderStep``). Its time
    is never shorter than ``decode_on``'s single max() and never longer than all its math time and
    memory time together; the two counts agree while every part is memory-bound."""
    B = positive("batch", batch)
    L = non_negative("context_tokens", context_tokens)
    check_scheme(weight_precision, math_precision)
    bw = a.bandwidth_bytes_per_s
    act = activation_bytes_by_part(c, "decode", activation_precision)
    formats = component_formats(weight_precision)
    flops = product_flops_by_precision(c, weight_precision, math_precision)
    read = weights_read_per_step(c, B)
    experts = []
    if c.is_moe:  # the routed experts apart: each product has only the rows of the tokens routed to it
        one, touched = routed_experts_read(c, c.num_experts_per_tok), routed_experts_read(c, experts_touched_per_layer(c, B))
        routed = {WIDE: 2.0 * one.vectors}
        at = product_math(formats[EXPERTS], math_precision)
        routed[at] = routed.get(at, 0.0) + 2.0 * one.experts
        for p, f in routed.items():
            flops[p] -= f
        read = read + touched.scaled(-1.0)
        experts = [(ROUTED, B * _seconds(routed, a), (weights_bytes(touched, weight_precision) + B * act[ROUTED]) / bw)]
    attention = {_math(attention_precision, "attention_precision"): attention_flops_per_token(c, L)}
    cache = kv_bytes_per_token(c, kv_precision) * cached_tokens(c, L)
    parts = [(PRODUCT, B * _seconds(flops, a), (weights_bytes(read, weight_precision) + B * act[PRODUCT]) / bw),
             *experts,
             (ATTENTION, B * _seconds(attention, a), B * (cache + act[ATTENTION]) / bw),
             (ELEMENTWISE, 0.0, B * act[ELEMENTWISE] / bw)]
    return InOrderStep(B, tuple(parts))


def knee_in_order_on(a: Accelerator, c: Config, context_tokens: float = 0.0, weight_precision: str = "BF16",
                     kv_precision: str = "BF16", math_precision: str = "BF16", activation_precision: str = "BF16",
                     attention_precision: str = WIDE) -> float:
    """The batch from which every kind of weight product of a decode step is compute-bound,
    counted one kind after another (``decode_in_order_on``); ``math.inf`` when some never is."""
    def memory_bound(B: float) -> bool:
        return decode_in_order_on(a, c, B, context_tokens, weight_precision, kv_precision, math_precision,
                                  activation_precision, attention_precision).wall == MEMORY_BOUND

    return _first_crossing(memory_bound)


def knee_weights_only_on(a: Accelerator, c: Config, weight_precision: str = "BF16",
                         math_precision: str = "BF16") -> float:
    """The knee counting the weights alone, no context and no activations: the batch at which
    B F / P reaches W / BW, that is (P / BW) (W / F) for a dense model. Narrowing the weights and the
    math by the same factor leaves it where it was; ``knee_on`` puts the sequences' bytes back."""
    p = decode_math_rate(a, c, weight_precision, math_precision)
    f = decode_flops_per_token(c)

    def memory_bound(B: float) -> bool:
        return B * f / p < weight_bytes_read_per_step(c, weight_precision, B) / a.bandwidth_bytes_per_s

    return _first_crossing(memory_bound)


def knee_in_order_weights_only_on(a: Accelerator, c: Config, weight_precision: str = "BF16",
                                  math_precision: str = "BF16") -> float:
    """The knee counted in order with the activations left out, no context: the batch from which
    every kind of weight product (the dense products and, in an MoE model, the routed experts, each
    with only its own tokens' rows) does math at least as long as it takes to read its own weights,

        B x F_i / P_i >= W_i(B) / BW   for each kind i.

    It is ``decode_in_order_on`` with every hand-off between kernels kept on chip (its activation
    bytes, B x A_i / BW, taken out of each part's memory time): the low end of
    ``knee_in_order_on``, as ``knee_weights_only_on`` is the low end of ``knee_on``.
    ``math.inf`` when some kind never is."""
    check_scheme(weight_precision, math_precision)
    bw = a.bandwidth_bytes_per_s
    act = activation_bytes_by_part(c, "decode")

    def memory_bound(B: float) -> bool:
        step = decode_in_order_on(a, c, B, 0.0, weight_precision, "BF16", math_precision)
        return any(m < b - B * act[p] / bw for p, m, b in step.parts if p in (PRODUCT, ROUTED))

    return _first_crossing(memory_bound)
