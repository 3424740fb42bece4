"""The book's pages, as listed in ``_toc.yml``: what the coverage test and the tests walk."""
from __future__ import annotations

import json
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: another table of contents to walk instead of _toc.yml (for checking chapters not yet listed)
TOC_ENV = "INFERLIMITS_TOC"


def _files(entries: list) -> list[str]:
    out = []
    for e in entries or []:
        if "file" in e:
            out.append(e["file"])
        out += _files(e.get("sections", []))
    return out


def toc_pages(root: Path = ROOT) -> list[Path]:
    """Every page in ``_toc.yml``, root first, as paths to existing .ipynb or .md files."""
    import yaml

    toc_file = Path(os.environ.get(TOC_ENV) or root / "_toc.yml")
    toc = yaml.safe_load(toc_file.read_text(encoding="utf-8"))
    names = [toc["root"]]
    for part in toc.get("parts", []):
        names += _files(part.get("chapters", []))
    names += _files(toc.get("chapters", []))
    pages = []
    for name in names:
        found = [root / f"{name}{ext}" for ext in (".ipynb", ".md") if (root / f"{name}{ext}").exists()]
        if not found:
            raise FileNotFoundError(f"_toc.yml lists {name!r}, but neither {name}.ipynb nor {name}.md exists")
        pages.append(found[0])
    return pages


def notebooks(root: Path = ROOT) -> list[Path]:
    return [p for p in toc_pages(root) if p.suffix == ".ipynb"]


#: pages for instructors that neither edition publishes, so not in ``_toc.yml`` (and in
#: ``exclude_patterns``), but checked as the book's pages are: the quiz, whose keys a published page
#: would give away (``make quiz`` prints it)
UNPUBLISHED = ("chapters/quiz",)


def checked_pages(root: Path = ROOT) -> list[Path]:
    """Every page the tests check: those of ``_toc.yml`` (``toc_pages``), then ``UNPUBLISHED``."""
    pages = toc_pages(root)
    for name in UNPUBLISHED:
        found = [root / f"{name}{ext}" for ext in (".ipynb", ".md") if (root / f"{name}{ext}").exists()]
        if not found:
            raise FileNotFoundError(f"UNPUBLISHED lists {name!r}, but neither {name}.ipynb nor {name}.md exists")
        if found[0] not in pages:
            pages.append(found[0])
    return pages


def checked_notebooks(root: Path = ROOT) -> list[Path]:
    """The notebooks among ``checked_pages``."""
    return [p for p in checked_pages(root) if p.suffix == ".ipynb"]


def measures_this_machine(path: Path) -> bool:
    """Whether a chapter times the machine it runs on (its notebook metadata says
    ``"inferlimits": {"measures_this_machine": true}``): the relations it checks between its
    measurements hold on a quiet machine, so tests that execute it run alone (marker ``measures``)."""
    if path.suffix != ".ipynb":
        return False
    meta = json.loads(path.read_text(encoding="utf-8")).get("metadata", {})
    return bool(meta.get("inferlimits", {}).get("measures_this_machine", False))


#: what JupyterLab collapses (cell metadata "jupyter") for each tag with which the book hides a cell,
#: so that a chapter opened in JupyterLab or Binder reads as the hosted book does
JUPYTERLAB_COLLAPSED = {"hide-input": ("source_hidden",), "hide-output": ("outputs_hidden",),
                        "hide-cell": ("source_hidden", "outputs_hidden")}


def jupyterlab_collapsed(tags: list[str]) -> dict[str, bool]:
    """The "jupyter" cell metadata that collapses in JupyterLab what ``tags`` hide in the book."""
    return {key: True for tag in tags for key in JUPYTERLAB_COLLAPSED.get(tag, ())}


def collapse_for_jupyterlab(nb) -> None:
    """Set every cell's "jupyter" metadata from its tags (in place)."""
    for cell in nb["cells"]:
        meta = cell.setdefault("metadata", {})
        collapsed = jupyterlab_collapsed(meta.get("tags", []))
        meta.pop("jupyter", None)
        if collapsed:
            meta["jupyter"] = collapsed


#: the kinds of exercise the book sets, as an exercise's title names them, and what each asks of a
#: student (the instructor's page lists them; tests/test_chapters.py holds the titles to them)
EXERCISE_KINDS = {
    "compute": "carry the chapter's formulas through to a number, from the data the exercise gives",
    "derive": "show with symbols, before any number, a relation the chapter uses",
    "decide": "choose between set-ups by the chapter's criteria, and say which limit decides",
    "compare": "set two designs or two regimes side by side and explain where they differ",
    "explore": "read an answer off the chapter's interactive figures by moving their controls",
    "extend": "carry the chapter's model one step past what the text covers",
    "find the error": "find what is wrong in a plausible claim, and put the right number in its place",
}
#: how much an exercise asks: one step from the text, several steps, or a small project of its own
EXERCISE_LEVELS = ("basic", "intermediate", "advanced")
