"""The printable book: every page of the built site, in table-of-contents order, printed by
headless Chromium (Debian's, driven by playwright) with figures at their default settings and
answers shown, merged into one PDF.

    python -m inferlimits.book.pdf     # writes _build/pdf/book.pdf (needs `make book` first)
"""
from __future__ import annotations

import sys
from pathlib import Path

from inferlimits.book import ROOT, toc_pages
from inferlimits.book.serve import CHROMIUM, CHROMIUM_FLAGS, serve

HTML = ROOT / "_build" / "html"
OUT = ROOT / "_build" / "pdf" / "book.pdf"


def build_pdf(out: Path = OUT) -> Path:
    from playwright.sync_api import sync_playwright
    from pypdf import PdfWriter

    if not (HTML / "index.html").exists():
        raise FileNotFoundError("the book is not built: run `make book` first")
    writer = PdfWriter()
    with serve(HTML) as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS, headless=True)
        # about the printable width of an A4 page, so that figures are laid out to fit it
        page = browser.new_page(viewport={"width": 780, "height": 1100})
        page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(base) else r.abort())
        for src in toc_pages():
            page.goto(f"{base}/{src.relative_to(ROOT).with_suffix('.html').as_posix()}", wait_until="networkidle")
            if page.locator(".math").count():
                page.wait_for_function("() => document.querySelectorAll('mjx-container').length > 0",
                                       timeout=15_000)
            page.evaluate("() => window.dispatchEvent(new Event('beforeprint'))")  # opens the answers
            page.emulate_media(media="print")
            pdf = page.pdf(format="A4", print_background=True,
                           margin={"top": "15mm", "bottom": "15mm", "left": "12mm", "right": "12mm"})
            tmp = out.parent / f"{src.stem}.pdf"
            tmp.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_bytes(pdf)
            writer.append(str(tmp))
        browser.close()
    with out.open("wb") as f:
        writer.write(f)
    return out


if __name__ == "__main__":
    print(f"wrote {build_pdf()}")
    sys.exit(0)
