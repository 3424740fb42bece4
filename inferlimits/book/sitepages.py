"""What each page of the hosted book loads, decided when it is built.

- Figures: each ``Plotly.newPlot`` call a chapter's output holds becomes a JSON block
  (``<script type="application/json" class="il-figure-data">``) with the config of
  ``display.PLOTLY_CONFIG``, which the site's ``figures.js`` draws, names, describes, tabulates
  and gives keyboard controls. A page with figures gets figures.js, deferred at the end of the
  body, and declares plotly.js (the partial bundle) there in a ``<template>``, inert: figures.js
  loads it when a figure comes near the screen or the page is printed, and once the page has
  loaded draws the other figures, one at a time while the browser is idle; until a figure is
  drawn, its place shows its title and what it plots. First paint and the page's load never wait
  for plotly.js; a page without figures loads neither.
- Tables: a page holding a long table marked ``il-sortable`` (the runs of appendix A3) gets
  ``tables.js``, deferred at the end of the body, which adds a filter and sortable columns to it.
- Layout: every page marks itself loaded (``LOADED``), until which ``book.css`` leaves the
  sections away from the screen unlaid (``content-visibility``), those with figures excepted.
- Assets a page does not use are left out: sphinx-design's stylesheet and script where no
  sphinx-design component is on the page, and, from the written pages (``tidy_theme``), the
  theme's hard-coded icon script (fontawesome.js, 1.5 MB: the theme's stylesheet already draws
  the icons with the icon font) and the search index on pages other than the search page (the
  theme's search box sends readers to that page; ``search_as_you_type`` is off).
- Names that hide what a control shows: myst-nb names every ``summary`` "Toggle hidden
  content" (its visible text says "Show the imports"), the theme names its search button
  "Search" (it shows "Search Ctrl+K"); the labels are dropped, so the visible text names them.
  A bibliography's entries become list items of its list (docutils marks them
  ``doc-biblioentry``, which a ``role="list"`` may not hold).
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from inferlimits.figures.display import PLOTLY_CONFIG
from inferlimits.figures.plotlyhtml import plot_calls

FIGURE_SCRIPTS = ("plotly-basic.min.js", "figures.js")
FIGURE_DATA = "il-figure-data"
#: the script that makes marked tables sortable and filterable, and the mark it looks for
TABLE_SCRIPT = "tables.js"
_SORTABLE = re.compile(r'<table class="(?:[^"]* )?il-sortable[ "]')
#: the ``<template>`` that declares plotly.js for figures.js to load when a figure needs it
PLOTLY_TEMPLATE = "il-plotly"
DESIGN_ASSETS = ("sphinx-design.min.css", "design-tabs.js")
#: marks the page loaded (``<html data-loaded>``): book.css lays out the sections away from the
#: screen only then, so that the first screen does not wait for the whole chapter's layout
LOADED = '\n<script>addEventListener("load", () => { document.documentElement.dataset.loaded = ""; });</script>'
#: what the theme's templates write into every page and the site leaves out: pattern, replacement,
#: and the pages that keep it
THEME_FIXES = (
    (re.compile(r'\s*<script[^>]*src="[^"]*_static/scripts/fontawesome\.js[^"]*"[^>]*></script>'), "", ()),
    (re.compile(r'\s*<script src="[^"]*(?:searchtools|language_data|searchindex)\.js"></script>'), "",
     ("search.html",)),
    (re.compile(r'(<button class="btn search-button-field[^"]*" title="Search") aria-label="Search"'), r"\1", ()),
)
_DESIGN_USED = re.compile(r'class="(?:[^"]* )?sd-')
#: in a page's body: what upstream packages write, and what the site serves instead
BODY_FIXES = (('<summary aria-label="Toggle hidden content">', "<summary>"),   # myst-nb
              # docutils: a citation in a role="list" must be a list item for assistive technology
              ('class="citation" id="', 'role="listitem" class="citation" id="'),
              ('" role="doc-biblioentry">', '">'),
              # sphinx-exercise gives every exercise's and solution's body the same id
              ('<section id="exercise-content">', '<section class="exercise-content">'),
              ('<section id="solution-content">', '<section class="solution-content">'))


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
                f'<script type="application/json" class="{FIGURE_DATA}" data-for="{call.div_id}">{_json(spec)}</script>']
        pos, n = end, n + 1
    return "".join(out) + body[pos:], n


def _filename(asset) -> str:
    return Path(str(getattr(asset, "filename", asset) or "").split("?")[0]).name


def page_assets(app, pagename, templatename, context, doctree) -> None:
    """html-page-context: figures as data, their scripts, unused assets dropped (lists in place:
    they are the builder's own)."""
    body = context.get("body", "")
    body, figures = figure_data(body)
    for old, new in BODY_FIXES:
        body = body.replace(old, new)
    body += LOADED
    if figures:
        plotly, script = (context["pathto"]("_static/" + s, 1) for s in FIGURE_SCRIPTS)
        body += (f'\n<template class="{PLOTLY_TEMPLATE}"><script defer src="{plotly}"></script></template>'
                 f'\n<script defer src="{script}"></script>')
    if _SORTABLE.search(body):
        body += f'\n<script defer src="{context["pathto"]("_static/" + TABLE_SCRIPT, 1)}"></script>'
    context["body"] = body
    if not _DESIGN_USED.search(body):
        for key in ("css_files", "script_files"):
            context[key][:] = [a for a in context.get(key, []) if _filename(a) not in DESIGN_ASSETS]


def tidy_theme(outdir: Path) -> None:
    """Apply THEME_FIXES to every written page (each fix finds nothing the second time)."""
    for page in Path(outdir).rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        trimmed = text
        for pattern, replacement, keep in THEME_FIXES:
            if page.name not in keep:
                trimmed = pattern.sub(replacement, trimmed)
        if trimmed != text:
            page.write_text(trimmed, encoding="utf-8")
