"""The course the instructor's page proposes (``inferlimits.book.course``): sessions a teacher can
run, a rubric for each kind of exercise, and a quiz bank whose keys are computed and checked.
Everything here reads the committed notebooks; nothing is executed or built."""
from __future__ import annotations

import ast
import json
import re

import pytest
import yaml

from inferlimits.book import EXERCISE_KINDS, ROOT, notebooks
from inferlimits.book.course import (MAX_READING_WORDS, MIN_IN_CLASS, PROJECT, QUIZ, RUBRICS, SESSION_MINUTES,
                                     SESSIONS, TOLERANCE, Exercise, Session, activity_markdown, agenda_figures,
                                     agenda_labels, agenda_minutes, chapter_path, choice, exercises, homework_exercises,
                                     in_class, in_class_exercises, markdown, plan_markdown, quiz_questions,
                                     reading_words, rubric, rubrics_markdown, session_exercises, session_of,
                                     sessions_markdown, take_home_exercises)
from inferlimits.checks import CheckFailed

NUMBERED = sorted(p.stem for p in (ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))
#: every page a course must assign: the primer and the numbered chapters
ASSIGNED = ["primer", *NUMBERED]
SESSION_IDS = [f"session-{i}" for i in range(1, len(SESSIONS) + 1)]


# ---- sessions -------------------------------------------------------------------------------------

def test_the_plan_has_nine_two_hour_sessions():
    assert len(SESSIONS) == 9 and SESSION_MINUTES == 120


@pytest.mark.parametrize("session", SESSIONS, ids=SESSION_IDS)
def test_every_session_has_notes(session):
    assert len(session.notes.split()) >= 20, f"{session.topic}: its notes are missing or too short"


@pytest.mark.parametrize("session", SESSIONS, ids=SESSION_IDS)
def test_every_agenda_fills_two_hours_with_timed_activities(session):
    assert agenda_minutes(session) == SESSION_MINUTES, \
        f"{session.topic}: the agenda's minutes add up to {agenda_minutes(session)}, not {SESSION_MINUTES}"
    assert all(isinstance(m, int) and m > 0 and activity.strip() for m, activity in session.agenda)
    activities = " ".join(a for _, a in session.agenda)
    assert QUIZ in activities, f"{session.topic}: the agenda has no quiz"
    assert "Board derivation" in activities or "at the board" in activities, \
        f"{session.topic}: no derivation on the board"
    assert agenda_figures(session), f"{session.topic}: the agenda reads no figure together"


@pytest.mark.parametrize("session", SESSIONS, ids=SESSION_IDS)
def test_every_session_assigns_at_most_six_thousand_words_of_reading(session):
    words = reading_words(session)
    assert 0 < words <= MAX_READING_WORDS, \
        f"{session.topic}: {words:,} words of main line (at most {MAX_READING_WORDS:,})"
    assert MAX_READING_WORDS == 6000


@pytest.mark.parametrize("session", SESSIONS, ids=SESSION_IDS)
def test_every_session_does_three_exercises_in_class_not_all_reading_figures(session):
    done = in_class_exercises(session)
    assert len(done) >= MIN_IN_CLASS >= 3, f"{session.topic}: {len(done)} exercises in class: {[e.label for e in done]}"
    assert any(e.kind != "explore" for e in done), f"{session.topic}: every exercise in class only reads a figure"


@pytest.mark.parametrize("session", SESSIONS, ids=SESSION_IDS)
def test_extra_exercises_for_class_are_the_sessions_own_and_beyond_the_rule(session):
    """A session names more exercises for class only where the rule leaves too few: each is one of
    its chapters' exercises, and one the rule does not already send to class."""
    by_label = {e.label: e for e in session_exercises(session)}
    for label in session.extra:
        assert label in by_label, f"{session.topic}: extra {label!r} is no exercise of its chapters"
        e = by_label[label]
        assert not (e.chapter in session.chapters and in_class(e)), \
            f"{session.topic}: {label} is in class by the rule already"


@pytest.mark.parametrize("session", SESSIONS, ids=SESSION_IDS)
def test_the_agenda_names_exactly_the_exercises_done_in_class(session):
    named = agenda_labels(session)
    assert len(named) == len(set(named)), f"{session.topic}: the agenda names an exercise twice: {named}"
    done = [e.label for e in in_class_exercises(session)]
    missing, unknown = set(done) - set(named), set(named) - set(done)
    assert not missing, (f"{session.topic}: exercises for class that no activity of the agenda names (add them to "
                         f"an activity in course.SESSIONS): {sorted(missing)}")
    assert not unknown, f"{session.topic}: the agenda names exercises that are not done in class: {sorted(unknown)}"


@pytest.mark.parametrize("session", SESSIONS, ids=SESSION_IDS)
def test_the_agenda_reads_exported_figures_of_its_own_chapters(session):
    from inferlimits.book.export import SLIDES

    for name in agenda_figures(session):
        assert name in SLIDES, f"{session.topic}: no exported figure {name!r}"
        assert SLIDES[name].chapter in session.chapters + session.take_home, (session.topic, name)


def test_every_chapter_is_assigned_once_as_reading_or_take_home():
    assigned = [c for s in SESSIONS for c in s.chapters + s.take_home]
    assert sorted(assigned) == sorted(ASSIGNED), (
        f"assigned twice: {sorted({c for c in assigned if assigned.count(c) > 1})}; "
        f"never: {sorted(set(ASSIGNED) - set(assigned))}; unknown: {sorted(set(assigned) - set(ASSIGNED))}")
    for stem in ASSIGNED:
        chapter_path(stem)
    assert any(s.take_home for s in SESSIONS)


def test_sessions_follow_the_book_order():
    """A session reads no chapter before one that an earlier session reads (take-home chapters aside,
    which may be handed out early, as the worked example is)."""
    order = [c for s in SESSIONS for c in s.chapters]
    assert order == sorted(order, key=ASSIGNED.index)


def test_every_exercise_of_a_session_is_set_once():
    for s in SESSIONS:
        sets = [in_class_exercises(s), homework_exercises(s), take_home_exercises(s)]
        labels = [e.label for part in sets for e in part]
        assert sorted(labels) == sorted(e.label for e in session_exercises(s)), s.topic


def test_the_plan_and_the_agendas_render_with_links():
    plan = plan_markdown()
    assert plan.count("\n") == len(SESSIONS) + 1 and "words)" in plan
    full = sessions_markdown()
    assert full.count("| Start | Minutes | Activity |") == len(SESSIONS)
    assert "[figure" not in full and "[quiz]" not in full and not re.search(r"\[[\w-]+-ex\d+\]", full)
    assert "{doc}`quiz bank <quiz>`" in full and "{numref}`decode-ex3`" in full
    assert "| 1:50 | 10 | Quiz" in full   # the clock: hours and minutes from the session's start


def test_an_activity_naming_an_exercise_the_session_lacks_is_an_error():
    session = Session("A test", ("02_decode",), agenda=((SESSION_MINUTES, "Do [kv-cache-ex1] [quiz]"),))
    with pytest.raises(ValueError, match="kv-cache-ex1"):
        activity_markdown(session.agenda[0][1], session)
    assert "{numref}`Primer %s <primer-ex1>` (compute)" in activity_markdown("[primer-ex1]", SESSIONS[0])


def test_session_of_names_the_session_that_assigns_a_chapter():
    assert session_of("02_decode") == 2
    assert session_of("11_index_card") == len(SESSIONS)   # take-home, handed out in the last session
    with pytest.raises(ValueError, match="stem"):
        session_of("99_nothing")


# ---- rubrics --------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", [*EXERCISE_KINDS, PROJECT])
def test_every_kind_of_exercise_has_a_rubric_with_three_levels_of_credit(kind):
    r = RUBRICS[kind]
    for level in ("full", "partial", "none"):
        text = getattr(r, level)
        assert len(text.split()) >= 8 and text.endswith("."), f"{kind}: its {level} credit is not said in full"
    assert len({r.full, r.partial, r.none}) == 3


def test_every_exercise_in_the_book_has_its_rubric():
    for path in notebooks():
        for ex in exercises(path):
            assert rubric(ex) is RUBRICS[PROJECT if ex.project else ex.kind], ex.label
    project = Exercise("06_overhead", "x", "extend: project · advanced", "extend", "advanced", subject="project")
    assert project.project and rubric(project) is RUBRICS[PROJECT]
    with pytest.raises(ValueError, match="ex"):
        rubric(Exercise("06_overhead", "x", "a title", None, None))
    assert rubrics_markdown().count("\n") == len(RUBRICS) + 1


# ---- the quiz bank --------------------------------------------------------------------------------

QUESTIONS = quiz_questions()


def _calls(code: str, name: str) -> list[ast.Call]:
    return [n for n in ast.walk(ast.parse(code)) if isinstance(n, ast.Call)
            and getattr(n.func, "id", getattr(n.func, "attr", None)) == name]


def _literal(call: ast.Call, position: int, keyword: str):
    node = call.args[position] if len(call.args) > position else next(
        (k.value for k in call.keywords if k.arg == keyword), None)
    return ast.literal_eval(node) if node is not None else None


def _fraction(tolerance: str) -> float:
    return 0.0 if tolerance == "exact" else float(tolerance.rstrip("%")) / 100


def test_the_quiz_bank_holds_at_least_thirty_questions_of_both_kinds():
    assert len(QUESTIONS) >= 30
    ids = [q.id for q in QUESTIONS]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    kinds = [q.kind for q in QUESTIONS]
    assert kinds.count("multiple choice") >= len(QUESTIONS) // 4 and kinds.count("numeric") >= len(QUESTIONS) // 2


def test_every_question_sits_in_its_own_cell_with_its_check_cell():
    cells = json.loads((ROOT / "chapters" / "quiz.ipynb").read_text(encoding="utf-8"))["cells"]
    labelled = [c for c in cells if c["cell_type"] == "markdown" and re.search(r"^\*\*Q", "".join(c["source"]), re.M)]
    assert len(labelled) == len(QUESTIONS), "a question's label line does not follow the form course._QUESTION reads"
    for q in QUESTIONS:
        assert _calls(q.code, "answer") or _calls(q.code, "choice"), f"{q.id}: its key is not checked"


@pytest.mark.parametrize("stem", ASSIGNED)
def test_every_chapter_has_two_to_four_questions(stem):
    n = sum(q.chapter == stem for q in QUESTIONS)
    assert 2 <= n <= 4, f"{stem}: {n} questions in the quiz bank"


@pytest.mark.parametrize("q", QUESTIONS, ids=lambda q: q.id)
def test_every_question_is_labelled_with_its_chapter_and_its_session(q):
    number = q.id[1:].split(".")[0]
    stem = "primer" if number == "P" else next(s for s in NUMBERED if s.startswith(f"{int(number):02d}_"))
    assert q.chapter == stem, f"{q.id}: labelled with {q.chapter}, its number names {stem}"
    assert q.session == session_of(q.chapter), \
        f"{q.id}: labelled session {q.session}, the plan reads it in {session_of(q.chapter)}"


@pytest.mark.parametrize("q", QUESTIONS, ids=lambda q: q.id)
def test_every_key_is_checked_as_the_question_states_it(q):
    """A numeric question states its tolerance (the exercises' form) and its key's numbers are
    answer() calls with that tolerance; a multiple-choice question lists its options and its key's
    letter is the one a choice() call computes."""
    if q.kind == "numeric":
        assert q.tolerance, f"{q.id}: no 'Tolerance: ...' line"
        assert q.text.rstrip().endswith(f"Tolerance: {q.tolerance}."), f"{q.id}: the tolerance is not the last line"
        answers = _calls(q.code, "answer")
        assert answers, f"{q.id}: no answer() call checks its key"
        for call in answers:
            assert _literal(call, 3, "tolerance") == _fraction(q.tolerance), (q.id, ast.unparse(call))
            stated = _literal(call, 2, "stated")
            assert stated in q.key, f"{q.id}: the answer's {stated!r} is not in its key"
    else:
        assert not q.tolerance and not _calls(q.code, "answer")
        options = re.findall(r"^- \(([a-e])\) ", q.text, re.M)
        assert options == list("abcde"[:len(options)]) and len(options) >= 3, f"{q.id}: options {options}"
        calls = _calls(q.code, "choice")
        assert len(calls) == 1 and _literal(calls[0], 0, "question") == q.id, q.id
        stated = _literal(calls[0], 2, "stated")
        assert q.key.startswith(stated + ":") or q.key.startswith(stated + " "), f"{q.id}: the key is not {stated}"
        assert stated.strip("()") in options


def test_the_tolerance_form_is_the_exercises():
    assert TOLERANCE.pattern.startswith("^Tolerance: (exact|")
    assert {q.tolerance for q in QUESTIONS if q.tolerance} <= {"exact", "1%", "2%", "5%", "10%"}


def test_choice_checks_a_key_against_the_arithmetic(capsys):
    choice("Q0.1", "b", "(b)", {"a": 1.5, "b": "memory-bound", "c": True})
    assert capsys.readouterr().out == "✓ Q0.1: key (b), computed (b) from (a) 1.5, (b) memory-bound, (c) True\n"
    with pytest.raises(CheckFailed, match="Q0.1"):
        choice("Q0.1", "a", "(b)")
    for bad in ("b", "(z)", "", None):
        with pytest.raises(ValueError, match="stated"):
            choice("Q0.1", "b", bad)
    with pytest.raises(ValueError, match="question"):
        choice(" ", "b", "(b)")


def test_the_quiz_bank_stays_small():
    size = (ROOT / "chapters" / "quiz.ipynb").stat().st_size
    assert size < 100_000, f"quiz.ipynb is {size:,} bytes"


# ---- the pages ------------------------------------------------------------------------------------

def test_the_quiz_bank_follows_the_instructors_page_in_the_teaching_part():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    teaching = next(p for p in toc["parts"] if p["caption"] == "Teaching")
    files = [c["file"] for c in teaching["chapters"]]
    assert files.index("chapters/quiz") == files.index("chapters/instructor") + 1


def test_the_instructors_page_shows_the_sessions_the_rubrics_and_the_quiz_bank():
    md = markdown(ROOT / "chapters" / "instructor.ipynb")
    assert "(course-plan)=" in md and "{doc}`quiz bank <quiz>`" in md
    for section in ("## A course in sessions", "### Each session, minute by minute",
                    "## Grading: a rubric for each kind", "## The quiz bank", "make homework", "make slides",
                    "## The student edition"):
        assert section in md, section
    src = (ROOT / "chapters" / "instructor.ipynb").read_text(encoding="utf-8")
    for call in ("plan_markdown()", "sessions_markdown()", "rubrics_markdown()", "quiz_questions()"):
        assert call in src, call
