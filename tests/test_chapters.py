"""Every page in _toc.yml, and each page for instructors that neither edition publishes
(``inferlimits.book.UNPUBLISHED``: the quiz), keeps the book's promises: each number checked,
notebooks small, check cells collapsed, exercises with answers."""
from __future__ import annotations

import json
import re

import pytest

from inferlimits.book import ROOT, UNPUBLISHED, checked_notebooks, checked_pages, jupyterlab_collapsed
from inferlimits.book.course import TITLE, exercises, markdown as _markdown
from inferlimits.checks.numerals import coverage_problems, read_notebook

PAGES = checked_pages()
NOTEBOOKS = checked_notebooks()
CHAPTERS = [p for p in NOTEBOOKS if re.match(r"\d\d_", p.name)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_every_number_in_the_text_is_checked(page):
    problems = coverage_problems(read_notebook(page))
    assert not problems, f"{page.name}:\n" + "\n".join(problems)


def test_every_chapter_notebook_is_in_the_table_of_contents():
    """Every notebook is in _toc.yml, except a page that neither edition publishes (the quiz, whose
    keys it would give away): it is left out of the toc on purpose, and the checks walk it all the same."""
    import yaml

    listed = {p.resolve() for p in PAGES}
    orphans = [p.name for p in (ROOT / "chapters").glob("*.ipynb") if p.resolve() not in listed]
    assert not orphans, f"notebooks missing from _toc.yml (and so from the checks): {orphans}"
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    excluded = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["exclude_patterns"]
    for name in UNPUBLISHED:
        assert f"file: {name}\n" not in toc, f"{name} is published: _toc.yml lists it"
        assert any(pattern in (f"{name}.ipynb", f"{name}.md") for pattern in excluded), \
            f"{name} is not in _config.yml's exclude_patterns"


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


SOLUTION = re.compile(r"^```\{solution\} (\S+)\n:class: dropdown\n", re.M)


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_chapter_sets_five_varied_exercises_each_with_one_collapsed_solution(path):
    md = _markdown(path)
    found = exercises(path)
    assert len(found) >= 5, f"{path.name}: {len(found)} exercises, at least 5 wanted"
    for ex in found:
        assert ex.kind, f"{path.name}: exercise {ex.label!r} is titled {ex.title!r}, not 'kind · level' ({TITLE.pattern})"
    kinds = {ex.kind for ex in found}
    assert {"derive", "find the error"} <= kinds, f"{path.name}: kinds {sorted(kinds)} lack a derivation or an error to find"
    solutions = SOLUTION.findall(md)
    assert sorted(solutions) == sorted(ex.label for ex in found), (path.name, solutions)
    assert md.count("```{solution}") == len(solutions), f"{path.name}: a solution is not a collapsed dropdown"
    assert "```{admonition} Answer" not in md, f"{path.name}: an answer is still a hand-written admonition"
    for ex in found:  # each solution follows its exercise
        assert md.index(f"```{{solution}} {ex.label}\n") > md.index(f":label: {ex.label}\n"), (path.name, ex.label)


def test_exercise_labels_are_unique_in_the_book():
    labels = [ex.label for path in NOTEBOOKS for ex in exercises(path)]
    assert len(labels) == len(set(labels)), sorted(l for l in labels if labels.count(l) > 1)


OBJECTIVES = re.compile(r"^```\{admonition\} After this chapter you can\n:class: objectives\n((?:- .+\n)+)```", re.M)


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_chapter_opens_with_objectives_and_closes_with_takeaways(path):
    md = _markdown(path)
    objectives = OBJECTIVES.findall(md)
    assert len(objectives) == 1, f"{path.name}: wants one objectives box, {len(objectives)} found"
    assert 3 <= objectives[0].count("\n") <= 5, f"{path.name}: {objectives[0].count(chr(10))} objectives, 3 to 5 wanted"
    sections = re.findall(r"^## (.+)$", md, re.M)
    assert md.index("```{admonition} After this chapter you can") < md.index("\n## "), \
        f"{path.name}: the objectives come before the first section"
    assert sections[-2:] == ["Key takeaways", "Exercises"], f"{path.name}: the last sections are {sections[-2:]}"
    takeaways = md[md.index("## Key takeaways"):md.index("## Exercises")]
    assert 3 <= len(re.findall(r"^- ", takeaways, re.M)) <= 7, f"{path.name}: the takeaways are 3 to 7 bullets"


