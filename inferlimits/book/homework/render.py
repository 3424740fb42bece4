"""The homework as pages, one sheet per session of the course plan (``inferlimits.book.course``).

For one seed, each session gets a student sheet and an instructor's key (HTML, and PDF printed by
Chromium as the book's PDF is), and the seed an index for the instructor:

    _build/homework/seed-N/index.html                  the instructor's index: every sheet and key
    _build/homework/seed-N/student/session-02.html (and .pdf)   what a student gets: questions only
    _build/homework/seed-N/key/session-02.html     (and .pdf)   the same questions, the working, the answers

A session's sheet holds the homework the plan assigns it (``course.homework_exercises``): each
assigned exercise that has a template comes with numbers of its own for the seed; the sheet names
the others (those no template varies: comparisons, explorations, errors to find, projects), which
are set as the book writes them; the instructor's key gives the book's own solution to each of
those (``course.solutions``) and the range a grader accepts for each number it grades (its
``answer`` calls, ``book_answers``). An exercise done in class is never on a sheet.
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
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from inferlimits.book import ROOT
from inferlimits.book.homework import (KINDS, Variant, chapter_title, distinct_variants, exercise_number,
                                       seed_value, sig, templates, variant, variants, without_template)
from inferlimits.checks import parse_stated

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
.book li { margin: .3rem 0; }
.key p.math { text-align: center; font-variant-numeric: tabular-nums; }
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


def page(title: str, body: str, css: str = CSS) -> str:
    """A sheet's whole HTML page, with its stylesheet inline (nothing loaded from elsewhere)."""
    return (f'<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n<title>{_e(title)}</title>\n'
            f"<style>{css}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n")


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


# ---- the book's own key, for an exercise set as the book writes it ----------------------------------

@dataclass(frozen=True)
class BookAnswer:
    """One graded number of an exercise set as the book writes it: an ``answer(claim, computed,
    stated, tolerance=...)`` call of its solution (``inferlimits.book.student.answers``), with what
    it is (``part``, the call's claim), the number as the solution states it ("about 190
    conversations") and the exercise's tolerance (a fraction; 0 for exact)."""

    part: str
    stated: str
    tolerance: float

    @property
    def number(self) -> float:
        """The stated number, in its unit."""
        return float(parse_stated(self.stated).value)

    @property
    def unit(self) -> str:
        """The known unit the solution writes after the number ("GB", "%", "ms", "×"; ``checks.UNITS``),
        or "" for a plain number; the words around it ("223 tokens") only place it in the text."""
        return parse_stated(self.stated).unit

    @property
    def shown(self) -> str:
        """The number as the solution writes it, with its unit, and "about" where it is rounded:
        "about 190", "18%", "0.60 TB/s"."""
        s = parse_stated(self.stated)
        unit = s.unit if s.unit in ("%", "×", "x", "") else f" {s.unit}"
        return f"{'about ' if s.mode == 'approximate' else ''}{s.value:,.{s.decimals}f}{unit}"

    @property
    def bounds(self) -> tuple[float, float]:
        """The lowest and the highest number a grader accepts, in the stated unit."""
        return self.number * (1 - self.tolerance), self.number * (1 + self.tolerance)

    @property
    def range_shown(self) -> str:
        if not self.tolerance:
            return "exact"
        lo, hi = self.bounds
        unit = self.unit if self.unit in ("%", "×", "x", "") else f" {self.unit}"
        return f"±{self.tolerance * 100:.10g}%: {sig(lo, 4)} to {sig(hi, 4)}{unit}"


def book_answers(e, root: Path = ROOT) -> tuple[BookAnswer, ...]:
    """The graded numbers of exercise ``e`` (a ``course.Exercise``) as its solution states them, in
    the order of its ``answer`` calls: stated number and tolerance from
    ``inferlimits.book.student.answers``, what each is from the call's claim."""
    from inferlimits.book import course  # noqa: PLC0415

    path = course.chapter_path(e.chapter, root)
    return _book_answers(path, path.stat().st_mtime_ns).get(e.label, ()) if path.exists() else ()


@lru_cache(maxsize=32)
def _book_answers(path: Path, mtime_ns: int) -> dict[str, tuple[BookAnswer, ...]]:
    """A chapter's graded numbers, by exercise, read again only when the notebook changes."""
    from collections import defaultdict  # noqa: PLC0415

    from inferlimits.book import student  # noqa: PLC0415

    found = [a for a in student.answers(path) if a.label is not None and a.stated is not None]
    claims = _claims(path, {a.cell for a in found})
    out = defaultdict(tuple)
    for a in found:
        out[a.label] += (BookAnswer(_part(claims.get((a.cell, a.stated), a.stated)), a.stated,
                                    a.tolerance if a.tolerance is not None else 0.0),)
    return dict(out)


def _part(claim: str) -> str:
    """What a graded number is, as a key names it: the check's claim without the exercise's own
    prefix ("ex5 share of BW" -> "share of BW")."""
    return re.sub(r"^ex\d+\s*[,:]?\s*", "", claim) or claim


def _claims(path: Path, cells: set[int]) -> dict[tuple[int, str], str]:
    """(cell, stated) -> claim, for the ``answer`` calls of the given code cells of notebook ``path``."""
    import ast  # noqa: PLC0415
    import json  # noqa: PLC0415

    out = {}
    notebook = json.loads(Path(path).read_text(encoding="utf-8"))["cells"]
    for i in cells:
        source = "".join(notebook[i]["source"])
        code = "\n".join(ln for ln in source.splitlines() if not ln.lstrip().startswith(("%", "!")))
        for node in ast.walk(ast.parse(code)):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "answer":
                args = [a.value if isinstance(a, ast.Constant) else None for a in node.args]
                claim = args[0] if args else None
                stated = args[2] if len(args) > 2 else next(
                    (k.value.value for k in node.keywords if k.arg == "stated" and isinstance(k.value, ast.Constant)),
                    None)
                if isinstance(claim, str) and isinstance(stated, str):
                    out.setdefault((i, stated), claim)
    return out


def book_solution(e, root: Path = ROOT) -> str | None:
    """The text of exercise ``e``'s solution, as its chapter writes it (None where it has none)."""
    from inferlimits.book import course  # noqa: PLC0415

    return course.solutions(course.chapter_path(e.chapter, root)).get(e.label)


#: LaTeX commands the solutions' math uses, as plain text (any other command keeps its name)
TEX_SIGNS = {"cdot": "·", "times": "×", "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "approx": "≈", "to": "→",
             "ne": "≠", "infty": "∞", "eta": "η", "varepsilon": "ε", "epsilon": "ε", "alpha": "α", "beta": "β",
             "gamma": "γ", "tau": "τ", "lambda": "λ", "mu": "μ", "ast": "*", "left": "", "right": "", "big": "",
             "Big": "", "bigg": "", "Bigg": "", "quad": " ", "qquad": " ", "lceil": "⌈", "rceil": "⌉",
             "lfloor": "⌊", "rfloor": "⌋", "sum": "Σ"}
_FRACTION = re.compile(r"\\[dt]?frac\{([^{}]*)\}\{([^{}]*)\}")


def plain_tex(tex: str) -> str:
    """A solution's math as plain text, as the sheets write math: ``\\frac{a}{b}`` as a/b, a command
    as its sign (``TEX_SIGNS``) or its name, ``\\text{...}`` as its words, no braces or backslashes."""
    def group(x: str) -> str:
        x = x.strip()
        return x if re.fullmatch(r"[\w.·^*]+", x) else f"({x})"

    s = tex.replace("{,}", ",").replace(r"\%", "%")
    s = re.sub(r"\\(?:text|mathrm|mathbb|mathit|operatorname|textrm|mathbf)\{([^{}]*)\}", r"\1", s)
    s = s.replace(r"\,", "\u2009").replace(r"\;", " ").replace(r"\:", " ").replace(r"\!", "").replace("\\ ", " ")
    s = re.sub(r"\\([A-Za-z]+)", lambda m: m.group(0) if m.group(1) in ("frac", "dfrac", "tfrac")
               else TEX_SIGNS.get(m.group(1), m.group(1)), s)
    while _FRACTION.search(s):
        s = _FRACTION.sub(lambda m: f"{group(m.group(1))}/{group(m.group(2))}", s)
    s = re.sub(r"([_^])\{([^{}]*)\}", lambda m: m.group(1) + (m.group(2) if len(m.group(2)) == 1 else f"({m.group(2)})"), s)
    s = s.replace("{", "").replace("}", "").replace("\\", "")
    return re.sub(r"[ \t]+", " ", s).strip()


_ROLE = re.compile(r"\{([\w:-]+)\}`([^`]*)`")


def _role(kind: str, body: str, root: Path) -> str:
    """A MyST role as the words a reader sees: a chapter as "chapter 4 (...)", an exercise by its
    number, a citation dropped."""
    from inferlimits.book import course  # noqa: PLC0415

    shown = re.match(r"^(.*?)\s*<([^>]+)>$", body, re.S)
    if shown:
        return shown.group(1)
    if kind == "doc":
        return _where(Path(body).name, root)
    if kind.startswith("cite"):
        return ""
    for p in numbered_or_not(root):
        if kind in ("ref", "numref") and f"({body})=" in course.markdown(p):
            return _where(p.stem, root)
        for e in course.exercises(p):
            if e.label == body:
                return f"Exercise {exercise_number(e, root) or body}"
    return body.replace("-", " ")


def numbered_or_not(root: Path = ROOT) -> list[Path]:
    """Every chapter's notebook, the primer's included."""
    return sorted((root / "chapters").glob("*.ipynb"))


def inline_html(text: str, root: Path, role=None, math=None) -> str:
    """One paragraph of MyST Markdown as HTML: roles as words (``role(kind, body, root)``, a
    solution's ``_role`` unless given), math as plain text (``math(tex)``, ``plain_tex`` unless
    given), code, bold, italic."""
    role, math = role or _role, math or plain_tex
    text = _ROLE.sub(lambda m: role(m.group(1), m.group(2), root), text)
    out = []
    for part in re.split(r"(`[^`]*`)", text):
        if len(part) > 1 and part.startswith("`") and part.endswith("`"):
            out.append(f"<code>{_e(part[1:-1])}</code>")
            continue
        maths: list[str] = []

        def math_(m: re.Match) -> str:
            maths.append(math(m.group(1)))
            return f"\0{len(maths) - 1}\0"

        part = _e(re.sub(r"\$([^$]+)\$", math_, part))
        part = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", part)
        part = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"<em>\1</em>", part)
        part = re.sub(r"\0(\d+)\0", lambda m: f'<span class="math">{_e(maths[int(m.group(1))])}</span>', part)
        out.append(part)
    return "".join(out)


def solution_html(text: str, root: Path = ROOT) -> str:
    """A solution's MyST Markdown as HTML, as a sheet shows it: paragraphs, lists, tables and display
    math (as plain text), its roles as words; nothing that needs a script or a font from elsewhere."""
    text = re.sub(r"\$\$(.+?)\$\$", lambda m: "\n\n\0" + plain_tex(" ".join(m.group(1).split())) + "\n\n", text,
                  flags=re.S)
    blocks = []
    for block in re.split(r"\n\s*\n", text.strip()):
        lines = [ln.rstrip() for ln in block.strip().splitlines() if ln.strip()]
        if not lines:
            continue
        if lines[0].startswith("\0"):
            blocks.append(f'<p class="math">{_e(lines[0][1:])}</p>')
        elif all(ln.lstrip().startswith("|") for ln in lines):
            rows = [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in lines
                    if not re.fullmatch(r"\|?[\s:|-]+\|?", ln.strip())]
            head, *body = rows
            blocks.append("<table><thead><tr>" + "".join(f"<th>{inline_html(c, root)}</th>" for c in head)
                          + "</tr></thead><tbody>" + "".join(
                              "<tr>" + "".join(f"<td>{inline_html(c, root)}</td>" for c in r) + "</tr>" for r in body)
                          + "</tbody></table>")
        elif all(re.match(r"\s*(?:[-*]|\d+\.)\s", ln) for ln in lines[:1]) and re.match(r"\s*(?:[-*]|\d+\.)\s", lines[0]):
            ordered = bool(re.match(r"\s*\d+\.\s", lines[0]))
            items, current = [], []
            for ln in lines:
                if re.match(r"\s*(?:[-*]|\d+\.)\s", ln):
                    if current:
                        items.append(" ".join(current))
                    current = [re.sub(r"^\s*(?:[-*]|\d+\.)\s+", "", ln)]
                else:
                    current.append(ln.strip())
            items.append(" ".join(current))
            tag = "ol" if ordered else "ul"
            blocks.append(f"<{tag}>" + "".join(f"<li>{inline_html(x, root)}</li>" for x in items) + f"</{tag}>")
        else:
            blocks.append(f"<p>{inline_html(' '.join(ln.strip() for ln in lines), root)}</p>")
    return "\n".join(blocks)


def _book_key(e, root: Path = ROOT) -> str:
    """The instructor's key of an exercise set as the book writes it: the book's solution, and each
    number it grades with the range a grader accepts."""
    text = book_solution(e, root)
    parts = ['<div class="key">', "<h3>The book's solution</h3>",
             solution_html(text, root) if text else "<p>The book gives no solution for it.</p>"]
    answers = book_answers(e, root)
    if answers:
        rows = "".join(f"<tr><td>{_e(a.part)}</td><td class=\"value\">{_e(a.shown)}</td><td>{_e(a.range_shown)}</td></tr>"
                       for a in answers)
        parts += ["<h3>Answers</h3>",
                  "<table><thead><tr><th>Asked</th><th>Key</th><th>Accept (the range a grader takes)</th></tr></thead>"
                  f"<tbody>{rows}</tbody></table>"]
    parts.append("</div>")
    return "\n".join(parts)


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


def _from_book(exs: Sequence, root: Path = ROOT, sheet: SessionSheet | None = None, key: bool = False) -> str:
    """The assigned exercises no template varies, set as the book writes them; in the key, each with
    the book's own solution and the numbers it grades (``_book_key``)."""
    if not exs:
        return ""
    items = "".join(f'<li id="book-{_e(e.label)}">Exercise {_e(exercise_number(e, root) or e.label)} ({_e(e.title)}), in '
                    f"{_e(_where(e.chapter, root))}"
                    + (f", {_time(sheet.estimate(e.label))}" if sheet and sheet.estimate(e.label) else "")
                    + (_book_key(e, root) if key else "") + "</li>"
                    for e in exs)
    return ('<section class="book" id="from-the-book"><h2>Also set: exercises from the book as it stands</h2>'
            "<p>These assigned exercises have no variant with numbers of their own. Do them as the book "
            "sets them.</p>"
            + ("<p>The key gives the book's own solution to each, and the range a grader accepts for each number "
               "it grades.</p>" if key else "")
            + f"<ul>{items}</ul></section>")


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
                     + [_from_book(sheet.from_book, root, sheet, key)])
    return page(f"{title} · {'key' if key else 'homework'} · {who}", body)


def practice_html(stem: str, vs: Sequence[Variant], seed: int, key: bool = False) -> str:
    """A numbered chapter's practice sheet (``key`` False) or its key: every template of the chapter,
    whether the plan does its exercise in class, assigns it or leaves it optional."""
    title = chapter_title(stem)
    what = "Practice key: the working and the answers" if key else "Practice sheet"
    head = (f"<header><h1>{_e(title)}</h1><p class=\"meta\">{what} · seed {seed} · "
            f"{len(vs)} problem{'s' if len(vs) != 1 else ''}</p>"
            + ("" if key else f"<p class=\"meta\">{HOW}</p>") + "</header>")
    body = "\n".join([head] + [_exercise(i, v, key) for i, v in enumerate(vs, start=1)])
    return page(f"{title} · {'practice key' if key else 'practice'} · seed {seed}", body)


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
            f"writes them, and the key gives the book's own solution to each, with the range a grader accepts for "
            f"each number it grades. Exercises done in class are never on a sheet. Hand out the <code>{STUDENT}/</code> "
            f"folder; keep <code>{KEY}/</code>. The same seed gives the same numbers on every machine. Every answer "
            f"in a key is computed by the book's own arithmetic, with the working and the range a grader accepts. "
            f"For a class, <code>make homework ROSTER=roster.csv SALT=...</code> gives each student a seed of "
            f"their own.</p>\n"
            f"<table><thead><tr><th>Session</th><th>Problems (variants of exercises)</th><th>Set from the book</th>"
            f"<th>Files</th></tr></thead><tbody>{''.join(rows)}</tbody></table>\n{rest}\n{gap}")
    return page(f"Homework, seed {seed}", body)


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
