"""Drive a real JupyterLab from the project's environment: a quiet, offline server over a
temporary copy of the chapters, and Debian's chromium (through playwright) opening a notebook in
it, running every cell and reading back what the page shows.

Used by tests/test_jupyterlab.py. Nothing here writes into the repository: the server's root, its
config, data, runtime, settings and workspace folders and IPython's folder all live in one
temporary folder that is removed at the end.
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = ROOT / "chapters"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

#: JupyterLab user settings for the test: no news or update checks (nothing leaves the machine,
#: no toast covers the notebook). The notebook's windowing mode stays JupyterLab's default
#: ("contentVisibility" since 4.5: every cell is in the page, off-screen ones not painted), which the
#: reading below relies on; "full" (4.0 to 4.4) attaches only the cells in view.
USER_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false",
                                                                          "checkForUpdates": False},
}

#: server options: loopback only, no browser, no token or password, root allowed (CI runs as
#: root), no announcements feed, no update check, the extension manager without PyPI, no terminals
SERVER_OPTIONS = [
    "--no-browser", "--ip=127.0.0.1", "--port=0", "--allow-root",
    "--IdentityProvider.token=", "--ServerApp.password=",
    "--LabApp.news_url=None",
    "--LabApp.check_for_updates_class=jupyterlab.handlers.announcements.NeverCheckForUpdate",
    "--LabApp.extension_manager=readonly",
    "--ServerApp.terminals_enabled=False",
    "--LabApp.expose_app_in_browser=True",
]


@dataclass
class Lab:
    """A running JupyterLab: its base URL and the folder it serves."""

    url: str
    root: Path
    log: Path


def widget_views(notebook: Path) -> int:
    """How many widget views (control panels) the committed notebook displays."""
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    return sum(WIDGET_VIEW in out.get("data", {}) for cell in nb["cells"] for out in cell.get("outputs", []))


def source_hidden_cells(notebook: Path) -> list[int]:
    """Indexes of the cells whose committed metadata hides their source (``jupyter.source_hidden``)."""
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    return [i for i, cell in enumerate(nb["cells"])
            if cell.get("metadata", {}).get("jupyter", {}).get("source_hidden") is True]


def _get(url: str, timeout: float = 2.0) -> int:
    with urllib.request.urlopen(url, timeout=timeout) as r:  # noqa: S310 (loopback only)
        return r.status


@contextlib.contextmanager
def jupyterlab(source: Path = CHAPTERS, *, disabled_extensions: tuple[str, ...] = (),
               prepare=None, timeout: float = 60.0) -> Iterator[Lab]:
    """Run JupyterLab over a temporary copy of ``source``; yield it; stop it and remove the copy.

    ``disabled_extensions`` names lab extensions to turn off (through the page config of a
    throw-away config folder); ``prepare(root)`` may change the copy before the server starts."""
    tmp = Path(tempfile.mkdtemp(prefix="inferlimits-jlab-"))
    try:
        root = tmp / "chapters"
        shutil.copytree(source, root, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
        if prepare:
            prepare(root)
        dirs = {name: tmp / name for name in ("config", "data", "runtime", "settings", "workspaces", "ipython")}
        for d in dirs.values():
            d.mkdir()
        for name, value in USER_SETTINGS.items():
            path = dirs["settings"] / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(value), encoding="utf-8")
        if disabled_extensions:
            (dirs["config"] / "labconfig").mkdir()
            (dirs["config"] / "labconfig" / "page_config.json").write_text(
                json.dumps({"disabledExtensions": {name: True for name in disabled_extensions}}), encoding="utf-8")
        env = {**os.environ, "JUPYTER_CONFIG_DIR": str(dirs["config"]), "JUPYTER_DATA_DIR": str(dirs["data"]),
               "JUPYTER_RUNTIME_DIR": str(dirs["runtime"]), "IPYTHONDIR": str(dirs["ipython"]),
               "JUPYTER_PLATFORM_DIRS": "1"}
        env.pop("JUPYTER_PATH", None)
        env.pop("JUPYTER_CONFIG_PATH", None)
        log = tmp / "jupyterlab.log"
        cmd = [sys.executable, "-m", "jupyterlab", *SERVER_OPTIONS, f"--ServerApp.root_dir={root}",
               f"--LabApp.user_settings_dir={dirs['settings']}", f"--LabApp.workspaces_dir={dirs['workspaces']}"]
        with open(log, "wb") as out:
            proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    cwd=root)
        try:
            url = _wait_ready(proc, dirs["runtime"], log, timeout)
            yield Lab(url, root, log)
        finally:
            _stop(proc)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _wait_ready(proc: subprocess.Popen, runtime: Path, log: Path, timeout: float) -> str:
    """The server's base URL once /api/status answers; the server's log on failure."""
    deadline = time.monotonic() + timeout
    url = None
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"JupyterLab exited with {proc.returncode}:\n{log.read_text(errors='replace')}")
        if url is None:
            info = runtime / f"jpserver-{proc.pid}.json"
            if info.exists():
                with contextlib.suppress(ValueError):
                    url = f"http://127.0.0.1:{json.loads(info.read_text())['port']}"
        if url is not None:
            with contextlib.suppress(OSError, urllib.error.URLError):
                if _get(f"{url}/api/status") == 200:
                    return url
        time.sleep(0.2)
    raise RuntimeError(f"JupyterLab was not ready after {timeout:.0f} s:\n{log.read_text(errors='replace')}")


def _stop(proc: subprocess.Popen) -> None:
    """SIGTERM (the server shuts its kernels down and exits), then SIGKILL if it hangs."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# --- the browser side ---------------------------------------------------------------------------

#: JavaScript: the notebook panel's model as plain data, from the app JupyterLab exposes
#: (``--LabApp.expose_app_in_browser``): per cell, type, execution count and whether it is running
_CELL_STATE = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  if (!panel || !panel.content || !panel.sessionContext) return null;
  const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
  return {
    kernel: kernel ? kernel.status : null,
    cells: panel.content.widgets.map(w => ({type: w.model.type,
        count: w.model.type === 'code' ? w.model.executionCount : null,
        running: (w.node.querySelector('.jp-InputPrompt') || {textContent: ''}).textContent.includes('*')})),
  };
}"""


@dataclass
class Notebook:
    """One notebook opened in JupyterLab in its own page, with console errors and requests outside
    loopback recorded (those requests are blocked)."""

    page: object
    name: str
    errors: list[str] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)

    @classmethod
    def open(cls, browser, lab: Lab, name: str, timeout_ms: int = 60_000) -> Notebook:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        nb = cls(page, name)
        page.route("**/*", nb._route)
        page.on("console", lambda m: m.type == "error" and nb.errors.append(m.text))
        page.on("pageerror", lambda e: nb.errors.append(str(e)))
        # a workspace of its own, so that the page does not restore what another page left open
        workspace = Path(name).stem.replace(".", "-")
        page.goto(f"{lab.url}/lab/workspaces/{workspace}/tree/{name}?reset", wait_until="domcontentloaded",
                  timeout=timeout_ms)
        return nb

    def wait_for_notebook(self, timeout_ms: int = 60_000) -> None:
        """Wait until JupyterLab has started and shows the notebook, its file loaded."""
        self.page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell.currentWidget"
                                    " && window.jupyterapp.shell.currentWidget.context"
                                    " && window.jupyterapp.shell.currentWidget.context.isReady", timeout=timeout_ms)
        self.page.locator(".jp-NotebookPanel .jp-Notebook").first.wait_for(timeout=timeout_ms)

    def _route(self, route):
        url = route.request.url
        host = urlparse(url).hostname
        if host in ("127.0.0.1", "localhost") or url.startswith(("data:", "blob:")):
            route.continue_()
        else:
            self.outside.append(url)
            route.abort()

    def state(self) -> dict | None:
        return self.page.evaluate(_CELL_STATE)

    def run_all(self, timeout_ms: int = 120_000) -> list[str]:
        """Run -> Run All Cells from the menu bar, then wait until the kernel has answered every
        code cell (counted from its execute_reply messages: the committed notebook already shows
        execution counts, so the prompts alone cannot tell a finished run from the old one), is idle
        and no prompt shows ``[*]``. Returns the status of each reply ("ok", "error", "aborted")."""
        self.page.wait_for_function(f"() => {{ const s = ({_CELL_STATE})(); return s && s.kernel === 'idle'; }}",
                                    timeout=timeout_ms)
        self.page.evaluate("""() => {
            const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
            window.__replies = [];
            kernel.anyMessage.connect((_, a) => {
              if (a.direction === 'recv' && a.msg.header.msg_type === 'execute_reply')
                window.__replies.push(a.msg.content.status);
            });
        }""")
        self.page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
        # exactly this label: not "Restart Kernel and Run All Cells…"
        self.page.locator(".lm-Menu .lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
        self.page.wait_for_function(
            f"""() => {{ const s = ({_CELL_STATE})();
                const code = s ? s.cells.filter(c => c.type === 'code').length : -1;
                return s && s.kernel === 'idle' && window.__replies.length >= code
                       && s.cells.every(c => !c.running); }}""",
            timeout=timeout_ms, polling=250)
        return self.page.evaluate("window.__replies")

    # --- what the page shows -------------------------------------------------------------------

    def cells(self):
        """Every cell of the notebook, in order (all in the page: see USER_SETTINGS)."""
        return self.page.locator(".jp-NotebookPanel .jp-Notebook-cell")

    def panels(self):
        """The widget views drawn in output areas: one per displayed control panel."""
        return self.page.locator(".jp-NotebookPanel .jp-OutputArea-output > .jupyter-widgets")

    def wait_for_panels(self, expected: int, timeout_ms: int = 60_000) -> None:
        """Wait until ``expected`` widget views are in the outputs, each with a plotly figure drawn
        (an svg in every ``.js-plotly-plot``) and none still loading, or until a widget error shows
        (for the tests to report)."""
        self.page.wait_for_function(
            """n => { const views = [...document.querySelectorAll(
                    '.jp-NotebookPanel .jp-OutputArea-output > .jupyter-widgets')];
                if (views.some(v => v.textContent.includes('Error displaying widget'))) return true;
                return views.length >= n && views.every(v => v.querySelector('.js-plotly-plot')
                    && [...v.querySelectorAll('.js-plotly-plot')].every(p => p.querySelector('.main-svg'))
                    && !v.textContent.includes('Loading widget')); }""",
            arg=expected, timeout=timeout_ms, polling=250)

    def wait_for_markdown(self, expected: int, timeout_ms: int = 30_000) -> None:
        """Wait until ``expected`` markdown cells are on the page, each rendered with some text."""
        self.page.wait_for_function(
            """n => { const cells = [...document.querySelectorAll('.jp-NotebookPanel .jp-MarkdownCell')];
                return cells.length >= n && cells.every(c => [...c.querySelector('.jp-Cell-inputArea').children]
                    .some(e => !e.matches('.jp-InputArea-editor, .jp-InputPrompt, jp-toolbar')
                               && e.textContent.trim())); }""",
            arg=expected, timeout=timeout_ms, polling=100)

    def collapsed_inputs(self) -> list[int]:
        """Indexes of the cells whose input is collapsed (JupyterLab's "..." placeholder shown)."""
        return self.page.evaluate("""() => [...document.querySelectorAll('.jp-NotebookPanel .jp-Notebook-cell')]
            .map((c, i) => [i, c.querySelector(':scope > .jp-Cell-inputWrapper .jp-InputPlaceholder')])
            .filter(([i, p]) => p && p.offsetParent !== null).map(([i]) => i)""")

    def markdown(self) -> list[dict]:
        """Per markdown cell: whether it is rendered (its source editor hidden, something else shown in
        its place: with jupyterlab-myst 2.7 on JupyterLab 4.5 the cell lacks the class
        ``jp-mod-rendered``), its rendered text (the source editor left out, collapsed answers
        included) and the open state of each ``details`` element in it."""
        return self.page.evaluate("""() => [...document.querySelectorAll('.jp-NotebookPanel .jp-MarkdownCell')].map(c => {
            const area = c.querySelector('.jp-Cell-inputArea');
            const editor = area && area.querySelector(':scope > .jp-InputArea-editor');
            const rendered = area ? [...area.children].filter(
                e => !e.matches('.jp-InputArea-editor, .jp-InputPrompt, jp-toolbar, .jp-cell-toolbar')) : [];
            return {rendered: !!editor && editor.offsetParent === null
                              && rendered.some(e => e.offsetParent !== null && e.textContent.trim()),
                    text: rendered.map(e => e.textContent).join('\\n'),
                    details: rendered.flatMap(e => [...e.querySelectorAll('details')]).map(d => d.open)};
        })""")

    def output_problems(self) -> list[str]:
        """Widget errors and Python tracebacks shown in any output area."""
        return self.page.evaluate("""() => {
            const found = [];
            for (const o of document.querySelectorAll('.jp-NotebookPanel .jp-OutputArea-output')) {
              const t = o.textContent;
              if (t.includes('Error displaying widget') || t.includes('model not found'))
                found.push('widget error: ' + t.slice(0, 300));
            }
            const stderr = '.jp-NotebookPanel [data-mime-type="application/vnd.jupyter.stderr"]';
            for (const o of document.querySelectorAll(stderr)) {
              if (/Traceback|Error/.test(o.textContent)) found.push('stderr: ' + o.textContent.slice(0, 600));
            }
            return found;
        }""")

    def controls(self) -> list[list[tuple[str, str]]]:
        """Every control of every panel as the page shows it, per panel: (description, value), the
        value being a slider's readout or the text of a dropdown's selected option."""
        rows = self.page.evaluate("""() => [...document.querySelectorAll(
                '.jp-NotebookPanel .jp-OutputArea-output > .jupyter-widgets')].map(v =>
            [...v.querySelectorAll('.widget-slider, .widget-dropdown')].map(w => {
              const label = w.querySelector('.widget-label');
              const select = w.querySelector('select');
              const value = select ? (select.selectedOptions[0] ? select.selectedOptions[0].textContent : '')
                                   : (w.querySelector('.widget-readout') || {textContent: ''}).textContent;
              return [label ? label.textContent.trim() : '', value.replace(/\\u00a0/g, ' ').trim()];
            }))""")
        return [[tuple(r) for r in panel] for panel in rows]

    def kernel_idle(self, timeout_ms: int = 30_000) -> None:
        self.page.wait_for_function(f"() => {{ const s = ({_CELL_STATE})(); return s && s.kernel === 'idle'; }}",
                                    timeout=timeout_ms, polling=100)

    def screenshot(self, path: Path, max_height: int = 16_000) -> None:
        """The whole notebook: the window made as tall as the notebook's content (JupyterLab scrolls
        inside its own panel, so a full-page screenshot alone shows one window's worth), then put back."""
        size = self.page.viewport_size
        height = self.page.evaluate("""() => {
            const o = document.querySelector('.jp-NotebookPanel .jp-WindowedPanel-outer');
            return o ? o.scrollHeight + (window.innerHeight - o.clientHeight) : window.innerHeight; }""")
        self.page.set_viewport_size({"width": size["width"], "height": min(max(height, size["height"]), max_height)})
        self.page.evaluate("() => document.querySelector('.jp-NotebookPanel .jp-WindowedPanel-outer').scrollTo(0, 0)")
        self.page.wait_for_timeout(500)  # figures follow the resize
        path.parent.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(path))
        self.page.set_viewport_size(size)
        self.page.wait_for_timeout(300)

    # --- moving the controls ---------------------------------------------------------------------

    def drawn(self, panel: int) -> str:
        """What the panel's figure draws: the markup of its plotly svgs."""
        return self.panels().nth(panel).locator(".js-plotly-plot").first.evaluate(
            "p => [...p.querySelectorAll('.main-svg')].map(s => s.innerHTML).join('')")

    def _settle(self, panel: int, before: str, what: str, timeout_ms: int = 20_000) -> str:
        """Wait until the figure differs from ``before`` and has stopped changing (the kernel idle
        and the markup the same twice in a row); the new markup, or AssertionError."""
        deadline = time.monotonic() + timeout_ms / 1000
        now = self.drawn(panel)
        while now == before:
            if time.monotonic() > deadline:
                raise AssertionError(f"{self.name}, panel {panel}: {what} did not change what the figure draws")
            self.page.wait_for_timeout(100)
            now = self.drawn(panel)
        self.kernel_idle()
        while True:
            self.page.wait_for_timeout(200)
            again = self.drawn(panel)
            if again == now or time.monotonic() > deadline:
                return again
            now = again

    def move_slider(self, panel: int, index: int) -> tuple[str, str]:
        """Move a slider by keyboard (End on its handle, or Home where it already stands at the end);
        wait for the readout and the figure to change. Returns the readout before and after."""
        slider = self.panels().nth(panel).locator(".widget-slider").nth(index)
        handle, readout = slider.locator(".noUi-handle"), slider.locator(".widget-readout")
        # textContent, not innerText: a panel out of view is not painted (content-visibility), and
        # innerText reads such text as empty
        label = slider.locator(".widget-label").text_content().strip()
        old, before = readout.text_content().strip(), self.drawn(panel)
        at_end = handle.get_attribute("aria-valuenow") == handle.get_attribute("aria-valuemax")
        handle.focus()
        self.page.keyboard.press("Home" if at_end else "End")
        try:
            self.page.wait_for_function("([r, old]) => r.textContent.trim() !== old",
                                        arg=[readout.element_handle(), old], timeout=10_000, polling=100)
        except Exception as e:  # noqa: BLE001 (playwright's TimeoutError)
            raise AssertionError(f"{self.name}, panel {panel}: the readout of slider {label!r} stayed {old!r}") from e
        new = readout.text_content().strip()
        self._settle(panel, before, f"moving slider {label!r} from {old} to {new}")
        return old, new

    def choose_option(self, panel: int, index: int) -> tuple[str, str]:
        """Choose another option of a dropdown (the last, or the first where the last is chosen);
        wait for the figure to change. Returns the option before and after."""
        dropdown = self.panels().nth(panel).locator(".widget-dropdown").nth(index)
        select = dropdown.locator("select")
        label = dropdown.locator(".widget-label").text_content().strip()
        options = select.evaluate("s => [...s.options].map(o => o.value)")
        old, before = select.input_value(), self.drawn(panel)
        new = options[-1] if old != options[-1] else options[0]
        select.select_option(new)
        self._settle(panel, before, f"choosing {new!r} instead of {old!r} in dropdown {label!r}")
        return old, new

    def diagnose(self, lab: Lab, shot: Path | None = None) -> str:
        """What to look at when a step timed out: the page, any dialog, console errors, the
        server's log; a screenshot to ``shot``."""
        lines = [f"page {self.page.url}"]
        with contextlib.suppress(Exception):
            dialogs = self.page.evaluate("() => [...document.querySelectorAll('.jp-Dialog')].map(d => d.innerText)")
            lines.append(f"dialogs: {dialogs}")
            lines.append(f"kernel and cells: {self.state()}")
        lines.append(f"console errors: {self.errors}")
        if shot is not None:
            with contextlib.suppress(Exception):
                shot.parent.mkdir(parents=True, exist_ok=True)
                self.page.screenshot(path=str(shot))
                lines.append(f"screenshot: {shot}")
        log = lab.log.read_text(errors="replace").splitlines()
        return "\n".join([*lines, "server log (end):", *log[-40:]])

    def close(self) -> None:
        self.page.unroute_all(behavior="ignoreErrors")  # no route handler left waiting on a closed page
        self.page.close()
