"""Course kit outputs: the printable PDF of the whole book, and the slide-ready figure exports
(deterministic, and committed up to date)."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from inferlimits import export
from inferlimits.book import toc_pages


def test_exports_are_deterministic_and_committed_up_to_date():
    stale = []
    for name, slide in export.SLIDES.items():
        first, second = slide.render(), slide.render()
        assert first == second, f"{name}: exporting twice gave different files"
        for ext, data in first.items():
            path = export.OUT / f"{name}.{ext}"
            if not path.exists() or path.read_bytes() != data:
                stale.append(path.name)
    assert not stale, f"out of date, run `make figures`: {stale}"


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
    assert not missing, f"chapters without a slide export in inferlimits.export.SLIDES: {missing}"


def test_subplots_follow_the_axis_domains_and_share_x():
    spec = {"data": [dict(x=[1, 2], y=[1, 2]), dict(x=[1, 2], y=[3, 4], yaxis="y2"),
                     dict(x=[1, 2], y=[5, 6], xaxis="x3", yaxis="y3")],
            "layout": dict(title="two rows", height=560, yaxis=dict(domain=[0.6, 1.0]),
                           yaxis2=dict(domain=[0.0, 0.4], anchor="x"), xaxis3=dict(domain=[0.5, 1.0], anchor="y3"),
                           yaxis3=dict(domain=[0.0, 0.4], anchor="x3"), xaxis=dict(domain=[0.0, 0.4]))}
    fig = export.draw(spec)
    try:
        top, below, right = fig.axes
        assert top.get_position().y0 > below.get_position().y1            # one above the other
        assert right.get_position().x0 > below.get_position().x1           # and one beside
        assert top.get_position().height == pytest.approx(below.get_position().height)
        assert top.get_shared_x_axes().joined(top, below)                  # the same plotly x axis
        assert not top.get_shared_x_axes().joined(top, right)
    finally:
        export.plt.close(fig)


def test_chapter_9_exports_keep_the_label_of_the_machine_that_measured():
    nb = json.loads((export.CHAPTERS / "12_measure.ipynb").read_text(encoding="utf-8"))
    html = "".join("".join(o.get("data", {}).get("text/html", "")) for c in nb["cells"] for o in c.get("outputs", []))
    labels = set(re.findall(r"measured on ([^<\\]+?\d{4}-\d{2}-\d{2})", html))
    assert labels, "chapter 12's committed outputs name no machine"
    for name in ("12_machine_roofline", "12_machine_decode"):
        slide = export.SLIDES[name]
        title = export._text(slide.spec()["layout"]["title"])
        assert any(f"measured on {label}" in title for label in labels), title
        assert "12_measure.ipynb" in slide.caption


def test_a_figure_missing_from_the_outputs_is_an_error_not_a_guess(tmp_path):
    nb = tmp_path / "empty.ipynb"
    nb.write_text(json.dumps({"cells": [{"cell_type": "code", "outputs": []}]}), encoding="utf-8")
    with pytest.raises(ValueError, match="fig-machine-roofline"):
        export.committed_figure(nb, "fig-machine-roofline")


@pytest.mark.skipif(not (shutil.which("chromium") or Path("/usr/bin/chromium").exists()),
                    reason="Debian chromium is not installed (make test installs it)")
def test_the_whole_book_prints_to_one_pdf(tmp_path):
    from pypdf import PdfReader

    from inferlimits.pdf import build_pdf

    pdf = PdfReader(build_pdf(tmp_path / "book.pdf"))
    pages = toc_pages()
    assert len(pdf.pages) >= len(pages)
    text = "\n".join(p.extract_text() for p in pdf.pages)
    for page in pages:
        first = next(ln for ln in page.read_text(encoding="utf-8").splitlines() if '"# ' in ln or ln.startswith("# "))
        title = first.split("# ", 1)[1].split('\\n')[0].strip().strip('",')
        assert title.split(":")[0] in text, f"{page.name}: {title!r} not in the PDF"
