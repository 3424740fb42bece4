"""The chapters in a real JupyterLab: the project's own JupyterLab (with jupyterlab-myst) over a
temporary copy of chapters/, and Debian's chromium driven by playwright (never a browser download),
every request not to loopback blocked. Two chapters are opened and run with Run -> Run All Cells;
then every cell has run without error, every control panel is drawn and each control shows the value
its chapter states, moving a slider and choosing
in a dropdown redraw its figure, the markdown is rendered by MyST with the answers collapsed, and
the cells the book hides show a collapsed input. A screenshot of each chapter after Run All goes
to test-output/screenshots/jupyterlab-NN.png.

The helpers (server, page, readouts) are in tests/jupyterlab_driver.py."""
from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import pytest
from browsers import needs_chromium

from inferlimits.figures import interactive
from jupyterlab_driver import CHAPTERS, ROOT, Notebook, jupyterlab, source_hidden_cells, widget_views
from test_controls import panels

SHOTS = ROOT / "test-output" / "screenshots"
NOTEBOOKS = ["01_two_speeds.ipynb", "11_index_card.ipynb"]
#: the folder served (a copy of it) and read for what the notebooks should show
SOURCE = CHAPTERS
#: lab extensions to turn off (none: the test of the test turns off jupyterlab-myst here)
DISABLED_EXTENSIONS: tuple[str, ...] = ()

playwright = pytest.importorskip("playwright.sync_api")
pytestmark = needs_chromium


@pytest.fixture(scope="module")
def lab():
    for name in ("jupyterlab", "jupyterlab_myst", "ipywidgets", "anywidget"):
        try:
            importlib.import_module(name)
        except ImportError as e:  # pinned in requirements.txt: a missing one is a broken setup, not a skip
            pytest.fail(f"{name} cannot be imported ({e}); run `make setup`")
    with jupyterlab(SOURCE, disabled_extensions=DISABLED_EXTENSIONS) as server:
        yield server


@pytest.fixture(scope="module", params=NOTEBOOKS, ids=lambda n: n.split("_")[0])
def notebook(request, lab, browser):
    """The chapter opened, what it shows before running recorded, then Run All Cells, every panel
    drawn and a screenshot taken. One page per chapter, shared by the tests of that chapter."""
    name = request.param
    nb = Notebook.open(browser, lab, name)
    step = "opening"
    try:
        nb.wait_for_notebook()
        nb.wait_for_markdown(sum(c["cell_type"] == "markdown" for c in _committed(name)["cells"]))
        nb.at_open = {"collapsed": nb.collapsed_inputs(), "markdown": nb.markdown()}
        step = "Run All Cells"
        nb.replies = nb.run_all()
        step = "drawing the panels"
        nb.wait_for_panels(widget_views(SOURCE / name))
    except playwright.Error as e:
        nb_text = nb.diagnose(lab, SHOTS / f"jupyterlab-{name[:2]}-failed.png")
        nb.close()
        pytest.fail(f"{name}: {step} timed out or failed: {e}\n{nb_text}")
    nb.screenshot(SHOTS / f"jupyterlab-{name[:2]}.png")
    yield nb
    nb.close()


def _committed(name: str) -> dict:
    return json.loads((SOURCE / name).read_text(encoding="utf-8"))


def _labels_elsewhere(name: str) -> set[str]:
    """Targets that the book defines outside notebook ``name``: glossary terms (as MyST names them,
    ``term-`` and the term in lower case) and ``(label)=`` lines of the other pages."""
    targets = set()
    for page in SOURCE.glob("*"):
        if page.name == name or page.suffix not in (".md", ".ipynb"):
            continue
        text = page.read_text(encoding="utf-8")
        if page.suffix == ".ipynb":
            text = "\n".join("".join(c["source"]) for c in json.loads(text)["cells"])
        targets |= set(re.findall(r"^\(([^)\s]+)\)=\s*$", text, re.M))
        for block in re.findall(r"^```\{glossary\}\n(.*?)^```", text, re.M | re.S):
            targets |= {f"term-{t.strip().lower()}" for t in re.findall(r"^(\S.*)$", block, re.M)}
    return targets


def _unexplained(errors: list[str], name: str) -> list[str]:
    """Console errors, less jupyterlab-myst's "Cross reference target was not found: X" for targets
    that another page of the book defines (MyST in JupyterLab resolves references within one
    notebook only; the built book resolves them). A reference to a target defined nowhere stays."""
    elsewhere = _labels_elsewhere(name)
    missing = re.compile(r"^Cross reference target was not found: (.+)$")
    left = []
    for error in errors:
        lines = [line.strip() for line in error.splitlines() if line.strip()]
        if not (lines and all((m := missing.match(line)) and m.group(1) in elsewhere for line in lines)):
            left.append(error)
    return left


def _assert_clean(nb: Notebook) -> None:
    assert not nb.outside, f"{nb.name}: requests outside loopback: {nb.outside}"
    assert not _unexplained(nb.errors, nb.name), f"{nb.name}: console errors: {_unexplained(nb.errors, nb.name)}"


def test_run_all_runs_every_cell_without_error(notebook):
    code = sum(c["cell_type"] == "code" for c in _committed(notebook.name)["cells"])
    assert len(notebook.replies) == code, f"{len(notebook.replies)} replies for {code} code cells"
    assert all(r == "ok" for r in notebook.replies), f"execute replies: {notebook.replies}"
    assert not notebook.output_problems(), "\n".join(notebook.output_problems())
    _assert_clean(notebook)


def test_every_control_panel_is_drawn(notebook):
    expected = widget_views(SOURCE / notebook.name)
    assert expected >= 1, f"{notebook.name} displays no control panel in its committed outputs"
    panels = notebook.panels()
    assert panels.count() == expected, f"{panels.count()} panels drawn, the notebook displays {expected}"
    for i in range(expected):
        panel = panels.nth(i)
        assert panel.locator(".js-plotly-plot .main-svg").count() >= 1, f"panel {i}: figure not drawn"
        assert panel.locator(".scatterlayer .trace, .barlayer .trace").count() >= 1, f"panel {i}: no traces"
        assert panel.locator(".widget-slider, .widget-dropdown").count() >= 1, f"panel {i}: no controls"
    _assert_clean(notebook)


def test_every_control_shows_the_value_the_chapter_states(notebook):
    """Straight after Run All, before anything is moved: each control's readout is the value the
    chapter passes to its panel, written as the text writes it (the browser has snapped nothing)."""
    stated = [[(c.label, interactive._label(p.values[c.name])) for c in p.specs] for p in panels(Path(notebook.name).stem)]
    shown = notebook.controls()
    assert shown == stated, f"{notebook.name}: the page shows {shown}, the chapter states {stated}"


def test_every_slider_and_dropdown_redraws_the_figure(notebook):
    for i in range(notebook.panels().count()):
        panel = notebook.panels().nth(i)
        for k in range(panel.locator(".widget-slider").count()):
            print(f"\n{notebook.name} panel {i} slider {k}: {notebook.move_slider(i, k)}", end="")
        for k in range(panel.locator(".widget-dropdown").count()):
            print(f"\n{notebook.name} panel {i} dropdown {k}: {notebook.choose_option(i, k)}", end="")
    assert not notebook.output_problems(), "\n".join(notebook.output_problems())
    _assert_clean(notebook)


def test_markdown_is_rendered_by_myst_with_answers_collapsed(notebook):
    cells = [c for c in _committed(notebook.name)["cells"] if c["cell_type"] == "markdown"]
    source = "\n".join("".join(c["source"]) for c in cells)
    # what raw MyST would look like on the page: the roles and directives this notebook uses,
    # its label lines, the dropdown option and code fences
    raw = {f"{{{name}}}" for name in re.findall(r"\{([a-z][\w:-]*)\}`", source)}
    raw |= {f"{{{name}}}" for name in re.findall(r"^(?:```+|:::+)\{([\w:-]+)\}", source, re.M)}
    raw |= {f"({label})=" for label in re.findall(r"^\(([^)\s]+)\)=\s*$", source, re.M)}
    raw |= {":class: dropdown", "```"}
    shown = notebook.at_open["markdown"]
    assert len(shown) == len(cells), f"{len(shown)} markdown cells on the page, {len(cells)} in the notebook"
    for i, cell in enumerate(shown):
        assert cell["rendered"], f"markdown cell {i} is not rendered"
        left = sorted(r for r in raw if r in cell["text"])
        assert not left, f"markdown cell {i} shows raw MyST {left}: {cell['text'][:300]!r}"
    dropdowns = source.count(":class: dropdown")
    details = [state for cell in shown for state in cell["details"]]
    assert len(details) == dropdowns, f"{dropdowns} dropdown answers in the source, {len(details)} drawn collapsible"
    assert not any(details), f"answers open when the notebook opens: {details}"
    _assert_clean(notebook)


def test_cells_the_book_hides_show_collapsed_input(notebook):
    hidden = source_hidden_cells(SOURCE / notebook.name)
    assert hidden, (f"no cell of {notebook.name} has metadata.jupyter.source_hidden: the cells tagged "
                    "hide-input or hide-cell should carry it, so that JupyterLab collapses them too")
    assert notebook.at_open["collapsed"] == hidden, "collapsed inputs when the notebook opens"
    assert notebook.collapsed_inputs() == hidden, "collapsed inputs after Run All"
    _assert_clean(notebook)
