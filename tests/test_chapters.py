"""Every page in _toc.yml keeps the book's promises: each number checked, notebooks small,
check cells collapsed, exercises with answers."""
from __future__ import annotations

import json
import re

import pytest

from inferlimits.book import ROOT, jupyterlab_collapsed, notebooks, toc_pages
from inferlimits.checks.numerals import coverage_problems, read_notebook

PAGES = toc_pages()
NOTEBOOKS = notebooks()
CHAPTERS = [p for p in NOTEBOOKS if re.match(r"\d\d_", p.name)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_every_number_in_the_text_is_checked(page):
    problems = coverage_problems(read_notebook(page))
    assert not problems, f"{page.name}:\n" + "\n".join(problems)


def test_every_chapter_notebook_is_in_the_table_of_contents():
    listed = {p.resolve() for p in PAGES}
    orphans = [p.name for p in (ROOT / "chapters").glob("*.ipynb") if p.resolve() not in listed]
    assert not orphans, f"notebooks missing from _toc.yml (and so from the checks): {orphans}"


@pytest.mark.parametrize("path", sorted((ROOT / "chapters").glob("*.ipynb")), ids=lambda p: p.stem)
def test_committed_notebooks_are_under_300_kb(path):
    assert path.stat().st_size < 300_000, f"{path.name} is {path.stat().st_size:,} bytes"


def _cells(path):
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _src(cell):
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_check_cells_are_collapsed_in_the_book_and_outputs_committed(path):
    for cell in _cells(path):
        if cell["cell_type"] != "code":
            continue
        if re.search(r"\bcheck(_range)?\(", _src(cell)):
            assert "hide-cell" in cell["metadata"].get("tags", []), f"check cell not collapsed: {_src(cell)[:80]}"
        assert cell["outputs"] or not _src(cell).strip().splitlines()[-1:] or "import" in _src(cell), \
            f"a code cell has no committed outputs (run `make outputs`): {_src(cell)[:80]}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_cells_the_book_hides_open_collapsed_in_jupyterlab(path):
    cells = _cells(path)
    for cell in cells:
        tags = cell["metadata"].get("tags", [])
        assert cell["metadata"].get("jupyter", {}) == jupyterlab_collapsed(tags), \
            f"JupyterLab metadata does not follow the tags {tags} (run `make outputs`): {_src(cell)[:80]}"
    assert any(cell["metadata"].get("jupyter", {}).get("source_hidden") for cell in cells)


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_chapters_end_with_at_least_three_exercises_with_answers(path):
    md = "\n".join(_src(c) for c in _cells(path) if c["cell_type"] == "markdown")
    exercises = re.findall(r"\*\*Exercise \d+", md)
    answers = re.findall(r"```\{admonition\} Answer\n:class: dropdown", md)
    assert len(exercises) >= 3 and len(answers) >= len(exercises), (len(exercises), len(answers))
