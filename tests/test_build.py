"""The built book (``make book`` writes _build/html before the tests run): every chapter page
holds its figures, and every script the site runs is served by the site itself."""
from __future__ import annotations

import json
import re

import pytest

from inferlimits.book import ROOT, notebooks, toc_pages

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
        assert f'id="{fig}"' in html and re.search(rf'Plotly\.newPlot\(\s*"{re.escape(fig)}"', html), \
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
    assert "_static/plotly.min.js" in html
    if 'class="math' in html:
        assert "_static/mathjax/tex-chtml.js" in html


@pytest.mark.parametrize("nb", notebooks(), ids=lambda p: p.stem)
def test_no_widget_state_is_embedded(nb):
    html = _page(nb).read_text(encoding="utf-8")
    assert "application/vnd.jupyter.widget-state+json" not in html
    assert "application/vnd.jupyter.widget-view+json" not in html


def test_mathjax_fonts_are_served():
    assert list((HTML / "_static" / "mathjax" / "output" / "chtml" / "fonts" / "woff-v2").glob("*.woff"))
