"""The decks (``make slides``, ``inferlimits.book.slides``): one 16:9 deck per session of the course,
with its title, figures, equations, a worked example, its in-class exercises and its quiz; the
exercises' answers and the quiz's keys in the speaker notes only, never on a slide or in the PDF;
nothing loaded from a network; a PDF of 16:9 pages; the 16:9 figures' fonts large enough for a
projector. The decks are built once into a temporary folder (HTML only, then one deck's PDF)."""
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
    """The text a page shows on its slides, and apart from it the text of its speaker notes
    (``<aside class="notes">``, one entry a slide), without its styles and scripts."""

    def __init__(self):
        super().__init__()
        self.parts, self.notes, self._skip, self._in_notes = [], [], 0, False

    def handle_starttag(self, tag, attrs):
        self._skip += tag in ("style", "script")
        if tag == "aside" and "notes" in (dict(attrs).get("class") or "").split():
            self._in_notes = True
            self.notes.append("")

    def handle_endtag(self, tag):
        self._skip -= tag in ("style", "script")
        if tag == "aside":
            self._in_notes = False

    def handle_data(self, data):
        if self._skip:
            return
        if self._in_notes:
            self.notes[-1] += data
        else:
            self.parts.append(data)


def _parse(path: Path) -> _Text:
    p = _Text()
    p.feed(path.read_text(encoding="utf-8"))
    return p


def page_text(path: Path) -> str:
    """What a deck's slides show: no speaker note."""
    return " ".join(_parse(path).parts)


def notes_text(path: Path) -> list[str]:
    """Each speaker note of a deck, in order."""
    return _parse(path).notes


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
    assert slides.plain("see {doc}`02_decode`") == "see Chapter 2"
    assert slides.plain("see {doc}`primer`") == "see " + slides.chapter_title("primer")
    assert slides.plain("{term}`quantization <quantization>` of {numref}`decode-ex1`") \
        == "quantization of Exercise 2." + str([e.label for e in course.exercises(course.chapter_path("02_decode"))]
                                               .index("decode-ex1") + 1)


def test_numbers_are_written_as_a_slide_writes_them():
    assert [slides.fmt(x) for x in (20786.3, 3.129, 0.00338, 29)] == ["20,786", "3.13", "0.00338", "29"]
    assert slides.fmt(4.8, trim=True) == "4.8" and slides.fmt(4.8) == "4.80"
    with pytest.raises(ValueError, match="x"):
        slides.fmt(float("nan"))


# ---- answers and keys: in the speaker notes, never on a slide or in the PDF ------------------------

_NUMBER = re.compile(r"(?<![\w.,])\d[\d,]*(?:\.\d+)?")


def _squeezed(text: str) -> str:
    return " ".join(text.split())


def test_each_in_class_exercise_has_its_solution_in_the_speaker_notes(built, decks):
    """The note on each in-class exercise's slide is the chapter's solution, rendered as the slide
    renders the exercise: each stretch of its words between two formulas, in order, and every
    number as the solution states it."""
    for d in decks:
        notes = notes_text(built / f"{d.name}.html")
        for e in d.in_class:
            sol = course.solutions(course.chapter_path(e.chapter))[e.label]
            assert d.answers[e.label] == sol.strip(), e.label
            stretches = [" ".join(words(t)) for t in _MATH.split(slides.plain(sol))]
            mine = [n for n in notes if _squeezed(n).startswith("Answer (the solution in")
                    and all(t in " ".join(words(n)) for t in stretches)]
            assert len(mine) == 1, f"{d.name}: the answer of {e.label} is not in one speaker note"
            stated = _NUMBER.findall(" ".join(_MATH.split(slides.plain(sol))))
            assert stated and all(n in mine[0] for n in stated), \
                f"{d.name}: {e.label}'s note lacks {[n for n in stated if n not in mine[0]]}"


def test_the_answer_follows_its_exercise(built, decks):
    """Each exercise's answer is the note of its own slide: the notebook's note cell right after
    the exercise's slide cell."""
    import nbformat

    for d in decks:
        nb = nbformat.read(built / f"{d.name}.ipynb", as_version=4)
        for i, cell in enumerate(nb.cells):
            m = re.search(r"## In class: (.+)", cell.source)
            if not m:
                continue
            (e,) = [e for e in d.in_class if slides.exercise_name(e) == m.group(1).strip()]
            after = nb.cells[i + 1]
            assert after.metadata["slideshow"]["slide_type"] == "notes", f"{d.name}: {e.label} has no note"
            assert slides.answer_text(d, e) in after.source, f"{d.name}: {e.label}'s note is another answer"


def test_in_class_exercises_come_in_the_agendas_order(decks):
    for d in decks:
        named = [label for label in dict.fromkeys(course.agenda_labels(d.session))
                 if label in {e.label for e in d.in_class}]
        assert [e.label for e in d.in_class][:len(named)] == named, d.name
        assert sorted(e.label for e in d.in_class) == sorted(e.label for e in course.in_class_exercises(d.session))


def test_each_deck_ends_with_its_sessions_quiz_keys_in_the_notes(built, decks):
    """The session's questions of the quiz bank, one a slide, after every other slide; each
    question's text on its slide, its key in that slide's note and nowhere on a slide."""
    import nbformat

    bank = course.quiz_questions()
    for d in decks:
        assert [q.id for q in d.quiz] == [q.id for q in bank if q.session == d.number], d.name
        assert d.quiz, f"{d.name}: its session has no question in the quiz bank"
        nb = nbformat.read(built / f"{d.name}.ipynb", as_version=4)
        slide_cells = [c for c in nb.cells if c.metadata["slideshow"]["slide_type"] == "slide"]
        tail = slide_cells[-len(d.quiz):]
        assert all("deck-quiz" in c.source for c in tail), f"{d.name}: the quiz is not the deck's end"
        assert sum("deck-quiz" in c.source for c in slide_cells) == len(d.quiz), d.name
        shown = " ".join(words(page_text(built / f"{d.name}.html")))
        notes = notes_text(built / f"{d.name}.html")
        asked = set().union(*(runs(words(slides.plain(q.text)), 8) for q in bank))
        for i, q in enumerate(d.quiz, start=1):
            assert f"Quiz: question {i} of {len(d.quiz)}" in page_text(built / f"{d.name}.html")
            assert any(run in shown for run in runs(words(slides.plain(q.text)), 6)), f"{d.name}: {q.id} not shown"
            key = words(slides.plain(q.key))
            assert any(" ".join(key) in " ".join(words(n)) for n in notes if f"Key ({q.id})" in n), \
                f"{d.name}: the key of {q.id} is not in its note"
            leaked = [run for run in runs(key, 8) - asked if run in shown]
            assert not leaked, f"{d.name}: a slide shows the key of {q.id}: {leaked[:2]}"
            (cell,) = [c for c in tail if f">{q.id} · " in c.source]
            own = set(_NUMBER.findall(_MATH.sub(" ", q.key))) - set(_NUMBER.findall(q.text))
            assert not [n for n in own if n in _NUMBER.findall(cell.source)], f"{d.name}: {q.id}'s slide holds its key"


def test_the_agenda_names_the_quiz_at_the_decks_end(built, decks):
    for d in decks:
        text = page_text(built / f"{d.name}.html")
        assert "the quiz" not in text.replace("Quiz: question", ""), d.name
        n = len(d.quiz)
        assert f"the {n} question{'s' if n > 1 else ''} at the end of this deck" in text, d.name


@needs_chromium
def test_the_pdf_prints_slides_not_notes(built, decks):
    """reveal.js's print view prints the slides only: no answer, no key, no session note in the
    PDF, and the exercises' and questions' text there."""
    from pypdf import PdfReader

    d = max(decks, key=lambda d: len(d.in_class) + len(d.quiz))
    (pdf,) = slides.print_pdfs(built, [d.name])
    raw = " ".join(page.extract_text() for page in PdfReader(pdf).pages)
    assert "Answer (the solution" not in raw and not re.search(r"Key \(Q", raw), "the PDF prints speaker notes"
    printed = " ".join(words(raw))
    exercise_runs = set().union(*(runs(words(e.text)) for p in export.CHAPTERS.glob("*.ipynb")
                                  for e in course.exercises(p)))
    asked = set().union(*(runs(words(slides.plain(q.text)), 8) for q in course.quiz_questions()))
    for e in d.in_class:
        assert any(run in printed for run in runs(words(slides.plain(e.text)), 6)), f"{e.label} not printed"
        leaked = [run for run in runs(words(slides.plain(d.answers[e.label]))) - exercise_runs if run in printed]
        assert not leaked, f"the PDF prints the answer of {e.label}: {leaked[:2]}"
    for q in d.quiz:
        assert any(run in printed for run in runs(words(slides.plain(q.text)), 6)), f"{q.id} not printed"
        leaked = [run for run in runs(words(slides.plain(q.key)), 8) - asked if run in printed]
        assert not leaked, f"the PDF prints the key of {q.id}: {leaked[:2]}"
    if d.session.notes:
        note = words(slides.plain(d.session.notes))
        assert not [run for run in runs(note) if run in printed], "the PDF prints the session's notes"
    page = (built / f"{d.name}.html").read_text(encoding="utf-8")
    assert "showNotes: false" in page


def test_the_decks_are_not_published():
    """The decks hold answers and keys: the Pages workflow publishes the book's HTML and the
    student edition, never ``_build/slides``, and the decks are not built inside either."""
    workflow = (slides.ROOT / ".github" / "workflows" / "book.yml").read_text(encoding="utf-8")
    assert "_build/slides" not in workflow and "make slides" not in workflow
    published = re.findall(r"upload-pages-artifact@\S+\s+with:\s+path:\s*(\S+)", workflow)
    assert published == ["_build/html"]
    assert not slides.OUT.is_relative_to(slides.ROOT / "_build" / "html")
    assert not slides.OUT.is_relative_to(slides.ROOT / "_build" / "student")


# ---- equations: the equation, not the sentence -----------------------------------------------------

def test_no_deck_equation_ends_with_its_sentences_punctuation(decks):
    for d in decks:
        for stem, e in d.equations:
            assert not re.search(r"(?<!\\)[,.;]\s*$", e.tex), (d.name, stem, e.tex[-40:])
            assert not re.search(r"[,.;]\s*\}\s*$", e.tex), (d.name, stem, e.tex[-40:])
            assert not re.search(r"[,.;]\s*\\end\{\w+\*?\}\s*$", e.tex), (d.name, stem, e.tex[-40:])
    chapter_9 = [e.tex for d in decks for stem, e in d.equations if stem == "09_serving_at_scale"]
    assert chapter_9 and all(not t.rstrip().endswith(",") for t in chapter_9)
    assert any(t.rstrip().endswith(r"+ t_\text{comm}") for t in chapter_9)


def test_bare_equation_strips_the_sentence_and_keeps_tex():
    bare = slides.bare_equation
    assert bare(r"a = b,") == "a = b"
    assert bare(r"x \quad \text{bytes,}") == r"x \quad \text{bytes}"
    assert bare(r"R = \frac{P}{BW} \quad \text{FLOP per byte.}") == r"R = \frac{P}{BW} \quad \text{FLOP per byte}"
    assert bare(r"K L \ \text{bytes}.") == r"K L \ \text{bytes}"
    assert bare(r"\frac{M}{BW} .") == r"\frac{M}{BW}"
    assert bare("\\begin{aligned} a &= b,\n\\end{aligned}") == "\\begin{aligned} a &= b\n\\end{aligned}"
    assert bare(r"a = 6.4.") == "a = 6.4"
    assert bare(r"f(x) \,") == "f(x)"
    assert bare(r"a + b \;") == "a + b"
    assert bare(r"\min\!\left(P,\; I\right)") == r"\min\!\left(P,\; I\right)"


# ---- the 16:9 figures: fonts for a projector --------------------------------------------------------

def test_the_16_9_figures_fonts_are_large_enough_for_a_projector():
    """Every font of every 16:9 export's spec (and the base font that ticks, legends and
    annotations without their own size take) is at least ``WIDE_MIN_FONT_PX`` pixels in the
    1600 x 900 PNG, or the figure's own least size where ``WIDE_MIN_FONT_PX_OF`` names one."""
    assert export.WIDE_MIN_FONT_PX >= 18
    assert set(export.WIDE_MIN_FONT_PX_OF) <= set(export.WIDE)
    for name, slide in export.WIDE.items():
        fig = export.wide_figure(slide)
        layout = fig["layout"]
        scale = export.WIDE_PNG_WIDTH / layout["width"]
        least = export.WIDE_MIN_FONT_PX_OF.get(name, export.WIDE_MIN_FONT_PX)
        assert least >= 16, name
        assert "size" in layout.get("font", {}), f"{name}: no base font size"
        sizes = export.font_sizes(fig)
        assert any(where == ".layout.font" for where, _ in sizes), name
        for where, size in sizes:
            for s in size if isinstance(size, list) else [size]:
                assert s * scale >= least - 0.01, f"{name}{where}: {s * scale:.1f} px at 1600 x 900"


def test_wide_font_size_lifts_small_fonts_only():
    width = export.WIDE_SIZE[0]
    least = export.WIDE_MIN_FONT_PX * width / export.WIDE_PNG_WIDTH
    assert export.wide_font_size(11, width) == pytest.approx(least, abs=0.01)
    assert export.wide_font_size(30, width) == 30
    assert export.wide_font_size(11, 1600, least_px=16) == 16
    for bad in ({"size": 0, "width": width}, {"size": 12, "width": -1}, {"size": 12, "width": width, "least_px": 0}):
        with pytest.raises(ValueError, match=next(k for k, v in bad.items() if not v > 0)):
            export.wide_font_size(**bad)



def test_a_note_with_math_brings_the_rule_that_hides_its_mathml(built, decks):
    """The speaker view shows a note without the deck's styles: a note whose answer holds a
    formula carries the rule that keeps MathJax's hidden MathML copy from being drawn."""
    found = 0
    for d in decks:
        page = (built / f"{d.name}.html").read_text(encoding="utf-8")
        for note in re.findall(r'<aside class="notes">(.*?)</aside>', page, re.S):
            if "<mjx-container" in note:
                found += 1
                assert slides.NOTES_MATH_CSS.strip() in note, d.name
    assert found, "no note holds math: the rule is not tested"


# ---- worked examples: what a GPU reads, not what it stores -----------------------------------------

def test_the_tensor_parallel_example_states_what_a_gpu_reads_not_what_it_stores():
    """Chapter 9's example: each GPU stores W_stored / T (``ParallelStep.weight_bytes_per_gpu``)
    but a step reads what ``tensor_parallel_read_bytes`` counts (the weights a token multiplies
    and the activations), the bytes its memory time is; the slide says "holds" of the one and
    "reads" of the other."""
    from inferlimits.arithmetic.parallel import tensor_parallel_on, tensor_parallel_read_bytes
    from inferlimits.arithmetic.precision import decode_on
    from inferlimits.data.hardware import accelerator
    from inferlimits.data.models import model

    ex = slides.EXAMPLES["tensor_parallel"]()
    name, card = re.fullmatch(r"(\S+) over two and four (.+)s", ex.title).groups()
    a, c = accelerator(card), model(name).config
    for T in (2, 4):
        (step,) = [s for s in ex.steps if s.startswith(f"$T$ = {T}:")]
        par = tensor_parallel_on(a, c, T)
        read = sum(tensor_parallel_read_bytes(c, T, decode_on(a, c)))
        assert read / a.bandwidth_bytes_per_s == pytest.approx(par.memory_s, rel=1e-9)
        stored, reads = slides.fmt(par.weight_bytes_per_gpu / 1e9), slides.fmt(read / 1e9)
        assert stored != reads, "the example no longer tells stored from read bytes"
        assert re.search(rf"reads {re.escape(reads)} GB", step), (T, step)
        assert f"{slides.fmt(par.memory_s * 1e3)} ms" in step, (T, step)
        assert not re.search(rf"reads {re.escape(stored)} GB", step), f"T = {T}: the bytes a GPU stores, as read"
        if stored in step:
            assert f"holds {stored} GB" in step, (T, step)


def test_no_worked_example_says_a_step_reads_the_stored_weights():
    """The bytes a worked example says a step reads are never the stored weights of the model it
    names (the embedding table is stored, not multiplied), on one GPU or split over T."""
    from inferlimits.data.models import models, weight_bytes

    checked = 0
    for key, make in slides.EXAMPLES.items():
        ex = make()
        named = [m for name, m in models().items() if re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w.-])",
                                                                  ex.title + " " + ex.question)]
        stored = {slides.fmt(weight_bytes(m.config, precision) / T / 1e9, d)
                  for m in named for precision in ("BF16", "FP8") for T in (1, 2, 4, 8) for d in (3, 4)}
        for step in ex.steps:
            said = re.findall(r"reads (?:\$W\$ = )?([\d,.]+) GB", step)
            checked += bool(said and named)
            assert not set(said) & stored, f"{key}: a step 'reads' the stored weights: {step}"
    assert checked >= 3, "the test finds too few steps that state the bytes read"


# ---- homework: the student's own seeded sheet; the take-home exercises, optional practice ----------

def test_the_homework_slide_sends_students_to_their_seeded_sheet(built, decks):
    """The homework slide says the graded homework is the student's own seeded sheet (``make
    homework``), lists the session's assigned exercises (``course.homework_exercises``, read live)
    and says of each what the sheet does with it, as ``render.session_sheet`` sets it."""
    import nbformat

    from inferlimits.book.homework import render

    for d in decks:
        assigned = course.homework_exercises(d.session)
        assert [e.label for e in d.homework] == [e.label for e in assigned], d.name
        nb = nbformat.read(built / f"{d.name}.ipynb", as_version=4)
        (hw,) = [c.source for c in nb.cells if "## Homework" in c.source]
        assert slides.HOMEWORK_SHEET in hw and "`make homework`" in hw, d.name
        sheet = render.session_sheet(d.number, 1)
        from_book = {e.label for e in sheet.from_book}
        assert {v.template for v in sheet.variants} | from_book == {e.label for e in assigned}, d.name
        for e in assigned:
            how = "as the book sets it" if e.label in from_book else "with numbers of its own"
            assert f"- {slides.exercise_name(e)} ({e.title}), {how}" in hw, f"{d.name}: {e.label}"
        text = page_text(built / f"{d.name}.html")
        assert "Graded: your own seeded sheet" in text and "make homework" in text, d.name


def test_the_take_home_exercises_are_optional_practice(built, decks):
    import nbformat

    for d in decks:
        nb = nbformat.read(built / f"{d.name}.ipynb", as_version=4)
        slide = [c.source for c in nb.cells if "## With the take-home reading" in c.source]
        if not d.take_home:
            assert not slide, d.name
            continue
        (text,) = slide
        assert slides.TAKE_HOME_PRACTICE in text and "not graded" in text, d.name
        practice = {e.label for e in course.practice_exercises(d.session)}
        assert {e.label for e in d.take_home} <= practice, f"{d.name}: a take-home exercise is assigned"
        assert all(slides.exercise_name(e) in text for e in d.take_home), d.name


def test_the_homework_slide_follows_the_course_plan_live(monkeypatch):
    """``course.homework_exercises`` is read when the deck is built: a deck follows a change to it."""
    session = course.SESSIONS[8]
    chosen = course.homework_exercises(session)[:1]
    monkeypatch.setattr(course, "homework_exercises", lambda s, root=slides.ROOT: list(chosen))
    d = slides.deck(9, session)
    assert [e.label for e in d.homework] == [e.label for e in chosen]
    assert slides.homework_text(d).count("\n- ") == 1


def test_a_session_that_sets_something_up_shows_it_on_a_slide(built, decks):
    """What a session asks students to set up before the next one (``Session.setup``, the laptop
    lab's install) is on a slide of its deck, not only on the instructor's page."""
    import nbformat

    assert any(d.session.setup for d in decks), "no session sets anything up"
    for d in decks:
        nb = nbformat.read(built / f"{d.name}.ipynb", as_version=4)
        shown = [c.source for c in nb.cells if "## Before the next session: set up" in c.source]
        assert len(shown) == (1 if d.session.setup else 0), d.name
        if d.session.setup:
            assert slides.plain(d.session.setup) in shown[0], d.name
