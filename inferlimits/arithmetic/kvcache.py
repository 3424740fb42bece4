"""The KV cache: bytes for a batch and a context, and whether they fit beside the weights.

K is cache bytes per token per sequence (``models.kv_bytes_per_token``), L the tokens each
sequence keeps, B the batch, W the weight bytes (all stored weights, for capacity). Capacity is
the memory the device reports (``Accelerator.capacity_bytes``); of it, the book lets weights and
caches fill one usable share, named once in ``data/serving.toml`` (``usable_memory_fraction``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from inferlimits.data import datafiles
from inferlimits.data.units import fraction, non_negative, positive


@dataclass(frozen=True)
class UsableMemory:
    """The book's usable-memory rule: the share, what it covers, and where a share of this size
    is seen."""

    fraction: float
    what: str
    seen: str


@datafiles.cached
def usable_memory() -> UsableMemory:
    """The usable-memory rule of ``data/serving.toml``."""
    row = datafiles.load("serving.toml")["memory"]
    return UsableMemory(fraction("memory.usable_fraction", row["usable_fraction"]), row["what"], row["seen"])


@datafiles.cached
def paging_waste_fraction() -> float:
    """The most of a sequence's cache that paged allocation leaves unused (``data/serving.toml``,
    from the vLLM paper): the reason an engine's cache is about the model's own size, not a
    multiple of it."""
    row = datafiles.load("serving.toml")["kv_cache"]
    return fraction("kv_cache.paging_waste_percent", row["paging_waste_percent"] / 100)


def usable_memory_fraction() -> float:
    """The share of reported memory that weights and caches may fill (0.9: vLLM's default)."""
    return usable_memory().fraction


def _usable(usable_fraction: float | None) -> float:
    return usable_memory_fraction() if usable_fraction is None else fraction("usable_fraction", usable_fraction)


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
                                usable_fraction: float | None = None) -> float:
    """Bytes left for the cache once the weights are loaded: capacity x usable fraction - W
    (zero when the weights do not fit). ``usable_fraction`` None is the book's rule."""
    usable = positive("capacity_bytes", capacity_bytes) * _usable(usable_fraction)
    return max(0.0, usable - positive("weight_bytes", weight_bytes))


def usable_fraction_needed(capacity_bytes: float, weight_bytes: float, cache_bytes: float = 0.0) -> float:
    """The smallest usable share of a card's capacity C that holds the weights W and ``cache_bytes``
    of caches: (W + caches) / C, the share u at which u x C - W, the room left for caches, equals
    them. Above 1 where the card cannot hold them at all."""
    return ((positive("weight_bytes", weight_bytes) + non_negative("cache_bytes", cache_bytes))
            / positive("capacity_bytes", capacity_bytes))


@dataclass(frozen=True)
class Fit:
    """Whether weights and caches fit in the usable memory, and by how much they miss."""

    usable_bytes: float
    weight_bytes: float
    cache_bytes: float

    @property
    def needed_bytes(self) -> float:
        """W + B x K x L, what the setup must hold."""
        return self.weight_bytes + self.cache_bytes

    @property
    def fits(self) -> bool:
        return self.needed_bytes <= self.usable_bytes

    @property
    def missing_bytes(self) -> float:
        """How much more memory the setup needs (zero when it fits)."""
        return max(0.0, self.needed_bytes - self.usable_bytes)


def fit(capacity_bytes: float, weight_bytes: float, kv_bytes_per_token: float = 0.0, batch: float = 1,
        context_tokens: float = 0.0, usable_fraction: float | None = None) -> Fit:
    """Fit first: do the weights W and the caches of B sequences of L tokens, W + B x K x L, fit in
    capacity x usable fraction? ``usable_fraction`` None is the book's rule."""
    usable = positive("capacity_bytes", capacity_bytes) * _usable(usable_fraction)
    cache = (positive("batch", batch) * non_negative("kv_bytes_per_token", kv_bytes_per_token)
             * non_negative("context_tokens", context_tokens))
    return Fit(usable, positive("weight_bytes", weight_bytes), cache)


def max_sequences(capacity_bytes: float, weight_bytes: float, kv_bytes_per_token: float,
                  context_tokens: float, usable_fraction: float | None = None) -> int:
    """Whole sequences of ``context_tokens`` whose caches fit beside the weights:
    floor((capacity x usable fraction - W) / (K x L))."""
    left = memory_left_for_cache_bytes(capacity_bytes, weight_bytes, usable_fraction)
    per_sequence = positive("kv_bytes_per_token", kv_bytes_per_token) * positive("context_tokens", context_tokens)
    return math.floor(left / per_sequence)


# ---- the cache in the memory ceiling ------------------------------------------------------------

def sequence_bytes_per_step(kv_bytes_per_token: float, context_tokens: float,
                            activation_bytes_per_token: float) -> float:
    """K x L + A: the bytes one sequence brings to a decode step for itself, its cache read and
    its activations. The weights, W, are shared by the batch and counted apart."""
    return (non_negative("kv_bytes_per_token", kv_bytes_per_token) * non_negative("context_tokens", context_tokens)
            + non_negative("activation_bytes_per_token", activation_bytes_per_token))


def cache_limited_tokens_per_s(bandwidth_bytes_per_s: float, kv_bytes_per_token: float,
                               context_tokens: float, activation_bytes_per_token: float,
                               efficiency: float = 1.0) -> float:
    """The large-batch limit of the memory ceiling B x BW / (W + B x (K x L + A)): BW / (K x L + A).

    With many sequences every generated token costs its own cache read (and its own activation
    traffic), and the shared weights no longer matter. ``efficiency`` is the fraction of peak
    bandwidth sustained."""
    bw = positive("bandwidth_bytes_per_s", bandwidth_bytes_per_s) * fraction("efficiency", efficiency)
    per_sequence = sequence_bytes_per_step(positive("kv_bytes_per_token", kv_bytes_per_token), context_tokens,
                                           activation_bytes_per_token)
    if per_sequence == 0:
        raise ValueError("context_tokens and activation_bytes_per_token are both zero: nothing limits a large batch")
    return bw / per_sequence


def batch_at_user_rate(bandwidth_bytes_per_s: float, weight_bytes: float, sequence_bytes: float,
                       user_tokens_per_s: float) -> float:
    """The batch B_s at which a memory-bound step gives each sequence exactly ``user_tokens_per_s``
    (r): each gets one token per step, BW / (W + B x s) per second, with s = K x L + A the bytes it
    brings for itself (``sequence_bytes_per_step``), so

        B_s = (BW / r - W) / s,

    not a whole number (``largest_batch_at_user_rate`` takes its floor), and below zero when the
    weights alone take longer than 1 / r to read. The aggregate at B_s is r x B_s."""
    bw, w = positive("bandwidth_bytes_per_s", bandwidth_bytes_per_s), positive("weight_bytes", weight_bytes)
    s, r = positive("sequence_bytes", sequence_bytes), positive("user_tokens_per_s", user_tokens_per_s)
    return (bw / r - w) / s


def largest_batch_at_user_rate(bandwidth_bytes_per_s: float, weight_bytes: float, sequence_bytes: float,
                               user_tokens_per_s: float) -> int:
    """The most whole sequences a memory-bound step can hold while each still gets at least
    ``user_tokens_per_s``. Each sequence gets one token per step, BW / (W + B x s) per second, with
    s = K x L + A the bytes it brings for itself (``sequence_bytes_per_step``), so

        B <= (BW / r - W) / s,   the largest such B = floor((BW / r - W) / s)   (``batch_at_user_rate``).

    0 when even one sequence is slower than r: the weights alone take longer than 1 / r to read.
    A ceiling: a compute-bound step is slower still, so check the wall at that batch."""
    return max(0, math.floor(batch_at_user_rate(bandwidth_bytes_per_s, weight_bytes, sequence_bytes,
                                                user_tokens_per_s)))


def per_sequence_share_of_step_bytes(weight_bytes: float, kv_bytes_per_token: float, context_tokens: float,
                                     activation_bytes_per_token: float, batch: float) -> float:
    """Share of a decode step's bytes that each sequence brings for itself, cache reads and
    activations: B x (K x L + A) / (W + B x (K x L + A)).

    The same number is the memory ceiling as a share of its large-batch limit BW / (K x L + A):
    half of it at B = W / (K x L + A), nine tenths at nine times that batch."""
    own = positive("batch", batch) * sequence_bytes_per_step(kv_bytes_per_token, context_tokens,
                                                             activation_bytes_per_token)
    return own / (positive("weight_bytes", weight_bytes) + own)


def batch_where_math_binds(peak_flop_per_s: float, bandwidth_bytes_per_s: float, weight_bytes: float,
                           flops_per_token: float, kv_bytes_per_token: float, context_tokens: float,
                           activation_bytes_per_token: float) -> float:
    """The batch at which the memory ceiling B x BW / (W + B x (K x L + A)) reaches the math
    ceiling P / F:

        B = P x W / (BW x F - P x (K x L + A)),

    and ``math.inf`` when BW x F <= P x (K x L + A): then the bytes each sequence brings alone keep
    decode below the math ceiling at every batch. With W the weight bytes a step reads (fixed for a
    dense model) and nothing per sequence (K x L + A = 0) it is the balance point times W / F."""
    p = positive("peak_flop_per_s", peak_flop_per_s)
    bw = positive("bandwidth_bytes_per_s", bandwidth_bytes_per_s)
    w = positive("weight_bytes", weight_bytes)
    f = positive("flops_per_token", flops_per_token)
    room = bw * f - p * sequence_bytes_per_step(kv_bytes_per_token, context_tokens, activation_bytes_per_token)
    return p * w / room if room > 0 else math.inf


def longest_context_where_math_binds(peak_flop_per_s: float, bandwidth_bytes_per_s: float,
                                     flops_per_token: float, attention_flops_per_cached_token: float,
                                     kv_bytes_per_token: float, activation_bytes_per_token: float) -> float:
    """L_max, the context beyond which no batch reaches the math ceiling. With F the work of a
    token with no context, 2a the attention FLOPs per cached token, K the cache bytes per token,
    A the activations and R = P / BW, ``batch_where_math_binds`` has a knee while
    F + 2a L > R (A + K L), that is, when the cache's own intensity 2a / K is below R, while

        L < L_max = (F - R A) / (R K - 2a).

    ``math.inf`` when R K <= 2a (the cache's math keeps pace with its bytes: a knee at every
    context), and 0 when F <= R A (the activations alone keep decode memory-bound)."""
    R = positive("peak_flop_per_s", peak_flop_per_s) / positive("bandwidth_bytes_per_s", bandwidth_bytes_per_s)
    room = (positive("flops_per_token", flops_per_token)
            - R * non_negative("activation_bytes_per_token", activation_bytes_per_token))
    if room <= 0:
        return 0.0
    cost = (R * positive("kv_bytes_per_token", kv_bytes_per_token)
            - non_negative("attention_flops_per_cached_token", attention_flops_per_cached_token))
    return room / cost if cost > 0 else math.inf


def max_context_tokens(capacity_bytes: float, weight_bytes: float, kv_bytes_per_token: float, batch: float,
                       usable_fraction: float | None = None) -> int:
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
