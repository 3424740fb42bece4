"""Run a chapter's code cells in this process and compare with its committed outputs, the way
strict nbval does (stdout lines and the Markdown/HTML a cell displays), but fast enough to repeat
for every single-digit mutation. The real nbval run covers the rest."""
from __future__ import annotations

import ast
import contextlib
import io
import json
from dataclasses import dataclass, field
from pathlib import Path

COMPARED = ("text/markdown", "text/html")


def load_cells(path: Path) -> list[dict]:
    nb = json.loads(Path(path).read_text(encoding="utf-8"))
    cells = []
    for c in nb["cells"]:
        if c["cell_type"] != "code":
            continue
        src = "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
        stdout = "".join("".join(o["text"]) if isinstance(o["text"], list) else o["text"]
                         for o in c["outputs"] if o["output_type"] == "stream" and o["name"] == "stdout")
        shown = [{k: ("".join(v) if isinstance(v, list) else v) for k, v in o["data"].items() if k in COMPARED}
                 for o in c["outputs"] if o["output_type"] in ("execute_result", "display_data")]
        # nbval does not compare the outputs of cells tagged nbval-ignore-output (measurements of
        # this machine); they still run, so that later cells see their variables
        ignored = "nbval-ignore-output" in c.get("metadata", {}).get("tags", [])
        cells.append({"source": src, "stdout": stdout, "shown": shown, "ignore_output": ignored})
    return cells


def _bundle(value) -> dict:
    if hasattr(value, "_repr_mimebundle_"):
        b = value._repr_mimebundle_()
        b = b[0] if isinstance(b, tuple) else b
    elif hasattr(value, "_repr_markdown_"):
        b = {"text/markdown": value._repr_markdown_()}
    else:
        b = {}
    return {k: v for k, v in (b or {}).items() if k in COMPARED}


def run_cell(source: str, ns: dict, start: int = 0) -> tuple[str, list[dict]]:
    """Execute one cell (from its top-level statement ``start`` on, when given: ``ns`` is then the
    namespace before that statement); return what it printed and what it displayed (its last
    expression)."""
    tree = ast.parse(source)
    del tree.body[:start]
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(tree, "<cell>", "exec"), ns)
        value = eval(compile(ast.Expression(last.value), "<cell>", "eval"), ns) if last else None
    return out.getvalue(), ([_bundle(value)] if value is not None else [])


@dataclass
class Resumable:
    """One cell run a statement at a time: before each top-level statement, a shallow copy of the
    namespace and what the cell had printed so far. Resuming at a statement is exact when it
    gives the cell's committed outputs again (a statement that changes an object in place, which
    the copies share, would not); ``exact`` finds out the first time it is asked."""
    cell: dict
    lines: list[tuple[int, int]]        # each statement's first and last line
    states: list[tuple[dict, str]]
    _exact: dict[int, bool] = field(default_factory=dict)

    def statement_at(self, line: int) -> int | None:
        return next((i for i, (a, b) in enumerate(self.lines) if a <= line <= b), None)

    def exact(self, s: int) -> bool:
        if s not in self._exact:
            try:
                state = self.states[s]
                self._exact[s] = _differs(self.cell, *_resume(self.cell["source"], s, state, dict(state[0]))) is None
            except Exception:
                self._exact[s] = False
        return self._exact[s]


def resumable(cell: dict, ns: dict) -> Resumable:
    """``cell`` (from ``load_cells``) run from ``ns``, the namespace before it, statement by statement."""
    body = ast.parse(cell["source"]).body
    ns, states, printed = dict(ns), [], ""
    for i, node in enumerate(body):
        states.append((dict(ns), printed))
        if i < len(body) - 1 or not isinstance(node, ast.Expr):
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(ast.Module([node], []), "<cell>", "exec"), ns)
            printed += out.getvalue()
    return Resumable(cell, [(n.lineno, n.end_lineno) for n in body], states)


def _resume(source: str, start: int, state: tuple[dict, str], ns: dict) -> tuple[str, list[dict]]:
    """The cell's outputs when ``source`` is run from statement ``start`` in ``ns`` (a copy of
    ``state``'s namespace, left as the run leaves it), after what ``state`` had printed."""
    stdout, shown = run_cell(source, ns, start)
    return state[1] + stdout, shown


def namespaces(cells: list[dict]) -> list[dict]:
    """Shallow copies of the namespace before each cell, from one unmutated run, which must give
    the committed outputs (an AssertionError names the first cell that does not)."""
    ns: dict = {"__name__": "__chapter__"}
    before = []
    for i, cell in enumerate(cells):
        before.append(dict(ns))
        shown = run_cell(cell["source"], ns)
        if found := _differs(cell, *shown):
            raise AssertionError(f"cell {i} {found} than its committed outputs")
    return before


def _differs(cell: dict, stdout: str, shown: list[dict]) -> str | None:
    if cell.get("ignore_output"):
        return None
    if stdout != cell["stdout"]:
        return "prints something else"
    if [s for s in shown if s] != [s for s in cell["shown"] if s]:
        return "displays something else"
    return None


def divergence(cells: list[dict], replaced: dict[int, str] | None = None, start: int = 0,
               ns: dict | None = None) -> str | None:
    """Run the cells from ``start`` (with some sources replaced; ``ns`` is the namespace before
    ``start``) until the first one whose outputs differ from the committed ones, or that raises;
    describe it, or return None if all match."""
    replaced = replaced or {}
    ns = {"__name__": "__chapter__"} if ns is None else ns
    for i, cell in enumerate(cells[start:], start):
        try:
            stdout, shown = run_cell(replaced.get(i, cell["source"]), ns)
        except Exception as e:  # a failing check, or any error: nbval would fail too
            return f"cell {i} raises {type(e).__name__}: {e}"
        if (found := _differs(cell, stdout, shown)):
            return f"cell {i} {found}"
    return None


def divergence_after_change(cells: list[dict], i: int, source: str, line: int, run: Resumable, ns: dict) -> str | None:
    """``divergence(cells, {i: source}, start=i, ns=ns)`` for a ``source`` of cell ``i`` that
    differs from the committed one on ``line`` alone (``run`` is ``resumable(cells[i], ns)``):
    the statements before that line are not run again where resuming after them is exact."""
    s = run.statement_at(line)
    if s is None or not run.exact(s):
        return divergence(cells, {i: source}, start=i, ns=dict(ns))
    after = dict(run.states[s][0])
    try:
        found = _differs(cells[i], *_resume(source, s, run.states[s], after))
    except Exception as e:
        return f"cell {i} raises {type(e).__name__}: {e}"
    return f"cell {i} {found}" if found else divergence(cells, start=i + 1, ns=after)
