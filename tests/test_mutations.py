"""The promise of the number checks, tested directly: change any single digit in a chapter's
prose or in one of its checks, and the test suite fails (data values: test_mutations_data.py).

Prose digits are caught by the static coverage test; digits in check cells by re-running the
chapter in-process and comparing with its committed outputs (``nbrun``), as strict nbval does."""
from __future__ import annotations

import dataclasses
import re

import nbrun
import pytest

from inferlimits.book import measures_this_machine, notebooks
from inferlimits.checks.numerals import coverage_problems, quantity_spans, read_notebook

NOTEBOOKS = notebooks()


def _bump(digit: str) -> str:
    return "8" if digit == "9" else str(int(digit) + 1)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_digit_of_every_number_in_the_prose_is_guarded(path):
    nb = read_notebook(path)
    assert coverage_problems(nb) == [], "the committed chapter must pass before mutating it"
    spans = quantity_spans(nb.markdown)
    if not spans:
        pytest.skip("no numbers in this page's prose")
    unguarded = []
    for start, end in spans:
        for i in range(start, end):
            if nb.markdown[i].isdigit():
                mutated = dataclasses.replace(nb, markdown=nb.markdown[:i] + _bump(nb.markdown[i]) + nb.markdown[i + 1:])
                if not coverage_problems(mutated):
                    unguarded.append(nb.markdown[max(0, start - 30):end + 30])
    assert not unguarded, f"digit changes the coverage test does not notice: {unguarded}"


def _check_cells(cells: list[dict]) -> list[int]:
    return [i for i, c in enumerate(cells) if re.search(r"\b(check|check_range|allow)\(", c["source"])]


@pytest.mark.parametrize("path", [pytest.param(p, marks=[pytest.mark.measures] * measures_this_machine(p))
                                  for p in NOTEBOOKS], ids=lambda p: p.stem)
def test_every_digit_in_the_checks_is_load_bearing(path):
    cells = nbrun.load_cells(path)
    assert nbrun.divergence(cells) is None, "the committed outputs must match before mutating"
    before = nbrun.namespaces(cells)
    unnoticed = []
    for i in _check_cells(cells):
        src = cells[i]["source"]
        for j, ch in enumerate(src):
            if ch.isdigit():
                mutated = src[:j] + _bump(ch) + src[j + 1:]
                if nbrun.divergence(cells, {i: mutated}, start=i, ns=dict(before[i])) is None:
                    line = src[:j].count("\n")
                    unnoticed.append(f"cell {i}, line {line + 1}: {src.splitlines()[line]!r} (digit {j})")
    assert not unnoticed, "digits in check cells whose change goes unnoticed:\n" + "\n".join(unnoticed)
