"""What a page waits for before its first paint (issue 34; ``inferlimits/book/firstpaint.py`` and
``site/figures.js``): three stylesheets, none importing another (the theme's two and one bundle of
the extensions' stylesheets, cut), no script that blocks the page, and plotly.js loaded only when a
figure needs it. In the browser: the pages look the same with the bundle's stylesheets whole, a
figure shows its title in its place until it is drawn, a figure is drawn once it comes near the
screen, and every figure is drawn when the page is printed. (How fast a phone paints is measured
by ``benchmarks/firstpaint.py``, not asserted.)"""
from __future__ import annotations

import json
import re

import pytest

from inferlimits.book import ROOT, firstpaint, toc_pages
from inferlimits.book.serve import serve

HTML = ROOT / "_build" / "html"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1300, "height": 900}


def _page(path):
    return HTML / path.relative_to(ROOT).with_suffix(".html")


# ---- the functions, on made-up pages -------------------------------------------------------

PAGE = """<head>
  <link href="../_static/styles/theme.css?digest=1" rel="stylesheet" />
<link href="../_static/styles/pydata-sphinx-theme.css?digest=1" rel="stylesheet" />
    <link rel="stylesheet" type="text/css" href="../_static/pygments.css?v=1" />
    <link rel="stylesheet" type="text/css" href="../_static/styles/sphinx-book-theme.css?v=2" />
    <link rel="stylesheet" type="text/css" href="../_static/book.css" />
  <link rel="preload" as="script" href="../_static/scripts/bootstrap.js?digest=1" />
    <script src="../_static/documentation_options.js?v=1"></script>
    <script src="../_static/doctools.js?v=1"></script>
    <script>DOCUMENTATION_OPTIONS.pagename = 'x';</script>
    <script async="async" src="../_static/sphinx-thebe.js?v=1"></script>
</head><body><script defer src="../_static/scripts/bootstrap.js?digest=1"></script></body>"""


def test_a_page_links_one_bundle_for_the_stylesheets_sphinx_links():
    page, sources = firstpaint.page_styles(PAGE)
    assert sources == ["pygments.css", "styles/sphinx-book-theme.css", "book.css"]
    name = firstpaint.bundle_name(sources)
    assert page.count('rel="stylesheet"') == 3
    assert f'<link rel="stylesheet" type="text/css" href="../_static/{name}" />' in page
    assert firstpaint.page_styles(page) == (page, [])   # once is enough


def test_no_script_blocks_the_page():
    page = firstpaint.page_scripts(PAGE, "const DOCUMENTATION_OPTIONS = {};\n")
    assert "<script>const DOCUMENTATION_OPTIONS = {};</script>" in page
    assert page.index("const DOCUMENTATION_OPTIONS") < page.index("DOCUMENTATION_OPTIONS.pagename")
    assert '<script defer src="../_static/doctools.js?v=1"></script>' in page
    assert 'async="async" src="../_static/sphinx-thebe.js' in page
    assert 'rel="preload"' not in page
    assert firstpaint.page_scripts(page, "other") == page


def test_a_merged_stylesheet_keeps_its_order_and_its_pictures(tmp_path):
    static = tmp_path / "_static"
    (static / "styles").mkdir(parents=True)
    (static / "a.css").write_text('@charset "UTF-8";\n.a{background:url(file.png)}.gone{x:1}', encoding="utf-8")
    (static / "styles" / "b.css").write_text('.b{background:url("../img/b.svg")}.a{y:2}p{m:0}', encoding="utf-8")
    css = firstpaint.merged(tmp_path, ["a.css", "styles/b.css"], "_static/styles-x.css", {"a", "b"})
    assert css.startswith('@charset "UTF-8";') and css.count("@charset") == 1
    assert re.sub(r"\s+", "", css.split(";", 1)[1]) == '.a{background:url(file.png)}.b{background:url("img/b.svg")}.a{y:2}p{m:0}'
    assert "url(../file.png)" in firstpaint.merged(tmp_path, ["a.css"], "_static/styles/theme.css", {"a"})


# ---- the built site --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def built():
    if not (HTML / "index.html").exists():
        pytest.fail("the book is not built: run `make book`")
    return HTML


@pytest.mark.parametrize("page", toc_pages(), ids=lambda p: p.stem)
def test_a_page_waits_for_three_stylesheets_and_no_script(built, page):
    html = _page(page).read_text(encoding="utf-8")
    head = html[:html.index("</head>")]
    sheets = [re.search(r'href="[^"]*_static/([^"?]+)', link).group(1)
              for link in re.findall(r"<link[^>]*>", head) if 'rel="stylesheet"' in link]
    assert len(sheets) == 3 and sheets[:2] == ["styles/theme.css", "styles/pydata-sphinx-theme.css"], sheets
    assert firstpaint.BUNDLE.fullmatch(sheets[2]), sheets
    blocking = [t for t in re.findall(r"<script[^>]*\ssrc=[^>]*>", re.sub(r"<template.*?</template>", "", html, flags=re.S))
                if not re.search(r"\s(defer|async)\b", t)]
    assert not blocking, blocking
    assert 'rel="preload"' not in head


def test_no_stylesheet_loads_another(built):
    for css in [built / firstpaint.THEME_IMPORTS, *(built / "_static").glob("styles-*.css")]:
        assert "@import" not in css.read_text(encoding="utf-8"), css.name


def test_each_bundle_is_its_stylesheets_cut(built):
    bundles = json.loads((built.parent / ".inferlimits-stylesheets.json").read_text(encoding="utf-8"))
    assert bundles
    for name, sources in bundles.items():
        whole = sum(len((built / "_static" / s).read_text(encoding="utf-8")) for s in sources)
        cut = (built / "_static" / name).read_text(encoding="utf-8")
        assert len(cut) < whole * 0.75, f"{name}: {len(cut)} of {whole} characters"
        assert sources[-1] == "book.css" and "figure.il-figure" in cut


@pytest.mark.parametrize("page", [p for p in toc_pages() if p.suffix == ".ipynb"], ids=lambda p: p.stem)
def test_plotly_is_declared_not_loaded(built, page):
    html = _page(page).read_text(encoding="utf-8")
    declared = re.findall(r'<template class="il-plotly"><script defer src="[^"]*_static/plotly-basic\.min\.js"></script></template>', html)
    assert len(declared) == ('class="plotly-graph-div"' in html)
    assert len(re.findall(r"plotly-basic\.min\.js", html)) == len(declared)


# ---- in the browser ------------------------------------------------------------------------

browsers = pytest.importorskip("browsers")
playwright = pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def site(built):
    with serve(built) as base:
        yield base


def _whole(built) -> dict[str, str]:
    """Each bundle as its stylesheets whole, merged in their order."""
    bundles = json.loads((built.parent / ".inferlimits-stylesheets.json").read_text(encoding="utf-8"))
    return {name: firstpaint.merged(built, sources, f"_static/{name}", None) for name, sources in bundles.items()}


@browsers.needs_chromium
@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_pages_look_the_same_with_the_stylesheets_whole(built, site, browser, viewport):
    """The bundles and theme.css, cut, against the extensions' stylesheets whole and the theme's
    theme.css importing Sphinx's basic.css whole: a figure drawn, a chapter with a solution and a
    check cell opened, and the search page, pixel for pixel the same."""
    from test_browser import _pixels_differ, open_solution_and_check

    whole = _whole(built)
    shots = []
    for swap in (False, True):
        page = browser.new_page(viewport=viewport)
        if swap:
            page.route(re.compile(r".*/_static/styles-[0-9a-f]+\.css.*"),
                       lambda r: r.fulfill(body=whole[r.request.url.split("/")[-1].split("?")[0]], content_type="text/css"))
            page.route("**/styles/theme.css*", lambda r: r.fulfill(body='@import "../basic.css";', content_type="text/css"))
        for path in ("chapters/01_two_speeds.html", "chapters/02_decode.html", "search.html?q=roofline"):
            page.goto(f"{site}/{path}", wait_until="networkidle")
            page.wait_for_function("() => [...document.querySelectorAll('.plotly-graph-div')].every(d => d.dataset.ready === 'true')",
                                   timeout=30_000)
            page.wait_for_timeout(300)
            if not path.startswith("chapters/01"):   # (its top is drawn with a pixel or two of noise)
                shots.append(page.screenshot())
            if path.startswith("chapters/02"):
                open_solution_and_check(page)
                shots.append(page.screenshot())
            if path.startswith("chapters/01"):
                page.locator(".plotly-graph-div").first.scroll_into_view_if_needed()
                page.wait_for_timeout(300)
                shots.append(page.screenshot())
        page.close()
    half = len(shots) // 2
    for i, (cut, own) in enumerate(zip(shots[:half], shots[half:])):
        assert _pixels_differ(browser, cut, own) == 0, f"view {i} looks different with the stylesheets whole"


def _figures(page) -> list[dict]:
    return page.evaluate("""() => [...document.querySelectorAll('.plotly-graph-div')].map(d => ({
        id: d.id, ready: d.dataset.ready === 'true', top: d.getBoundingClientRect().top,
        placeholder: (d.querySelector('.il-placeholder') || {}).textContent || null,
        name: (document.getElementById(d.id + '-name') || {}).textContent || ''}))""")


#: the order in which the page's figures are drawn, recorded as figures.js marks each ready
RECORD_ORDER = """new MutationObserver((changes) => { for (const c of changes)
    if (c.target.dataset.ready === 'true') (window.drawnInOrder = window.drawnInOrder || []).push(c.target.id); })
  .observe(document, {subtree: true, attributeFilter: ['data-ready']});"""
ALL_DRAWN = """() => { const figures = [...document.querySelectorAll('.plotly-graph-div')];
  return figures.length > 0 && figures.every(d => d.dataset.ready === 'true'); }"""


@browsers.needs_chromium
def test_a_figure_shows_its_title_until_it_is_drawn_and_the_one_on_screen_is_drawn_first(site, browser):
    """The page loads with plotly.js held back (its load does not wait for it), every figure's
    place showing its title and what it plots; the reader scrolls to the last figure, plotly.js
    is let go: that figure is drawn first, then every other one."""
    page = browser.new_page(viewport=PHONE)
    held = []
    page.route("**/plotly-basic.min.js", lambda r: held.append(r))
    page.add_init_script(RECORD_ORDER)
    try:
        page.goto(f"{site}/chapters/03_prefill.html", wait_until="load")
        figures = _figures(page)
        assert len(figures) >= 2 and min(f["top"] for f in figures) > 2 * PHONE["height"]
        for f in figures:
            assert not f["ready"] and f["placeholder"] and f["placeholder"].startswith(f["name"]), f
            assert "A chart of" in f["placeholder"]
        page.locator(".plotly-graph-div").last.scroll_into_view_if_needed()
        for _ in range(100):
            if held:
                break
            page.wait_for_timeout(100)
        assert held, "plotly.js was not asked for, with a figure on the screen"
        held[0].continue_()
        page.wait_for_function(ALL_DRAWN, timeout=30_000)
        assert not page.locator(".il-placeholder").count()
        order = page.evaluate("window.drawnInOrder")
        assert order[0] == figures[-1]["id"] and sorted(order) == sorted(f["id"] for f in figures), order
    finally:
        page.close()


@browsers.needs_chromium
def test_every_figure_is_drawn_at_once_when_the_page_is_printed(site, browser):
    """Printed (the book's PDF opens each page in print media): every figure drawn without
    waiting for the page's load (held back here with the theme's last script) or for the
    browser to be idle."""
    page = browser.new_page(viewport=PHONE)
    held = []
    page.route("**/pydata-sphinx-theme.js*", lambda r: held.append(r))
    try:
        page.emulate_media(media="print")
        page.goto(f"{site}/chapters/03_prefill.html", wait_until="commit")
        page.wait_for_function(ALL_DRAWN, timeout=30_000)
        assert held and page.evaluate("document.readyState") != "complete"
        held[0].continue_()
    finally:
        page.close()
