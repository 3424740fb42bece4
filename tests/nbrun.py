"""Run a chapter's code cells in this process and compare with its committed outputs, the way
strict nbval does (stdout lines and the Markdown/HTML a cell displays), but fast enough to repeat
for every single-digit mutation. The real nbval run covers the rest."""
from __future__ import annotations

import ast
import contextlib
import io
import json
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


def run_cell(source: str, ns: dict) -> tuple[str, list[dict]]:
    """Execute one cell; return what it printed and what it displayed (its last expression)."""
    tree = ast.parse(source)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(tree, "<cell>", "exec"), ns)
        value = eval(compile(ast.Expression(last.value), "<cell>", "eval"), ns) if last else None
    return out.getvalue(), ([_bundle(value)] if value is not None else [])


def namespaces(cells: list[dict]) -> list[dict]:
    """Shallow copies of the namespace before each cell, from one unmutated run."""
    ns: dict = {"__name__": "__chapter__"}
    before = []
    for cell in cells:
        before.append(dict(ns))
        run_cell(cell["source"], ns)
    return before


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
        if cell.get("ignore_output"):
            continue
        if stdout != cell["stdout"]:
            return f"cell {i} prints something else"
        expected = [s for s in cell["shown"] if s]
        if [s for s in shown if s] != expected:
            return f"cell {i} displays something else"
    return None
