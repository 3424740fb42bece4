"""The quiz on paper: ``make quiz``.

The quiz's questions and keys are a notebook, ``chapters/quiz.ipynb``, checked as the chapters are
(the hidden cell under each question computes its key from the package) but published in neither
edition of the book, since a page would give its keys away. This module prints it, one sheet per
session of the course plan (``course.SESSIONS``), into ``_build/quiz/``:

    _build/quiz/index.html                           the instructor's index: every sheet and key
    _build/quiz/sheets/session-01.html (and .pdf)    what students get: the questions, no key
    _build/quiz/keys/session-01.html   (and .pdf)    the same questions, each with its key
    _build/quiz/sheets/spare.html, keys/spare.html   the spare questions, in no session's quiz

Every page stands alone, as the homework's sheets do: its CSS is inline, its math is plain text,
and it names no other site, so it prints and opens offline. The PDFs are printed by Chromium with
the homework's printer (``homework.render.print_pdfs``), which prints as the book's PDF is printed.

    python -m inferlimits.book.quiz            # every sheet and key, HTML and PDF
    python -m inferlimits.book.quiz --no-pdf   # the HTML only
"""
from __future__ import annotations

import argparse
import html
import re
import time
from collections.abc import Sequence
from pathlib import Path

from inferlimits.book import ROOT
from inferlimits.book import course
from inferlimits.book.homework.render import inline_html, page

OUT = ROOT / "_build" / "quiz"
SHEETS, KEYS = "sheets", "keys"
#: the file name of the sheet of spare questions, those in no session's quiz
SPARE_NAME = "spare"

CSS = """
:root { --ink: #1d1d1f; --muted: #5f6368; --rule: #d0d4da; --accent: #2b5797; --key: #f3f7ee; }
* { box-sizing: border-box; }
body { font: 11pt/1.5 -apple-system, "Segoe UI", "DejaVu Sans", Helvetica, Arial, sans-serif; color: var(--ink);
       max-width: 46rem; margin: 2rem auto; padding: 0 1rem; }
h1 { font-size: 1.45rem; margin: 0 0 .25rem; }
h2 { font-size: 1.05rem; margin: 1.4rem 0 .3rem; color: var(--accent); }
p { margin: .35rem 0; }
ul { margin: .3rem 0 .3rem 1.2rem; padding: 0; list-style: none; }
li { margin: .15rem 0; }
.meta, .from { color: var(--muted); font-size: .9rem; }
.name { margin: .8rem 0 0; }
.question { border-top: 1px solid var(--rule); padding-top: .2rem; break-inside: avoid-page; }
.tolerance, .math { font-style: italic; }
.key { background: var(--key); border-left: 3px solid #7aa65a; padding: .4rem .8rem; margin-top: .5rem; }
.space { height: 6rem; }
.space.choice { height: 1.5rem; }
table { border-collapse: collapse; width: 100%; font-size: .92rem; margin: .6rem 0; }
th, td { text-align: left; border-bottom: 1px solid var(--rule); padding: .25rem .4rem; vertical-align: top; }
@media print { body { margin: 0; max-width: none; } a { color: inherit; text-decoration: none; } }
"""


# ---- the quiz's Markdown, as a sheet's HTML ---------------------------------------------------------

def chapter_name(stem: str, root: Path = ROOT) -> str:
    """A chapter as a sheet names it: its number and its title ("2. Decode"), or the primer's title."""
    m = re.search(r"^# (.+)$", course.markdown(course.chapter_path(stem, root)), re.M)
    title = m.group(1).strip() if m else stem
    return f"{int(stem[:2])}. {title}" if stem[:2].isdigit() else title


#: LaTeX a question's math uses, as plain text
_LATEX = [(r"\cdot", "·"), (r"\times", "×"), (r"\,", "\u2009"), (r"\;", " "), (r"\le", "≤"), (r"\ge", "≥"),
          (r"\approx", "≈")]


def plain_math(tex: str) -> str:
    """Inline math as plain text: its commands as their signs, ``\\text{...}`` and ``\\mathbb{...}``
    as their letters. A command it does not know is an error, so that no backslash reaches a sheet."""
    out = re.sub(r"\\(?:text|mathrm|mathbb)\{([^{}]*)\}", r"\1", tex)
    for command, sign in _LATEX:
        out = out.replace(command, sign)
    if "\\" in out:
        raise ValueError(f"tex: no plain text for {tex!r}; add its command to quiz._LATEX")
    return out


def _role(name: str, body: str, root: Path) -> str:
    """A role as a quiz sheet writes it: the text it shows, a chapter by its number and title."""
    shown = re.match(r"(.*?)\s*<([^>]+)>$", body)
    if shown:
        return shown.group(1)
    return chapter_name(body, root) if name == "doc" else body


def _inline(text: str, root: Path) -> str:
    """One line of the quiz's Markdown as HTML (``render.inline_html``, with the quiz's roles and
    its strict ``plain_math``)."""
    return inline_html(text, root, role=_role, math=plain_math)


def to_html(markdown: str, root: Path = ROOT) -> str:
    """The quiz's Markdown (paragraphs, lists of options, a tolerance line) as HTML."""
    blocks = []
    for block in re.split(r"\n\s*\n", markdown.strip()):
        lines = block.splitlines()
        if all(line.startswith("- ") for line in lines):
            items = "".join(f"<li>{_inline(line[2:], root)}</li>" for line in lines)
            blocks.append(f"<ul>{items}</ul>")
        elif course.TOLERANCE.fullmatch(block.strip()):
            blocks.append(f'<p class="tolerance">{_inline(block.strip(), root)}</p>')
        else:
            blocks.append(f"<p>{_inline(' '.join(line.strip() for line in lines), root)}</p>")
    return "\n".join(blocks)


# ---- the sheets -------------------------------------------------------------------------------------

def sheet_name(number: int | None) -> str:
    """The file name (no suffix) of session ``number``'s sheet and key; ``None``: the spares."""
    return SPARE_NAME if number is None else f"session-{number:02d}"


def _title(number: int | None, sessions: Sequence[course.Session]) -> str:
    if number is None:
        return "Quiz · spare questions"
    return f"Quiz · session {number}: {sessions[number - 1].topic}"


def _question(i: int, q: course.Question, key: bool, root: Path) -> str:
    parts = [f'<section class="question" id="{html.escape(q.id)}">',
             f"<h2>{i} · {html.escape(q.id)}</h2>",
             f'<p class="from">{html.escape(chapter_name(q.chapter, root))} · {html.escape(q.kind)}</p>',
             to_html(q.text, root)]
    if key:
        parts.append(f'<div class="key">{to_html(q.key, root).replace("<p>", "<p><strong>Key.</strong> ", 1)}</div>')
    else:
        parts.append(f'<div class="space{" choice" if q.kind == "multiple choice" else ""}"></div>')
    parts.append("</section>")
    return "\n".join(parts)


def sheet_html(number: int | None, key: bool = False, questions: Sequence[course.Question] | None = None,
               sessions: Sequence[course.Session] = course.SESSIONS, root: Path = ROOT) -> str:
    """Session ``number``'s quiz (``None``: the spare questions) as a page: the questions only
    (``key`` False), for students, or each with its key, for the instructor."""
    questions = list(course.session_questions(number) if questions is None else questions)
    title = _title(number, sessions)
    count = f"{len(questions)} question{'s' if len(questions) != 1 else ''}"
    if key:
        meta = f"Key for the instructor · {count}. Each key is computed by the book's package."
        head = f'<header><h1>{html.escape(title)}</h1><p class="meta">{html.escape(meta)}</p></header>'
    else:
        meta = (f"{count}. Give a number to the tolerance its question states; "
                "for a multiple-choice question, give one letter.")
        head = (f'<header><h1>{html.escape(title)}</h1><p class="meta">{html.escape(meta)}</p>'
                '<p class="name">Name: ______________________________</p></header>')
    body = "\n".join([head] + [_question(i, q, key, root) for i, q in enumerate(questions, start=1)])
    return page(f"{title} · {'key' if key else 'questions'}", body, CSS)


def index_html(by_sheet: dict[int | None, list[course.Question]], pdf: bool,
               sessions: Sequence[course.Session] = course.SESSIONS, root: Path = ROOT) -> str:
    """The instructor's index: each session's sheet and key, the chapters it asks about."""
    rows = []
    for number, questions in by_sheet.items():
        name = sheet_name(number)
        links = [f'<a href="{SHEETS}/{name}.html">sheet</a>', f'<a href="{KEYS}/{name}.html">key</a>']
        if pdf:
            links += [f'<a href="{SHEETS}/{name}.pdf">sheet (PDF)</a>', f'<a href="{KEYS}/{name}.pdf">key (PDF)</a>']
        chapters = ", ".join(dict.fromkeys(chapter_name(q.chapter, root) for q in questions))
        what = "Spare: in no session's quiz" if number is None else f"{number}. {sessions[number - 1].topic}"
        rows.append(f"<tr><td>{html.escape(what)}</td><td>{len(questions)}</td><td>{html.escape(chapters)}</td>"
                    f"<td>{' · '.join(links)}</td></tr>")
    body = ("<header><h1>Quiz: sheets and keys</h1><p class=\"meta\">For the instructor. Hand out "
            f"<code>{SHEETS}/</code>; keep <code>{KEYS}/</code>.</p></header>\n"
            "<p>Each session closes with a short quiz on its chapters; a take-home chapter is quizzed in the "
            "session after the one that hands it out. The spare questions are in no session's quiz: use them "
            "for a final test or for review. Every key is computed by the book's own arithmetic, and the "
            "tests check it.</p>\n"
            "<table><thead><tr><th>Session</th><th>Questions</th><th>Chapters</th><th>Files</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>")
    return page("Quiz: sheets and keys", body, CSS)


def sheets(sessions: Sequence[course.Session] = course.SESSIONS,
           path: Path = course.QUIZ_PATH) -> dict[int | None, list[course.Question]]:
    """Each session's questions, by its number, then the spares (``None``), if there are any."""
    questions = course.quiz_questions(path)
    out: dict[int | None, list[course.Question]] = {
        i: [q for q in questions if q.session == i] for i in range(1, len(sessions) + 1)}
    spares = [q for q in questions if q.session is None]
    if spares:
        out[None] = spares
    return out


def write(out: Path = OUT, pdf: bool = True, sessions: Sequence[course.Session] = course.SESSIONS,
          path: Path = course.QUIZ_PATH, root: Path = ROOT) -> list[Path]:
    """Write every sheet and key (and their PDFs, unless ``pdf`` is False) and the index under
    ``out``; return the pages written."""
    by_sheet = sheets(sessions, path)
    for sub in (SHEETS, KEYS):
        (Path(out) / sub).mkdir(parents=True, exist_ok=True)
    pages = []
    for number, questions in by_sheet.items():
        for sub, key in ((SHEETS, False), (KEYS, True)):
            page = Path(out) / sub / f"{sheet_name(number)}.html"
            page.write_text(sheet_html(number, key, questions, sessions, root), encoding="utf-8")
            pages.append(page)
    index = Path(out) / "index.html"
    index.write_text(index_html(by_sheet, pdf, sessions, root), encoding="utf-8")
    if pdf:
        from inferlimits.book.homework.render import print_pdfs

        print_pdfs(Path(out), pages)
    return [index, *pages]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m inferlimits.book.quiz",
                                     description="Each session's quiz: a sheet to hand out and a key, HTML and PDF.")
    parser.add_argument("--out", type=Path, default=OUT, help=f"where the sheets go (default: {OUT.relative_to(ROOT)})")
    parser.add_argument("--no-pdf", action="store_true", help="write the HTML only")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    written = write(args.out, pdf=not args.no_pdf)
    shown = args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out
    print(f"wrote {shown}: {len(written) - 1} sheets and keys{'' if args.no_pdf else ' (HTML and PDF)'}, "
          f"in {time.perf_counter() - start:.1f} s")
    print(f"open {args.out / 'index.html'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
