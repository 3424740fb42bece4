"""Course kit outputs: the printable PDF of the whole book, and the slide-ready figure exports
(deterministic, and committed up to date)."""
from __future__ import annotations

import dataclasses
import html
import json
import re
import shutil
import struct
import unicodedata
from pathlib import Path

import pytest
import yaml
from browsers import needs_chromium

from inferlimits.book import ROOT, export, pdf, toc_pages


@needs_chromium
def test_exports_are_deterministic():
    """Two exports, each by its own chromium, give the same bytes. Where this machine draws the
    committed files again byte for byte, the export that made them was the first of the two;
    elsewhere (another machine's fonts may draw other pixels, which is why currency is checked by
    hash below) a second export here is."""
    figures = {name: slide.figure() for name, slide in export.SLIDES.items()}
    first = export.render(figures)
    files = {name: [export.OUT / f"{name}.{ext}" for ext in export.FORMATS] for name in figures}
    committed = {name: {f.suffix[1:]: f.read_bytes() for f in paths if f.exists()} for name, paths in files.items()}
    second = committed if first == committed else export.render(figures)
    for name in figures:
        assert first[name] == second[name], f"{name}: exporting twice gave different files"


def test_an_export_is_tried_once_more_only_where_kaleido_opened_its_tab_on_the_blank_page():
    import asyncio

    import kaleido.errors

    class Kaleido:
        def __init__(self, *errors):
            self.errors, self.calls = list(errors), 0

        async def calc_fig(self, fig, opts):
            self.calls += 1
            if self.errors:
                raise kaleido.errors.JavascriptError(self.errors.pop(0))
            return b"drawn"

    fig = {"data": [], "layout": {"height": 300}}
    k = Kaleido("ReferenceError: kaleido_scopes is not defined")
    assert asyncio.run(export._calc(k, fig, "svg")) == b"drawn" and k.calls == 2
    for errors in (["TypeError: bad figure"], ["kaleido_scopes is not defined"] * 2):
        with pytest.raises(kaleido.errors.JavascriptError):
            asyncio.run(export._calc(Kaleido(*errors), fig, "png"))


def test_committed_exports_are_up_to_date():
    assert not export.stale(), f"out of date, run `make figures`: {export.stale()}"


def test_a_changed_figure_or_file_makes_its_export_stale(monkeypatch, tmp_path):
    figures = tmp_path / "figures"
    shutil.copytree(export.OUT, figures)
    monkeypatch.setattr(export, "OUT", figures)
    monkeypatch.setattr(export, "MANIFEST", figures / export.MANIFEST.name)
    assert export.stale() == []
    moved = export.SLIDES["01_roofline"]
    monkeypatch.setitem(export.SLIDES, "01_roofline", export.Slide(moved.chapter, moved.div_id, "a caption"))
    (figures / "02_decode_ceiling.png").write_bytes(b"not the exported file")
    assert export.stale() == ["01_roofline (drawn from another figure)", "02_decode_ceiling.png"]
    assert export.main(["--check"]) == 1


def _svg_text(name: str) -> str:
    """The text an exported SVG shows, tags dropped and entities read."""
    svg = (export.OUT / f"{name}.svg").read_text(encoding="utf-8")
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", svg)).split())


def _lines(s: str) -> list[str]:
    """Plotly's bits of HTML as plain lines (``<br>`` a new line, other tags dropped)."""
    return [html.unescape(re.sub(r"<[^>]+>", "", ln)).strip() for ln in re.split(r"<br\s*/?>", s)]


def test_an_export_is_its_chapter_figure_without_its_controls():
    for name, slide in export.SLIDES.items():
        spec, fig = slide.spec(), slide.figure()
        assert fig["data"] == spec["data"], name                    # nothing redrawn or recomputed
        assert not {"updatemenus", "sliders"} & fig["layout"].keys(), name
        if not slide.caption:
            assert fig["layout"] == {k: v for k, v in spec["layout"].items()
                                     if k not in ("updatemenus", "sliders")}, name
        svg = (export.OUT / f"{name}.svg").read_text(encoding="utf-8")
        assert "slider-container" not in svg and "updatemenu-container" not in svg, name
        text = _svg_text(name)
        for line in _lines(spec["layout"]["title"]["text"]):
            assert line in text, f"{name}: title line {line!r} not drawn"
        png = (export.OUT / f"{name}.png").read_bytes()
        size = struct.unpack(">II", png[16:24])                    # the PNG header's width and height
        assert size == (export.WIDTH * export.SCALE, fig["layout"]["height"] * export.SCALE), name


def test_every_exported_figure_is_listed():
    listed = {f"{name}.{ext}" for name in export.SLIDES for ext in ("svg", "png")}
    on_disk = {p.name for p in export.OUT.glob("*") if p.suffix in (".svg", ".png")}
    assert on_disk == listed, on_disk ^ listed


def test_every_chapter_has_a_slide_export():
    """Chapters are the numbered pages of the table of contents (appendix pages are not)."""
    chapters = [p.stem for p in toc_pages() if re.match(r"\d+_", p.stem)]
    assert len(chapters) >= 9, chapters
    numbers = {name.split("_", 1)[0] for name in export.SLIDES}
    missing = [c for c in chapters if c.split("_", 1)[0] not in numbers]
    assert not missing, f"chapters without a slide export in inferlimits.book.export.SLIDES: {missing}"


def test_chapter_12_exports_keep_the_label_of_the_machine_that_measured():
    nb = json.loads((export.CHAPTERS / "13_measure.ipynb").read_text(encoding="utf-8"))
    page = "".join("".join(o.get("data", {}).get("text/html", "")) for c in nb["cells"] for o in c.get("outputs", []))
    labels = set(re.findall(r"measured on ([^<\\]+?\d{4}-\d{2}-\d{2})", page))
    assert labels, "chapter 13's committed outputs name no machine"
    for name in ("13_machine_roofline", "13_machine_products", "13_machine_decode"):
        slide, text = export.SLIDES[name], _svg_text(name)
        assert any(f"measured on {label}" in text for label in labels), text
        assert "13_measure.ipynb" in slide.caption and slide.caption in text


def test_a_figure_missing_from_the_outputs_is_an_error_not_a_guess(tmp_path):
    nb = tmp_path / "empty.ipynb"
    nb.write_text(json.dumps({"cells": [{"cell_type": "code", "outputs": []}]}), encoding="utf-8")
    with pytest.raises(ValueError, match="fig-machine-roofline"):
        export.committed_figure(nb, "fig-machine-roofline")


# ---- the printed book (inferlimits.book.pdf): printed once, read by every test below ------------

SITE = ROOT / "_build" / "html"
PT_PER_MM = 72 / 25.4


def _norm(text: str) -> str:
    """Text as the pages and the PDF show it, for comparing: ligatures split (the PDF's "ﬁ"),
    quotes straightened, spaces collapsed."""
    text = unicodedata.normalize("NFKC", text).translate(str.maketrans("’‘“”", "''\"\""))
    return " ".join(text.split())


def _site() -> Path:
    if not (SITE / "index.html").exists():
        pytest.fail(f"{SITE} is not built: run `make book` (make test does it first)")
    return SITE


def _h1(page: Path) -> str:
    """A page's title as its article heads it, without the chapter number."""
    built = _site() / page.relative_to(ROOT).with_suffix(".html")
    found = re.search(r'<h1>(?:<span class="section-number">[^<]*</span>)?((?:(?!</h1>).)*?)<a class="headerlink"',
                      built.read_text(encoding="utf-8"), re.S)
    assert found, f"{built}: no heading"
    return _norm(html.unescape(re.sub(r"<[^>]+>", "", found.group(1))))


def _sections(page: Path) -> set[str]:
    """A page's section headings as its article writes them, numbers included."""
    built = _site() / page.relative_to(ROOT).with_suffix(".html")
    found = re.findall(r'<h([2-6])>((?:(?!</h\1>).)*?)<a class="headerlink"', built.read_text(encoding="utf-8"), re.S)
    return {_norm(html.unescape(re.sub(r"<[^>]+>", "", text))) for _, text in found}


def _numbered_toc() -> list[tuple[Path, str | None, int | None]]:
    """Every page of _toc.yml: its file, its part's caption, and its chapter number where its part
    is numbered (counted here from _toc.yml, independently of the site's numbering)."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    pages = iter(toc_pages())
    out = [(next(pages), None, None)]
    n = 0
    for part in toc.get("parts", []):
        for _ in part.get("chapters", []):
            n += 1 if part.get("numbered") else 0
            out.append((next(pages), part.get("caption"), n if part.get("numbered") else None))
    return out


def _expected_title(page: Path, number: int | None) -> str:
    return f"{number}. {_h1(page)}" if number is not None else _h1(page)


@dataclasses.dataclass
class PrintedBook:
    path: Path
    texts: list[str]                   # each page's text
    footers: list[tuple[str, str]]     # each page's footer: its left half, its right half
    outline: list                      # [(title, page index, children)]
    metadata: dict

    def text(self) -> str:
        return _norm(" ".join(self.texts))


def _read_pdf(path: Path) -> PrintedBook:
    """The printed book as the tests read it (with pdfium, which reads its 270 pages in about a
    second where pypdf takes twenty)."""
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(path)
    bottom = pdf.MARGIN_MM["bottom"] * PT_PER_MM
    texts, footers = [], []
    for page in doc:
        width, _ = page.get_size()
        text = page.get_textpage()
        texts.append(text.get_text_bounded())
        # the footer's two halves: the page's title from the left margin, its number against the
        # right one; a long title runs past the middle, so they part at the widest gap between
        # the footer's characters
        chars = sorted(box for box in (text.get_rect(i) for i in range(text.count_rects())) if box[3] < bottom)
        gaps = [(b[0] - a[2], (a[2] + b[0]) / 2) for a, b in zip(chars, chars[1:])]
        split = max(gaps)[1] if gaps else width / 2
        footers.append(tuple(_norm(text.get_text_bounded(left=x0, bottom=0, right=x1, top=bottom))
                             for x0, x1 in ((0, split), (split, width))))
    outline: list = []
    above = {-1: outline}                 # the latest bookmark's children at each level
    for mark in doc.get_toc():
        above[mark.level] = []
        above[mark.level - 1].append((_norm(mark.get_title()), mark.get_dest().get_index(), above[mark.level]))
    metadata = {k: v for k, v in doc.get_metadata_dict().items() if v}
    doc.close()
    return PrintedBook(path, texts, footers, outline, metadata)


#: run in each page opened as it prints: what lies right of the printed width, how many figures,
#: tables and code blocks were measured, which controls can be seen, and the text of the check
#: cells (hidden on screen) and of everything else
_MEASURE = """(width) => {
  const seen = (el) => { const r = el.getBoundingClientRect();
                         return r.width > 0 && r.height > 0 && getComputedStyle(el).visibility !== "hidden"; };
  const name = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "")
    + [...el.classList].slice(0, 3).map((c) => "." + c).join("");
  const over = [];
  for (const el of document.body.querySelectorAll("*")) {
    if (!seen(el)) continue;
    const r = el.getBoundingClientRect();
    if (r.right <= 0) continue;        // parked off the page on purpose (plotly's text measurer)
    if (el.closest(".draglayer")) continue;   // plotly's transparent drag handles, never painted
    if (r.right > width + 0.5) over.push(el);
  }
  // the innermost of them, named with their text: what a reader would see cut off
  const wide = over.filter((el) => !over.some((o) => o !== el && el.contains(o)))
    .map((el) => `${name(el)} "${el.textContent.trim().slice(0, 60)}" reaches ${Math.round(el.getBoundingClientRect().right)} px`);
  const count = (sel) => [...document.querySelectorAll(sel)].filter(seen).length;
  const controls = [...document.querySelectorAll(
      ".updatemenu-container, .slider-container, .modebar-container, .il-controls, details.il-data, "
      + "select, input, button, summary")].filter(seen).map(name);
  const checks = [], summaries = [];
  for (const cell of document.querySelectorAll(".cell.tag_hide-cell")) {
    for (const p of cell.querySelectorAll("summary .collapsed")) summaries.push(p.textContent.trim());
    for (const pre of cell.querySelectorAll(".cell_output pre"))
      checks.push(...pre.textContent.split("\\n").filter((ln) => ln.trim().startsWith("\\u2713")));
  }
  const specs = [...document.querySelectorAll("script.il-figure-data")].map((s) => JSON.parse(s.textContent).layout);
  for (const el of document.querySelectorAll(".cell.tag_hide-cell, .il-controls, .updatemenu-container, "
                                             + ".slider-container, details.il-data")) el.remove();
  const figureText = [...document.querySelectorAll("svg.main-svg")].map((s) => s.textContent).join(" ");
  return {wide, controls, checks, summaries, specs, rest: document.body.innerText + " " + figureText,
          measured: {figures: count(".plotly-graph-div"), tables: count("table"), pre: count("pre")}};
}"""


@pytest.fixture(scope="module")
def printed(tmp_path_factory) -> tuple[PrintedBook, dict[str, dict]]:
    """The whole book, printed once by ``build_pdf`` into a folder of the tests' own, and every
    page measured in the tab that printed it (print media at the printed width): page title ->
    what ``_MEASURE`` found."""
    found = {}

    def measure(tab, entry):
        found[entry.title] = tab.evaluate(_MEASURE, pdf.content_width_px())

    out = pdf.build_pdf(html=_site(), out=tmp_path_factory.mktemp("pdf") / "book.pdf", after_print=measure)
    return _read_pdf(out), found


@pytest.fixture(scope="module")
def book(printed) -> PrintedBook:
    return printed[0]


@pytest.fixture(scope="module")
def layout(printed) -> dict[str, dict]:
    return printed[1]


@needs_chromium
def test_the_whole_book_prints_to_one_pdf(book):
    pages = toc_pages()
    assert len(book.texts) >= len(pages)
    text = book.text()
    for page in pages:
        assert _h1(page) in text, f"{page.name}: its title {_h1(page)!r} is not in the PDF"


@needs_chromium
def test_nothing_is_printed_wider_than_the_page(layout):
    """Every element that prints (figures, tables, code and its output included) ends inside the
    printed width, on every page."""
    wide = {title: found["wide"][:5] for title, found in layout.items() if found["wide"]}
    assert not wide, f"wider than the printed {pdf.content_width_px():.0f} px: {wide}"
    measured = {kind: sum(found["measured"][kind] for found in layout.values()) for kind in ("figures", "tables", "pre")}
    assert all(n > 0 for n in measured.values()), f"nothing of some kind was measured: {measured}"


@needs_chromium
def test_every_page_is_numbered_on_through_the_book(book):
    """Each page's footer: the title of the page of the site it belongs to, and its number in the
    whole book (not in its chapter)."""
    starts = sorted((page, title) for title, page, _ in _page_entries(book))
    for i, (left, right) in enumerate(book.footers):
        assert right == str(i + 1), f"page {i + 1}: its footer says {right!r}"
        title = [t for p, t in starts if p <= i][-1]
        assert left and title.startswith(left.removesuffix(_norm("\u2026"))), f"page {i + 1}: footer {left!r} in {title!r}"


def _page_entries(book: PrintedBook) -> list[tuple[str, int, list]]:
    """The outline's entries for the pages of the table of contents: the front page, then the
    pages under their parts."""
    captions = {caption for _, caption, _ in _numbered_toc() if caption}
    out = []
    for entry in book.outline:
        out += entry[2] if entry[0] in captions else [entry]
    return out


@needs_chromium
def test_the_outline_has_every_page_with_its_number(book):
    """One bookmark for each page of the table of contents, in its order and under its part, with
    the number Sphinx gives its chapter (counted here from _toc.yml), pointing at the page that
    prints its numbered title; a numbered chapter's sections hang below it, numbered too."""
    toc = _numbered_toc()
    entries = _page_entries(book)
    assert [title for title, _, _ in entries] == [_expected_title(p, n) for p, _, n in toc]
    parts = [caption for _, caption, _ in toc if caption]
    assert [t for t, _, _ in book.outline if t in parts] == list(dict.fromkeys(parts))
    assert [p for _, p, _ in entries] == sorted(p for _, p, _ in entries)
    for (page, _, number), (title, at, sections) in zip(toc, entries):
        assert title in _norm(book.texts[at]), f"{page.name}: page {at + 1} does not print {title!r}"
        if number is not None:
            assert sections, f"{page.name}: no bookmarks for its sections"
            assert all(t.startswith(f"{number}.") for t, _, _ in sections), (page.name, sections[:3])
            wrong = [t for t, _, _ in sections if t not in _sections(page)]
            assert not wrong, f"{page.name}: bookmarks that are none of its headings: {wrong}"
    assert sum(n is not None for _, _, n in toc) >= 9


@needs_chromium
def test_the_pdf_has_the_books_title_and_author(book):
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    assert book.metadata.get("Title") == config["title"]
    assert book.metadata.get("Author") == config["author"]


@needs_chromium
def test_the_check_cells_are_not_printed(book, layout):
    """The cells that state how each number is computed are collapsed on screen and left out of
    print: neither their "Show how these numbers are computed" nor their ✓ lines are in the PDF."""
    summaries = {s for found in layout.values() for s in found["summaries"]}
    assert "Show how these numbers are computed" in summaries
    lines = {ln for text in book.texts for ln in (_norm(x) for x in text.splitlines())}
    assert not summaries & lines, summaries & lines
    checks = {_norm(c) for found in layout.values() for c in found["checks"]}
    assert len(checks) > 20, "the site's check cells print no ✓ lines: is the hide-cell tag still used?"
    shown = _norm(" ".join(found["rest"] for found in layout.values()))
    text = book.text()
    printed = [c for c in checks if c[:60] not in shown and c[:60] in text]
    assert not printed, f"check lines in the PDF: {printed[:5]}"


def _control_labels(spec: dict) -> set[str]:
    """What a figure's controls show: plotly's slider label ("batch: 8") and the site's controls
    (their name beside the chosen value)."""
    out = set()
    for menu in spec.get("updatemenus", []):
        out.add(f"{menu.get('name', '')} {menu['buttons'][menu.get('active', 0)]['label']}")
    for slider in spec.get("sliders", []):
        step = slider["steps"][slider.get("active", 0)]["label"]
        prefix = (slider.get("currentvalue") or {}).get("prefix", "")
        out |= {f"{prefix}{step}", f"{slider.get('name') or prefix.rstrip(': ')} {step}"}
    return {_norm(html.unescape(re.sub(r"<[^>]+>", "", s))) for s in out}


@needs_chromium
def test_no_control_is_printed(book, layout):
    """Plotly's own controls (dropdowns, sliders, mode bar), the site's HTML controls and the
    figures' data tables do nothing on paper: none shows in print, and the PDF holds none of
    their labels."""
    shown = {title: found["controls"] for title, found in layout.items() if found["controls"]}
    assert not shown, f"controls in print: {shown}"
    starts = sorted((page, title) for title, page, _ in _page_entries(book))
    ends = [p for p, _ in starts[1:]] + [len(book.texts)]
    labels = 0
    for (first, title), end in zip(starts, ends):
        found = layout[title] if title in layout else next(f for t, f in layout.items() if _norm(t) == title)
        text = _norm(" ".join(book.texts[first:end]))
        rest = _norm(found["rest"])
        for spec in found["specs"]:
            for label in _control_labels(spec) - {""}:
                if label in rest:
                    continue      # the text or the figure itself says it too
                labels += 1
                assert label not in text, f"{title}: the control label {label!r} is printed"
    assert labels > 10, labels
    assert "Data of this figure" not in book.text()
