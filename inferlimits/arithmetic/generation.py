"""Decode and prefill: the ceilings on tokens per second, time to first token, and the regime a
measured rate puts you in.

Notation (the book's): B batch (sequences decoded together), N the weights one token multiplies
(``models.multiplied_params_per_token``), W weight bytes a step reads, K KV-cache bytes per token
per sequence, L tokens in each sequence's cache, A activation bytes per token
(``activations.activation_bytes_per_token``), BW bandwidth (bytes/s), P peak math rate (FLOP/s),
F FLOPs per generated token.

One convention throughout: a step is charged for what it does. A token multiplies N weights (all
but the input embedding table, of which it copies one row), so F = 2N plus attention, and the
weights a step reads are those N weights' bytes (for a mixture of experts, the experts its tokens
are routed to). The token's embedding row travels with the activations.

The functions of numbers (``memory_ceiling_tokens_per_s``, ...) state each formula once. The
functions of a model (``weight_bytes_read_per_step``, ``decode_point``, ``prefill_point``,
``decode_knee_batch``, ``prefill_crossover_tokens``) fill in every term from its config, and are
what the chapters, the figures and the index card use for a ceiling.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

from inferlimits.arithmetic.activations import PRODUCT, Kernel, activation_bytes_per_token, outer_kernels
from inferlimits.arithmetic.kvcache import sequence_bytes_per_step
from inferlimits.data.models import (Config, Weights, _attention_weights, cached_tokens, embedding_params,
                                     kv_bytes_per_token, multiplied_params_per_token, multiplied_weights, weights_bytes,
                                     weights_touching)
from inferlimits.arithmetic.roofline import COMPUTE_BOUND, MEMORY_BOUND, step_time_s
from inferlimits.data.units import bytes_per_element, fraction, non_negative, positive, whole

#: Below half the lower ceiling the book says only where the rate is: the cause (host overhead, or
#: kernels that reach neither wall) takes a profile to tell.
OVERHEAD_BOUND = "far below both ceilings"


# ---- FLOPs ----------------------------------------------------------------------------------

@cache
def _multiplied(c: Config) -> int:
    """``multiplied_params_per_token``, remembered per config (figures call it for every point)."""
    return multiplied_params_per_token(c)


def _attention_flop_coefficient(c: Config) -> float:
    """a = layers x heads x (d_qk + d_v): attention's FLOPs per (query, key) pair are 2a, half for
    the score q.k and half for weighting the value (the expanded form, used for prefill)."""
    return float(c.num_hidden_layers * c.num_attention_heads * (c.head_dim_qk + c.head_dim_v))


def _decode_attention_coefficient(c: Config) -> float:
    """Multiply-adds per cached token in decode, over all layers. Standard and grouped-query
    attention: layers x heads x (d_qk + d_v). MLA as it is served (absorbed): every head scores
    and weights the cached latent directly, layers x heads x (2 x kv_lora_rank + rope dim)."""
    if c.uses_mla:
        return float(c.num_hidden_layers * c.num_attention_heads * (2 * c.kv_lora_rank + c.qk_rope_head_dim))
    return _attention_flop_coefficient(c)


def attention_flops_per_token(c: Config, context_tokens: float) -> float:
    """Attention's own math for one new token that looks back over L cached tokens:
    2 x layers x heads x (d_qk + d_v) x L (scores q.k, then the weighted sum of values); for MLA in
    its absorbed form, 2 x layers x heads x (2 x kv_lora_rank + rope dim) x L."""
    L = cached_tokens(c, context_tokens)
    return 2.0 * _decode_attention_coefficient(c) * L


def decode_flops_per_token(c: Config, context_tokens: float = 0.0) -> float:
    """F = 2N (a multiply and an add per weight the token multiplies) + attention over the context."""
    return 2.0 * _multiplied(c) + attention_flops_per_token(c, context_tokens)


def _causal_pairs(prompt_tokens: float, window: float | None) -> float:
    """(query, key) pairs of causal attention over S tokens, where token i sees the last
    min(i, W) tokens: S (S + 1) / 2 without a window, W (W + 1) / 2 + (S - W) W once S > W."""
    S = prompt_tokens
    if window is None or S <= window:
        return S * (S + 1) / 2
    return window * (window + 1) / 2 + (S - window) * window


def prefill_attention_flops(c: Config, prompt_tokens: float) -> float:
    """Causal attention over a prompt of S tokens, where token i looks at i tokens:
    layers x heads x (d_qk + d_v) x S x (S + 1), the term that grows with S squared (MLA prefills
    in the expanded form). A layer with a sliding window W looks at most W tokens back, so its
    term stops growing with S squared once S > W (Mistral-7B-v0.1, every other layer of gpt-oss)."""
    S = positive("prompt_tokens", prompt_tokens)
    per_layer = 2.0 * _attention_flop_coefficient(c) / c.num_hidden_layers
    windowed = c.windowed_layers
    return per_layer * (windowed * _causal_pairs(S, c.sliding_window)
                        + (c.num_hidden_layers - windowed) * _causal_pairs(S, None))


def _head(c: Config) -> int:
    """H, the weights of the output head (vocab x hidden): a prefill multiplies them only for the
    last prompt position, the one whose logits give the first new token."""
    return embedding_params(c)


def prefill_flops(c: Config, prompt_tokens: float) -> float:
    """FLOPs to read a prompt of S tokens: 2 (N - H) x S for the matrix products of the layers,
    2H for the output head, which only the last position needs, plus causal attention,
    layers x heads x (d_qk + d_v) x S x (S + 1)."""
    S = positive("prompt_tokens", prompt_tokens)
    n, h = _multiplied(c), _head(c)
    return 2.0 * (n - h) * S + 2.0 * h + prefill_attention_flops(c, S)


def prefill_attention_share(c: Config, prompt_tokens: float) -> float:
    """Attention's share of the prefill FLOPs for a prompt of S tokens:
    a S (S + 1) / (2 (N - H) S + 2H + a S (S + 1)), with a = layers x heads x (d_qk + d_v);
    for long prompts about a(S + 1) / (2(N - H) + a(S + 1))."""
    return prefill_attention_flops(c, prompt_tokens) / prefill_flops(c, prompt_tokens)


def _positive_root(a: float, b: float, c: float) -> float:
    """The positive root of a x^2 + b x - c = 0 (a, c > 0), in a form without cancellation."""
    disc = math.sqrt(b * b + 4.0 * a * c)
    return 2.0 * c / (b + disc) if b >= 0 else (disc - b) / (2.0 * a)


def prompt_tokens_at_attention_share(c: Config, share: float) -> float:
    """The prompt length S at which attention's share of prefill FLOPs reaches ``share`` (f):
    a S (S + 1) = f (2 (N - H) S + 2H + a S (S + 1)), the quadratic
    (1 - f) a S^2 + ((1 - f) a - 2 f (N - H)) S - 2 f H = 0; for long prompts nearly
    S = 2 (N - H) f / (a (1 - f)) - 1.

    With sliding windows the share no longer follows the quadratic (a windowed layer's attention
    grows only in proportion to the prompt beyond its window, so the share levels off): S is then
    found numerically, and is ``math.inf`` where the share never reaches f.

    Raises ValueError when f is 1 or more (never reached) or below the share a one-token prompt
    already has."""
    f = fraction("share", share)
    if f >= 1:
        raise ValueError(f"share must be below 1: attention never does all of the work; got {share!r}")
    if c.windowed_layers:
        S = _first_crossing(lambda s: prefill_attention_share(c, s) < f)
    else:
        a = _attention_flop_coefficient(c)
        n, h = _multiplied(c), _head(c)
        S = _positive_root((1.0 - f) * a, (1.0 - f) * a - 2.0 * f * (n - h), 2.0 * f * h)
    if S < 1:
        raise ValueError(f"share {share!r} is below attention's share of a one-token prompt "
                         f"({prefill_attention_share(c, 1):.3g})")
    return S


# ---- the weights a step reads ------------------------------------------------------------------

def expected_experts_touched(n_experts: float, experts_per_token: float, tokens: float) -> float:
    """The distinct experts that T tokens are routed to in one MoE layer, on average, if each token
    picks its k of the E experts uniformly at random and independently of the others:

        E x (1 - (1 - k / E)^T).

    One token touches k; many touch nearly all E. Real routers are skewed (some experts are
    popular), which makes tokens share experts more often: fewer distinct experts, fewer bytes."""
    E = positive("n_experts", n_experts)
    k = positive("experts_per_token", experts_per_token)
    T = positive("tokens", tokens)
    if k > E:
        raise ValueError(f"experts_per_token ({k:g}) cannot exceed n_experts ({E:g})")
    return E * -math.expm1(T * math.log1p(-k / E)) if k < E else E


def experts_touched_per_layer(c: Config, tokens: float) -> float:
    """D, the routed experts a step over ``tokens`` tokens reads in each MoE layer, under uniform
    routing (``expected_experts_touched``); a ValueError for a dense model."""
    if not c.is_moe:
        raise ValueError("c must be a mixture-of-experts config; a dense model has no experts to touch")
    return expected_experts_touched(c.routed_experts, c.num_experts_per_tok, tokens)


def half_experts_batch(c: Config) -> int:
    """The smallest batch whose tokens touch, on average, at least half of an MoE layer's routed
    experts (``experts_touched_per_layer``): E (1 - (1 - k/E)^B) >= E / 2, so
    B = ceil(ln 2 / -ln(1 - k/E))."""
    if not c.is_moe:
        raise ValueError("c must be a mixture-of-experts config; a dense model has no experts to touch")
    E, k = c.routed_experts, c.num_experts_per_tok
    B = max(1, math.ceil(math.log(2) / -math.log1p(-k / E))) if k < E else 1
    while experts_touched_per_layer(c, B) < E / 2:  # guard the ceiling against rounding
        B += 1
    return B


def weights_read_per_step(c: Config, tokens: float = 1) -> Weights:
    """The weights one forward pass over ``tokens`` tokens reads, by component: every weight a
    token multiplies, each once per step; in an MoE layer the router, the shared experts and the
    D routed experts its tokens touch (``experts_touched_per_layer``), not all of them."""
    T = positive("tokens", tokens)
    return weights_touching(c, experts_touched_per_layer(c, T)) if c.is_moe else multiplied_weights(c)


def weight_bytes_read_per_step(c: Config, weight_precision: str = "BF16", tokens: float = 1) -> float:
    """W, the weight bytes one forward pass over ``tokens`` tokens (a decode step of B sequences,
    or a prefill of S tokens) reads: every weight a token multiplies, each once per step, so
    N x bytes per weight for a dense model, whatever the number of tokens. In an MoE layer the
    step reads the router, the shared experts and the routed experts its tokens touch
    (``expected_experts_touched``), not all of them: W grows with the tokens until every expert is
    read. The output head, the router and the vectors stay in BF16 when the matrices are
    quantized (``models.component_formats``)."""
    return weights_bytes(weights_read_per_step(c, tokens), weight_precision)


# ---- decode ceilings: the formulas ----------------------------------------------------------

def decode_bytes_per_step(weight_bytes: float, batch: float = 1, kv_bytes_per_token: float = 0.0,
                          context_tokens: float = 0.0, activation_bytes_per_token: float = 0.0) -> float:
    """Bytes one decode step moves: the weights once, shared by the batch, plus every sequence's
    own cache and activations, W + B x (K x L + A)."""
    return (positive("weight_bytes", weight_bytes)
            + positive("batch", batch) * sequence_bytes_per_step(kv_bytes_per_token, context_tokens,
                                                                 activation_bytes_per_token))


def memory_ceiling_tokens_per_s(bandwidth_bytes_per_s: float, weight_bytes: float, batch: float = 1,
                                kv_bytes_per_token: float = 0.0, context_tokens: float = 0.0,
                                efficiency: float = 1.0, activation_bytes_per_token: float = 0.0) -> float:
    """Aggregate decode tokens/s that memory allows: B x BW / (W + B x (K x L + A)).

    With B = 1, L = 0 and A = 0 this is BW / W. ``efficiency`` is the fraction of peak bandwidth a
    real kernel sustains (1 = the datasheet figure)."""
    B = positive("batch", batch)
    bw = positive("bandwidth_bytes_per_s", bandwidth_bytes_per_s) * fraction("efficiency", efficiency)
    moved = decode_bytes_per_step(weight_bytes, B, kv_bytes_per_token, context_tokens, activation_bytes_per_token)
    return B * bw / moved


def math_ceiling_tokens_per_s(peak_flop_per_s: float, flops_per_token: float) -> float:
    """Aggregate tokens/s that math allows: P / F. The batch is not in it: a larger batch puts
    more of the chip's fixed FLOP/s to work, and the FLOP/s themselves stay what they were."""
    return positive("peak_flop_per_s", peak_flop_per_s) / positive("flops_per_token", flops_per_token)


def decode_step_time_s(peak_flop_per_s: float, bandwidth_bytes_per_s: float, weight_bytes: float,
                       flops_per_token: float, batch: float = 1, kv_bytes_per_token: float = 0.0,
                       context_tokens: float = 0.0, activation_bytes_per_token: float = 0.0) -> float:
    """One decode step for B sequences: max(B x F / P, (W + B x (K x L + A)) / BW)."""
    B = positive("batch", batch)
    moved = decode_bytes_per_step(weight_bytes, B, kv_bytes_per_token, context_tokens, activation_bytes_per_token)
    return step_time_s(B * positive("flops_per_token", flops_per_token), moved, peak_flop_per_s, bandwidth_bytes_per_s)


def decode_intensity_flop_per_byte(weight_bytes: float, flops_per_token: float, batch: float = 1,
                                   kv_bytes_per_token: float = 0.0, context_tokens: float = 0.0,
                                   activation_bytes_per_token: float = 0.0) -> float:
    """Decode's arithmetic intensity: B x F / (W + B x (K x L + A)) FLOP per byte."""
    B = positive("batch", batch)
    moved = decode_bytes_per_step(weight_bytes, B, kv_bytes_per_token, context_tokens, activation_bytes_per_token)
    return B * positive("flops_per_token", flops_per_token) / moved


# ---- prefill: the formulas --------------------------------------------------------------------

def prefill_bytes_moved(weight_bytes: float, kv_bytes_per_token: float, prompt_tokens: float,
                        activation_bytes_per_token: float) -> float:
    """Bytes a one-pass prefill moves: the weights once, shared by every prompt token, the S tokens
    of cache it writes, and every prompt token's activations, W + S x (K + A)."""
    return (positive("weight_bytes", weight_bytes)
            + positive("prompt_tokens", prompt_tokens) * (positive("kv_bytes_per_token", kv_bytes_per_token)
                                                          + non_negative("activation_bytes_per_token",
                                                                         activation_bytes_per_token)))


def prefill_intensity_flop_per_byte(c: Config, prompt_tokens: float, weight_bytes: float,
                                    kv_bytes_per_token: float, activation_bytes_per_token: float) -> float:
    """Prefill's arithmetic intensity: prefill FLOPs / (W + S x (K + A)). With b bytes per weight
    and a short prompt this is about 2N x S / (N x b) = 2S / b; for a long one it levels off
    towards 2N / (K + A), the activations' bytes growing as fast as the work."""
    return prefill_flops(c, prompt_tokens) / prefill_bytes_moved(weight_bytes, kv_bytes_per_token, prompt_tokens,
                                                                activation_bytes_per_token)


def prefill_crossover_prompt_tokens(c: Config, peak_flop_per_s: float, bandwidth_bytes_per_s: float,
                                    weight_bytes: float, kv_bytes_per_token: float,
                                    activation_bytes_per_token: float) -> float:
    """The prompt length S* at which prefill turns compute-bound: its intensity reaches the
    balance point R = P / BW, that is prefill FLOPs / P = (W + S x (K + A)) / BW. With
    a = layers x heads x (d_qk + d_v) and H the output head's weights (multiplied once) this is
    the quadratic

        a S^2 + beta S - (R W - 2H) = 0,   beta = 2 (N - H) + a - R (K + A),

    whose positive root is taken in a form without cancellation. For short prompts and small A,
    S* is about R W / (2 (N - H)), that is about the balance point itself at BF16 (R x b / 2), a little
    more because the head's weights are read but multiplied only once. The weight bytes W must not
    depend on S (a dense model) and every layer attends to the whole prompt (no sliding window);
    ``prefill_crossover_tokens`` handles the rest."""
    R = (positive("peak_flop_per_s", peak_flop_per_s)
         / positive("bandwidth_bytes_per_s", bandwidth_bytes_per_s))
    W = positive("weight_bytes", weight_bytes)
    per_token = (positive("kv_bytes_per_token", kv_bytes_per_token)
                 + non_negative("activation_bytes_per_token", activation_bytes_per_token))
    a = _attention_flop_coefficient(c)
    n, h = _multiplied(c), _head(c)
    room = R * W - 2.0 * h
    if room <= 0:  # even the shortest prompt does more math per byte than the ridge
        return 1.0
    # a root below one token means the same: a prompt has at least one, and it is compute-bound
    return max(1.0, _positive_root(a, 2.0 * (n - h) + a - R * per_token, room))


def _dense_product(kernel: Kernel) -> tuple[int, int]:
    """A dense weight product's weight count (inputs x outputs) and activation numbers per row."""
    if kernel.kind != PRODUCT:
        raise ValueError(f"kernel must be a weight product (kind {PRODUCT!r}); got {kernel.name!r} of kind "
                         f"{kernel.kind!r}")
    return kernel.reads * kernel.writes, kernel.numbers


def product_kernel_intensity_limit(kernel: Kernel, activation_precision: str = "BF16") -> float:
    """The intensity one dense weight product levels off at for many rows, on its own:
    2 x inputs x outputs FLOP per row over (inputs + outputs) activation bytes per row. It counts
    a dense layer's product (inputs x outputs weights), not an expert's share of an MoE layer."""
    weights, numbers = _dense_product(kernel)
    return 2.0 * weights / (numbers * bytes_per_element(activation_precision, "activation_precision"))


def product_kernel_crossover_rows(kernel: Kernel, balance_flop_per_byte: float, weight_precision: str = "BF16",
                                  activation_precision: str = "BF16") -> float:
    """The rows S at which one dense weight product turns compute-bound when run as its own kernel:
    2 w S / (w b_w + S n b_a) = R, so S = R w b_w / (2 w - R n b_a), with w its weights, n the
    activation numbers it reads and writes per row. ``math.inf`` where the product's limit
    (``product_kernel_intensity_limit``) does not reach R."""
    R = positive("balance_flop_per_byte", balance_flop_per_byte)
    weights, numbers = _dense_product(kernel)
    room = 2.0 * weights - R * numbers * bytes_per_element(activation_precision, "activation_precision")
    if room <= 0:
        return math.inf
    return R * weights * bytes_per_element(weight_precision, "weight_precision") / room


def time_to_first_token_s(c: Config, prompt_tokens: float, peak_flop_per_s: float,
                          bandwidth_bytes_per_s: float, weight_bytes: float,
                          kv_bytes_per_token: float, activation_bytes_per_token: float) -> float:
    """Ideal time to first token: max(prefill FLOPs / P, (W + S x (K + A)) / BW), the prompt read
    in one pass that fetches the weights once, writes S tokens of cache and moves every prompt
    token's activations."""
    S = positive("prompt_tokens", prompt_tokens)
    moved = prefill_bytes_moved(weight_bytes, kv_bytes_per_token, S, activation_bytes_per_token)
    return step_time_s(prefill_flops(c, S), moved, peak_flop_per_s, bandwidth_bytes_per_s)


# ---- one step of a model, every term filled in ----------------------------------------------------

@dataclass(frozen=True)
class DecodePoint:
    """One decode step of B sequences with L tokens of context: its bytes by kind, its FLOPs, and
    the two ceilings on aggregate tokens/s (``efficiency`` applied to the bandwidth)."""

    batch: float
    context_tokens: float
    weight_bytes: float      # W, the weights the step reads
    cache_bytes: float       # B x K x L
    activation_bytes: float  # B x A
    flops_per_token: float   # F
    memory_ceiling: float    # B x BW / (W + B x (K x L + A))
    math_ceiling: float      # P / F

    @property
    def bytes(self) -> float:
        return self.weight_bytes + self.cache_bytes + self.activation_bytes

    @property
    def flops(self) -> float:
        return self.batch * self.flops_per_token

    @property
    def intensity(self) -> float:
        return self.flops / self.bytes

    @property
    def ceiling(self) -> float:
        """The lower of the two ceilings, aggregate tokens/s."""
        return min(self.memory_ceiling, self.math_ceiling)

    @property
    def per_user(self) -> float:
        """Each sequence's own ceiling, one token per step."""
        return self.ceiling / self.batch

    @property
    def wall(self) -> str:
        return MEMORY_BOUND if self.memory_ceiling <= self.math_ceiling else COMPUTE_BOUND


def decode_point(c: Config, peak_flop_per_s: float, bandwidth_bytes_per_s: float, batch: float = 1,
                 context_tokens: float = 0.0, weight_precision: str = "BF16", kv_precision: str = "BF16",
                 activation_precision: str = "BF16", efficiency: float = 1.0) -> DecodePoint:
    """A decode step of ``batch`` sequences of ``context_tokens`` tokens, every term from the config:
    W = ``weight_bytes_read_per_step`` (B tokens), K x L with L capped by a sliding window, A in
    decode, and F with attention over L. Memory ceiling B x e x BW / (W + B x (K x L + A)), math
    ceiling P / F."""
    from inferlimits.data.models import kv_bytes_per_token  # noqa: PLC0415 (models imports nothing from here)

    B = positive("batch", batch)
    kept = cached_tokens(c, context_tokens)
    w = weight_bytes_read_per_step(c, weight_precision, B)
    k = kv_bytes_per_token(c, kv_precision)
    a = activation_bytes_per_token(c, "decode", activation_precision)
    f = decode_flops_per_token(c, context_tokens)
    return DecodePoint(B, non_negative("context_tokens", context_tokens), w, B * k * kept, B * a, f,
                       memory_ceiling_tokens_per_s(bandwidth_bytes_per_s, w, B, k, kept, efficiency, a),
                       math_ceiling_tokens_per_s(peak_flop_per_s, f))


#: the parts of one decode step's bytes, in the order ``decode_step_bytes_by_part`` gives them
STEP_PARTS = ("embedding rows", "attention projections", "MLP", "norms and biases", "LM head", "KV cache",
              "other activations")


def decode_step_bytes_by_part(c: Config, batch: float = 1, context_tokens: float = 0.0,
                              weight_precision: str = "BF16", kv_precision: str = "BF16",
                              activation_precision: str = "BF16") -> dict[str, float]:
    """Where the bytes of one decode step go: W + B x (K x L + A), split into ``STEP_PARTS``.

    W, the weights the step reads (``weights_read_per_step``), splits by what they are: the
    attention projections (layers x one attention block's matrices), the MLP (the other matrices,
    with the experts and the router an MoE step touches), the norm vectors and biases, and the LM
    head (the output head, vocab x hidden; the tied table where there is one), each at its format
    (``models.component_formats``). B x K x L is the cache (L capped by a sliding window), and
    B x A the activations, of which the embedding rows, the row each token copies out of the
    input table (2 x hidden numbers read and written), are shown apart. The values, in bytes,
    sum to ``decode_point(...).bytes``."""
    B = positive("batch", batch)
    kept = cached_tokens(c, context_tokens)
    read = weights_read_per_step(c, B)
    attention = c.num_hidden_layers * _attention_weights(c).matrices
    weights = {"attention projections": Weights(matrices=attention),
               "MLP": Weights(matrices=read.matrices - attention, experts=read.experts, router=read.router),
               "norms and biases": Weights(vectors=read.vectors),
               "LM head": Weights(vocabulary=read.vocabulary)}
    a = activation_bytes_per_token(c, "decode", activation_precision)
    lookup = next(k for k in outer_kernels(c, "decode") if k.name == "embedding lookup")
    row = lookup.numbers * bytes_per_element(activation_precision, "activation_precision")
    parts = {"embedding rows": B * row,
             **{name: weights_bytes(w, weight_precision) for name, w in weights.items()},
             "KV cache": B * kv_bytes_per_token(c, kv_precision) * kept,
             "other activations": B * (a - row)}
    return {name: parts[name] for name in STEP_PARTS}


@dataclass(frozen=True)
class PrefillPoint:
    """A prefill of S prompt tokens in one pass: its FLOPs, its bytes by kind, and its ideal time."""

    prompt_tokens: float
    flops: float
    attention_flops: float
    weight_bytes: float      # W, the weights the pass reads
    cache_bytes: float       # S x K, the cache it writes
    activation_bytes: float  # S x A
    time_s: float            # max(F / P, bytes / BW), the ideal time to first token
    wall: str

    @property
    def bytes(self) -> float:
        return self.weight_bytes + self.cache_bytes + self.activation_bytes

    @property
    def intensity(self) -> float:
        return self.flops / self.bytes


def prefill_point(c: Config, peak_flop_per_s: float, bandwidth_bytes_per_s: float, prompt_tokens: float,
                  weight_precision: str = "BF16", kv_precision: str = "BF16",
                  activation_precision: str = "BF16") -> PrefillPoint:
    """A one-pass prefill of ``prompt_tokens`` tokens, every term from the config."""
    from inferlimits.data.models import kv_bytes_per_token  # noqa: PLC0415

    S = positive("prompt_tokens", prompt_tokens)
    w = weight_bytes_read_per_step(c, weight_precision, S)
    k = kv_bytes_per_token(c, kv_precision)
    a = activation_bytes_per_token(c, "prefill", activation_precision)
    flops = prefill_flops(c, S)
    t = time_to_first_token_s(c, S, peak_flop_per_s, bandwidth_bytes_per_s, w, k, a)
    wall = COMPUTE_BOUND if flops / peak_flop_per_s >= (w + S * (k + a)) / bandwidth_bytes_per_s else MEMORY_BOUND
    return PrefillPoint(S, flops, prefill_attention_flops(c, S), w, S * k, S * a, t, wall)


def prefill_chunk_point(c: Config, peak_flop_per_s: float, bandwidth_bytes_per_s: float, chunk_tokens: float,
                        cached_before: float = 0.0, weight_precision: str = "BF16", kv_precision: str = "BF16",
                        activation_precision: str = "BF16") -> PrefillPoint:
    """A pass that reads C new prompt tokens after P tokens already in the cache (a chunk of a long
    prompt, or the new part of a prompt whose prefix the server kept), every term from the config:

    F = 2 (N - H) C + 2H + [a_pairs(P + C) - a_pairs(P)], the new tokens' causal attention over
    all P + C tokens (``prefill_attention_flops`` of the longer prompt less that of the prefix);
    M = W + K P' + C (K + A), the weights once, the prefix's cache read (P' = ``cached_tokens``,
    capped by a sliding window), and the new tokens' cache and activations; time max(F / P, M / BW).
    With P = 0 it is ``prefill_point``. It counts the output head in every such pass, as a pass
    that ends a prompt needs it: a chunk that an engine does not sample from saves 2H FLOPs and
    the head's bytes. ``cache_bytes`` of the result holds both the read and the written cache."""
    from inferlimits.data.models import kv_bytes_per_token  # noqa: PLC0415

    C = positive("chunk_tokens", chunk_tokens)
    prior = non_negative("cached_before", cached_before)
    w = weight_bytes_read_per_step(c, weight_precision, C)
    k = kv_bytes_per_token(c, kv_precision)
    a = activation_bytes_per_token(c, "prefill", activation_precision)
    attention = prefill_attention_flops(c, prior + C) - (prefill_attention_flops(c, prior) if prior else 0.0)
    flops = 2.0 * (_multiplied(c) - _head(c)) * C + 2.0 * _head(c) + attention
    cache = k * (cached_tokens(c, prior) + C)
    moved = w + cache + C * a
    t = step_time_s(flops, moved, peak_flop_per_s, bandwidth_bytes_per_s)
    wall = COMPUTE_BOUND if flops / peak_flop_per_s >= moved / bandwidth_bytes_per_s else MEMORY_BOUND
    return PrefillPoint(C, flops, attention, w, cache, C * a, t, wall)


def new_tokens_where_prefix_pays(balance_flop_per_byte: float, kv_bytes_per_token: float,
                                 attention_coefficient: float) -> float:
    """The fewest new tokens C past a cached prefix for which the prefix's cache pays for itself in
    math: each of the P cached tokens is read once (K bytes) and attended to by all C new tokens
    (2a operations each, with a the causal coefficient of ``prefill_attention_flops``, a S (S + 1)
    for S tokens), so it adds 2aC operations against R K bytes' worth of time, and the pass of
    ``prefill_chunk_point`` stays compute-bound for every P once an ordinary prompt of C tokens
    would be and C >= R K / (2a)."""
    return (positive("balance_flop_per_byte", balance_flop_per_byte) * positive("kv_bytes_per_token", kv_bytes_per_token)
            / (2.0 * positive("attention_coefficient", attention_coefficient)))


@dataclass(frozen=True)
class RequestTimeline:
    """One request alone on the device: its prefill, then its decode steps one after another."""

    prompt_tokens: float
    prefill_s: float                    # the one-pass prefill; its last position gives token 1
    decode_steps_s: tuple[float, ...]   # step j (j = 1 .. n - 1) gives token j + 1

    @property
    def output_tokens(self) -> int:
        return len(self.decode_steps_s) + 1

    @property
    def time_to_first_token_s(self) -> float:
        return self.prefill_s

    @property
    def end_to_end_s(self) -> float:
        return self.prefill_s + sum(self.decode_steps_s)

    @property
    def time_per_output_token_s(self) -> float:
        """TPOT = (end-to-end - TTFT) / (n - 1), the mean decode step."""
        return (self.end_to_end_s - self.time_to_first_token_s) / len(self.decode_steps_s)

    @property
    def token_times_s(self) -> tuple[float, ...]:
        """When each of the n output tokens appears, counted from the request's arrival."""
        times, t = [self.prefill_s], self.prefill_s
        for step in self.decode_steps_s:
            t += step
            times.append(t)
        return tuple(times)


def request_timeline(c: Config, peak_flop_per_s: float, bandwidth_bytes_per_s: float, prompt_tokens: float,
                     output_tokens: int, weight_precision: str = "BF16", kv_precision: str = "BF16",
                     activation_precision: str = "BF16") -> RequestTimeline:
    """One request of S prompt tokens and n output tokens, alone on the device (batch 1, no
    queueing, no network, no host time): the prefill (``prefill_point``), whose last position
    gives the first token, then n - 1 decode steps (``decode_point`` at batch 1), step j reading
    the cache of L_j = S + j - 1 tokens:

        TTFT = max(prefill FLOPs / P, (W + S x (K + A)) / BW),
        step j = max(F(L_j) / P, (W + K x L_j + A) / BW),
        TPOT = (step 1 + ... + step n-1) / (n - 1) = (end-to-end - TTFT) / (n - 1).

    Each step reads one token of cache more than the one before, K / BW seconds more while memory
    binds. ``output_tokens`` must be at least 2 (TPOT needs a decode step), and the request must
    fit the model's positions (``max_position_embeddings``) where the config gives them."""
    S = positive("prompt_tokens", prompt_tokens)
    n = whole("output_tokens", output_tokens, 2)
    if c.max_position_embeddings is not None and S + n - 1 > c.max_position_embeddings:
        raise ValueError(f"output_tokens ({n}) after {S:g} prompt tokens go beyond the model's "
                         f"{c.max_position_embeddings:,} positions")
    prefill = prefill_point(c, peak_flop_per_s, bandwidth_bytes_per_s, S, weight_precision, kv_precision,
                            activation_precision)
    steps = tuple(1.0 / decode_point(c, peak_flop_per_s, bandwidth_bytes_per_s, 1, S + j - 1, weight_precision,
                                     kv_precision, activation_precision).ceiling for j in range(1, n))
    return RequestTimeline(S, prefill.time_s, steps)


def _first_crossing(below, lo: float = 1.0, hi: float = 1e9) -> float:
    """The x in [lo, hi] (a batch or a prompt length) where ``below(x)`` turns False, by bisection
    on a log scale; ``math.inf`` when it never does. ``below`` must be True then False."""
    if below(hi):
        return math.inf
    if not below(lo):
        return lo
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if below(mid) else (lo, mid)
        if hi / lo < 1 + 1e-12:
            break
    return hi


def decode_knee_batch(c: Config, peak_flop_per_s: float, bandwidth_bytes_per_s: float, context_tokens: float = 0.0,
                      weight_precision: str = "BF16", kv_precision: str = "BF16",
                      activation_precision: str = "BF16") -> float:
    """The batch at which decode turns compute-bound: the memory ceiling reaches the math ceiling.
    For a dense model W is fixed and this is ``kvcache.batch_where_math_binds``; for an MoE model
    W grows with the batch (more experts touched), and the crossing is found numerically.
    ``math.inf`` when memory binds at every batch."""
    from inferlimits.arithmetic.kvcache import batch_where_math_binds  # noqa: PLC0415
    from inferlimits.data.models import kv_bytes_per_token  # noqa: PLC0415

    kept = cached_tokens(c, context_tokens)
    k = kv_bytes_per_token(c, kv_precision)
    a = activation_bytes_per_token(c, "decode", activation_precision)
    f = decode_flops_per_token(c, context_tokens)
    if not c.is_moe:
        return batch_where_math_binds(peak_flop_per_s, bandwidth_bytes_per_s, weight_bytes_read_per_step(
            c, weight_precision), f, k, kept, a)
    p, bw = positive("peak_flop_per_s", peak_flop_per_s), positive("bandwidth_bytes_per_s", bandwidth_bytes_per_s)

    def memory_bound(B: float) -> bool:
        w = weight_bytes_read_per_step(c, weight_precision, B)
        return memory_ceiling_tokens_per_s(bw, w, B, k, kept, 1.0, a) < math_ceiling_tokens_per_s(p, f)

    return _first_crossing(memory_bound)


def prefill_crossover_tokens(c: Config, peak_flop_per_s: float, bandwidth_bytes_per_s: float,
                             weight_precision: str = "BF16", kv_precision: str = "BF16",
                             activation_precision: str = "BF16") -> float:
    """The prompt length at which prefill turns compute-bound, every term from the config. For a
    dense model without sliding windows this is ``prefill_crossover_prompt_tokens``; an MoE model
    reads more experts the longer the prompt, and a windowed layer's attention stops growing with
    the square of the prompt, so for those the crossing is found numerically. ``math.inf`` when the activations'
    bytes keep prefill memory-bound at every length."""
    from inferlimits.data.models import kv_bytes_per_token  # noqa: PLC0415

    k = kv_bytes_per_token(c, kv_precision)
    a = activation_bytes_per_token(c, "prefill", activation_precision)
    p, bw = positive("peak_flop_per_s", peak_flop_per_s), positive("bandwidth_bytes_per_s", bandwidth_bytes_per_s)
    if not c.is_moe and not c.windowed_layers:
        return prefill_crossover_prompt_tokens(c, p, bw, weight_bytes_read_per_step(c, weight_precision), k, a)

    def memory_bound(S: float) -> bool:
        return prefill_point(c, p, bw, S, weight_precision, kv_precision, activation_precision).wall == MEMORY_BOUND

    return _first_crossing(memory_bound)


# ---- where a measurement sits ------------------------------------------------------------------

def regime(measured_tokens_per_s: float, memory_ceiling: float, math_ceiling: float,
           near: float = 0.5) -> str:
    """Name the regime of a measured rate: within a factor ``near`` of the lower ceiling it is
    bound by that wall (memory or compute); further below both, the two-resource model no longer
    describes the system, and only a profile can say whether the host or slow kernels hold it
    back (``OVERHEAD_BOUND``)."""
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
