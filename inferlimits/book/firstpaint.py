"""What a page waits for before it can paint: as little as possible (issue 34).

A chapter opened on a phone (4x slower CPU, 1.6 Mbit/s, 150 ms round trips) used to wait for
eleven stylesheets, one of them loading a twelfth (``@import``), and six scripts in its head,
each a round trip on a connection that fetches only a few at once. After the build, every written
page is changed so (``tidy_site``; each change finds nothing to change the second time):

- **Stylesheets:** three, fetched at once, none loading another: the theme's two, Sphinx's
  ``basic.css`` (which the theme's ``theme.css`` imported; now ``theme.css`` holds it, cut) and the
  theme's own (already cut, ``purgecss``); and one bundle of every extension's stylesheet the page
  links (pygments, sphinx-book-theme, togglebutton, copybutton, myst-nb, thebe, sphinx-exercise,
  the book's equations and ``book.css``, sphinx-design where it is used), merged in their order
  and cut to the rules the site can use (``purgecss.purge``, as the theme's stylesheet is). Pages
  linking the same stylesheets share one bundle, ``_static/styles-<hash of their names>.css``,
  linked with ``?v=<hash of its content>``. (The theme's stylesheet stays apart, so that the
  browser tests can still swap in the theme's whole stylesheet and compare the pages.)
- **Scripts:** none blocks the page any longer: every script the page loads is deferred (it runs,
  in order, once the page is parsed, as all of them wait for that anyway), and
  ``documentation_options.js``, which the small inline settings after it extend, is written into
  the page. The theme's ``preload`` of its two deferred scripts is dropped: it fetched them
  ahead of the stylesheets the first paint needs.
- Layout (``book.css``, ``sitepages.LOADED``): until the page has loaded, its sections away from
  the screen are not laid out (``content-visibility: auto``), those with figures excepted.
- plotly.js is not loaded with the page at all: ``sitepages`` declares it in a ``<template>``
  and ``figures.js`` loads it when a figure comes near the screen (or the page is printed), and
  draws the others once the page has loaded.

The bundles' sources are recorded beside the build (``<outdir>/../.inferlimits-stylesheets.json``),
so that a page an incremental build did not write again still finds its bundle cut anew."""
from __future__ import annotations

import hashlib
import json
import posixpath
import re
from pathlib import Path

from inferlimits.book.purgecss import purge, site_classes

STATIC = "_static"
#: the theme's first stylesheet, which only imports Sphinx's basic.css
THEME_IMPORTS = Path("_static/styles/theme.css")
#: a stylesheet Sphinx links for itself or for an extension (``app.add_css_file``)
_STYLESHEET = re.compile(r'[ \t]*<link rel="stylesheet" type="text/css" href="((?:\.\./)*)_static/([^"?]+)(?:\?[^"]*)?" />\n?')
BUNDLE = re.compile(r"styles-[0-9a-f]{10}\.css")
_BUNDLE_LINK = re.compile(r'(<link rel="stylesheet" type="text/css" href="(?:\.\./)*_static/)(styles-[0-9a-f]{10}\.css)'
                          r'(?:\?v=[0-9a-f]*)?(" />)')
_IMPORT = re.compile(r'@import\s+(?:url\()?["\']?([^"\')]+)["\']?\)?\s*;')
_CHARSET = re.compile(r'@charset\s+"[^"]*";')
_URL = re.compile(r'url\(\s*(["\']?)([^"\')]+)\1\s*\)')
#: scripts: Sphinx's settings, inline; every other script deferred; no preload of deferred scripts
_OPTIONS = re.compile(r'<script src="((?:\.\./)*)_static/documentation_options\.js(?:\?[^"]*)?"></script>')
_BLOCKING = re.compile(r'<script src="([^"]+)"></script>')
_PRELOAD = re.compile(r'\s*<link rel="preload" as="script" href="[^"]*" />')


def _rebase(css: str, source: str, target: str) -> str:
    """``css`` read from ``source`` (a path under the site) with its relative ``url()``s pointing
    at the same files from ``target``."""
    def one(m):
        url = m.group(2)
        if re.match(r"^(?:[a-z][a-z0-9+.-]*:|/|#)", url, re.I):
            return m.group(0)
        moved = posixpath.relpath(posixpath.normpath(posixpath.join(posixpath.dirname(source), url)),
                                  posixpath.dirname(target))
        return f"url({m.group(1)}{moved}{m.group(1)})"
    return _URL.sub(one, css)


def merged(outdir: Path, sources: list[str], target: str, classes: set[str] | None) -> str:
    """The stylesheets ``sources`` (paths under ``_static``), in order, as one stylesheet at
    ``target``, cut to the rules that can match ``classes`` (whole for None)."""
    parts = []
    for source in sources:
        path = f"{STATIC}/{source}"
        css = _CHARSET.sub("", (Path(outdir) / path).read_text(encoding="utf-8"))
        if _IMPORT.search(css):
            raise ValueError(f"{path} imports another stylesheet; merge it instead")
        parts.append(f"/* {source} */\n{_rebase(css, path, target)}\n")
    css = "".join(parts)
    return '@charset "UTF-8";\n' + (css if classes is None else purge(css, classes))


def bundle_name(sources: list[str]) -> str:
    return f"styles-{hashlib.sha256(' '.join(sources).encode()).hexdigest()[:10]}.css"


def _manifest(outdir: Path) -> Path:
    return Path(outdir).parent / ".inferlimits-stylesheets.json"


def theme_imports(outdir: Path, classes: set[str]) -> None:
    """``theme.css`` with what it imports written into it (Sphinx's basic.css), cut."""
    path = Path(outdir) / THEME_IMPORTS
    css = path.read_text(encoding="utf-8")
    found = _IMPORT.findall(css)
    if not found:
        return
    at = THEME_IMPORTS.as_posix()
    sources = [posixpath.relpath(posixpath.normpath(posixpath.join(posixpath.dirname(at), f)), STATIC) for f in found]
    path.write_text(merged(outdir, sources, at, classes), encoding="utf-8")


def page_styles(page: str) -> tuple[str, list[str]]:
    """``page`` with the stylesheets Sphinx links (after the theme's own) replaced by the link to
    their bundle, and the bundle's sources; the page as it is, and no sources, when there are none."""
    found = list(_STYLESHEET.finditer(page))
    sources = [m.group(2) for m in found if not BUNDLE.fullmatch(m.group(2))]
    if not sources:
        return page, []
    if len(sources) < len(found):
        raise ValueError("a page links both a bundle and the stylesheets it merges")
    name = bundle_name(sources)
    first = found[0]
    link = f'    <link rel="stylesheet" type="text/css" href="{first.group(1)}{STATIC}/{name}" />\n'
    out = [page[:first.start()], link]
    for before, after in zip(found, found[1:] + [None]):
        out.append(page[before.end():after.start() if after else len(page)])
    return "".join(out), sources


def page_scripts(page: str, options: str) -> str:
    """``page`` with no script blocking it: Sphinx's ``documentation_options.js`` (``options``)
    written in, every other script deferred, the theme's preloads dropped."""
    page = _OPTIONS.sub(lambda m: f"<script>{options.strip()}</script>", page)
    page = _BLOCKING.sub(r'<script defer src="\1"></script>', page)
    return _PRELOAD.sub("", page)


def tidy_site(outdir: Path) -> dict[str, list[str]]:
    """Apply all of the above to every page under ``outdir``; the bundles written, with their sources."""
    outdir = Path(outdir)
    classes = site_classes(outdir)
    theme_imports(outdir, classes)
    manifest = _manifest(outdir)
    known = json.loads(manifest.read_text(encoding="utf-8")) if manifest.exists() else {}
    options = (outdir / STATIC / "documentation_options.js").read_text(encoding="utf-8")
    pages, bundles = {}, {}
    for path in sorted(p for p in outdir.rglob("*.html") if p.relative_to(outdir).parts[0] != STATIC):
        text = path.read_text(encoding="utf-8")
        page, sources = page_styles(page_scripts(text, options))
        if sources:
            bundles[bundle_name(sources)] = sources
        for name in (m.group(2) for m in _BUNDLE_LINK.finditer(page)):
            if name not in bundles:
                if name not in known:
                    raise FileNotFoundError(f"{path}: links {name}, whose stylesheets are not recorded in "
                                            f"{manifest}; build the site afresh")
                bundles[name] = known[name]
        pages[path] = (text, page)
    versions = {}
    for name, sources in sorted(bundles.items()):
        css = merged(outdir, sources, f"{STATIC}/{name}", classes)
        (outdir / STATIC / name).write_text(css, encoding="utf-8")
        versions[name] = hashlib.sha256(css.encode()).hexdigest()[:10]
    for path, (text, page) in pages.items():
        page = _BUNDLE_LINK.sub(lambda m: f"{m.group(1)}{m.group(2)}?v={versions[m.group(2)]}{m.group(3)}", page)
        if page != text:
            path.write_text(page, encoding="utf-8")
    manifest.write_text(json.dumps(bundles, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return bundles
