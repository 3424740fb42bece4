"""Checks that tie every number the text states to the value the arithmetic computes.

A chapter states a number in its prose, say "~500" tokens/s or "1.07 GB", and a code cell in the
same notebook calls::

    check("Llama-3.1-8B memory ceiling on a B200, tokens/s", ceiling, "~500")

``stated`` is the number exactly as the text writes it; the coverage test (``numerals``) finds it
there, and fails on any numeral in the text that no check states. The check passes when

* **exact** ("exactly 1 GiB"): the computed value equals the stated one;
* **plain** ("0.4%", "1.07 GB", "15"): the computed value, rounded to the decimals the text
  writes, equals the stated number;
* **approximate** ("~500", "about 6%", "roughly 15", "≈ 1.43×"): it rounds to the stated number,
  or lies within ``tolerance`` (3% unless the call says otherwise) of it.

A unit written after the number scales the computed value, which is always in base units: bytes
(kB, MB, GB, TB, KiB, MiB, GiB, TiB), bytes/s (GB/s, TB/s), FLOP/s (TFLOP/s, PFLOP/s), seconds
(s, ms, µs), fractions ("%": computed 0.058 is "6%"), ratios ("×" or "x"), and counts ("thousand",
"million", "billion", "trillion"). Each check prints one stable line; strict nbval compares it with
the committed output, so a change in any computed number shows even inside the tolerance.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

DEFAULT_TOLERANCE = 0.03

APPROXIMATE = ("~", "≈", "about ", "roughly ", "around ", "approximately ")
EXACT = ("exactly ",)

UNITS: dict[str, float] = {
    "": 1.0, "%": 0.01, "×": 1.0, "x": 1.0,
    "B": 1.0, "kB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
    "KiB": 2.0**10, "MiB": 2.0**20, "GiB": 2.0**30, "TiB": 2.0**40,
    "GB/s": 1e9, "TB/s": 1e12, "TFLOP/s": 1e12, "PFLOP/s": 1e15,
    "s": 1.0, "ms": 1e-3, "µs": 1e-6,
    "thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12,
}

_NUMBER = re.compile(r"(?P<num>\d{1,3}(?:,\d{3})+|\d+)(?:\.(?P<frac>\d+))?")
_LATEX = [(r"{,}", ","), (r"\,", " "), (r"\%", "%"), (r"\times", "×"), (r"\approx", "≈"), (r"\sim", "~")]


class CheckFailed(AssertionError):
    """A number in the text does not match what the arithmetic computes."""


@dataclass(frozen=True)
class Stated:
    """A number as the text writes it, parsed."""

    text: str
    value: Decimal
    decimals: int
    unit: str
    mode: str  # "exact", "plain" or "approximate"

    @property
    def scale(self) -> float:
        return UNITS[self.unit]


def _normalize(text: str) -> str:
    s = text
    for latex, plain in _LATEX:
        s = s.replace(latex, plain)
    s = re.sub(r"\\(?:text|mathrm)\{([^}]*)\}", r"\1", s)
    return re.sub(r"\s+", " ", s).strip()


def _marker(prefix: str) -> str:
    """The mode an approximate or exact marker right before the number sets."""
    p = prefix.lower().rstrip()
    for mode, markers in (("approximate", APPROXIMATE), ("exact", EXACT)):
        if any(p.endswith(m.strip()) for m in markers):
            return mode
    return "plain"


def _unit(suffix: str) -> str:
    """The known unit written right after the number (longest first), or "" for none."""
    for unit in sorted(UNITS, key=len, reverse=True):
        if not unit:
            continue
        attached = unit in ("%", "×", "x")
        rest = suffix if attached else suffix[1:] if suffix.startswith(" ") else None
        if rest is not None and rest.startswith(unit) and not rest[len(unit):len(unit) + 1].isalnum():
            return unit
    return ""


def parse_stated(stated: str) -> Stated:
    """Parse a number as the text writes it ("~1.07 GB", "140,000", "about 6%", "At 1,365").

    Words around the number may pin it to one place in the text; the number is the first numeral,
    a marker right before it (~, ≈, about, roughly, around, exactly) sets the mode, and a known
    unit right after it scales the computed value."""
    if not isinstance(stated, str) or not stated.strip():
        raise ValueError(f"stated must be the number as the text writes it, a non-empty string; got {stated!r}")
    s = _normalize(stated)
    found = _numerals(s)
    if len(found) != 1:
        raise ValueError(f"stated {stated!r} must contain exactly one number; it has {len(found)}")
    m = found[0]
    frac = m.group("frac") or ""
    value = Decimal(m.group("num").replace(",", "") + ("." + frac if frac else ""))
    return Stated(stated, value, len(frac), _unit(s[m.end():]), _marker(s[:m.start()]))


def _round(x: float, decimals: int) -> Decimal:
    return Decimal(repr(x)).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)


def _finite_number(claim: str, computed: object) -> float:
    try:
        x = float(computed)
    except (TypeError, ValueError):
        raise ValueError(f"{claim}: computed must be a number; got {computed!r}") from None
    if not math.isfinite(x):
        raise ValueError(f"{claim}: computed must be finite; got {computed!r}")
    return x


def verdict(computed: float, stated: Stated, tolerance: float = DEFAULT_TOLERANCE) -> tuple[bool, str]:
    """Whether ``computed`` (base units) matches ``stated``, and the rule that decided it."""
    x = computed / stated.scale
    target = float(stated.value)
    if stated.mode == "exact":
        return math.isclose(x, target, rel_tol=1e-12, abs_tol=0.0), "exact"
    rounded = _round(x, stated.decimals) == stated.value
    if stated.mode == "plain":
        return rounded, f"rounds to {stated.decimals} decimal(s)"
    within = target != 0 and abs(x - target) <= tolerance * abs(target)
    return rounded or within, f"rounds, or within {tolerance:.0%}"


def _show(x: float) -> str:
    """Six significant figures, or every integer digit for large values (1,073,741,824)."""
    return f"{x:,.0f}" if 1e6 <= abs(x) < 1e21 else f"{x:,.6g}"


def check(claim: str, computed: float, stated: str, *, tolerance: float = DEFAULT_TOLERANCE) -> None:
    """Assert that the text's ``stated`` number matches ``computed``; print one stable line.

    Raises CheckFailed naming the claim, the stated and the computed value."""
    if not isinstance(claim, str) or not claim.strip():
        raise ValueError("claim must say in words what the number is")
    if not (isinstance(tolerance, (int, float)) and 0 < tolerance < 0.5):
        raise ValueError(f"tolerance must be a small fraction between 0 and 0.5; got {tolerance!r}")
    s = parse_stated(stated)
    x = _finite_number(claim, computed)
    ok, rule = verdict(x, s, tolerance)
    shown = f"{_show(x / s.scale)} {s.unit}".rstrip()
    if not ok:
        raise CheckFailed(f"{claim}: the text says {stated!r} but the arithmetic gives {shown} ({rule} fails)")
    print(f"✓ {claim}: text {stated!r}, computed {shown} [{rule}]")


def answer(claim: str, computed: float, stated: str, *, tolerance: float) -> None:
    """An exercise's answer, as its solution states it: checked as ``check`` checks it, and marked
    as an answer with the tolerance the exercise gives students (a fraction: 0.02 where the
    exercise says "Tolerance: 2%", 0 where it says "Tolerance: exact"). The tests hold each
    exercise to stating that tolerance, and the student edition to never showing the number.

    Raises CheckFailed as ``check`` does; ValueError for a tolerance outside [0, 0.5)."""
    if not (isinstance(tolerance, (int, float)) and not isinstance(tolerance, bool) and 0 <= tolerance < 0.5):
        raise ValueError(f"tolerance must be the exercise's tolerance, a fraction in [0, 0.5); got {tolerance!r}")
    print(f"answer, tolerance {tolerance:.3g}:", end=" ")
    check(claim, computed, stated)


def _numerals(s: str) -> list[re.Match]:
    return [m for m in _NUMBER.finditer(s)
            if not (m.start() > 0 and (s[m.start() - 1].isalnum() or s[m.start() - 1] in "._^"))]


def check_range(claim: str, computed: list[float], stated: str) -> None:
    """Assert that every computed value lies in the range the text states, such as "150–300" or
    "between 150 and 300"; print one stable line with the smallest and largest value."""
    s = _normalize(stated) if isinstance(stated, str) else ""
    found = _numerals(s)
    if len(found) != 2:
        raise ValueError(f"stated must be a range with two numbers, such as '150–300'; got {stated!r}")
    hi = parse_stated(s[found[1].start():])
    lo = parse_stated(s[found[0].start():found[1].start()])
    values = [_finite_number(claim, v) for v in computed]
    if not values:
        raise ValueError(f"{claim}: computed must hold at least one value")
    low, high = min(values) / hi.scale, max(values) / hi.scale
    shown = f"{_show(low)} to {_show(high)} {hi.unit}".rstrip()
    if low < float(lo.value) or high > float(hi.value):
        raise CheckFailed(f"{claim}: the text says {stated!r} but the values run from {shown}")
    print(f"✓ {claim}: text {stated!r}, computed {len(values)} values from {shown}")


def allow(text: str, reason: str) -> None:
    """Mark a numeral in this notebook's text as not a quantity (a year, a pattern's name), with
    the reason. The coverage test fails when the text no longer contains it."""
    if not isinstance(text, str) or not re.search(r"\d", text):
        raise ValueError(f"text must be the numeral as written; got {text!r}")
    if not isinstance(reason, str) or len(reason.split()) < 3:
        raise ValueError(f"reason must say in a few words why {text!r} is not a quantity")
    print(f"· not a quantity: {text!r} ({reason})")
