"""The theme's stylesheet cut to the rules the site can use.

pydata-sphinx-theme's stylesheet (about 311 kB, loaded by every first visit) holds all of
Bootstrap: carousels, toasts, form controls, spinners and the rest, which no page of the book
shows. After the build, a rule is kept when, for at least one of its selectors, every class the
selector names can occur: it is in the ``class`` attribute of a written page, or it is a word in
one of the site's scripts (scripts add classes as they run: Bootstrap's dropdowns and tooltips,
the theme's, togglebutton, the book's figures.js). Rules that name no class (elements, attributes,
``:root`` properties) are kept, and so are ``@font-face``, ``@keyframes`` and the other at-rules
without nested rules; ``@media`` and ``@supports`` blocks are cut rule by rule, and dropped when
nothing is left in them. Licence comments (``/*! ... */``) stay."""
from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

THEME_CSS = Path("_static/styles/pydata-sphinx-theme.css")
#: at-rules whose blocks hold rules with selectors (the others hold declarations or keyframes)
NESTED = ("@media", "@supports", "@container", "@layer")
_CLASS = re.compile(r"\.(-?[_a-zA-Z][\w-]*)")
_CLASS_ATTR = re.compile(r'class="([^"]*)"')
_WORD = re.compile(r"[A-Za-z_][\w-]*")
_NOT = re.compile(r":not\([^)]*\)")
_COMMENT = re.compile(r"/\*(?!!).*?\*/", re.S)


def page_classes(pages: Iterable[str]) -> set[str]:
    return {c for page in pages for attr in _CLASS_ATTR.findall(page) for c in attr.split()}


def script_words(scripts: Iterable[str]) -> set[str]:
    return {w for s in scripts for w in _WORD.findall(s)}


def _block_end(css: str, start: int) -> int:
    """The index just after the ``}`` closing the block whose ``{`` is at ``start``."""
    depth, i = 0, start
    while i < len(css):
        c = css[i]
        if c in "\"'":
            i = css.index(c, i + 1)
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ValueError("css: a block is not closed")


def _selector_can_match(selector: str, classes: set[str]) -> bool:
    """Whether every class ``selector`` requires can occur (a class under ``:not()`` is not required)."""
    return all(c in classes for c in _CLASS.findall(_NOT.sub("", selector)))


def purge(css: str, classes: set[str]) -> str:
    """``css`` with the rules removed whose every selector names a class outside ``classes``."""
    css = _COMMENT.sub("", css)
    out, i = [], 0
    while i < len(css):
        brace = css.find("{", i)
        if brace < 0:
            out.append(css[i:])
            break
        prelude = css[i:brace]
        end = _block_end(css, brace)
        head = prelude.strip()
        if head.startswith("@"):
            if head.startswith(NESTED):
                inner = purge(css[brace + 1:end - 1], classes)
                if inner.strip():
                    out.append(f"{prelude}{{{inner}}}")
            else:
                out.append(css[i:end])
        elif any(_selector_can_match(s, classes) for s in prelude.split(",")):
            out.append(css[i:end])
        i = end
    return "".join(out)


def site_classes(outdir: Path) -> set[str]:
    """The classes that can occur on the site under ``outdir``: those of its pages' ``class``
    attributes, and the words of its scripts."""
    outdir = Path(outdir)
    classes = page_classes(p.read_text(encoding="utf-8") for p in outdir.rglob("*.html"))
    return classes | script_words(p.read_text(encoding="utf-8", errors="replace")
                                  for p in (outdir / "_static").rglob("*.js"))


def purge_site(outdir: Path) -> tuple[int, int]:
    """Cut the theme's stylesheet under ``outdir`` to the rules its pages and scripts can use;
    its size before and after, in bytes."""
    outdir = Path(outdir)
    path = outdir / THEME_CSS
    css = path.read_text(encoding="utf-8")
    cut = purge(css, site_classes(outdir))
    path.write_text(cut, encoding="utf-8")
    return len(css.encode()), len(cut.encode())
