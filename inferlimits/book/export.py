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
    python -m inferlimits.book.export --wide     # write only the 16:9 exports, figures/16x9/
    python -m inferlimits.book.export --check    # exit 1 if a committed export is out of date

The decks (``make slides``, ``inferlimits.book.slides``) show the same figures at slide proportions:
``WIDE`` holds every slide above and chapter 2's roofline, each drawn at 16:9 (at least 1280 x 720
layout px; every PNG 1600 x 900) into ``figures/16x9/``, with its own record,
``figures/16x9/exports.json``.

Kaleido never downloads anything here: it runs the chromium it is given, on a page that loads
plotly.js from the plotly package and no MathJax, with a proxy that refuses every request beyond
the local files.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import math
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


def _options(fig: dict, ext: str, scale: float | None = SCALE) -> dict:
    """The export's size: the figure's own width (``WIDTH`` where it sets none) and height, and
    ``scale`` PNG pixels per layout px (None: as many as make the PNG ``WIDE_PNG_WIDTH`` wide)."""
    width = fig["layout"].get("width", WIDTH)
    if scale is None:
        scale = WIDE_PNG_WIDTH / width
    return {"format": ext, "width": width, "height": fig["layout"].get("height", 450),
            "scale": scale if ext == "png" else 1}


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def source_hash(fig: dict, scale: float | None = SCALE) -> str:
    """A hash of everything an export is drawn from: the figure, its size, and the plotly (and so
    plotly.js) that draws it."""
    source = {"figure": fig, "options": _options(fig, "png", scale), "plotly": plotly.__version__}
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
    "13_reference_products": Slide("13_measure", "fig-reference-products"),
    "13_reference_decode": Slide("13_measure", "fig-reference-decode"),
    "13_machine_roofline": Slide("13_measure", "fig-machine-roofline", _MEASURED),
    "13_machine_products": Slide("13_measure", "fig-machine-products", _MEASURED),
    "13_machine_decode": Slide("13_measure", "fig-machine-decode", _MEASURED),
    "a3_scoreboard": Slide("a3_measurements", "fig-scoreboard"),
}


#: the 16:9 exports for the decks: the least layout size (px, 16:9; a figure its chapter draws
#: taller keeps its height, and is as wide as 16:9 makes it), and the PNG's width (1600 x 900)
WIDE_SIZE = (1280, 720)
WIDE_PNG_WIDTH = 1600
WIDE_OUT = OUT / "16x9"
WIDE_MANIFEST = WIDE_OUT / "exports.json"

#: name -> slide drawn at 16:9 for the decks: every slide, and chapter 2's roofline
WIDE: dict[str, Slide] = {**SLIDES, "02_decode_roofline": Slide("02_decode", "fig-decode-roofline")}


#: the 16:9 exports' fonts, for a projector: the least font size, in pixels of the 1600 x 900 PNG
#: (``WIDE_PNG_WIDTH``), of every text the export draws (axis titles, tick labels, annotations,
#: legend, trace text): the font scale of ``wide_font_size``
WIDE_MIN_FONT_PX = 18
#: the figures whose text cannot take ``WIDE_MIN_FONT_PX``, and the least size each takes instead
#: (PNG px). The primer's diagram writes its labels inside boxes that ``inferlimits/figures/primer.py``
#: draws for 12 px text: at 18 px the KV cache box's eight lines and the two-line boxes overflow
#: (the box heights are the chapter's; a taller layout of the diagram would lift this).
WIDE_MIN_FONT_PX_OF = {"primer_decoder": 16}
#: plotly's own default font size, where a figure sets none
PLOTLY_FONT_PX = 12
#: layout changes that make room for those fonts in a 16:9 drawing (each key's dict updates the
#: layout's): the primer's diagram has no axis or legend above it, so its top margin is only its
#: title's; the index card's verdict and levers (seventeen lines of text under its two charts)
#: move beside the charts, into the width that 16:9 adds, and the charts take the height
WIDE_LAYOUT: dict[str, dict] = {
    "primer_decoder": {"margin": {"t": 46}},
    "11_index_card": {"xaxis": {"domain": [0.13, 0.46]}, "xaxis2": {"domain": [0.13, 0.46]},
                      "xaxis3": {"domain": [0.5, 1.0]}, "yaxis": {"domain": [0.6, 1.0]},
                      "yaxis2": {"domain": [0.0, 0.44]}, "yaxis3": {"domain": [0.0, 1.0]}},
}


def wide_font_size(size: float, width: float, least_px: float = WIDE_MIN_FONT_PX) -> float:
    """A font of ``size`` layout px in a 16:9 export ``width`` layout px wide: at least the size
    that is ``least_px`` pixels once the PNG is ``WIDE_PNG_WIDTH`` wide (rounded up to a hundredth
    of a px); larger fonts keep their size."""
    if not size > 0:
        raise ValueError(f"size: a font size must be positive; got {size!r}")
    if not width > 0:
        raise ValueError(f"width: a figure's width must be positive; got {width!r}")
    if not least_px > 0:
        raise ValueError(f"least_px: the least font size must be positive; got {least_px!r}")
    return max(float(size), math.ceil(least_px * width / WIDE_PNG_WIDTH * 100 - 1e-6) / 100)


def font_sizes(spec) -> list[tuple[str, object]]:
    """Every font size a figure spec (or part of one) sets: (where, size) for each ``size`` of a
    ``font`` (``tickfont``, ``textfont``, ...) object, a size or a list of sizes."""
    out = []

    def walk(o, where):
        if isinstance(o, dict):
            for k, v in o.items():
                if k.endswith("font") and isinstance(v, dict) and "size" in v:
                    out.append((f"{where}.{k}", v["size"]))
                walk(v, f"{where}.{k}")
        elif isinstance(o, list):
            for i, v in enumerate(o):
                walk(v, f"{where}[{i}]")

    walk(spec, "")
    return out


def _scale_fonts(o, width: float, least_px: float):
    """``o`` (a spec or part of one) with each font size as ``wide_font_size`` makes it."""
    if isinstance(o, dict):
        out = {}
        for k, v in o.items():
            if k.endswith("font") and isinstance(v, dict) and "size" in v:
                size = v["size"]
                v = {**v, "size": [wide_font_size(x, width, least_px) for x in size] if isinstance(size, list)
                     else wide_font_size(size, width, least_px)}
            out[k] = _scale_fonts(v, width, least_px)
        return out
    if isinstance(o, list):
        return [_scale_fonts(v, width, least_px) for v in o]
    return o


def wide_fonts(fig: dict, least_px: float = WIDE_MIN_FONT_PX) -> dict:
    """``fig`` (data and a layout with its width) with fonts for a projector: its base font (the
    one every text without its own size takes: ticks, legend, annotations; plotly draws titles
    larger still) and every font size it sets, each as ``wide_font_size`` makes it."""
    width = fig["layout"]["width"]
    layout = _scale_fonts(fig["layout"], width, least_px)
    base = (fig["layout"].get("font") or {}).get("size", PLOTLY_FONT_PX)
    layout["font"] = {**(layout.get("font") or {}), "size": wide_font_size(base, width, least_px)}
    return {"data": _scale_fonts(fig["data"], width, least_px), "layout": layout}


#: where a chapter's figure had a slider under its plot: the bottom margin its 16:9 export starts
#: from (plotly widens it to hold the legend) and where the legend then sits, in the plot's heights
WIDE_BOTTOM = 60
WIDE_LEGEND_Y = -0.17


def wide_size(height: float) -> tuple[int, int]:
    """The 16:9 layout size (px) for a figure ``height`` px tall: ``WIDE_SIZE``, or, for a taller
    figure, its height (up to the next multiple of 9) and the width 16:9 gives it."""
    h = max(WIDE_SIZE[1], 9 * math.ceil(height / 9))
    return 16 * h // 9, h


def wide_figure(slide: Slide) -> dict:
    """``slide``'s figure at slide proportions: the same data and layout, drawn at a 16:9 size
    (``wide_size``). Where the chapter's figure has a slider under its plot (hidden here, as in
    every export: it has sliders, and a bottom margin wider than ``2 * WIDE_BOTTOM`` to hold
    them), the room the slider took goes back to the plot: the figure is drawn at ``WIDE_SIZE``,
    the legend moves up under the x axis, and the bottom margin is what the legend needs. Any
    other figure keeps all its height, so that nothing it draws is cut. Its fonts are set for a
    projector (``wide_fonts``: ``WIDE_MIN_FONT_PX``, or the figure's own least size in
    ``WIDE_MIN_FONT_PX_OF``), with the room ``WIDE_LAYOUT`` makes for them."""
    fig = slide.figure()
    layout = dict(fig["layout"])
    margin = layout.get("margin", {})
    if slide.spec()["layout"].get("sliders") and margin.get("b", 0) > 2 * WIDE_BOTTOM:
        width, height = WIDE_SIZE
        layout["margin"] = {**margin, "b": WIDE_BOTTOM}
        legend = layout.get("legend") or {}
        if legend.get("y", 1) < 0:
            layout["legend"] = {**legend, "y": WIDE_LEGEND_Y}
    else:
        width, height = wide_size(layout.get("height", 450))
    name = next((n for n, s in WIDE.items() if s == slide), "")
    for key, change in WIDE_LAYOUT.get(name, {}).items():
        layout[key] = {**(layout.get(key) or {}), **change}
    least = WIDE_MIN_FONT_PX_OF.get(name, WIDE_MIN_FONT_PX)
    return wide_fonts({"data": fig["data"], "layout": {**layout, "width": width, "height": height}}, least)


async def _calc(k: kaleido.Kaleido, fig: dict, ext: str, scale: float | None = SCALE) -> bytes:
    """One export. Kaleido 1.5 opens its tab by asking for the page's script context right after
    navigating; on a loaded machine it can be handed the blank page's context instead, and its
    first export then fails with "kaleido_scopes is not defined". The tab reloads after every
    export (which finds the right context), so that one failure is tried once more."""
    try:
        return await k.calc_fig(fig, opts=_options(fig, ext, scale))
    except kaleido.errors.JavascriptError as e:
        if "kaleido_scopes is not defined" not in str(e):
            raise
        return await k.calc_fig(fig, opts=_options(fig, ext, scale))


async def _render(figures: dict[str, dict], scale: float | None = SCALE) -> dict[str, dict[str, bytes]]:
    page = kaleido.PageGenerator(plotly=PLOTLY_JS, mathjax=False, others=[SEEDED_RANDOM])
    async with kaleido.Kaleido(page_generator=page, path=CHROMIUM, proxy_server=NO_NETWORK) as k:
        return {name: {ext: await _calc(k, fig, ext, scale) for ext in FORMATS} for name, fig in figures.items()}


def render(figures: dict[str, dict], scale: float | None = SCALE) -> dict[str, dict[str, bytes]]:
    """name -> {"svg": bytes, "png": bytes} for each figure, drawn by one chromium (``scale``: as
    ``_options`` takes it)."""
    return asyncio.run(_render(figures, scale))


def _write(figures: dict[str, dict], out: Path, manifest_path: Path, scale: float | None) -> None:
    manifest = {}
    out.mkdir(exist_ok=True)
    for name, files in render(figures, scale).items():
        manifest[name] = {"source": source_hash(figures[name], scale)}
        for ext, data in files.items():
            path = out / f"{name}.{ext}"
            path.write_bytes(data)
            manifest[name][ext] = _sha256(data)
            print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    manifest_path.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def write() -> None:
    """Export every slide into ``figures/``, and its 16:9 version into ``figures/16x9/``, and
    record what each was drawn from."""
    _write({name: slide.figure() for name, slide in SLIDES.items()}, OUT, MANIFEST, SCALE)
    write_wide()


def write_wide() -> None:
    """Export only the 16:9 versions (``WIDE``) into ``figures/16x9/``, with their record."""
    _write({name: wide_figure(slide) for name, slide in WIDE.items()}, WIDE_OUT, WIDE_MANIFEST, None)


def stale_wide() -> list[str]:
    """What is out of date among the 16:9 exports, as ``stale`` says it for the others."""
    manifest = json.loads(WIDE_MANIFEST.read_text(encoding="utf-8")) if WIDE_MANIFEST.exists() else {}
    out = []
    for name, slide in WIDE.items():
        entry = manifest.get(name, {})
        if entry.get("source") != source_hash(wide_figure(slide), None):
            out.append(f"16x9/{name} (drawn from another figure)")
        for ext in FORMATS:
            path = WIDE_OUT / f"{name}.{ext}"
            if not path.exists() or _sha256(path.read_bytes()) != entry.get(ext):
                out.append(f"16x9/{path.name}")
    return out + [f"16x9/{name} (no longer a slide)" for name in manifest if name not in WIDE]


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
    if "--wide" in argv:
        write_wide()
    elif "--check" not in argv:
        write()
    out = stale() + stale_wide()
    if out:
        print("out of date (run `make figures`):", ", ".join(out))
    return 1 if out else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
