"""Published measurements held against the book's ceilings.

For each row of ``data/measurements.toml`` the book computes a ceiling under the same conditions:
the same model, stored formats, batch, prompt and output lengths, on the same number of devices.
The ceiling must be an upper bound that no real run can beat, so it counts only the bytes no
engine can avoid, the weights a step multiplies (in the format the row's engine stores them, with
their group scales) and the KV cache, and leaves out the activations' traffic, which depends on how
an engine fuses its kernels. Every measured figure becomes a rate, with its ceiling in the same unit:

- decode (``tokens_per_s``, ``tokens_per_s_per_user``, ``ms_per_output_token``): generated tokens
  per second, all sequences together, against the decode ceiling at the run's mean context (the
  prompt plus half the output: a step's time is a convex function of its context, so the ceiling
  at the mean bounds the average rate); where the source says its time holds the prefill too
  (``prefill_in_time``) and the output length is known, against the whole run: one prefill of every
  prompt, then the remaining decode steps;
- time to first token (``ms_to_first_token``): prompt tokens per second, against one prefill pass;
- a whole request (``ms_end_to_end``): generated tokens per second of its time, against the prefill
  and the decode steps after it.

Several devices (tensor parallelism) are one device with T times the math, the bandwidth and the
memory, and each decode step adds the communication between them at the book's collective latency
(``parallel.tensor_parallel_communication_s``: two all-reduces a layer, one gather of the logits);
any weight a real engine keeps whole on every device is left out, and so is the communication of a
prefill, which keeps the ceiling generous. A condition the source leaves out is filled
in on the generous side: an unstated batch gives the best ceiling at any batch (the lower of the
math ceiling and the cache-only limit BW / (K x L)), an unstated KV-cache precision is FP8 when the
math is FP8 (else BF16), and unstated lengths are zero.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from inferlimits.data import datafiles
from inferlimits.arithmetic.generation import (COMPUTE_BOUND, MEMORY_BOUND, OVERHEAD_BOUND, decode_flops_per_token,
                                               math_ceiling_tokens_per_s, memory_ceiling_tokens_per_s, prefill_flops,
                                               weight_bytes_read_per_step)
from inferlimits.data.hardware import Accelerator, device
from inferlimits.arithmetic.kvcache import fit, max_sequences
from inferlimits.data.measurements import DECODE_METRICS, Measurement, measurements
from inferlimits.arithmetic.parallel import tensor_parallel_communication_s
from inferlimits.data.models import (Config, cached_tokens, embedding_params, kept_precision, kv_bytes_per_token,
                                     model, multiplied_params_per_token, weight_bytes)
from inferlimits.arithmetic.roofline import step_time_s
from inferlimits.data.units import bytes_per_element, positive, storage_format

#: a measured rate at least this share of its ceiling is bound by that ceiling's wall (the book's
#: rule, as in ``generation.regime``); below it, far below both ceilings
NEAR = 0.5
#: the scales of an INT4 group: a 16-bit scale and a 16-bit zero point
GROUP_SCALE_BYTES = 4
#: what a comparison's two rates count, by its kind
KINDS = {"decode": "generated tokens per second",
         "first token": "prompt tokens per second",
         "whole run": "generated tokens per second of the whole run, prefill included"}
#: the metrics that time one sequence: with the batch unstated, the ceiling is that of one sequence alone
PER_SEQUENCE = ("tokens_per_s_per_user", "ms_per_output_token", "ms_to_first_token", "ms_end_to_end")
#: the weight formats of the runs that show what good single-stream decode reaches
SIXTEEN_BIT = ("BF16", "FP16")


@dataclass(frozen=True)
class Comparison:
    """One measurement beside its ceiling: both as rates in ``unit``."""

    measurement: Measurement
    kind: str                # one of KINDS: what the two rates count
    measured: float          # the measured figure as a rate
    ceiling: float           # the book's ceiling under the same conditions, same unit
    wall: str                # which wall the ceiling is (MEMORY_BOUND or COMPUTE_BOUND)
    batch: float | None      # the batch the ceiling was computed at (None: any batch)
    context_tokens: float    # the context of a decode step (mean over the run)
    weight_bytes: float      # W, the weight bytes a step reads
    fits: bool | None        # under the book's rule (None where the batch is unstated)
    fits_whole: bool | None  # in the whole reported memory: a measured setup must

    @property
    def unit(self) -> str:
        return KINDS[self.kind]

    @property
    def share(self) -> float:
        """The measured rate as a share of the ceiling."""
        return self.measured / self.ceiling

    @property
    def regime(self) -> str:
        """The book's rule: within a factor of two of the ceiling, bound by its wall; else far below."""
        return self.wall if self.share >= NEAR else OVERHEAD_BOUND


def math_rate(a: Accelerator, math_precision: str) -> float:
    """The dense math rate of one device for ``math_precision`` (``Accelerator.math_flops_per_s``;
    FP16 runs at the BF16 rate), or for "unstated" the device's 16-bit rate, which then may not name
    the wall (see ``compare``). Every product of the step is charged at this one rate, the
    generous reading: an engine that keeps its output head or its attention in 16 bits is slower."""
    if math_precision in ("FP16", "unstated"):
        return a.dense_bf16_flops_per_s
    return a.math_flops_per_s(math_precision)


def cache_precision(m: Measurement) -> str:
    """The KV cache's precision: as stated, else FP8 when the math is FP8 (else BF16), the generous reading."""
    if m.kv_precision != "unstated":
        return m.kv_precision
    return "FP8" if m.math_precision == "FP8" else "BF16"


def bytes_per_weight(precision: str, group_size: int | None = None) -> float:
    """Bytes a stored weight takes, with its share of its group's scales: the format's own
    (``bytes_per_element``), or, where the row names its groups, element bits / 8 +
    GROUP_SCALE_BYTES / group_size in place of the format's."""
    if not group_size:
        return bytes_per_element(precision)
    return storage_format(precision).element_bits / 8 + GROUP_SCALE_BYTES / group_size


def weights_read(m: Measurement, c: Config, tokens: float = 1) -> float:
    """W: the weight bytes one step over ``tokens`` tokens of the row's engine reads, every weight a
    token multiplies, in the format the row stores it: by the book's rule
    (``generation.weight_bytes_read_per_step``), or, where the row says how its engine stores the
    output head and the groups' scales, with those."""
    if m.head_precision is None and m.group_size is None:
        return weight_bytes_read_per_step(c, m.weight_precision, tokens)
    if c.is_moe or c.tie_word_embeddings:
        raise ValueError(f"{m.key}: head_precision and group_size are for dense models with their own output head")
    head = embedding_params(c)  # the output head: one vocabulary-sized matrix, as the input table
    body = multiplied_params_per_token(c) - head
    head_bytes = (bytes_per_weight(m.head_precision, m.group_size) if m.head_precision
                  else bytes_per_element(kept_precision()))
    return body * bytes_per_weight(m.weight_precision, m.group_size) + head * head_bytes


def stored_bytes(m: Measurement, c: Config) -> float:
    """What memory holds: the weights a step reads, and the input embedding table (kept in BF16 by a
    quantizing engine, at the file's format in llama.cpp's; ``models.weight_bytes``)."""
    if m.head_precision is None and m.group_size is None:
        return weight_bytes(c, m.weight_precision)
    return weights_read(m, c) + embedding_params(c) * bytes_per_element(kept_precision())


def _prefill_time(c: Config, peak: float, bw: float, w: float, k: float, batch: float, prompt: float) -> float:
    """One pass over ``batch`` prompts of ``prompt`` tokens: their math, or the weights read once
    and the cache written, whichever takes longer."""
    return step_time_s(batch * prefill_flops(c, prompt), w + batch * prompt * k, peak, bw)


def _communication_s(m: Measurement, a: Accelerator, c: Config, tokens: float) -> float:
    """What the ceiling charges for talking between devices in one pass over ``tokens`` tokens: the
    tensor-parallel all-reduces over the row's tensor-parallel group (every device where the row
    states no layout), and nothing for a mixture of experts spread by expert parallelism, whose
    all-to-alls the ceiling leaves out, the generous side."""
    if c.is_moe and (m.ep or m.attention_dp):
        return 0.0
    return tensor_parallel_communication_s(a, c, m.tp or m.gpus, tokens)


def compare(m: Measurement) -> Comparison:
    """The measurement ``m`` beside the book's ceiling under its conditions."""
    c = model(m.model).config
    a = device(m.accelerator)
    T = m.gpus
    peak, bw, capacity = T * math_rate(a, m.math_precision), T * a.bandwidth_bytes_per_s, T * a.capacity_bytes
    k = kv_bytes_per_token(c, cache_precision(m))
    S, n = m.input_tokens or 0, m.output_tokens or 0
    q = 1 + (m.draft_tokens or 0)  # the tokens of a sequence one verify pass can accept
    L = S + n / 2
    kept = cached_tokens(c, L)
    math_ceiling = math_ceiling_tokens_per_s(peak, decode_flops_per_token(c, L))
    stored = stored_bytes(m, c)
    B = m.sequences
    if B is None and m.metric in PER_SEQUENCE:  # one sequence's pace: fastest alone
        B = 1
    if B is None and kept:  # the engine's own batch: the most sequences of the run's mean context that fit
        B = max(1, max_sequences(capacity, stored, k, kept, usable_fraction=1.0))
    if B is None:  # any batch, and no cache: the math ceiling
        if m.metric not in ("tokens_per_s", "tokens_per_s_per_gpu"):
            raise ValueError(f"{m.key}: a row without its batch must give tokens_per_s or tokens_per_s_per_gpu")
        return Comparison(m, "decode", m.decode_tokens_per_s(), math_ceiling * q, COMPUTE_BOUND, None, L,
                          weights_read(m, c), None, None)
    w = weights_read(m, c, B * q)
    if m.sequences is None:  # the batch is the book's, sized to fit
        fits = fits_whole = None
    else:
        fits = fit(capacity, stored, k, B, S + n).fits
        fits_whole = fit(capacity, stored, k, B, S + n, usable_fraction=1.0).fits
    memory = memory_ceiling_tokens_per_s(bw, w, B, k, kept, 1.0, 0.0)  # per verify pass: B sequences
    # one pass: the weights and caches read once, the math of B q tokens, and the exchanges
    step = max(B / memory, B * q / math_ceiling) + _communication_s(m, a, c, B * q)
    wall = MEMORY_BOUND if B / memory >= B * q / math_ceiling else COMPUTE_BOUND
    if m.metric == "ms_to_first_token":
        w = weights_read(m, c, S)
        t = _prefill_time(c, peak, bw, w, k, 1, S)
        wall = COMPUTE_BOUND if prefill_flops(c, S) / peak >= (w + S * k) / bw else MEMORY_BOUND
        return Comparison(m, "first token", S / (m.value / 1e3), S / t, wall, 1, 0, w, fits, fits_whole)
    whole_run = m.metric == "ms_end_to_end" or (n > 0 and S > 0 and m.serving != "disaggregated"
                                                and (m.prefill_in_time or m.batch is None))
    if whole_run:  # the prefill gives the first token of each sequence; at best q per pass follow
        best = _prefill_time(c, peak, bw, weights_read(m, c, B), k, B, S) + (n - 1) / q * step
        measured = B * n / (m.value / 1e3) if m.metric == "ms_end_to_end" else m.decode_tokens_per_s(B)
        return Comparison(m, "whole run", measured, B * n / best, wall, B, L, w,
                          fits, fits_whole)
    if m.metric not in DECODE_METRICS:
        raise ValueError(f"metric of {m.key} must be one of the decode metrics, ms_to_first_token or "
                         f"ms_end_to_end; got {m.metric!r}")
    return Comparison(m, "decode", m.decode_tokens_per_s(B), B * q / step, wall, B, L, w,
                      fits, fits_whole)


@datafiles.cached
def comparisons() -> dict[str, Comparison]:
    """Every measurement beside its ceiling, in file order (computed once per reading of the data)."""
    out = {}
    for key, m in measurements().items():
        cmp = compare(m)
        if m.clear and m.math_precision == "unstated" and cmp.wall == COMPUTE_BOUND:
            raise ValueError(f"{key}: the math rate of an unstated precision cannot name the wall")
        out[key] = cmp
    return out


def good_decode() -> list[Comparison]:
    """What good single-stream decode reaches: the clear rows of one sequence on one device with
    16-bit weights, from compiled engines (an eager loop is the overhead chapter's subject)."""
    return [c for c in comparisons().values()
            if c.measurement.clear and c.measurement.metric in DECODE_METRICS and c.measurement.batch == 1
            and c.measurement.gpus == 1 and c.measurement.weight_precision in SIXTEEN_BIT
            and "eager" not in c.measurement.framework.lower()]


def good_decode_setup() -> str:
    """Where the runs of ``good_decode`` ran, in words: "A100 80GB SXM at 330 W"."""
    runs = [c.measurement for c in good_decode()]
    where = sorted({m.accelerator + (f" at {m.power_limit_w:g} W" if m.power_limit_w else "") for m in runs})
    return ", ".join(where)


def typical_decode_share() -> tuple[float, float]:
    """The lowest and highest share of its memory ceiling that a good single-stream decode reaches."""
    shares = [c.share for c in good_decode()]
    return min(shares), max(shares)


def implied_bytes_per_step(m: Measurement) -> float | None:
    """The bytes per step the source's own bandwidth figure implies (its bandwidth over its rate)."""
    return None if m.reported_bandwidth_gb_s is None else m.reported_bandwidth_gb_s * 1e9 / m.decode_tokens_per_s()


# ---- the expected rate (arithmetic/expected.py) ---------------------------------------------

@dataclass(frozen=True)
class Prediction:
    """What the book expects of a run, in the run's own metric: ``expected``, the 80% interval
    ``low`` to ``high``, and the ``ceiling`` (for a time, the least time: ``bound``)."""

    expected: float
    low: float
    high: float
    ceiling: float
    unit: str
    metric: str
    fits: bool | None = None  # the setup in the memory it names, under the book's rule (None: the engine's batch)

    def position(self, measured: float) -> str:
        """Where a measured figure falls: "below", "inside" or "above" the interval (for a time,
        "below" is faster)."""
        x = positive("measured", measured)
        return "below" if x < self.low else "above" if x > self.high else "inside"


#: each metric's unit, as a prediction prints it
METRIC_UNITS = {"tokens_per_s": "tokens/s", "tokens_per_s_per_user": "tokens/s per user",
                "ms_per_output_token": "ms per output token", "ms_to_first_token": "ms to first token",
                "ms_end_to_end": "ms end to end", "tokens_per_s_per_gpu": "tokens/s per GPU"}


def _in_metric(m: Measurement, cmp: Comparison) -> float:
    """The comparison's ceiling rate in ``m``'s own metric."""
    B, S, n = cmp.batch or 1, m.input_tokens or 0, m.output_tokens or 0
    r = cmp.ceiling
    return {"tokens_per_s": r, "tokens_per_s_per_gpu": r / m.counted_gpus, "tokens_per_s_per_user": r / B, "ms_per_output_token": 1e3 * B / r,
            "ms_to_first_token": 1e3 * S / r if S else 1e3 / r, "ms_end_to_end": 1e3 * B * max(n, 1) / r}[m.metric]


@datafiles.cached
def fitted():
    """The expected-rate model fitted to every published run (``expected.fit_runs``)."""
    from inferlimits.arithmetic import expected
    return expected.fit_runs(list(measurements().values()))


def predict(row: dict) -> Prediction:
    """The expected figure of a run described by ``row`` (a dict with the fields of
    measurements.toml), with its 80% interval from the cross-validated misses and its ceiling,
    all in the row's own metric, and whether the setup fits (fit first: a setup that does not
    fit has no real rate, whatever the arithmetic gives). Unknown fields are ignored; bad input raises a ValueError naming
    the field."""
    from inferlimits.arithmetic import expected
    from inferlimits.data.measurements import run
    m = run(row)
    f = fitted()
    log_value = float(expected.Design([expected.plan(m)]).log_values(f.theta)[0])
    lo, hi = expected._interval(f.log_measured - f.log_cross)
    cmp = compare(m)
    return Prediction(math.exp(log_value), math.exp(log_value + lo), math.exp(log_value + hi),
                      _in_metric(m, cmp), METRIC_UNITS[m.metric], m.metric, cmp.fits)
