"""Math drawn when the book is built: every formula becomes an SVG (with a hidden MathML copy for
screen readers) made by MathJax, the npm package ``make setup`` installs, run by node. A page with
math then loads no script and no font for it (MathJax in the browser cost 1.2 MB a first visit).

Registered as Sphinx's HTML math renderer ``svg``; the HTML around each formula (the ``math``
classes, equation numbers and their links) is the same as sphinx.ext.mathjax writes. Each SVG
comes with the glyphs it draws; a page's formulas then share one copy of each glyph
(``share_glyphs``), as MathJax's own global font cache does in a browser."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from docutils import nodes
from sphinx.locale import _
from sphinx.util import logging
from sphinx.util.math import get_node_equation_number

SCRIPT = Path(__file__).resolve().parent / "site" / "tex2svg.js"
STYLESHEET = "mathjax-svg.css"
logger = logging.getLogger(__name__)


class TexToSvg:
    """One node process for a whole build, asked one formula at a time; answers are remembered."""

    def __init__(self, mathjax_root: Path):
        self.root, self.proc, self.done = Path(mathjax_root), None, {}

    def _ask(self, request: dict) -> dict:
        if self.proc is None:
            self.proc = subprocess.Popen(["node", str(SCRIPT), str(self.root)], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, text=True, encoding="utf-8")
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline() or '{"error": "MathJax stopped"}')

    def __call__(self, tex: str, display: bool) -> str:
        key = (tex, display)
        if key not in self.done:
            answer = self._ask({"tex": tex, "display": display})
            if "error" in answer or "data-mjx-error" in answer["svg"]:
                raise ValueError(f"MathJax cannot draw {tex!r}: {answer.get('error') or 'a TeX error'}")
            self.done[key] = answer["svg"]
        return self.done[key]

    def stylesheet(self) -> str:
        """The CSS that MathJax's SVGs need (in a browser MathJax adds it itself)."""
        return self._ask({"css": True})["css"]

    def close(self) -> None:
        if self.proc is not None:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)
            self.proc = None


_GLYPH = re.compile(r'<path id="MJX-\d+-(TEX-[^"]+)" d="([^"]*)"></path>')
_GLYPH_REF = re.compile(r'"#MJX-\d+-(TEX-[^"]+)"')
_DEFS = re.compile(r"<defs>(.*?)</defs>", re.S)


def share_glyphs(body: str) -> str:
    """``body`` with each glyph drawn once, in a hidden SVG at its start, and every formula pointing to it."""
    glyphs = dict(_GLYPH.findall(body))
    if not glyphs:
        return body
    body = _DEFS.sub(lambda m: "<defs>" + _GLYPH.sub("", m.group(1)) + "</defs>", body).replace("<defs></defs>", "")
    body = _GLYPH_REF.sub(r'"#MJX-G-\1"', body)
    shared = "".join(f'<path id="MJX-G-{name}" d="{d}"></path>' for name, d in sorted(glyphs.items()))
    return f'<svg style="display: none;" aria-hidden="true"><defs>{shared}</defs></svg>\n' + body


def _page_glyphs(app, pagename, templatename, context, doctree) -> None:
    if "body" in context:
        context["body"] = share_glyphs(context["body"])


def _svg(self, node, tex: str, display: bool) -> str:
    try:
        return self.builder.app.inferlimits_tex_to_svg(tex, display)
    except ValueError as e:
        logger.warning(str(e), location=node)
        return self.encode(tex)


def visit_math(self, node: nodes.math) -> None:
    self.body.append(self.starttag(node, "span", "", CLASS="math notranslate nohighlight"))
    self.body.append(_svg(self, node, node.astext(), False) + "</span>")
    raise nodes.SkipNode


def visit_displaymath(self, node: nodes.math_block) -> None:
    self.body.append(self.starttag(node, "div", CLASS="math notranslate nohighlight"))
    if node["nowrap"]:
        tex = node.astext()
    else:
        if node["number"]:
            self.body.append(f'<span class="eqno">({get_node_equation_number(self, node)})')
            self.add_permalink_ref(node, _("Link to this equation"))
            self.body.append("</span>")
        # as sphinx.ext.mathjax: parts split by blank lines are aligned, a part with \\ is split
        parts = [p for p in node.astext().split("\n\n") if p.strip()]
        parts = [r"\begin{split}" + p + r"\end{split}" if r"\\" in p else p for p in parts]
        tex = r"\\".join(parts)
        if len(parts) > 1:
            tex = r"\begin{align}\begin{aligned}" + tex + r"\end{aligned}\end{align}"
    # a display formula wider than the column scrolls: it can take focus, to scroll from the keyboard
    svg = _svg(self, node, tex, True).replace('<mjx-container class="MathJax" jax="SVG" display="true"',
                                              '<mjx-container class="MathJax" jax="SVG" display="true" tabindex="0"', 1)
    self.body.append(svg + "</div>\n")
    raise nodes.SkipNode


def setup(app, mathjax_root) -> None:
    """Register the renderer; ``mathjax_root(app)`` is where the npm package ``mathjax`` lies."""
    app.add_html_math_renderer("svg", (visit_math, None), (visit_displaymath, None))
    app.add_css_file(STYLESHEET)

    def start(app) -> None:
        app.inferlimits_tex_to_svg = TexToSvg(mathjax_root(app))

    def stop(app, exception) -> None:
        if exception is None and app.builder.format == "html":
            static = Path(app.outdir) / "_static"
            static.mkdir(parents=True, exist_ok=True)
            (static / STYLESHEET).write_text(app.inferlimits_tex_to_svg.stylesheet(), encoding="utf-8")
        app.inferlimits_tex_to_svg.close()

    app.connect("builder-inited", start)
    app.connect("html-page-context", _page_glyphs)
    app.connect("build-finished", stop)
