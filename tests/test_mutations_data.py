"""Every data value is load-bearing: change the last digit of any number in any data file and
some chapter (or appendix) that reads the file shows or checks something else.

To keep this fast, one unmutated pass records which data files each chapter reads and how long it
takes to run; a mutation of a file then re-runs only the chapters that read it, cheapest first,
and stops at the first divergence."""
from __future__ import annotations

import re
import time
from functools import cache
from pathlib import Path

import nbrun
import pytest

from inferlimits.data import datafiles
from inferlimits.book import notebooks

DATA = Path(datafiles.__file__).parent  # the TOML files sit beside the module that reads them
NUMBER_LINE = re.compile(r"^(?P<key>\w+) = (?P<value>[0-9][0-9_.]*)\s*$", re.M)


def _bump(digit: str) -> str:
    return "8" if digit == "9" else str(int(digit) + 1)


@cache
def readers() -> dict[str, list[Path]]:
    """Data file -> the chapters that read it, cheapest to run first."""
    original, seen, cost, reads = datafiles.read, set(), {}, {}

    def tracing(name):
        seen.add(name)
        return original(name)

    datafiles.read = tracing
    try:
        for path in notebooks():
            seen.clear()
            datafiles.clear_caches()
            start = time.perf_counter()
            assert nbrun.divergence(nbrun.load_cells(path)) is None, f"{path.name}: committed outputs are stale"
            cost[path], reads[path] = time.perf_counter() - start, set(seen)
    finally:
        datafiles.read = original
        datafiles.clear_caches()
    return {name: sorted((p for p in reads if name in reads[p]), key=cost.get)
            for name in {n for r in reads.values() for n in r}}


def _mutations():
    for path in sorted(DATA.glob("*.toml")):
        text = path.read_text(encoding="utf-8")
        for m in NUMBER_LINE.finditer(text):
            yield pytest.param(path.name, m.end("value") - 1,
                               id=f"{path.name}:{text.count(chr(10), 0, m.start()) + 1}:{m.group('key')}")


def test_the_mutations_reach_every_data_file():
    """Guards the parametrisation below, which would otherwise pass by mutating nothing."""
    mutated = {p.values[0] for p in _mutations()}
    assert mutated == {p.name for p in DATA.glob("*.toml")} and "accelerators.toml" in mutated, mutated


@cache
def _committed(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _table_key(text: str, position: int) -> str | None:
    """The key of the TOML table the position sits in ("[measurements.KEY]" gives KEY)."""
    header = re.findall(r"^\[([^\]]+)\]", text[:position], re.M)
    return header[-1].rsplit(".", 1)[-1].strip('"') if header else None


@pytest.mark.parametrize("name,position", list(_mutations()))
def test_every_data_value_is_used_and_checked(name, position, monkeypatch):
    original = datafiles.read
    text = original(name)
    key = _table_key(text, position)
    # the chapters whose committed outputs name the mutated table first (a table of every run
    # shows it at once), then the rest, cheapest first
    chapters = sorted(readers().get(name, []), key=lambda p: not (key and key in _committed(p)))
    mutated = text[:position] + _bump(text[position]) + text[position + 1:]
    monkeypatch.setattr(datafiles, "read", lambda n: mutated if n == name else original(n))
    datafiles.clear_caches()
    try:
        found = next((d for d in (nbrun.divergence(nbrun.load_cells(p)) for p in chapters) if d), None)
    finally:
        monkeypatch.undo()
        datafiles.clear_caches()
    line = text[:position].count("\n")
    assert found, f"changing {text.splitlines()[line]!r} in {name} changes nothing any chapter shows or checks"
