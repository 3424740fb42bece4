"""The two editions (``make book`` and ``make student``, both run before the tests): the full book
shows every exercise with its solution; the student edition shows every exercise and no solution,
neither in the solution boxes nor in the check cells that state the answers' numbers, nor in the
notebook sources or its PDF. It is the students' whole kit (``inferlimits.book.student``): it
leaves out the pages for instructors only, writes the chapters as notebooks with no solutions
(which run under nbval), carries a lab sheet, and the Pages workflow publishes the notebooks on a
branch that Binder opens. No answer is in it: no run of ten words of any solution, and no number
that an exercise's ``answer`` states, on any student page, in the student PDF or in any student
notebook.

The tests marked ``beside_the_build`` need nothing built: they read the chapters, or write what
they check into a temporary folder."""
from __future__ import annotations

import html
import json
import re
import subprocess
import sys
import unicodedata
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import NamedTuple

import nbformat
import pytest
import yaml

from inferlimits.book import ROOT, UNPUBLISHED, measures_this_machine, notebooks, student
from inferlimits.book.course import exercises, markdown, solutions
from inferlimits.book.sphinxext import SOLUTION_TAG, UNLINKED, edition
from inferlimits.checks.numerals import IDENTIFIER, NUMERAL, NotebookNumbers, _blank, _names_pattern, _read_code, quantity_spans

FULL = ROOT / "_build" / "html"
STUDENT = ROOT / "_build" / "student" / "_build" / "html"
STUDENT_PDF = ROOT / "_build" / "student" / "book.pdf"
STUDENT_TOC = ROOT / "_build" / "student" / "_build" / "_toc.student.yml"
WITH_EXERCISES = [nb for nb in notebooks() if "```{exercise}" in nb.read_text(encoding="utf-8")]
STUDENT_NOTEBOOKS = student.student_notebooks()
#: roles, math and emphasis, which the pages show otherwise than the source writes them
_UNPLAIN = re.compile(r"\{[\w:-]+\}`[^`]*`|\$[^$]*\$|\*+")
#: the key of ``answers`` under which the snippets of the solution check cells are listed
CHECK_CELLS = "(the solution check cells)"
#: a run of text that a reader sees as it is written (no roles, math or markup in it)
PLAIN = re.compile(r"[^\s$`*{}\[\]<>|][^\n$`*{}\[\]<>|]{38,}[^\s$`*{}\[\]<>|]")
#: a list item's marker ("- ", "2. "), which the pages draw as a bullet or a number, not as text
LIST_MARKER = re.compile(r"(?m)^[ \t]*(?:[-*+]|\d+\.)[ \t]+")
#: how many words in a row of a solution the student edition must never show
RUN = 10
#: an answer's number this small (an integer) is too common to look for
COMMON = 10
#: a power of two (an integer) is a slider stop, a batch, a context or a width: every chapter writes
#: them for its own setups, so an answer that is one (the stop where a verdict changes) is not looked
#: for; the exercise's other numbers still are
STOPS = {2 ** n for n in range(31)}


@pytest.fixture(autouse=True)
def built(request):
    if request.node.get_closest_marker("beside_the_build"):
        return
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
        runs = [_plain(r).strip() for r in PLAIN.findall(_UNPLAIN.sub("|", LIST_MARKER.sub("", body)))]
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


@pytest.mark.beside_the_build
def test_the_edition_is_named_by_its_variable():
    assert edition({}) == "full" and edition({"INFERLIMITS_EDITION": "student"}) == "student"
    with pytest.raises(ValueError, match="INFERLIMITS_EDITION"):
        edition({"INFERLIMITS_EDITION": "teacher"})


# ---- what the student edition shows: its pages, its PDF, its notebooks ----------------------------

def _visible(page_html: str) -> str:
    """A page's text as a reader meets it: no scripts or styles, tags gone, entities read."""
    text = re.sub(r"(?is)<(script|style)\b.*?</\1>", " ", page_html)
    return _plain(html.unescape(re.sub(r"<[^>]+>", " ", text)))


@cache
def _pdf_text(path=STUDENT_PDF) -> str:
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(path)
    text = _plain(" ".join(page.get_textpage().get_text_bounded() for page in doc))
    doc.close()
    return text


def _notebook_text(nb: dict, outputs: bool = True) -> str:
    """Everything a notebook holds that a reader can see: Markdown, code, and every output's text
    (unless ``outputs`` is false)."""
    parts = []
    for cell in nb["cells"]:
        parts.append(_src(cell))
        for out in cell.get("outputs", []) if outputs else []:
            for value in [out.get("text", "")] + list(out.get("data", {}).values()):
                if isinstance(value, (str, list)):
                    parts.append(_visible("".join(value)))
    return _plain("\n".join(parts))


def _article(page_html: str) -> str:
    """A page's own content, without the navigation every page repeats (the chapters' numbered
    titles, the previous and next links)."""
    m = re.search(r"(?s)<article\b.*</article>", page_html)
    return m.group(0) if m else page_html


#: the chapters whose outputs are this machine's measurements, different at every run: a number
#: there that equals an answer does so by chance, so the answers' numbers are looked for in their
#: text alone (page and notebook), and in the PDF only where their measurements do not show them
MEASURED = ("13_measure",)


def _measured(name: str) -> bool:
    return Path(name).stem in MEASURED


@cache
def student_edition() -> dict[str, str]:
    """What the student edition shows, by where: every page of its site, its PDF, every notebook."""
    out = {f"page {p.relative_to(STUDENT).as_posix()}": _visible(_article(p.read_text(encoding="utf-8")))
           for p in sorted(STUDENT.rglob("*.html")) if not _measured(p.name)}
    out["the student PDF"] = _pdf_text()
    for path in sorted(student.NOTEBOOKS.glob("*.ipynb")):
        nb = json.loads(path.read_text(encoding="utf-8"))
        out[f"notebook {path.name}"] = _notebook_text(nb, outputs=not _measured(path.name))
        if _measured(path.name):  # its page shows its text and this run's measurements
            out[f"page chapters/{path.stem}.html"] = _notebook_text(nb, outputs=False)
    return out


@cache
def measured_numbers() -> frozenset[str]:
    """The numbers the measuring chapters show with their outputs (commas dropped): in their
    notebooks, and on their pages, which the build measured again."""
    texts = [_notebook_text(json.loads(p.read_text(encoding="utf-8")))
             for p in sorted(student.NOTEBOOKS.glob("*.ipynb")) if _measured(p.name)]
    texts += [_visible(_article(p.read_text(encoding="utf-8"))) for p in sorted(STUDENT.rglob("*.html")) if _measured(p.name)]
    return frozenset().union(*map(numbers_in, texts))


# ---- runs of ten words ---------------------------------------------------------------------------

#: a word, as runs are compared: letters and digits, a number with its separators kept whole
WORD = re.compile(r"\w+(?:[.,]\w+)*")
#: what the pages show otherwise than the source writes it, or not at all: roles, math, code,
#: directive fences and options, labels, comments, link targets, HTML tags, table rules
_BREAKS = re.compile(r"\{[\w:-]+\}`[^`]*`|\$\$.*?\$\$|\$[^$\n]*\$|`[^`\n]*`|^(?:`{3,}|:{3,}).*$|^:[\w-]+:.*$"
                     r"|^\(.*\)=\s*$|<!--.*?-->|\]\([^)]*\)|<[^>\n]+>|\|", re.M | re.S)


def _words(text: str) -> list[str]:
    return WORD.findall(_plain(text).lower())


def solution_runs_of(text: str, n: int = RUN) -> set[tuple[str, ...]]:
    """Every run of ``n`` words in ``text`` (Markdown) that stands within one stretch of plain prose:
    no run reaches across a role, math, code or markup, which the pages show otherwise."""
    runs = set()
    for stretch in _BREAKS.split(text.replace("**", "").replace("*", "")):
        words = _words(stretch)
        runs |= {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}
    return runs


def runs_in(text: str, n: int = RUN) -> set[tuple[str, ...]]:
    words = _words(text)
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


#: a role, with the words a page shows for it (its explicit title, else its target)
_ROLE = re.compile(r"\{[\w:-]+\}`([^`<]*?)\s*(?:<[^>`]*>)?`")


def shown_runs(markdown_text: str, n: int = RUN) -> set[tuple[str, ...]]:
    """The runs of Markdown as written and as the pages and the PDF show it: roles as their words,
    no emphasis, and math with its words or (as the PDF's text reads) without them."""
    read = _ROLE.sub(r"\1", markdown_text).replace("*", "")
    return runs_in(markdown_text, n) | runs_in(read, n) | runs_in(re.sub(r"(?s)\$\$.*?\$\$|\$[^$\n]*\$", " ", read), n)


@cache
def _outside_solutions() -> frozenset:
    """The runs the student edition shows by right: those of every student page's text outside its
    solutions, and of the outputs of every cell not tagged ``solution``."""
    runs = set()
    for page in student.student_pages():
        if page.suffix == ".md":
            runs |= shown_runs(page.read_text(encoding="utf-8"))
            continue
        md = markdown(page)
        for body in solutions(page).values():
            md = md.replace(body, "\n")
        runs |= shown_runs(md)
        runs |= runs_in("\n".join(_shown(c) for c in _cells(page) if SOLUTION_TAG not in c["metadata"].get("tags", [])))
    return frozenset(runs)


@cache
def solution_runs() -> dict[tuple[str, str], frozenset]:
    """For each solution (notebook, exercise label), its runs of ten words that the student edition
    has no right to show."""
    outside = _outside_solutions()
    return {(nb.name, label): frozenset(solution_runs_of(body) - outside)
            for nb in WITH_EXERCISES for label, body in solutions(nb).items()}


@pytest.mark.beside_the_build
def test_every_solution_has_runs_of_ten_words_of_its_own():
    bare = [key for key, runs in solution_runs().items() if not runs]
    assert not bare, f"solutions with no run of {RUN} words that the student edition could be searched for: {bare}"
    assert len(solution_runs()) == sum(len(solutions(nb)) for nb in WITH_EXERCISES) > 0


@pytest.mark.beside_the_build
def test_a_run_reaches_across_no_markup():
    text = "The step reads **all** the weights once, so $B$ sequences share one read of them each step we take."
    runs = solution_runs_of(text, 4)
    assert ("the", "step", "reads", "all") in runs and ("share", "one", "read", "of") in runs
    assert not any("b" in r for r in runs), "a run through the math"
    assert ("it", "is", "1,024", "tokens") in solution_runs_of("So it is 1,024 tokens.", 4)


def test_no_run_of_ten_words_of_any_solution_is_in_the_student_edition():
    wanted = {}
    for key, runs in solution_runs().items():
        for run in runs:
            wanted.setdefault(run, key)
    leaks = []
    for where, text in student_edition().items():
        for run in runs_in(text) & wanted.keys():
            leaks.append(f"{where} shows the solution of {wanted[run][1]} ({wanted[run][0]}): {' '.join(run)!r}")
    assert not leaks, f"{len(leaks)} runs of solutions in the student edition:\n" + "\n".join(sorted(leaks)[:30])


# ---- the answers' numbers ------------------------------------------------------------------------

#: the unit written after a number, as an answer states it: a sign (%, ×) or a word (GB, ms, tokens)
_UNIT = re.compile(r"\s?(%|×|[^\W\d_]+(?:/[^\W\d_]+)?)")


@dataclass(frozen=True)
class Quantity:
    number: str              # as written, commas kept ("53,200")
    unit: str | None         # what follows it ("GB", "%", "tokens"), None where nothing does

    def __str__(self) -> str:
        return self.number + (f" {self.unit}" if self.unit else "")


def answer_quantities(stated: str) -> list[Quantity]:
    """The quantities an ``answer``'s stated text gives, each a number with the unit written after
    it (a rate's whole unit: "GB/s", not "GB"): not the digits of names, and not the integers up to
    ``COMMON`` or in ``STOPS``, too common to look for."""
    out = []
    for a, b in quantity_spans(stated):
        number = stated[a:b]
        if re.fullmatch(r"[\d,]+", number) and (int(number.replace(",", "")) <= COMMON
                                                 or int(number.replace(",", "")) in STOPS):
            continue
        unit = _UNIT.match(stated, b)
        out.append(Quantity(number, unit.group(1) if unit else None))
    return out


def numbers_in(text: str) -> dict[str, list[tuple[int, int]]]:
    """Where each number ``text`` shows stands (commas dropped: 1,024 and 1024 are one), not counting
    the digits of names."""
    blanked = _blank(_blank(text, _names_pattern()), IDENTIFIER)
    out = {}
    for m in NUMERAL.finditer(blanked):
        out.setdefault(m.group(0).replace(",", ""), []).append(m.span())
    return out


def _with_unit(text: str, end: int, unit: str | None) -> bool:
    if unit is None:
        return True
    m = _UNIT.match(text, end)
    return bool(m) and m.group(1) == unit


@cache
def _numbers_shown() -> dict[str, tuple[dict, str]]:
    return {where: (numbers_in(text), text) for where, text in student_edition().items()}


#: a check's line, as a check cell prints it: ``text '<stated>'``, the number as the text writes it
_CHECK_LINE = re.compile(r"text '([^']*)'")


@cache
def _checked_in(name: str) -> str:
    """The stated snippets that the check cells of student notebook ``name`` print, one a line."""
    path = student.NOTEBOOKS / name
    if not path.exists():
        return ""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n".join(_CHECK_LINE.findall("\n".join(_shown(c) for c in cells)))


def all_answers() -> list[tuple[str, student.Answer]]:
    return [(nb.name, a) for nb in WITH_EXERCISES for a in student.answers(nb)]


#: a number this long (in significant digits) is looked for, with its unit, on every page; a
#: shorter one (22%, 30 FLOP per byte) stands by chance in some other chapter, so it is looked
#: for only in the exercise's own chapter
DISTINCT = 3


def _significant(number: str) -> int:
    return len(re.sub(r"\D", "", number).lstrip("0"))


def _own(where: str, name: str) -> bool:
    return where in (f"page chapters/{Path(name).stem}.html", f"notebook {name}")


class Leak(NamedTuple):
    label: str | None        # the exercise
    quantity: str            # as ``Quantity`` writes it: "256 KiB"
    place: str               # the page's name ("05_kv_cache"; its page and its notebook), or "PDF"
    message: str


def _place(where: str) -> str:
    if where == "the student PDF":
        return "PDF"
    return Path(where.split(" ", 1)[1]).stem


def answer_leaks(name: str, answer: student.Answer, shown: dict[str, tuple[dict, str]], checked: str) -> list[Leak]:
    """Where the student edition shows an answer's quantities (``answer_quantities``), as a reader
    who looks for the answer would find it:

    - in the exercise's own chapter (its page and its notebook), the number with the unit the
      answer writes after it (the number alone where the answer writes none);
    - anywhere else in the student edition (every page, the PDF, every notebook), the same where
      the number has ``DISTINCT`` significant digits or more and the answer gives its unit;
    - in the check lines its own chapter's notebook prints (``checked``: "text '…'"), the number
      with the answer's unit, or with nothing after it (a check that states the bare number)."""
    leaks = []
    for q in answer_quantities(answer.stated or ""):
        key = q.number.replace(",", "")
        anywhere = q.unit is not None and _significant(q.number) >= DISTINCT
        for where, (numbers, text) in shown.items():
            if not (anywhere or _own(where, name)):
                continue
            for a, b in numbers.get(key, []):
                if _with_unit(text, b, q.unit):
                    leaks.append(Leak(answer.label, str(q), _place(where),
                                      f"{name}, {answer.label}: {q} (answer {answer.stated!r}) in {where}: "
                                      f"…{text[max(0, a - 60):b + 40]}…"))
                    break
        for a, b in numbers_in(checked).get(key, []):
            if checked[b:b + 1] in ("", "\n") or _with_unit(checked, b, q.unit):
                line = checked[checked.rfind("\n", 0, a) + 1:checked.find("\n", b) % (len(checked) + 1)]
                leaks.append(Leak(answer.label, str(q), Path(name).stem,
                                  f"{name}, {answer.label}: {q} (answer {answer.stated!r}) in a check line of "
                                  f"its chapter's student notebook: text {line!r}"))
                break
    return leaks


@pytest.mark.beside_the_build
def test_answer_quantities_are_numbers_with_their_units():
    assert answer_quantities("about 53,200 tokens") == [Quantity("53,200", "tokens")]
    assert answer_quantities("H200 reads 4.49 GB, 2 times") == [Quantity("4.49", "GB")]
    assert answer_quantities("Llama-3.1-8B at 12% and 7.5×, then 1.43") == [
        Quantity("12", "%"), Quantity("7.5", "×"), Quantity("1.43", None)]
    assert answer_quantities("at 256 sequences, the stop 1,024; 16.9 GB/s") == [Quantity("16.9", "GB/s")]
    text = "one token every 1.9 ms; the cache is 1.9 GB on the H100, 22% of it, for 141 users"
    own = {"page chapters/x.html": (numbers_in(text), text)}
    other = {"page chapters/y.html": (numbers_in(text), text)}

    def leaks(stated, shown, checked=""):
        return [leak.message for leak in answer_leaks("x.ipynb", student.Answer("x-ex1", stated, 0.02, 1), shown, checked)]

    assert len(leaks("cache is 1.9 GB", own)) == 1 and "1.9 GB" in leaks("cache is 1.9 GB", own)[0]
    assert not leaks("cache is 1.9 GB", other), "too short a number to look for in other chapters"
    assert len(leaks("cache is 1.88 GB", {"page y": (numbers_in(t := "so 1.88 GB"), t)})) == 1
    assert not leaks("takes 1.9 s", own) and not leaks("about 5 tokens", own, "5")
    assert leaks("about 22%", own) and not leaks("about 22%", other) and leaks("about 141", own)
    assert leaks("about 53,200 tokens", {}, "about 53,200")[0].endswith("text 'about 53,200'")
    assert not leaks("about 11 whole layers", {}, "about 11 MB") and leaks("about 11 MB", {}, "about 11 MB of")


@pytest.mark.beside_the_build
def test_the_answers_are_read_from_the_solution_check_cells(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("```{exercise} compute · basic\n:label: x-ex1\nHow fast?\n\nTolerance: 2%.\n```\n\n"
                                      "```{solution} x-ex1\n:class: dropdown\nAbout 224 tokens per second.\n```"),
        nbformat.v4.new_code_cell('answer("ceiling", c, "About 224 tokens", tolerance=0.02)\ncheck("data", 1, "2")',
                                  metadata={"tags": ["hide-cell", SOLUTION_TAG]}),
        nbformat.v4.new_code_cell('answer("not an exercise answer", 1, "3", tolerance=0)'),
        nbformat.v4.new_markdown_cell("## After the exercises"),
        nbformat.v4.new_code_cell('answer("follows no solution", x, f"{x}", tolerance=t)',
                                  metadata={"tags": [SOLUTION_TAG]}),
    ]
    path = tmp_path / "x.ipynb"
    nbformat.write(nb, path)
    assert student.answers(path) == [student.Answer("x-ex1", "About 224 tokens", 0.02, 1),
                                     student.Answer(None, None, None, 4)]


#: (exercise label, quantity as ``Quantity`` writes it, page name) -> why the number that stands on
#: that page (and in its notebook) gives nothing away: it is another quantity, or a number the
#: exercise itself sends the reader to, to check a derivation. Reviewed one by one, since the test
#: cannot tell a coincidence from a leak. An entry the test no longer finds fails.
_CHECKED_AGAINST = "a derivation: the exercise asks the reader to check it against this number of the chapter's table"
COINCIDENCES: dict[tuple[str, str, str], str] = {
    ("low-precision-ex2", "1.87 times", "07_low_precision"): _CHECKED_AGAINST + " (the effective rate's gain)",
    ("low-precision-ex2", "281", "07_low_precision"): _CHECKED_AGAINST + " (the knee of the weights)",
    ("low-precision-ex2", "356 to", "07_low_precision"): _CHECKED_AGAINST + " (the whole-step knee)",
    ("moe-ex2", "18.3", "08_moe"): "a derivation: the exercise asks the reader to check the ratio of the knees "
                                   "against the text's ratio of the bytes, 18.3",
    ("low-precision-ex3", "1.87 times", "07_low_precision"): "the exercise's 1.87 is the ratio of the bytes of "
        "FP8 and INT4 weights (70.6 GB over 37.7 GB); the page's is FP8's effective-rate gain over BF16",
    ("index-card-ex6", "117 %", "a3_measurements"): "appendix A3's +117% is a megakernel run of Llama-3.2-1B "
        "beside its own ceiling; the exercise's is a blog's Llama-3.1-8B claim on an H200",
    ("measure-ex6", "6.25 %", "07_low_precision"): "both are one sixteenth: the exercise's is each of 64 users' "
        "share of a 4-fold gain, the page's is MXFP4's scale bytes per 32 four-bit numbers",
}


def test_no_answer_number_is_in_the_student_edition():
    """Every quantity an exercise's ``answer`` states (``answer_quantities``) is absent from every
    student page, the student PDF and every student notebook, as ``answer_leaks`` looks for it;
    ``COINCIDENCES`` names the places where the same number is another quantity. The PDF is printed
    from the pages, so a number it shows counts there only where no page shows it. Works on
    whatever ``answer`` calls the chapters hold."""
    found = [leak for name, a in all_answers() for leak in answer_leaks(name, a, _numbers_shown(), _checked_in(name))]
    on_pages = {(leak.label, leak.quantity) for leak in found if leak.place != "PDF"}
    leaks = [leak for leak in found if (leak.label, leak.quantity, leak.place) not in COINCIDENCES
             and not (leak.place == "PDF" and ((leak.label, leak.quantity) in on_pages
                                               or leak.quantity.split()[0].replace(",", "") in measured_numbers()))]
    stale = set(COINCIDENCES) - {(leak.label, leak.quantity, leak.place) for leak in found}
    assert not stale, f"COINCIDENCES no longer found (remove them): {sorted(stale)}"
    assert not leaks, f"{len(leaks)} answers' numbers in the student edition:\n" + "\n".join(l.message for l in leaks[:60])


# ---- the pages for instructors only --------------------------------------------------------------

@pytest.mark.beside_the_build
def test_the_student_table_of_contents_leaves_out_the_pages_for_instructors():
    toc = {"root": "intro", "parts": [
        {"caption": "A", "chapters": [{"file": "chapters/primer"}, {"file": "chapters/labs"}]},
        {"caption": "Teaching", "chapters": [{"file": "chapters/instructor"}, {"file": "chapters/quiz"}]},
        {"caption": "B", "chapters": [{"file": "chapters/x", "sections": [{"file": "chapters/quiz"}, {"file": "chapters/y"}]}]}]}
    out = student.student_toc(toc)
    assert [p["caption"] for p in out["parts"]] == ["A", "B"]
    assert out["parts"][1]["chapters"] == [{"file": "chapters/x", "sections": [{"file": "chapters/y"}]}]
    assert toc["parts"][1]["chapters"], "the toc given is not changed"
    with pytest.raises(ValueError, match="left_out"):
        student.student_toc({"root": "chapters/instructor"})
    assert set(student.INSTRUCTOR_ONLY) >= {"chapters/instructor", "chapters/quiz"}
    pages = {p.relative_to(ROOT).with_suffix("").as_posix() for p in student.student_pages()}
    assert not pages & set(student.INSTRUCTOR_ONLY) and "chapters/labs" in pages


def _instructor_pages() -> list[Path]:
    return [p for d in student.INSTRUCTOR_ONLY for p in (ROOT / f"{d}.ipynb", ROOT / f"{d}.md") if p.exists()]


def test_the_student_edition_neither_builds_nor_links_the_pages_for_instructors():
    listed = yaml.safe_load(STUDENT_TOC.read_text(encoding="utf-8"))
    files = re.findall(r"'file': '([^']+)'", str(listed))
    assert files and not set(files) & set(student.INSTRUCTOR_ONLY), "the student toc lists a page for instructors"
    names = "|".join(re.escape(d.rsplit("/", 1)[1]) for d in student.INSTRUCTOR_ONLY)
    for d in student.INSTRUCTOR_ONLY:
        assert not (STUDENT / f"{d}.html").exists(), f"the student edition builds {d}"
    for page in STUDENT.rglob("*.html"):
        linked = re.findall(rf'href="[^"]*\b(?:{names})\.(?:html|ipynb)\b', page.read_text(encoding="utf-8"))
        assert not linked, f"{page.relative_to(STUDENT)} links a page for instructors: {linked}"
    assert UNLINKED in _visible((STUDENT / "intro.html").read_text(encoding="utf-8"))
    for path in _instructor_pages():
        if path.relative_to(ROOT).with_suffix("").as_posix() not in UNPUBLISHED:  # the quiz: in neither edition
            assert (FULL / path.relative_to(ROOT).with_suffix(".html")).exists(), f"the full book lacks {path.name}"


def test_the_pages_for_instructors_are_not_in_the_student_pdf_or_pages():
    shown = runs_in(" ".join(p.read_text(encoding="utf-8") if p.suffix == ".md" else markdown(p)
                             for p in student.student_pages()))
    text = runs_in(_pdf_text()) | set().union(*(runs_in(t) for w, t in student_edition().items() if w.startswith("page ")))
    for path in _instructor_pages():
        own = solution_runs_of(markdown(path) if path.suffix == ".ipynb" else path.read_text(encoding="utf-8")) - shown
        assert own, f"{path.name}: no run of its own to look for"
        found = own & text
        assert not found, f"{path.name} is in the student edition: {[' '.join(r) for r in list(found)[:3]]}"


# ---- solution-free notebooks ---------------------------------------------------------------------

@pytest.mark.beside_the_build
def test_solutions_are_stripped_whatever_their_fence():
    text = ("Before.\n\n```{exercise} derive · basic\n:label: e1\nShow it.\n```\n\n"
            "````{solution} e1\n:class: dropdown\n```python\nprint('inside')\n```\nThe answer.\n````\n\n"
            ":::{solution} e2\nAnother.\n:::\n\nAfter.\n")
    out = student.strip_solutions(text)
    assert out == "Before.\n\n```{exercise} derive · basic\n:label: e1\nShow it.\n```\n\nAfter.\n"
    assert student.strip_solutions("```{solution} e1\nonly\n```") == ""
    with pytest.raises(ValueError, match="never closed"):
        student.strip_solutions("```{solution} e1\nopen")


@pytest.mark.beside_the_build
@pytest.mark.parametrize("nb", STUDENT_NOTEBOOKS, ids=lambda p: p.stem)
def test_a_student_notebook_keeps_every_cell_but_the_solutions(nb):
    chapter = json.loads(nb.read_text(encoding="utf-8"))
    mine = student.solution_free(chapter)
    assert not any(student.is_solution_cell(c) for c in mine["cells"])
    assert not any(re.search(r"\{solution\}", _src(c)) for c in mine["cells"])
    kept = [c for c in chapter["cells"] if not student.is_solution_cell(c) and c["cell_type"] == "code"]
    assert [c for c in mine["cells"] if c["cell_type"] == "code"] == kept, "a code cell other than a solution changed"
    assert mine["metadata"]["inferlimits"]["edition"] == "student"
    assert [e.label for e in exercises(nb)] == re.findall(r"^:label: (\S+)", "\n".join(
        _src(c) for c in mine["cells"] if c["cell_type"] == "markdown"), re.M)[:len(exercises(nb))] or not exercises(nb)


def _nbval(path: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """Strict nbval on one notebook, as ``make test`` runs the chapters (no sanitizers there either)."""
    return subprocess.run([sys.executable, "-m", "pytest", "--nbval", "--nbval-current-env", "-p", "no:cacheprovider",
                           "-p", "no:xdist", "-q", str(path)], capture_output=True, text=True, cwd=path.parent,
                          timeout=600, env=env)


def _runs_as_a_prefix(chapter: dict, mine: dict) -> bool:
    """Whether the student notebook's code cells are the chapter's first ones, as they are: every
    solution check cell comes after every cell the student notebook keeps."""
    code = [c for c in chapter["cells"] if c["cell_type"] == "code"]
    kept = [c for c in mine["cells"] if c["cell_type"] == "code"]
    return code[:len(kept)] == kept


@pytest.mark.beside_the_build
@pytest.mark.parametrize("nb", [pytest.param(p, marks=[pytest.mark.measures] if measures_this_machine(p) else [])
                                for p in STUDENT_NOTEBOOKS], ids=lambda p: p.stem)
def test_the_student_notebook_runs_under_nbval(nb, tmp_path):
    """nbval executes a notebook's code cells in order in one fresh kernel and compares each cell's
    outputs with those committed, and Markdown plays no part in it. Where the student notebook's
    code cells are the chapter's first ones, with the same sources, outputs and metadata (every
    solution check cell comes after them), the strict nbval run of the chapter that ``make test``
    makes runs exactly them, in this order, before any solution cell can change the kernel: it is
    this notebook's nbval run, and running it again would prove nothing more. Any other student
    notebook runs under strict nbval here (one that measures the machine, marked ``measures`` as
    its chapter is)."""
    chapter = json.loads(nb.read_text(encoding="utf-8"))
    mine = student.solution_free(chapter)
    if _runs_as_a_prefix(chapter, mine):
        return
    path = tmp_path / nb.name
    nbformat.write(nbformat.from_dict(mine), path)
    result = _nbval(path)
    assert result.returncode == 0, f"{nb.name}, its solutions left out, fails under nbval:\n{result.stdout[-4000:]}"


@pytest.mark.beside_the_build
def test_a_student_notebook_runs_under_nbval_from_the_student_branch(tmp_path):
    """The argument above, held to one notebook, as Binder serves it: the smallest one that loses
    solution cells runs under strict nbval in the student branch's tree, with the branch's own copy
    of the package first on the path."""
    import os

    with_solutions = [p for p in STUDENT_NOTEBOOKS if not measures_this_machine(p)
                      and any(student.is_solution_cell(c) for c in _cells(p))]
    smallest = min(with_solutions, key=lambda p: sum(c["cell_type"] == "code" for c in _cells(p)))
    tree = student.write_branch(tmp_path / "branch")
    env = {**os.environ, "PYTHONPATH": str(tree)}
    imported = subprocess.run([sys.executable, "-c", "import inferlimits; print(inferlimits.__file__)"],
                              capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60).stdout.strip()
    assert Path(imported).is_relative_to(tree), imported
    result = _nbval(tree / student.BRANCH_NOTEBOOKS / smallest.name, env)
    assert result.returncode == 0, f"{smallest.name} fails under nbval:\n{result.stdout[-4000:]}"
    assert " passed" in result.stdout


def test_make_student_writes_every_notebook_without_solutions():
    written = sorted(p.name for p in student.NOTEBOOKS.glob("*.ipynb"))
    assert written == sorted(p.name for p in STUDENT_NOTEBOOKS), "the notebooks in _build/student/notebooks"
    for nb in STUDENT_NOTEBOOKS:
        path = student.NOTEBOOKS / nb.name
        on_disk = json.loads(path.read_text(encoding="utf-8"))
        assert on_disk == json.loads(nbformat.writes(nbformat.from_dict(
            student.solution_free(json.loads(nb.read_text(encoding="utf-8")))))), \
            f"{path} is not the chapter as it is now, its solutions left out: run `make student`"
        nbformat.validate(nbformat.from_dict(on_disk))
        assert not any(SOLUTION_TAG in c["metadata"].get("tags", []) for c in on_disk["cells"])
        assert "{solution}" not in "".join(_src(c) for c in on_disk["cells"])
    assert sorted(p.name for p in (student.BRANCH / student.BRANCH_NOTEBOOKS).glob("*.ipynb")) == written


# ---- the student branch, which Binder opens ------------------------------------------------------

@pytest.mark.beside_the_build
def test_the_student_branch_holds_what_binder_and_make_lab_need(tmp_path):
    tree = student.write_branch(tmp_path / "branch")
    for name in student.BRANCH_FILES:
        assert (tree / name).read_bytes() == (ROOT / name).read_bytes()
    assert "-e ." in (tree / "requirements.txt").read_text().splitlines(), "Binder installs the package from the branch"
    assert sorted(p.name for p in (tree / student.BRANCH_NOTEBOOKS).iterdir()) == sorted(p.name for p in STUDENT_NOTEBOOKS)
    for part in student.BRANCH_LEAVES_OUT:
        assert not (tree / "inferlimits" / part).exists()
    assert any((ROOT / "inferlimits" / part).exists() for part in student.BRANCH_LEAVES_OUT), "nothing left out"
    shipped = {p.relative_to(tree).as_posix() for p in (tree / "inferlimits").rglob("*") if p.is_file()}
    assert "inferlimits/data/accelerators.toml" in shipped and not any("__pycache__" in p for p in shipped)
    imports = []
    for part in student.BRANCH_LEAVES_OUT:
        dotted = "inferlimits." + part.replace("/", ".")
        parent, leaf = dotted.rsplit(".", 1)
        imports += [rf"\b{re.escape(dotted)}\b", rf"from {re.escape(parent)} import [^\n]*\b{leaf}\b",
                    rf"from \.+ import [^\n]*\b{leaf}\b"]
    for path in [*(tree / "inferlimits").rglob("*.py"), *(tree / student.BRANCH_NOTEBOOKS).glob("*.ipynb")]:
        found = re.search("|".join(imports), path.read_text(encoding="utf-8"))
        assert not found, f"{path.relative_to(tree)} imports a part the branch leaves out: {found.group(0)}"
    for nb in (tree / student.BRANCH_NOTEBOOKS).glob("*.ipynb"):
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        assert not any(student.is_solution_cell(c) for c in cells) and "{solution}" not in "".join(map(_src, cells))
    assert not any((tree / student.BRANCH_NOTEBOOKS / f"{d.rsplit('/', 1)[1]}.ipynb").exists()
                   for d in student.INSTRUCTOR_ONLY)
    makefile = (tree / "Makefile").read_text()
    assert re.search(r"^lab:", makefile, re.M) and "jupyter lab" in makefile and student.BRANCH_NOTEBOOKS in makefile
    assert "\t" in makefile and "    \t" not in makefile


@pytest.mark.beside_the_build
def test_binder_links_open_the_student_branch():
    url = student.binder_url("https://github.com/someone/the-book", "13_measure.ipynb")
    assert url == "https://mybinder.org/v2/gh/someone/the-book/student?urlpath=lab/tree/notebooks/13_measure.ipynb"
    assert student.binder_url("https://github.com/someone/the-book.git").endswith("/student?urlpath=lab/tree/notebooks")
    for bad in ("https://gitlab.com/a/b", "", None):
        with pytest.raises(ValueError, match="repository"):
            student.binder_url(bad)
    with pytest.raises(ValueError, match="notebook"):
        student.binder_url("https://github.com/a/b", "../x.ipynb")


@pytest.mark.beside_the_build
def test_the_workflow_pushes_the_student_branch_and_publishes_the_student_edition():
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "book.yml").read_text(encoding="utf-8"))
    on = workflow.get("on", workflow.get(True))
    assert student.STUDENT_BRANCH in on["push"]["branches-ignore"], "the branch the workflow writes builds nothing"
    jobs = workflow["jobs"]
    build = jobs["build-and-test"]["steps"]
    runs = " ".join(s.get("run", "") for s in build)
    assert "make test" in runs and "_build/student/_build/html _build/html/student" in runs
    uploads = {s["with"]["name"]: s["with"]["path"] for s in build
               if s.get("uses", "").startswith("actions/upload-artifact") and "name" in s.get("with", {})}
    assert uploads["student-branch"] == student.BRANCH.relative_to(ROOT).as_posix()
    push = jobs["student-branch"]
    assert push["needs"] == "build-and-test" and push["permissions"] == {"contents": "write"}
    assert "refs/heads/main" in push["if"] and "pull_request" in push["if"]
    assert workflow["permissions"] == {"contents": "read"}, "only the job that pushes may write"
    steps = push["steps"]
    assert steps[0]["uses"].startswith("actions/download-artifact") and steps[0]["with"]["name"] == "student-branch"
    script = steps[-1]["run"]
    assert f"git init -q -b {student.STUDENT_BRANCH}" in script
    assert re.search(rf"git push --force \S+ {student.STUDENT_BRANCH}$", script.strip())
    assert steps[-1]["working-directory"] == steps[0]["with"]["path"]


# ---- the lab sheet -------------------------------------------------------------------------------

@pytest.mark.beside_the_build
def test_the_lab_sheet_names_every_lab_what_it_needs_and_its_binder_links():
    from inferlimits.book.course import SESSIONS

    repository = "https://github.com/someone/the-book"
    text = student.labs_markdown(repository)
    labs = [(i, s) for i, s in enumerate(SESSIONS, start=1) if s.lab]
    assert labs, "the course plan has no lab"
    for i, s in labs:
        assert f"### Session {i}: {s.topic}" in text and s.lab[1:] in text
        for stem in student.lab_notebooks(s):
            assert f"{{doc}}`{stem}` ([Binder]({student.binder_url(repository, stem + '.ipynb')}))" in text
        section = text.split(f"### Session {i}:", 1)[1].split("###", 1)[0]
        measures = any(measures_this_machine(ROOT / "chapters" / f"{c}.ipynb") for c in student.lab_notebooks(s))
        assert ("your own laptop" in section) == measures
        # what the session before sets up for this lab, where the students read about the lab
        assert i == 1 or SESSIONS[i - 2].setup in section
    assert any(SESSIONS[i - 2].setup for i, _ in labs if i > 1), "no lab is set up the session before"
    assert student.lab_notebooks(next(s for _, s in labs if "chapter 13" in s.lab)) == ["13_measure"]
    assert all(f"notebooks/{p.name}" in text or p.name not in text for p in STUDENT_NOTEBOOKS)
    assert "mybinder" not in student.labs_markdown(None) and "ask your instructor" in student.labs_markdown(None)
    sheet = (ROOT / f"{student.LAB_SHEET}.md").read_text(encoding="utf-8")
    assert sheet.count(student.LAB_SHEET_MARKER) == 1 and "## What to hand in" in sheet


def test_the_student_edition_carries_the_lab_sheet():
    from inferlimits.book.course import SESSIONS

    page = STUDENT / f"{student.LAB_SHEET}.html"
    text = _visible(page.read_text(encoding="utf-8"))
    assert student.LAB_SHEET_MARKER not in page.read_text(encoding="utf-8")
    for i, s in enumerate(SESSIONS, start=1):
        if s.lab:
            assert f"Session {i}: {s.topic}" in text
    assert "What to hand in" in text
    index = (STUDENT / "index.html").read_text(encoding="utf-8") + (STUDENT / "intro.html").read_text(encoding="utf-8")
    assert f'{student.LAB_SHEET.rsplit("/", 1)[1]}.html' in index, "the lab sheet is not in the student edition's navigation"
    assert "Labs" in _pdf_text()


@pytest.mark.beside_the_build
def test_references_to_the_pages_for_instructors_are_recognised():
    from inferlimits.book import sphinxext

    labels = {"course-plan": "chapters/instructor"}

    def target(**node):
        return sphinxext._instructor_only_target(node, labels)

    assert target(refdomain="std", reftype="doc", reftarget="chapters/instructor", refdoc="intro") == "chapters/instructor"
    assert target(refdomain="std", reftype="doc", reftarget="quiz", refdoc="chapters/02_decode") == "chapters/quiz"
    assert target(refdomain="std", reftype="doc", reftarget="/chapters/quiz", refdoc="chapters/a1") == "chapters/quiz"
    assert target(refdomain="std", reftype="doc", reftarget="02_decode", refdoc="chapters/01_two_speeds") is None
    assert target(refdomain="doc", reftype="myst", reftarget="chapters/instructor") == "chapters/instructor"
    assert target(refdomain="std", reftype="ref", reftarget="Course-Plan") == "chapters/instructor"
    assert target(refdomain="std", reftype="numref", reftarget="decode-ex1") is None
    found = sphinxext._instructor_only_labels(ROOT)
    assert all(d in student.INSTRUCTOR_ONLY for d in found.values())
    assert sphinxext._page_title(ROOT, "chapters/instructor") != "instructor", "its title is read from its heading"


@pytest.mark.beside_the_build
def test_make_student_writes_the_notebooks_and_the_branch():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    target = makefile.split("\nstudent:", 1)[1].split("\n\n", 1)[0]
    assert "$(PY) -m inferlimits.book.student" in target and "INFERLIMITS_EDITION=student" in target


# ---- the projects: what each needs (inferlimits.book.projects), on the lab sheet ------------------

@pytest.mark.beside_the_build
def test_every_project_has_a_row_and_every_row_names_a_project():
    from inferlimits.book import projects

    found = [e.label for e in projects.project_exercises()]
    assert found, "the chapters set no project-sized exercise"
    assert projects.problems() == []
    assert sorted(r.label for r in projects.PROJECTS) == sorted(found)


@pytest.mark.beside_the_build
def test_the_project_rows_are_checked_against_the_chapters_and_the_data():
    import dataclasses

    from inferlimits.book import projects

    rows = projects.PROJECTS
    gpu = next(r for r in rows if r.hardware == projects.GPU)
    assert any(f"{rows[0].label}: a project with no row" == p for p in projects.problems(rows[1:]))
    stray = dataclasses.replace(rows[0], label="no-such-ex1")
    assert "no-such-ex1: a row that names no project" in projects.problems(rows + (stray,))
    assert f"{rows[0].label}: 2 rows" in projects.problems(rows + (rows[0],))
    changed = {gpu.label: dataclasses.replace(gpu, without_gpu="", runs=()),
               rows[0].label: dataclasses.replace(rows[0], hardware="a laptop", runs=("no_such_run",))}
    found = projects.problems(tuple(changed.get(r.label, r) for r in rows))
    assert f"{gpu.label}: it needs a GPU and gives no route without one" in found
    assert any("hardware 'a laptop'" in p for p in found) and any("'no_such_run' is not in the data" in p for p in found)
    with pytest.raises(ValueError, match="label"):
        projects.project("no-such-ex1")


@pytest.mark.beside_the_build
def test_every_project_states_its_tolerance_and_what_it_applies_to():
    """A project states its tolerance in its last line, as every exercise does; where it measures
    something, its row says that the tolerance holds the predictions, never the measurements."""
    from inferlimits.book import projects

    for e in projects.project_exercises():
        last = e.text.strip().splitlines()[-1].strip()
        assert re.fullmatch(r"Tolerance: (?:exact|\d+(?:\.\d+)?%(?: on each number)?(?:; exact on counts)?)\.", last), \
            f"{e.label}: no tolerance in its last line"
        row = projects.project(e.label)
        if row.hardware != "none":
            assert re.search(r"\b(?:has|have) none\b|\bNever the measurements\b", row.tolerance), \
                f"{e.label}: its row does not say the measurements carry no tolerance"
    assert any(r.hardware == projects.GPU for r in projects.PROJECTS), "no project needs a GPU: drop GPU, or check"


@pytest.mark.beside_the_build
def test_the_lab_sheet_shows_what_each_project_needs_as_a_table():
    from inferlimits.book import projects
    from inferlimits.book.course import PROJECT, RUBRICS, numref

    text = student.labs_markdown("https://github.com/someone/the-book")
    section = projects.projects_markdown()
    assert section in text and student.labs_markdown(None).endswith(section)
    table = [ln for ln in section.splitlines() if ln.startswith("| ")]
    header, rows = table[0], table[1:]
    assert header.count("|") == 7 and "Hardware" in header and "Without a GPU" in header
    exercises_ = projects.project_exercises()
    assert len(rows) == len(exercises_)
    for line, e in zip(rows, exercises_):
        r = projects.project(e.label)
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        assert cells[0].startswith(numref(e)) and cells[1:4] == [r.hardware, r.software.strip(), r.model.strip()]
        assert cells[4] == (r.without_gpu or cells[4]) and cells[5] == r.tolerance
    for words in (RUBRICS[PROJECT].full, RUBRICS[PROJECT].partial, RUBRICS[PROJECT].none):
        assert words in section, "the project rubric is not on the lab sheet as course.RUBRICS holds it"
    with pytest.raises(ValueError, match="cell"):
        projects._cell("a | b")


@pytest.mark.beside_the_build
def test_the_lab_sheets_projects_show_no_run_of_a_solution():
    """What the build writes into the lab sheet (``labs_markdown``) shows no run of ten words of any
    solution, as the student edition's pages must not (checked here before any build)."""
    wanted = {run: key for key, runs in solution_runs().items() for run in runs}
    shown = runs_in(_plain(student.labs_markdown("https://github.com/someone/the-book")))
    leaked = [f"{wanted[r][1]}: {' '.join(r)}" for r in shown & wanted.keys()]
    assert not leaked, f"the lab sheet shows solutions: {leaked[:5]}"


# ---- the student branch's runtime-only requirements ------------------------------------------------

def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@pytest.mark.beside_the_build
def test_the_student_requirements_pin_as_the_book_does_and_hold_no_build_or_test_tool():
    book = student.requirement_lines(ROOT / "requirements.txt")
    mine = student.requirement_lines(ROOT / student.BRANCH_REQUIREMENTS)
    tools = {_canonical(t) for t in student.BUILD_TOOLS}
    assert "-e ." in mine, "Binder installs the package from the branch"
    assert not tools & mine.keys(), f"build or test tools in {student.BRANCH_REQUIREMENTS}: {sorted(tools & mine.keys())}"
    for name, line in mine.items():
        assert name in book, f"{name}: not in requirements.txt, so not known to work with the book's pins"
        assert line.replace(" ", "") == book[name].replace(" ", ""), f"{name}: pinned {line!r}, the book pins {book[name]!r}"
    unsorted = sorted(set(book) - set(mine) - tools)
    assert not unsorted, f"lines of requirements.txt neither in {student.BRANCH_REQUIREMENTS} nor in BUILD_TOOLS: {unsorted}"
    assert tools <= book.keys(), f"BUILD_TOOLS names what requirements.txt no longer holds: {sorted(tools - book.keys())}"
    import tomllib

    deps = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    assert {_canonical(re.split(r"[\s\[<>=!~;]", d, maxsplit=1)[0]) for d in deps} <= mine.keys(), \
        "a dependency of the package is not pinned for the branch"


def _installed_by(requirements: dict[str, str]) -> set[str]:
    """The distributions (canonical names) that installing ``requirements`` brings, read from the
    metadata of this environment, where the book's requirements are installed: each named one, its
    requirements (their markers evaluated here, with the extras asked for), and theirs."""
    from importlib import metadata

    from packaging.requirements import Requirement

    todo = [Requirement(line) for name, line in requirements.items() if not name.startswith("-")]
    todo += [Requirement(r) for r in metadata.distribution("inferlimits").requires or []]  # "-e ."
    seen: dict[str, set[str]] = {}
    while todo:
        req = todo.pop()
        name, extras = _canonical(req.name), set(req.extras)
        if name in seen and extras <= seen[name]:
            continue
        seen[name] = seen.get(name, set()) | extras
        for line in metadata.distribution(name).requires or []:
            dep = Requirement(line)
            if dep.marker is None or any(dep.marker.evaluate({"extra": e}) for e in seen[name] | {""}):
                todo.append(dep)
    return set(seen)


@pytest.mark.beside_the_build
def test_every_import_of_the_student_branch_is_installed_by_its_requirements(tmp_path):
    """Every module the branch's notebooks and package import is in the branch (the package's own)
    or in the standard library, or comes from a distribution that the branch's requirements.txt
    installs (mapped from module to distribution by this environment's metadata)."""
    from importlib import metadata

    tree = student.write_branch(tmp_path / "branch")
    assert (tree / student.BRANCH_REQUIREMENTS_AS).read_bytes() == (ROOT / student.BRANCH_REQUIREMENTS).read_bytes()
    paths = [*(tree / "inferlimits").rglob("*.py"), *(tree / student.BRANCH_NOTEBOOKS).glob("*.ipynb")]
    imported = student.imported_modules(paths)

    def in_tree(dotted: str) -> bool:
        base = tree.joinpath(*dotted.split("."))
        return (base / "__init__.py").exists() or base.with_suffix(".py").exists()

    missing = [f"{name} (imported by {sorted(where)[:3]})" for name, where in imported.items()
               if name.split(".")[0] == "inferlimits" and not in_tree(name) and not in_tree(name.rsplit(".", 1)[0])]
    assert not missing, f"the branch lacks parts of the package that it imports: {missing[:5]}"
    third = {name.split(".")[0] for name in imported} - set(sys.stdlib_module_names) - {"inferlimits", "__future__"}
    assert {"numpy", "plotly", "ipywidgets"} <= third, "the imports were not read"
    installed = _installed_by(student.requirement_lines(tree / student.BRANCH_REQUIREMENTS_AS))
    owners = metadata.packages_distributions()
    unmet = {}
    for module in sorted(third):
        dists = {_canonical(d) for d in owners.get(module, [])}
        if not dists & installed:
            unmet[module] = sorted(dists) or "no installed distribution provides it"
    assert not unmet, f"imports of the student branch that its requirements do not install: {unmet}"
    tools = {_canonical(t) for t in student.BUILD_TOOLS}
    assert not {"pytest", "nbval", "playwright", "jupyter-book", "hypothesis", "kaleido"} & installed & tools, \
        "a test or build tool comes in with the branch's requirements"


@pytest.mark.beside_the_build
def test_the_workflow_runs_the_student_notebooks_with_the_branchs_requirements_alone():
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "book.yml").read_text(encoding="utf-8"))
    steps = workflow["jobs"]["student-branch"]["steps"]
    setup = next(i for i, s in enumerate(steps) if s.get("uses", "").startswith("actions/setup-python"))
    version = (ROOT / "runtime.txt").read_text().strip().removeprefix("python-")
    assert str(steps[setup]["with"]["python-version"]) == version, "the Python the check runs is not Binder's"
    check = next(i for i, s in enumerate(steps) if "pip install" in s.get("run", ""))
    script = steps[check]["run"]
    assert setup < check < len(steps) - 1, "the check runs before the push"
    assert re.search(r"pip install [^\n]*-r requirements\.txt", script) and "NotebookClient" in script
    assert "measures_this_machine" in script and 'cp -r branch "$RUNNER_TEMP/branch"' in script
    assert "working-directory" not in steps[check], "the check runs in a copy, so the pushed tree stays as written"


def test_the_built_student_kit_shows_the_projects_and_ships_the_runtime_requirements():
    """Needs ``make student`` after this change: the lab sheet's page carries the projects' table
    and rubric, and the branch's tree carries the runtime-only requirements and no ``book/``."""
    from inferlimits.book import projects
    from inferlimits.book.course import PROJECT, RUBRICS

    text = _visible((STUDENT / f"{student.LAB_SHEET}.html").read_text(encoding="utf-8"))
    assert "Projects: what each needs" in text and _plain(RUBRICS[PROJECT].partial) in text
    for r in projects.PROJECTS:
        assert _plain(r.tolerance) in text, f"{r.label}: its row is not on the student lab sheet"
    assert (student.BRANCH / student.BRANCH_REQUIREMENTS_AS).read_bytes() == (ROOT / student.BRANCH_REQUIREMENTS).read_bytes()
    assert not (student.BRANCH / "inferlimits" / "book").exists()
