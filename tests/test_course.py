"""The course the instructor's page proposes (``inferlimits.book.course``): sessions a teacher can
run, homework sized by time, a term project with milestones, a grading scheme and a calendar, a
rubric for each kind of exercise, and a quiz whose keys are computed and checked, printed by
``make quiz`` (``inferlimits.book.quiz``) and published in neither edition. Everything here reads
the committed notebooks; nothing is executed, and only the last tests read the built editions."""
from __future__ import annotations

import ast
import json
import re

import pytest
import yaml

from inferlimits.book import EXERCISE_KINDS, EXERCISE_LEVELS, ROOT, UNPUBLISHED, checked_notebooks, notebooks, quiz
from inferlimits.book.course import (FINAL_WEEK, GRADING, HOMEWORK_MINUTES, KIND_EXTRA_MINUTES, LEVEL_MINUTES,
                                     MAX_IN_CLASS, MAX_LABS, MAX_QUIZ_QUESTIONS, MAX_READING_WORDS, MAX_UNSEEDED_SHARE,
                                     MILESTONES, MIN_IN_CLASS, PROJECT, QUIZ, QUIZ_PATH, RUBRICS, SESSION_MINUTES,
                                     SESSIONS, TOLERANCE, Exercise, Milestone, Session, activity_markdown,
                                     agenda_figures, agenda_labels, agenda_minutes, calendar, calendar_markdown,
                                     chapter_path, choice, deadlines, exercises, grading_markdown, homework_exercises,
                                     homework_minutes, homework_pool, in_class, in_class_exercises, markdown,
                                     milestones_markdown, minutes, plan_markdown, practice_exercises, project_exercises,
                                     projects_markdown, quiz_questions, quiz_session, reading_words, rubric,
                                     rubrics_markdown, seeded, session_exercises, session_of, session_questions,
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
def test_every_session_does_three_or_four_exercises_in_class_not_all_reading_figures(session):
    done = in_class_exercises(session)
    assert MIN_IN_CLASS >= 3 and MAX_IN_CLASS == 4
    assert MIN_IN_CLASS <= len(done) <= MAX_IN_CLASS, \
        f"{session.topic}: {len(done)} exercises in class: {[e.label for e in done]}"
    assert any(e.kind != "explore" for e in done), f"{session.topic}: every exercise in class only reads a figure"
    assert not any(e.project for e in done), f"{session.topic}: a project-sized exercise in class"


@pytest.mark.parametrize("session", SESSIONS, ids=SESSION_IDS)
def test_every_session_runs_at_most_one_lab(session):
    labs = [a for _, a in session.agenda if a.startswith("Lab")]
    assert MAX_LABS == 1 and len(labs) <= MAX_LABS, f"{session.topic}: {len(labs)} labs"
    assert bool(labs) == bool(session.lab), f"{session.topic}: a lab in the agenda needs its text in Session.lab"


@pytest.mark.parametrize("session", [s for s in SESSIONS if s.lab], ids=lambda s: s.topic)
def test_a_lab_that_names_an_exercise_does_in_class_exactly_that_exercise(session):
    """A lab's text that names an exercise (``{numref}``) asks what the exercise asks: the agenda's
    lab does that exercise in class, and the text sets no target of its own (a speed, a cost)."""
    named = re.findall(r"\{numref\}`([\w-]+)`", session.lab)
    lab = next(a for _, a in session.agenda if a.startswith("Lab"))
    for label in named:
        assert f"[{label}]" in lab, f"{session.topic}: the lab names {label}, its agenda does not"
        assert label in [e.label for e in in_class_exercises(session)]
    if named:
        assert not re.search(r"\d", re.sub(r"\{\w+\}`[^`]*`", "", session.lab)), \
            f"{session.topic}: the lab states numbers of its own; it should ask what its exercise asks"
        assert "cost" not in session.lab and "cost" not in lab


@pytest.mark.parametrize("session", SESSIONS, ids=SESSION_IDS)
def test_extra_exercises_for_class_are_the_sessions_own_and_beyond_the_rule(session):
    """A session names more exercises for class only where the rule leaves too few: each is one of
    its chapters' exercises, and one the rule does not already send to class. It leaves for home
    only exercises the rule sends to class, and only where the rule sends more than ``MAX_IN_CLASS``."""
    by_label = {e.label: e for e in session_exercises(session)}
    for label in session.extra:
        assert label in by_label, f"{session.topic}: extra {label!r} is no exercise of its chapters"
        e = by_label[label]
        assert not (e.chapter in session.chapters and in_class(e)), \
            f"{session.topic}: {label} is in class by the rule already"
    by_rule = [e for e in session_exercises(session) if e.chapter in session.chapters and in_class(e)]
    for label in session.for_homework:
        assert label in [e.label for e in by_rule], f"{session.topic}: {label!r} is not in class by the rule"
    if session.for_homework:
        assert len(by_rule) + len(session.extra) > MAX_IN_CLASS, f"{session.topic}: leaves for home what fits in class"


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
    """In class, assigned homework, optional practice or a term project's choice: each exercise of a
    session's chapters is one of these, once."""
    for s in SESSIONS:
        projects = [e for e in session_exercises(s) if e.project]
        sets = [in_class_exercises(s), homework_exercises(s), practice_exercises(s), projects]
        labels = [e.label for part in sets for e in part]
        assert sorted(labels) == sorted(e.label for e in session_exercises(s)), s.topic
        shown = {e.label for e in homework_exercises(s) + practice_exercises(s)}
        assert {e.label for e in take_home_exercises(s)} <= shown, s.topic
        assert all(e.chapter in s.take_home for e in take_home_exercises(s)), s.topic


# ---- homework, sized by time ---------------------------------------------------------------------

def test_an_exercise_takes_the_minutes_of_its_level_and_a_derivation_or_extension_more():
    assert LEVEL_MINUTES == {"basic": 15, "intermediate": 30, "advanced": 60}
    assert set(LEVEL_MINUTES) == set(EXERCISE_LEVELS) and set(KIND_EXTRA_MINUTES) <= set(EXERCISE_KINDS)
    for kind in EXERCISE_KINDS:
        for level in EXERCISE_LEVELS:
            e = Exercise("02_decode", "x", f"{kind} · {level}", kind, level)
            assert minutes(e) == LEVEL_MINUTES[level] + KIND_EXTRA_MINUTES.get(kind, 0)
    derive = Exercise("02_decode", "x", "derive · basic", "derive", "basic")
    compute = Exercise("02_decode", "x", "compute · basic", "compute", "basic")
    assert minutes(derive) > minutes(compute)
    with pytest.raises(ValueError, match="ex"):
        minutes(Exercise("02_decode", "x", "extend: project · advanced", "extend", "advanced", subject=PROJECT))
    with pytest.raises(ValueError, match="ex"):
        minutes(Exercise("02_decode", "x", "a title", None, None))


@pytest.mark.parametrize("session", SESSIONS, ids=SESSION_IDS)
def test_every_session_assigns_at_most_three_hours_of_homework_and_no_project(session):
    assigned = homework_exercises(session)
    assert HOMEWORK_MINUTES == 180 and 0 < session.homework_cap <= HOMEWORK_MINUTES
    assert assigned, f"{session.topic}: no homework"
    assert homework_minutes(session) == sum(map(minutes, assigned)) <= session.homework_cap, \
        f"{session.topic}: {homework_minutes(session)} minutes of homework"
    assert not any(e.project for e in assigned), f"{session.topic}: a project is weekly homework"
    done = {e.label for e in in_class_exercises(session)}
    assert not done & {e.label for e in assigned + practice_exercises(session)}, session.topic


@pytest.mark.parametrize("session", SESSIONS, ids=SESSION_IDS)
def test_the_homework_follows_its_rule(session):
    """The seeded exercises first (the first of each kind, then the rest in the book's order), while
    they fit; then the others, while they fit and keep within their share. So no seeded exercise left
    as practice would still fit, no other would fit its share, and the assigned ones keep the book's order."""
    pool = homework_pool(session)
    assigned = homework_exercises(session)
    assert [e.label for e in assigned] == [e.label for e in pool if e in assigned]
    total = homework_minutes(session)
    left = session.homework_cap - total
    unseeded = sum(minutes(e) for e in assigned if not seeded(e))
    for e in practice_exercises(session):
        if seeded(e):
            assert minutes(e) > left, f"{session.topic}: {e.label} ({minutes(e)} minutes) fits in the {left} left"
        else:
            assert minutes(e) > left or unseeded + minutes(e) > MAX_UNSEEDED_SHARE * (total + minutes(e)), \
                f"{session.topic}: {e.label} ({minutes(e)} minutes, no seeded variant) fits in the {left} left"
    firsts = {}
    for e in pool:
        if seeded(e):
            firsts.setdefault(e.kind, e)
    kinds = {e.kind for e in assigned if seeded(e)}
    for kind, e in firsts.items():
        assert e in assigned or kind in kinds or minutes(e) > left, (session.topic, kind)


@pytest.mark.parametrize("session", SESSIONS, ids=SESSION_IDS)
def test_graded_homework_is_mostly_seeded(session):
    """The graded homework is the seeded sheet (``make homework``); an exercise without a seeded
    variant is set as the book writes it, and the full book shows its solution. So exercises without
    one take at most a fifth of a session's assigned minutes. The primer has no templates, so
    session 1's share rests on chapter 1's seeded exercises, and it holds there too."""
    assigned = homework_exercises(session)
    unseeded = sum(minutes(e) for e in assigned if not seeded(e))
    assert MAX_UNSEEDED_SHARE == 0.2
    assert unseeded <= MAX_UNSEEDED_SHARE * homework_minutes(session), \
        f"{session.topic}: {unseeded} of {homework_minutes(session)} minutes have no seeded variant"
    assert any(seeded(e) for e in assigned), f"{session.topic}: no seeded homework"


def test_seeded_means_a_homework_template_varies_it():
    from inferlimits.book.homework import templates

    labels = set(templates())
    every = [e for s in SESSIONS for e in session_exercises(s)]
    assert {e.label for e in every if seeded(e)} == labels & {e.label for e in every}
    assert not any(seeded(e) for e in every if e.chapter == "primer"), "the primer has templates now: update the docs"


def test_homework_of_a_made_up_session_is_capped():
    """A session with more homework than fits: the rule assigns within the cap, and the rest is practice."""
    big = Session("A test", ("05_kv_cache", "06_overhead"), take_home=("13_measure",))
    assigned, practice = homework_exercises(big), practice_exercises(big)
    assert practice and sum(map(minutes, assigned)) <= HOMEWORK_MINUTES
    assert len({e.kind for e in assigned}) >= 3
    small = Session("A test", ("05_kv_cache", "06_overhead"), take_home=("13_measure",), homework_cap=60)
    assert 0 < homework_minutes(small) <= 60 < homework_minutes(big)


def test_the_plan_and_the_agendas_render_with_links():
    plan = plan_markdown()
    assert plan.count("\n") == len(SESSIONS) + 1 and "words)" in plan
    full = sessions_markdown()
    assert full.count("| Start | Minutes | Activity |") == len(SESSIONS)
    assert "[figure" not in full and "[quiz]" not in full and not re.search(r"\[[\w-]+-ex\d+\]", full)
    assert "`make quiz`" in full and "{numref}`decode-ex3`" in full
    assert "<quiz>" not in full + plan and "{doc}`quiz" not in full + plan, "the plan links the unpublished quiz"
    assert "Optional practice" in plan and "minutes)" in plan
    assert "| 1:50 | 10 | Quiz" in full   # the clock: hours and minutes from the session's start


def test_an_activity_naming_an_exercise_the_session_lacks_is_an_error():
    session = Session("A test", ("02_decode",), agenda=((SESSION_MINUTES, "Do [kv-cache-ex1] [quiz]"),))
    with pytest.raises(ValueError, match="kv-cache-ex1"):
        activity_markdown(session.agenda[0][1], session)
    assert "{numref}`Primer %s <primer-ex1>` (compute)" in activity_markdown("[primer-ex1]", SESSIONS[0])


def test_session_of_names_the_session_that_assigns_a_chapter():
    assert session_of("02_decode") == 2
    assert session_of("11_index_card") == len(SESSIONS) - 1   # take-home, handed out in the session before the last
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


# ---- the quiz ---------------------------------------------------------------------------------------

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
    assert q.session is None or q.session == quiz_session(q.chapter), \
        f"{q.id}: labelled session {q.session}, the plan quizzes {q.chapter} in {quiz_session(q.chapter)}"


def test_a_take_home_chapter_is_due_and_quizzed_at_the_next_session():
    """As the README says: the last session hands out no take-home chapter, and each one is due at the
    next session, whose quiz asks at least one question about it."""
    assert quiz_session("02_decode") == session_of("02_decode") == 2
    assert not SESSIONS[-1].take_home, "the last session hands out reading that no session quizzes"
    weeks = calendar()
    for s in SESSIONS:
        for stem in s.take_home:
            handed = session_of(stem)
            assert quiz_session(stem) == handed + 1 <= len(SESSIONS), stem
            assert stem in weeks[handed].reading, f"{stem} is not due at session {handed + 1}"
            assert all(q.session != handed for q in QUESTIONS if q.chapter == stem), \
                f"{stem} is quizzed in session {handed}, which hands it out"
            assert any(q.session == handed + 1 for q in QUESTIONS if q.chapter == stem), \
                f"{stem}: session {handed + 1}'s quiz asks nothing about it"
    assert quiz_session("11_index_card") == len(SESSIONS)


@pytest.mark.parametrize("number", range(1, len(SESSIONS) + 1), ids=SESSION_IDS)
def test_every_session_quizzes_at_most_four_questions(number):
    mine = session_questions(number)
    assert MAX_QUIZ_QUESTIONS == 4
    assert 1 <= len(mine) <= MAX_QUIZ_QUESTIONS, f"session {number}: {[q.id for q in mine]}"
    week = calendar()[number - 1]
    assert {q.chapter for q in mine} <= set(week.quiz), (number, week.quiz)


def test_a_question_states_the_data_it_needs():
    """Q7.1 once asked for a factor without the weights it comes from: it now gives each part's count
    and bytes (every number of it checked by its cell, as the coverage test holds)."""
    q = next(q for q in QUESTIONS if q.id == "Q7.1")
    for needed in ("billion in its layers' matrices", "billion in the output head", "bytes a weight", "1 byte"):
        assert needed in " ".join(q.text.split()), needed


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


# ---- the quiz on paper: make quiz ----------------------------------------------------------------

def _visible(page: str) -> str:
    """A page's text as a reader sees it: no tags, entities read, white space as single spaces."""
    import html

    page = re.sub(r"<style>.*?</style>", " ", page, flags=re.S)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


def _opening(q) -> str:
    """A question's opening words, up to its first math, role or code (which a sheet writes otherwise)."""
    return " ".join(re.split(r"[$`{]", q.text, maxsplit=1)[0].split())[:60]


def _key_runs(q) -> list[str]:
    """What gives a key away: each number its answer() calls state, or the chosen letter's reason."""
    runs = [_literal(c, 2, "stated") for c in _calls(q.code, "answer")]
    if q.kind == "multiple choice":
        runs.append(" ".join(q.key.split(":", 1)[1].split()[:6]))
    return runs


@pytest.fixture(scope="module")
def printed(tmp_path_factory):
    out = tmp_path_factory.mktemp("quiz")
    quiz.write(out, pdf=False)
    return out


def test_make_quiz_writes_a_sheet_and_a_key_for_every_session_and_the_spares(printed):
    index = (printed / "index.html").read_text(encoding="utf-8")
    names = [quiz.sheet_name(i) for i in range(1, len(SESSIONS) + 1)] + [quiz.sheet_name(None)]
    for name in names:
        for sub in (quiz.SHEETS, quiz.KEYS):
            assert (printed / sub / f"{name}.html").exists(), f"{sub}/{name}.html"
            assert f'href="{sub}/{name}.html"' in index
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    target = makefile.split("\nquiz:", 1)[1].split("\n\n", 1)[0]
    assert "$(PY) -m inferlimits.book.quiz" in target and "chromium" in target.split("\n", 1)[0]
    assert re.search(r"^\.PHONY:.* quiz( |$)", makefile, re.M)
    assert quiz.OUT == ROOT / "_build" / "quiz"


@pytest.mark.parametrize("number", [*range(1, len(SESSIONS) + 1), None], ids=[*SESSION_IDS, "spare"])
def test_every_sessions_questions_are_on_its_sheet_and_no_key_is(printed, number):
    sheet = _visible((printed / quiz.SHEETS / f"{quiz.sheet_name(number)}.html").read_text(encoding="utf-8"))
    key = _visible((printed / quiz.KEYS / f"{quiz.sheet_name(number)}.html").read_text(encoding="utf-8"))
    mine = session_questions(number)
    assert mine, number
    for q in mine:
        for text in (sheet, key):
            assert q.id in text and _opening(q) in text, (q.id, _opening(q))
        for run in _key_runs(q):
            assert run not in sheet, f"{q.id}: the sheet gives its key away: {run!r}"
            assert run in key, f"{q.id}: the key lacks {run!r}"
    others = [q for q in QUESTIONS if q.session != number]
    assert not any(f" {q.id} " in f" {sheet} " for q in others), "a sheet holds another session's question"
    assert "Key." not in sheet and "Key." in key


def test_the_sheets_stand_alone_with_plain_math(printed):
    for page in printed.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        assert not re.search(r"(?:src|href)=\"(?:https?:)?//", text), f"{page.name} fetches from a network"
        assert "<script" not in text and "$" not in _visible(text) and "\\" not in text, page.name
        assert "{doc}" not in text and "{ref}" not in text and "{numref}" not in text, page.name
    assert quiz.plain_math(r"R(B) = B \cdot BW / (W + B\,c)") == "R(B) = B · BW / (W + B\u2009c)"
    assert quiz.plain_math(r"\mathbb{E}[\text{tokens}]") == "E[tokens]"
    with pytest.raises(ValueError, match="tex"):
        quiz.plain_math(r"\frac{a}{b}")
    assert quiz.chapter_name("02_decode").startswith("2. ") and quiz.chapter_name("primer")


def _built(edition: str):
    from pathlib import Path

    site = {"full": ROOT / "_build" / "html", "student": ROOT / "_build" / "student" / "_build" / "html"}[edition]
    if not (site / "searchindex.js").exists():
        pytest.skip(f"the {edition} edition is not built (make book, make student)")
    return site


@pytest.mark.parametrize("edition", ["full", "student"])
def test_the_quiz_is_in_neither_built_edition(edition):
    """Neither site lists the quiz (its search index), links it or prints it in its PDF. A quiz.html
    older than the site's search index was left by an earlier build (Sphinx deletes no page of a
    document that has left the project): ``make clean`` removes it, and CI builds afresh."""
    site = _built(edition)
    index = site / "searchindex.js"
    assert '"chapters/quiz"' not in index.read_text(encoding="utf-8"), f"the {edition} edition's index lists the quiz"
    page = site / "chapters" / "quiz.html"
    assert not page.exists() or page.stat().st_mtime < index.stat().st_mtime, f"the {edition} edition built the quiz"
    for html_page in site.rglob("*.html"):
        if html_page == page:
            continue
        assert not re.search(r'href="[^"]*\bquiz\.(?:html|ipynb)', html_page.read_text(encoding="utf-8")), \
            f"{html_page.relative_to(site)} links the quiz"
    pdf = {"full": ROOT / "_build" / "pdf" / "book.pdf", "student": ROOT / "_build" / "student" / "book.pdf"}[edition]
    if pdf.exists() and pdf.stat().st_mtime >= index.stat().st_mtime:
        from pypdf import PdfReader

        text = " ".join(" ".join((p.extract_text() or "").split()) for p in PdfReader(pdf).pages)
        for q in QUESTIONS:
            assert _opening(q) not in text, f"the {edition} PDF prints {q.id}"


# ---- the pages ------------------------------------------------------------------------------------

def test_the_quiz_is_unpublished_but_checked():
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    assert "chapters/quiz" not in toc, "_toc.yml publishes the quiz"
    assert "chapters/quiz.ipynb" in config["exclude_patterns"]
    assert "chapters/quiz" in UNPUBLISHED and QUIZ_PATH in checked_notebooks() and QUIZ_PATH not in notebooks()
    from inferlimits.book import student

    assert "chapters/quiz" in student.INSTRUCTOR_ONLY


def test_the_instructors_page_shows_the_plan_the_project_the_grade_the_calendar_and_the_quiz():
    md = markdown(ROOT / "chapters" / "instructor.ipynb")
    assert "(course-plan)=" in md and "(term-project)=" in md
    assert "<quiz>" not in md and "{doc}`quiz" not in md, "the page links the unpublished quiz"
    for section in ("## A course in sessions", "### Each session, minute by minute", "## The term project",
                    "## The grade and the calendar", "## Grading: a rubric for each kind", "## The quiz",
                    "make quiz", "make homework SEED=N", "make slides", "## The student edition"):
        assert section in md, section
    assert "running assignment" not in md
    src = (ROOT / "chapters" / "instructor.ipynb").read_text(encoding="utf-8")
    for call in ("plan_markdown()", "sessions_markdown()", "rubrics_markdown()", "quiz_questions()",
                 "projects_markdown()", "milestones_markdown()", "grading_markdown()", "calendar_markdown()"):
        assert call in src, call


def test_the_graded_homework_is_the_seeded_sheet():
    homework = markdown(ROOT / "chapters" / "instructor.ipynb").split("## Homework with numbers of its own", 1)[1]
    homework = homework.split("\n## ", 1)[0]
    assert "make homework SEED=N" in homework and "graded homework is that sheet" in homework
    assert "practice" in homework and "](" not in homework, "the paragraph links files (they are built, not published)"


# ---- the term project, the grade and the calendar ---------------------------------------------------

def test_the_term_project_is_one_of_the_books_project_exercises_with_milestones():
    projects = project_exercises()
    assert len(projects) == len(NUMBERED) and sorted(e.chapter for e in projects) == NUMBERED
    assert all(e.title.endswith(f"{PROJECT} · advanced") for e in projects)
    table = projects_markdown()
    assert all(f"`{e.label}`" in table for e in projects)
    assert [m.name for m in MILESTONES] == ["Proposal", "First result", "Final report"]
    weeks = [m.week for m in MILESTONES]
    assert weeks == sorted(weeks) and weeks[-1] == FINAL_WEEK == len(SESSIONS) + 1
    for m in MILESTONES:
        assert len(m.hand_in.split()) >= 15 and m.hand_in.endswith("."), f"{m.name}: what to hand in"
        assert 1 <= m.set_in < m.week
    assert milestones_markdown().count("\n") == len(MILESTONES) + 1


def test_every_mention_of_the_project_in_the_plan_is_a_milestone_on_the_page():
    """The plan's sessions speak of the term project only where a milestone is set or due, and name
    that milestone; nothing speaks of an assignment the page does not define."""
    texts = {i: " ".join([s.notes, s.lab] + [a for _, a in s.agenda]) for i, s in enumerate(SESSIONS, start=1)}
    for i, text in texts.items():
        assert "running assignment" not in text and "assignment" not in text, f"session {i}: {text[:80]}"
    for m in MILESTONES:
        due_in = min(m.week, len(SESSIONS))   # the final report: said in the last session
        assert f"term project's {m.name.lower()}" in texts[due_in], f"session {due_in} does not name the {m.name}"
    assert "term project" in texts[1], "the first session sets the term project"
    for i, text in texts.items():
        if "term project" in text:
            named = [m for m in MILESTONES if m.name.lower() in text.lower() or m.set_in == i]
            assert named, f"session {i} speaks of the term project but of no milestone"


def test_the_first_result_is_due_after_the_lab_whose_roof_it_may_use():
    """Session 6's notes let a student who measures use the lab's roof for the first result: so it is
    due at a later session, and the notes say which."""
    from inferlimits.book import measures_this_machine

    first = next(m for m in MILESTONES if m.name == "First result")
    labs = [i for i, s in enumerate(SESSIONS, start=1) if s.lab
            and any(measures_this_machine(chapter_path(c)) for c in re.findall(r"\{doc\}`([\w-]+)`",
                    next(a for _, a in s.agenda if a.startswith("Lab"))))]
    assert labs and all(first.week > i for i in labs), (first.week, labs)
    assert first.week == 7 and "first result is due at the next session" in SESSIONS[first.week - 2].notes
    assert "first result is due today" in SESSIONS[first.week - 1].notes
    assert "first result is due today" not in " ".join(s.notes for s in SESSIONS[:first.week - 1])


def test_a_lab_on_the_students_own_machines_is_set_up_the_session_before():
    """A lab that measures the machine it runs on needs the students' own laptops with the student
    notebooks installed: the session before hands out a set-up step (``make lab``, one notebook run),
    with a Binder-only route for a student who cannot install them, and the page shows it."""
    from inferlimits.book import measures_this_machine

    page = sessions_markdown()
    for i, s in enumerate(SESSIONS, start=1):
        lab = next((a for _, a in s.agenda if a.startswith("Lab")), "")
        if any(measures_this_machine(chapter_path(c)) for c in re.findall(r"\{doc\}`([\w-]+)`", lab)):
            before = SESSIONS[i - 2]
            assert i > 1 and before.setup, f"session {i - 1} does not set up session {i}'s lab"
            for needed in ("`make lab`", "run it all once", "Binder alone", "WSL", "{doc}`labs`"):
                assert needed in before.setup, (i - 1, needed)
            assert before.setup in page and "set-up" in before.notes and "set-up" in s.notes


def test_the_last_week_is_not_stacked():
    """The week after the last session holds the final report and the last homework: no reading, no
    chapter left unquizzed, and a lighter homework than a full week's."""
    last = calendar()[-1]
    assert last.session is None and last.reading == () and last.quiz == ()
    assert [m.name for m in last.milestones] == ["Final report"]
    assert homework_minutes(SESSIONS[-1]) <= SESSIONS[-1].homework_cap < HOMEWORK_MINUTES


def test_the_grading_scheme_adds_up_to_a_hundred():
    assert sum(g.percent for g in GRADING) == 100
    assert {g.name for g in GRADING} >= {"Homework", "Quizzes", "Term project"}
    project = next(g for g in GRADING if g.name == "Term project")
    assert project.percent == sum(m.percent for m in MILESTONES)
    assert all(g.percent > 0 and g.how.endswith(".") for g in GRADING)
    assert grading_markdown().rstrip().endswith("| All | 100% | |")


def test_everything_is_due_after_the_session_that_sets_it():
    due = deadlines()
    assert all(d.week > d.set_in for d in due), [d for d in due if d.week <= d.set_in]
    homework = {d.what: d.week for d in due if d.kind == "homework"}
    assert homework == {k: k + 1 for k in range(1, len(SESSIONS) + 1)}
    reading = [c for d in due if d.kind == "reading" for c in d.what]
    assert sorted(reading) == sorted(ASSIGNED)
    for s in SESSIONS:
        for stem in s.take_home:
            d = next(d for d in due if d.kind == "reading" and stem in d.what)
            assert d.set_in == session_of(stem) and d.week == session_of(stem) + 1


def test_the_calendar_holds_every_week_session_deadline_and_quiz():
    weeks = calendar()
    assert [w.number for w in weeks] == list(range(1, FINAL_WEEK + 1))
    assert [w.session for w in weeks] == [*range(1, len(SESSIONS) + 1), None]
    assert [m for w in weeks for m in w.milestones] == list(MILESTONES), "a milestone is not in the calendar"
    for m in MILESTONES:
        assert m in weeks[m.week - 1].milestones
    assert sorted(k for w in weeks for k in w.homework) == list(range(1, len(SESSIONS) + 1))
    for w in weeks:
        asked = {q.chapter for q in QUESTIONS if q.session == w.number}
        assert asked <= set(w.quiz), (w.number, asked, w.quiz)
        if w.session:
            assert set(w.quiz) <= set(w.reading), f"week {w.number} quizzes a chapter not yet due"
    table = calendar_markdown()
    assert table.count("\n") == FINAL_WEEK + 1
    for m in MILESTONES:
        assert f"| {m.name} |" in table
