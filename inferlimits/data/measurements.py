"""Published measurements from ``data/measurements.toml``: what one setup reached, under which
conditions, and where it is published (the file's header says what each field means)."""
from __future__ import annotations

from dataclasses import dataclass

from inferlimits.data import datafiles
from inferlimits.data.units import positive

#: metrics of the decode phase, and what each says
DECODE_METRICS = {
    "tokens_per_s": "generated tokens per second, all sequences together",
    "tokens_per_s_per_user": "generated tokens per second of one sequence",
    "ms_per_output_token": "milliseconds between two generated tokens of one sequence",
}
METRICS = {**DECODE_METRICS,
           "ms_to_first_token": "milliseconds from the request to its first generated token",
           "ms_end_to_end": "milliseconds from the request to its last generated token"}
UNSTATED = "unstated"


@dataclass(frozen=True)
class Measurement:
    """One published measurement. ``batch``, ``input_tokens`` and ``output_tokens`` are None where
    the source does not state them; ``clear`` is False where a condition the ceiling needs is
    unclear, and such a row is shown but not used for a claim."""

    key: str
    model: str
    accelerator: str
    gpus: int
    weight_precision: str
    math_precision: str
    kv_precision: str
    batch: int | None
    input_tokens: int | None
    output_tokens: int | None
    metric: str
    value: float | int       # as published (a whole number stays one)
    framework: str
    framework_version: str
    date: str
    clear: bool
    setup: str
    source: str
    quote: str
    power_limit_w: float | None = None
    head_precision: str | None = None
    group_size: int | None = None
    prefill_in_time: bool = False
    reported_bandwidth_gb_s: float | None = None
    observed_peak_bandwidth_gb_s: float | None = None

    def decode_tokens_per_s(self, batch: float | None = None) -> float:
        """The measured decode rate, all sequences together (``batch`` for the per-sequence metrics
        when the row states none)."""
        b = self.batch if self.batch is not None else batch
        if self.metric == "tokens_per_s":
            return self.value
        if b is None:
            raise ValueError(f"{self.key}: a per-sequence metric needs the batch")
        if self.metric == "tokens_per_s_per_user":
            return self.value * b
        if self.metric == "ms_per_output_token":
            return b * 1e3 / self.value
        raise ValueError(f"{self.key}: {self.metric} is not a decode metric")

    @property
    def tokens_per_s(self) -> float:
        """The measured decode rate, all sequences together."""
        return self.decode_tokens_per_s()


def _stated(row: dict, field: str) -> int | None:
    value = row[field]
    if value == UNSTATED:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{field} must be a whole number of at least 0 or {UNSTATED!r}; got {value!r}")
    return value


def _from_row(key: str, row: dict) -> Measurement:
    if row["metric"] not in METRICS:
        raise ValueError(f"{key}: metric must be one of {', '.join(METRICS)}; got {row['metric']!r}")
    missing = [f for f in ("source", "quote", "setup", "framework", "date") if not str(row.get(f, "")).strip()]
    if missing:
        raise ValueError(f"{key}: give {', '.join(missing)}")
    positive(f"value of {key}", row["value"])
    return Measurement(key=key, model=row["model"], accelerator=row["accelerator"], gpus=int(row.get("gpus", 1)),
                       weight_precision=row["weight_precision"], math_precision=row["math_precision"],
                       kv_precision=row["kv_precision"], batch=_stated(row, "batch"),
                       input_tokens=_stated(row, "input_tokens"), output_tokens=_stated(row, "output_tokens"),
                       metric=row["metric"], value=row["value"], framework=row["framework"],
                       framework_version=row["framework_version"], date=row["date"], clear=bool(row["clear"]),
                       setup=row["setup"], source=row["source"], quote=row["quote"],
                       power_limit_w=_optional(row, "power_limit_w"), head_precision=row.get("head_precision"),
                       group_size=row.get("group_size"), prefill_in_time=bool(row.get("prefill_in_time", False)),
                       reported_bandwidth_gb_s=_optional(row, "reported_bandwidth_gb_s"),
                       observed_peak_bandwidth_gb_s=_optional(row, "observed_peak_bandwidth_gb_s"))


def _optional(row: dict, field: str) -> float | None:
    return positive(field, row[field]) if field in row else None


@datafiles.cached
def measurements() -> dict[str, Measurement]:
    return {k: _from_row(k, row) for k, row in datafiles.load("measurements.toml")["measurements"].items()}


def measurement(key: str) -> Measurement:
    return datafiles.lookup(measurements(), "measurement", key)


@dataclass(frozen=True)
class KernelMeasurement:
    """One published measurement of a single kernel (``data/kernels.toml``): a rate it reached
    (``metric`` "tflops" or "gb_s", ``value``) or the batches over which a speedup held
    ("batch_range", ``low`` to ``high``)."""

    key: str
    kernel: str
    accelerator: str
    metric: str
    setup: str
    source: str
    quote: str
    value: float | None = None
    low: float | None = None
    high: float | None = None


KERNEL_METRICS = ("tflops", "gb_s", "batch_range")


def _kernel(key: str, row: dict) -> KernelMeasurement:
    if row["metric"] not in KERNEL_METRICS:
        raise ValueError(f"kernel measurement {key}: metric must be one of {', '.join(KERNEL_METRICS)}")
    return KernelMeasurement(key, row["kernel"], row["accelerator"], row["metric"], row["setup"], row["source"],
                             row["quote"], row.get("value"), row.get("low"), row.get("high"))


@datafiles.cached
def kernel_measurements() -> dict[str, KernelMeasurement]:
    """Every row of ``data/kernels.toml``, keyed by name."""
    return {key: _kernel(key, row) for key, row in datafiles.load("kernels.toml")["kernels"].items()}


def kernel_measurement(key: str) -> KernelMeasurement:
    """The kernel measurement called ``key``, or a ValueError listing the keys."""
    return datafiles.lookup(kernel_measurements(), "key", key)
