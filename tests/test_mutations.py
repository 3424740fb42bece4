"""The promise of the number checks, tested directly: change any single digit in a chapter's
prose, in one of its checks, or in a data value, and the test suite fails.

Prose digits are caught by the static coverage test; digits in check cells and in the data files
by re-running the chapters in-process and comparing with their committed outputs (``nbrun``),
as strict nbval does."""
from __future__ import annotations

import re

import nbrun
import pytest

from inferlimits import datafiles, hardware, measurements, models
from inferlimits.book import notebooks
from inferlimits.numerals import coverage_problems, quantity_spans, read_notebook

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
                nb_mut = read_notebook(path)
                nb_mut.markdown = nb.markdown[:i] + _bump(nb.markdown[i]) + nb.markdown[i + 1:]
                if not coverage_problems(nb_mut):
                    unguarded.append(nb.markdown[max(0, start - 30):end + 30])
    assert not unguarded, f"digit changes the coverage test does not notice: {unguarded}"


def _check_cells(cells: list[dict]) -> list[int]:
    return [i for i, c in enumerate(cells) if re.search(r"\b(check|check_range|allow)\(", c["source"])]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
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


NUMBER_LINE = re.compile(r"^(?P<key>\w+) = (?P<value>[0-9][0-9_.]*)\s*$", re.M)


def _data_mutations():
    for name in ("accelerators.toml", "models.toml", "measurements.toml"):
        text = datafiles.read(name)
        for m in NUMBER_LINE.finditer(text):
            last = m.end("value") - 1
            yield pytest.param(name, last, id=f"{name}:{text.count(chr(10), 0, m.start()) + 1}:{m.group('key')}")


def _clear_caches():
    for f in (hardware.accelerators, models.models, measurements.measurements):
        f.cache_clear()


@pytest.mark.parametrize("name,position", list(_data_mutations()))
def test_every_data_value_is_used_and_checked(name, position, monkeypatch):
    original = datafiles.read
    text = original(name)
    mutated = text[:position] + _bump(text[position]) + text[position + 1:]
    monkeypatch.setattr(datafiles, "read", lambda n: mutated if n == name else original(n))
    _clear_caches()
    try:
        found = None
        for path in NOTEBOOKS:
            found = nbrun.divergence(nbrun.load_cells(path))
            if found:
                break
    finally:
        monkeypatch.undo()
        _clear_caches()
    line = text[:position].count("\n")
    assert found, f"changing {text.splitlines()[line]!r} in {name} changes nothing any chapter shows or checks"
