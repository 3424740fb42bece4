"""Sphinx extension for the book: serve plotly.js from the site itself, once, from the plotly
package installed with the book (no CDN). Every figure's HTML expects the global ``Plotly``."""
from __future__ import annotations

import shutil
from importlib import resources
from pathlib import Path

PLOTLY_JS = "plotly.min.js"


def _plotly_js() -> Path:
    return Path(str(resources.files("plotly").joinpath("package_data", PLOTLY_JS)))


def _copy_assets(app, exception) -> None:
    if exception is None and app.builder.format == "html":
        static = Path(app.outdir) / "_static"
        static.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(_plotly_js(), static / PLOTLY_JS)


def setup(app):
    app.add_js_file(PLOTLY_JS, priority=100)
    app.connect("build-finished", _copy_assets)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
