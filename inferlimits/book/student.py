"""The student edition as the students' whole kit: what ``make student`` adds to the student site.

    python -m inferlimits.book.student                 # _build/student/notebooks and _build/student/branch
    python -m inferlimits.book.student --branch DIR    # the student branch's tree only, into DIR

- **The pages only instructors see** (``INSTRUCTOR_ONLY``): the student site leaves them out of its
  table of contents (``student_toc``), so Sphinx neither builds nor prints them, and turns the
  references other pages make to them into plain text (``inferlimits.book.sphinxext``).
- **Solution-free notebooks** (``solution_free``): every page of the student edition that is a
  notebook (the primer, the chapters, the appendices), without the exercises' solutions (the
  ``{solution}`` directives of their Markdown) and without the check cells tagged ``solution`` that
  print the answers' numbers. Every other cell is kept as it is committed, with its outputs and its
  metadata (the widgets a cell draws and the cells JupyterLab collapses), so that a notebook opens
  as the chapter does and runs top to bottom in JupyterLab, in Binder or under nbval.
- **The student branch** (``write_branch``): the tree that the Pages workflow pushes to the
  ``STUDENT_BRANCH`` branch, which the lab sheet's Binder links open: the notebooks in
  ``notebooks/``, the package (less ``BRANCH_LEAVES_OUT``: the book's own building, which no
  notebook imports), and what Binder and a local JupyterLab need (``runtime.txt``,
  ``pyproject.toml``, a Makefile with ``make lab``, and as ``requirements.txt`` the runtime-only
  ``BRANCH_REQUIREMENTS``: what the notebooks import, pinned as the book's ``requirements.txt``
  pins it, with no tool that builds or tests the book, ``BUILD_TOOLS``).
- **The lab sheet** (``LAB_SHEET``, ``labs_markdown``): how to open the notebooks, what each lab of
  ``course.SESSIONS`` needs, which exercises need a running notebook, and what each project needs
  (``inferlimits.book.projects``), written into the page when the book is built, with Binder links
  to the student branch of the repository the book is built from.
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from inferlimits.book import ROOT, measures_this_machine

#: the pages for instructors only, as the table of contents names them: the student edition
#: neither builds, links, prints nor ships them (a page here that does not exist yet is skipped)
INSTRUCTOR_ONLY = ("chapters/instructor", "chapters/quiz")
#: the tag of the check cells that state an exercise's answers
SOLUTION_TAG = "solution"
#: the lab sheet, as the table of contents names it, and the line of it that the build replaces with
#: the labs (``labs_markdown``)
LAB_SHEET = "chapters/labs"
LAB_SHEET_MARKER = "<!-- the labs: written here when the book is built, from the course plan -->"
#: the branch the Pages workflow pushes the student notebooks to, and that Binder opens
STUDENT_BRANCH = "student"
#: where ``make student`` writes the notebooks, and the student branch's tree
STUDENT = ROOT / "_build" / "student"
NOTEBOOKS = STUDENT / "notebooks"
BRANCH = STUDENT / "branch"
#: the folder of the student branch that holds the notebooks
BRANCH_NOTEBOOKS = "notebooks"
#: parts of the package (paths in ``inferlimits/``) the student branch leaves out, where they exist:
#: the book's own building (``book/``: the site, its PDF, the slides, this module), which needs
#: Sphinx, Chromium and the rest of ``BUILD_TOOLS``, and within it the homework generator, which
#: writes the key of every seed's sheet. Nothing the branch ships imports them; a test holds that.
BRANCH_LEAVES_OUT = ("book", "book/homework", "homework")
#: files of the repository the student branch carries as they are: what Binder installs and runs
BRANCH_FILES = ("runtime.txt", "pyproject.toml")
#: what the student notebooks need to run, in Binder and in JupyterLab: the repository's file, which
#: the student branch carries as its ``requirements.txt`` (the name Binder reads)
BRANCH_REQUIREMENTS = "student-requirements.txt"
#: the name the student branch gives it
BRANCH_REQUIREMENTS_AS = "requirements.txt"
#: the distributions of the book's ``requirements.txt`` that build or test the book, and that
#: ``BRANCH_REQUIREMENTS`` must not name: the site and its PDF, the figures' export, the executor,
#: the tests. Every other line of ``requirements.txt`` is in ``BRANCH_REQUIREMENTS`` (a test holds it).
BUILD_TOOLS = ("jupyter-book", "sphinx", "myst-parser", "sphinx-book-theme", "pydata-sphinx-theme",
               "sphinx-thebe", "sphinx-exercise", "fonttools", "brotli", "jupyter-cache", "nbclient",
               "kaleido", "choreographer", "nbval", "pytest", "pytest-xdist", "hypothesis", "playwright",
               "pypdf", "pypdfium2")

#: an opening fence of a directive (backticks or colons, as MyST's colon_fence allows) and its name
_FENCE = re.compile(r"^(?P<fence>`{3,}|:{3,})\{(?P<name>[\w:-]+)\}")


# ---- the student table of contents ---------------------------------------------------------------

def _without(entries: list, left_out: set[str]) -> list:
    out = []
    for entry in entries or []:
        if entry.get("file") in left_out:
            continue
        entry = dict(entry)
        if "sections" in entry:
            entry["sections"] = _without(entry["sections"], left_out)
        out.append(entry)
    return out


def student_toc(toc: dict, left_out: tuple[str, ...] = INSTRUCTOR_ONLY) -> dict:
    """``toc`` (``_toc.yml`` read) without the pages ``left_out``, and without a part left empty."""
    left = set(left_out)
    if toc.get("root") in left:
        raise ValueError(f"left_out: the root page {toc['root']!r} cannot be left out")
    out = dict(toc)
    if "parts" in toc:
        out["parts"] = [dict(p, chapters=_without(p.get("chapters", []), left)) for p in toc["parts"]]
        out["parts"] = [p for p in out["parts"] if p["chapters"]]
    if "chapters" in toc:
        out["chapters"] = _without(toc["chapters"], left)
    return out


def write_student_toc(dest: Path, root: Path = ROOT) -> Path:
    """Write the student table of contents (``student_toc`` of ``root/_toc.yml``) to ``dest``."""
    import yaml

    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text("# The student edition's table of contents, written by inferlimits.book.student: "
                    "_toc.yml without the pages for instructors only.\n"
                    + yaml.safe_dump(student_toc(toc), sort_keys=False, allow_unicode=True), encoding="utf-8")
    return dest


def student_pages(root: Path = ROOT) -> list[Path]:
    """The pages of the student edition: ``_toc.yml``'s, less ``INSTRUCTOR_ONLY``."""
    from inferlimits.book import toc_pages

    return [p for p in toc_pages(root) if p.relative_to(root).with_suffix("").as_posix() not in INSTRUCTOR_ONLY]


def student_notebooks(root: Path = ROOT) -> list[Path]:
    """The notebooks the students get: every page of the student edition that is a notebook."""
    return [p for p in student_pages(root) if p.suffix == ".ipynb"]


# ---- solution-free notebooks ---------------------------------------------------------------------

def strip_solutions(markdown: str) -> str:
    """``markdown`` without its ``{solution}`` directives (backtick or colon fences, of any length:
    a directive ends at the first line that is its fence's character repeated at least as often),
    and without the blank lines they leave behind."""
    out, lines, i = [], markdown.split("\n"), 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not (m and m.group("name") == "solution"):
            out.append(lines[i])
            i += 1
            continue
        char, n = m.group("fence")[0], len(m.group("fence"))
        close = re.compile(rf"^{re.escape(char)}{{{n},}}\s*$")
        i += 1
        while i < len(lines) and not close.match(lines[i]):
            i += 1
        if i == len(lines):
            raise ValueError("markdown: a {solution} directive is never closed")
        i += 1
        while out and not out[-1].strip() and i < len(lines) and not lines[i].strip():
            i += 1  # one blank line where the directive stood, not two
    text = "\n".join(out)
    return text.rstrip("\n") + ("\n" if markdown.endswith("\n") and text.strip() else "")


def _source(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def is_solution_cell(cell: dict) -> bool:
    return cell.get("cell_type") == "code" and SOLUTION_TAG in cell.get("metadata", {}).get("tags", [])


def solution_free(nb: dict) -> dict:
    """A notebook (as JSON) without its solutions: no check cell tagged ``solution``, no
    ``{solution}`` directive in its Markdown (a Markdown cell left empty goes too); every other cell
    as it is, outputs and metadata included. ``nb`` is not changed."""
    out = json.loads(json.dumps(nb))
    cells = []
    for cell in out["cells"]:
        if is_solution_cell(cell):
            continue
        if cell["cell_type"] == "markdown" and "{solution}" in _source(cell):
            text = strip_solutions(_source(cell))
            if not text.strip():
                continue
            cell["source"] = text
        cells.append(cell)
    out["cells"] = cells
    out.setdefault("metadata", {}).setdefault("inferlimits", {})["edition"] = "student"
    return out


def write_notebooks(dest: Path = NOTEBOOKS, root: Path = ROOT) -> list[Path]:
    """Write the solution-free notebook of every page of ``student_notebooks`` into ``dest``
    (emptied first), under the chapter's own file name."""
    import nbformat

    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    written = []
    for path in student_notebooks(root):
        nb = nbformat.from_dict(solution_free(json.loads(path.read_text(encoding="utf-8"))))
        nbformat.validate(nb)
        nbformat.write(nb, dest / path.name)
        written.append(dest / path.name)
    return written


# ---- the answers of the exercises ----------------------------------------------------------------

#: an exercise's grading tolerance, as the last line of its text states it
TOLERANCE_LINE = re.compile(r"Tolerance: (?:exact|(?P<percent>\d+(?:\.\d+)?)%(?: on each number)?)\.")
#: what a call of ``inferlimits.checks.answer`` names: its stated text and its tolerance
ANSWER_CALL = "answer"


@dataclass(frozen=True)
class Answer:
    """An ``answer(claim, computed, stated, tolerance=...)`` call in a check cell tagged ``solution``,
    read without running anything."""
    label: str | None          # the exercise whose solution the cell follows (None: it follows none)
    stated: str | None         # the number as the solution writes it (None: not a string literal)
    tolerance: float | None    # None: not a literal number
    cell: int                  # the cell's index in the notebook


def stated_tolerance(text: str) -> float | None:
    """The tolerance an exercise's text states in its last line (0 for "exact", 0.02 for "2%"), or
    None where its last line states none."""
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    m = TOLERANCE_LINE.fullmatch(lines[-1]) if lines else None
    if not m:
        return None
    return float(m.group("percent")) / 100 if m.group("percent") else 0.0


def _literal(node, position: int, keyword: str):
    import ast

    arg = node.args[position] if len(node.args) > position else next(
        (k.value for k in node.keywords if k.arg == keyword), None)
    if isinstance(arg, ast.Constant):
        return arg.value
    if isinstance(arg, ast.UnaryOp) and isinstance(arg.op, ast.USub) and isinstance(arg.operand, ast.Constant):
        return -arg.operand.value
    return None


def answers(path: Path) -> list[Answer]:
    """Every ``answer`` call in the solution check cells of notebook ``path``, with the exercise
    each belongs to: the one whose ``{solution}`` stands last in the nearest Markdown cell above
    (a Markdown cell without a solution ends the exercise's reach)."""
    import ast

    cells = json.loads(Path(path).read_text(encoding="utf-8"))["cells"]
    label, out = None, []
    for i, cell in enumerate(cells):
        src = _source(cell)
        if cell["cell_type"] == "markdown":
            found = re.findall(r"^(?:`{3,}|:{3,})\{solution\} (\S+)", src, re.M)
            label = found[-1] if found else None
            continue
        if not is_solution_cell(cell):
            continue
        code = "\n".join(ln for ln in src.splitlines() if not ln.lstrip().startswith(("%", "!")))
        for node in ast.walk(ast.parse(code)):
            if not isinstance(node, ast.Call):
                continue
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
            if name != ANSWER_CALL:
                continue
            stated, tolerance = _literal(node, 2, "stated"), _literal(node, 3, "tolerance")
            out.append(Answer(label, stated if isinstance(stated, str) else None,
                              float(tolerance) if isinstance(tolerance, (int, float)) and not isinstance(tolerance, bool)
                              else None, i))
    return out


# ---- the student branch --------------------------------------------------------------------------

BRANCH_MAKEFILE = """\
# The student notebooks of the book, with no solutions. `make lab` installs what they need into
# .venv (once) and opens them in JupyterLab on this machine.
VENV := .venv

lab: $(VENV)/.installed
\t$(VENV)/bin/jupyter lab --ip=127.0.0.1 $(if $(filter 0,$(shell id -u)),--allow-root) notebooks

$(VENV)/.installed: requirements.txt pyproject.toml
\tpython3 -m venv $(VENV)
\t$(VENV)/bin/pip install --quiet -r requirements.txt
\ttouch $@

.PHONY: lab
"""

BRANCH_README = """\
# The student notebooks

The chapters of the book as notebooks with no solutions, for the labs and for the exercises that need
a running notebook. This branch is written by the book's Pages workflow from its main branch: do not
edit it, since every run replaces it.

- In Binder: open the links on the lab sheet of the student edition (nothing to install).
- On your own machine, with Python and make: `make lab` (it installs what the notebooks need into
  `.venv` the first time).

`requirements.txt` holds only what the notebooks need to run, and `inferlimits/` the book's package
without the tools that build the book.
"""


def write_branch(dest: Path = BRANCH, root: Path = ROOT, notebooks: Path | None = None) -> Path:
    """Write the tree of the student branch into ``dest`` (emptied first): the solution-free
    notebooks in ``notebooks/`` (copied from ``notebooks`` where given, else written afresh), the
    package less ``BRANCH_LEAVES_OUT``, ``BRANCH_FILES``, ``BRANCH_REQUIREMENTS`` as
    ``requirements.txt``, a README and a Makefile with ``make lab``."""
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    if notebooks is None:
        write_notebooks(dest / BRANCH_NOTEBOOKS, root)
    else:
        shutil.copytree(notebooks, dest / BRANCH_NOTEBOOKS)
    left_out = {root / "inferlimits" / part for part in BRANCH_LEAVES_OUT}

    def ignore(folder: str, names: list[str]) -> list[str]:
        return [n for n in names if n in ("__pycache__", ".ipynb_checkpoints") or n.endswith(".pyc")
                or Path(folder) / n in left_out]

    shutil.copytree(root / "inferlimits", dest / "inferlimits", ignore=ignore)
    for name in BRANCH_FILES:
        shutil.copyfile(root / name, dest / name)
    shutil.copyfile(root / BRANCH_REQUIREMENTS, dest / BRANCH_REQUIREMENTS_AS)
    (dest / "Makefile").write_text(BRANCH_MAKEFILE, encoding="utf-8")
    (dest / "README.md").write_text(BRANCH_README, encoding="utf-8")
    return dest


def requirement_lines(path: Path) -> dict[str, str]:
    """A requirements file's entries: each distribution's name (lower case, "-" for "_" and ".")
    -> its line, comments and blanks dropped; an option line (``-e .``) under its own text."""
    out = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        line = line.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        name = line if line.startswith("-") else re.split(r"[\s\[<>=!~;@]", line, maxsplit=1)[0]
        out[name if line.startswith("-") else re.sub(r"[-_.]+", "-", name).lower()] = line
    return out


def imported_modules(paths: list[Path]) -> dict[str, set[str]]:
    """The modules that the Python files and notebooks (their code cells) of ``paths`` import, by
    their full dotted names (``from a.b import c`` counts ``a.b`` and ``a.b.c``; a relative import,
    resolved against its file under ``inferlimits/``) -> the files that import them. Every import
    statement counts, in a function too. IPython's magics and shell lines are skipped."""
    import ast

    out: dict[str, set[str]] = {}
    for path in paths:
        path = Path(path)
        if path.suffix == ".ipynb":
            cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
            sources = [_source(c) for c in cells if c["cell_type"] == "code"]
            package: list[str] = []
        else:
            sources = [path.read_text(encoding="utf-8")]
            parts = path.with_suffix("").parts
            dotted = list(parts[parts.index("inferlimits"):]) if "inferlimits" in parts else []
            package = dotted if path.name == "__init__.py" else dotted[:-1]
            if path.name == "__init__.py":
                package = package[:-1]  # the package's own name, not "__init__"
        for src in sources:
            code = "\n".join(ln for ln in src.splitlines() if not ln.lstrip().startswith(("%", "!")))
            for node in ast.walk(ast.parse(code)):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom):
                    base = package[:len(package) - node.level + 1] if node.level else []
                    module = ".".join(base + ([node.module] if node.module else []))
                    names = [module] + [f"{module}.{a.name}" for a in node.names if a.name != "*"]
                else:
                    continue
                for name in names:
                    out.setdefault(name, set()).add(path.name)
    return out


# ---- the lab sheet -------------------------------------------------------------------------------

def binder_url(repository: str, notebook: str | None = None, branch: str = STUDENT_BRANCH) -> str:
    """The mybinder.org address that opens ``branch`` of the GitHub ``repository``
    (``https://github.com/owner/name``) in JupyterLab, at ``notebook`` (a file name in the branch's
    notebooks folder) where given. Only an address: nothing fetches it."""
    m = re.fullmatch(r"https://github\.com/([\w.-]+)/([\w.-]+?)(?:\.git)?/?", repository or "")
    if not m:
        raise ValueError(f"repository must be a GitHub address, https://github.com/owner/name; got {repository!r}")
    url = f"https://mybinder.org/v2/gh/{m.group(1)}/{m.group(2)}/{branch}"
    if notebook is None:
        return url + f"?urlpath=lab/tree/{BRANCH_NOTEBOOKS}"
    if not re.fullmatch(r"[\w.-]+\.ipynb", notebook):
        raise ValueError(f"notebook must be a notebook's file name, such as 13_measure.ipynb; got {notebook!r}")
    return url + f"?urlpath=lab/tree/{BRANCH_NOTEBOOKS}/{notebook}"


def _and(items: list[str]) -> str:
    return " and ".join(filter(None, [", ".join(items[:-1]), items[-1]])) if items else ""


def lab_notebooks(session, root: Path = ROOT) -> list[str]:
    """The notebooks (stems) a session's lab opens: the chapters its text names, by a ``{doc}`` role
    or as "chapter N"; where it names none, the session's chapters and those it sets to read at home."""
    from inferlimits.book import course

    named = re.findall(r"\{doc\}`([\w-]+)`", session.lab)
    for number in re.findall(r"\bchapters? (\d+)\b", session.lab, re.I):
        named += [p.stem for p in sorted((root / "chapters").glob(f"{int(number):02d}_*.ipynb"))]
    if not named:
        named = [*session.chapters, *getattr(session, "take_home", ())]
    for stem in named:
        course.chapter_path(stem, root)  # a ValueError naming a chapter that does not exist
    return list(dict.fromkeys(named))


def labs_markdown(repository: str | None, root: Path = ROOT) -> str:
    """The lab sheet's generated part, as MyST Markdown (links relative to ``chapters/``): where to
    open the notebooks (Binder links to the student branch of ``repository``; without one, a local
    copy of the book, only the way round it), each lab of ``course.SESSIONS`` with the notebooks it
    opens and what it needs, the exercises that need a running notebook, and what each project
    needs (``projects.projects_markdown``)."""
    from inferlimits.book import course, projects

    lines = ["## Where to open the notebooks", ""]
    if repository:
        lines += [f"- **In Binder**, with nothing to install: [open the student notebooks]({binder_url(repository)}). "
                  "Binder starts a fresh copy for you, which takes a minute or two the first time.",
                  f"- **On your own machine**: `git clone --branch {STUDENT_BRANCH} {repository}.git`, then "
                  "`make lab` in the folder it makes."]
    else:
        lines += ["- This copy of the book was built without the address of its repository, so it carries no "
                  "Binder link: ask your instructor for it.",
                  f"- **On your own machine**: the `{STUDENT_BRANCH}` branch of the book's repository holds the "
                  "notebooks; `make lab` in a copy of it opens them."]
    lines += [""]
    sessions = [(i, s) for i, s in enumerate(course.SESSIONS, start=1) if s.lab]
    lines += ["## The labs", ""]
    for i, s in sessions:
        stems = lab_notebooks(s, root)
        paths = [course.chapter_path(c, root) for c in stems]
        opens = []
        for c, p in zip(stems, paths):
            link = f" ([Binder]({binder_url(repository, p.name)}))" if repository else ""
            opens.append(f"{{doc}}`{c}`{link}")
        if any(measures_this_machine(p) for p in paths):
            needs = ("your own laptop or desktop, with the notebooks installed on it (`make lab`), and Binder: "
                     "the notebook measures the machine it runs on, so each machine gives its own numbers. "
                     "Close other programs while it measures.")
        else:
            needs = ("Binder, or the notebooks on your own machine: nothing in this lab depends on the machine. "
                     "The controls run live only in a running notebook.")
        lines += [f"### Session {i}: {s.topic}", "",
                  f"- **The lab:** {s.lab[0].upper()}{s.lab[1:]}.",
                  f"- **Open:** {', '.join(opens)}.",
                  f"- **It needs:** {needs}"]
        before = course.SESSIONS[i - 2].setup if i > 1 else ""
        if before:
            lines += [f"- **Before the session** (set with session {i - 1}'s homework): {before}"]
        in_class = [(minutes, text) for minutes, text in getattr(s, "agenda", ()) if text.startswith("Lab")]
        if in_class:
            labels = {e.label: e for p in student_notebooks(root) for e in course.exercises(p)}
            exs = [labels[x] for _, text in in_class for x in re.findall(r"\[([\w-]+)\]", text) if x in labels]
            lines += [f"- **In class:** {sum(m for m, _ in in_class)} minutes"
                      + (f", with {_and(list(map(course.numref, exs)))}." if exs else ".")]
        lines += [""]
    live = [e for p in student_notebooks(root) for e in course.exercises(p) if course.needs_kernel(e)]
    lines += ["## Exercises that need a running notebook", "",
              "These exercises have a part that only a running notebook can answer: a control that the "
              "pages' figures do not carry, or a measurement of your own machine. Open their notebooks as "
              "for the labs.", "",
              (_and(list(map(course.numref, live))) + ".") if live else "None at present.", ""]
    return "\n".join(lines) + "\n" + projects.projects_markdown(root=root)


# ---- command line --------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notebooks", type=Path, default=NOTEBOOKS, help="where to write the notebooks")
    parser.add_argument("--branch", type=Path, default=None,
                        help="write only the student branch's tree, into this folder")
    args = parser.parse_args(argv)
    if args.branch is not None:
        write_branch(args.branch)
        print(f"the student branch's tree: {args.branch}")
        return 0
    written = write_notebooks(args.notebooks)
    write_branch(BRANCH, notebooks=args.notebooks)
    print(f"{len(written)} solution-free notebooks in {args.notebooks}; the student branch's tree in {BRANCH}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
