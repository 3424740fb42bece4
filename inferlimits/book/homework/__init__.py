"""Homework with numbers of its own for each student: ``make homework SEED=N``.

For every numbered chapter's compute, derive and decide exercises (``inferlimits.book.course``)
there is a *template* here, in the module of its chapter: it draws another accelerator, model,
precision, batch or context from the data (``inferlimits/data``), keeps only draws for which the
exercise's reasoning still holds (a "memory-bound?" question draws setups that fit, a crossover
question cards whose ridge the workload can reach, and so on: its ``holds``), and writes the
question, the key's working and the answers. Every answer is computed by the package's arithmetic
(``inferlimits.arithmetic``), and carries the tolerance the question states in its last line
(``Tolerance: 2%.``, ``Tolerance: 2% on each number.``, ``Tolerance: 2% on each number; exact on
counts.`` or ``Tolerance: exact.``, the chapters' forms): the tolerance the exercise it varies
states (``stated_tolerance``). Project-sized exercises are left to the book. A key's working puts
the numbers into each formula: its ``calc`` lines write the formula, the numbers put in (each with
its unit) and the result, every intermediate value on the way to the answers, so that a grader can
follow the derivation and a test can evaluate each line again from the numbers it writes.

The sheets follow the course plan (``inferlimits.book.course``): one per session, with the
variants of the homework the plan assigns it (``render``); a class roster gives each student a
seed of their own, from their id and a salt (``roster``).

A variant is fixed by the seed and the template's id: ``rng_for(seed, id)`` seeds numpy's
``Generator`` with both, so a seed gives the same sheet on every run and machine, and two seeds
give different numbers. A draw is taken again (from the same generator, so still determined by
the seed) while its conditions fail, or while one of its answers would appear in its question.

    python -m inferlimits.book.homework --seed 3       # _build/homework/seed-3: each session's sheet and key, index
    python -m inferlimits.book.homework --roster roster.csv --salt WORD   # each student's sheets, one keys CSV
"""
from __future__ import annotations

import math
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from inferlimits.book import ROOT
from inferlimits.checks import parse_stated

#: the exercise kinds that get variants: the ones whose answers are numbers and choices
KINDS = ("compute", "derive", "decide")
#: the grading tolerance of a numeric answer, unless a template sets its own
TOLERANCE = 0.02
#: draws tried before a template gives up (a template whose conditions never hold is a bug)
ATTEMPTS = 400


# ---- answers and variants ------------------------------------------------------------------------

@dataclass(frozen=True)
class Answer:
    """One answer a grader compares: a number (``value``, shown as ``shown``) within ``tolerance``
    (a fraction; 0 for exact), or a choice (``value`` a string, always exact)."""

    name: str
    value: float | str
    shown: str
    tolerance: float = 0.0

    @property
    def numeric(self) -> bool:
        return not isinstance(self.value, str)

    def accepts(self, x: float | str) -> bool:
        """Whether a student's answer ``x`` is within the tolerance of this one."""
        if not self.numeric:
            return str(x).strip().lower() == str(self.value).strip().lower()
        return abs(float(x) - self.value) <= self.tolerance * abs(self.value) + 1e-12

    @property
    def bounds(self) -> tuple[float, float]:
        """The lowest and the highest number a grader accepts, in base units (the value twice where
        the answer is exact)."""
        if not self.numeric:
            raise ValueError(f"{self.name}: a choice has no bounds")
        lo, hi = self.value * (1 - self.tolerance), self.value * (1 + self.tolerance)
        return min(lo, hi), max(lo, hi)

    @property
    def unit(self) -> tuple[float, str]:
        """The unit the answer is shown in, as (its scale in base units, its text): (1e9, "GB") for
        "11.4 GB", (0.01, "%") for "15.4%", (1.0, "tokens/s") for "208 tokens/s", (1.0, "") for a
        plain number. The text is what ``shown`` writes around its number; the scale is the known
        unit's (``inferlimits.checks.UNITS``), else 1."""
        if not self.numeric:
            return 1.0, ""
        try:
            scale = parse_stated(self.shown).scale
        except ValueError:
            scale = 1.0
        return scale, " ".join(NUMERAL.sub(" ", self.shown).split())

    @property
    def range_shown(self) -> str:
        """What a grader accepts, in words."""
        if not self.numeric or self.tolerance == 0:
            return "exact"
        lo, hi = self.bounds
        try:   # in the unit the answer is shown in ("11.4 GB": GB), where it shows one number
            shown = parse_stated(self.shown)
            scale, unit = shown.scale, f" {shown.unit}" if shown.unit not in ("", "%", "×", "x") else shown.unit
        except ValueError:
            scale, unit = 1.0, ""
        return f"±{_percent(self.tolerance)}: {sig(lo / scale, 4)} to {sig(hi / scale, 4)}{unit}"


class Calc(str):
    """One line of a key's working that computes a number: what it is, its formula, the numbers put
    in, and the result, each written out ("B_s = (BW/s - W)/(KL + A) = (864.0 GB/s / 60 - 2.472 GB)
    / 0.2718 GB = 43.88."). It is the line as text (a ``str``), and keeps its parts, so that a test
    can evaluate ``put_in`` again and compare it with ``result``: every number in ``put_in`` is
    written with its unit, and the operators are ``+``, ``-``, `` × ``, ``/``, ``^`` and the
    functions ``max``, ``min``, ``floor`` and ``sqrt``."""

    name: str
    formula: str
    put_in: str
    result: str
    part: str

    def __new__(cls, name: str, formula: str, put_in: str, result: str, part: str = "") -> "Calc":
        if not name or not put_in or not result:
            raise ValueError(f"calc: a line names what it computes, the numbers put in and the result; got "
                             f"{(name, put_in, result)!r}")
        text = " = ".join(x for x in (name, formula, put_in, result) if x)
        line = super().__new__(cls, f"{part} {text}.".strip())
        line.name, line.formula, line.put_in, line.result, line.part = name, formula, put_in, result, part
        return line

    def __reduce__(self):
        return (Calc, (self.name, self.formula, self.put_in, self.result, self.part))


def calc(name: str, formula: str, put_in: str, result: str, part: str = "") -> Calc:
    """A line of working (``Calc``): ``name = formula = put_in = result.``, after ``part`` ("(c)")
    where given; ``formula`` may be empty where ``name`` is the formula itself ("KL + A")."""
    return Calc(name, formula, put_in, result, part)


@dataclass(frozen=True)
class Key:
    """What a template writes for one draw: the question (paragraphs, without its tolerance line),
    the key's working (lines: the reasoning, and ``calc`` lines that put the numbers into each
    formula and give every intermediate value) and the answers."""

    question: tuple[str, ...]
    working: tuple[str, ...]
    answers: tuple[Answer, ...]


@dataclass(frozen=True)
class Variant:
    """One exercise of a sheet: the template it comes from, the draw, the conditions it meets, and
    its question, working and answers."""

    template: str            # the template's id: the label of the exercise it varies
    chapter: str             # the notebook's stem
    title: str               # kind[: subject] · level, as the exercise it varies
    number: str              # the exercise's number in the book, "2.1" ("" where the chapter no longer has it)
    seed: int
    params: dict
    conditions: dict[str, bool]
    key: Key

    @property
    def tolerance_line(self) -> str:
        return tolerance_line(self.key.answers)

    @property
    def question(self) -> tuple[str, ...]:
        """The question as the sheet prints it: its paragraphs, then its tolerance."""
        return (*self.key.question, self.tolerance_line)


def tolerance_line(answers: Sequence[Answer]) -> str:
    """The question's last line, in the chapters' forms: exact when no answer is a number, else the
    numbers' tolerance (one for all of them), and "exact on counts" where the counts among them are
    graded exactly (``Tolerance: 2% on each number; exact on counts.``)."""
    numbers = [a for a in answers if a.numeric]
    tolerances = {a.tolerance for a in numbers}
    if not numbers or tolerances == {0.0}:
        return "Tolerance: exact."
    counts_exact = 0.0 in tolerances
    tolerances.discard(0.0)
    if len(tolerances) != 1:
        raise ValueError(f"answers: one tolerance for every number of an exercise; got {sorted(tolerances)}")
    t = _percent(tolerances.pop())
    if counts_exact:
        return f"Tolerance: {t} on each number; exact on counts."
    return f"Tolerance: {t}." if len(numbers) == 1 else f"Tolerance: {t} on each number."


#: an exercise's tolerance line, as the chapters write it (the last line of the exercise)
STATED = re.compile(r"Tolerance: (?:(?P<exact>exact)|(?P<percent>\d+(?:\.\d+)?)%(?P<each> on each number)?"
                    r"(?P<counts>; exact on counts)?)\.")


def stated_tolerance(text: str) -> tuple[float, bool] | None:
    """The tolerance an exercise's text states in its last line, as (fraction, counts exact): (0.02,
    False) for "Tolerance: 2%." or "2% on each number.", (0.02, True) for "2% on each number; exact
    on counts.", (0.0, True) for "exact"; None where the last line states none."""
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    m = STATED.fullmatch(lines[-1]) if lines else None
    if not m:
        return None
    if m.group("exact"):
        return 0.0, True
    return float(m.group("percent")) / 100, bool(m.group("counts"))


def _percent(fraction: float) -> str:
    return f"{fraction * 100:.10g}%"


# ---- numbers as the sheets write them -------------------------------------------------------------

def sig(x: float, digits: int = 3) -> str:
    """``x`` to ``digits`` significant figures, with thousands separators: 65,900, 3.04, 0.0145."""
    if not math.isfinite(x):
        raise ValueError(f"x must be finite; got {x!r}")
    if x == 0:
        return "0"
    exponent = math.floor(math.log10(abs(x)))
    decimals = digits - 1 - exponent
    rounded = round(x, decimals)
    if rounded != 0 and math.floor(math.log10(abs(rounded))) > exponent:   # 9.996 -> 10.0: one figure less
        decimals -= 1
    return f"{rounded:,.{max(0, decimals)}f}"


def figures_for(a: float, b: float, digits: int = 4) -> int:
    """The significant figures to write ``a`` and ``b`` with so that their difference, worked from
    the written numbers, keeps ``digits`` figures of its own: 135.67 - 134.84 = 0.83 needs seven."""
    diff = abs(a - b)
    if diff == 0 or not math.isfinite(diff):
        return digits
    return digits + max(0, math.ceil(math.log10(max(abs(a), abs(b)) / diff)))


def whole(x: float) -> str:
    return f"{round(x):,}"


NUMERAL = re.compile(r"\d[\d,]*(?:\.\d+)?")


def numerals(text: str) -> set[str]:
    """The numerals written in ``text``, without thousands separators or trailing commas."""
    return {m.group(0).rstrip(",").replace(",", "") for m in NUMERAL.finditer(text)}


def leaks(key: Key) -> list[Answer]:
    """The numeric answers whose numerals appear in the question (its tolerance line included)."""
    asked = numerals(" ".join((*key.question, tolerance_line(key.answers))))
    return [a for a in key.answers if a.numeric and numerals(a.shown) & asked]


# ---- templates -----------------------------------------------------------------------------------

class Template:
    """A family of variants of one exercise. Subclasses set ``chapter`` and ``label`` (the
    exercise they vary) and define ``draw`` (a setting, from a numpy Generator), ``holds`` (the
    conditions under which the exercise's reasoning holds for a setting, each by name) and
    ``key`` (question, working and answers, every number from the package's arithmetic)."""

    chapter: str = ""
    label: str = ""
    #: the grading tolerance of the numbers, as the exercise states it (``stated_tolerance``)
    tolerance: float = TOLERANCE
    #: whether the exercise grades its counts exactly ("exact on counts", or "Tolerance: exact.")
    counts_exact: bool = False

    @property
    def id(self) -> str:
        return self.label

    def draw(self, rng: np.random.Generator) -> dict:
        raise NotImplementedError

    def holds(self, p: dict) -> dict[str, bool]:
        return {}

    def key(self, p: dict) -> Key:
        raise NotImplementedError

    # helpers for the answers, with the template's tolerance
    def number(self, name: str, value: float, shown: str) -> Answer:
        return Answer(name, float(value), shown, self.tolerance)

    @staticmethod
    def exact(name: str, value: float, shown: str) -> Answer:
        return Answer(name, float(value), shown, 0.0)

    def count(self, name: str, value: float, shown: str) -> Answer:
        """A count of whole things (conversations, sequences, kernels): exact where the exercise
        grades its counts exactly, else within the template's tolerance."""
        return self.exact(name, value, shown) if self.counts_exact else self.number(name, value, shown)

    @staticmethod
    def choice(name: str, value: str) -> Answer:
        return Answer(name, value, value, 0.0)


TEMPLATES: dict[str, Template] = {}


def register(cls: type[Template]) -> type[Template]:
    """Class decorator: add one instance of ``cls`` to ``TEMPLATES`` under its id."""
    t = cls()
    if not t.chapter or not t.label:
        raise ValueError(f"{cls.__name__}: a template names its chapter and the label of its exercise")
    if t.id in TEMPLATES:
        raise ValueError(f"{cls.__name__}: template id {t.id!r} is taken by {type(TEMPLATES[t.id]).__name__}")
    TEMPLATES[t.id] = t
    return cls


def pick(rng: np.random.Generator, options: Sequence):
    """One of ``options``, drawn by ``rng`` (an index, so the draw does not depend on the type)."""
    if not options:
        raise ValueError("options: nothing to pick from")
    return options[int(rng.integers(len(options)))]


def pick_distinct(rng: np.random.Generator, options: Sequence, n: int) -> list:
    """``n`` different ones of ``options``, in the order drawn."""
    if n > len(options):
        raise ValueError(f"n: {n} distinct of {len(options)} options")
    order = list(options)
    out = []
    for _ in range(n):
        out.append(order.pop(int(rng.integers(len(order)))))
    return out


# ---- seeds and draws -----------------------------------------------------------------------------

def seed_value(seed: object) -> int:
    """The seed as a whole number 0 or more; a ValueError naming SEED otherwise."""
    text = str(seed).strip()
    if isinstance(seed, bool) or not re.fullmatch(r"\d+", text):
        raise ValueError(f"SEED must be a whole number, 0 or more (make homework SEED=3); got {seed!r}")
    return int(text)


def rng_for(seed: int, template_id: str) -> np.random.Generator:
    """The generator of one template's draws for one seed: numpy's PCG64, seeded with the seed and
    a checksum of the template's id (stable across runs, unlike Python's ``hash``)."""
    return np.random.default_rng([seed_value(seed), zlib.crc32(template_id.encode("utf-8"))])


def _load() -> None:
    """Import the chapters' template modules, which register their templates."""
    from inferlimits.book.homework import (  # noqa: F401, PLC0415
        ch01_two_speeds, ch02_decode, ch03_prefill, ch04_batching, ch05_kv_cache, ch06_overhead,
        ch07_low_precision, ch08_moe, ch09_serving_at_scale, ch10_speculative_decoding, ch11_index_card,
        ch12_worked_example, ch13_measure)


def templates() -> dict[str, Template]:
    """Every template, by id, in chapter order."""
    _load()
    return dict(sorted(TEMPLATES.items(), key=lambda kv: kv[1].chapter))


def variant(t: Template | str, seed: int) -> Variant:
    """The variant of template ``t`` for ``seed``: the first draw that meets the template's
    conditions and whose answers its question does not give away."""
    t = templates()[t] if isinstance(t, str) else t
    seed = seed_value(seed)
    rng = rng_for(seed, t.id)
    for _ in range(ATTEMPTS):
        p = t.draw(rng)
        conditions = t.holds(p)
        if not all(conditions.values()):
            continue
        key = t.key(p)
        if leaks(key):
            continue
        number, title = exercise_ref(t)
        return Variant(t.id, t.chapter, title, number, seed, p, conditions, key)
    raise RuntimeError(f"template {t.id}: no draw met its conditions in {ATTEMPTS} tries (seed {seed})")


def variants(seed: int, chapters: Sequence[str] | None = None) -> list[Variant]:
    """Every template's variant for ``seed`` (those of ``chapters`` only, where given), in chapter
    order."""
    return [variant(t, seed) for t in templates().values() if chapters is None or t.chapter in chapters]


# ---- the exercises the templates vary --------------------------------------------------------------

def numbered_chapters(root: Path = ROOT) -> list[Path]:
    """The numbered chapters' notebooks, in order."""
    return sorted((root / "chapters").glob("[0-9][0-9]_*.ipynb"))


def chapter_title(stem: str, root: Path = ROOT) -> str:
    """A chapter's title, its first heading, with its number: "2. Decode"."""
    from inferlimits.book.course import markdown  # noqa: PLC0415

    m = re.search(r"^# (.+)$", markdown(root / "chapters" / f"{stem}.ipynb"), re.M)
    return f"{int(stem[:2])}. {m.group(1).strip() if m else stem[3:].replace('_', ' ')}"


def book_exercises(root: Path = ROOT) -> list:
    """The numbered chapters' compute, derive and decide exercises (``course.exercises``), less the
    project-sized ones (the subject "project"): a project is sized for days of work and a report,
    not for a sheet, so it is set from the book as it stands."""
    from inferlimits.book.course import exercises  # noqa: PLC0415

    return [e for p in numbered_chapters(root) for e in exercises(p) if e.kind in KINDS and not e.project]


def exercise_of(t: Template, root: Path = ROOT):
    """The exercise template ``t`` varies, as the chapter now writes it (None where it has none)."""
    path = root / "chapters" / f"{t.chapter}.ipynb"
    return next((e for e in (_exercises(path, path.stat().st_mtime_ns) if path.exists() else ())
                 if e.label == t.label), None)


def exercise_ref(t: Template, root: Path = ROOT) -> tuple[str, str]:
    """The number the book gives the exercise ``t`` varies ("2.1": the chapter's number, then the
    exercise's place among the chapter's exercises, as sphinx-exercise numbers them) and its title
    as the chapter writes it; ("", the template's id) where the chapter no longer has it."""
    path = root / "chapters" / f"{t.chapter}.ipynb"
    for e in _exercises(path, path.stat().st_mtime_ns) if path.exists() else ():
        if e.label == t.label:
            return exercise_number(e, root), e.title
    return "", t.label


def exercise_number(e, root: Path = ROOT) -> str:
    """The number the book gives exercise ``e`` (a ``course.Exercise``): "2.6" in a numbered chapter
    (its number, then the exercise's place among the chapter's exercises), "Primer 2" on an
    unnumbered page, whose exercises Sphinx numbers 1, 2, ... without a chapter; "" where the
    chapter no longer has it."""
    path = root / "chapters" / f"{e.chapter}.ipynb"
    for i, x in enumerate(_exercises(path, path.stat().st_mtime_ns) if path.exists() else (), start=1):
        if x.label == e.label:
            return f"{int(e.chapter[:2])}.{i}" if e.chapter[:2].isdigit() else f"{e.chapter.capitalize()} {i}"
    return ""


@lru_cache(maxsize=64)
def _exercises(path: Path, mtime_ns: int) -> tuple:
    """A chapter's exercises, read again only when the notebook changes."""
    from inferlimits.book.course import exercises  # noqa: PLC0415

    return tuple(exercises(path))


def without_template(root: Path = ROOT) -> list:
    """The compute, derive and decide exercises that no template varies yet."""
    have = {(t.chapter, t.label) for t in templates().values()}
    return [e for e in book_exercises(root) if (e.chapter, e.label) not in have]


@dataclass(frozen=True)
class Count:
    """How many distinct variants the templates give over a range of seeds."""

    seeds: range
    by_template: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.by_template.values())


def distinct_variants(seeds: range = range(1, 11)) -> Count:
    """Distinct variants over ``seeds``: for each template, the number of different questions (the
    text a student reads, numbers and all) that the seeds give; their sum is what "distinct
    variant exercises" counts."""
    return Count(seeds, {tid: len({variant(t, s).question for s in seeds}) for tid, t in templates().items()})
