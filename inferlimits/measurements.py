"""Measured rates from ``data/measurements.toml``: what one setup reached, with its source."""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources


@dataclass(frozen=True)
class Measurement:
    key: str
    model: str
    accelerator: str
    tokens_per_s: float
    batch: int
    weight_precision: str
    setup: str
    source: str


@cache
def measurements() -> dict[str, Measurement]:
    text = resources.files("inferlimits.data").joinpath("measurements.toml").read_text("utf-8")
    return {k: Measurement(key=k, **row) for k, row in tomllib.loads(text)["measurements"].items()}


def measurement(key: str) -> Measurement:
    table = measurements()
    if key not in table:
        raise ValueError(f"measurement must be one of {', '.join(table)}; got {key!r}")
    return table[key]
