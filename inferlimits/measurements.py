"""Measured rates from ``data/measurements.toml``: what one setup reached, with its source."""
from __future__ import annotations

from dataclasses import dataclass

from . import datafiles


@dataclass(frozen=True)
class Measurement:
    """One published measurement: what ran, on what, under which conditions, and where it is
    published (``data/measurements.toml`` says what each field means)."""

    key: str
    model: str
    accelerator: str
    tokens_per_s: float
    batch: int
    weight_precision: str
    framework: str
    date: str
    setup: str
    source: str
    power_limit_w: float | None = None


@datafiles.cached
def measurements() -> dict[str, Measurement]:
    return {k: Measurement(key=k, **row) for k, row in datafiles.load("measurements.toml")["measurements"].items()}


def measurement(key: str) -> Measurement:
    return datafiles.lookup(measurements(), "measurement", key)
