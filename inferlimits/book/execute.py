"""Re-execute chapters in place so their committed outputs are what strict nbval expects.

    python -m inferlimits.book.execute chapters/01_two_speeds.ipynb [...]

Run it after a deliberate change to a chapter, its data or the package, then review the diff of
the check lines: every changed number shows there. Timing metadata and widget state are dropped
so the files stay small and the diffs quiet; the cells the book hides are marked collapsed for
JupyterLab (``book.collapse_for_jupyterlab``).
"""
from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from inferlimits.book import collapse_for_jupyterlab


def coalesce_streams(outputs: list) -> list:
    """Join consecutive outputs of one stream (stdout or stderr): how the kernel split a cell's
    printing depends on timing, and nbval joins them before it compares."""
    joined = []
    for out in outputs:
        if (out.get("output_type") == "stream" and joined and joined[-1].get("output_type") == "stream"
                and joined[-1]["name"] == out["name"]):
            joined[-1]["text"] += out["text"]
        else:
            joined.append(out)
    return joined


def execute(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", store_widget_state=False,
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":
            cell.outputs = coalesce_streams(cell.outputs)
    nb.metadata.pop("widgets", None)
    collapse_for_jupyterlab(nb)
    nbformat.write(nb, path)


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    for name in argv:
        execute(Path(name))
        print(f"executed {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
