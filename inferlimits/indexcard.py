"""The index card: the book's whole procedure as one calculation.

Inputs: an accelerator, a model, the precision its weights are stored in, the precision its math
runs in, the KV cache's precision, batch B, context L, prompt length S, and optionally a measured
decode rate. Out come both decode ceilings, the wall that binds, where a
decode step's time goes, the prompt phase, a verdict on the measurement, and the levers that help.
Every number comes from the one function that owns its formula (``generation``, ``kvcache``,
``models``); this module only decides.

The procedure, step by step, with the formulas the card prints, is ``STEPS``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from .generation import OVERHEAD_BOUND, decode_point, experts_touched_per_layer, regime
from .hardware import Accelerator, accelerator, accelerators
from .kvcache import Fit, fit, max_context_tokens, max_sequences
from .measured import SIXTEEN_BIT, good_decode_setup, typical_decode_share
from .models import Config, cached_tokens, kv_bytes_per_token, model, weight_bytes
from .precision import WIDE, check_scheme, crossover_on, decode_math_rate, prefill_on, product_math, scheme_error
from .roofline import COMPUTE_BOUND, MEMORY_BOUND
from .units import GB, fraction, non_negative, positive

#: The verdicts, one per situation the card tells apart. "Does not fit" comes first: a setup whose
#: weights and caches exceed the usable memory gets no rate at all.
DOES_NOT_FIT = "does not fit in memory"
WEIGHTS_BOUND = "memory-bound: reading the weights"
CACHE_BOUND = "memory-bound: reading the KV caches"
MATH_BOUND = "compute-bound"
OVERHEAD = "far below both ceilings: host overhead or slow kernels"
ABOVE = "above the lower ceiling: check the inputs"

#: The next lighter format a lever may switch to (weights or cache).
LIGHTER = {"FP32": "BF16", "BF16": "FP8", "FP16": "FP8", "FP8": "INT4", "INT8": "INT4"}
#: The next narrower math a lever may switch to, and the weight format it needs where the weights
#: cannot feed it as they are (MXFP4, the OCP format both NVIDIA's and AMD's FP4 tensor cores take).
NARROWER_MATH = {"BF16": "FP8", "FP8": "FP4", "INT8": "FP4", "FP6": "FP4"}
NATIVE_WEIGHTS = {"FP8": "FP8", "FP4": "MXFP4"}
#: A lever "helps" when it raises the attainable rate by at least this factor.
WORTH_IT = 1.1
#: Speculative decoding spends idle math on drafted tokens: the card suggests it only when the math
#: ceiling is at least this many times the memory ceiling, room for a few more tokens per step.
SPARE_MATH = 4.0


@dataclass(frozen=True)
class Lever:
    """One thing to try: whether it helps here, by what factor the ceiling would rise (None when
    the card cannot say without more inputs, or when the lever is about fitting), and why."""

    name: str
    helps: bool
    gain: float | None
    why: str


@dataclass(frozen=True)
class Card:
    """The card filled in for one setup. Rates are aggregate tokens/s, times per decode step; every
    rate and time is None when the setup does not fit in memory."""

    accelerator_name: str
    model_name: str
    weight_precision: str
    math_precision: str
    kv_precision: str
    batch: float
    context_tokens: float
    prompt_tokens: float
    measured_tokens_per_s: float  # 0: none given
    stored_weight_bytes: float    # every weight, what memory must hold
    weight_bytes: float           # the weights a decode step reads
    kv_bytes_per_token: float
    cache_bytes: float            # B x K x L, every sequence's cache
    activation_bytes: float       # B x A, the activations of one decode step
    capacity_bytes: float
    memory: Fit                   # weights and caches against the usable memory
    prompt_memory: Fit            # weights and one prompt's cache
    flops_per_token: float
    math_flop_per_s: float        # P, the step's effective math rate (16-bit parts at BF16)
    experts_touched: float | None  # D of E per MoE layer at this batch (None: a dense model)
    memory_ceiling: float | None
    math_ceiling: float | None
    weights_time_s: float | None
    cache_time_s: float | None
    activation_time_s: float | None
    math_time_s: float | None
    prefill_crossover_tokens: float
    time_to_first_token_s: float | None
    verdict: str
    levers: tuple[Lever, ...]

    @property
    def fits(self) -> bool:
        """Whether the weights and every sequence's cache fit in the usable memory."""
        return self.memory.fits

    @property
    def ceiling(self) -> float | None:
        """The lower of the two ceilings: the most the setup can reach (None if it does not fit)."""
        return min(self.memory_ceiling, self.math_ceiling) if self.fits else None

    @property
    def decode_wall(self) -> str | None:
        """The wall decode meets first: memory-bound or compute-bound (None if it does not fit)."""
        if not self.fits:
            return None
        return MEMORY_BOUND if self.memory_ceiling <= self.math_ceiling else COMPUTE_BOUND

    @property
    def prefill_wall(self) -> str | None:
        """Reading the prompt: compute-bound from the crossover length on, memory-bound below it
        (None if the prompt's cache does not fit beside the weights)."""
        if not self.prompt_memory.fits:
            return None
        return COMPUTE_BOUND if self.prompt_tokens >= self.prefill_crossover_tokens else MEMORY_BOUND

    @property
    def share_of_ceiling(self) -> float | None:
        """The measured rate as a share of the lower ceiling (None without a measurement or a fit)."""
        return self.measured_tokens_per_s / self.ceiling if self.measured_tokens_per_s and self.fits else None

    def helping(self) -> list[str]:
        """Names of the levers that help, in the card's order."""
        return [lever.name for lever in self.levers if lever.helps]


def read_card(accelerator_name: str, model_name: str, weight_precision: str = "BF16", kv_precision: str = "BF16",
              batch: float = 1, context_tokens: float = 0.0, prompt_tokens: float = 1024,
              measured_tokens_per_s: float = 0.0, near: float = 0.5, math_precision: str = "BF16") -> Card:
    """Fill in the card.

    Fit first: the weights and the caches of B sequences of L tokens must fit in the usable memory
    (``kvcache.fit``); if they do not, the verdict is "does not fit", no rate is given, and the
    levers are the ones that make it fit. Otherwise the ceilings are memory
    B x BW / (W + B x (K x L + A)) and math P / F (``generation.decode_point``), with P the rate
    the step's math runs at in ``math_precision`` (``precision.decode_math_rate``: the parts kept in
    16 bits at BF16); the verdict on a measured rate (``measured_tokens_per_s`` > 0; 0 means none)
    uses ``generation.regime``: within a factor ``near`` of the lower ceiling it is that wall,
    further below it is overhead."""
    a, c = accelerator(accelerator_name), model(model_name).config
    B = positive("batch", batch)
    L = non_negative("context_tokens", context_tokens)
    S = positive("prompt_tokens", prompt_tokens)
    measured = non_negative("measured_tokens_per_s", measured_tokens_per_s)
    near = fraction("near", near)
    check_scheme(weight_precision, math_precision)
    P, BW = decode_math_rate(a, c, weight_precision, math_precision, L), a.bandwidth_bytes_per_s
    stored, K = weight_bytes(c, weight_precision), kv_bytes_per_token(c, kv_precision)
    kept = cached_tokens(c, L)
    memory = fit(a.capacity_bytes, stored, K, B, kept)
    prompt_memory = fit(a.capacity_bytes, stored, K, 1, cached_tokens(c, S))
    point = decode_point(c, P, BW, B, L, weight_precision, kv_precision)
    crossover = crossover_on(a, c, weight_precision, kv_precision, math_precision)
    ttft = (prefill_on(a, c, S, weight_precision, kv_precision, math_precision).time_s
            if prompt_memory.fits else None)
    common = dict(accelerator_name=a.name, model_name=model_name, weight_precision=weight_precision,
                  math_precision=math_precision, kv_precision=kv_precision, batch=B, context_tokens=L,
                  prompt_tokens=S, measured_tokens_per_s=measured, stored_weight_bytes=stored,
                  weight_bytes=point.weight_bytes, kv_bytes_per_token=K, cache_bytes=point.cache_bytes,
                  activation_bytes=point.activation_bytes, capacity_bytes=a.capacity_bytes, memory=memory,
                  prompt_memory=prompt_memory, flops_per_token=point.flops_per_token, math_flop_per_s=P,
                  experts_touched=experts_touched_per_layer(c, B) if c.is_moe else None,
                  prefill_crossover_tokens=crossover, time_to_first_token_s=ttft)
    if not memory.fits:
        levers = _fit_levers(a, c, weight_precision, kv_precision, B, kept, memory)
        return Card(**common, memory_ceiling=None, math_ceiling=None, weights_time_s=None, cache_time_s=None,
                    activation_time_s=None, math_time_s=None, verdict=DOES_NOT_FIT, levers=tuple(levers))
    mem, math_ = point.memory_ceiling, point.math_ceiling
    if measured and measured > min(mem, math_) * 1.000001:
        verdict = ABOVE
    elif measured and regime(measured, mem, math_, near) == OVERHEAD_BOUND:
        verdict = OVERHEAD
    elif mem > math_:
        verdict = MATH_BOUND
    else:
        verdict = CACHE_BOUND if point.cache_bytes > point.weight_bytes else WEIGHTS_BOUND

    def attainable(wp=weight_precision, kp=kv_precision, b=B, on=a, mp=math_precision):
        rate = decode_math_rate(on, c, wp, mp, L)
        return decode_point(c, rate, on.bandwidth_bytes_per_s, b, L, wp, kp).ceiling

    levers = _levers(verdict, weight_precision, math_precision, kv_precision, c, a, B, kept, stored, K, attainable,
                     lambda: math_)
    return Card(**common, memory_ceiling=mem, math_ceiling=math_, weights_time_s=point.weight_bytes / BW,
                cache_time_s=point.cache_bytes / BW, activation_time_s=point.activation_bytes / BW,
                math_time_s=point.flops / P, verdict=verdict, levers=tuple(levers))


def narrower_math(a: Accelerator, weight_precision: str, math_precision: str) -> tuple[str, str] | None:
    """The lever "narrower math": the next narrower precision ``a`` multiplies in (``NARROWER_MATH``)
    and the weight format it needs (the weights as they are, if they can feed it), or None."""
    m = NARROWER_MATH.get(math_precision)
    while m and not a.supports(m):
        m = NARROWER_MATH.get(m)
    if m is None:
        return None
    weights = weight_precision if scheme_error(weight_precision, m) is None else NATIVE_WEIGHTS[m]
    return m, weights


def _fit_levers(a: Accelerator, c: Config, weight_precision: str, kv_precision: str, B: float, kept: float,
                memory: Fit) -> list[Lever]:
    """What would make a setup that does not fit fit: lighter weights or cache, a shorter context,
    a smaller batch, or splitting the model over several GPUs."""
    out = []
    need = f"needs {memory.needed_bytes / GB:,.1f} GB, {memory.usable_bytes / GB:,.1f} GB usable"

    def lever(label, fits, why):
        out.append(Lever(label, fits, None, why))

    lighter = LIGHTER.get(weight_precision)
    if lighter:
        f = fit(a.capacity_bytes, weight_bytes(c, lighter), kv_bytes_per_token(c, kv_precision), B, kept)
        lever(f"quantize the weights to {lighter}", f.fits, "then it fits" if f.fits else "still too large")
    lighter_kv = LIGHTER.get(kv_precision)
    if lighter_kv and kept:
        f = fit(a.capacity_bytes, memory.weight_bytes, kv_bytes_per_token(c, lighter_kv), B, kept)
        lever(f"quantize the KV cache to {lighter_kv}", f.fits, "then it fits" if f.fits else "still too large")
    k = kv_bytes_per_token(c, kv_precision)
    room_for_weights = memory.weight_bytes < memory.usable_bytes
    if kept:
        longest = max_context_tokens(a.capacity_bytes, memory.weight_bytes, k, B) if room_for_weights else 0
        lever("a shorter context", longest >= 1,
              f"at most {longest:,} tokens per sequence fit" if longest >= 1 else "the weights alone do not fit")
        most = max_sequences(a.capacity_bytes, memory.weight_bytes, k, kept) if room_for_weights else 0
        lever("a smaller batch", most >= 1 and most < B,
              f"at most {most:,} sequences of this context fit" if most >= 1 else "not even one sequence fits")
    gpus = max(2, math.ceil(memory.needed_bytes / memory.usable_bytes))
    lever(f"split the model over {gpus} GPUs", True,
          f"each holds 1/{gpus} of the weights and caches; {need} on one (the all-reduces between them add "
          "to every step: the serving-at-scale chapter counts them)")
    return out


def _levers(verdict, weight_precision, math_precision, kv_precision, c, a, B, kept, stored, K, attainable,
            now_math) -> list[Lever]:
    """Each lever's gain is the attainable rate (the lower ceiling) with the lever applied over the
    rate now; it helps when that gain is at least ``WORTH_IT``, the lever's setup still fits, and
    nothing else is in charge."""
    now = attainable()
    memory_bound = verdict in (WEIGHTS_BOUND, CACHE_BOUND)
    out = []

    def lever(label, gain, why, possible=True, shares_host_cost=False):
        raises = possible and (gain is None or gain >= WORTH_IT)
        helps = raises and verdict not in (OVERHEAD, ABOVE)
        if verdict == OVERHEAD and raises and shares_host_cost:
            why, helps = "the host's cost per step is shared by more sequences, so even a host-bound step yields more", True
        elif verdict == OVERHEAD and raises:
            why = "it would raise the ceiling, but the measurement is far below it: find what holds it down first"
        elif verdict == ABOVE:
            why = ("check the inputs first (a rate that counts prompt tokens, lighter weights than stated, "
                   "speculative decoding); if they are right, the book's activation or routing estimate "
                   "overstates the bytes")
        out.append(Lever(label, helps, gain, why))

    lighter = LIGHTER.get(weight_precision)
    if lighter:
        gain = attainable(wp=lighter, mp=math_precision if scheme_error(lighter, math_precision) is None else WIDE) / now
        lever(f"quantize the weights to {lighter}", gain,
              "fewer weight bytes per step" if gain >= WORTH_IT else "the weights are not what limits this step")
    else:
        lever("quantize the weights", None, "already the lightest format the book models", possible=False)
    lighter_kv = LIGHTER.get(kv_precision)
    if lighter_kv and kept:
        gain = attainable(kp=lighter_kv) / now
        lever(f"quantize the KV cache to {lighter_kv}", gain,
              "fewer cache bytes per step" if gain >= WORTH_IT else "the caches are a small part of the bytes")
    else:
        lever("quantize the KV cache", None,
              "no cache to shrink" if not kept else "already the lightest format the book models", possible=False)
    fits_doubled = fit(a.capacity_bytes, stored, K, 2 * B, kept).fits
    gain = attainable(b=2 * B) / now
    if not fits_doubled:
        why = "twice the caches would not fit in memory"
    elif gain >= WORTH_IT:
        why = "the weight read is shared by more tokens"
    else:
        why = "each added sequence brings its own cache reads" if memory_bound else "math is already the limit"
    lever("batch twice as many sequences", gain, why, possible=fits_doubled, shares_host_cost=True)
    spare = memory_bound and now_math() >= SPARE_MATH * now
    lever("speculative decoding", None,
          "checks several drafted tokens per read of the weights and caches, spending idle math; "
          "the gain depends on how many drafts are accepted" if spare
          else "it needs idle math to spend, and this step has little" if memory_bound
          else "it needs idle math to spend", possible=spare or verdict == OVERHEAD)
    narrower = narrower_math(a, weight_precision, math_precision)
    if narrower is None:
        lever("narrower math", None, f"this part has no tensor-core mode narrower than {math_precision}", possible=False)
    else:
        m, wp = narrower
        label = f"{m} math" + ("" if wp == weight_precision else f" ({wp} weights)")
        fits_narrow = fit(a.capacity_bytes, weight_bytes(c, wp), K, B, kept).fits
        gain = attainable(wp=wp, mp=m) / now if fits_narrow else None
        why = ("the step is paced by FLOP/s, and its products run faster in narrower numbers (what stays in 16 "
               "bits does not)" if verdict == MATH_BOUND else "the math units are not what limits this step")
        if wp != weight_precision and verdict != MATH_BOUND and gain and gain >= WORTH_IT:
            why = "the lighter weights it needs read fewer bytes; the faster math itself is not what limits the step"
        lever(label, gain, why, possible=fits_narrow)
    if verdict == MATH_BOUND:
        better = [x for x in accelerators().values() if x.supports(math_precision)
                  and x.math_flops_per_s(math_precision) > a.math_flops_per_s(math_precision)]
        best = max(better, key=lambda x: x.math_flops_per_s(math_precision), default=None)
        what, why = "math", "the step is paced by FLOP/s"
    else:
        better = [x for x in accelerators().values() if x.supports(math_precision)
                  and x.bandwidth_bytes_per_s > a.bandwidth_bytes_per_s]
        best = max(better, key=lambda x: x.bandwidth_bytes_per_s, default=None)
        what, why = "bandwidth", "the step is paced by bytes per second"
    if best is None:
        lever(f"a card with more {what}", None, f"no card in the book's table has more {what}", possible=False)
    elif not fit(best.capacity_bytes, stored, K, B, kept).fits:
        lever(f"a card with more {what} ({best.name})", None, "the setup would not fit in its memory", possible=False)
    else:
        gain = attainable(on=best) / now
        lever(f"a card with more {what} ({best.name})", gain, why if gain >= WORTH_IT else "it would gain little")
    out.append(Lever("profile the step (host time, kernels, waits)", verdict == OVERHEAD, None,
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
    Step("fit first", r"W_\text{stored} + B \cdot K \cdot L \le u \cdot \text{capacity}", "kvcache.fit",
         "W + B x K x L, fit in capacity x usable fraction"),
    Step("weights a step reads", r"W = N \cdot b_w", "generation.weight_bytes_read_per_step",
         "N x bytes per weight"),
    Step("cache bytes per token", r"K = 2 \cdot n_\text{layers} \cdot n_{kv} \cdot d \cdot b_{kv}",
         "models.kv_bytes_per_token", "K = 2 x layers x kv_heads x head_dim x bytes"),
    Step("activations per token", r"A = \textstyle\sum_\text{kernels} (\text{in} + \text{out}) \cdot b_a",
         "activations.activation_bytes_per_token", "numbers read + numbers written"),
    Step("work per token", r"F \approx 2N + 4\, n_\text{layers}\, n_q\, d\, L", "generation.decode_flops_per_token",
         "F = 2N"),
    Step("memory ceiling", r"\dfrac{B \cdot BW}{W + B\,(K L + A)}", "generation.memory_ceiling_tokens_per_s",
         "B x BW / (W + B x (K x L + A))"),
    Step("math ceiling", r"\dfrac{P}{F}", "generation.math_ceiling_tokens_per_s", "P / F"),
    Step("math rate at its precision", r"P = \dfrac{F}{\sum_i F_i / P_i}", "precision.decode_math_rate",
         "over their summed times"),
    Step("prefill turns compute-bound", r"S^* \approx \dfrac{P}{BW} \cdot \dfrac{W}{2(N - H) - (P/BW)(K + A)}",
         "generation.prefill_crossover_prompt_tokens", "S* is about R W / (2 (N - H))"),
    Step("time to first token", r"\max\!\left(\dfrac{F_\text{prefill}}{P},\; \dfrac{W + S\,(K + A)}{BW}\right)",
         "generation.time_to_first_token_s", "max(prefill FLOPs / P, (W + S x (K + A)) / BW)"),
    Step("verdict on a measurement", r"r < \tfrac{1}{2} \min(\text{ceilings}) \Rightarrow \text{far below both}",
         "generation.regime", "within a factor ``near`` of the lower ceiling"),
)


def _prompt_does_not_fit(card: Card) -> str:
    """Why a prompt cannot be read: the weights alone do not fit, or the prompt's cache does not."""
    if card.stored_weight_bytes > card.prompt_memory.usable_bytes:
        return "the weights alone do not fit"
    return "its cache does not fit beside the weights"


def _gb(x: float) -> str:
    """Bytes as GB, with three significant figures below 10 GB (so a small shortfall still shows)."""
    return f"{x / GB:,.3g} GB" if x < 10 * GB else f"{x / GB:,.1f} GB"


def _tokens_per_s(x: float | None) -> str:
    return f"{x:,.0f} tokens/s" if x is not None else "none: it does not fit"


def card_rows(card: Card) -> list[tuple[str, str, str]]:
    """The printed card: (step, formula, this setup's value) for every step of ``STEPS``. A setup
    that does not fit gets "does not fit" and no rate."""
    m = card.memory
    fits = (f"{m.needed_bytes / GB:,.1f} of {m.usable_bytes / GB:,.1f} GB: "
            + ("fits" if m.fits else f"does not fit, {_gb(m.missing_bytes)} short"))
    ttft = (f"{card.time_to_first_token_s * 1e3:,.1f} ms for {card.prompt_tokens:,.0f} tokens"
            if card.time_to_first_token_s is not None else f"none: {_prompt_does_not_fit(card)}")
    if not card.fits:
        verdict = f"no verdict on a rate: {card.verdict}"
    elif card.measured_tokens_per_s:
        verdict = (f"{card.measured_tokens_per_s:,.0f} tokens/s is {card.share_of_ceiling:.0%} of the lower ceiling: "
                   f"{card.verdict}")
    else:
        verdict = f"no measurement: {card.verdict}"
    values = [
        fits,
        f"{card.weight_bytes / GB:,.1f} GB ({card.weight_precision}); {card.stored_weight_bytes / GB:,.1f} GB stored",
        f"{card.kv_bytes_per_token / 1024:,.0f} KiB ({card.kv_precision})",
        f"{card.activation_bytes / card.batch / 1e6:,.1f} MB",
        f"{card.flops_per_token / 1e9:,.1f} GFLOP",
        _tokens_per_s(card.memory_ceiling),
        _tokens_per_s(card.math_ceiling),
        f"{card.math_flop_per_s / 1e12:,.0f} TFLOP/s ({card.math_precision} math)",
        f"{card.prefill_crossover_tokens:,.0f} tokens",
        ttft,
        verdict,
    ]
    return [(s.what, f"${s.formula}$", v) for s, v in zip(STEPS, values)]


def shows_published_band(card: Card) -> bool:
    """Whether the published runs of ``measured.good_decode`` speak to this setup: one sequence,
    16-bit weights, memory-bound."""
    return (card.fits and card.decode_wall == MEMORY_BOUND and card.batch == 1
            and card.weight_precision in SIXTEEN_BIT)


def summary_lines(card: Card) -> list[str]:
    """The card's answer in a few short lines: fit, ceilings, wall, where the time goes, prefill,
    measurement, levers (✓ helps, ✗ does not). A setup that does not fit says so first and states
    no rate."""
    ms = 1e3
    m = card.memory
    setup = (f"B = {card.batch:,.4g}, L = {card.context_tokens:,.0f}, S = {card.prompt_tokens:,.0f} tokens; "
             f"{card.weight_precision} weights, {card.math_precision} math, {card.kv_precision} cache")
    memory = f"memory: {m.needed_bytes / GB:,.0f} of {m.usable_bytes / GB:,.0f} GB usable"
    if not card.fits:
        lines = [f"<b>{card.verdict}: {_gb(m.missing_bytes)} short</b>", setup,
                 memory + " — no rate: it cannot run"]
    else:
        lines = [f"<b>{card.verdict}</b>", setup,
                 f"memory ceiling {card.memory_ceiling:,.0f} tokens/s, math ceiling {card.math_ceiling:,.0f}",
                 "per step: " + ", ".join(f"{part} {t * ms:,.3g} ms" for part, t in (
                     ("weights", card.weights_time_s), ("caches", card.cache_time_s),
                     ("activations", card.activation_time_s), ("math", card.math_time_s))),
                 memory]
    if card.experts_touched is not None:
        c = model(card.model_name).config
        lines.append(f"experts: a step of {card.batch:,.4g} touches {card.experts_touched:,.1f} of {c.routed_experts} "
                     f"per layer (one token: {c.num_experts_per_tok})")
    if card.time_to_first_token_s is not None:
        lines.append(f"prefill of {card.prompt_tokens:,.0f} tokens: {card.prefill_wall} "
                     f"(from {card.prefill_crossover_tokens:,.0f}), first token after "
                     f"{card.time_to_first_token_s * ms:,.1f} ms")
    else:
        lines.append(f"prefill of {card.prompt_tokens:,.0f} tokens: {_prompt_does_not_fit(card)}")
    if shows_published_band(card):
        low, high = typical_decode_share()
        lines.append(f"compiled single-stream runs ({good_decode_setup()}) reached {low:.0%}–{high:.0%} of "
                     f"this ceiling: {low * card.memory_ceiling:,.0f}–{high * card.memory_ceiling:,.0f} tokens/s here")
    if card.measured_tokens_per_s and card.fits:
        lines.append(f"measured {card.measured_tokens_per_s:,.0f} tokens/s = {card.share_of_ceiling:.1%} of the ceiling")
    elif card.measured_tokens_per_s:
        lines.append("a measured rate was given, but this setup cannot run as described: check the inputs")
    else:
        lines.append("no measured rate given")
    lines.append("<b>levers</b>" if card.fits else "<b>levers that make it fit</b>")
    for lever in card.levers:
        gain = f" ×{lever.gain:.2f}" if lever.gain is not None and lever.helps else ""
        lines.append(f"{'✓' if lever.helps else '✗'} {lever.name}{gain}")
    return lines
