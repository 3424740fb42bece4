"""The built site in a real browser: Debian's chromium driven by playwright (never a browser
download), the site served on loopback with every other host blocked.

Each page is visited once, first as a phone (390 px) and then as a desktop (1300 px):

- as a phone: the menu opens and shows the chapter list (and the page's contents, where it has
  them), and no text of any figure falls outside its figure or outside the region that clips it;
- as a desktop: no formula shows its screen-reader copy; axe-core finds no serious or critical violation; every figure is drawn, has a
  name, a description and a table of its data, draws only trace types the site's plotly.js
  bundle holds, keeps a mode bar of "download" alone, and draws its lines at 3:1 contrast or
  more against its background, in light and dark mode; each of its HTML controls answers the
  keyboard and changes the plot, plotly's own slider and dropdown are hidden (one set of controls),
  and no text of a figure falls outside it at this width either;
- a figure as a notebook shows it without a kernel (its own HTML, no site script): plotly's own
  slider and dropdown change the plot;
- no console error and no request outside the site, at either width.

Screenshots of each page at both widths go to test-output/screenshots/ (JPEG). The first visit of
chapter 1 with an empty cache is weighed (bytes by type, uncompressed and gzip) and must stay
within 2 MB; the numbers go to test-output/first-visit.json."""
from __future__ import annotations

import json
import re
from urllib.parse import urlparse

import pytest
from browsers import needs_chromium

from inferlimits.book import ROOT, toc_pages
from inferlimits.book.pageweight import first_visit
from inferlimits.book.serve import serve

HTML = ROOT / "_build" / "html"
OUT = ROOT / "test-output"
SHOTS = OUT / "screenshots"
AXE = ROOT / ".venv" / "npm" / "node_modules" / "axe-core" / "axe.min.js"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1300, "height": 900}
FIRST_VISIT_BUDGET = 2_000_000   # bytes, uncompressed (DESIGN.md, Budgets)
MODE_BAR = {"Download plot as a PNG", "Download plot as a png"}

playwright = pytest.importorskip("playwright.sync_api")
pytestmark = needs_chromium


@pytest.fixture(scope="module")
def site():
    if not (HTML / "index.html").exists():
        pytest.fail("the book is not built: run `make book`")
    with serve(HTML) as base:
        yield base


class Visit:
    """One page load with outside requests blocked and problems recorded; as a context manager it
    closes the page and, when the body raised nothing, asserts that the page logged no console
    error and asked for nothing outside the site."""

    def __init__(self, browser, url, viewport=DESKTOP):
        self.errors, self.outside = [], []
        self.page = browser.new_page(viewport=viewport, has_touch=True)   # a phone is tapped
        self.page.route("**/*", self._route)
        # (the browser's own request for /favicon.ico is not the page's: the book has no favicon)
        self.page.on("console", lambda m: m.type == "error" and not m.location.get("url", "").endswith("/favicon.ico")
                     and self.errors.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.goto(url, wait_until="networkidle")
        self.page.wait_for_load_state("load")
        self.wait_for_figures()

    def wait_for_figures(self, layout: str | None = None):
        """Until every figure is drawn (in the ``layout`` "narrow" or "wide", when given)."""
        self.page.wait_for_function(
            """(layout) => [...document.querySelectorAll('.plotly-graph-div')].every(d =>
                 d.dataset.ready === 'true' && (!layout || d.dataset.layout === layout))""",
            arg=layout, timeout=30_000)
        self.page.wait_for_timeout(300)

    def __enter__(self):
        return self

    def __exit__(self, kind, *_):
        self.page.close()
        if kind is None:
            assert not self.errors, f"console errors: {self.errors}"
            assert not self.outside, f"requests outside the site: {self.outside}"

    def _route(self, route):
        host = urlparse(route.request.url).hostname
        if host in ("127.0.0.1", "localhost") or route.request.url.startswith("data:"):
            route.continue_()
        else:
            self.outside.append(route.request.url)
            route.abort()

    def screenshot(self, name: str) -> None:
        """The whole page at the window's width: a window as tall as the page (a full-page capture
        would also take in the sidebars waiting off screen), given back afterwards."""
        SHOTS.mkdir(parents=True, exist_ok=True)
        size = self.page.viewport_size
        self.page.set_viewport_size({"width": size["width"],
                                     "height": self.page.evaluate("document.documentElement.scrollHeight")})
        self.page.wait_for_timeout(300)
        self.page.screenshot(path=str(SHOTS / f"{name}.jpg"), type="jpeg", quality=70)
        self.page.set_viewport_size(size)


def _url(site, page):
    return f"{site}/{page.relative_to(ROOT).with_suffix('.html').as_posix()}"


def _built_figures(page) -> int:
    built = (HTML / page.relative_to(ROOT).with_suffix(".html")).read_text(encoding="utf-8")
    return built.count('class="plotly-graph-div"')


# ---- as a phone ----------------------------------------------------------------------------

def _menu_opens(v: Visit) -> None:
    """Tap the visible menu button: the chapter list shows; Escape closes it. The same for the
    page's contents, where the page has a contents button."""
    for toggle, dialog, shown in ((".primary-toggle", "#pst-primary-sidebar-modal", ".bd-docs-nav a.reference"),
                                  (".secondary-toggle", "#pst-secondary-sidebar-modal", "#pst-page-toc-nav a")):
        buttons = v.page.locator(f"{toggle}:visible")
        if toggle == ".secondary-toggle" and not buttons.count():
            continue
        assert buttons.count() == 1, f"{buttons.count()} visible {toggle} buttons"
        buttons.first.tap()
        links = v.page.locator(f"{dialog}[open] {shown}")
        links.first.wait_for(state="visible", timeout=5_000)
        assert links.count() >= 1
        v.page.keyboard.press("Escape")
        v.page.locator(f"{dialog}[open]").wait_for(state="detached", timeout=5_000)


#: every text of a figure, against the figure's box and against the region that clips it
ESCAPING_TEXT = """(fig) => {
  const box = fig.getBoundingClientRect(), bad = [];
  for (const t of fig.querySelectorAll('svg text')) {
    const r = t.getBoundingClientRect();
    if (!t.textContent.trim() || r.width === 0 || getComputedStyle(t).visibility === 'hidden') continue;
    const limits = [['figure', box]];
    const clip = t.closest('[clip-path]');
    const id = clip && /url\\(["']?#([^"')]+)/.exec(clip.getAttribute('clip-path'));
    const rect = id && document.getElementById(id[1]) && document.getElementById(id[1]).querySelector('rect');
    if (rect) {   // the clip rectangle is in the user space of the element it clips
      const m = clip.getScreenCTM(), x = rect.x.baseVal.value, y = rect.y.baseVal.value;
      const a = new DOMPoint(x, y).matrixTransform(m);
      const c = new DOMPoint(x + rect.width.baseVal.value, y + rect.height.baseVal.value).matrixTransform(m);
      limits.push(['clip region', {left: a.x, top: a.y, right: c.x, bottom: c.y}]);
    }
    for (const [what, b] of limits) {
      if (r.left < b.left - 1 || r.right > b.right + 1 || r.top < b.top - 1 || r.bottom > b.bottom + 1)
        bad.push(`"${t.textContent.slice(0, 40)}" outside its ${what}`);
    }
  }
  return bad;
}"""


def _no_text_escapes(v: Visit, width: int) -> None:
    figures = v.page.locator(".js-plotly-plot")
    for i in range(figures.count()):
        escaping = figures.nth(i).evaluate(ESCAPING_TEXT)
        assert not escaping, f"figure {i} at {width} px: {escaping}"


def _phone(v: Visit, page) -> None:
    _menu_opens(v)
    _no_text_escapes(v, PHONE["width"])
    v.screenshot(f"{page.stem}-phone")


# ---- as a desktop --------------------------------------------------------------------------

def _axe(v: Visit) -> None:
    v.page.add_script_tag(path=str(AXE))
    found = v.page.evaluate("""async () => (await axe.run(document, {resultTypes: ['violations']})).violations
        .filter(x => ['serious', 'critical'].includes(x.impact))
        .map(x => `${x.id} (${x.impact}): ${x.nodes.slice(0, 3).map(n => n.target.join(' ')).join(', ')}`)""")
    assert not found, "axe-core: " + "; ".join(found)


def _contrast(fig) -> list[str]:
    """Lines drawn at under 3:1 (WCAG's ratio of luminances) against what lies behind them: the
    plot area's colour, else the figure's, else, for a see-through figure, the page's; a line's
    own transparency and its trace's opacity are blended in."""
    return fig.evaluate("""(fig) => {
      const rgba = (c) => { const m = (c.match(/[\\d.]+/g) || []).map(Number); return m.length < 3 ? null : [m[0], m[1], m[2], m.length > 3 ? m[3] : 1]; };
      const lum = ([r, g, b]) => [r, g, b].map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
        .reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0);
      const solid = (c) => c && c[3] > 0;
      const plotBg = fig.querySelector('.bglayer .bg');
      const ground = [plotBg && rgba(getComputedStyle(plotBg).fill),
                      rgba(getComputedStyle(fig.querySelector('.main-svg')).backgroundColor),
                      rgba(getComputedStyle(document.body).backgroundColor)].find(solid) || [255, 255, 255, 1];
      const low = [];
      for (const p of fig.querySelectorAll('.scatterlayer .trace path.js-line')) {
        const s = getComputedStyle(p), c = rgba(s.stroke);
        if (!c || s.strokeWidth === '0px') continue;
        let alpha = c[3] * +s.strokeOpacity;
        for (let e = p; e && e !== fig; e = e.parentElement) alpha *= +getComputedStyle(e).opacity;
        if (alpha === 0) continue;
        const seen = c.slice(0, 3).map((v, i) => alpha * v + (1 - alpha) * ground[i]);
        const [a, b] = [lum(seen), lum(ground)].sort((x, y) => y - x);
        const ratio = (a + 0.05) / (b + 0.05);
        if (ratio < 3) low.push(`${p.closest('.trace').__data__[0].trace.name}: ${s.stroke} (opacity ${alpha.toFixed(2)}) on rgb(${ground.slice(0, 3)}) is ${ratio.toFixed(2)}:1`);
      }
      return [...new Set(low)];
    }""")


def _drawn(fig) -> str:
    return fig.locator(".cartesianlayer").inner_html()


def _changes(fig, before: str, within_ms: int = 1000) -> bool:
    """Whether the plot is drawn otherwise than ``before`` within ``within_ms`` (asked every 25 ms)."""
    for _ in range(within_ms // 25):
        if _drawn(fig) != before:
            return True
        fig.page.wait_for_timeout(25)
    return _drawn(fig) != before


def _keyboard_changes_the_plot(v: Visit, fig, i: int) -> None:
    figure = fig.locator("xpath=ancestor::figure[1]")
    for control in figure.locator(".il-controls select, .il-controls input[type=range]").all():
        before = _drawn(fig)
        control.focus()
        kind = control.evaluate("c => c.tagName")
        at_end = control.evaluate("c => c.tagName === 'SELECT' ? c.selectedIndex === c.options.length - 1 "
                                  ": +c.value === +c.max")
        v.page.keyboard.press(("ArrowUp" if kind == "SELECT" else "ArrowLeft") if at_end
                              else ("ArrowDown" if kind == "SELECT" else "ArrowRight"))
        assert _changes(fig, before), f"figure {i}: the {kind.lower()} did not change the plot from the keyboard"


def _plotly_controls_hidden(fig, i: int) -> None:
    shown = fig.evaluate("(gd) => [...(gd.layout.sliders || []), ...(gd.layout.updatemenus || [])]"
                         ".filter(c => c.visible !== false).length")
    assert shown == 0, f"figure {i}: plotly's own controls show beside the HTML ones"


def _plotly_controls_change_the_plot(v: Visit, fig, i: int) -> None:
    rail = fig.locator(".slider-rail-rect")
    if rail.count():
        rail.first.scroll_into_view_if_needed()
        box = rail.first.bounding_box()
        grip = fig.locator(".slider-grip-rect").first.bounding_box()
        far = 0.05 if grip["x"] + grip["width"] / 2 > box["x"] + box["width"] / 2 else 0.95
        before = _drawn(fig)
        for frac in (far, 1 - far):  # the end away from the active step first, then the other
            v.page.mouse.click(box["x"] + box["width"] * frac, box["y"] + box["height"] / 2)
            v.page.wait_for_timeout(150)
            after = _drawn(fig)
            assert after != before, f"figure {i}: moving plotly's slider did not change the plot"
            before = after
    if fig.locator(".updatemenu-header").count():
        before = _drawn(fig)
        fig.locator(".updatemenu-header").first.scroll_into_view_if_needed()
        fig.locator(".updatemenu-header").first.click()
        buttons = fig.locator(".updatemenu-dropdown-button")
        assert buttons.count() >= 2
        buttons.nth(buttons.count() - 1).click()
        v.page.wait_for_timeout(150)
        assert _drawn(fig) != before, f"figure {i}: choosing in plotly's dropdown did not change the plot"


def _figure_for_everyone(v: Visit, fig, i: int) -> None:
    about = fig.evaluate("""(gd) => {
      const f = gd.closest('figure');
      const text = (ids) => (ids || '').split(' ').map(id => (document.getElementById(id) || {}).textContent || '').join(' ').trim();
      const spec = JSON.parse(f.querySelector('script.il-figure-data').textContent);
      return {name: text(f.getAttribute('aria-labelledby')), description: text(f.getAttribute('aria-describedby')),
              rows: f.querySelectorAll('details.il-data tbody tr').length,
              types: [...new Set(spec.data.map(t => t.type || 'scatter'))],
              bundle: Object.keys(Plotly.PlotSchema.get().traces),
              modebar: [...gd.querySelectorAll('.modebar-btn')].map(b => b.getAttribute('data-title'))};
    }""")
    assert len(about["name"]) > 3, f"figure {i} has no accessible name"
    assert len(about["description"]) > 40, f"figure {i}: description {about['description']!r}"
    assert about["rows"] >= 1, f"figure {i} has no data table"
    missing = set(about["types"]) - set(about["bundle"])
    assert not missing, f"figure {i} draws {sorted(missing)}, which the site's plotly.js bundle lacks"
    assert set(about["modebar"]) <= MODE_BAR, f"figure {i}: mode bar offers {about['modebar']}"


def _desktop(v: Visit, page) -> None:
    v.page.set_viewport_size(DESKTOP)
    v.wait_for_figures("wide")
    shown_twice = v.page.evaluate("""() => [...document.querySelectorAll('mjx-assistive-mml')].filter(m => {
        const s = getComputedStyle(m);   // hidden as MathJax hides it: cut to a pixel, or not drawn
        return !(s.display === 'none' || (s.position === 'absolute' && /^rect\\(1px/.test(s.clip)));
      }).length""")
    assert not shown_twice, f"{shown_twice} formulas show their screen-reader copy (MathML) beside the drawing"
    figures = v.page.locator(".js-plotly-plot")
    assert figures.count() == _built_figures(page), "not every figure of the page was drawn"
    _axe(v)
    for mode in ("light", "dark"):
        v.page.evaluate(f"() => document.documentElement.dataset.theme = '{mode}'")
        for i in range(figures.count()):
            low = _contrast(figures.nth(i))
            assert not low, f"figure {i} in {mode} mode: {low}"
    v.page.evaluate("() => document.documentElement.dataset.theme = 'light'")
    _no_text_escapes(v, DESKTOP["width"])
    v.screenshot(f"{page.stem}-desktop")
    for i in range(figures.count()):
        fig = figures.nth(i)
        fig.scroll_into_view_if_needed()
        assert fig.locator(".scatterlayer .trace, .barlayer .trace").count() >= 1, f"figure {i} has no traces"
        _figure_for_everyone(v, fig, i)
        _keyboard_changes_the_plot(v, fig, i)
        _plotly_controls_hidden(fig, i)


@pytest.mark.parametrize("page", toc_pages(), ids=lambda p: p.stem)
def test_page_on_a_phone_and_on_a_desktop(site, browser, page):
    with Visit(browser, _url(site, page), viewport=PHONE) as v:
        _phone(v, page)
        _desktop(v, page)


def _with_plotly_controls() -> list[tuple[str, dict]]:
    """Every built figure that carries plotly's own slider or dropdown, as (id, spec)."""
    found = []
    for page in toc_pages():
        built = (HTML / page.relative_to(ROOT).with_suffix(".html")).read_text(encoding="utf-8")
        for div, spec in re.findall(r'<script type="application/json" class="il-figure-data" data-for="([^"]+)">(.*?)</script>',
                                    built, re.S):
            spec = json.loads(spec)
            if spec["layout"].get("sliders") or spec["layout"].get("updatemenus"):
                found.append((div, spec))
    return found


def test_plotly_controls_work_where_a_notebook_shows_the_figure(site, browser, tmp_path):
    """A notebook opened without a kernel (JupyterLab, nbviewer) draws a figure from its own HTML,
    with no site script: there plotly's own slider and dropdown are the controls. Every such
    figure is drawn so, one after another on one page."""
    figures = _with_plotly_controls()
    assert len(figures) >= 10
    (tmp_path / "plotly.js").write_bytes((HTML / "_static" / "plotly-basic.min.js").read_bytes())
    divs = "".join(f'<div id="{div}" class="plotly-graph-div"></div>' for div, _ in figures)
    plots = "".join(f'Plotly.newPlot("{div}", {json.dumps(spec["data"])}, {json.dumps(spec["layout"])}, '
                    f'{json.dumps(spec.get("config", {}))}).then(() => document.getElementById("{div}").dataset.ready = "true");'
                    for div, spec in figures)
    (tmp_path / "figures.html").write_text(f'<!doctype html><html><body><script src="plotly.js"></script>{divs}'
                                           f'<script>{plots}</script></body></html>', encoding="utf-8")
    with serve(tmp_path) as base, Visit(browser, f"{base}/figures.html") as v:
        for div, _ in figures:
            _plotly_controls_change_the_plot(v, v.page.locator(f"#{div}"), div)


def test_first_visit_of_chapter_one_is_light(site, browser):
    weight = first_visit(browser, f"{site}/chapters/01_two_speeds.html")
    OUT.mkdir(exist_ok=True)
    (OUT / "first-visit.json").write_text(json.dumps(weight, indent=2) + "\n")
    total = weight["total"]["bytes"]
    assert total <= FIRST_VISIT_BUDGET, f"first visit of chapter 1: {total:,} bytes, over {FIRST_VISIT_BUDGET:,}: " \
                                        + json.dumps(weight["by_type"])


def _pixels_differ(browser, a: bytes, b: bytes) -> int:
    """How many pixels of two PNG screenshots of one size differ (compared in a canvas)."""
    import base64

    page = browser.new_page()
    try:
        return page.evaluate("""async ([a, b]) => {
          const load = s => new Promise(r => { const i = new Image(); i.onload = () => r(i); i.src = 'data:image/png;base64,' + s; });
          const [A, B] = [await load(a), await load(b)];
          if (A.width !== B.width || A.height !== B.height) return -1;
          const c = document.createElement('canvas'); c.width = A.width; c.height = A.height;
          const g = c.getContext('2d', {willReadFrequently: true});
          g.drawImage(A, 0, 0); const da = g.getImageData(0, 0, A.width, A.height).data;
          g.drawImage(B, 0, 0); const db = g.getImageData(0, 0, A.width, A.height).data;
          let n = 0; for (let i = 0; i < da.length; i += 4) n += (da[i] !== db[i] || da[i+1] !== db[i+1] || da[i+2] !== db[i+2]);
          return n; }""", [base64.b64encode(a).decode(), base64.b64encode(b).decode()])
    finally:
        page.close()


def open_solution_and_check(page) -> None:
    """Open a chapter's first solution and its first hidden check cell, and let them settle."""
    for opener in (".solution.dropdown .admonition-title", "details.hide summary"):
        page.locator(opener).first.scroll_into_view_if_needed()
        page.locator(opener).first.click()
    page.wait_for_timeout(500)


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_pages_look_the_same_with_the_theme_stylesheet_whole(site, browser, viewport):
    """The cut theme stylesheet (inferlimits/book/purgecss.py) against the theme's own: a chapter
    with exercises and figures, the search page and the bibliography, with a solution and a check
    cell opened, drawn pixel for pixel the same."""
    from test_build import _theme_css

    whole = _theme_css()
    shots = []
    for swap in (False, True):
        page = browser.new_page(viewport=viewport)
        if swap:
            page.route("**/pydata-sphinx-theme.css*", lambda r: r.fulfill(body=whole, content_type="text/css"))
        for path in ("chapters/02_decode.html", "search.html?q=roofline", "chapters/references.html"):
            page.goto(f"{site}/{path}", wait_until="networkidle")
            page.wait_for_timeout(500)
            if path.startswith("chapters/02"):
                open_solution_and_check(page)
            shots.append(page.screenshot())
        page.close()
    half = len(shots) // 2
    for i, (cut, own) in enumerate(zip(shots[:half], shots[half:])):
        assert _pixels_differ(browser, cut, own) == 0, f"view {i} looks different with the cut stylesheet"
