"""Course kit outputs: the printable PDF of the whole book, and the slide-ready figure exports
(deterministic, and committed up to date)."""
from __future__ import annotations

import html
import json
import re
import shutil
import struct
from pathlib import Path

import pytest
from browsers import needs_chromium

from inferlimits.book import export
from inferlimits.book import toc_pages


@needs_chromium
def test_exports_are_deterministic():
    """Two exports, each by its own chromium, give the same bytes (on one machine: another
    machine's fonts may draw other pixels, which is why currency is checked by hash below)."""
    figures = {name: slide.figure() for name, slide in export.SLIDES.items()}
    first, second = export.render(figures), export.render(figures)
    for name in figures:
        assert first[name] == second[name], f"{name}: exporting twice gave different files"


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
    nb = json.loads((export.CHAPTERS / "12_measure.ipynb").read_text(encoding="utf-8"))
    page = "".join("".join(o.get("data", {}).get("text/html", "")) for c in nb["cells"] for o in c.get("outputs", []))
    labels = set(re.findall(r"measured on ([^<\\]+?\d{4}-\d{2}-\d{2})", page))
    assert labels, "chapter 12's committed outputs name no machine"
    for name in ("12_machine_roofline", "12_machine_decode"):
        slide, text = export.SLIDES[name], _svg_text(name)
        assert any(f"measured on {label}" in text for label in labels), text
        assert "12_measure.ipynb" in slide.caption and slide.caption in text


def test_a_figure_missing_from_the_outputs_is_an_error_not_a_guess(tmp_path):
    nb = tmp_path / "empty.ipynb"
    nb.write_text(json.dumps({"cells": [{"cell_type": "code", "outputs": []}]}), encoding="utf-8")
    with pytest.raises(ValueError, match="fig-machine-roofline"):
        export.committed_figure(nb, "fig-machine-roofline")


@pytest.mark.skipif(not (shutil.which("chromium") or Path("/usr/bin/chromium").exists()),
                    reason="Debian chromium is not installed (make test installs it)")
def test_the_whole_book_prints_to_one_pdf(tmp_path):
    from pypdf import PdfReader

    from inferlimits.book.pdf import build_pdf

    pdf = PdfReader(build_pdf(tmp_path / "book.pdf"))
    pages = toc_pages()
    assert len(pdf.pages) >= len(pages)
    text = "\n".join(p.extract_text() for p in pdf.pages)
    for page in pages:
        first = next(ln for ln in page.read_text(encoding="utf-8").splitlines() if '"# ' in ln or ln.startswith("# "))
        title = first.split("# ", 1)[1].split('\\n')[0].strip().strip('",')
        assert title.split(":")[0] in text, f"{page.name}: {title!r} not in the PDF"
