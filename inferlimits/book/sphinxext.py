"""Sphinx extension for the book.

- Serve from the site itself (never a CDN) plotly.js, as the partial bundle of the npm package
  ``plotly.js-basic-dist-min`` (config value ``inferlimits_plotly_js``), and the book's own
  ``figures.js``, ``tables.js`` and ``book.css`` (``inferlimits/book/site``); which page loads what is decided in
  ``sitepages``. Math is drawn as SVG when the book is built (``mathsvg``), by the npm package
  ``mathjax`` (``inferlimits_mathjax_dir``); the theme's icon font is cut to the icons in use
  (``icons``), and its stylesheet to the rules the pages can use (``purgecss``); every page waits
  for as little as it can before its first paint (``firstpaint``: the extensions' stylesheets
  merged into one and cut, no script blocking it, plotly.js loaded when a figure comes near). ``make setup`` installs the npm packages into ``.venv/npm``.
- Navigation on every width: pydata-sphinx-theme's header (a second search box, and a second pair
  of sidebar toggles, which both themes' scripts take for the only one, so the visible toggles
  of sphinx-book-theme did nothing) is left empty (``navbar_persistent = []``).
- Execute only the chapters that measure the machine building the book (chapter 13): every other
  chapter is shown with its committed outputs, which the strict nbval run of ``make test``
  proves are what the code computes now (``make outputs`` refreshes them after a change), so a
  chapter is executed once per test run, not once for the build and again for nbval. The
  measuring chapters are re-executed when the package or its data change: jupyter-cache and
  Sphinx only notice changes to a notebook itself.
- Tidy what upstream packages put in every page: sphinx-thebe adds its inline settings script
  twice (a "THEBE_JS_URL has already been declared" console error), and pydata-sphinx-theme logs
  an error when no default colour mode is set.
- Launch buttons (Binder, Live Code with thebe, repository) for the repository the book is built
  from: ``BOOK_REPOSITORY_URL``, else GitHub Actions' ``GITHUB_REPOSITORY``, else the git remote
  ``origin``; with none of them (a local copy) the buttons are left out rather than pointing
  nowhere. Only these buttons reach the network, and only when clicked.
- Two editions: the full book, and with ``INFERLIMITS_EDITION=student`` (``make student``) the
  student edition, which leaves out every exercise's solution (sphinx-exercise's
  ``hide_solutions``) and the check cells tagged ``solution`` that print the answers' numbers,
  with no notebook sources and no launch or download buttons (the notebooks hold the solutions).
  It leaves out the pages for instructors only (``student.INSTRUCTOR_ONLY``): its table of contents
  is ``_toc.yml`` without them (``student.student_toc``, written beside the build), so they are
  neither built nor printed, and a reference another page makes to one of them shows as plain text
  (its title, then ``UNLINKED``), not as a link. The solution-free notebooks and the
  student branch are written by ``inferlimits.book.student`` (``make student``).
- The lab sheet (``student.LAB_SHEET``, in both editions): its marker line is replaced, as the page is
  read, by the labs of the course plan with Binder links to the student branch of the repository
  (``student.labs_markdown``); the page is read again on every build, since what it shows depends on
  the repository and the plan, not on its file.
- Drop the ipywidgets state that execution records: the hosted book has no kernel, shows each
  control panel's static figure instead, and would otherwise embed megabytes of widget code.
"""
from __future__ import annotations

import hashlib
import os
import posixpath
import re
import shutil
import subprocess
from pathlib import Path

from inferlimits.book import ROOT, UNPUBLISHED, firstpaint, icons, mathsvg, measures_this_machine, notebooks, purgecss, sitepages, student

PACKAGE = Path(__file__).resolve().parents[1]  # inferlimits/
SITE = Path(__file__).resolve().parent / "site"
SITE_FILES = ("figures.js", "tables.js", "book.css")
#: modules only the Sphinx build runs: no chapter's output depends on them
#: selects the edition the build writes: "full" (the default) or "student" (no solutions)
EDITION_ENV = "INFERLIMITS_EDITION"
EDITIONS = ("full", "student")
#: the tag of the check cells that state an exercise's answers
SOLUTION_TAG = student.SOLUTION_TAG
BUILD_ONLY = ("sphinxext.py", "sitepages.py", "mathsvg.py", "icons.py", "purgecss.py", "firstpaint.py", "plotlyhtml.py",
              "student.py")


def _npm_file(app, value: str, what: str) -> Path:
    found = Path(app.srcdir) / value
    if not found.exists():
        raise FileNotFoundError(f"{what} not found at {found}; run 'make setup', which installs the npm "
                                "packages of package-requirements.txt there (the site must not load it from a CDN)")
    return found


def _plotly_js(app) -> Path:
    return _npm_file(app, app.config.inferlimits_plotly_js, "plotly.js (partial bundle)")


def _mathjax_dir(app) -> Path:
    return _npm_file(app, app.config.inferlimits_mathjax_dir, "MathJax")


def _check_assets(app) -> None:
    if app.builder.format == "html":
        _plotly_js(app)
        _mathjax_dir(app)


def _copy_assets(app, exception) -> None:
    if exception is None:
        _stamp(app).write_text(package_digest())
    if exception is None and app.builder.format == "html":
        static = Path(app.outdir) / "_static"
        static.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(_plotly_js(app), static / sitepages.FIGURE_SCRIPTS[0])
        for name in SITE_FILES:
            shutil.copyfile(SITE / name, static / name)
        sitepages.tidy_theme(Path(app.outdir))
        icons.subset_site(Path(app.outdir))
        purgecss.purge_site(Path(app.outdir))


def _first_paint(app, exception) -> None:
    """After every other extension has written its stylesheets (pydata-sphinx-theme its
    pygments.css, myst-nb and sphinx-exercise theirs, at build-finished too)."""
    if exception is None and app.builder.format == "html":
        firstpaint.tidy_site(Path(app.outdir))


def package_digest() -> str:
    """A hash of the package's code and data, which every chapter's outputs depend on."""
    h = hashlib.sha256()
    for f in sorted(p for p in PACKAGE.rglob("*") if p.suffix in (".py", ".toml") and p.name not in BUILD_ONLY):
        h.update(f.relative_to(PACKAGE).as_posix().encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


def _stamp(app) -> Path:
    return Path(app.outdir).parent / ".inferlimits-digest"


def _invalidate_if_package_changed(app) -> None:
    stamp = _stamp(app)
    app.inferlimits_stale = not stamp.exists() or stamp.read_text() != package_digest()
    if app.inferlimits_stale:
        shutil.rmtree(Path(app.outdir).parent / ".jupyter_cache", ignore_errors=True)


def _outdated(app, env, added, changed, removed):
    """The lab sheet, always; and after a change to the package, the chapters the build executes
    (the others show their committed outputs, which the package does not change)."""
    sheet = [d for d in env.found_docs if d == student.LAB_SHEET and d not in added and d not in changed]
    if not getattr(app, "inferlimits_stale", False):
        return sheet
    executed = {nb.relative_to(ROOT).with_suffix("").as_posix() for nb in notebooks() if measures_this_machine(nb)}
    return sheet + [d for d in env.found_docs if d in executed and d not in added and d not in changed]


def _drop_widget_state(app, doctree) -> None:
    js_files = getattr(app.env, "nb_metadata", {}).get(app.env.docname, {}).get("js_files", {})
    for key in [k for k in js_files if k.startswith("ipywidgets")]:
        del js_files[key]


def _dedupe_scripts(app, pagename, templatename, context, doctree) -> None:
    seen, unique = set(), []
    for script in context.get("script_files", []):
        # the same inline script arrives once with filename None and once with ""
        key = (getattr(script, "filename", script) or "",
               tuple(sorted((k, str(v)) for k, v in getattr(script, "attributes", {}).items())))
        if key not in seen:
            seen.add(key)
            unique.append(script)
    # in place: the list is the builder's own, to which later handlers (MathJax) still append
    context["script_files"][:] = unique


def _execute_only_what_measures(app, config) -> None:
    committed = [nb.relative_to(ROOT).as_posix() for nb in notebooks() if not measures_this_machine(nb)]
    config.nb_execution_excludepatterns = [*config.nb_execution_excludepatterns, *committed]


def edition(env: dict | None = None) -> str:
    """The edition ``INFERLIMITS_EDITION`` asks for: "full" unless it says "student"."""
    value = (os.environ if env is None else env).get(EDITION_ENV) or EDITIONS[0]
    if value not in EDITIONS:
        raise ValueError(f"{EDITION_ENV} must be one of {EDITIONS}, not {value!r}")
    return value


def _edition(app, config) -> None:
    """The student edition: no solutions, and neither the notebooks' sources nor the buttons that
    open them (they hold the solutions)."""
    if edition() == "student":
        config.hide_solutions = True
        config.html_title = f"{config.html_title} (student edition)"
        config.html_copy_source = False
        config.html_theme_options.update(use_download_button=False)


def _student_toc(app, config) -> None:
    """The student edition's table of contents: ``_toc.yml`` without the pages for instructors
    only, written beside the build (sphinx-external-toc reads it after this, at priority 900, and
    excludes the pages it does not list, as ``only_build_toc_files`` asks)."""
    if edition() == "student":
        toc = student.write_student_toc(Path(app.outdir).parent / "_toc.student.yml", Path(app.srcdir))
        config.external_toc_path = str(toc)


#: what follows a reference to a page for instructors only, in the student edition
UNLINKED = "(a page of the full book)"


def _page_texts(srcdir: Path, docname: str) -> list[str]:
    """The Markdown of page ``docname``: of its notebook (its Markdown cells), then of its Markdown
    file, for each of the two that exists."""
    from inferlimits.book.course import markdown

    paths = [srcdir / f"{docname}{suffix}" for suffix in (".ipynb", ".md")]
    return [markdown(p) if p.suffix == ".ipynb" else p.read_text(encoding="utf-8") for p in paths if p.exists()]


def _page_title(srcdir: Path, docname: str) -> str:
    """The first heading of page ``docname`` (a notebook or a Markdown file), else its name."""
    for text in _page_texts(srcdir, docname):
        found = re.search(r"^# (.+)$", text, re.M)
        if found:
            return found.group(1).strip()
    return docname.rsplit("/", 1)[-1]


def _instructor_only_labels(srcdir: Path) -> dict[str, str]:
    """The labels the pages for instructors only define (``(label)=`` lines and ``:label:``
    options), each with its page."""
    out = {}
    for docname in student.INSTRUCTOR_ONLY:
        for text in _page_texts(srcdir, docname):
            for label in re.findall(r"^\((\S+)\)=\s*$|^:label: (\S+)", text, re.M):
                out[(label[0] or label[1]).lower()] = docname
    return out


def _instructor_only_target(node, labels: dict[str, str]) -> str | None:
    """The page for instructors only that a pending reference points to, if it does: a ``{doc}``
    role (its target relative to the page it stands in), a Markdown link to a page, or a ``{ref}``
    or ``{numref}`` to a label one of those pages defines (``labels``)."""
    if node.get("refdomain") == "std" and node.get("reftype") in ("ref", "numref"):
        return labels.get(node["reftarget"].lower())
    if node.get("refdomain") == "std" and node.get("reftype") == "doc":
        target = node["reftarget"]
        docname = target.lstrip("/") if target.startswith("/") else posixpath.normpath(
            posixpath.join(posixpath.dirname(node.get("refdoc", "")), target))
    elif node.get("reftype") == "myst" and node.get("refdomain") == "doc":
        docname = node["reftarget"]
    else:
        return None
    return docname if docname in student.INSTRUCTOR_ONLY else None


def _unlink_instructor_pages(app):
    """A Sphinx post-transform (priority 5, before Sphinx's and MyST's reference resolvers, 10 and
    9): in the student edition, a reference to a page for instructors only becomes plain text, its
    explicit title or the page's title in quotes, followed by ``UNLINKED``."""
    from docutils import nodes
    from sphinx import addnodes
    from sphinx.transforms.post_transforms import SphinxPostTransform

    class UnlinkInstructorPages(SphinxPostTransform):
        default_priority = 5

        def run(self, **kwargs) -> None:
            if edition() != "student":
                return
            labels = _instructor_only_labels(Path(self.app.srcdir))
            for node in list(self.document.findall(addnodes.pending_xref)):
                docname = _instructor_only_target(node, labels)
                if docname is None:
                    continue
                explicit = node.get("refexplicit", node.get("reftype") == "myst") and node.astext().strip()
                title = explicit or f"“{_page_title(Path(self.app.srcdir), docname)}”"
                node.replace_self(nodes.inline("", f"{title} {UNLINKED}"))

    app.add_post_transform(UnlinkInstructorPages)


def _drop_stale_instructor_pages(app, exception) -> None:
    """No site keeps a page that an earlier build left and its edition no longer publishes (Sphinx
    removes no page of a document that has left the project): the student site, no page for
    instructors only; neither site, an unpublished page (the quiz, whose keys a page would show)."""
    if exception is None and app.builder.format == "html":
        gone = UNPUBLISHED + (tuple(student.INSTRUCTOR_ONLY) if edition() == "student" else ())
        for docname in gone:
            (Path(app.outdir) / f"{docname}.html").unlink(missing_ok=True)


def _lab_sheet(app, docname, source) -> None:
    """The lab sheet's labs, written into the page as it is read."""
    if docname == student.LAB_SHEET:
        if student.LAB_SHEET_MARKER not in source[0]:
            raise ValueError(f"{docname}: the line {student.LAB_SHEET_MARKER!r} is missing, where the labs go")
        url = repository_url(cwd=Path(app.srcdir))
        source[0] = source[0].replace(student.LAB_SHEET_MARKER, student.labs_markdown(url, Path(app.srcdir)))


def _drop_solution_cells(app, doctree) -> None:
    if not app.config.hide_solutions:
        return
    from docutils import nodes

    for node in [n for n in doctree.findall(nodes.Element) if f"tag_{SOLUTION_TAG}" in n.get("classes", ())]:
        node.parent.remove(node)


def _theme_defaults(app, config) -> None:
    config.html_context.setdefault("default_mode", "light")
    config.html_theme_options.setdefault("navbar_persistent", [])


def repository_url(env: dict | None = None, cwd: Path | None = None) -> str | None:
    """The public repository the book is built from, or None for a local copy."""
    env = os.environ if env is None else env
    if env.get("BOOK_REPOSITORY_URL"):
        return env["BOOK_REPOSITORY_URL"].rstrip("/")
    if env.get("GITHUB_REPOSITORY"):
        return f"https://github.com/{env['GITHUB_REPOSITORY']}"
    try:
        url = subprocess.run(["git", "remote", "get-url", "origin"], capture_output=True, text=True,
                             cwd=cwd, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    if url.startswith("git@github.com:"):
        url = "https://github.com/" + url.split(":", 1)[1]
    return url.removesuffix(".git") if url.startswith("https://github.com/") else None


def launch_buttons(config, url: str | None, branch: str = "main") -> None:
    """Configure the Binder, Live Code (thebe) and repository buttons for ``url``."""
    if not url:
        return
    config.html_theme_options.update(
        repository_url=url, repository_branch=branch, path_to_docs="", use_repository_button=True,
        launch_buttons={"binderhub_url": "https://mybinder.org", "thebe": True, "notebook_interface": "jupyterlab"})
    thebe = config.thebe_config if isinstance(getattr(config, "thebe_config", None), dict) else {}
    thebe.update(repository_url=url, repository_branch=branch)
    config.thebe_config = thebe


def _launch(app, config) -> None:
    if edition() == "student":
        return
    launch_buttons(config, repository_url(cwd=Path(app.srcdir)), os.environ.get("BOOK_REPOSITORY_BRANCH", "main"))


def setup(app):
    app.connect("config-inited", _theme_defaults)
    app.connect("config-inited", _edition)
    app.connect("config-inited", _student_toc)   # before sphinx-external-toc reads the toc (900)
    app.connect("config-inited", _execute_only_what_measures)
    app.connect("config-inited", _launch)
    app.connect("html-page-context", _dedupe_scripts, priority=100)
    app.add_config_value("inferlimits_mathjax_dir", ".venv/npm/node_modules/mathjax/es5", "html")
    app.add_config_value("inferlimits_plotly_js",
                         ".venv/npm/node_modules/plotly.js-basic-dist-min/plotly-basic.min.js", "html")
    mathsvg.setup(app, _mathjax_dir)
    app.connect("builder-inited", _check_assets)
    app.connect("builder-inited", _invalidate_if_package_changed, priority=400)  # before myst-nb opens the cache
    app.connect("env-get-outdated", _outdated)
    app.add_css_file("book.css")
    app.connect("html-page-context", sitepages.page_assets)
    app.connect("doctree-read", _drop_widget_state)
    app.connect("doctree-read", _drop_solution_cells)
    app.connect("source-read", _lab_sheet)
    _unlink_instructor_pages(app)
    app.connect("build-finished", _copy_assets)
    app.connect("build-finished", _drop_stale_instructor_pages)
    app.connect("build-finished", _first_paint, priority=900)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
