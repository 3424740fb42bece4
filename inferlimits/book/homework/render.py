"""The homework as pages, one sheet per session of the course plan (``inferlimits.book.course``).

For one seed, each session gets a student sheet and an instructor's key (HTML, and PDF printed by
Chromium as the book's PDF is), and the seed an index for the instructor:

    _build/homework/seed-N/index.html                  the instructor's index: every sheet and key
    _build/homework/seed-N/student/session-02.html (and .pdf)   what a student gets: questions only
    _build/homework/seed-N/key/session-02.html     (and .pdf)   the same questions, the working, the answers

A session's sheet holds the homework the plan assigns it (``course.homework_exercises``): each
assigned exercise that has a template comes with numbers of its own for the seed; the sheet names
the others (those no template varies: comparisons, explorations, errors to find, projects), which
are set as the book writes them. An exercise done in class is never on a sheet.
``--practice`` also writes, for each numbered chapter, a practice sheet and key with every one of
its templates (in-class and optional exercises included), under ``seed-N/practice/``.

A class roster (``make homework ROSTER=roster.csv SALT=...``, ``inferlimits.book.homework.roster``)
writes each student's sheets, with a seed drawn from their id and the course's salt.

Every page stands alone: its CSS is inline, its math is plain text, and it names no other site (no
font, script or stylesheet from a CDN), so it prints and opens offline, and a folder of sheets can
be handed out as it is.
"""
from __future__ import annotations

import html
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from inferlimits.book import ROOT
from inferlimits.book.homework import (KINDS, Variant, chapter_title, distinct_variants, exercise_number, seed_value,
                                       templates, variant, variants, without_template)

OUT = ROOT / "_build" / "homework"
STUDENT, KEY, PRACTICE = "student", "key", "practice"

CSS = """
:root { --ink: #1d1d1f; --muted: #5f6368; --rule: #d0d4da; --accent: #2b5797; --key: #f3f7ee; }
* { box-sizing: border-box; }
body { font: 11pt/1.5 -apple-system, "Segoe UI", "DejaVu Sans", Helvetica, Arial, sans-serif; color: var(--ink);
       max-width: 46rem; margin: 2rem auto; padding: 0 1rem; }
h1 { font-size: 1.5rem; margin: 0 0 .25rem; }
h2 { font-size: 1.1rem; margin: 1.6rem 0 .4rem; color: var(--accent); }
h3 { font-size: .95rem; margin: .9rem 0 .3rem; }
p { margin: .35rem 0; }
.meta, .varies { color: var(--muted); font-size: .9rem; }
.exercise { border-top: 1px solid var(--rule); padding-top: .3rem; break-inside: avoid-page; }
.tolerance { font-style: italic; }
.key { background: var(--key); border-left: 3px solid #7aa65a; padding: .4rem .8rem; margin-top: .6rem; }
.key ol { margin: .2rem 0 .2rem 1.2rem; padding: 0; }
.key li.calc { font-variant-numeric: tabular-nums; }
.book { border-top: 1px solid var(--rule); margin-top: 1.2rem; }
.book ul { margin: .2rem 0 .2rem 1.2rem; padding: 0; }
table { border-collapse: collapse; width: 100%; font-size: .92rem; margin: .3rem 0; }
th, td { text-align: left; border-bottom: 1px solid var(--rule); padding: .2rem .4rem; vertical-align: top; }
th { font-weight: 600; }
td.value { white-space: nowrap; font-weight: 600; }
.draw { color: var(--muted); font-size: .85rem; }
.space { height: 7rem; }
@media print { body { margin: 0; max-width: none; } .space { height: 9rem; } a { color: inherit; text-decoration: none; } }
"""


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def _page(title: str, body: str) -> str:
    return (f'<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n<title>{_e(title)}</title>\n'
            f"<style>{CSS}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n")


# ---- what a session's sheet holds ------------------------------------------------------------------

@dataclass(frozen=True)
class SessionSheet:
    """One session's homework for one seed: the plan's assigned exercises (``course.homework_exercises``),
    as variants where a template varies them (``variants``), and the rest, set as the book writes
    them (``from_book``)."""

    number: int            # the session's number, from 1
    topic: str
    seed: int
    variants: tuple[Variant, ...]
    from_book: tuple        # course.Exercise, in the plan's order
    minutes: tuple[tuple[str, int], ...] = ()   # the plan's estimate for each assigned exercise, by label

    @property
    def total_minutes(self) -> int | None:
        """The plan's estimate for the whole sheet (None where the plan gives none)."""
        return sum(m for _, m in self.minutes) if self.minutes else None

    def estimate(self, label: str) -> int | None:
        return dict(self.minutes).get(label)

    @property
    def name(self) -> str:
        """The file name of its sheet and key, without the suffix: session-02."""
        return session_file(self.number)


def session_file(number: int) -> str:
    return f"session-{number:02d}"


def session_sheet(number: int, seed: object, root: Path = ROOT) -> SessionSheet:
    """Session ``number``'s (from 1) homework for ``seed``: each exercise the plan assigns it
    (``course.homework_exercises``) that a template varies comes as its variant for the seed; the
    others are listed, to be set from the book."""
    from inferlimits.book import course  # noqa: PLC0415

    if not 1 <= number <= len(course.SESSIONS):
        raise ValueError(f"number: sessions are 1 to {len(course.SESSIONS)}; got {number!r}")
    session = course.SESSIONS[number - 1]
    ts, seed = templates(), seed_value(seed)
    varied, book, minutes = [], [], []
    estimate = getattr(course, "minutes", None)   # the plan's estimated minutes for an exercise
    for e in course.homework_exercises(session, root):
        t = ts.get(e.label)
        if t is not None and t.chapter == e.chapter:
            varied.append(variant(t, seed))
        else:
            book.append(e)
        if estimate is not None:
            minutes.append((e.label, estimate(e)))
    return SessionSheet(number, session.topic, seed, tuple(varied), tuple(book), tuple(minutes))


def session_sheets(seed: object, numbers: Sequence[int] | None = None, root: Path = ROOT) -> list[SessionSheet]:
    """Every session's sheet for ``seed`` (those ``numbers`` only, where given), in the plan's order."""
    from inferlimits.book import course  # noqa: PLC0415

    return [session_sheet(n, seed, root) for n in (numbers or range(1, len(course.SESSIONS) + 1))]


# ---- the pages -------------------------------------------------------------------------------------

def _time(minutes: int | None) -> str:
    """An estimate as a sheet writes it: "about 45 min", "about 2 h 15 min"."""
    if minutes is None:
        return ""
    h, m = divmod(minutes, 60)
    return "about " + " ".join(x for x in (f"{h} h" if h else "", f"{m} min" if m or not h else "") if x)


def _exercise(i: int, v: Variant, key: bool, minutes: int | None = None) -> str:
    varies = f"Exercise {v.number}" if v.number else v.template
    parts = [f'<section class="exercise" id="{_e(v.template)}">',
             f"<h2>Problem {i} · {_e(v.title)}{' · ' + _time(minutes) if minutes else ''}</h2>",
             f'<p class="varies">A variant of {_e(varies)} of the book, with numbers of its own.</p>']
    *paragraphs, tolerance = v.question
    parts += [f"<p>{_e(q)}</p>" for q in paragraphs]
    parts.append(f'<p class="tolerance">{_e(tolerance)}</p>')
    if not key:
        parts.append('<div class="space"></div>')
    else:
        rows = "".join(f"<tr><td>{_e(a.name)}</td><td class=\"value\">{_e(a.shown)}</td><td>{_e(a.range_shown)}</td></tr>"
                       for a in v.key.answers)
        draw = "; ".join(f"{k} = {val}" for k, val in v.params.items())
        steps = (f'<li class="calc">{_e(w)}</li>' if hasattr(w, "put_in") else f"<li>{_e(w)}</li>"
                 for w in v.key.working)
        parts += ['<div class="key">', "<h3>Working</h3>", "<ol>", *steps, "</ol>", "<h3>Answers</h3>",
                  "<table><thead><tr><th>Asked</th><th>Key</th><th>Accept (the range a grader takes)</th></tr></thead>"
                  f"<tbody>{rows}</tbody></table>",
                  f'<p class="draw">Drawn: {_e(draw)}. The draw holds: {_e("; ".join(v.conditions)) or "no condition"}.</p>',
                  "</div>"]
    parts.append("</section>")
    return "\n".join(parts)


def _from_book(exs: Sequence, root: Path = ROOT, sheet: SessionSheet | None = None) -> str:
    """The assigned exercises no template varies, set as the book writes them."""
    if not exs:
        return ""
    items = "".join(f"<li>Exercise {_e(exercise_number(e, root) or e.label)} ({_e(e.title)}), in "
                    f"{_e(_where(e.chapter, root))}"
                    + (f", {_time(sheet.estimate(e.label))}" if sheet and sheet.estimate(e.label) else "") + "</li>"
                    for e in exs)
    return ('<section class="book" id="from-the-book"><h2>Also set: exercises from the book as it stands</h2>'
            "<p>These assigned exercises have no variant with numbers of their own. Do them as the book "
            "sets them.</p>"
            f"<ul>{items}</ul></section>")


def _where(stem: str, root: Path = ROOT) -> str:
    """A chapter as a sheet names it: "chapter 2 (Decode: ...)", or "the primer"."""
    if not stem[:2].isdigit():
        return f"the {stem.replace('_', ' ')}"
    number, _, title = chapter_title(stem, root).partition(". ")
    return f"chapter {number} ({title})"


HOW = ("Every number you need is in the problem. Give each answer to the tolerance the problem states. "
       "Show your working.")


def sheet_html(sheet: SessionSheet, key: bool = False, who: str | None = None, root: Path = ROOT) -> str:
    """Session ``sheet``'s student sheet (``key`` False) or the instructor's key. ``who`` names whose
    sheet it is ("seed 3", or a student's id and name); a student's sheet from a roster names the
    student, not the seed (the seed would let anyone with the package compute the key)."""
    who = who or f"seed {sheet.seed}"
    title = f"Session {sheet.number} · {sheet.topic}"
    what = "Key for the instructor: the working and the answers" if key else "Homework sheet"
    n = len(sheet.variants)
    total = f" · {_time(sheet.total_minutes)} in all, by the course plan's estimate" if sheet.total_minutes else ""
    head = (f"<header><h1>{_e(title)}</h1><p class=\"meta\">{what} · {_e(who)} · "
            f"{n} problem{'s' if n != 1 else ''}"
            + (f", and {len(sheet.from_book)} from the book" if sheet.from_book else "") + f"{total}</p>"
            + ("" if key else f"<p class=\"meta\">{HOW}</p>") + "</header>")
    body = "\n".join([head] + [_exercise(i, v, key, sheet.estimate(v.template))
                                for i, v in enumerate(sheet.variants, start=1)]
                     + [_from_book(sheet.from_book, root, sheet)])
    return _page(f"{title} · {'key' if key else 'homework'} · {who}", body)


def practice_html(stem: str, vs: Sequence[Variant], seed: int, key: bool = False) -> str:
    """A numbered chapter's practice sheet (``key`` False) or its key: every template of the chapter,
    whether the plan does its exercise in class, assigns it or leaves it optional."""
    title = chapter_title(stem)
    what = "Practice key: the working and the answers" if key else "Practice sheet"
    head = (f"<header><h1>{_e(title)}</h1><p class=\"meta\">{what} · seed {seed} · "
            f"{len(vs)} problem{'s' if len(vs) != 1 else ''}</p>"
            + ("" if key else f"<p class=\"meta\">{HOW}</p>") + "</header>")
    body = "\n".join([head] + [_exercise(i, v, key) for i, v in enumerate(vs, start=1)])
    return _page(f"{title} · {'practice key' if key else 'practice'} · seed {seed}", body)


def _links(folder: str, name: str, pdf: bool) -> list[str]:
    out = [f'<a href="{folder}/{name}.html">{"sheet" if folder.endswith(STUDENT) else "key"}</a>']
    if pdf:
        out.append(f'<a href="{folder}/{name}.pdf">(PDF)</a>')
    return out


def index_html(seed: int, sheets: Sequence[SessionSheet], pdf: bool, practice: Sequence[str] = ()) -> str:
    """The instructor's index for one seed: each session's sheet and key, what each holds, and what
    no sheet holds."""
    rows = []
    for sh in sheets:
        links = _links(STUDENT, sh.name, pdf) + _links(KEY, sh.name, pdf)
        varied = ", ".join(v.number or v.template for v in sh.variants) or "none"
        book = ", ".join(exercise_number(e) or e.label for e in sh.from_book) or "none"
        rows.append(f"<tr><td>{sh.number}. {_e(sh.topic)}</td><td>{_e(varied)}</td><td>{_e(book)}</td>"
                    f"<td>{' · '.join(links)}</td></tr>")
    on_sheets = {v.template for sh in sheets for v in sh.variants}
    elsewhere = [t for tid, t in templates().items() if tid not in on_sheets]
    rest = ("" if not elsewhere else
            "<p>The other templates vary exercises that the plan does in class or leaves as optional practice: "
            + ", ".join(_e(v.number or v.template) for v in (variant(t, seed) for t in elsewhere))
            + ". <code>python -m inferlimits.book.homework --seed N --practice</code> writes a practice sheet and key "
              f"for each numbered chapter with all of its templates, under <code>{PRACTICE}/</code>.</p>")
    if practice:
        rest += ("<p>Practice sheets: " + ", ".join(
            f'{_e(chapter_title(s))} (<a href="{PRACTICE}/{STUDENT}/{s}.html">sheet</a> · '
            f'<a href="{PRACTICE}/{KEY}/{s}.html">key</a>)' for s in practice) + ".</p>")
    missing = without_template()
    gap = ("<p>Every compute, derive and decide exercise of the numbered chapters has a template, except the "
           "project-sized ones (titled with the subject \u201cproject\u201d), which are set from the book as they "
           "stand.</p>" if not missing
           else "<p>Exercises without a template yet (set them from the book): "
                + ", ".join(_e(f"{e.chapter} {e.label}") for e in missing) + ".</p>")
    body = (f"<header><h1>Homework, seed {seed}</h1><p class=\"meta\">For the instructor: each session's assigned "
            f"homework, its {', '.join(KINDS[:-1])} and {KINDS[-1]} exercises with numbers drawn for this seed."
            f"</p></header>\n"
            f"<p>Each sheet holds the homework the course plan assigns its session. An exercise that a template "
            f"varies comes with numbers of its own; the sheet lists the other assigned exercises, set as the book "
            f"writes them. Exercises done in class are never on a sheet. Hand out the <code>{STUDENT}/</code> "
            f"folder; keep <code>{KEY}/</code>. The same seed gives the same numbers on every machine. Every answer "
            f"in a key is computed by the book's own arithmetic, with the working and the range a grader accepts. "
            f"For a class, <code>make homework ROSTER=roster.csv SALT=...</code> gives each student a seed of "
            f"their own.</p>\n"
            f"<table><thead><tr><th>Session</th><th>Problems (variants of exercises)</th><th>Set from the book</th>"
            f"<th>Files</th></tr></thead><tbody>{''.join(rows)}</tbody></table>\n{rest}\n{gap}")
    return _page(f"Homework, seed {seed}", body)


def write(seed: object, out: Path = OUT, pdf: bool = True, sessions: Sequence[int] | None = None,
          pdf_sessions: Sequence[int] | None = None, practice: bool = False) -> Path:
    """Write seed ``seed``'s session sheets, keys and index under ``out``/seed-N; return that
    folder. ``sessions`` limits the sessions written (numbers from 1), ``pdf_sessions`` those
    printed (default: all written); ``practice`` adds each numbered chapter's practice sheet and key."""
    seed = seed_value(seed)
    folder = Path(out) / f"seed-{seed}"
    sheets = session_sheets(seed, sessions)
    for sub in (STUDENT, KEY):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    pages = []
    for sh in sheets:
        for sub, key in ((STUDENT, False), (KEY, True)):
            path = folder / sub / f"{sh.name}.html"
            path.write_text(sheet_html(sh, key), encoding="utf-8")
            if pdf_sessions is None or sh.number in pdf_sessions:
                pages.append(path)
    stems = []
    if practice:
        by_chapter: dict[str, list[Variant]] = {}
        for v in variants(seed):
            by_chapter.setdefault(v.chapter, []).append(v)
        stems = list(by_chapter)
        for sub, key in ((STUDENT, False), (KEY, True)):
            (folder / PRACTICE / sub).mkdir(parents=True, exist_ok=True)
            for stem, vs in by_chapter.items():
                (folder / PRACTICE / sub / f"{stem}.html").write_text(practice_html(stem, vs, seed, key), encoding="utf-8")
    (folder / "index.html").write_text(index_html(seed, sheets, pdf, stems), encoding="utf-8")
    if pdf and pages:
        print_pdfs(folder, pages)
    return folder


def print_pdfs(folder: Path, pages: Sequence[Path]) -> list[Path]:
    """Print each page (under ``folder``) to a PDF beside it, with headless Chromium (Debian's,
    driven by playwright, as ``inferlimits.book.pdf`` prints the book): A4, the book's margins and
    footer (the page's title and its page number), nothing fetched from outside."""
    from playwright.sync_api import sync_playwright

    from inferlimits.book.pdf import page_style, prepare_for_print
    from inferlimits.book.serve import CHROMIUM, CHROMIUM_FLAGS, serve

    out = []
    with serve(folder) as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS, headless=True)
        tab = browser.new_page()
        tab.route("**/*", lambda r: r.continue_() if r.request.url.startswith(base) else r.abort())
        prepare_for_print(tab)
        for page in pages:
            tab.goto(f"{base}/{page.relative_to(folder).as_posix()}", wait_until="load")
            tab.add_style_tag(content=page_style(1, tab.title()))
            target = page.with_suffix(".pdf")
            target.write_bytes(tab.pdf(prefer_css_page_size=True, print_background=True, tagged=True))
            out.append(target)
        browser.close()
    return out


def main(argv: list[str] | None = None) -> int:
    import argparse

    from inferlimits.book.homework import roster

    parser = argparse.ArgumentParser(
        prog="python -m inferlimits.book.homework",
        description="Each session's homework sheet and key, with numbers of their own for one seed, or for "
                    "each student of a class roster.")
    parser.add_argument("--seed", default="1", help="a whole number, 0 or more (default 1)")
    parser.add_argument("--roster", type=Path, default=None,
                        help="a CSV with a header 'student_id' (and optionally 'name'): each student's sheets, "
                             "with a seed from their id and --salt, and one CSV of all keys")
    parser.add_argument("--salt", default="", help="the course's salt, a word kept from the students (with --roster)")
    parser.add_argument("--out", type=Path, default=OUT, help=f"where the sheets go (default: {OUT.relative_to(ROOT)})")
    parser.add_argument("--no-pdf", action="store_true", help="write the HTML only")
    parser.add_argument("--practice", action="store_true",
                        help="also write each numbered chapter's practice sheet and key, with all its templates")
    parser.add_argument("--count", action="store_true", help="also count the distinct variants over seeds 1 to 10")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    if args.roster is not None:
        try:
            students = roster.read_roster(args.roster)
            sheets, keys = roster.write_roster(students, args.salt, args.out, pdf=not args.no_pdf)
        except ValueError as e:
            parser.error(str(e))
        print(f"wrote {len(students)} students' sheets under {_shown(sheets)}/<student_id>/ and the instructor's keys "
              f"under {_shown(keys)} (all answers in {_shown(keys / roster.KEYS_CSV)}), in "
              f"{time.perf_counter() - start:.1f} s")
        print(f"open {keys / 'index.html'}")
        return 0
    try:
        seed = seed_value(args.seed)
    except ValueError as e:
        parser.error(str(e))
    folder = write(seed, args.out, pdf=not args.no_pdf, practice=args.practice)
    sheets = session_sheets(seed)
    n = sum(len(sh.variants) for sh in sheets)
    print(f"wrote {_shown(folder)}: {len(sheets)} sessions' sheets and keys with {n} problems"
          f"{' (HTML and PDF)' if not args.no_pdf else ' (HTML)'}"
          f"{', and practice sheets for every chapter' if args.practice else ''}, in "
          f"{time.perf_counter() - start:.1f} s")
    print(f"open {folder / 'index.html'}")
    if args.count:
        c = distinct_variants()
        print(f"{c.total} distinct variant exercises over seeds 1 to 10 ({len(templates())} templates)")
    return 0


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
