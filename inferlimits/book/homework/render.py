"""The homework as pages: for one seed, a student sheet and an instructor's key for each numbered
chapter (HTML, and PDF printed by Chromium as the book's PDF is), and an index for the instructor.

    _build/homework/seed-N/index.html            the instructor's index: every sheet and key, what varies
    _build/homework/seed-N/student/02_decode.html (and .pdf)   what a student gets: questions only
    _build/homework/seed-N/key/02_decode.html     (and .pdf)   the same questions, the working, the answers

Every page stands alone: its CSS is inline, its math is plain text, and it names no other site (no
font, script or stylesheet from a CDN), so it prints and opens offline, and a folder of sheets can
be handed out as it is.
"""
from __future__ import annotations

import html
import time
from collections.abc import Sequence
from pathlib import Path

from inferlimits.book import ROOT
from inferlimits.book.homework import (KINDS, Variant, chapter_title, distinct_variants, seed_value, templates, variants,
                                  without_template)

OUT = ROOT / "_build" / "homework"
STUDENT, KEY = "student", "key"

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


def _exercise(i: int, v: Variant, key: bool) -> str:
    varies = f"Exercise {v.number}" if v.number else v.template
    parts = [f'<section class="exercise" id="{_e(v.template)}">',
             f"<h2>Problem {i} · {_e(v.title)}</h2>",
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
        parts += ['<div class="key">', "<h3>Working</h3>", "<ol>",
                  *(f"<li>{_e(w)}</li>" for w in v.key.working), "</ol>", "<h3>Answers</h3>",
                  f"<table><thead><tr><th>Asked</th><th>Key</th><th>Accept</th></tr></thead><tbody>{rows}</tbody></table>",
                  f'<p class="draw">Drawn: {_e(draw)}. The draw holds: {_e("; ".join(v.conditions)) or "no condition"}.</p>',
                  "</div>"]
    parts.append("</section>")
    return "\n".join(parts)


def sheet_html(stem: str, vs: Sequence[Variant], seed: int, key: bool = False) -> str:
    """The student sheet (``key`` False) or the instructor's key for chapter ``stem``."""
    title = chapter_title(stem)
    what = "Key for the instructor: the working and the answers" if key else "Homework sheet"
    head = (f"<header><h1>{_e(title)}</h1><p class=\"meta\">{what} · seed {seed} · "
            f"{len(vs)} problem{'s' if len(vs) != 1 else ''}</p>"
            + ("" if key else "<p class=\"meta\">Every number you need is in the problem. Give each answer to the "
                              "tolerance the problem states. Show your working.</p>")
            + "</header>")
    body = "\n".join([head] + [_exercise(i, v, key) for i, v in enumerate(vs, start=1)])
    return _page(f"{title} · {'key' if key else 'homework'} · seed {seed}", body)


def index_html(seed: int, by_chapter: dict[str, list[Variant]], pdf: bool) -> str:
    """The instructor's index for one seed: each chapter's sheet and key, and what the set covers."""
    rows = []
    for stem, vs in by_chapter.items():
        links = [f'<a href="{STUDENT}/{stem}.html">sheet</a>', f'<a href="{KEY}/{stem}.html">key</a>']
        if pdf:
            links += [f'<a href="{STUDENT}/{stem}.pdf">sheet (PDF)</a>', f'<a href="{KEY}/{stem}.pdf">key (PDF)</a>']
        varied = ", ".join(v.number or v.template for v in vs)
        rows.append(f"<tr><td>{_e(chapter_title(stem))}</td><td>{varied}</td><td>{' · '.join(links)}</td></tr>")
    missing = without_template()
    gap = ("<p>Every compute, derive and decide exercise of the numbered chapters has a template, except the "
           "project-sized ones (titled with the subject \u201cproject\u201d), which are set from the book as they "
           "stand.</p>" if not missing
           else "<p>Exercises without a template yet (set them from the book): "
                + ", ".join(_e(f"{e.chapter} {e.label}") for e in missing) + ".</p>")
    body = (f"<header><h1>Homework, seed {seed}</h1><p class=\"meta\">For the instructor: every numbered chapter's "
            f"{', '.join(KINDS[:-1])} and {KINDS[-1]} exercises, with numbers drawn for this seed.</p></header>\n"
            f"<p>Give each student (or group) a seed of their own: <code>make homework SEED=N</code> writes this "
            f"folder for seed N. Hand out the <code>{STUDENT}/</code> folder; keep <code>{KEY}/</code>. The same seed "
            f"gives the same numbers on every machine, and every answer in a key is computed by the book's own "
            f"arithmetic, with the tolerance the problem states.</p>\n"
            f"<table><thead><tr><th>Chapter</th><th>Exercises varied</th><th>Files</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>\n{gap}")
    return _page(f"Homework, seed {seed}", body)


def write(seed: object, out: Path = OUT, pdf: bool = True, chapters: Sequence[str] | None = None,
          pdf_chapters: Sequence[str] | None = None) -> Path:
    """Write seed ``seed``'s sheets, keys and index under ``out``/seed-N; return that folder.
    ``chapters`` limits the chapters written, ``pdf_chapters`` those printed (default: all written)."""
    seed = seed_value(seed)
    folder = Path(out) / f"seed-{seed}"
    by_chapter: dict[str, list[Variant]] = {}
    for v in variants(seed, chapters):
        by_chapter.setdefault(v.chapter, []).append(v)
    for sub in (STUDENT, KEY):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    pages = []
    for stem, vs in by_chapter.items():
        for sub, key in ((STUDENT, False), (KEY, True)):
            path = folder / sub / f"{stem}.html"
            path.write_text(sheet_html(stem, vs, seed, key), encoding="utf-8")
            pages.append(path)
    (folder / "index.html").write_text(index_html(seed, by_chapter, pdf), encoding="utf-8")
    if pdf:
        printing = [p for p in pages if pdf_chapters is None or p.stem in pdf_chapters]
        print_pdfs(folder, printing)
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

    parser = argparse.ArgumentParser(prog="python -m inferlimits.book.homework",
                                     description="Homework sheets and keys with numbers of their own for one seed.")
    parser.add_argument("--seed", default="1", help="a whole number, 0 or more (default 1)")
    parser.add_argument("--out", type=Path, default=OUT, help=f"where seed-N/ goes (default: {OUT.relative_to(ROOT)})")
    parser.add_argument("--no-pdf", action="store_true", help="write the HTML only")
    parser.add_argument("--count", action="store_true", help="also count the distinct variants over seeds 1 to 10")
    args = parser.parse_args(argv)
    try:
        seed = seed_value(args.seed)
    except ValueError as e:
        parser.error(str(e))
    start = time.perf_counter()
    folder = write(seed, args.out, pdf=not args.no_pdf)
    n = len(templates())
    print(f"wrote {folder.relative_to(ROOT) if folder.is_relative_to(ROOT) else folder}: {n} problems over "
          f"{len({t.chapter for t in templates().values()})} chapters, sheets and keys"
          f"{' (HTML and PDF)' if not args.no_pdf else ' (HTML)'}, in {time.perf_counter() - start:.1f} s")
    print(f"open {folder / 'index.html'}")
    if args.count:
        c = distinct_variants()
        print(f"{c.total} distinct variant exercises over seeds 1 to 10 ({n} templates)")
    return 0
