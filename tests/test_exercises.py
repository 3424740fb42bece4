"""The shape of the exercises, read from the chapters without building or running anything (marked
``beside_the_build``):

- every exercise whose solution's check cells call ``answer`` states its grading tolerance in the
  last line of its text, in one of the book's forms (``Tolerance: 2%.``, ``Tolerance: 2% on each
  number.``, ``Tolerance: exact.``), and that tolerance is the ``tolerance=`` of each of those calls;
  an exercise that states a tolerance has such calls; every ``answer`` call follows a solution and
  gives its tolerance as a literal number;
- every numbered chapter sets at least one basic computation (``compute · basic``), at least two
  advanced exercises, and at least one project-sized exercise (the subject ``project``).

How the answers are read and a tolerance line is parsed: ``inferlimits.book.student``."""
from __future__ import annotations

import math
import re

import nbformat
import pytest

from inferlimits.book import course, notebooks, student
from inferlimits.book.course import TITLE, exercises

pytestmark = pytest.mark.beside_the_build

WITH_EXERCISES = [nb for nb in notebooks() if exercises(nb)]
NUMBERED = [nb for nb in notebooks() if nb.parent.name == "chapters" and nb.stem[:2].isdigit()]
#: the form the brief for the exercises gives a tolerance line, which ``student.TOLERANCE_LINE`` narrows
TOLERANCE_FORM = re.compile(r"Tolerance: (exact|\d+(\.\d+)?%)")
#: a tolerance line for an exercise that asks for numbers and for counts of whole things: its answers
#: are graded within the percentage, its counts exactly (answer() calls at the percentage or at 0)
COUNTS_EXACT = re.compile(r"Tolerance: (?P<percent>\d+(?:\.\d+)?)% on each number; exact on counts\.")


def stated_tolerances(text: str) -> tuple[float, ...] | None:
    """The tolerances an exercise's last line lets its answer() calls set: one of the book's forms
    (``student.stated_tolerance``), or a percentage with exact counts, which allows that share and 0."""
    one = student.stated_tolerance(text)
    if one is not None:
        return (one,)
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    m = COUNTS_EXACT.fullmatch(lines[-1]) if lines else None
    return (float(m.group("percent")) / 100, 0.0) if m else None
PROJECT = getattr(course, "PROJECT", "project")


def _subject(title: str) -> str | None:
    m = TITLE.match(title)
    return m.group(2).strip() if m and m.group(2) else None


def tolerance_problems(path) -> list[str]:
    """What is wrong with the tolerances of a notebook's exercises and ``answer`` calls."""
    problems = []
    found = student.answers(path)
    for a in found:
        if a.label is None:
            problems.append(f"cell {a.cell}: an answer() call in a solution cell that follows no exercise's solution")
        if a.stated is None:
            problems.append(f"cell {a.cell}: an answer() call must state its number as a string literal")
        if a.tolerance is None:
            problems.append(f"cell {a.cell}: an answer() call must give tolerance= as a literal number")
    for ex in exercises(path):
        given = [a.tolerance for a in found if a.label == ex.label and a.tolerance is not None]
        lines = [ln.strip() for ln in ex.text.splitlines() if ln.strip()]
        allowed = stated_tolerances(ex.text)
        stated = allowed[0] if allowed else None
        misplaced = [ln for ln in lines[:-1] if ln.startswith("Tolerance:")] if lines else []
        if misplaced:
            problems.append(f"{ex.label}: the tolerance line must be the last line of the exercise: {misplaced[0]!r}")
        if lines and lines[-1].startswith("Tolerance") and stated is None:
            problems.append(f"{ex.label}: {lines[-1]!r} is not one of the forms 'Tolerance: 2%.', "
                            "'Tolerance: 2% on each number.', 'Tolerance: exact.'")
        if given and stated is None:
            problems.append(f"{ex.label}: its solution's answer() calls set a tolerance of "
                            f"{sorted(set(given))}, and the exercise states none in its last line")
        elif stated is not None and not given:
            problems.append(f"{ex.label}: states a tolerance, and no answer() call in its solution's check cells has it")
        elif stated is not None:
            wrong = sorted({t for t in given if not any(math.isclose(t, a, abs_tol=1e-12) for a in allowed)})
            if wrong:
                problems.append(f"{ex.label}: the text states a tolerance of {stated:g}, its answer() calls "
                                f"set {wrong}")
            elif not any(math.isclose(t, stated, abs_tol=1e-12) for t in given):
                problems.append(f"{ex.label}: states a tolerance of {stated:g}, and only its counts are graded (exactly)")
    return problems


def shape_problems(path) -> list[str]:
    exs = exercises(path)
    problems = []
    if not any(e.kind == "compute" and e.level == "basic" for e in exs):
        problems.append("no basic computation (a 'compute · basic' exercise)")
    advanced = [e.label for e in exs if e.level == "advanced"]
    if len(advanced) < 2:
        problems.append(f"{len(advanced)} advanced exercise(s) {advanced}, fewer than 2")
    if not any(_subject(e.title) == PROJECT for e in exs):
        problems.append(f"no project-sized exercise (titled with the subject {PROJECT!r}, e.g. 'extend: project · advanced')")
    return problems


@pytest.mark.parametrize("path", WITH_EXERCISES, ids=lambda p: p.stem)
def test_every_answered_exercise_states_the_tolerance_its_answers_check(path):
    problems = tolerance_problems(path)
    assert not problems, f"{path.stem}:\n" + "\n".join(problems)


@pytest.mark.parametrize("path", NUMBERED, ids=lambda p: p.stem)
def test_every_numbered_chapter_sets_a_basic_computation_two_advanced_exercises_and_a_project(path):
    problems = shape_problems(path)
    assert not problems, f"{path.stem}: " + "; ".join(problems)


def test_the_numbered_chapters_are_all_there():
    assert len(NUMBERED) == 13 and [p.stem[:2] for p in NUMBERED] == [f"{i:02d}" for i in range(1, 14)]


# ---- the tests of the tests ----------------------------------------------------------------------

def test_the_tolerance_line_takes_the_three_forms_and_no_other():
    for line, value in (("Tolerance: 2%.", 0.02), ("Tolerance: 2% on each number.", 0.02),
                        ("Tolerance: exact.", 0.0), ("Tolerance: 0.5%.", 0.005)):
        assert student.stated_tolerance(f"What is it?\n\n{line}\n") == pytest.approx(value)
        assert TOLERANCE_FORM.match(line)
    for line in ("Tolerance: 2 %.", "Tolerance: 2%", "Tolerance: about 2%.", "tolerance: 2%.", "Tolerance: exact"):
        assert student.stated_tolerance(f"What is it?\n{line}") is None, line
    assert student.stated_tolerance("Tolerance: 2%.\nWhat is it?") is None, "only the last line states it"
    counts = "Tolerance: 2% on each number; exact on counts."
    assert TOLERANCE_FORM.match(counts) and stated_tolerances(f"How many?\n\n{counts}\n") == pytest.approx((0.02, 0.0))
    assert stated_tolerances("Tolerance: 2% on each number; exact on counts") is None
    assert stated_tolerances("How fast?\nTolerance: exact.") == (0.0,)


def _chapter(tmp_path, exercise_text: str, solution_code: str, title: str = "compute · basic"):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell(f"```{{exercise}} {title}\n:label: t-ex1\n{exercise_text}\n```\n\n"
                                      "```{solution} t-ex1\n:class: dropdown\nIt is about 224.\n```"),
        nbformat.v4.new_code_cell(solution_code, metadata={"tags": ["hide-cell", student.SOLUTION_TAG]}),
    ]
    path = tmp_path / "t.ipynb"
    nbformat.write(nb, path)
    return path


def test_a_tolerance_is_held_to_the_answers_it_grades(tmp_path):
    good = _chapter(tmp_path, "How fast?\n\nTolerance: 2%.", 'answer("c", x, "about 224", tolerance=0.02)')
    assert tolerance_problems(good) == []
    for text, code, named in (
            ("How fast?", 'answer("c", x, "about 224", tolerance=0.02)', "states none"),
            ("How fast?\nTolerance: 2%.", 'answer("c", x, "about 224", tolerance=0.03)', "set [0.03]"),
            ("How fast?\nTolerance: exact.", 'check("c", x, "about 224")', "no answer() call"),
            ("How fast?\nTolerance: two percent.", 'answer("c", x, "about 224", tolerance=0.02)', "not one of the forms"),
            ("How fast?\nTolerance: 2%.", 'answer("c", x, "about 224", tolerance=t)', "literal number"),
            ("Tolerance: 2%.\nHow fast?", 'answer("c", x, "about 224", tolerance=0.02)', "last line")):
        assert named in " ".join(tolerance_problems(_chapter(tmp_path, text, code))), named
    counts = "How fast, and how many?\nTolerance: 2% on each number; exact on counts."
    both = 'answer("c", x, "about 224", tolerance=0.02)\nanswer("n", n, "7 fit", tolerance=0)'
    assert tolerance_problems(_chapter(tmp_path, counts, both)) == []
    for code, named in ((both.replace("0.02", "0.03"), "set [0.03]"),
                        ('answer("n", n, "7 fit", tolerance=0)', "only its counts")):
        assert named in " ".join(tolerance_problems(_chapter(tmp_path, counts, code))), named


def test_a_chapter_without_the_required_exercises_is_named(tmp_path):
    path = _chapter(tmp_path, "How fast?", 'check("c", x, "about 224")', title="derive · intermediate")
    problems = " ".join(shape_problems(path))
    assert "no basic computation" in problems and "fewer than 2" in problems and "project" in problems
    assert _subject("extend: project · advanced") == PROJECT and _subject("compute · basic") is None
