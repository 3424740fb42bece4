"""The decks (``make slides``, ``inferlimits.book.slides``): one 16:9 deck per session of the course,
with its title, figures, equations, a worked example and its in-class exercises, and no solution;
nothing loaded from a network; a PDF of 16:9 pages. The decks are built once into a temporary
folder (HTML only, then one deck's PDF)."""
from __future__ import annotations

import html.parser
import re
from pathlib import Path

import pytest
from browsers import chromium, needs_chromium

from inferlimits.book import course, export, slides
from inferlimits.book.serve import serve

RUN = 10    # words: a run this long of a solution must not appear in a deck


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("slides")
    slides.build(out, pdf=False)
    return out


@pytest.fixture(scope="module")
def decks() -> list[slides.Deck]:
    return slides.decks()


class _Text(html.parser.HTMLParser):
    """The text a page shows (and its speaker notes), without its styles and scripts."""

    def __init__(self):
        super().__init__()
        self.parts, self._skip = [], 0

    def handle_starttag(self, tag, attrs):
        self._skip += tag in ("style", "script")

    def handle_endtag(self, tag):
        self._skip -= tag in ("style", "script")

    def handle_data(self, data):
        if not self._skip:
            self.parts.append(data)


def page_text(path: Path) -> str:
    p = _Text()
    p.feed(path.read_text(encoding="utf-8"))
    return " ".join(p.parts)


_MATH = re.compile(r"\$\$.*?\$\$|\$[^$\n]*\$|```.*?```|\{[\w:-]+\}`[^`]*`", re.S)


def words(text: str) -> list[str]:
    """A text's words, lower case, its math, code and roles left out."""
    return re.findall(r"[a-z0-9]+(?:[.,'’-][a-z0-9]+)*", _MATH.sub(" ", text).lower().replace("’", "'"))


def runs(ws: list[str], n: int = RUN) -> set[str]:
    return {" ".join(ws[i:i + n]) for i in range(len(ws) - n + 1)}


def stems(d: slides.Deck) -> tuple[str, ...]:
    return tuple(d.session.chapters) + tuple(getattr(d.session, "take_home", ()))


def test_one_deck_per_session(built, decks):
    names = [f"session-{i:02d}" for i in range(1, len(course.SESSIONS) + 1)]
    assert [d.name for d in decks] == names
    for name in names:
        for ext in ("html", "ipynb"):
            assert (built / f"{name}.{ext}").exists(), f"{name}.{ext}"
    index = (built / "index.html").read_text(encoding="utf-8")
    assert all(f'href="{name}.html"' in index for name in names)
    assert not (set(p.stem for p in built.glob("session-*.html")) - set(names)), "a deck of no session"


def test_each_deck_has_title_figures_equations_example_and_in_class_exercises(built, decks):
    for d in decks:
        page = (built / f"{d.name}.html").read_text(encoding="utf-8")
        text = page_text(built / f"{d.name}.html")
        assert f"Session {d.number}: {d.session.topic}" in text, d.name
        figures = [re.search(r'src="([^"]+)"', img).group(1)
                   for img in re.findall(r'<img[^>]*class="deck-figure"[^>]*>', page)]
        assert figures and all((built / src).exists() for src in figures), d.name
        assert re.search(r'<mjx-container[^>]*display="true"', page), f"{d.name}: no equation"
        assert "Worked example" in text and len(d.example.steps) >= 3 and d.example.results, d.name
        shown = " ".join(words(text))
        assert d.in_class, f"{d.name}: no in-class exercise"
        for e in d.in_class:
            assert f"In class: {slides.exercise_name(e)}" in text, f"{d.name}: {e.label}"
            own = words(slides.plain(e.text))
            assert any(run in shown for run in sorted(runs(own, 6))), f"{d.name}: the text of {e.label} is missing"


def test_chapter_2s_roofline_is_a_deck_figure(decks):
    assert any("02_decode_roofline" in d.figures for d in decks)
    assert "02_decode_roofline" in export.WIDE and "02_decode_roofline" not in export.SLIDES


def test_no_deck_holds_a_solution(built, decks):
    """No run of ``RUN`` words of any solution of the session's chapters (those that are not also
    an exercise's own text, which the deck shows), and none of the worked example's computed
    numbers among the numbers the session's solutions give and its chapters do not."""
    exercise_runs = set().union(*(runs(words(e.text)) for p in (export.CHAPTERS).glob("*.ipynb")
                                  for e in course.exercises(p)))
    number = re.compile(r"(?<![\w.,])\d[\d,]*(?:\.\d+)?")
    for d in decks:
        deck = " ".join(words(page_text(built / f"{d.name}.html")))
        paths = [course.chapter_path(s) for s in stems(d)]
        sols = {label: text for p in paths for label, text in course.solutions(p).items()}
        for label, text in sols.items():
            leaked = [run for run in runs(words(text)) - exercise_runs if run in deck]
            assert not leaked, f"{d.name} holds the solution of {label}: {leaked[:2]}"
        prose = " ".join(course.markdown(p) for p in paths)
        for text in sols.values():
            prose = prose.replace(text, " ")
        secret = {n for t in sols.values() for n in number.findall(t)} - set(number.findall(prose))
        given = [r for r in d.example.results if sum(c.isdigit() for c in r) >= 3 and r in secret]
        assert not given, f"{d.name}: the worked example states {given}, numbers of the session's solutions"


def test_the_slides_are_16_9(built, decks):
    width, height = slides.SIZE
    assert width * 9 == height * 16
    for d in decks:
        page = (built / f"{d.name}.html").read_text(encoding="utf-8")
        assert f"var W = {width}, H = {height}" in page and "width: W, height: H" in page, d.name
    for name in {f for d in decks for f in d.figures}:
        svg = (export.WIDE_OUT / f"{name}.svg").read_text(encoding="utf-8")
        w, h = (float(x) for x in re.search(r'<svg[^>]* width="([\d.]+)" height="([\d.]+)"', svg).groups())
        assert abs(w / h - 16 / 9) < 0.002, (name, w, h)
        png = (export.WIDE_OUT / f"{name}.png").read_bytes()
        assert (int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")) == (1600, 900), name


def test_the_16_9_exports_are_up_to_date():
    assert not export.stale_wide(), f"out of date, run `make figures`: {export.stale_wide()}"


_LOADS = [re.compile(p, re.I) for p in (r'<script[^>]+src="([^"]+)"', r'<link[^>]+href="([^"]+)"',
                                         r'<img[^>]+src="([^"]+)"', r"url\(\s*['\"]?([^'\")]+)",
                                         r"@import\s+['\"]([^'\"]+)", r"import\s[^;]*?from\s+['\"]([^'\"]+)")]


def test_no_deck_names_a_url_to_load(built):
    """What the decks and the copied reveal.js styles load is local: no http(s) or protocol-relative
    address in a script, stylesheet, image, url() or import."""
    files = list(built.glob("*.html")) + list((built / slides.REVEAL_DIR).rglob("*.css"))
    for path in files:
        text = path.read_text(encoding="utf-8")
        for pattern in _LOADS:
            remote = [u for u in pattern.findall(text) if re.match(r"(https?:)?//", u.strip())]
            assert not remote, f"{path.name} loads {remote}"


@needs_chromium
def test_a_browser_loads_nothing_from_outside_and_every_slide_fits(built, decks):
    """Each deck opened in chromium: every request goes to the local server, reveal.js starts at
    16:9, and no slide's text is taller than its slide."""
    with serve(built) as base, chromium() as browser:
        page = browser.new_page()
        asked = []
        page.on("request", lambda r: asked.append(r.url))
        for d in decks:
            page.goto(f"{base}/{d.name}.html", wait_until="load")
            page.wait_for_function("() => window.inferlimitsDeckReady === true", timeout=30_000)
            config = page.evaluate("() => [Reveal.getConfig().width, Reveal.getConfig().height]")
            assert config == list(slides.SIZE), d.name
            assert page.evaluate("() => document.querySelectorAll('section[data-overflow]').length") == 0, \
                f"{d.name}: a slide's text does not fit"
        outside = [u for u in asked if not u.startswith(base) and not u.startswith("data:")]
        assert not outside, f"requests beyond the decks: {outside[:5]}"


@needs_chromium
def test_a_deck_prints_one_16_9_page_a_slide(built, decks):
    from pypdf import PdfReader

    d = decks[1]
    (pdf,) = slides.print_pdfs(built, [d.name])
    pages = PdfReader(pdf).pages
    nb = __import__("nbformat").read(built / f"{d.name}.ipynb", as_version=4)
    assert len(pages) == sum(c.metadata["slideshow"]["slide_type"] == "slide" for c in nb.cells)
    for page in pages:
        w, h = float(page.mediabox.width), float(page.mediabox.height)
        assert abs(w / h - 16 / 9) < 1e-3, (w, h)


def test_equations_are_found_in_their_chapter_or_named():
    eq = slides.equation("01_two_speeds", r"R \;=\; \frac{P}{BW}")
    assert eq in slides.display_equations("01_two_speeds")
    with pytest.raises(ValueError, match="find"):
        slides.equation("01_two_speeds", "no such formula")


def test_a_session_without_a_worked_example_is_named():
    bare = course.Session("Nothing brought", ("13_measure",))
    with pytest.raises(ValueError, match="worked example"):
        slides.deck(1, bare)


def test_roles_read_as_words():
    assert slides.plain("see {doc}`02_decode`") == "see Chapter 2: " + slides.chapter_title("02_decode")
    assert slides.plain("{term}`quantization <quantization>` of {numref}`decode-ex1`") \
        == "quantization of Exercise 2." + str([e.label for e in course.exercises(course.chapter_path("02_decode"))]
                                               .index("decode-ex1") + 1)


def test_numbers_are_written_as_a_slide_writes_them():
    assert [slides.fmt(x) for x in (20786.3, 3.129, 0.00338, 29)] == ["20,786", "3.13", "0.00338", "29"]
    assert slides.fmt(4.8, trim=True) == "4.8" and slides.fmt(4.8) == "4.80"
    with pytest.raises(ValueError, match="x"):
        slides.fmt(float("nan"))
