"""The course the instructor's page proposes: nine two-hour sessions, each with its assigned
reading, a timed agenda and notes; each chapter's exercises sorted into class work, assigned
homework (sized by an estimate of each exercise's minutes, within ``HOMEWORK_MINUTES`` a
session) and optional practice, by stated rules, read from the chapters themselves so that the
plan follows the exercises as they change; one term project chosen from the book's project-sized
exercises, with its milestones; a grading scheme and a week-by-week calendar; a rubric for each
kind of exercise; and the quiz, whose questions and keys are in ``chapters/quiz.ipynb``.

An exercise is written in a chapter as a sphinx-exercise directive whose title names its kind and
level (``derive · intermediate``, or ``compute: a subject · basic``; the kinds and levels are
``EXERCISE_KINDS`` and ``EXERCISE_LEVELS``). A project-sized exercise has the subject ``project``
(``extend: project · advanced``).

A session's agenda is a tuple of (minutes, activity). An activity names what it uses in square
brackets, so that the page can link it and the tests can hold it to the chapters:

- ``[decode-ex3]``: an exercise, by its label;
- ``[figure 02_decode_ceiling]``: a figure, by its name among the slide exports (``export.SLIDES``);
- ``[quiz]``: the session's questions of the quiz (``chapters/quiz.ipynb``, printed by ``make quiz``).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from inferlimits.book import EXERCISE_KINDS, EXERCISE_LEVELS, ROOT
from inferlimits.checks import CheckFailed

#: an exercise: the directive with its title, its label, then its text up to the closing fence
_DIRECTIVE = re.compile(r"^```\{exercise\} ([^\n]*)\n:label: (\S+)\n(.*?)^```", re.M | re.S)
#: a title: its kind (with an optional subject after a colon), a middle dot, its level
TITLE = re.compile(rf"^({'|'.join(EXERCISE_KINDS)})(?:: ([^·]+))? · ({'|'.join(EXERCISE_LEVELS)})$")
#: the subject that marks a project-sized exercise (``extend: project · advanced``)
PROJECT = "project"


@dataclass(frozen=True)
class Exercise:
    chapter: str        # the notebook's stem, e.g. "02_decode"
    label: str          # what {numref} refers to
    title: str          # as the directive writes it
    kind: str | None    # None where the title does not follow the form
    level: str | None
    text: str = ""      # what the exercise asks, as the chapter writes it
    subject: str | None = None  # what the title names after the kind's colon, if anything

    @property
    def project(self) -> bool:
        """Whether the exercise is project-sized: its title's subject is ``PROJECT``."""
        return (self.subject or "").strip() == PROJECT


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
        out.append(Exercise(Path(path).stem, label, title, m and m.group(1), m and m.group(3), text.strip(),
                            m and m.group(2) and m.group(2).strip()))
    return out


def in_class(ex: Exercise) -> bool:
    """The plan's rule: exercises that read the figures, and basic ones, are done together in
    class; the rest (computations, derivations, decisions and errors to find, beyond one step)
    are homework or practice, and the project-sized ones are the term project's choices. A
    session may name more exercises for class (``Session.extra``), or leave some that the rule
    sends there for homework (``Session.for_homework``), to stay within ``MAX_IN_CLASS``."""
    return not ex.project and (ex.kind == "explore" or ex.level == "basic")


# ---- how long an exercise takes ----------------------------------------------------------------

#: the rule for an exercise's time at home, in minutes, by its level: a basic exercise is a step
#: from the text, an intermediate one several steps, an advanced one several steps and a judgement
LEVEL_MINUTES = {"basic": 15, "intermediate": 30, "advanced": 60}
#: the minutes a kind adds to its level's: a derivation is written out in symbols before any number
#: goes in, and an extension sets up a term the chapter does not have; both take longer than
#: carrying given numbers through a formula
KIND_EXTRA_MINUTES = {"derive": 15, "extend": 15}


def minutes(ex: Exercise) -> int:
    """The estimated minutes a student needs for ``ex`` at home: ``LEVEL_MINUTES`` of its level,
    plus ``KIND_EXTRA_MINUTES`` of its kind. A project-sized exercise is the term project, sized in
    weeks, not minutes: a ValueError, as for a title that names no level."""
    if ex.project:
        raise ValueError(f"ex: {ex.label!r} is project-sized, the term project's, not an exercise of a week")
    if ex.level not in LEVEL_MINUTES:
        raise ValueError(f"ex: {ex.label!r} names no level ({ex.title!r})")
    return LEVEL_MINUTES[ex.level] + KIND_EXTRA_MINUTES.get(ex.kind, 0)


#: the words an exercise uses for a part that only a running notebook can do: a control the hosted
#: page's figure does not carry, or a measurement of the reader's own machine
LIVE = "live Jupyter kernel"


def needs_kernel(ex: Exercise) -> bool:
    """Whether some part of the exercise needs the notebook running (Jupyter, Binder): the
    exercise says so in its own text, in the words ``LIVE``. The hosted book and the student
    edition (which has no Binder buttons) can answer the rest."""
    return LIVE in ex.text


# ---- sessions ---------------------------------------------------------------------------------

#: a session's length, in minutes: its agenda's minutes add up to it
SESSION_MINUTES = 120
#: the most main-line words (``inferlimits.book.prose``) a session assigns to be read for it
MAX_READING_WORDS = 6000
#: the fewest exercises done in class in a session; at least one of them must be other than explore
MIN_IN_CLASS = 3
#: the most exercises done in class in a session, labs included, and the most labs
MAX_IN_CLASS = 4
MAX_LABS = 1
#: the most minutes of homework a session assigns (``minutes`` of each exercise): about three hours;
#: a session may set a lower limit of its own (``Session.homework_cap``)
HOMEWORK_MINUTES = 180
#: the largest share of a session's assigned minutes that exercises without a seeded variant
#: (``seeded``) may take: their solutions are public in the full book, so they only fill the time
#: the seeded ones leave (``homework_exercises``)
MAX_UNSEEDED_SHARE = 0.2
#: the most questions a session's quiz asks (the quiz has ten minutes of the agenda)
MAX_QUIZ_QUESTIONS = 4


@dataclass(frozen=True)
class Session:
    topic: str
    chapters: tuple[str, ...]           # notebook stems: the reading assigned for this session
    agenda: tuple[tuple[int, str], ...] = ()  # (minutes, activity), in order; see the module's docstring
    take_home: tuple[str, ...] = ()     # chapters read at home from this session on, not counted in its reading
    extra: tuple[str, ...] = ()         # labels of exercises done in class beyond the rule (``in_class``)
    lab: str = ""                       # what students run themselves, if anything
    notes: str = ""                     # for the instructor: what to stress, what to prepare
    for_homework: tuple[str, ...] = ()  # labels of exercises the rule sends to class, left for home here
    setup: str = ""                     # for the students, with the homework: what to set up before the next session
    homework_cap: int = HOMEWORK_MINUTES  # the most minutes of homework it assigns, if fewer than the course's


#: the plan: one session a week, two hours each
SESSIONS = (
    Session(
        "Two speeds and the roofline", ("primer", "01_two_speeds"),
        agenda=(
            (10, "The course's question: is a run held back by memory, by math, or by neither? Then the term "
                 "project: its choices and its milestones"),
            (15, "Read [figure primer_decoder] together: the matrices a token multiplies, layer by layer"),
            (15, "[primer-ex4] at the figure, in pairs"),
            (20, "Board derivation: a chip's balance point from its datasheet, and the roofline's two lines"),
            (10, "Break"),
            (15, "Read [figure 01_roofline] together, then [two-speeds-ex3] at the figure"),
            (25, "[two-speeds-ex1] and [two-speeds-ex5] in pairs; two pairs present"),
            (10, "Quiz: [quiz]"),
        ),
        for_homework=("primer-ex1", "primer-ex3", "two-speeds-ex2"),
        notes="Start from the primer's diagram and its table of configuration fields, so that \"the weights a "
              "token multiplies\" is a list of matrices before it is a number. Then the roofline: have the "
              "room compute one chip's balance point from its datasheet, with the dense rate, before the "
              "figure shows it. Hand out the term project's choices and milestones today: each student reads "
              "the projects' texts and chooses one for the proposal."),
    Session(
        "Decode", ("02_decode",),
        agenda=(
            (10, "Recap of the roofline; today's question: what does one decode step read?"),
            (25, "Board derivation: the memory ceiling of Llama-3.1-8B on a B200, bandwidth over the bytes "
                 "a token reads, and the math ceiling beside it"),
            (15, "Read [figure 02_decode_ceiling] together: several cards, several precisions"),
            (15, "[decode-ex3] at the figure, in pairs"),
            (10, "Break"),
            (20, "[decode-ex7] alone, then compare answers"),
            (15, "[decode-ex5] in groups: find the error, then put the right number in its place"),
            (10, "Quiz: [quiz]"),
        ),
        extra=("decode-ex5",),
        notes="The chapter's one idea is that a decode step reads every weight for one token: work the "
              "running example's ceiling on the board before the figures. Keep the two weight counts apart: "
              "what memory must hold (for the fit, checked first) and what a step reads (for the speed)."),
    Session(
        "Prefill and the request", ("03_prefill",),
        agenda=(
            (10, "Recap: decode reads every weight for one token; prefill reads them once for the whole prompt"),
            (15, "Read [figure 03_prefill] together: place a short and a long prompt before any formula"),
            (20, "Board derivation: the crossover, where a prompt's math outlasts its reads, and why the "
                 "activation traffic pushes it beyond the balance point"),
            (15, "[prefill-ex3] at the figure, in pairs"),
            (10, "Break"),
            (20, "[prefill-ex7] alone, then compare answers"),
            (20, "Read [figure 03_request_timeline] together, then [prefill-ex6] at the figure"),
            (10, "Quiz: [quiz]"),
        ),
        notes="Prefill reads the same weights as decode and lands on the other side of the ridge. Let the "
              "room place a short and a long prompt on the roofline figure before computing the crossover, "
              "then spend time on the activation traffic, the chapter's least familiar quantity, and on why "
              "it pushes the crossover beyond the balance point. Close with the request timeline: the time "
              "to first token answers to math once the prompt is past the crossover, the time per output "
              "token to bandwidth. The term project's proposal is due today: return each with a line on "
              "whether its data and its machine will do, well before the first result is due."),
    Session(
        "Batching", ("04_batching",),
        agenda=(
            (10, "Recap: at a batch of one, decode leaves the math nearly idle"),
            (10, "Ask the room: how large should a batch be? Collect guesses before any figure"),
            (20, "Board derivation: one read of the weights shared by B sequences, and the knee where the "
                 "math ceiling takes over"),
            (15, "Read [figure 04_batch_throughput] together, then [batching-ex3] at the figure"),
            (10, "Break"),
            (20, "[batching-ex1] alone, then compare answers"),
            (25, "[batching-ex6] in groups: find the error, then put the right number in its place"),
            (10, "Quiz: [quiz]"),
        ),
        extra=("batching-ex6",),
        notes="Batching shares the weights' read among the conversations. Ask how large a batch should be "
              "before showing the knee, and keep each user's speed in view beside the fleet's: below the knee "
              "a larger batch costs each user almost nothing, past it each user slows. Leave the caches for "
              "the next session, and say so: today's batches have no context."),
    Session(
        "The KV cache", ("05_kv_cache",),
        agenda=(
            (10, "Recap: the knee without context; today every sequence brings its own cache"),
            (20, "Board derivation: the cache bytes per token from a model's configuration, and what fits "
                 "beside the weights"),
            (15, "Read [figure 05_kv_memory] together, then [kv-cache-ex3] at the figure"),
            (15, "[kv-cache-ex4] at the ceiling figure, in pairs"),
            (10, "Break"),
            (20, "[kv-cache-ex7] alone, then compare answers"),
            (20, "Read [figure 12_worked_capacity] together, and hand out the worked example as take-home "
                 "reading, due and quizzed at the next session; then hand out the set-up for next week's lab"),
            (10, "Quiz: [quiz]"),
        ),
        take_home=("12_worked_example",),
        notes="The cache is what batching cannot share: check the fit in memory before any rate, every time. "
              "The worked example ({doc}`12_worked_example`) is take-home reading from this session on: it "
              "needs only decode, batching and the cache, and it checks a published plan claim by claim. Its "
              "exercises join this session's homework pool, and the next session's quiz asks about it. The "
              "next session's lab runs on the students' own laptops: hand out its set-up (below) with the "
              "homework, so that each student installs the student notebooks and runs one before the lab, or "
              "knows to use Binder alone.",
        setup="Before the next session's lab, install the student notebooks on your own laptop and run one. "
              "The lab sheet ({doc}`labs`) gives the address of the book's `student` branch: clone it, then run "
              "`make lab` in the folder it makes. That installs what the notebooks need, once, and opens "
              "JupyterLab. Open {doc}`13_measure` there and run it all once (Run, then Run All Cells), so that "
              "a problem shows before the lab, not in it. `make lab` needs git, Python and make on macOS or Linux; "
              "on Windows it runs only in WSL. If you cannot install the notebooks, use Binder alone: open the "
              "lab sheet's Binder link once before the lab, since its first start takes a minute or two, and in "
              "the lab compare your Binder roof with a neighbour's laptop."),
    Session(
        "The third wall, measured", ("06_overhead",),
        agenda=(
            (10, "Recap: two ceilings; today a rate far below both"),
            (15, "Board derivation: the overhead ceiling, one step's launches times the host's time for each, "
                 "beside the memory ceiling; then read [figure 06_third_wall] together"),
            (15, "Read [figure 06_timeline] together, then [overhead-ex3] at the figure"),
            (15, "[overhead-ex1] in pairs"),
            (5, "Break"),
            (45, "Lab: run {doc}`13_measure` on a laptop and in Binder; [measure-ex3] and [measure-ex4] with "
                 "the notebook running, then compare the two machines' roofs in [figure 13_machine_roofline]"),
            (5, "Hand out the rest of the measurement chapter as take-home reading"),
            (10, "Quiz: [quiz]"),
        ),
        take_home=("13_measure",),
        extra=("measure-ex3", "measure-ex4"),
        for_homework=("overhead-ex5",),
        lab="run chapter 13 on a laptop and in Binder, and compare the two machines' roofs",
        notes="Chapter 13 measures the machine it runs on, so the hosted book's figures show the machine "
              "that built the book; students get their own machine's numbers only with the notebook running, "
              "which is the point of the lab. Students set up the notebooks on their laptops after the last "
              "session (its set-up): open by asking who could not, and pair each of them with a student whose "
              "laptop runs them, Binder open beside. The chapter's main line is take-home reading, after the "
              "lab: students read it with their own measurements open, and the next session's quiz asks about "
              "it. The term project's first result is due at the next session, so a student who measures can "
              "use today's roof."),
    Session(
        "Low precision", ("07_low_precision",),
        agenda=(
            (10, "Recap: the bytes a step reads set the decode ceiling; fewer bytes per weight raise it"),
            (20, "Board derivation: a weight's bytes in a block-scaled format, and the knee with FP8 weights "
                 "and FP8 math"),
            (15, "Read [figure 07_precision] together, then [low-precision-ex5] at the figure"),
            (15, "[low-precision-ex1] alone, then compare answers"),
            (10, "Break"),
            (20, "[low-precision-ex4] in groups: find the error"),
            (20, "Discussion: which format for which job? Storage for decode, narrower math for a "
                 "compute-bound step"),
            (10, "Quiz: [quiz]"),
        ),
        notes="Keep the precision the weights are stored in apart from the precision the math runs in: "
              "weight-only formats help decode, and only narrower math helps a compute-bound step. The term "
              "project's first result is due today, a week after the lab: return each with a line on what the "
              "final report must add. The final report is set today, due a week after the last session."),
    Session(
        "Mixtures of experts", ("08_moe",),
        agenda=(
            (10, "Recap: a dense model's knee; today a model that reads only the experts its batch touches"),
            (15, "Read [figure 08_moe] together: the MoE curve against its dense twin's, before the formula"),
            (20, "Board derivation: the experts a batch touches under uniform routing"),
            (15, "[moe-ex4] at the figure, in pairs"),
            (5, "Break"),
            (15, "[moe-ex2] at the board: the knee once every expert is read"),
            (10, "[moe-ex6] alone"),
            (15, "[moe-ex5] in groups: find the error"),
            (5, "Hand out the index card as take-home reading, due and quizzed at the next session"),
            (10, "Quiz: [quiz]"),
        ),
        take_home=("11_index_card",),
        notes="An MoE step reads the experts its batch touches: few at a batch of one, nearly all of them "
              "once the batch is large, which is why its math binds only at a far larger batch than a dense "
              "model's. Read the figure's MoE curve against its dense twin's before the formula. MLA's "
              "absorbed attention is the chapter's second idea: keep it for the second hour. Hand out the index card "
              "({doc}`11_index_card`) as take-home reading: it gathers every formula of the course on one page, "
              "so students read it with the next session's two chapters, and the next session's quiz asks about "
              "it. Its exercises join this session's homework pool."),
    Session(
        "Serving at scale", ("09_serving_at_scale", "10_speculative_decoding"),
        agenda=(
            (10, "Recap: one GPU's ceilings; today several GPUs, and several tokens per read of the weights"),
            (15, "Read [figure 09_tensor_parallel] together, then [serving-at-scale-ex4] in pairs"),
            (10, "[serving-at-scale-ex5] in groups: find the error"),
            (20, "Board derivation: speculative decoding's tokens per step, and its speed-up while decode is "
                 "memory-bound; read [figure 10_speculative] together"),
            (10, "[speculative-ex4] alone, then compare answers"),
            (5, "Break"),
            (30, "Lab: in Binder, [serving-at-scale-ex3] on [figure 10_frontier]: for the set-up it names, the "
                 "largest batch among powers of two that keeps each user at the speed it names, and the "
                 "tokens per second each GPU then makes"),
            (10, "The index card, read for today: the lines today's two chapters add to it; the term project's "
                 "final report is due in a week"),
            (10, "Quiz: [quiz]"),
        ),
        for_homework=("serving-at-scale-ex1", "speculative-ex1", "speculative-ex2"),
        homework_cap=120,
        lab="in Binder, do {numref}`serving-at-scale-ex3` on the frontier figure of {doc}`10_speculative_decoding`: "
            "for the set-up it names, find the largest batch among powers of two that keeps each user at the "
            "speed it names, and the tokens per second each GPU then makes",
        notes="Two chapters, one question: what more hardware, or a draft model, buys each user and the fleet. "
              "Class keeps four exercises, the lab's among them; the chapters' other basic exercises go to "
              "homework or practice. Students have read the index card ({doc}`11_index_card`) for today, "
              "handed out in the last session: it gathers every formula of the course on one page, today's "
              "among them, and today's quiz asks about it. The term project's final report is due a week after "
              "this session, with this session's homework, so the homework is lighter than a full week's."),
)

_REF = re.compile(r"\[([^\]\s]+)\]")
_FIGURE = re.compile(r"\[figure (\w+)\]")
QUIZ = "[quiz]"


def chapter_path(stem: str, root: Path = ROOT) -> Path:
    path = root / "chapters" / f"{stem}.ipynb"
    if not path.exists():
        raise ValueError(f"stem: no chapter {stem!r} in {root / 'chapters'}")
    return path


def reading_words(session: Session, root: Path = ROOT) -> int:
    """The main-line words of a session's assigned reading (``prose.measure``); take-home
    chapters are not counted."""
    from inferlimits.book import prose

    return sum(prose.measure(chapter_path(c, root)).words for c in session.chapters)


def take_home_words(session: Session, root: Path = ROOT) -> int:
    """The main-line words of the chapters a session hands out as take-home reading."""
    from inferlimits.book import prose

    return sum(prose.measure(chapter_path(c, root)).words for c in session.take_home)


def session_exercises(session: Session, root: Path = ROOT) -> list[Exercise]:
    """Every exercise of a session's chapters, its take-home chapters after them."""
    return [e for c in session.chapters + session.take_home for e in exercises(chapter_path(c, root))]


def in_class_exercises(session: Session, root: Path = ROOT) -> list[Exercise]:
    """The exercises done in class: those of the session's assigned chapters that the rule
    (``in_class``) sends to class, less those the session leaves for home (``for_homework``), and
    those it names in ``extra``, in the book's order."""
    return [e for e in session_exercises(session, root)
            if (e.chapter in session.chapters and in_class(e) and e.label not in session.for_homework)
            or e.label in session.extra]


def homework_pool(session: Session, root: Path = ROOT) -> list[Exercise]:
    """What a session's homework is chosen from: the exercises of its chapters, then of its
    take-home chapters, that are neither done in class nor project-sized, in the book's order."""
    done = {e.label for e in in_class_exercises(session, root)}
    return [e for e in session_exercises(session, root) if e.label not in done and not e.project]


def seeded(ex: Exercise) -> bool:
    """Whether ``make homework`` sets ``ex`` with numbers of its own for each seed: a template of
    ``inferlimits.book.homework`` varies it. One without a template is set as the book writes it,
    and the full book shows its solution."""
    from inferlimits.book.homework import templates  # noqa: PLC0415 (it reads this module's exercises)

    return ex.label in templates()


def homework_exercises(session: Session, root: Path = ROOT) -> list[Exercise]:
    """The homework a session assigns, due a week later, in the book's order. The rule, stated here
    once: from its pool (``homework_pool``), the exercises with a seeded variant (``seeded``) come
    first, the first of each kind, then the rest, in the book's order; the others then fill the
    time left, in the book's order, only while their minutes stay within ``MAX_UNSEEDED_SHARE`` of
    the session's. Each is assigned only while the estimated minutes (``minutes``) stay within
    ``session.homework_cap`` (at most ``HOMEWORK_MINUTES``). The pool's other exercises are optional
    practice (``practice_exercises``)."""
    pool = homework_pool(session, root)
    chosen: set[str] = set()
    total = unseeded = 0
    for with_variant, first_of_kind in ((True, True), (True, False), (False, False)):
        kinds: set[str | None] = set()
        for e in pool:
            if e.label in chosen or seeded(e) != with_variant or (first_of_kind and e.kind in kinds):
                continue
            kinds.add(e.kind)
            m = minutes(e)
            if total + m > min(session.homework_cap, HOMEWORK_MINUTES):
                continue
            if not with_variant and unseeded + m > MAX_UNSEEDED_SHARE * (total + m):
                continue
            chosen.add(e.label)
            total += m
            unseeded += 0 if with_variant else m
    return [e for e in pool if e.label in chosen]


def homework_minutes(session: Session, root: Path = ROOT) -> int:
    """The estimated minutes of a session's assigned homework."""
    return sum(minutes(e) for e in homework_exercises(session, root))


def practice_exercises(session: Session, root: Path = ROOT) -> list[Exercise]:
    """The exercises of a session's pool that its homework does not assign: optional practice,
    whose solutions the full book shows."""
    assigned = {e.label for e in homework_exercises(session, root)}
    return [e for e in homework_pool(session, root) if e.label not in assigned]


def take_home_exercises(session: Session, root: Path = ROOT) -> list[Exercise]:
    """The take-home chapters' exercises that are neither done in class nor project-sized: those of
    the session's homework and practice that come with its take-home reading (a view of those two
    lists, not a third)."""
    return [e for e in homework_pool(session, root) if e.chapter in session.take_home]


def project_exercises(root: Path = ROOT) -> list[Exercise]:
    """The term project's choices: every project-sized exercise of the book, in its order."""
    from inferlimits.book import notebooks

    return [e for p in notebooks(root) for e in exercises(p) if e.project]


def agenda_minutes(session: Session) -> int:
    return sum(m for m, _ in session.agenda)


def agenda_labels(session: Session) -> list[str]:
    """The exercises a session's agenda names, by label, in order."""
    return [m for _, activity in session.agenda for m in _REF.findall(activity) if m != "quiz"]


def agenda_figures(session: Session) -> list[str]:
    """The figures a session's agenda reads together, by their names in ``export.SLIDES``."""
    return [m for _, activity in session.agenda for m in _FIGURE.findall(activity)]


def session_of(stem: str, sessions: tuple[Session, ...] = SESSIONS) -> int:
    """The number (from 1) of the session that assigns chapter ``stem``, as reading or take-home."""
    for i, s in enumerate(sessions, start=1):
        if stem in s.chapters + s.take_home:
            return i
    raise ValueError(f"stem: no session assigns the chapter {stem!r}")


def quiz_session(stem: str, sessions: tuple[Session, ...] = SESSIONS) -> int | None:
    """The session whose quiz asks about chapter ``stem``: the one that reads it; for a take-home
    chapter, the one after the session that hands it out, once students have read it (None after
    the last session: its questions are spares)."""
    i = session_of(stem, sessions)
    if stem in sessions[i - 1].chapters:
        return i
    return i + 1 if i < len(sessions) else None


def numref(e: Exercise) -> str:
    """A reference to ``e``; one of an unnumbered page (the primer) is named for it, since Sphinx
    numbers its exercises 1, 2, ... without a chapter number."""
    if e.chapter[:2].isdigit():
        return f"{{numref}}`{e.label}`"
    return f"{{numref}}`{e.chapter.capitalize()} %s <{e.label}>`"


def _refs(exs: list[Exercise]) -> str:
    """References to ``exs``, "(live kernel)" after one that ``needs_kernel``."""
    return ", ".join(numref(e) + (" (live kernel)" if needs_kernel(e) else "") for e in exs) or "none"


def _docs(stems: tuple[str, ...]) -> str:
    return ", ".join(f"{{doc}}`{c}`" for c in stems) or "–"


def plan_markdown(sessions: tuple[Session, ...] = SESSIONS, root: Path = ROOT) -> str:
    """The course plan as a Markdown table: each session's assigned reading with its main-line
    words (and the take-home reading it hands out, with its words), its exercises for class, its
    assigned homework with its estimated minutes, its optional practice (as references, so that
    their numbers are Sphinx's; "(live kernel)" after one that ``needs_kernel``), and its lab."""
    rows = ["| Session | Reading | In class | Homework (assigned) | Optional practice | Lab |",
            "|---|---|---|---|---|---|"]
    for i, s in enumerate(sessions, start=1):
        reading = f"{_docs(s.chapters)} ({reading_words(s, root):,} words)"
        if s.take_home:
            reading += f"; take-home: {_docs(s.take_home)} ({take_home_words(s, root):,} words)"
        home = f"{_refs(homework_exercises(s, root))} (about {homework_minutes(s, root)} minutes)"
        rows.append(f"| {i}. {s.topic} | {reading} | {_refs(in_class_exercises(s, root))} | {home} "
                    f"| {_refs(practice_exercises(s, root))} | {s.lab or '–'} |")
    return "\n".join(rows)


def activity_markdown(activity: str, session: Session, root: Path = ROOT) -> str:
    """An agenda activity with its exercises, figures and quiz written as links."""
    from inferlimits.book.export import SLIDES

    by_label = {e.label: e for e in session_exercises(session, root)}

    def figure(m: re.Match) -> str:
        slide = SLIDES[m.group(1)]
        return f"the figure `{m.group(1)}` of {{doc}}`{slide.chapter}`"

    def exercise(m: re.Match) -> str:
        if m.group(1) == "quiz":
            return "the session's questions, printed by `make quiz`"
        e = by_label.get(m.group(1))
        if e is None:
            raise ValueError(f"agenda: {m.group(1)!r} is no exercise of the session {session.topic!r}")
        return numref(e) + f" ({e.kind}" + (" · live kernel)" if needs_kernel(e) else ")")

    return _REF.sub(exercise, _FIGURE.sub(figure, activity))


def agenda_markdown(session: Session, root: Path = ROOT) -> str:
    """A session's timed agenda: a table of each activity's start (hours:minutes from the start of
    the session), its minutes, and what the room does."""
    rows = ["| Start | Minutes | Activity |", "|---|---|---|"]
    clock = 0
    for minutes, activity in session.agenda:
        rows.append(f"| {clock // 60}:{clock % 60:02d} | {minutes} | {activity_markdown(activity, session, root)} |")
        clock += minutes
    return "\n".join(rows)


def session_markdown(number: int, sessions: tuple[Session, ...] = SESSIONS, root: Path = ROOT) -> str:
    """One session in full: its topic, reading (with its words), take-home reading, lab, timed
    agenda, notes, and the set-up it hands students for the next session, if any."""
    s = sessions[number - 1]
    lines = [f"**{number}. {s.topic}.** Reading: {_docs(s.chapters)}, {reading_words(s, root):,} words of main line."]
    if s.take_home:
        lines.append(f"Take-home reading, not counted in the session's: {_docs(s.take_home)}, "
                     f"{take_home_words(s, root):,} words.")
    if s.lab:
        lines.append(f"Lab: {s.lab}.")
    out = [" ".join(lines), agenda_markdown(s, root)]
    if s.notes:
        out.append(f"*Notes.* {s.notes}")
    if s.setup:
        out.append(f"*Set-up, for the students, with the homework.* {s.setup}")
    return "\n\n".join(out)


def sessions_markdown(sessions: tuple[Session, ...] = SESSIONS, root: Path = ROOT) -> str:
    """Every session in full (``session_markdown``), one after the other."""
    return "\n\n".join(session_markdown(i, sessions, root) for i in range(1, len(sessions) + 1))


def notes_markdown(sessions: tuple[Session, ...] = SESSIONS) -> str:
    """The instructor's notes, one paragraph for each session that has them, numbered as the plan."""
    return "\n\n".join(f"**{i}. {s.topic}.** {s.notes}" for i, s in enumerate(sessions, start=1) if s.notes)


# ---- the term project, the grade and the calendar -------------------------------------------------

#: the week after the last session: the term project's final report and the last homework are due then
FINAL_WEEK = len(SESSIONS) + 1


@dataclass(frozen=True)
class Milestone:
    """A step of the term project: its name, the session that sets it, the week it is due (week k
    holds session k, and is due at its start; ``FINAL_WEEK`` holds none), what to hand in, and its
    share of the course's grade, in percent."""

    name: str
    set_in: int
    week: int
    hand_in: str
    percent: int


#: the term project: each student chooses one of the book's project-sized exercises
#: (``project_exercises``) and hands it in in three steps, each graded with ``RUBRICS[PROJECT]``
MILESTONES = (
    Milestone("Proposal", set_in=1, week=3, percent=5,
              hand_in="One page: the project chosen; the data it needs, each value with its source (a datasheet, "
                      "a `config.json`, a published run), or the machine and software it will measure; the "
                      "method, in the chapter's formulas; and the numbers the final report will give."),
    Milestone("First result", set_in=3, week=7, percent=10,
              hand_in="A first measurement with its ceiling beside it, or a first computed card (the set-up's fit, "
                      "its ceilings and its verdict), with the working, and a line on what remains to do."),
    Milestone("Final report", set_in=7, week=FINAL_WEEK, percent=30,
              hand_in="Every part the project's exercise asks for, each number within the tolerance it states, "
                      "with its sources and its working or command lines, and a page on what limits the result."),
)


@dataclass(frozen=True)
class GradePart:
    """A part of the course's grade: its name, its share in percent, and how it is graded."""

    name: str
    percent: int
    how: str


#: the grading scheme: its shares add up to 100
GRADING = (
    GradePart("Homework", 30, "Each session's seeded sheet (`make homework SEED=N`), graded against its key "
                              "with the rubric of each exercise's kind; the sheets count equally."),
    GradePart("Quizzes", 15, "Each session's quiz, marked against the key that `make quiz` prints; the "
                             "quizzes count equally."),
    GradePart("Term project", sum(m.percent for m in MILESTONES),
              "Its milestones, at the shares the table of milestones gives; the project rubric grades each."),
    GradePart("Participation", 10, "Work shown in class: an in-class exercise presented to the room, and the "
                                   "labs run."),
)


@dataclass(frozen=True)
class Deadline:
    """Something due: in ``week`` (at the start of its session), set by session ``set_in`` (0: by
    the course's first page, before session 1); its ``kind`` ("reading", "homework" or
    "project"), and what it is: chapter stems for reading, a session's number for its homework,
    a milestone for the project."""

    week: int
    set_in: int
    kind: str
    what: tuple[str, ...] | int | Milestone


def deadlines(sessions: tuple[Session, ...] = SESSIONS,
              milestones: tuple[Milestone, ...] = MILESTONES) -> list[Deadline]:
    """Every deadline of the course, by week: each session's reading, set by the session before it;
    each take-home chapter, due the week after the session that hands it out; each session's
    homework, due a week later; and the term project's milestones."""
    out = []
    for k, s in enumerate(sessions, start=1):
        out.append(Deadline(k, k - 1, "reading", s.chapters))
        if s.take_home:
            out.append(Deadline(k + 1, k, "reading", s.take_home))
        out.append(Deadline(k + 1, k, "homework", k))
    out += [Deadline(m.week, m.set_in, "project", m) for m in milestones]
    return sorted(out, key=lambda d: (d.week, ("reading", "homework", "project").index(d.kind)))


@dataclass(frozen=True)
class Week:
    """One week of the calendar: its session (None after the last), the reading due before it, the
    session whose homework is due, the milestones due, and the chapters its quiz asks about."""

    number: int
    session: int | None
    reading: tuple[str, ...]
    homework: tuple[int, ...]
    milestones: tuple[Milestone, ...]
    quiz: tuple[str, ...]


def calendar(sessions: tuple[Session, ...] = SESSIONS, milestones: tuple[Milestone, ...] = MILESTONES) -> list[Week]:
    """The course week by week (``deadlines`` gathered by week), through the week after the last
    session; a session's quiz asks about the chapters whose ``quiz_session`` it is."""
    due = deadlines(sessions, milestones)
    last = max([len(sessions)] + [d.week for d in due])
    stems = [c for s in sessions for c in s.chapters + s.take_home]
    weeks = []
    for w in range(1, last + 1):
        mine = [d for d in due if d.week == w]
        weeks.append(Week(w, w if w <= len(sessions) else None,
                          tuple(c for d in mine if d.kind == "reading" for c in d.what),
                          tuple(d.what for d in mine if d.kind == "homework"),
                          tuple(d.what for d in mine if d.kind == "project"),
                          tuple(c for c in stems if quiz_session(c, sessions) == w)))
    return weeks


def projects_markdown(root: Path = ROOT) -> str:
    """The term project's choices as a Markdown table: each project-sized exercise, by reference,
    with its chapter's session and the first sentence of what it asks."""
    rows = ["| Project | Chapter read in session | What it asks |", "|---|---|---|"]
    for e in project_exercises(root):
        first = re.split(r"(?<=[.?!])\s", " ".join(e.text.split()), maxsplit=1)[0]
        rows.append(f"| {numref(e)} ({e.kind}) | {session_of(e.chapter)} | {first} |")
    return "\n".join(rows)


def _week_name(week: int, sessions: tuple[Session, ...] = SESSIONS) -> str:
    return f"session {week}" if week <= len(sessions) else f"week {week}, after the last session"


def milestones_markdown(milestones: tuple[Milestone, ...] = MILESTONES,
                        sessions: tuple[Session, ...] = SESSIONS) -> str:
    """The term project's milestones as a Markdown table: set in, due, what to hand in, share."""
    rows = ["| Milestone | Set in | Due at | Hand in | Share of the grade |", "|---|---|---|---|---|"]
    rows += [f"| {m.name} | session {m.set_in} | {_week_name(m.week, sessions)} | {m.hand_in} | {m.percent}% |"
             for m in milestones]
    return "\n".join(rows)


def grading_markdown(grading: tuple[GradePart, ...] = GRADING) -> str:
    """The grading scheme as a Markdown table, its total last."""
    rows = ["| Part | Share | How it is graded |", "|---|---|---|"]
    rows += [f"| {g.name} | {g.percent}% | {g.how} |" for g in grading]
    rows.append(f"| All | {sum(g.percent for g in grading)}% | |")
    return "\n".join(rows)


def calendar_markdown(sessions: tuple[Session, ...] = SESSIONS, milestones: tuple[Milestone, ...] = MILESTONES,
                      root: Path = ROOT) -> str:
    """The calendar as a Markdown table: each week's session, the reading, homework and milestones
    due at its start, and its quiz (how many questions, on which chapters)."""
    questions = quiz_questions()
    rows = ["| Week | Session | Reading due | Homework due | Term project due | Quiz |", "|---|---|---|---|---|---|"]
    for w in calendar(sessions, milestones):
        s = f"{w.session}. {sessions[w.session - 1].topic}" if w.session else "–"
        home = ", ".join(f"session {k}'s (about {homework_minutes(sessions[k - 1], root)} minutes)"
                         for k in w.homework) or "–"
        n = sum(q.session == w.number for q in questions) if w.session else 0
        quiz = f"{n} questions on {_docs(w.quiz)}" if n else "–"
        rows.append(f"| {w.number} | {s} | {_docs(w.reading)} | {home} | "
                    f"{', '.join(m.name for m in w.milestones) or '–'} | {quiz} |")
    return "\n".join(rows)


# ---- exercises and their grading ---------------------------------------------------------------

def kinds_markdown(paths: list[Path]) -> str:
    """What each kind of exercise asks, and how many of each the chapters ``paths`` set, by level."""
    exs = [e for p in paths for e in exercises(p)]
    rows = ["| Kind | What it asks | " + " | ".join(EXERCISE_LEVELS) + " |",
            "|---|---|" + "---|" * len(EXERCISE_LEVELS)]
    for kind, asks in EXERCISE_KINDS.items():
        counts = [sum(1 for e in exs if e.kind == kind and e.level == lv) for lv in EXERCISE_LEVELS]
        rows.append(f"| {kind} | {asks} | " + " | ".join(map(str, counts)) + " |")
    return "\n".join(rows)


@dataclass(frozen=True)
class Rubric:
    """What earns full, partial and no credit on one kind of exercise."""

    full: str
    partial: str
    none: str


#: one rubric for each kind of exercise (``EXERCISE_KINDS``), and one for the project-sized ones
RUBRICS: dict[str, Rubric] = {
    "compute": Rubric(
        full="Every number the exercise asks for lies within its stated tolerance, with its unit, and the "
             "working shows which given value goes into which formula.",
        partial="The right formula and inputs, but one slip spoils a number: an arithmetic error, a unit "
                "mixed up (GB for GiB, bits for bytes), a factor of two lost, a value copied wrong. Or the "
                "right numbers with no working.",
        none="A wrong method (the wrong bytes divided, a ceiling from the wrong resource), or numbers with "
             "neither units nor working."),
    "derive": Rubric(
        full="Each step follows from the one before or from a stated assumption; the relation is reached in "
             "symbols before any number goes in, and what it leaves out (the cache, the activations) is named.",
        partial="The right relation, but one step asserted rather than shown, or an assumption used without "
                "being named; or the relation shown only for one set of numbers.",
        none="The relation stated without a derivation, checked only with numbers, or reached through two "
             "errors that cancel."),
    "decide": Rubric(
        full="The right choice, with the limit that decides it named (fit in memory first, then bandwidth, "
             "math or overhead) and each option's numbers within the stated tolerance.",
        partial="The right choice with an incomplete reason: an option's numbers missing, or the deciding "
                "limit not named. Or the wrong choice, reached correctly from a single slip in one number.",
        none="A choice with no reason, a reason that skips the fit, or a choice by a limit that does not bind."),
    "compare": Rubric(
        full="Both designs or regimes set side by side on the same quantities, each number within the "
             "stated tolerance, and the reason they differ said in a sentence.",
        partial="The right direction, but one side without its numbers, or the reason for the difference "
                "missing or wrong.",
        none="One side only, or a comparison on quantities that do not bear on the question."),
    "explore": Rubric(
        full="Each value read off the figure at the setting the exercise names, within its tolerance, and "
             "one sentence on what moved and why.",
        partial="The readings right, the explanation missing or wrong; or one reading taken at the wrong setting.",
        none="Readings from the wrong figure or the wrong settings, or none."),
    "extend": Rubric(
        full="The model carried one step further: the new term written as an equation, its assumptions "
             "named, and a number or a limit that shows what it changes.",
        partial="The extension set up right but not carried through to a number, or carried through with one slip.",
        none="The chapter's result restated without the new term, or a new term with no reason for it."),
    "find the error": Rubric(
        full="The error named exactly (which number or step, and why it is wrong), the right number put in "
             "its place within the stated tolerance, and how much the claim's conclusion changes.",
        partial="The right error found, but the corrected number missing or outside the tolerance; or a real "
                "but minor slip found while the main error is missed.",
        none="The claim called right, or called wrong for a reason that is itself wrong."),
    PROJECT: Rubric(
        full="Every checkpoint the solution lists is met: the data entered with their sources, the method "
             "written down, the numbers within the stated tolerance of the key (a measurement explained "
             "against its ceiling), and a paragraph on what limits the result.",
        partial="The method sound and most checkpoints met, but one missed: a number outside the tolerance, a "
                "source missing, or no account of what limits the result.",
        none="No working method, numbers without sources, or a rate for a set-up that does not fit, given "
             "without comment."),
}


def rubric(ex: Exercise) -> Rubric:
    """The rubric that grades ``ex``: the project rubric for a project-sized exercise, else its kind's."""
    if ex.project:
        return RUBRICS[PROJECT]
    if ex.kind not in RUBRICS:
        raise ValueError(f"ex: the exercise {ex.label!r} has no kind a rubric grades ({ex.title!r})")
    return RUBRICS[ex.kind]


def rubrics_markdown(rubrics: dict[str, Rubric] = RUBRICS) -> str:
    """The rubrics as a Markdown table: one row per kind, its full, partial and no credit."""
    rows = ["| Kind | Full credit | Partial credit | No credit |", "|---|---|---|---|"]
    for kind, r in rubrics.items():
        name = f"{kind} (project-sized)" if kind == PROJECT else kind
        rows.append(f"| {name} | {r.full} | {r.partial} | {r.none} |")
    return "\n".join(rows)


# ---- the quiz -----------------------------------------------------------------------------------

#: where the quiz's questions and keys are: a notebook checked as the chapters are, but published in
#: neither edition (``inferlimits.book.UNPUBLISHED``); ``make quiz`` prints it (``inferlimits.book.quiz``)
QUIZ_PATH = ROOT / "chapters" / "quiz.ipynb"
#: the label of a question that no session's quiz asks: kept, checked, for a final test or review
SPARE = "spare"
#: a question's label line: its id (Q, the chapter's number or P for the primer, a dot, its place),
#: its chapter, the session whose quiz asks it (a reference to the course plan) or ``SPARE``, and its kind
_QUESTION = re.compile(r"^\*\*(Q(?:P|\d+)\.\d+)\*\* · \{doc\}`([\w-]+)` · (?:\{ref\}`session (\d+) <course-plan>`|spare) · "
                       r"(numeric|multiple choice)\n\n(.*?)\n\n"
                       r"```\{admonition\} Key\n:class: dropdown\n(.*?)\n```", re.M | re.S)
#: the line that states how close a numeric answer must come (the exercises' form)
TOLERANCE = re.compile(r"^Tolerance: (exact|\d+(?:\.\d+)?%)\.$", re.M)


@dataclass(frozen=True)
class Question:
    """One question of the quiz bank, as its page writes it, with the check cell under it."""

    id: str             # "Q2.1": the chapter's number (P for the primer) and its place
    chapter: str        # the notebook's stem
    session: int | None  # the session whose quiz asks it, as its label names it; None for a spare
    kind: str           # "numeric" or "multiple choice"
    text: str           # the question, its options and its tolerance
    key: str            # the key, as the page writes it
    code: str           # the check cell that computes the key

    @property
    def tolerance(self) -> str | None:
        """What the question's tolerance line states ("2%", "exact"), or None."""
        m = TOLERANCE.search(self.text)
        return m and m.group(1)


def quiz_questions(path: Path = QUIZ_PATH) -> list[Question]:
    """The quiz bank's questions, in order: each from its Markdown cell and the code cell after it."""
    cells = json.loads(Path(path).read_text(encoding="utf-8"))["cells"]
    out = []
    for i, cell in enumerate(cells):
        if cell["cell_type"] != "markdown":
            continue
        for m in _QUESTION.finditer("".join(cell["source"])):
            after = cells[i + 1] if i + 1 < len(cells) and cells[i + 1]["cell_type"] == "code" else {"source": ""}
            out.append(Question(m.group(1), m.group(2), int(m.group(3)) if m.group(3) else None, m.group(4),
                                m.group(5).strip(), m.group(6).strip(), "".join(after["source"])))
    return out


def session_questions(number: int | None, path: Path = QUIZ_PATH) -> list[Question]:
    """The questions of session ``number``'s quiz, in order (``None``: the spares)."""
    return [q for q in quiz_questions(path) if q.session == number]


def choice(question: str, computed: str, stated: str, values: dict[str, object] | None = None) -> None:
    """A multiple-choice key, checked: ``computed`` is the option the package's arithmetic makes
    right (its letter, "b"), ``stated`` the key as the quiz bank writes it ("(b)"), and ``values``
    what the arithmetic gives for each option (printed, so that a change to any input shows).
    Prints one stable line; raises CheckFailed when the key and the arithmetic differ."""
    if not isinstance(question, str) or not question.strip():
        raise ValueError("question must name the question, as the quiz bank labels it")
    m = re.fullmatch(r"\(([a-e])\)", stated if isinstance(stated, str) else "")
    if not m:
        raise ValueError(f"stated must be the key as the quiz writes it, such as '(b)'; got {stated!r}")
    if computed != m.group(1):
        raise CheckFailed(f"{question}: the quiz's key is {stated} but the arithmetic makes ({computed}) right")
    shown = ", ".join(f"({k}) {v:,.4g}" if isinstance(v, (int, float)) and not isinstance(v, bool) else f"({k}) {v}"
                      for k, v in (values or {}).items())
    print(f"✓ {question}: key {stated}, computed ({computed})" + (f" from {shown}" if shown else ""))


def slides_markdown() -> str:
    """The slide exports (``make figures``), as a Markdown table: file, chapter, figure."""
    from inferlimits.book.export import SLIDES

    rows = ["| Files in `figures/` | Chapter | Figure |", "|---|---|---|"]
    rows += [f"| `{name}.svg`, `{name}.png` | {{doc}}`{s.chapter}` | `{s.div_id}` |" for name, s in SLIDES.items()]
    return "\n".join(rows)
