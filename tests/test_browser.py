"""The built site in a real browser: Debian's chromium driven by playwright (never a browser
download), the site served on loopback with every other host blocked. Every page loads without
console errors or outside requests, every figure is drawn, and moving each figure's slider or
dropdown changes what is drawn. A screenshot of each page goes to test-output/screenshots/."""
from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse

import pytest
from browsers import needs_chromium

from inferlimits.book import ROOT, toc_pages
from inferlimits.serve import serve

HTML = ROOT / "_build" / "html"
SHOTS = ROOT / "test-output" / "screenshots"

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

    def __init__(self, browser, url):
        self.errors, self.outside = [], []
        self.page = browser.new_page(viewport={"width": 1300, "height": 900})
        self.page.route("**/*", self._route)
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.goto(url, wait_until="networkidle")
        # "networkidle" can come before the page is parsed and its figures drawn: wait for both, so
        # that no check below looks at half a page
        self.page.wait_for_load_state("load")
        self.page.wait_for_function(
            "() => [...document.querySelectorAll('.plotly-graph-div')].every(d => d.querySelector('.main-svg'))",
            timeout=30_000)

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


def _url(site, page):
    return f"{site}/{page.relative_to(ROOT).with_suffix('.html').as_posix()}"


def _figures(v: Visit, page):
    """The page's figures, every one the built HTML holds (none missed by looking too early)."""
    built = (HTML / page.relative_to(ROOT).with_suffix(".html")).read_text(encoding="utf-8")
    figures = v.page.locator(".js-plotly-plot")
    assert figures.count() == built.count('class="plotly-graph-div"'), "not every figure of the page was drawn"
    return figures


@pytest.mark.parametrize("page", toc_pages(), ids=lambda p: p.stem)
def test_page_loads_cleanly_and_draws_every_figure(site, browser, page):
    with Visit(browser, _url(site, page)) as v:
        figures = _figures(v, page)
        for i in range(figures.count()):
            fig = figures.nth(i)
            assert fig.locator(".main-svg").count() >= 1, f"figure {i} not drawn"
            assert fig.locator(".scatterlayer .trace, .barlayer .trace").count() >= 1, f"figure {i} has no traces"
        math = v.page.locator(".math")
        if math.count():
            v.page.wait_for_function("() => document.querySelectorAll('mjx-container').length > 0", timeout=10_000)
        SHOTS.mkdir(parents=True, exist_ok=True)
        # a window as tall as the page, and time for the figures to follow the resize, so that the
        # screenshot does not catch them mid-redraw
        v.page.set_viewport_size({"width": 1300, "height": v.page.evaluate("document.documentElement.scrollHeight")})
        v.page.wait_for_timeout(500)
        v.page.screenshot(path=str(SHOTS / f"{page.stem}.png"), full_page=True)


def _drawn(fig) -> str:
    return fig.locator(".cartesianlayer").inner_html()


@pytest.mark.parametrize("page", toc_pages(), ids=lambda p: p.stem)
def test_every_slider_and_dropdown_changes_what_is_drawn(site, browser, page):
    with Visit(browser, _url(site, page)) as v:
        figures = _figures(v, page)
        for i in range(figures.count()):
            fig = figures.nth(i)
            fig.scroll_into_view_if_needed()
            rail = fig.locator(".slider-rail-rect")
            if rail.count():
                box = rail.first.bounding_box()
                grip = fig.locator(".slider-grip-rect").first.bounding_box()
                far = 0.05 if grip["x"] + grip["width"] / 2 > box["x"] + box["width"] / 2 else 0.95
                before = _drawn(fig)
                for frac in (far, 1 - far):  # the end away from the active step first, then the other
                    v.page.mouse.click(box["x"] + box["width"] * frac, box["y"] + box["height"] / 2)
                    v.page.wait_for_timeout(150)
                    after = _drawn(fig)
                    assert after != before, f"figure {i}: moving the slider did not change the plot"
                    before = after
            if fig.locator(".updatemenu-header").count():
                before = _drawn(fig)
                fig.locator(".updatemenu-header").first.click()
                buttons = fig.locator(".updatemenu-dropdown-button")
                assert buttons.count() >= 2
                buttons.nth(buttons.count() - 1).click()
                v.page.wait_for_timeout(150)
                assert _drawn(fig) != before, f"figure {i}: choosing in the dropdown did not change the plot"
