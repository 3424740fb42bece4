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

#: an exercise: the directive with its title, its label, then its text up to the closing fence
_DIRECTIVE = re.compile(r"^```\{exercise\} ([^\n]*)\n:label: (\S+)\n(.*?)^```", re.M | re.S)
#: a title: its kind (with an optional subject after a colon), a middle dot, its level
TITLE = re.compile(rf"^({'|'.join(EXERCISE_KINDS)})(?:: ([^·]+))? · ({'|'.join(EXERCISE_LEVELS)})$")


@dataclass(frozen=True)
class Exercise:
    chapter: str        # the notebook's stem, e.g. "02_decode"
    label: str          # what {numref} refers to
    title: str          # as the directive writes it
    kind: str | None    # None where the title does not follow the form
    level: str | None
    text: str = ""      # what the exercise asks, as the chapter writes it


#: a solution: the directive with the label of its exercise, its options, then its text
_SOLUTION = re.compile(r"^```\{solution\} (\S+)\n(?::[\w-]+:[^\n]*\n)*(.*?)^```", re.M | re.S)


def markdown(path: Path) -> str:
    """A notebook's Markdown cells, joined."""
    cells = json.loads(Path(path).read_text(encoding="utf-8"))["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


def solutions(path: Path) -> dict[str, str]:
    """A notebook's solutions: the label of each one's exercise -> its text, in order."""
    return dict(_SOLUTION.findall(markdown(path)))


def exercises(path: Path) -> list[Exercise]:
    """A notebook's exercises, in order."""
    out = []
    for title, label, text in _DIRECTIVE.findall(markdown(path)):
        m = TITLE.match(title)
        out.append(Exercise(Path(path).stem, label, title, m and m.group(1), m and m.group(3), text.strip()))
    return out


def in_class(ex: Exercise) -> bool:
    """The plan's rule: exercises that read the figures, and basic ones, are done together in
    class; the rest (computations, derivations, decisions and errors to find, beyond one step)
    are homework."""
    return ex.kind == "explore" or ex.level == "basic"


#: the words an exercise uses for a part that only a running notebook can do: a control the hosted
#: page's figure does not carry, or a measurement of the reader's own machine
LIVE = "live Jupyter kernel"


def needs_kernel(ex: Exercise) -> bool:
    """Whether some part of the exercise needs the notebook running (Jupyter, Binder): the
    exercise says so in its own text, in the words ``LIVE``. The hosted book and the student
    edition (which has no Binder buttons) can answer the rest."""
    return LIVE in ex.text


@dataclass(frozen=True)
class Session:
    topic: str
    chapters: tuple[str, ...]   # notebook stems
    lab: str = ""               # what students run themselves, if anything
    notes: str = ""             # for the instructor: what to stress, what to prepare


#: the plan: one session a week, about two hours each
SESSIONS = (
    Session("Two speeds and the roofline", ("primer", "01_two_speeds"),
            notes="Start from the primer's diagram and its table of configuration fields, so that \"the weights a "
                  "token multiplies\" is a list of matrices before it is a number. Then the roofline: have the "
                  "room compute one chip's balance point from its datasheet, with the dense rate, before the "
                  "figure shows it."),
    Session("Decode", ("02_decode",),
            notes="The chapter's one idea is that a decode step reads every weight for one token: work the "
                  "running example's ceiling on the board before the figures. Keep the two weight counts apart: "
                  "what memory must hold (for the fit, checked first) and what a step reads (for the speed)."),
    Session("Prefill and the request", ("03_prefill",),
            notes="Prefill reads the same weights as decode and lands on the other side of the ridge. Let the "
                  "room place a short and a long prompt on the roofline figure before computing the crossover, "
                  "then spend time on the activation traffic, the chapter's least familiar quantity, and on why "
                  "it pushes the crossover beyond the balance point. Close with the request timeline: the time "
                  "to first token answers to math once the prompt is past the crossover, the time per output "
                  "token to bandwidth."),
    Session("Batching and the KV cache", ("04_batching", "05_kv_cache"),
            notes="Batching shares the weights' read among the conversations; the caches are what it cannot "
                  "share. Ask how large a batch should be before showing the knee, and check the fit in memory "
                  "before any rate."),
    Session("The third wall, measured", ("06_overhead", "13_measure"),
            lab="run chapter 13 on a laptop and in Binder, and compare the two machines' roofs",
            notes="Chapter 13 measures the machine it runs on, so the hosted book's figures show the machine "
                  "that built the book; students get their own machine's numbers only with the notebook running, "
                  "which is the point of the lab."),
    Session("Low precision", ("07_low_precision",),
            notes="Keep the precision the weights are stored in apart from the precision the math runs in: "
                  "weight-only formats help decode, and only narrower math helps a compute-bound step."),
    Session("Mixtures of experts", ("08_moe",),
            notes="An MoE step reads the experts its batch touches: few at a batch of one, nearly all of them "
                  "once the batch is large, which is why its math binds only at a far larger batch than a dense "
                  "model's. Read the figure's MoE curve against its dense twin's before the formula."),
    Session("Serving at scale", ("09_serving_at_scale", "10_speculative_decoding"),
            lab="in Binder, find a set-up on the frontier of {doc}`10_speculative_decoding` that meets a stated speed per user"),
    Session("The index card and a worked example", ("11_index_card", "12_worked_example"),
            notes="The worked example checks a published post claim by claim and makes a good final "
                  "assignment: let students fill in the index card for it first."),
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
        r = f"{{numref}}`{e.label}`" if e.chapter[:2].isdigit() else f"{{numref}}`{e.chapter.capitalize()} %s <{e.label}>`"
        return r + " (live kernel)" if needs_kernel(e) else r
    return ", ".join(map(ref, exs)) or "none"


def plan_markdown(sessions: tuple[Session, ...] = SESSIONS, root: Path = ROOT) -> str:
    """The course plan as a Markdown table: each session's chapters, its exercises for class and
    for homework (as references, so that their numbers are Sphinx's; "(live kernel)" after one
    that ``needs_kernel``), and its lab."""
    rows = ["| Session | Chapters | In class | Homework | Lab |", "|---|---|---|---|---|"]
    for i, s in enumerate(sessions, start=1):
        exs = [e for c in s.chapters for e in exercises(chapter_path(c, root))]
        chapters = ", ".join(f"{{doc}}`{c}`" for c in s.chapters)
        rows.append(f"| {i}. {s.topic} | {chapters} | {_refs([e for e in exs if in_class(e)])} "
                    f"| {_refs([e for e in exs if not in_class(e)])} | {s.lab or '–'} |")
    return "\n".join(rows)


def notes_markdown(sessions: tuple[Session, ...] = SESSIONS) -> str:
    """The instructor's notes, one paragraph for each session that has them, numbered as the plan."""
    return "\n\n".join(f"**{i}. {s.topic}.** {s.notes}" for i, s in enumerate(sessions, start=1) if s.notes)


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
