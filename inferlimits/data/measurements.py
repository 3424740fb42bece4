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
    "tokens_per_s_per_gpu": "generated tokens per second, all sequences together, per GPU of the deployment "
                            "(of its decode GPUs where prefill and decode run apart)",
}
METRICS = {**DECODE_METRICS,
           "ms_to_first_token": "milliseconds from the request to its first generated token",
           "ms_end_to_end": "milliseconds from the request to its last generated token"}
UNSTATED = "unstated"
#: how a run drafted tokens for its target model to verify ("none": plain decoding)
SPECULATIVE = ("none", "draft", "eagle", "mtp")
SERVING = ("aggregated", "disaggregated")
ENGINE_MODES = ("eager", "compiled")
#: the parallel layout's fields: tensor, expert, pipeline parallel sizes and data-parallel attention
LAYOUT = ("tp", "ep", "pp", "attention_dp")


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
    speculative: str = "none"                 # one of SPECULATIVE
    draft_model: str | None = None            # the draft model of a "draft" run
    draft_tokens: int | None = None           # k, tokens drafted per verify step
    acceptance: float | None = None           # a, the chance each drafted token is accepted
    acceptance_length: float | None = None    # tokens a verify step yields on average, where the source gives it
    tp: int | None = None                     # tensor-parallel size
    ep: int | None = None                     # expert-parallel size
    pp: int | None = None                     # pipeline stages
    attention_dp: int | None = None           # data-parallel attention groups
    concurrency: int | None = None            # requests in flight, where it replaces the batch
    serving: str | None = None                # one of SERVING
    decode_workers: int | None = None         # GPUs serving decode in a disaggregated run
    engine_mode: str | None = None            # one of ENGINE_MODES

    @property
    def counted_gpus(self) -> int:
        """The GPUs a per-GPU figure is shared over: the decode GPUs of a disaggregated run, else all."""
        return self.decode_workers if self.serving == "disaggregated" and self.decode_workers else self.gpus

    @property
    def sequences(self) -> int | None:
        """Sequences decoded together: the batch, or else the requests in flight."""
        return self.batch if self.batch is not None else self.concurrency

    def decode_tokens_per_s(self, batch: float | None = None) -> float:
        """The measured decode rate, all sequences together (``batch`` for the per-sequence metrics
        when the row states none)."""
        b = self.sequences if self.sequences is not None else batch
        if self.metric == "tokens_per_s":
            return self.value
        if self.metric == "tokens_per_s_per_gpu":
            return self.value * self.counted_gpus
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


def _whole(row: dict, field: str, least: int = 1) -> int | None:
    """An optional whole-number field, at least ``least``."""
    if field not in row:
        return None
    value = row[field]
    if not isinstance(value, int) or isinstance(value, bool) or value < least:
        raise ValueError(f"{field} must be a whole number of at least {least}; got {value!r}")
    return value


def _choice(row: dict, field: str, choices: tuple[str, ...], default: str | None = None) -> str | None:
    value = row.get(field, default)
    if value is not None and value not in choices:
        raise ValueError(f"{field} must be one of {', '.join(choices)}; got {value!r}")
    return value


def conditions(row: dict) -> dict:
    """The fields of ``row`` that say how a run ran (everything but its value and provenance), checked:
    a ValueError names the field that is missing or wrong. Unknown fields are ignored, and so is a
    field set to None (not given)."""
    row = {k: v for k, v in row.items() if v is not None}
    for field in ("model", "accelerator", "weight_precision", "metric"):
        if not isinstance(row.get(field), str):
            raise ValueError(f"give {field} (a name)")
    if row["metric"] not in METRICS:
        raise ValueError(f"metric must be one of {', '.join(METRICS)}; got {row['metric']!r}")
    out = {f: row[f] for f in ("model", "accelerator", "weight_precision", "metric")}
    out["gpus"] = _whole(row, "gpus") or 1
    for field in ("math_precision", "kv_precision"):
        out[field] = row.get(field, UNSTATED)
        if not isinstance(out[field], str):
            raise ValueError(f"{field} must be a precision's name or {UNSTATED!r}; got {out[field]!r}")
    for field in ("batch", "input_tokens", "output_tokens"):
        out[field] = _stated({field: row.get(field, UNSTATED)}, field)
    if out["batch"] == 0:
        raise ValueError(f"batch must be a whole number of at least 1 or {UNSTATED!r}; got 0")
    spec = _choice(row, "speculative", SPECULATIVE, "none")
    out["speculative"] = spec
    out["draft_tokens"] = _whole(row, "draft_tokens")
    if spec != "none" and out["draft_tokens"] is None:
        raise ValueError("draft_tokens must be given for a speculative run")
    out["draft_model"] = row.get("draft_model")
    if "acceptance" in row:
        out["acceptance"] = positive("acceptance", row["acceptance"])
        if out["acceptance"] >= 1:
            raise ValueError(f"acceptance must be below 1; got {row['acceptance']!r}")
    if "acceptance_length" in row:
        out["acceptance_length"] = positive("acceptance_length", row["acceptance_length"])
        if not 1 <= out["acceptance_length"] <= (out["draft_tokens"] or 0) + 1:
            raise ValueError("acceptance_length must lie between 1 and draft_tokens + 1; "
                             f"got {row['acceptance_length']!r}")
    for field in (*LAYOUT, "concurrency", "decode_workers"):
        out[field] = _whole(row, field)
    if out["tp"] and out["pp"] and out["tp"] * out["pp"] > out["gpus"]:
        raise ValueError(f"tp x pp must not exceed gpus; got {out['tp']} x {out['pp']} on {out['gpus']}")
    out["serving"] = _choice(row, "serving", SERVING)
    out["engine_mode"] = _choice(row, "engine_mode", ENGINE_MODES)
    for field in ("head_precision", "group_size", "power_limit_w"):
        if field in row:
            out[field] = row[field]
    if "group_size" in out:
        out["group_size"] = _whole(row, "group_size")
    if "power_limit_w" in out:
        out["power_limit_w"] = positive("power_limit_w", row["power_limit_w"])
    out["prefill_in_time"] = bool(row.get("prefill_in_time", False))
    return out


def _from_row(key: str, row: dict) -> Measurement:
    if row["metric"] not in METRICS:
        raise ValueError(f"{key}: metric must be one of {', '.join(METRICS)}; got {row['metric']!r}")
    missing = [f for f in ("source", "quote", "setup", "framework", "date") if not str(row.get(f, "")).strip()]
    if missing:
        raise ValueError(f"{key}: give {', '.join(missing)}")
    positive(f"value of {key}", row["value"])
    try:
        extra = conditions(row)
    except ValueError as e:
        raise ValueError(f"{key}: {e}") from None
    extra = {f: extra[f] for f in ("speculative", "draft_model", "draft_tokens", "acceptance", "acceptance_length",
                                   *LAYOUT, "concurrency", "serving", "decode_workers", "engine_mode") if f in extra}
    return Measurement(**extra, key=key, model=row["model"], accelerator=row["accelerator"], gpus=int(row.get("gpus", 1)),
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


def run(row: dict) -> Measurement:
    """A reader's run: ``row`` with the fields of measurements.toml that say how it ran (model,
    accelerator, gpus, the precisions, batch, input and output tokens, metric and the optional
    ones); its value, if given, is the measured figure. Unknown fields are ignored; a missing or
    wrong field raises a ValueError that names it."""
    if not isinstance(row, dict):
        raise ValueError(f"row must be a dict of a run's fields; got {type(row).__name__}")
    given = conditions(row)
    from inferlimits.data.hardware import device
    from inferlimits.data.models import model
    for field, lookup in (("model", model), ("accelerator", device)):
        try:
            lookup(given[field])
        except ValueError as e:
            raise ValueError(f"{field}: {e}") from None
    value = positive("value", row["value"]) if "value" in row else 1.0
    fields = {f: given[f] for f in given if f in Measurement.__dataclass_fields__}
    return Measurement(key=str(row.get("key", "a reader's run")), value=value, framework=str(row.get("framework", "")),
                       framework_version=UNSTATED, date="undated", clear=True, setup="", source="", quote="", **fields)


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
