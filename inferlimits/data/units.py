"""Units, number formats and input validation shared by every formula.

Decimal and binary prefixes are kept apart: GB = 10**9 B, GiB = 2**30 B. Bandwidth is always
decimal. FLOP counts a multiply-add as two operations.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Real

from inferlimits.data import datafiles

KB = 10**3
MB = 10**6
GB = 10**9
TB = 10**12
KIB = 2**10
MIB = 2**20
GIB = 2**30
TERA = 10**12


@dataclass(frozen=True)
class Format:
    """A number format weights or caches are stored in (``data/formats.toml``): its bits per
    number, the scale a block of numbers shares, the tensor-core precision that multiplies it as
    stored ("none" for a format kernels must convert first), and whether files in it quantize the
    vocabulary tables too."""

    name: str
    element_bits: float
    block: int | None
    scale_bits: float
    math: str
    whole_model: bool
    source: str

    @property
    def bits_per_element(self) -> float:
        """element bits + scale bits / block: 4.25 for MXFP4, 4.5 for NVFP4 and Q4_0."""
        return self.element_bits + (self.scale_bits / self.block if self.block else 0.0)

    @property
    def bytes_per_element(self) -> float:
        return self.bits_per_element / 8


def _format(name: str, row: dict) -> Format:
    if ("block" in row) != ("scale_bits" in row):
        raise ValueError(f"format {name}: give block and scale_bits together")
    return Format(name, float(row["element_bits"]), int(row["block"]) if "block" in row else None,
                  float(row.get("scale_bits", 0)), row["math"], bool(row.get("whole_model", False)), row["source"])


@datafiles.cached
def formats() -> dict[str, Format]:
    """Every storage format of ``data/formats.toml``, in file order, keyed by name."""
    return {name: _format(name, row) for name, row in datafiles.load("formats.toml")["formats"].items()}


def storage_format(precision: str, name: str = "precision") -> Format:
    """The format called ``precision``; ``name`` is the caller's parameter, for the error message."""
    table = formats()
    if not isinstance(precision, str) or precision not in table:
        raise ValueError(f"{name} must be one of {', '.join(table)}; got {precision!r}")
    return table[precision]


def bytes_per_element(precision: str, name: str = "precision") -> float:
    """Bytes per stored number for a format such as "BF16", "FP8", "INT4" or "MXFP4" (with its
    share of a block scale); ``name`` is the caller's parameter, for the error message."""
    return storage_format(precision, name).bytes_per_element


def positive(name: str, value: object) -> float:
    """Return ``value`` as a float if it is a finite number above zero, else raise ValueError
    naming the parameter."""
    x = _finite(name, value)
    if x <= 0:
        raise ValueError(f"{name} must be greater than zero; got {value!r}")
    return x


def non_negative(name: str, value: object) -> float:
    """Return ``value`` as a float if it is finite and at least zero (a context length of 0 is a
    real case: an empty conversation), else raise ValueError naming the parameter."""
    x = _finite(name, value)
    if x < 0:
        raise ValueError(f"{name} must be zero or more; got {value!r}")
    return x


def whole(name: str, value: object, smallest: int = 1) -> int:
    """Return ``value`` as an int if it is a whole number of at least ``smallest`` (GPUs, draft
    tokens, repeats), else raise ValueError naming the parameter."""
    x, least = non_negative(name, value), non_negative("smallest", smallest)
    if x != int(x) or x < least:
        raise ValueError(f"{name} must be a whole number of at least {smallest}; got {value!r}")
    return int(x)


def fraction(name: str, value: object) -> float:
    """Return ``value`` if it lies in (0, 1], such as an efficiency, else raise ValueError."""
    x = positive(name, value)
    if x > 1:
        raise ValueError(f"{name} is a fraction and must be at most 1; got {value!r}")
    return x


#: Anything larger is not a physical quantity in this book (10^30 bytes, FLOP/s or tokens).
ABSURD = 1e30


def _finite(name: str, value: object) -> float:
    kind = type(value)
    if kind is not float and kind is not int:  # the common cases, checked cheaply first
        if isinstance(value, bool) or not isinstance(value, Real):
            raise ValueError(f"{name} must be a number; got {value!r}")
    x = float(value)
    if -ABSURD <= x <= ABSURD:
        return x
    if math.isnan(x) or math.isinf(x):
        raise ValueError(f"{name} must be a finite number; got {value!r}")
    raise ValueError(f"{name} is absurdly large ({value!r}); the limit is {ABSURD:g}")
