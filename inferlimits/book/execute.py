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


def execute(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", store_widget_state=False,
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
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
