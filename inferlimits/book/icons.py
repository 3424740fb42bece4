"""The theme's icon font, cut to the icons the site shows.

pydata-sphinx-theme ships Font Awesome whole: a stylesheet rule per icon (about 1,900, 86 kB) and
fonts of about 1,400 glyphs (the solid one alone 156 kB, loaded by every first visit). After the
build, the icons in use are read from the written pages (``fa-*`` classes) and from the theme's
own ``--pst-icon-*`` properties (admonitions, external links); the stylesheet keeps only their
rules and each font only their glyphs (fontTools). A page that used an icon the subset lacks
would show an empty box: the browser tests compare the icons on every page with the subset."""
from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

THEME_CSS = Path("_static/styles/pydata-sphinx-theme.css")
FONTS = Path("_static/vendor/fontawesome/webfonts")
#: ``.fa-bars:before,.fa-navicon:before{content:"\f0c9"}``
ICON_RULE = re.compile(r'((?:\.fa-[a-z0-9-]+:(?:before|after),?)+)\{content:"([^"]+)"\}')
_NAME = re.compile(r"\.fa-([a-z0-9-]+):")
_CLASS_ATTR = re.compile(r'class="([^"]*)"')
_PST_ICON = re.compile(r'--pst-icon-[a-z-]+:"([^"]+)"')


def used_icons(pages: Iterable[str]) -> set[str]:
    """Names of the ``fa-*`` classes the pages use (``fa-bars`` -> ``bars``)."""
    return {c[3:] for page in pages for attr in _CLASS_ATTR.findall(page) for c in attr.split()
            if c.startswith("fa-")}


def _char(value: str) -> int:
    """A CSS content value of one character: ``\\f0c9`` or the character itself."""
    return int(value[1:], 16) if value.startswith("\\") else ord(value)


def codepoints(css: str, names: set[str]) -> set[int]:
    """The characters the icons ``names`` draw, and those of the theme's own icon properties."""
    chars = {_char(v) for v in _PST_ICON.findall(css)}
    for rule in ICON_RULE.finditer(css):
        if names & set(_NAME.findall(rule.group(1))):
            chars.add(_char(rule.group(2)))
    return chars


#: ``content: "\\f303"``: an icon an extension's stylesheet draws by its character (sphinx-exercise's pencil)
_ICON_CONTENT = re.compile(r'content:\s*"(\\[eEfF][0-9a-fA-F]{3})"')


def extension_icons(stylesheets: Iterable[str]) -> set[int]:
    """The icon characters (Unicode's private use area, where Font Awesome puts its glyphs) that
    other stylesheets draw directly, without an ``fa-*`` class."""
    return {_char(v) for css in stylesheets for v in _ICON_CONTENT.findall(css)}


def purge_rules(css: str, names: set[str]) -> str:
    """``css`` without the rules of icons no page uses."""
    return ICON_RULE.sub(lambda m: m.group(0) if names & set(_NAME.findall(m.group(1))) else "", css)


def subset_font(path: Path, chars: set[int]) -> None:
    """Keep only ``chars`` in the font at ``path`` (woff2 or ttf), in place."""
    from fontTools import subset

    options = subset.Options()
    options.flavor = "woff2" if path.suffix == ".woff2" else None
    font = subset.load_font(str(path), options)
    sub = subset.Subsetter(options)
    sub.populate(unicodes=chars)
    sub.subset(font)
    subset.save_font(font, str(path), options)


def subset_site(outdir: Path) -> set[int]:
    """Cut the stylesheet and fonts under ``outdir`` to the icons its pages use; the characters kept."""
    outdir = Path(outdir)
    css_path = outdir / THEME_CSS
    css = css_path.read_text(encoding="utf-8")
    names = used_icons(p.read_text(encoding="utf-8") for p in outdir.rglob("*.html"))
    # the extensions' stylesheets, and the themes' others (sphinx-book-theme's draws a caret by its
    # character), which firstpaint merges into each page's bundle
    sheets = [*(outdir / "_static").glob("*.css"),
              *(p for p in (outdir / THEME_CSS.parent).glob("*.css") if p.name != THEME_CSS.name)]
    chars = codepoints(css, names) | extension_icons(p.read_text(encoding="utf-8") for p in sheets)
    css_path.write_text(purge_rules(css, names), encoding="utf-8")
    for font in sorted((outdir / FONTS).glob("*")):
        if font.suffix in (".woff2", ".ttf"):
            subset_font(font, chars)
    return chars
