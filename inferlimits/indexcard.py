"""The index card: the book's whole procedure as one calculation.

Inputs: an accelerator, a model, weight and KV precision, batch B, context L, prompt length S,
and optionally a measured decode rate. Out come both decode ceilings, the wall that binds, where a
decode step's time goes, the prompt phase, a verdict on the measurement, and the levers that help.
Every number comes from the one function that owns its formula (``generation``, ``kvcache``,
``models``); this module only decides.

The procedure, step by step, with the formulas the card prints, is ``STEPS``.
"""
from __future__ import annotations

from dataclasses import dataclass

from .generation import (OVERHEAD_BOUND, decode_flops_per_token, math_ceiling_tokens_per_s,
                         memory_ceiling_tokens_per_s, prefill_crossover_prompt_tokens, regime,
                         time_to_first_token_s)
from .hardware import accelerator, accelerators
from .kvcache import kv_cache_bytes
from .models import cached_tokens, kv_bytes_per_token, model, weight_bytes
from .roofline import COMPUTE_BOUND, MEMORY_BOUND
from .units import bytes_per_element, fraction, non_negative, positive

#: The verdicts, one per situation the card tells apart.
WEIGHTS_BOUND = "memory-bound: reading the weights"
CACHE_BOUND = "memory-bound: reading the KV caches"
MATH_BOUND = "compute-bound"
OVERHEAD = "overhead-bound: far below both ceilings"
ABOVE = "above the lower ceiling: an input is wrong"

#: The next lighter format a lever may switch to (weights or cache).
LIGHTER = {"FP32": "BF16", "BF16": "FP8", "FP16": "FP8", "FP8": "INT4", "INT8": "INT4"}
#: A lever "helps" when it raises the attainable rate by at least this factor.
WORTH_IT = 1.1


@dataclass(frozen=True)
class Lever:
    """One thing to try: whether it helps here, by what factor the ceiling would rise (None when
    the card cannot say without more inputs), and why."""

    name: str
    helps: bool
    gain: float | None
    why: str


@dataclass(frozen=True)
class Card:
    """The card filled in for one setup. Rates are aggregate tokens/s, times per decode step."""

    accelerator_name: str
    model_name: str
    weight_precision: str
    kv_precision: str
    batch: float
    context_tokens: float
    prompt_tokens: float
    measured_tokens_per_s: float  # 0: none given
    weight_bytes: float
    kv_bytes_per_token: float
    cache_bytes: float  # B x K x L, every sequence's cache
    capacity_bytes: float
    flops_per_token: float
    memory_ceiling: float
    math_ceiling: float
    weights_time_s: float
    cache_time_s: float
    math_time_s: float
    prefill_crossover_tokens: float
    time_to_first_token_s: float
    verdict: str
    levers: tuple[Lever, ...]

    @property
    def ceiling(self) -> float:
        """The lower of the two ceilings: the most the setup can reach."""
        return min(self.memory_ceiling, self.math_ceiling)

    @property
    def decode_wall(self) -> str:
        """The wall decode meets first: memory-bound or compute-bound."""
        return MEMORY_BOUND if self.memory_ceiling <= self.math_ceiling else COMPUTE_BOUND

    @property
    def prefill_wall(self) -> str:
        """Reading the prompt: compute-bound from the crossover length on, memory-bound below it."""
        return COMPUTE_BOUND if self.prompt_tokens >= self.prefill_crossover_tokens else MEMORY_BOUND

    @property
    def fits(self) -> bool:
        """Whether the weights and every sequence's cache fit in the accelerator's memory."""
        return self.weight_bytes + self.cache_bytes <= self.capacity_bytes

    @property
    def share_of_ceiling(self) -> float | None:
        """The measured rate as a share of the lower ceiling (None without a measurement)."""
        return self.measured_tokens_per_s / self.ceiling if self.measured_tokens_per_s else None

    def helping(self) -> list[str]:
        """Names of the levers that help, in the card's order."""
        return [lever.name for lever in self.levers if lever.helps]


def _attainable(bandwidth: float, peak: float, w: float, batch: float, k: float, cached: float, f: float) -> float:
    return min(memory_ceiling_tokens_per_s(bandwidth, w, batch, k, cached), math_ceiling_tokens_per_s(peak, f))


def read_card(accelerator_name: str, model_name: str, weight_precision: str = "BF16", kv_precision: str = "BF16",
              batch: float = 1, context_tokens: float = 0.0, prompt_tokens: float = 1024,
              measured_tokens_per_s: float = 0.0, near: float = 0.5) -> Card:
    """Fill in the card.

    Ceilings: memory B x BW / (W + B x K x L), math P / F (F with attention over L); the verdict
    on a measured rate (``measured_tokens_per_s`` > 0; 0 means none) uses ``generation.regime``:
    within a factor ``near`` of the lower ceiling it is that wall, further below it is overhead."""
    a, c = accelerator(accelerator_name), model(model_name).config
    B = positive("batch", batch)
    L = non_negative("context_tokens", context_tokens)
    S = positive("prompt_tokens", prompt_tokens)
    measured = non_negative("measured_tokens_per_s", measured_tokens_per_s)
    near = fraction("near", near)
    P, BW = a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s
    W, K = weight_bytes(c, weight_precision), kv_bytes_per_token(c, kv_precision)
    kept = cached_tokens(c, L)
    F = decode_flops_per_token(c, L)
    cache = kv_cache_bytes(K, B, kept)
    mem, math_ = memory_ceiling_tokens_per_s(BW, W, B, K, kept), math_ceiling_tokens_per_s(P, F)
    ceiling = min(mem, math_)
    if measured and measured > ceiling * 1.000001:
        verdict = ABOVE
    elif measured and regime(measured, mem, math_, near) == OVERHEAD_BOUND:
        verdict = OVERHEAD
    elif mem > math_:
        verdict = MATH_BOUND
    else:
        verdict = CACHE_BOUND if cache > W else WEIGHTS_BOUND

    def attainable(w=W, k=K, b=B, bw=BW, p=P):
        return _attainable(bw, p, w, b, k, kept, F)

    levers = _levers(verdict, weight_precision, kv_precision, c, a.name, B, W, K, kept, a.capacity_bytes, attainable)
    return Card(accelerator_name=a.name, model_name=model_name, weight_precision=weight_precision,
                kv_precision=kv_precision, batch=B, context_tokens=L, prompt_tokens=S, measured_tokens_per_s=measured,
                weight_bytes=W, kv_bytes_per_token=K, cache_bytes=cache, capacity_bytes=a.capacity_bytes,
                flops_per_token=F, memory_ceiling=mem, math_ceiling=math_,
                weights_time_s=W / BW, cache_time_s=cache / BW, math_time_s=B * F / P,
                prefill_crossover_tokens=prefill_crossover_prompt_tokens(c, P, BW, W, K),
                time_to_first_token_s=time_to_first_token_s(c, S, P, BW, W, K),
                verdict=verdict, levers=tuple(levers))


def _levers(verdict, weight_precision, kv_precision, c, name, B, W, K, kept, capacity, attainable) -> list[Lever]:
    """Each lever's gain is the attainable rate (the lower ceiling) with the lever applied over the
    rate now; it helps when that gain is at least ``WORTH_IT`` and nothing else is in charge."""
    now = attainable()
    memory_bound = verdict in (WEIGHTS_BOUND, CACHE_BOUND)
    out = []

    def lever(label, gain, why, possible=True):
        raises = possible and (gain is None or gain >= WORTH_IT)
        if verdict == OVERHEAD and raises:
            why = "it would raise the ceiling, but the measurement is far below it: remove the overhead first"
        elif verdict == ABOVE:
            why = "check the inputs first: the measurement is above the ceiling they give"
        out.append(Lever(label, raises and verdict not in (OVERHEAD, ABOVE), gain, why))

    lighter = LIGHTER.get(weight_precision)
    if lighter:
        gain = attainable(w=W * bytes_per_element(lighter) / bytes_per_element(weight_precision)) / now
        lever(f"quantize the weights to {lighter}", gain,
              "fewer weight bytes per step" if gain >= WORTH_IT else "the weights are not what limits this step")
    else:
        lever("quantize the weights", None, "already the lightest format the book models", possible=False)
    lighter_kv = LIGHTER.get(kv_precision)
    if lighter_kv and kept:
        gain = attainable(k=K * bytes_per_element(lighter_kv) / bytes_per_element(kv_precision)) / now
        lever(f"quantize the KV cache to {lighter_kv}", gain,
              "fewer cache bytes per step" if gain >= WORTH_IT else "the caches are a small part of the bytes")
    else:
        lever("quantize the KV cache", None,
              "no cache to shrink" if not kept else "already the lightest format the book models", possible=False)
    fits_doubled = W + 2 * B * K * kept <= capacity
    gain = attainable(b=2 * B) / now
    if not fits_doubled:
        why = "twice the caches would not fit in memory"
    elif gain >= WORTH_IT:
        why = "the weight read is shared by more tokens"
    else:
        why = "each added sequence brings its own cache reads" if memory_bound else "math is already the limit"
    lever("batch twice as many sequences", gain, why, possible=fits_doubled)
    lever("speculative decoding", None,
          "checks several drafted tokens per read of the weights and caches, spending idle math; "
          "the gain depends on how many drafts are accepted" if memory_bound or verdict == OVERHEAD
          else "it needs idle math to spend", possible=memory_bound or verdict == OVERHEAD)
    if verdict == MATH_BOUND:
        best = max(accelerators().values(), key=lambda x: x.dense_bf16_flops_per_s)
        what, why = "math", "the step is paced by FLOP/s"
    else:
        best = max(accelerators().values(), key=lambda x: x.bandwidth_bytes_per_s)
        what, why = "bandwidth", "the step is paced by bytes per second"
    if best.name == name:
        lever(f"a card with more {what}", None, f"no card in the book's table has more {what}", possible=False)
    else:
        gain = attainable(bw=best.bandwidth_bytes_per_s, p=best.dense_bf16_flops_per_s) / now
        lever(f"a card with more {what} ({best.name})", gain, why if gain >= WORTH_IT else "it would gain little")
    out.append(Lever("profile: launches, kernel efficiency, synchronisation", verdict == OVERHEAD, None,
                     "the measurement is far below both ceilings: something outside the two-resource model is "
                     "in charge" if verdict == OVERHEAD else "only needed when a measurement is far below both ceilings"))
    return out


# ---- the card itself -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Step:
    """One line of the printed card: what to do, its formula (LaTeX), and the package function
    whose docstring states the same formula in words (``plain``)."""

    what: str
    formula: str
    function: str
    plain: str


STEPS: tuple[Step, ...] = (
    Step("weight bytes", r"W = N \cdot b_w", "models.weight_bytes", "W = parameters x bytes per weight"),
    Step("cache bytes per token", r"K = 2 \cdot n_\text{layers} \cdot n_{kv} \cdot d \cdot b_{kv}",
         "models.kv_bytes_per_token", "K = 2 x layers x kv_heads x head_dim x bytes"),
    Step("work per token", r"F \approx 2N + 4\, n_\text{layers}\, n_q\, d\, L", "generation.decode_flops_per_token",
         "F = 2 x active parameters"),
    Step("memory ceiling", r"\dfrac{B \cdot BW}{W + B \cdot K \cdot L}", "generation.memory_ceiling_tokens_per_s",
         "B x BW / (W + B x K x L)"),
    Step("math ceiling", r"\dfrac{P}{F}", "generation.math_ceiling_tokens_per_s", "P / F"),
    Step("prefill turns compute-bound", r"S^* \approx \dfrac{P}{BW} \cdot \dfrac{b_w}{2}",
         "generation.prefill_crossover_prompt_tokens", "S* is about R x b / 2"),
    Step("time to first token", r"\max\!\left(\dfrac{F_\text{prefill}}{P},\; \dfrac{W + S \cdot K}{BW}\right)",
         "generation.time_to_first_token_s", "max(prefill FLOPs / P, (W + S x K) / BW)"),
    Step("verdict on a measurement", r"r < \tfrac{1}{2} \min(\text{ceilings}) \Rightarrow \text{overhead}",
         "generation.regime", "within a factor ``near`` of the lower ceiling"),
)


def card_rows(card: Card) -> list[tuple[str, str, str]]:
    """The printed card: (step, formula, this setup's value) for every step of ``STEPS``."""
    gb = 1e9
    values = [
        f"{card.weight_bytes / gb:,.1f} GB ({card.weight_precision})",
        f"{card.kv_bytes_per_token / 1024:,.0f} KiB ({card.kv_precision})",
        f"{card.flops_per_token / 1e9:,.1f} GFLOP",
        f"{card.memory_ceiling:,.0f} tokens/s",
        f"{card.math_ceiling:,.0f} tokens/s",
        f"{card.prefill_crossover_tokens:,.0f} tokens",
        f"{card.time_to_first_token_s * 1e3:,.1f} ms for {card.prompt_tokens:,.0f} tokens",
        (f"{card.measured_tokens_per_s:,.0f} tokens/s is {card.share_of_ceiling:.0%} of the lower ceiling: "
         f"{card.verdict}") if card.measured_tokens_per_s else f"no measurement: {card.verdict}",
    ]
    return [(s.what, f"${s.formula}$", v) for s, v in zip(STEPS, values)]


def summary_lines(card: Card) -> list[str]:
    """The card's answer in a few short lines: ceilings, wall, where the time goes, prefill,
    measurement, levers (✓ helps, ✗ does not)."""
    ms = 1e3
    lines = [f"<b>{card.verdict}</b>",
             f"B = {card.batch:,.4g}, L = {card.context_tokens:,.0f}, S = {card.prompt_tokens:,.0f} tokens; "
             f"{card.weight_precision} weights, {card.kv_precision} cache",
             f"memory ceiling {card.memory_ceiling:,.0f} tokens/s, math ceiling {card.math_ceiling:,.0f}",
             f"per step: weights {card.weights_time_s * ms:,.2f} ms, caches {card.cache_time_s * ms:,.2f} ms, "
             f"math {card.math_time_s * ms:,.2f} ms",
             (f"memory: {(card.weight_bytes + card.cache_bytes) / 1e9:,.0f} of {card.capacity_bytes / 1e9:,.0f} GB"
              + ("" if card.fits else " — does not fit!")),
             f"prefill of {card.prompt_tokens:,.0f} tokens: {card.prefill_wall} "
             f"(from {card.prefill_crossover_tokens:,.0f}), first token after {card.time_to_first_token_s * ms:,.1f} ms"]
    if card.measured_tokens_per_s:
        lines.append(f"measured {card.measured_tokens_per_s:,.0f} tokens/s = {card.share_of_ceiling:.1%} of the ceiling")
    else:
        lines.append("no measured rate given")
    lines.append("<b>levers</b>")
    for lever in card.levers:
        gain = f" ×{lever.gain:.2f}" if lever.gain is not None and lever.helps else ""
        lines.append(f"{'✓' if lever.helps else '✗'} {lever.name}{gain}")
    return lines
