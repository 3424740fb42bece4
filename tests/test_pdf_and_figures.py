"""Course kit outputs: the printable PDF of the whole book, and the slide-ready figure exports
(deterministic, and committed up to date)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from inferlimits import export
from inferlimits.book import toc_pages


def test_exports_are_deterministic_and_committed_up_to_date():
    stale = []
    for name, make in export.SLIDES.items():
        first, second = export.render(make()), export.render(make())
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
