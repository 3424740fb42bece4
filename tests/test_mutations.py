"""The promise of the number checks, tested directly: change any single digit in a chapter's
prose or in one of its checks, and the test suite fails (data values: test_mutations_data.py).

Prose digits are caught by the static coverage test; digits in check cells by re-running the
chapter in-process and comparing with its committed outputs (``nbrun``), as strict nbval does."""
from __future__ import annotations

import dataclasses
import functools
import re
from pathlib import Path

import nbrun
import pytest

from inferlimits.book import checked_notebooks, measures_this_machine
from inferlimits.checks.numerals import (NotebookNumbers, coverage_problems, quantity_spans, read_after_digit_change,
                                         read_notebook, read_prose)

NOTEBOOKS = checked_notebooks()   # the book's notebooks and the unpublished quiz


def _bump(digit: str) -> str:
    return "8" if digit == "9" else str(int(digit) + 1)


def _prose_digits(nb):
    """Every digit of every quantity in a page's prose, as (position, the digit it is bumped to)."""
    return [(i, _bump(nb.markdown[i])) for start, end in quantity_spans(nb.markdown)
            for i in range(start, end) if nb.markdown[i].isdigit()]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_digit_of_every_number_in_the_prose_is_guarded(path):
    nb = read_notebook(path)
    reading = read_prose(nb)
    assert coverage_problems(nb, reading) == [], "the committed chapter must pass before mutating it"
    digits = _prose_digits(nb)
    if not digits:
        pytest.skip("no numbers in this page's prose")
    unguarded = []
    for i, digit in digits:
        mutated = dataclasses.replace(nb, markdown=nb.markdown[:i] + digit + nb.markdown[i + 1:])
        if not coverage_problems(mutated, read_after_digit_change(nb, reading, i, digit)):
            unguarded.append(nb.markdown[max(0, i - 30):i + 30])
    assert not unguarded, f"digit changes the coverage test does not notice: {unguarded}"


#: every how-many-th prose mutation is also read in full, to hold the quick reading to the full one
SAMPLED = 7


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_the_quick_reading_of_a_changed_digit_is_the_full_reading(path):
    nb = read_notebook(path)
    reading = read_prose(nb)
    digits = _prose_digits(nb)
    for i, digit in digits[::SAMPLED] + digits[-1:]:
        mutated = dataclasses.replace(nb, markdown=nb.markdown[:i] + digit + nb.markdown[i + 1:])
        assert read_after_digit_change(nb, reading, i, digit) == read_prose(mutated), (i, nb.markdown[i - 30:i + 30])


def test_the_quick_reading_handles_a_digit_beside_a_name_and_a_digit_that_makes_one():
    """Beside a name the page is read in full; a changed digit can also make a name ("H100" from
    "H000") or unmake one, which blanks or unblanks it."""
    for text, stated in (("The H100 reads 3.35 TB/s, 80 GB.", ["3.35 TB/s", "80 GB"]),
                         ("An H000 is no part; 5 of them.", ["5 of them"]),
                         ("Costs 1,000 and 1.5x, then 10 or 100.", ["1,000", "1.5x", "10 or 100"])):
        nb = NotebookNumbers(Path("page.ipynb"), text, stated=stated)
        reading = read_prose(nb)
        for i, ch in enumerate(text):
            if ch.isdigit():
                for digit in "0123456789":
                    mutated = dataclasses.replace(nb, markdown=text[:i] + digit + text[i + 1:])
                    assert read_after_digit_change(nb, reading, i, digit) == read_prose(mutated), (text, i, digit)
    with pytest.raises(ValueError, match="digit"):
        read_after_digit_change(nb, reading, 0, "1")


@functools.cache
def _committed_run(path: Path) -> tuple[list[dict], list[dict]]:
    """A chapter's code cells and the namespace before each, from one run that gives its committed
    outputs (the two tests below share it: conftest.py keeps a chapter's tests on one worker)."""
    cells = nbrun.load_cells(path)
    return cells, nbrun.namespaces(cells)


def _check_cells(cells: list[dict]) -> list[int]:
    return [i for i, c in enumerate(cells) if re.search(r"\b(check|check_range|answer|allow)\(", c["source"])]


@pytest.mark.parametrize("path", [pytest.param(p, marks=[pytest.mark.measures] * measures_this_machine(p))
                                  for p in NOTEBOOKS], ids=lambda p: p.stem)
def test_every_digit_in_the_checks_is_load_bearing(path):
    cells, before = _committed_run(path)
    unnoticed = []
    for i in _check_cells(cells):
        src = cells[i]["source"]
        run = nbrun.resumable(cells[i], before[i])
        for j, ch in enumerate(src):
            if ch.isdigit():
                mutated = src[:j] + _bump(ch) + src[j + 1:]
                line = src[:j].count("\n")
                if nbrun.divergence_after_change(cells, i, mutated, line + 1, run, before[i]) is None:
                    unnoticed.append(f"cell {i}, line {line + 1}: {src.splitlines()[line]!r} (digit {j})")
    assert not unnoticed, "digits in check cells whose change goes unnoticed:\n" + "\n".join(unnoticed)


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if not measures_this_machine(p)], ids=lambda p: p.stem)
def test_resuming_inside_a_cell_notices_what_running_the_whole_cell_notices(path):
    """``nbrun.divergence_after_change`` skips the statements before a changed line; on every
    how-many-th digit of the check cells it must agree with running the changed cell whole."""
    cells, before = _committed_run(path)
    for i in _check_cells(cells):
        src, run = cells[i]["source"], nbrun.resumable(cells[i], before[i])
        for j in [j for j, ch in enumerate(src) if ch.isdigit()][::SAMPLED * 3]:
            mutated = src[:j] + _bump(src[j]) + src[j + 1:]
            quick = nbrun.divergence_after_change(cells, i, mutated, src[:j].count("\n") + 1, run, before[i])
            whole = nbrun.divergence(cells, {i: mutated}, start=i, ns=dict(before[i]))
            assert (quick is None) == (whole is None), (i, src.splitlines()[src[:j].count("\n")], quick, whole)
