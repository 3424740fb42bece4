"""The built book (``make book`` writes _build/html before the tests run): every chapter page
holds its figures, every script the site runs is served by the site itself, a page loads
plotly.js only when it has figures and never before it is painted, math arrives drawn, and the
icon font holds every icon the pages show."""
from __future__ import annotations

import json
import re
from importlib import resources

import pytest

from inferlimits.book import icons, purgecss
from inferlimits.book import ROOT, notebooks, toc_pages
from inferlimits.figures.plotlyhtml import plot_calls

HTML = ROOT / "_build" / "html"


@pytest.fixture(scope="module", autouse=True)
def built():
    if not (HTML / "index.html").exists():
        pytest.fail("the book is not built: run `make book` (make test does it first)")


def _page(path):
    return HTML / path.relative_to(ROOT).with_suffix(".html")


def _figure_ids(path):
    ids = []
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        for out in cell.get("outputs", []):
            html = out.get("data", {}).get("text/html", "")
            html = "".join(html) if isinstance(html, list) else html
            ids += re.findall(r'Plotly\.newPlot\(\s*"([^"]+)"', html)
    return ids


@pytest.mark.parametrize("page", toc_pages(), ids=lambda p: p.stem)
def test_every_page_is_built(page):
    assert _page(page).exists()


@pytest.mark.parametrize("nb", notebooks(), ids=lambda p: p.stem)
def test_each_chapter_page_contains_its_figures(nb):
    html = _page(nb).read_text(encoding="utf-8")
    for fig in _figure_ids(nb):
        assert f'id="{fig}"' in html and f'class="il-figure-data" data-for="{fig}"' in html, \
            f"figure {fig} missing from {nb.name}"


def test_chapter_one_has_its_roofline():
    assert "fig-roofline" in _figure_ids(ROOT / "chapters" / "01_two_speeds.ipynb")


@pytest.mark.parametrize("page", toc_pages(), ids=lambda p: p.stem)
def test_scripts_and_styles_come_from_the_site_itself(page):
    html = _page(page).read_text(encoding="utf-8")
    external = re.findall(r'<(?:script|link)[^>]+(?:src|href)="(https?://[^"]+)"', html)
    assert not external, f"{page.name} loads {external}"
    for local in re.findall(r'<script[^>]+src="([^"?#]+)', html):
        assert (_page(page).parent / local).resolve().exists(), f"{page.name}: {local} is not in the site"



PLOTLY = re.compile(r'<script[^>]*src="[^"]*_static/plotly[^"]*"[^>]*>')


@pytest.mark.parametrize("page", toc_pages(), ids=lambda p: p.stem)
def test_plotly_loads_only_where_figures_are_and_after_first_paint(page):
    html = _page(page).read_text(encoding="utf-8")
    tags = PLOTLY.findall(html)
    if 'class="plotly-graph-div"' not in html:
        assert not tags, f"{page.name} has no figure but loads {tags}"
        return
    assert len(tags) == 1 and "plotly-basic.min.js" in tags[0], tags
    assert " defer" in tags[0], f"plotly.js blocks first paint: {tags[0]}"
    assert html.index(tags[0]) > html.index("<body"), "plotly.js is loaded in the head"
    assert not list(plot_calls(html)), "a figure is drawn by an inline script, before plotly.js has loaded"


def test_the_plotly_bundle_is_the_version_plotly_py_writes_for():
    """The partial bundle must be the plotly.js that the figures' JSON was written for."""
    version = re.compile(r"plotly\.js[^\n]*? v(\d+\.\d+\.\d+)")   # "plotly.js (basic - minified) v4.1.1"
    ours = version.search((HTML / "_static" / "plotly-basic.min.js").read_text(encoding="utf-8")[:500])
    bundled = version.search(resources.files("plotly").joinpath("package_data", "plotly.min.js").read_text()[:500])
    assert ours and bundled and ours.group(1) == bundled.group(1), (ours, bundled)


@pytest.mark.parametrize("page", toc_pages(), ids=lambda p: p.stem)
def test_math_arrives_drawn(page):
    html = _page(page).read_text(encoding="utf-8")
    assert not re.search(r"<script[^>]*mathjax", html, re.I), "MathJax is still loaded"
    formulas = re.findall(r'<(span|div) class="math notranslate nohighlight"[^>]*>(.*?)</\1>', html, re.S)
    for _, f in formulas:
        assert "<mjx-container" in f and "<svg" in f and "<math" in f, f"not drawn: {f[:120]}"


def test_the_icon_font_holds_every_icon_the_pages_show():
    """Against the theme's own stylesheet (not the trimmed one): each fa-* icon of each page keeps its
    rule, and its character is in the trimmed solid font."""
    from fontTools.ttLib import TTFont
    import pydata_sphinx_theme

    theme = resources.files(pydata_sphinx_theme).joinpath("theme", "pydata_sphinx_theme", "static", "styles",
                                                          "pydata-sphinx-theme.css").read_text(encoding="utf-8")
    built = (HTML / icons.THEME_CSS).read_text(encoding="utf-8")
    font = set(TTFont(HTML / icons.FONTS / "fa-solid-900.woff2").getBestCmap())
    pages = [p.read_text(encoding="utf-8") for p in HTML.rglob("*.html")]
    used = {c for page in pages for c in re.findall(r'class="[^"]*\bfa-([a-z0-9-]+)', page)}
    assert {"bars", "list"} <= used
    for name in used:
        rule = re.search(r'\.fa-' + re.escape(name) + r':before[^{]*\{content:"\\([0-9a-f]+)"\}', theme)
        if rule:   # an icon, not a modifier such as fa-lg
            assert int(rule.group(1), 16) in font, f"icon fa-{name} is not in the trimmed font"
            assert f".fa-{name}:before" in built, f"the rule of icon fa-{name} was trimmed"
    assert len(font) < 100, f"the solid font still holds {len(font)} characters"


@pytest.mark.parametrize("nb", notebooks(), ids=lambda p: p.stem)
def test_no_widget_state_is_embedded(nb):
    html = _page(nb).read_text(encoding="utf-8")
    assert "application/vnd.jupyter.widget-state+json" not in html
    assert "application/vnd.jupyter.widget-view+json" not in html


def test_drawn_math_needs_no_font():
    """Formulas are SVG paths, so a reader's browser fetches no MathJax web font (none is served)."""
    drawn = [c for page in toc_pages() for c in re.findall(r"<mjx-container.*?</mjx-container>",
                                                           _page(page).read_text(encoding="utf-8"), re.S)]
    assert drawn
    for c in drawn:
        assert 'jax="SVG"' in c and ("<path" in c or "<use" in c) and "<text" not in c, c[:160]


def test_the_build_executes_only_the_chapters_that_measure_this_machine():
    """The others show their committed outputs, which strict nbval proves current."""
    from pathlib import PurePosixPath
    from types import SimpleNamespace

    from inferlimits.book import measures_this_machine
    from inferlimits.book.sphinxext import _execute_only_what_measures

    config = SimpleNamespace(nb_execution_excludepatterns=["drafts/*"])
    _execute_only_what_measures(None, config)
    assert config.nb_execution_excludepatterns[0] == "drafts/*"
    for nb in notebooks():
        excluded = any(PurePosixPath(nb.as_posix()).match(p) for p in config.nb_execution_excludepatterns)
        assert excluded != measures_this_machine(nb), nb.name
    assert any(measures_this_machine(nb) for nb in notebooks())


def test_a_package_change_reads_again_only_the_chapters_the_build_executes():
    from types import SimpleNamespace

    from inferlimits.book import measures_this_machine
    from inferlimits.book.sphinxext import _outdated

    docs = {nb.relative_to(ROOT).with_suffix("").as_posix(): nb for nb in notebooks()}
    env = SimpleNamespace(found_docs=set(docs) | {"intro"})
    assert _outdated(SimpleNamespace(inferlimits_stale=False), env, set(), set(), set()) == []
    again = _outdated(SimpleNamespace(inferlimits_stale=True), env, set(), set(), set())
    assert again and set(again) == {d for d, nb in docs.items() if measures_this_machine(nb)}


def test_the_theme_stylesheet_is_cut_to_less_than_half():
    """Bootstrap's components no page uses are gone (tests/test_browser.py shows that the pages
    look the same with the theme's whole stylesheet)."""
    built = (HTML / purgecss.THEME_CSS).read_text(encoding="utf-8")
    assert len(built) < len(_theme_css()) / 2 and ".bd-sidebar-primary" in built


def _theme_css() -> str:
    import pydata_sphinx_theme

    return resources.files(pydata_sphinx_theme).joinpath("theme", "pydata_sphinx_theme", "static", "styles",
                                                         "pydata-sphinx-theme.css").read_text(encoding="utf-8")


def test_purging_keeps_what_can_match_and_drops_the_rest():
    css = ("/*! licence */.a{x:1}.b,.c .d{x:2}.e:not(.z){x:3}@media (min-width:1px){.a{y:1}.b{y:2}}"
           "@media print{.b{z:1}}@font-face{font-family:F}@keyframes k{from{o:0}to{o:1}}p{m:0}/* note */")
    out = purgecss.purge(css, {"a", "c", "d", "e"})
    assert out == ("/*! licence */.a{x:1}.b,.c .d{x:2}.e:not(.z){x:3}@media (min-width:1px){.a{y:1}}"
                   "@font-face{font-family:F}@keyframes k{from{o:0}to{o:1}}p{m:0}")
    assert purgecss.purge('.q{content:"}"}.a{x:1}', {"a"}) == ".a{x:1}"


def test_the_icon_font_holds_the_icons_extension_stylesheets_draw():
    """sphinx-exercise's stylesheet puts a pencil before each exercise by its character alone."""
    from fontTools.ttLib import TTFont

    drawn = icons.extension_icons(p.read_text(encoding="utf-8") for p in (HTML / "_static").glob("*.css"))
    assert 0xF303 in drawn
    font = set(TTFont(HTML / icons.FONTS / "fa-solid-900.woff2").getBestCmap())
    assert drawn <= font, sorted(hex(c) for c in drawn - font)


@pytest.mark.parametrize("page", toc_pages(), ids=lambda p: p.stem)
def test_no_id_is_given_twice_on_a_page(page):
    ids = re.findall(r'\sid="([^"]+)"', _page(page).read_text(encoding="utf-8"))
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})
