"""The course the instructor's page proposes: sessions of chapters, and each chapter's exercises
sorted into class work and homework by one stated rule, read from the chapters themselves so
that the plan follows the exercises as they change.

An exercise is written in a chapter as a sphinx-exercise directive whose title names its kind and
level (``derive · intermediate``, or ``compute: a subject · basic``; the kinds and levels are
``EXERCISE_KINDS`` and ``EXERCISE_LEVELS``)."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from inferlimits.book import EXERCISE_KINDS, EXERCISE_LEVELS, ROOT

#: an exercise's opening lines: the directive with its title, then its label
_DIRECTIVE = re.compile(r"^```\{exercise\} (.*)\n:label: (\S+)\n", re.M)
#: a title: its kind (with an optional subject after a colon), a middle dot, its level
TITLE = re.compile(rf"^({'|'.join(EXERCISE_KINDS)})(?:: ([^·]+))? · ({'|'.join(EXERCISE_LEVELS)})$")


@dataclass(frozen=True)
class Exercise:
    chapter: str        # the notebook's stem, e.g. "02_decode"
    label: str          # what {numref} refers to
    title: str          # as the directive writes it
    kind: str | None    # None where the title does not follow the form
    level: str | None


def exercises(path: Path) -> list[Exercise]:
    """A notebook's exercises, in order."""
    cells = json.loads(Path(path).read_text(encoding="utf-8"))["cells"]
    md = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    out = []
    for title, label in _DIRECTIVE.findall(md):
        m = TITLE.match(title)
        out.append(Exercise(Path(path).stem, label, title, m and m.group(1), m and m.group(3)))
    return out


def in_class(ex: Exercise) -> bool:
    """The plan's rule: exercises that read the figures, and basic ones, are done together in
    class; the rest (computations, derivations, decisions and errors to find, beyond one step)
    are homework."""
    return ex.kind == "explore" or ex.level == "basic"


@dataclass(frozen=True)
class Session:
    topic: str
    chapters: tuple[str, ...]   # notebook stems
    lab: str = ""               # what students run themselves, if anything


#: the plan: one session a week, about two hours each
SESSIONS = (
    Session("Two speeds and the roofline", ("primer", "01_two_speeds")),
    Session("Decode and prefill", ("02_decode", "03_prefill")),
    Session("Batching and the KV cache", ("04_batching", "05_kv_cache")),
    Session("The third wall, measured", ("06_overhead", "12_measure"),
            lab="run chapter 12 on a laptop and in Binder, and compare the two machines' roofs"),
    Session("Low precision", ("07_low_precision",)),
    Session("Mixtures of experts", ("08_moe",)),
    Session("Serving at scale", ("09_serving_at_scale",),
            lab="in Binder, find a set-up on chapter 9's frontier that meets a stated speed per user"),
    Session("The index card and a worked example", ("10_index_card", "11_worked_example")),
)


def chapter_path(stem: str, root: Path = ROOT) -> Path:
    path = root / "chapters" / f"{stem}.ipynb"
    if not path.exists():
        raise ValueError(f"stem: no chapter {stem!r} in {root / 'chapters'}")
    return path


def _refs(exs: list[Exercise]) -> str:
    """References to ``exs``; those of an unnumbered page (the primer) are named for it, since
    Sphinx numbers them 1, 2, ... without a chapter number."""
    def ref(e: Exercise) -> str:
        return f"{{numref}}`{e.label}`" if e.chapter[:2].isdigit() else f"{{numref}}`{e.chapter.capitalize()} %s <{e.label}>`"
    return ", ".join(map(ref, exs)) or "none"


def plan_markdown(sessions: tuple[Session, ...] = SESSIONS, root: Path = ROOT) -> str:
    """The course plan as a Markdown table: each session's chapters, its exercises for class and
    for homework (as references, so that their numbers are Sphinx's), and its lab."""
    rows = ["| Session | Chapters | In class | Homework | Lab |", "|---|---|---|---|---|"]
    for i, s in enumerate(sessions, start=1):
        exs = [e for c in s.chapters for e in exercises(chapter_path(c, root))]
        chapters = ", ".join(f"{{doc}}`{c}`" for c in s.chapters)
        rows.append(f"| {i}. {s.topic} | {chapters} | {_refs([e for e in exs if in_class(e)])} "
                    f"| {_refs([e for e in exs if not in_class(e)])} | {s.lab or '–'} |")
    return "\n".join(rows)


def kinds_markdown(paths: list[Path]) -> str:
    """What each kind of exercise asks, and how many of each the chapters ``paths`` set, by level."""
    exs = [e for p in paths for e in exercises(p)]
    rows = ["| Kind | What it asks | " + " | ".join(EXERCISE_LEVELS) + " |",
            "|---|---|" + "---|" * len(EXERCISE_LEVELS)]
    for kind, asks in EXERCISE_KINDS.items():
        counts = [sum(1 for e in exs if e.kind == kind and e.level == lv) for lv in EXERCISE_LEVELS]
        rows.append(f"| {kind} | {asks} | " + " | ".join(map(str, counts)) + " |")
    return "\n".join(rows)


def slides_markdown() -> str:
    """The slide exports (``make figures``), as a Markdown table: file, chapter, figure."""
    from inferlimits.book.export import SLIDES

    rows = ["| Files in `figures/` | Chapter | Figure |", "|---|---|---|"]
    rows += [f"| `{name}.svg`, `{name}.png` | {{doc}}`{s.chapter}` | `{s.div_id}` |" for name, s in SLIDES.items()]
    return "\n".join(rows)
