"""The two editions (``make book`` and ``make student``, both run before the tests): the full book
shows every exercise with its solution; the student edition shows every exercise and no solution,
neither in the solution boxes nor in the check cells that state the answers' numbers, nor in the
notebook sources or its PDF."""
from __future__ import annotations

import html
import json
import re
import unicodedata
from functools import cache

import pytest

from inferlimits.book import ROOT, notebooks
from inferlimits.book.course import exercises, markdown, solutions
from inferlimits.book.sphinxext import SOLUTION_TAG, edition
from inferlimits.checks.numerals import NotebookNumbers, _read_code

FULL = ROOT / "_build" / "html"
STUDENT = ROOT / "_build" / "student" / "_build" / "html"
STUDENT_PDF = ROOT / "_build" / "student" / "book.pdf"
WITH_EXERCISES = [nb for nb in notebooks() if "```{exercise}" in nb.read_text(encoding="utf-8")]
#: roles, math and emphasis, which the pages show otherwise than the source writes them
_UNPLAIN = re.compile(r"\{[\w:-]+\}`[^`]*`|\$[^$]*\$|\*+")
#: the key of ``answers`` under which the snippets of the solution check cells are listed
CHECK_CELLS = "(the solution check cells)"
#: a run of text that a reader sees as it is written (no roles, math or markup in it)
PLAIN = re.compile(r"[^\s$`*{}\[\]<>|][^\n$`*{}\[\]<>|]{38,}[^\s$`*{}\[\]<>|]")


@pytest.fixture(scope="module", autouse=True)
def built():
    for site, command in ((FULL, "make book"), (STUDENT, "make student")):
        if not (site / "index.html").exists():
            pytest.fail(f"{site} is not built: run `{command}` (make test does it first)")


def _plain(text: str) -> str:
    """Text as the pages and the PDF show it, for comparing: ligatures undone (the PDF's "ﬁ"),
    quotes straightened, spaces collapsed."""
    text = unicodedata.normalize("NFKC", text).translate(str.maketrans("’‘“”", "''\"\""))
    return re.sub(r"\s+", " ", text)


@cache
def _page_text(site, nb) -> str:
    page = site / nb.relative_to(ROOT).with_suffix(".html")
    return _plain(html.unescape(re.sub(r"<[^>]+>", " ", page.read_text(encoding="utf-8"))))


def _cells(nb):
    return json.loads(nb.read_text(encoding="utf-8"))["cells"]


def _src(cell) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def _shown(cell) -> str:
    """What a cell shows besides its source: its outputs' text."""
    parts = []
    for out in cell.get("outputs", []):
        for value in [out.get("text", "")] + list(out.get("data", {}).values()):
            if isinstance(value, (str, list)):
                parts.append("".join(value))
    return re.sub(r"<[^>]+>", " ", "\n".join(parts))


def answers(nb) -> dict[str, list[str]]:
    """For each solution, the runs of its text that the chapter shows nowhere else (so a student
    must not see them); and the same for the snippets its check cells state."""
    cells = _cells(nb)
    found, md = solutions(nb), markdown(nb)
    for body in found.values():
        md = md.replace(body, "")
    outside = _plain(md + "\n".join(_shown(c) for c in cells
                                                       if SOLUTION_TAG not in c["metadata"].get("tags", [])))
    out = {}
    for label, body in found.items():
        runs = [_plain(r).strip() for r in PLAIN.findall(_UNPLAIN.sub("|", body))]
        out[label] = [r for r in runs if r not in outside]
    stated = NotebookNumbers(nb, "")
    for cell in cells:
        if cell["cell_type"] == "code" and SOLUTION_TAG in cell["metadata"].get("tags", []):
            _read_code(_src(cell), stated)
    out[CHECK_CELLS] = [_plain(s) for s in stated.stated if not re.search(r"[$`*{]", s)
                        and _plain(s) not in outside]
    return out


@pytest.mark.parametrize("nb", WITH_EXERCISES, ids=lambda p: p.stem)
def test_every_solution_has_text_of_its_own(nb):
    for label, runs in answers(nb).items():
        assert runs, f"{nb.name}: {label} has no text a test could look for in the editions"


@pytest.mark.parametrize("nb", WITH_EXERCISES, ids=lambda p: p.stem)
def test_the_full_book_shows_every_exercise_and_solution(nb):
    page = (FULL / nb.relative_to(ROOT).with_suffix(".html")).read_text(encoding="utf-8")
    labels = [ex.label for ex in exercises(nb)]
    assert page.count('class="exercise admonition"') == len(labels)
    assert page.count('class="solution dropdown admonition"') == len(labels)
    text = _page_text(FULL, nb)
    for label, runs in answers(nb).items():
        for run in runs:
            assert run in text, f"{nb.name}, {label}: the full book lacks {run!r}"


@pytest.mark.parametrize("nb", WITH_EXERCISES, ids=lambda p: p.stem)
def test_the_student_edition_shows_every_exercise_and_no_solution(nb):
    page = (STUDENT / nb.relative_to(ROOT).with_suffix(".html")).read_text(encoding="utf-8")
    full = (FULL / nb.relative_to(ROOT).with_suffix(".html")).read_text(encoding="utf-8")
    assert page.count('class="exercise admonition"') == full.count('class="exercise admonition"') > 0
    assert not re.search(r'class="[^"]*\bsolution\b', page), f"{nb.name}: a solution box in the student edition"
    assert f"tag_{SOLUTION_TAG}" not in page
    text = _page_text(STUDENT, nb)
    for label, runs in answers(nb).items():
        for run in runs:
            assert run not in text, f"{nb.name}, {label}: the student edition shows {run!r}"


def test_the_student_edition_carries_no_notebook_and_no_launch_button():
    assert not (STUDENT / "_sources").exists(), "the student edition publishes the notebooks (with solutions)"
    page = (STUDENT / "chapters" / "02_decode.html").read_text(encoding="utf-8")
    assert ".ipynb" not in page and "mybinder" not in page and "student edition" in page


def test_the_student_pdf_has_every_exercise_and_no_solution():
    import pypdfium2 as pdfium

    assert STUDENT_PDF.exists(), "the student PDF is not printed: run `make student`"
    doc = pdfium.PdfDocument(STUDENT_PDF)
    text = _plain(" ".join(page.get_textpage().get_text_bounded() for page in doc))
    doc.close()
    assert "Exercise 2.1" in text
    # the text is read well enough to find runs of prose: most of the exercises' own are found
    asked = [_plain(r).strip() for nb in WITH_EXERCISES for ex in exercises(nb)
             for r in PLAIN.findall(_UNPLAIN.sub("|", ex.text))]
    assert sum(r in text for r in asked) > 0.8 * len(asked) > 0, "the PDF's text does not read as its pages"
    # the solutions' own text (the short snippets their checks state may stand in another chapter)
    leaked = [(nb.name, run) for nb in WITH_EXERCISES for label, runs in answers(nb).items()
              if label != CHECK_CELLS for run in runs if run in text]
    assert not leaked, f"the student PDF shows solution text: {leaked[:5]}"


def test_the_edition_is_named_by_its_variable():
    assert edition({}) == "full" and edition({"INFERLIMITS_EDITION": "student"}) == "student"
    with pytest.raises(ValueError, match="INFERLIMITS_EDITION"):
        edition({"INFERLIMITS_EDITION": "teacher"})
