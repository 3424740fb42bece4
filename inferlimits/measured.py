"""Published measurements held against the book's ceilings.

For each row of ``data/measurements.toml`` the book computes its ceiling under the same conditions:
the same model, precisions, batch, prompt and output lengths, on the same number of devices. Every
measured figure is turned into a rate with its ceiling in the same unit:

- decode (``tokens_per_s``, ``tokens_per_s_per_user``, ``ms_per_output_token``): generated tokens
  per second, all sequences together, against the decode ceiling at the mean context of the run
  (the prompt plus half the output; a step's time is a convex function of the context, so the
  ceiling at the mean bounds the average rate);
- time to first token (``ms_to_first_token``): prompt tokens per second, against the one-pass
  prefill of the prompt;
- a whole request (``ms_end_to_end``): generated tokens per second of the request's time, against
  the prefill plus every decode step.

Several devices (tensor parallelism) are one device with T times the math, the bandwidth and the
memory: the communication between them is left out, so the ceiling stays an upper bound. A
condition the source leaves out is filled in on the generous side: an unstated batch is the largest
that fits in the whole memory, an unstated KV-cache precision is FP8 when the math is FP8 (else BF16), unstated lengths
are zero. So a measured rate above its ceiling is an error in the data or in the model.
"""
from __future__ import annotations

from dataclasses import dataclass

from .generation import COMPUTE_BOUND, MEMORY_BOUND, OVERHEAD_BOUND, decode_point, prefill_point
from .hardware import Accelerator, device
from .kvcache import fit, max_sequences
from .measurements import DECODE_METRICS, Measurement, measurements
from .models import kv_bytes_per_token, model, weight_bytes

#: a measured rate at least this share of its ceiling is bound by that ceiling's wall (the book's
#: rule, as in ``generation.regime``); below it, far below both ceilings
NEAR = 0.5


@dataclass(frozen=True)
class Comparison:
    """One measurement beside its ceiling: both as rates in ``unit``."""

    measurement: Measurement
    unit: str
    measured: float          # the measured figure as a rate
    ceiling: float           # the book's ceiling under the same conditions, same unit
    wall: str                # which wall the ceiling is (MEMORY_BOUND or COMPUTE_BOUND)
    batch: float             # the batch the ceiling was computed at
    context_tokens: float    # the context of a decode step (mean over the run)
    fits: bool               # under the book's rule (the usable share of the reported memory)
    fits_whole: bool         # in the whole reported memory: a measured setup must

    @property
    def share(self) -> float:
        """The measured rate as a share of the ceiling."""
        return self.measured / self.ceiling

    @property
    def regime(self) -> str:
        """The book's rule: within a factor of two of the ceiling, bound by its wall; else far below."""
        return self.wall if self.share >= NEAR else OVERHEAD_BOUND


def math_rate(a: Accelerator, math_precision: str) -> float:
    """The dense math rate of one device for ``math_precision`` (BF16 or FP16 products, or FP8)."""
    if math_precision == "FP8":
        if a.dense_fp8_flops_per_s is None:
            raise ValueError(f"math_precision FP8: the data has no dense FP8 rate for {a.name}")
        return a.dense_fp8_flops_per_s
    return a.dense_bf16_flops_per_s


def cache_precision(m: Measurement) -> str:
    """The KV cache's precision: as stated, else FP8 when the math is FP8 (else BF16), the generous reading."""
    if m.kv_precision != "unstated":
        return m.kv_precision
    return "FP8" if m.math_precision == "FP8" else "BF16"


def _largest_batch(capacity: float, w: float, k: float, longest: float) -> int:
    """The largest batch whose caches of ``longest`` tokens fit beside the weights in the whole
    memory (at least 1): the generous reading of a batch the source does not state."""
    return max(1, max_sequences(capacity, w, k, longest, usable_fraction=1.0)) if longest else 1


def compare(m: Measurement) -> Comparison:
    """The measurement ``m`` beside the book's ceiling under its conditions."""
    c = model(m.model).config
    a = device(m.accelerator)
    T = m.gpus
    peak, bw, capacity = T * math_rate(a, m.math_precision), T * a.bandwidth_bytes_per_s, T * a.capacity_bytes
    kv = cache_precision(m)
    S = m.input_tokens or 0
    n = m.output_tokens or 0
    w, k = weight_bytes(c, m.weight_precision), kv_bytes_per_token(c, kv)
    longest = S + n
    B = m.batch if m.batch is not None else _largest_batch(capacity, w, k, longest)
    fits = fit(capacity, w, k, B, longest).fits
    fits_whole = fit(capacity, w, k, B, longest, usable_fraction=1.0).fits
    L = S + n / 2
    if m.metric in DECODE_METRICS:
        p = decode_point(c, peak, bw, B, L, m.weight_precision, kv)
        return Comparison(m, "generated tokens per second", m.decode_tokens_per_s(B), p.ceiling, p.wall, B, L, fits, fits_whole)
    if m.metric == "ms_to_first_token":
        p = prefill_point(c, peak, bw, S, m.weight_precision, kv)
        return Comparison(m, "prompt tokens per second", S / (m.value / 1e3), S / p.time_s, p.wall, 1, 0, fits, fits_whole)
    if m.metric == "ms_end_to_end":
        pre = prefill_point(c, peak, bw, S, m.weight_precision, kv)
        step = decode_point(c, peak, bw, B, L, m.weight_precision, kv)
        best = pre.time_s + n * B / step.ceiling
        return Comparison(m, "generated tokens per second of the whole request", n * B / (m.value / 1e3),
                          n * B / best, step.wall, B, L, fits, fits_whole)
    raise ValueError(f"metric of {m.key} must be one of the decode metrics, ms_to_first_token or "
                     f"ms_end_to_end; got {m.metric!r}")


def comparisons() -> dict[str, Comparison]:
    """Every measurement beside its ceiling, in file order."""
    return {key: compare(m) for key, m in measurements().items()}


def good_decode() -> list[Comparison]:
    """The runs that show what good single-stream decode reaches: clear rows of one sequence on one
    device with 16-bit weights that the book's rule finds memory-bound (eager loops fall below)."""
    return [c for c in comparisons().values()
            if c.measurement.clear and c.measurement.metric in DECODE_METRICS and c.measurement.batch == 1
            and c.measurement.gpus == 1 and c.measurement.weight_precision in ("BF16", "FP16")
            and c.regime == MEMORY_BOUND]


def typical_decode_share() -> tuple[float, float]:
    """The lowest and highest share of its memory ceiling that a good single-stream decode reaches."""
    shares = [c.share for c in good_decode()]
    return min(shares), max(shares)
