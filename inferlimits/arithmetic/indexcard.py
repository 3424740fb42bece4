"""The index card: the book's whole procedure as one calculation.

Inputs: an accelerator, a model, the precision its weights are stored in, the precision its math
runs in, the KV cache's precision, batch B, context L, prompt length S, the number of GPUs T that
share the model in tensor parallelism, and optionally a measured decode rate. Out come both decode
ceilings, the communication between the GPUs, the wall that binds, where a decode step's time goes,
the rate a good compiled engine is expected to reach with its 80% interval (``measured.predict``),
the prompt phase, a verdict on the measurement and where it falls in that interval, and the levers
that help. Every number comes from the one function that owns its formula (``generation``,
``kvcache``, ``models``, ``parallel``, ``speculative``, ``expected``); this module only decides.

The procedure, step by step, with the formulas the card prints, is ``STEPS``.
"""
from __future__ import annotations

from dataclasses import dataclass

from inferlimits.data import datafiles

from inferlimits.arithmetic.generation import OVERHEAD_BOUND, decode_point, experts_touched_per_layer, regime
from inferlimits.data.hardware import Accelerator, accelerator, accelerators
from inferlimits.arithmetic.kvcache import Fit, max_context_tokens, max_sequences
from inferlimits.arithmetic.expected import INTERVAL
from inferlimits.arithmetic.measured import Prediction, predict
from inferlimits.data.models import Config, cached_tokens, kv_bytes_per_token, model
from inferlimits.arithmetic.parallel import (COMMUNICATION_BOUND, TENSOR_PARALLEL_DEGREES, cache_share,
                                             tensor_parallel_communication_s, tensor_parallel_fit, tensor_parallel_on,
                                             tensor_parallel_prefill_crossover, tensor_parallel_read_bytes)
from inferlimits.arithmetic.precision import WIDE, check_scheme, decode_math_rate, scheme_error
from inferlimits.arithmetic.roofline import COMPUTE_BOUND, MEMORY_BOUND
from inferlimits.arithmetic.serving import mixed_step_s
from inferlimits.arithmetic.speculative import EXAMPLE_ACCEPTANCE, EXAMPLE_DRAFT_TOKENS, speculative_on
from inferlimits.data.units import GB, fraction, non_negative, positive

#: The verdicts, one per situation the card tells apart. "Does not fit" comes first: a setup whose
#: weights and caches exceed the usable memory gets no rate at all.
DOES_NOT_FIT = "does not fit in memory"
WEIGHTS_BOUND = "memory-bound: reading the weights"
CACHE_BOUND = "memory-bound: reading the KV caches"
ACTIVATIONS_BOUND = "memory-bound: moving the activations between kernels"
#: a memory-bound verdict names the largest of the bytes a step moves (each GPU's share)
MEMORY_VERDICTS = {"weights": WEIGHTS_BOUND, "cache": CACHE_BOUND, "activations": ACTIVATIONS_BOUND}
MATH_BOUND = "compute-bound"
COMMUNICATION = "communication-bound: the all-reduces between the GPUs"
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

#: the share of published runs the expected rate's interval holds (``expected.INTERVAL``: 80%)
INTERVAL_SHARE = INTERVAL[1] - INTERVAL[0]
#: where a measured rate falls against the expected rate's interval (``measured.Prediction.position``),
#: in words: the interval holds 8 in 10 published runs, each held against its own expected rate
POSITIONS = {
    "below": (f"below the {INTERVAL_SHARE:.0%} interval: only about {INTERVAL[0] * 10:.0f} in 10 published runs "
              "falls this far short of its expected rate"),
    "inside": (f"inside the {INTERVAL_SHARE:.0%} interval, where about {INTERVAL_SHARE * 10:.0f} in 10 published "
               "runs fall"),
    "above": (f"above the {INTERVAL_SHARE:.0%} interval: only about {(1 - INTERVAL[1]) * 10:.0f} in 10 published "
              "runs beats its expected rate by this much"),
}


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
    """The card filled in for one setup. Rates are aggregate tokens/s, times per decode step, and
    on T GPUs the bytes, times and memory are each GPU's; every rate and time is None when the
    setup does not fit in memory."""

    accelerator_name: str
    model_name: str
    weight_precision: str
    math_precision: str
    kv_precision: str
    batch: float
    context_tokens: float
    prompt_tokens: float
    gpus: int                     # T, the GPUs that share the model in tensor parallelism
    measured_tokens_per_s: float  # 0: none given
    stored_weight_bytes: float    # every weight, what memory must hold (all GPUs together)
    weight_bytes: float           # the weights a decode step reads (all GPUs together)
    kv_bytes_per_token: float
    cache_bytes: float            # B x K x L, every sequence's cache
    activation_bytes: float       # B x A, the activations of one decode step
    capacity_bytes: float         # one GPU's
    memory: Fit                   # one GPU's weights and caches against its usable memory
    prompt_memory: Fit            # one GPU's weights and its share of one prompt's cache
    flops_per_token: float
    math_flop_per_s: float        # P, one GPU's effective math rate (16-bit parts at BF16)
    experts_touched: float | None  # D of E per MoE layer at this batch (None: a dense model)
    memory_ceiling: float | None
    math_ceiling: float | None
    weights_time_s: float | None
    cache_time_s: float | None
    activation_time_s: float | None
    math_time_s: float | None
    communication_time_s: float | None  # C, the all-reduces of one step (0 on one GPU)
    prefill_crossover_tokens: float     # one GPU's share of a prefill turns compute-bound from here
    time_to_first_token_s: float | None  # a lone prompt, nothing else in its pass
    prompt_communication_s: float | None  # C_S, the all-reduces of that prompt's pass
    verdict: str
    levers: tuple[Lever, ...]

    @property
    def fits(self) -> bool:
        """Whether the weights and every sequence's cache fit in each GPU's usable memory."""
        return self.memory.fits

    @property
    def step_time_s(self) -> float | None:
        """One decode step: max(math, memory) + communication (None if it does not fit)."""
        if not self.fits:
            return None
        return max(self.math_time_s, self.weights_time_s + self.cache_time_s + self.activation_time_s) \
            + self.communication_time_s

    @property
    def ceiling(self) -> float | None:
        """The most the setup can reach: the lower of the two ceilings on one GPU; on several, B
        over the step with its communication (None if it does not fit)."""
        if not self.fits:
            return None
        if not self.communication_time_s:
            return min(self.memory_ceiling, self.math_ceiling)
        return self.batch / self.step_time_s

    @property
    def decode_wall(self) -> str | None:
        """The wall decode meets first: memory-bound, compute-bound, or on several GPUs
        communication-bound when the all-reduces outlast both (None if it does not fit)."""
        if not self.fits:
            return None
        if self.communication_time_s > self.batch / min(self.memory_ceiling, self.math_ceiling):
            return COMMUNICATION_BOUND
        return MEMORY_BOUND if self.memory_ceiling <= self.math_ceiling else COMPUTE_BOUND

    @property
    def prefill_wall(self) -> str | None:
        """Reading the prompt: compute-bound from the crossover length on, memory-bound below it;
        on several GPUs communication-bound where its all-reduces outlast both (None if the
        prompt's cache does not fit beside the weights)."""
        if not self.prompt_memory.fits:
            return None
        if self.prompt_communication_s > self.time_to_first_token_s - self.prompt_communication_s:
            return COMMUNICATION_BOUND
        return COMPUTE_BOUND if self.prompt_tokens >= self.prefill_crossover_tokens else MEMORY_BOUND

    @property
    def share_of_ceiling(self) -> float | None:
        """The measured rate as a share of the ceiling (None without a measurement or a fit)."""
        return self.measured_tokens_per_s / self.ceiling if self.measured_tokens_per_s and self.fits else None

    @property
    def expected(self) -> Prediction | None:
        """The rate a good compiled engine is expected to reach, with its 80% interval and the
        card's ceiling (``expected_rate``; None if it does not fit)."""
        return expected_rate(self)

    @property
    def position(self) -> str | None:
        """Where the measured rate falls against the expected rate's interval: "below", "inside" or
        "above" (None without a measurement or a fit)."""
        if not self.measured_tokens_per_s or not self.fits:
            return None
        return self.expected.position(self.measured_tokens_per_s)

    def helping(self) -> list[str]:
        """Names of the levers that help, in the card's order."""
        return [lever.name for lever in self.levers if lever.helps]


def _degree(gpus: object) -> int:
    if gpus not in TENSOR_PARALLEL_DEGREES or isinstance(gpus, bool):
        raise ValueError(f"gpus must be one of {TENSOR_PARALLEL_DEGREES} (tensor parallelism within one server); "
                         f"got {gpus!r}")
    return int(gpus)


def read_card(accelerator_name: str, model_name: str, weight_precision: str = "BF16", kv_precision: str = "BF16",
              batch: float = 1, context_tokens: float = 0.0, prompt_tokens: float = 1024,
              measured_tokens_per_s: float = 0.0, near: float = 0.5, math_precision: str = "BF16",
              gpus: int = 1) -> Card:
    """Fill in the card.

    Fit first: each of the T GPUs must hold its share of the weights and of the caches of B
    sequences of L tokens in its usable memory (``parallel.tensor_parallel_fit``); if they do not,
    the verdict is "does not fit", no rate is given, and the levers are the ones that make it fit.
    Otherwise the ceilings are memory B x BW / (W / T + B (s K L + A_T)) and math T P / F
    (``parallel.tensor_parallel_on``; on one GPU ``generation.decode_point``'s
    B x BW / (W + B x (K x L + A)) and P / F), with P the rate the step's math runs at in
    ``math_precision`` (``precision.decode_math_rate``: the parts kept in 16 bits at BF16), and on
    several GPUs the step adds the all-reduces' time C. The verdict on a measured rate
    (``measured_tokens_per_s`` > 0; 0 means none) uses ``generation.regime``: within a factor
    ``near`` of the ceiling it is that wall, further below it is overhead."""
    a, c = accelerator(accelerator_name), model(model_name).config
    B = positive("batch", batch)
    L = non_negative("context_tokens", context_tokens)
    S = positive("prompt_tokens", prompt_tokens)
    measured = non_negative("measured_tokens_per_s", measured_tokens_per_s)
    near = fraction("near", near)
    T = _degree(gpus)
    check_scheme(weight_precision, math_precision)
    P, BW = decode_math_rate(a, c, weight_precision, math_precision, L), a.bandwidth_bytes_per_s
    K = kv_bytes_per_token(c, kv_precision)
    memory = tensor_parallel_fit(a, c, T, B, L, weight_precision, kv_precision)
    prompt_memory = tensor_parallel_fit(a, c, T, 1, S, weight_precision, kv_precision)
    point = decode_point(c, P, BW, B, L, weight_precision, kv_precision)
    crossover = tensor_parallel_prefill_crossover(a, c, T, weight_precision, kv_precision, math_precision)
    ttft = (mixed_step_s(a, c, 0, S, 0, S, None, T, weight_precision, kv_precision, math_precision)
            if prompt_memory.fits else None)
    prompt_comm = tensor_parallel_communication_s(a, c, T, S, logits_tokens=1) if prompt_memory.fits else None
    common = dict(accelerator_name=a.name, model_name=model_name, weight_precision=weight_precision,
                  math_precision=math_precision, kv_precision=kv_precision, batch=B, context_tokens=L,
                  prompt_tokens=S, gpus=T, measured_tokens_per_s=measured,
                  stored_weight_bytes=memory.weight_bytes * T, weight_bytes=point.weight_bytes,
                  kv_bytes_per_token=K, cache_bytes=point.cache_bytes, activation_bytes=point.activation_bytes,
                  capacity_bytes=a.capacity_bytes, memory=memory, prompt_memory=prompt_memory,
                  flops_per_token=point.flops_per_token, math_flop_per_s=P,
                  experts_touched=experts_touched_per_layer(c, B) if c.is_moe else None,
                  prefill_crossover_tokens=crossover, time_to_first_token_s=ttft,
                  prompt_communication_s=prompt_comm)
    if not memory.fits:
        levers = _fit_levers(a, c, weight_precision, kv_precision, math_precision, B, L, T, memory)
        return Card(**common, memory_ceiling=None, math_ceiling=None, weights_time_s=None, cache_time_s=None,
                    activation_time_s=None, math_time_s=None, communication_time_s=None, verdict=DOES_NOT_FIT,
                    levers=tuple(levers))
    step = tensor_parallel_on(a, c, T, B, L, weight_precision, kv_precision, math_precision)
    weights_b, cache_b, activation_b = tensor_parallel_read_bytes(c, T, point)
    mem, math_ = B / step.memory_s, B / step.math_s
    comm = step.communication_s
    if measured and measured > step.aggregate * 1.000001:
        verdict = ABOVE
    elif measured and regime(measured, B / (step.memory_s + comm), B / (step.math_s + comm), near) == OVERHEAD_BOUND:
        verdict = OVERHEAD
    elif step.wall == COMMUNICATION_BOUND:
        verdict = COMMUNICATION
    elif mem > math_:
        verdict = MATH_BOUND
    else:
        verdict = memory_verdict(weights_b, cache_b, activation_b)

    def attainable(wp=weight_precision, kp=kv_precision, b=B, on=a, mp=math_precision, g=T):
        return tensor_parallel_on(on, c, g, b, L, wp, kp, mp).aggregate

    levers = _levers(verdict, weight_precision, math_precision, kv_precision, c, a, B, L, T, attainable, step)
    return Card(**common, memory_ceiling=mem, math_ceiling=math_, weights_time_s=weights_b / BW,
                cache_time_s=cache_b / BW, activation_time_s=activation_b / BW, math_time_s=step.math_s,
                communication_time_s=comm, verdict=verdict, levers=tuple(levers))


def card_run(card: Card) -> dict:
    """The card's setup as a run for ``measured.predict``: T GPUs in tensor parallelism, B
    sequences (the nearest whole number, at least one) decoding at L tokens of context (the row's
    input_tokens, with no output counted, so the figure is one decode step's), aggregate tokens/s,
    in a compiled engine (no framework named)."""
    return dict(model=card.model_name, accelerator=card.accelerator_name, gpus=card.gpus, tp=card.gpus,
                weight_precision=card.weight_precision, math_precision=card.math_precision,
                kv_precision=card.kv_precision, batch=max(1, round(card.batch)), input_tokens=round(card.context_tokens),
                output_tokens=0, metric="tokens_per_s")


@datafiles.cached(maxsize=4096)
def _predicted(row: tuple) -> Prediction:
    """``measured.predict`` of a run given as a tuple of its fields, remembered: a widget that
    returns to a setup redraws at once."""
    return predict(dict(row))


def expected_rate(card: Card) -> Prediction | None:
    """What a good compiled engine is expected to reach on the card's setup (``measured.predict``):
    B over the expected step, t = sum over the kernels of max(bytes / (e BW), FLOPs / (m P)) + fixed
    costs + f C, where e is the share of the datasheet bandwidth the device's family delivers, m the
    share of the math rate, the fixed costs a cost per step, one per kernel and one per sequence, and f a factor on the
    all-reduces' time C, all fitted to the published runs (``expected``); with the interval that held
    80% of those runs' cross-validated misses. The card's ceiling caps all three: no run beats it.
    None if the setup does not fit: it gets no rate."""
    if not card.fits:
        return None
    p = _predicted(tuple(card_run(card).items()))
    c = card.ceiling
    return Prediction(min(p.expected, c), min(p.low, c), min(p.high, c), c, p.unit, p.metric)


def memory_verdict(weight_bytes: float, cache_bytes: float, activation_bytes: float) -> str:
    """A memory-bound step's verdict names the largest part of the bytes it moves: the weights,
    the KV caches, or the activations between kernels (ties go to that order)."""
    parts = {"weights": non_negative("weight_bytes", weight_bytes), "cache": non_negative("cache_bytes", cache_bytes),
             "activations": non_negative("activation_bytes", activation_bytes)}
    return MEMORY_VERDICTS[max(parts, key=parts.get)]


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


def _split_lever(a: Accelerator, c: Config, wp: str, kvp: str, mp: str, B: float, L: float, T: int) -> Lever:
    """Tensor parallelism over the fewest GPUs of one server, more than T, that hold the setup,
    with the rate it would reach there, the all-reduces counted."""
    more = next((g for g in TENSOR_PARALLEL_DEGREES if g > T and tensor_parallel_fit(a, c, g, B, L, wp, kvp).fits),
                None)
    if more is None:
        return Lever("split the model over more GPUs", False, None,
                     f"not even {TENSOR_PARALLEL_DEGREES[-1]} GPUs of one server hold it: it needs more servers "
                     "(pipeline or expert parallelism between them), which the card does not model")
    step = tensor_parallel_on(a, c, more, B, L, wp, kvp, mp)
    share = cache_share(c, more)
    return Lever(f"split the model over {more} GPUs", True, None,
                 f"each holds 1/{more} of the weights and " + (f"1/{1 / share:.3g}" if share < 1 else "all") + " of every cache; the all-reduces between "
                 f"them add {step.communication_s * 1e3:,.2f} ms to each step, which then reaches "
                 f"{step.aggregate:,.0f} tokens/s")


def _fit_levers(a: Accelerator, c: Config, weight_precision: str, kv_precision: str, math_precision: str, B: float,
                L: float, T: int, memory: Fit) -> list[Lever]:
    """What would make a setup that does not fit fit: lighter weights or cache, a shorter context,
    a smaller batch, or splitting the model over more GPUs."""
    out = []

    def lever(label, fits, why):
        out.append(Lever(label, fits, None, why))

    lighter = LIGHTER.get(weight_precision)
    if lighter:
        f = tensor_parallel_fit(a, c, T, B, L, lighter, kv_precision)
        lever(f"quantize the weights to {lighter}", f.fits, "then it fits" if f.fits else "still too large")
    kept = cached_tokens(c, L)
    lighter_kv = LIGHTER.get(kv_precision)
    if lighter_kv and kept:
        f = tensor_parallel_fit(a, c, T, B, L, weight_precision, lighter_kv)
        lever(f"quantize the KV cache to {lighter_kv}", f.fits, "then it fits" if f.fits else "still too large")
    k = kv_bytes_per_token(c, kv_precision) * cache_share(c, T)
    room_for_weights = memory.weight_bytes < memory.usable_bytes
    if kept:
        longest = max_context_tokens(a.capacity_bytes, memory.weight_bytes, k, B) if room_for_weights else 0
        lever("a shorter context", longest >= 1,
              f"at most {longest:,} tokens per sequence fit" if longest >= 1 else "the weights alone do not fit")
        most = max_sequences(a.capacity_bytes, memory.weight_bytes, k, kept) if room_for_weights else 0
        lever("a smaller batch", most >= 1 and most < B,
              f"at most {most:,} sequences of this context fit" if most >= 1 else "not even one sequence fits")
    out.append(_split_lever(a, c, weight_precision, kv_precision, math_precision, B, L, T))
    return out


def _levers(verdict, weight_precision, math_precision, kv_precision, c, a, B, L, T, attainable, step) -> list[Lever]:
    """Each lever's gain is the attainable rate (B over the step, communication included) with the
    lever applied over the rate now; it helps when that gain is at least ``WORTH_IT``, the lever's
    setup still fits, and nothing else is in charge."""
    now = step.aggregate
    memory_bound = verdict in MEMORY_VERDICTS.values()
    kept = cached_tokens(c, L)
    fits = lambda on=a, b=B, wp=weight_precision, g=T: tensor_parallel_fit(  # noqa: E731
        on, c, g, b, L, wp, kv_precision).fits
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
                   "overstates the bytes" + (", or its all-reduces are slower than the engine's, or not overlapped"
                                             if T > 1 else ""))
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
    fits_doubled = fits(b=2 * B)
    gain = attainable(b=2 * B) / now
    if not fits_doubled:
        why = "twice the caches would not fit in memory"
    elif gain >= WORTH_IT:
        why = f"the weight read is shared by more tokens; each user gets ×{gain / 2:.2f}"
    else:
        why = "each added sequence brings its own cache reads" if memory_bound else "math is already the limit"
    lever("batch twice as many sequences", gain, why, possible=fits_doubled, shares_host_cost=True)
    spec = speculative_on(a, c, None, B, EXAMPLE_ACCEPTANCE, EXAMPLE_DRAFT_TOKENS, L, weight_precision, kv_precision,
                          math_precision, T)
    lever("speculative decoding", spec.speedup,
          f"at most: a draft that costs nothing, {EXAMPLE_DRAFT_TOKENS} drafted tokens, {EXAMPLE_ACCEPTANCE:.0%} "
          f"accepted, gives {spec.tokens_per_step:.2f} tokens per read of the weights"
          + ("; a draft model split over the same GPUs pays its own all-reduces at each of its steps" if T > 1 else "")
          if spec.speedup >= WORTH_IT
          else f"checking {EXAMPLE_DRAFT_TOKENS + 1} tokens per sequence costs "
               + ("about what" if spec.speedup >= 1 else "more than") + " the accepted drafts return: little math is idle",
          possible=spec.fits)
    narrower = narrower_math(a, weight_precision, math_precision)
    if narrower is None:
        lever("narrower math", None, f"this part has no tensor-core mode narrower than {math_precision}", possible=False)
    else:
        m, wp = narrower
        label = f"{m} math" + ("" if wp == weight_precision else f" ({wp} weights)")
        fits_narrow = fits(wp=wp)
        gain = attainable(wp=wp, mp=m) / now if fits_narrow else None
        why = ("the step is paced by FLOP/s, and its products run faster in narrower numbers (what stays in 16 "
               "bits does not)" if verdict == MATH_BOUND else "the math units are not what limits this step")
        if wp != weight_precision and verdict != MATH_BOUND and gain and gain >= WORTH_IT:
            why = "the lighter weights it needs read fewer bytes; the faster math itself is not what limits the step"
        lever(label, gain, why, possible=fits_narrow)
    _gpu_levers(lever, attainable, fits, now, T, step, verdict)
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
        lever(f"a GPU with more {what}", None, f"no GPU in the book's table has more {what}", possible=False)
    elif not fits(on=best):
        lever(f"a GPU with more {what} ({best.name})", None, "the setup would not fit in its memory", possible=False)
    else:
        gain = attainable(on=best) / now
        lever(f"a GPU with more {what} ({best.name})", gain, why if gain >= WORTH_IT else "it would gain little")
    out.append(Lever("profile the step (host time, kernels, waits)", verdict == OVERHEAD, None,
                     "the measurement is far below both ceilings: something outside the two-resource model is "
                     "in charge" if verdict == OVERHEAD else "only needed when a measurement is far below both ceilings"))
    return out


def _gpu_levers(lever, attainable, fits, now, T, step, verdict) -> None:
    """More GPUs in tensor parallelism (the best count of one server above T) and, on several,
    fewer (the best count below T that still holds the setup), each priced with its all-reduces.
    More GPUs are a lever only for a memory-bound step: a compute-bound one gets more tokens per
    GPU from replicas, and a communication-bound one cannot shed its all-reduces by adding GPUs.
    Where both would help, only the better is marked."""
    more = [g for g in TENSOR_PARALLEL_DEGREES if g > T]
    fewer = [g for g in TENSOR_PARALLEL_DEGREES if g < T and fits(g=g)]
    up = max((attainable(g=g) / now, g) for g in more) if more else None
    down = max((attainable(g=g) / now, g) for g in fewer) if fewer else None
    memory_bound = verdict in MEMORY_VERDICTS.values()
    both = up and down and memory_bound and min(up[0], down[0]) >= WORTH_IT
    if up is None:
        lever("more GPUs", None, f"{T} is one server's; beyond it the GPUs talk over a network the card does not model",
              possible=False)
    else:
        gain, g = up
        per_gpu = f"each user ×{gain:.2f}, each GPU's tokens ×{gain * T / g:.2f}"
        if verdict == MATH_BOUND:
            why, possible = (f"the math divides ({per_gpu}), but {g // T} replicas would give ×{g // T} the tokens "
                             "at the same speed per user"), False
        elif verdict == COMMUNICATION:
            why, possible = f"{per_gpu}: added GPUs shrink the reads, never the all-reduces", False
        elif both and down[0] > gain:
            why, possible = "fewer GPUs would gain more", False
        else:
            why = per_gpu if gain >= WORTH_IT else "the all-reduces would cost about what the smaller shares save"
            possible = True
        lever(f"tensor parallel over {g} GPUs", gain, why, possible=possible)
    if down is not None:
        gain, g = down
        if both and up[0] >= gain:
            lever(f"fewer GPUs ({g})", gain, "more GPUs would gain more", possible=False)
        else:
            lever(f"fewer GPUs ({g})", gain,
                  f"the all-reduces ({step.communication_s * 1e3:,.2f} ms a step) cost more than the GPUs save: "
                  "each user is faster on fewer" if gain >= WORTH_IT else "each GPU would read more than the all-reduces save")
    elif T > 1:
        lever("fewer GPUs", None, "it would not fit on fewer", possible=False)


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
    Step("fit first, on each of T GPUs", r"W_\text{stored}/T + B \cdot s \cdot K \cdot L \le u \cdot \text{capacity}",
         "parallel.tensor_parallel_fit", "W_stored / T + B x s x K x L"),
    Step("weights a step reads", r"W = N \cdot b_w", "generation.weight_bytes_read_per_step",
         "N x bytes per weight"),
    Step("cache bytes per token", r"K = 2 \cdot n_\text{layers} \cdot n_{kv} \cdot d \cdot b_{kv}",
         "models.kv_bytes_per_token", "K = 2 x layers x kv_heads x head_dim x bytes"),
    Step("activations per token", r"A = \textstyle\sum_\text{kernels} (\text{in} + \text{out}) \cdot b_a",
         "activations.activation_bytes_per_token", "numbers read + numbers written"),
    Step("work per token", r"F \approx 2N + 4\, n_\text{layers}\, n_q\, d\, L", "generation.decode_flops_per_token",
         "F = 2N"),
    Step("memory ceiling", r"\dfrac{B \cdot BW}{W/T + B\,(s K L + A_T)}", "parallel.tensor_parallel_on",
         "B x BW / (W / T + B (s K L + A_T))"),
    Step("math ceiling", r"\dfrac{T P}{F}", "parallel.tensor_parallel_on", "T P / F"),
    Step("math rate at its precision", r"P = \dfrac{F}{\sum_i F_i / P_i}", "precision.decode_math_rate",
         "over their summed times"),
    Step("all-reduces between the GPUs",
         r"C = (2 n_\text{layers} + 1)\left(\alpha + \tfrac{2(T-1)}{T} \cdot \dfrac{B h b_a}{BW_\text{link}}\right)"
         r" + t_\text{gather}", "parallel.tensor_parallel_communication_s",
         "(2 n + 1) t_allreduce(B h) + t_gather(B V)"),
    Step("the step and its rate", r"\dfrac{B}{\max(t_\text{math},\, t_\text{memory}) + C}", "parallel.ParallelStep",
         "max(math, memory) + communication"),
    Step("expected in a good compiled engine",
         r"\dfrac{B}{\sum_\text{kernels} \max\!\left(\dfrac{\text{bytes}}{e\,BW},\, \dfrac{F}{m\,P}\right)"
         r" + t_\text{fixed} + f\,C}", "indexcard.expected_rate",
         "sum over the kernels of max(bytes / (e BW), FLOPs / (m P)) + fixed costs + f C"),
    Step("prefill turns compute-bound", r"S^*\!:\; F_\text{prefill}(S^*) = \tfrac{P}{BW}\,\bigl(W + S^*(K + A)\bigr)",
         "generation.prefill_crossover_prompt_tokens", "prefill FLOPs / P = (W + S x (K + A)) / BW"),
    Step("time to first token",
         r"\max\!\left(\dfrac{F_\text{prefill}}{T P},\; \dfrac{W/T + S\,(s K + A_T)}{BW}\right) + C_S",
         "serving.mixed_step_s", "(W(D + Q) / T + s (D K L + Q K"),
    Step("verdict on a measurement", r"r < \tfrac{1}{2} \cdot \text{ceiling} \Rightarrow \text{far below both}",
         "generation.regime", "within a factor ``near`` of the lower ceiling"),
)


def prompt_does_not_fit(card: Card) -> str:
    """Why a prompt cannot be read: the weights alone do not fit, or the prompt's cache does not."""
    if card.prompt_memory.weight_bytes > card.prompt_memory.usable_bytes:
        return "the weights alone do not fit"
    return "its cache does not fit beside the weights"


def _gb(x: float) -> str:
    """Bytes as GB, with three significant figures below 10 GB (so a small shortfall still shows)."""
    return f"{x / GB:,.3g} GB" if x < 10 * GB else f"{x / GB:,.1f} GB"


def _tokens_per_s(x: float | None) -> str:
    return f"{x:,.0f} tokens/s" if x is not None else "none: it does not fit"


def _rate(x: float) -> str:
    """A rate as the card prints it: whole tokens/s from 100 up, three significant figures below."""
    return f"{x:,.0f}" if x >= 100 else f"{x:,.3g}"


def interval_text(p: Prediction) -> str:
    """The expected rate and its interval, short: "121 (69–160)"."""
    return f"{_rate(p.expected)} ({_rate(p.low)}–{_rate(p.high)})"


def expected_line(card: Card) -> str:
    """"expected X tokens/s (80%: a–b), ceiling C", or for a setup that does not fit, why there is no rate."""
    p = card.expected
    if p is None:
        return "none: it does not fit"
    return (f"expected {_rate(p.expected)} tokens/s ({INTERVAL_SHARE:.0%}: {_rate(p.low)}–{_rate(p.high)}), "
            f"ceiling {_rate(p.ceiling)}")


def _per_gpu(card: Card) -> str:
    return "" if card.gpus == 1 else f" per GPU, T = {card.gpus}"


def _communication(card: Card) -> str:
    """The communication line: none on one GPU; otherwise C per step and the link it crosses."""
    if card.gpus == 1:
        return "none: one GPU"
    if not card.fits:
        return "none: it does not fit"
    return (f"{card.communication_time_s * 1e3:,.3g} ms per step over {accelerator(card.accelerator_name).link.kind}, "
            f"T = {card.gpus}")


def card_rows(card: Card) -> list[tuple[str, str, str]]:
    """The printed card: (step, formula, this setup's value) for every step of ``STEPS``. A setup
    that does not fit gets "does not fit" and no rate."""
    m = card.memory
    fits = (f"{m.needed_bytes / GB:,.1f} of {m.usable_bytes / GB:,.1f} GB{_per_gpu(card)}: "
            + ("fits" if m.fits else f"does not fit, {_gb(m.missing_bytes)} short"))
    ttft = (f"{card.time_to_first_token_s * 1e3:,.1f} ms for {card.prompt_tokens:,.0f} tokens"
            if card.time_to_first_token_s is not None else f"none: {prompt_does_not_fit(card)}")
    if not card.fits:
        verdict = f"no verdict on a rate: {card.verdict}"
    elif card.measured_tokens_per_s:
        verdict = (f"{card.measured_tokens_per_s:,.0f} tokens/s is {card.share_of_ceiling:.0%} of the ceiling: "
                   f"{card.verdict}; {card.position} the expected rate's {INTERVAL_SHARE:.0%} interval")
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
        _communication(card),
        (f"{card.step_time_s * 1e3:,.3g} ms: {card.ceiling:,.0f} tokens/s" if card.fits else "none: it does not fit"),
        expected_line(card),
        f"{card.prefill_crossover_tokens:,.0f} tokens",
        ttft,
        verdict,
    ]
    return [(s.what, f"${s.formula}$", v) for s, v in zip(STEPS, values)]


def summary_lines(card: Card) -> list[str]:
    """The card's answer in a few short lines: fit, ceilings, wall, where the time goes, prefill, the
    expected rate and its interval, measurement and where it falls in that interval, levers (✓
    helps, ✗ does not). A setup that does not fit says so first and states no rate."""
    ms = 1e3
    m = card.memory
    setup = (f"B = {card.batch:,.4g}, L = {card.context_tokens:,.0f}, S = {card.prompt_tokens:,.0f} tokens; "
             f"{card.weight_precision} weights, {card.math_precision} math, {card.kv_precision} cache")
    memory = f"memory: {m.needed_bytes / GB:,.0f} of {m.usable_bytes / GB:,.0f} GB usable{_per_gpu(card)}"
    if not card.fits:
        lines = [f"<b>{card.verdict}: {_gb(m.missing_bytes)} short</b>", setup,
                 memory + " — no rate: it cannot run"]
    else:
        lines = [f"<b>{card.verdict}</b>", setup,
                 f"memory ceiling {card.memory_ceiling:,.0f} tokens/s, math ceiling {card.math_ceiling:,.0f}"
                 + (" (without the all-reduces)" if card.gpus > 1 else ""),
                 "per step: " + ", ".join(f"{part} {t * ms:,.3g} ms" for part, t in (
                     ("weights", card.weights_time_s), ("caches", card.cache_time_s),
                     ("activations", card.activation_time_s), ("math", card.math_time_s))
                     + ((("all-reduces", card.communication_time_s),) if card.gpus > 1 else ())),
                 memory]
        if card.gpus > 1:
            lines.insert(3, f"on {card.gpus} GPUs with their all-reduces: {card.ceiling:,.0f} tokens/s, "
                            f"{card.ceiling / card.batch:,.0f} per user")
    if card.experts_touched is not None:
        c = model(card.model_name).config
        lines.append(f"experts: a step of {card.batch:,.4g} touches {card.experts_touched:,.1f} of {c.routed_experts} "
                     f"per layer (one token: {c.num_experts_per_tok})")
    if card.time_to_first_token_s is not None:
        lines.append(f"prefill of {card.prompt_tokens:,.0f} tokens: {card.prefill_wall} "
                     f"(from {card.prefill_crossover_tokens:,.0f}), first token of a lone prompt after "
                     f"{card.time_to_first_token_s * ms:,.1f} ms")
    else:
        lines.append(f"prefill of {card.prompt_tokens:,.0f} tokens: {prompt_does_not_fit(card)}")
    if card.fits:
        lines.append(expected_line(card))
    if card.measured_tokens_per_s and card.fits:
        lines.append(f"measured {card.measured_tokens_per_s:,.0f} tokens/s = {card.share_of_ceiling:.1%} of the ceiling")
        lines.append(POSITIONS[card.position])
    elif card.measured_tokens_per_s:
        lines.append("a measured rate was given, but this setup cannot run as described: check the inputs")
    else:
        lines.append("no measured rate given")
    lines.append("<b>levers</b>" if card.fits else "<b>levers that make it fit</b>")
    for lever in card.levers:
        gain = f" ×{lever.gain:.2f}" if lever.gain is not None and lever.helps else ""
        lines.append(f"{'✓' if lever.helps else '✗'} {lever.name}{gain}")
    return lines
