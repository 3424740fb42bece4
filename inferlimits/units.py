"""Units, precisions and input validation shared by every formula.

Decimal and binary prefixes are kept apart: GB = 10**9 B, GiB = 2**30 B. Bandwidth is always
decimal. FLOP counts a multiply-add as two operations.
"""
from __future__ import annotations

import math
from numbers import Real

KB = 10**3
MB = 10**6
GB = 10**9
TB = 10**12
KIB = 2**10
MIB = 2**20
GIB = 2**30
TERA = 10**12

#: Bytes one stored number takes at each precision. INT4 packs two numbers per byte. The per-group
#: scales that real INT4 formats add are left out here: a 16-bit scale per group of 128 weights adds
#: 3% to INT4's bytes, a 16-bit scale and zero point per group of 32 (gpt-fast's format) a quarter;
#: where a published run's format is known, ``measured.bytes_per_weight`` counts them.
BYTES_PER_ELEMENT: dict[str, float] = {
    "FP32": 4.0,
    "BF16": 2.0,
    "FP16": 2.0,
    "FP8": 1.0,
    "INT8": 1.0,
    "INT4": 0.5,
    # llama.cpp's GGUF block formats (ggml-common.h): each block of 32 weights stores one FP16 scale
    # beside them, so Q4_0 takes 18 bytes per 32 weights (4.5 bits) and Q8_0 34 (8.5 bits)
    "Q4_0": 18 / 32,
    "Q8_0": 34 / 32,
    # and Q6_K, the format a Q4_0 file keeps its output head in: 210 bytes per super-block of 256
    "Q6_K": 210 / 256,
}
#: formats that quantize the embedding table and the output head too (a GGUF file stores its head
#: in a format of its own, Q6_K in a Q4_0 file; counting it at the file's format undercounts it a
#: little, which keeps a ceiling an upper bound)
WHOLE_MODEL_FORMATS = ("Q4_0", "Q8_0", "Q6_K")


def bytes_per_element(precision: str, name: str = "precision") -> float:
    """Bytes per stored number for a precision such as "BF16", "FP8" or "INT4"; ``name`` is the
    caller's parameter, for the error message."""
    try:
        return BYTES_PER_ELEMENT[precision]
    except (KeyError, TypeError):
        known = ", ".join(BYTES_PER_ELEMENT)
        raise ValueError(f"{name} must be one of {known}; got {precision!r}") from None


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
