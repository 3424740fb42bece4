"""What each page of the hosted book loads, decided when it is built.

- Figures: each ``Plotly.newPlot`` call a chapter's output holds becomes a JSON block
  (``<script type="application/json" class="il-figure">``) with the config of
  ``display.PLOTLY_CONFIG``, which the site's ``figures.js`` draws, names, describes, tabulates
  and gives keyboard controls. A page with figures gets plotly.js (the partial bundle) and
  figures.js, both deferred at the end of the body, so first paint never waits for them; a page
  without figures loads neither.
- Assets a page does not use are left out: sphinx-design's stylesheet and script where no
  sphinx-design component is on the page, and, from the written pages, the theme's hard-coded
  icon script (fontawesome.js, 1.5 MB: the theme's stylesheet already draws the icons with the
  icon font) and the search index on pages other than the search page (the theme's search box
  sends readers to that page; ``search_as_you_type`` is off).
- Notebook toggles: myst-nb names every ``summary`` "Toggle hidden content", hiding its visible
  text ("Show the imports") from screen readers; the label is dropped.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from .display import PLOTLY_CONFIG
from .plotlyhtml import plot_calls

FIGURE_SCRIPTS = ("plotly-basic.min.js", "figures.js")
FIGURE_CLASS = "il-figure"
DESIGN_ASSETS = ("sphinx-design.min.css", "design-tabs.js")
#: scripts the theme writes into every page's template, and the pages that keep them
THEME_SCRIPTS = {re.compile(r'\s*<script[^>]*src="[^"]*_static/scripts/fontawesome\.js[^"]*"[^>]*></script>'): (),
                 re.compile(r'\s*<script src="[^"]*(?:searchtools|language_data|searchindex)\.js"></script>'):
                     ("search.html",)}
_DESIGN_USED = re.compile(r'class="(?:[^"]* )?sd-')
_SUMMARY = '<summary aria-label="Toggle hidden content">'


def _json(value) -> str:
    """JSON that is safe inside a ``<script>`` element."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).replace("</", "<\\/")


def figure_data(body: str) -> tuple[str, int]:
    """``body`` with each figure's drawing script replaced by its JSON; and how many figures."""
    out, pos, n = [], 0, 0
    for call in plot_calls(body):
        start = body.rindex("<script", 0, call.start)
        end = body.index("</script>", call.end) + len("</script>")
        spec = {"data": call.data, "layout": call.layout, "config": {**call.config, **PLOTLY_CONFIG}}
        out += [body[pos:start],
                f'<script type="application/json" class="{FIGURE_CLASS}" data-for="{call.div_id}">{_json(spec)}</script>']
        pos, n = end, n + 1
    return "".join(out) + body[pos:], n


def _filename(asset) -> str:
    return Path(str(getattr(asset, "filename", asset) or "").split("?")[0]).name


def page_assets(app, pagename, templatename, context, doctree) -> None:
    """html-page-context: figures as data, their scripts, unused assets dropped (lists in place:
    they are the builder's own)."""
    body = context.get("body", "")
    body, figures = figure_data(body)
    body = body.replace(_SUMMARY, "<summary>")
    if figures:
        body += "".join(f'\n<script defer src="{context["pathto"]("_static/" + s, 1)}"></script>'
                        for s in FIGURE_SCRIPTS)
    context["body"] = body
    if not _DESIGN_USED.search(body):
        for key in ("css_files", "script_files"):
            context[key][:] = [a for a in context.get(key, []) if _filename(a) not in DESIGN_ASSETS]


def trim_theme_scripts(outdir: Path) -> None:
    """Drop from every written page the theme's scripts it does not need (see THEME_SCRIPTS)."""
    for page in Path(outdir).rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        trimmed = text
        for pattern, keep in THEME_SCRIPTS.items():
            if page.name not in keep:
                trimmed = pattern.sub("", trimmed)
        if trimmed != text:
            page.write_text(trimmed, encoding="utf-8")
