"""The printable book: every page of a built site, in the order of its table of contents, printed
by headless Chromium (Debian's, driven by playwright) and merged into one PDF.

    python -m inferlimits.book.pdf                              # _build/html -> _build/pdf/book.pdf
    python -m inferlimits.book.pdf --html DIR --out FILE        # another build (the student edition)

What the PDF holds, and where it comes from:

- the pages as the site's print stylesheet lays them out (``site/book.css``, ``@media print``):
  nothing wider than the paper, no navigation or controls, no check cells, answers open. Each page
  is opened in print media at the printed width, so its figures are drawn for the paper;
- a footer on every page, with the page's title and its page number, numbered on through the
  whole book: each page is printed with its first page number set (CSS page-margin boxes,
  ``counter-set: page N``), so no page is printed twice;
- bookmarks: one per page of the table of contents, with the numbers the site gives its
  chapters (Sphinx numbering), grouped by the table of contents' parts, each holding the page's
  own sections: where they print from the outline Chromium writes, their titles from the
  headings themselves;
- the book's title (the site's own, so the student edition says so) and author in its metadata.
"""
from __future__ import annotations

import argparse
import dataclasses
import io
import sys
import time
from pathlib import Path

from inferlimits.book import ROOT
from inferlimits.book.serve import CHROMIUM, CHROMIUM_FLAGS, serve

HTML = ROOT / "_build" / "html"
OUT = ROOT / "_build" / "pdf" / "book.pdf"

#: the paper and its margins; the footer sits in the bottom margin
PAPER_MM = (210.0, 297.0)
MARGIN_MM = {"top": 14.0, "right": 14.0, "bottom": 16.0, "left": 14.0}
PX_PER_MM = 96 / 25.4


def content_width_px() -> float:
    """How wide the printed text block is, in CSS pixels (what the pages are laid out to)."""
    return (PAPER_MM[0] - MARGIN_MM["left"] - MARGIN_MM["right"]) * PX_PER_MM


def content_height_px() -> float:
    return (PAPER_MM[1] - MARGIN_MM["top"] - MARGIN_MM["bottom"]) * PX_PER_MM


@dataclasses.dataclass(frozen=True)
class TocPage:
    """One page of the site's table of contents: its address, its title as the site numbers it,
    the part it belongs to (None for the front page) and its depth (1 for a chapter)."""
    url: str
    title: str
    part: str | None
    level: int = 1


#: the site's navigation, as the theme writes it into every page: captions (parts) and the pages'
#: links, in order
_NAV = """() => {
  const out = [];
  let part = null;
  const nav = document.querySelector("nav.bd-docs-nav .bd-toc-item");
  for (const el of nav.children) {
    if (el.matches("p.caption")) { part = el.textContent.trim(); continue; }
    if (!el.matches("ul")) continue;
    const home = el.classList.contains("bd-sidenav__home-link");
    for (const a of el.querySelectorAll("li > a.reference.internal")) {
      const url = new URL(a.href);
      if (url.hash) continue;   // a section of a page, not a page
      url.hash = "";
      if (out.some((p) => p.url === url.href.replace(/#$/, ""))) continue;
      const level = +(/toctree-l(\\d+)/.exec(a.parentElement.className) || [0, 1])[1];
      out.push({url: url.href.replace(/#$/, ""), title: a.textContent.replace(/\\s+/g, " ").trim(), part: home ? null : part, level});
    }
  }
  return {pages: out, title: (document.querySelector(".logo__title") || document.querySelector("title")).textContent.trim()};
}"""

#: every figure on the page drawn by the site's figures.js, and the fonts loaded
_READY = """() => [...document.querySelectorAll(".plotly-graph-div")].every((gd) => gd.dataset.ready === "true")
                 && document.fonts.status === "loaded" """


#: the headings that print, in order, as they read (Chromium's own outline runs the lines of a
#: wrapped heading together, and repeats some)
_HEADINGS = """() => [...document.querySelectorAll("h1, h2, h3, h4, h5, h6")]
  .filter((h) => h.getClientRects().length > 0 && getComputedStyle(h).visibility !== "hidden")
  .map((h) => { const c = h.cloneNode(true);
                c.querySelectorAll(".headerlink").forEach((a) => a.remove());
                return c.textContent.replace(/\\s+/g, " ").trim(); })"""


def _root_url(html: Path, base: str) -> str:
    """The site's first page: index.html, or the page it sends readers to."""
    index = (html / "index.html").read_text(encoding="utf-8")
    marker = 'http-equiv="Refresh" content="0; url='
    if marker in index:
        target = index.split(marker, 1)[1].split('"', 1)[0]
        return f"{base}/{target}"
    return f"{base}/index.html"


def site_contents(page, html: Path, base: str) -> tuple[str, list[TocPage]]:
    """The site's title and its pages in the order of its table of contents (from the site's own
    navigation: the numbers are the ones Sphinx gave the chapters)."""
    page.goto(_root_url(html, base), wait_until="domcontentloaded")
    found = page.evaluate(_NAV)
    pages = [TocPage(**p) for p in found["pages"]]
    if not pages:
        raise ValueError(f"{html}: the site's navigation lists no pages")
    first = page.url.split("#")[0]
    if pages[0].url != first:   # the front page, where its navigation does not list it
        pages.insert(0, TocPage(first, page.title().split(" \u2014 ")[0], None))
    return found["title"], pages


def _css_string(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


def page_style(first_page: int, running_title: str) -> str:
    """The paper, its margins and its footer (the page's title, and the page number, counted from
    ``first_page``) for one printed page of the site."""
    m = MARGIN_MM
    title = running_title if len(running_title) <= 80 else running_title[:78].rstrip() + "\u2026"
    font = "font: 8pt/1.2 -apple-system, 'Segoe UI', 'DejaVu Sans', sans-serif; color: #555;"
    return (f"@page {{ size: {PAPER_MM[0]}mm {PAPER_MM[1]}mm; "
            f"margin: {m['top']}mm {m['right']}mm {m['bottom']}mm {m['left']}mm; "
            f"@bottom-left {{ content: {_css_string(title)}; {font} vertical-align: middle; }} "
            f"@bottom-right {{ content: counter(page); {font} vertical-align: middle; }} }}\n"
            f"@page :first {{ counter-set: page {first_page}; }}\n")


def prepare_for_print(page) -> None:
    """Set ``page`` up as the paper: print media, the printed width."""
    page.set_viewport_size({"width": round(content_width_px()), "height": round(content_height_px())})
    page.emulate_media(media="print")


def _outline(reader, titles: list[str]) -> list[tuple[str, int, float | None, list]]:
    """The outline Chromium wrote from the printed headings, (title, page index, top, children),
    with ``titles`` (the headings as the page has them, in order) for its titles."""
    def walk(items) -> list:
        out = []
        for item in items:
            if isinstance(item, list):      # the children of the item before
                if out:
                    out[-1][3].extend(walk(item))
                continue
            top = item.get("/Top")
            out.append([" ".join(str(item.title).split()), reader.get_destination_page_number(item),
                        float(top) if top is not None else None, []])
        return out

    def flat(items):
        for item in items:
            yield item
            yield from flat(item[3])

    tree = walk(reader.outline)
    items = list(flat(tree))
    if len(items) == len(titles):
        for item, title in zip(items, titles):
            item[0] = title
    return tree


@dataclasses.dataclass
class Printed:
    """What printing gave for one page of the table of contents."""
    toc: TocPage
    reader: object        # its PDF (a pypdf PdfReader)
    first: int            # its first page in the book, from 0
    headings: list[str]   # its headings as they print, in order


def _print_pages(html: Path, after_print=None) -> tuple[str, list[Printed]]:
    """The site's title, and each page of its table of contents printed on its own, numbered on
    from the page before; ``after_print(tab, toc_page)``, where given, is called on each page
    once it has printed."""
    from playwright.sync_api import sync_playwright
    from pypdf import PdfReader

    printed: list[Printed] = []
    with serve(html) as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS, headless=True)
        # two tabs: while one prints a page, the other opens the next one
        tabs = [browser.new_page(), browser.new_page()]
        for tab in tabs:
            tab.route("**/*", lambda r: r.continue_() if r.request.url.startswith(base) else r.abort())
        site_title, toc = site_contents(tabs[0], html, base)
        for tab in tabs:
            prepare_for_print(tab)
        tabs[0].goto(toc[0].url, wait_until="commit")
        first = 0
        for i, entry in enumerate(toc):
            tab = tabs[i % 2]
            tab.wait_for_load_state("load")
            tab.wait_for_function(_READY, timeout=30_000)
            if i + 1 < len(toc):
                tabs[(i + 1) % 2].goto(toc[i + 1].url, wait_until="commit")
            tab.add_style_tag(content=page_style(first + 1, entry.title))
            headings = tab.evaluate(_HEADINGS)
            reader = PdfReader(io.BytesIO(tab.pdf(prefer_css_page_size=True, print_background=True,
                                                  outline=True, tagged=True)))
            printed.append(Printed(entry, reader, first, headings))
            if after_print is not None:
                after_print(tab, entry)
            first += len(reader.pages)
        browser.close()
    return site_title, printed


def build_pdf(html: Path = HTML, out: Path = OUT, *, title: str | None = None,
              author: str | None = None, after_print=None) -> Path:
    """Print every page of the built site ``html`` into the PDF ``out``; return ``out``.

    ``title`` and ``author`` (the PDF's metadata) default to the site's own title and to the
    author in ``_config.yml``. ``after_print(tab, toc_page)``, where given, is called with the
    playwright page of each page of the table of contents once it has printed (the tests measure
    the pages there as they printed)."""
    from pypdf import PdfWriter
    from pypdf.generic import Fit

    html, out = Path(html), Path(out)
    if not (html / "index.html").exists():
        raise FileNotFoundError(f"no built site in {html}: run `make book` first")
    site_title, printed = _print_pages(html, after_print)
    writer = PdfWriter()
    for part in printed:
        writer.append(part.reader, import_outline=False)
    parts: dict[str, object] = {}
    above: dict[int, object] = {}    # the latest bookmark of each level of the table of contents
    for part in printed:
        parent = None
        if part.toc.part is not None:
            if part.toc.part not in parts:
                parts[part.toc.part] = writer.add_outline_item(title=part.toc.part, page_number=part.first, is_open=True)
            parent = parts[part.toc.part]
        if part.toc.level > 1:
            parent = above.get(part.toc.level - 1, parent)
        headings = _outline(part.reader, part.headings)
        # the page's bookmark is its title as the table of contents numbers it, at its heading;
        # the page's sections hang below it
        own = headings[0] if len(headings) == 1 else None
        at = Fit.xyz(top=own[2]) if own and own[1] == 0 and own[2] is not None else Fit.fit()
        entry = writer.add_outline_item(title=part.toc.title, page_number=part.first, parent=parent,
                                        is_open=False, fit=at)
        above[part.toc.level] = entry
        _add_headings(writer, own[3] if own else headings, part.first, entry, Fit)
    writer.add_metadata({"/Title": title or site_title, "/Author": author or config()["author"],
                         "/Creator": "inferlimits.book.pdf (Chromium, pypdf)"})
    writer.page_mode = "/UseOutlines"
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("wb") as f:
        writer.write(f)
    return out


def _add_headings(writer, headings, first: int, parent, Fit) -> None:
    for text, index, top, children in headings:
        item = writer.add_outline_item(title=text, page_number=first + index, parent=parent, is_open=False,
                                       fit=Fit.xyz(top=top) if top is not None else Fit.fit())
        _add_headings(writer, children, first, item, Fit)


def config(root: Path = ROOT) -> dict:
    """The book's ``_config.yml``."""
    import yaml

    return yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m inferlimits.book.pdf", description=__doc__.split("\n\n")[0])
    parser.add_argument("--html", type=Path, default=HTML, help=f"the built site (default: {HTML.relative_to(ROOT)})")
    parser.add_argument("--out", type=Path, default=OUT, help=f"the PDF to write (default: {OUT.relative_to(ROOT)})")
    parser.add_argument("--title", help="the PDF's title (default: the site's)")
    parser.add_argument("--author", help="the PDF's author (default: _config.yml's)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    out = build_pdf(args.html, args.out, title=args.title, author=args.author)
    print(f"wrote {out} in {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
