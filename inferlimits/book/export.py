"""Slide-ready static exports: each chapter's key figures at their default settings, drawn by
plotly's own static export (kaleido, driving Debian's chromium) and written to ``figures/`` as SVG
and PNG. Deterministic: exporting twice on one machine gives identical files.

Each export is the figure exactly as its chapter draws it: the figure object read from the static
figure in the chapter's committed outputs (the one the hosted book shows, at the values the
chapter opens it with), with its dropdowns and sliders hidden, so that a slide can never drift
from its chapter. Chapter 13's figures are measurements of the machine that executed it, and keep
the label that says which machine and when.

``figures/exports.json`` records, for each export, a hash of what it was drawn from (the figure,
the size, plotly's version) and of the files written. Re-executing a chapter whose figure changed
therefore calls for a new export, and a test says so on any machine, without drawing anything:
another machine's fonts may change a PNG's bytes, never the figure it was drawn from.

    python -m inferlimits.book.export            # write figures/ (needs Debian's chromium)
    python -m inferlimits.book.export --check    # exit 1 if a committed export is out of date

Kaleido never downloads anything here: it runs the chromium it is given, on a page that loads
plotly.js from the plotly package and no MathJax, with a proxy that refuses every request beyond
the local files.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import kaleido
import kaleido.errors
import plotly

from inferlimits.figures.plotlyhtml import figure_spec
from inferlimits.book.serve import CHROMIUM

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "figures"
MANIFEST = OUT / "exports.json"
CHAPTERS = ROOT / "chapters"
FORMATS = ("svg", "png")
WIDTH = 1000        # layout px; each figure keeps the height its chapter gives it
SCALE = 2           # PNG pixels per layout px
CAPTION_ROOM = 40   # px added above the plot for a caption (the title's subtitle)
PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
SEEDED_RANDOM = Path(__file__).resolve().parent / "site" / "seeded_random.js"
NO_NETWORK = "127.0.0.1:9"   # a proxy nothing listens on: a request for anything not local fails at once


def committed_figure(notebook: Path, div_id: str) -> dict:
    """The spec (data and layout) of the figure that a notebook's committed outputs draw in the
    div ``div_id``, read from the ``Plotly.newPlot("div_id", data, layout, config)`` call in its
    ``text/html`` output. Nothing is recomputed; a missing figure is an error, never a guess."""
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    for cell in nb.get("cells", []):
        for output in cell.get("outputs", []):
            page = output.get("data", {}).get("text/html", "")
            spec = figure_spec("".join(page) if isinstance(page, list) else page, div_id)
            if spec is not None:
                return spec
    raise ValueError(f"{notebook.name} has no committed output drawing the figure {div_id!r}; "
                     "execute the chapter (make outputs) and export again")


@dataclass(frozen=True)
class Slide:
    """One exported figure: the figure drawn in the div ``div_id`` of chapter ``chapter`` (its
    file name without ``.ipynb``), with ``caption``, if any, as a line under its title."""

    chapter: str
    div_id: str
    caption: str = ""

    def spec(self) -> dict:
        return committed_figure(CHAPTERS / f"{self.chapter}.ipynb", self.div_id)

    def figure(self) -> dict:
        """What the export draws: the chapter's figure with its controls hidden (its data are the
        state the chapter opens it in) and the caption as the title's subtitle, in room added
        above the plot."""
        spec = self.spec()
        layout = {k: v for k, v in spec["layout"].items() if k not in ("updatemenus", "sliders")}
        if self.caption:
            title = layout.get("title") or {}
            layout["title"] = {**({"text": title} if isinstance(title, str) else title),
                               "subtitle": {"text": self.caption, "font": {"size": 11, "color": "#555555"}}}
            margin = layout.get("margin", {})
            layout["margin"] = {**margin, "t": margin.get("t", 100) + CAPTION_ROOM}
            layout["height"] = layout.get("height", 450) + CAPTION_ROOM
        return {"data": spec["data"], "layout": layout}


def _options(fig: dict, ext: str) -> dict:
    return {"format": ext, "width": WIDTH, "height": fig["layout"].get("height", 450),
            "scale": SCALE if ext == "png" else 1}


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def source_hash(fig: dict) -> str:
    """A hash of everything an export is drawn from: the figure, its size, and the plotly (and so
    plotly.js) that draws it."""
    source = {"figure": fig, "options": _options(fig, "png"), "plotly": plotly.__version__}
    return _sha256(json.dumps(source, sort_keys=True, separators=(",", ":")).encode())


_MEASURED = ("Measured when chapter 13 was last executed; drawn from the figure data committed in "
             "chapters/13_measure.ipynb, not re-measured.")

#: name -> slide; every chapter has at least one (a test checks).
SLIDES: dict[str, Slide] = {
    "primer_decoder": Slide("primer", "fig-primer-decoder"),
    "01_roofline": Slide("01_two_speeds", "fig-roofline"),
    "a1_balance_by_year": Slide("a1_accelerators", "fig-balance-by-year"),
    "02_decode_ceiling": Slide("02_decode", "fig-decode-ceiling"),
    "03_prefill": Slide("03_prefill", "fig-prefill"),
    "03_request_timeline": Slide("03_prefill", "fig-request-timeline"),
    "04_batch_throughput": Slide("04_batching", "fig-batch-throughput"),
    "05_kv_memory": Slide("05_kv_cache", "fig-kv-memory"),
    "06_third_wall": Slide("06_overhead", "fig-third-wall"),
    "06_timeline": Slide("06_overhead", "fig-overhead-timeline"),
    "07_precision": Slide("07_low_precision", "fig-precision"),
    "08_moe": Slide("08_moe", "fig-moe"),
    "09_tensor_parallel": Slide("09_serving_at_scale", "fig-tensor-parallel"),
    "10_speculative": Slide("10_speculative_decoding", "fig-speculative"),
    "10_frontier": Slide("10_speculative_decoding", "fig-frontier"),
    "11_index_card": Slide("11_index_card", "fig-index-card"),
    "12_worked_capacity": Slide("12_worked_example", "fig-worked-capacity"),
    "12_worked_step": Slide("12_worked_example", "fig-worked-step"),
    "13_machine_roofline": Slide("13_measure", "fig-machine-roofline", _MEASURED),
    "13_machine_decode": Slide("13_measure", "fig-machine-decode", _MEASURED),
    "a3_scoreboard": Slide("a3_measurements", "fig-scoreboard"),
}


async def _calc(k: kaleido.Kaleido, fig: dict, ext: str) -> bytes:
    """One export. Kaleido 1.5 opens its tab by asking for the page's script context right after
    navigating; on a loaded machine it can be handed the blank page's context instead, and its
    first export then fails with "kaleido_scopes is not defined". The tab reloads after every
    export (which finds the right context), so that one failure is tried once more."""
    try:
        return await k.calc_fig(fig, opts=_options(fig, ext))
    except kaleido.errors.JavascriptError as e:
        if "kaleido_scopes is not defined" not in str(e):
            raise
        return await k.calc_fig(fig, opts=_options(fig, ext))


async def _render(figures: dict[str, dict]) -> dict[str, dict[str, bytes]]:
    page = kaleido.PageGenerator(plotly=PLOTLY_JS, mathjax=False, others=[SEEDED_RANDOM])
    async with kaleido.Kaleido(page_generator=page, path=CHROMIUM, proxy_server=NO_NETWORK) as k:
        return {name: {ext: await _calc(k, fig, ext) for ext in FORMATS} for name, fig in figures.items()}


def render(figures: dict[str, dict]) -> dict[str, dict[str, bytes]]:
    """name -> {"svg": bytes, "png": bytes} for each figure, drawn by one chromium."""
    return asyncio.run(_render(figures))


def write() -> None:
    """Export every slide into ``figures/`` and record what each was drawn from."""
    figures = {name: slide.figure() for name, slide in SLIDES.items()}
    manifest = {}
    OUT.mkdir(exist_ok=True)
    for name, files in render(figures).items():
        manifest[name] = {"source": source_hash(figures[name])}
        for ext, data in files.items():
            path = OUT / f"{name}.{ext}"
            path.write_bytes(data)
            manifest[name][ext] = _sha256(data)
            print(f"wrote {path.relative_to(ROOT)}")
    MANIFEST.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def stale() -> list[str]:
    """What is out of date: exports whose chapter figure (or plotly) changed since they were
    drawn, files that are not the ones exported, and exports of slides no longer listed."""
    manifest = json.loads(MANIFEST.read_text(encoding="utf-8")) if MANIFEST.exists() else {}
    out = []
    for name, slide in SLIDES.items():
        entry = manifest.get(name, {})
        if entry.get("source") != source_hash(slide.figure()):
            out.append(f"{name} (drawn from another figure)")
        for ext in FORMATS:
            path = OUT / f"{name}.{ext}"
            if not path.exists() or _sha256(path.read_bytes()) != entry.get(ext):
                out.append(path.name)
    return out + [f"{name} (no longer a slide)" for name in manifest if name not in SLIDES]


def main(argv: list[str]) -> int:
    if "--check" not in argv:
        write()
    out = stale()
    if out:
        print("out of date (run `make figures`):", ", ".join(out))
    return 1 if out else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
