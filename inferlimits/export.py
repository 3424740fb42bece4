"""Slide-ready static exports: each chapter's key figures at their default settings, drawn with
matplotlib from the same figure specs the interactive versions use, written to ``figures/`` as
SVG and PNG. Deterministic: exporting twice gives identical files.

    python -m inferlimits.export            # write figures/
    python -m inferlimits.export --check    # exit 1 if a committed export is out of date
"""
from __future__ import annotations

import io
import math
import re
import sys
from collections.abc import Callable
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from . import hardware  # noqa: E402
from .figures import batching, decode, overhead, roofline  # noqa: E402
from .figures import kvcache as kvfig  # noqa: E402

OUT = Path(__file__).resolve().parent.parent / "figures"
DASHES = {"dot": ":", "dash": "--", "dashdot": "-.", "longdash": "--", "solid": "-", None: "-"}

def _at_defaults(make_panel: Callable) -> Callable[[], dict]:
    """The spec of a chapter's panel at the values the chapter opens it with."""
    def spec() -> dict:
        panel = make_panel()
        return panel.spec(**panel.values)
    return spec


# the accelerators and models the chapters pass to their panels
_DECODE_NAMES = ["A100 80GB SXM", "H100 SXM", "H200 SXM", "B200 (HGX)", "MI300X", "L40S", "RTX 4090"]
_DENSE_MODELS = ["Llama-3.1-8B", "Qwen2.5-7B", "Llama-3.1-70B", "Qwen2.5-32B", "Mistral-7B-v0.1"]
_BATCH_NAMES = ["A100 80GB SXM", "H100 SXM", "H200 SXM", "B200 (HGX)", "MI300X", "MI325X"]
_BATCH_MODELS = ["Llama-3.1-8B", "Qwen2.5-7B", "Mistral-7B-v0.1", "Qwen2.5-32B"]

#: name -> spec at the chapter's default settings. Each chapter adds its key figures here.
SLIDES: dict[str, Callable[[], dict]] = {
    "01_roofline": lambda: roofline.spec(list(hardware.accelerators()), "B200 (HGX)", 1.0),
    "02_decode_ceiling": _at_defaults(lambda: decode.ceiling_panel(_DECODE_NAMES, _DENSE_MODELS, "BF16", 1.0)),
    "04_batch_throughput": _at_defaults(lambda: batching.throughput_panel(
        _BATCH_MODELS, _BATCH_NAMES, "Llama-3.1-8B", "B200 (HGX)", 64)),
    "05_kv_memory": _at_defaults(lambda: kvfig.memory_panel(
        _BATCH_MODELS + ["Llama-3.1-70B"], _BATCH_NAMES + ["L40S"], "Llama-3.1-8B", "B200 (HGX)", 16)),
    "06_third_wall": _at_defaults(lambda: overhead.third_wall_panel(
        _DECODE_NAMES, "B200 (HGX)", _DENSE_MODELS, "Llama-3.1-8B", 10.0)),
}


def _color(c, default="#1f4e79"):
    if not c:
        return default
    m = re.match(r"rgba?\(([^)]*)\)", str(c))
    if m:
        parts = [float(v) for v in m.group(1).split(",")]
        rgb = [v / 255 for v in parts[:3]]
        return (*rgb, parts[3]) if len(parts) == 4 else tuple(rgb)
    return c


def _nums(values):
    return [math.nan if v is None else v for v in (values or [])]


def _text(t):
    return t.get("text", "") if isinstance(t, dict) else (t or "")


def _axis(ax, which: str, spec: dict) -> None:
    a = spec.get(f"{which}axis", {}) or {}
    set_scale, set_lim, set_label = ((ax.set_xscale, ax.set_xlim, ax.set_xlabel) if which == "x"
                                     else (ax.set_yscale, ax.set_ylim, ax.set_ylabel))
    log = a.get("type") == "log"
    if log:
        set_scale("log")
    if a.get("range"):
        lo, hi = a["range"]
        set_lim(*((10 ** lo, 10 ** hi) if log else (lo, hi)))
    set_label(_text(a.get("title")))


def draw(spec: dict, width_in: float = 10.0, height_in: float = 6.0):
    """A matplotlib figure from a figure spec (scatter and bar traces, fills, log axes, shapes,
    annotations, legend)."""
    fig, ax = plt.subplots(figsize=(width_in, height_in), dpi=100)
    previous_y = None
    for t in spec["data"]:
        if t.get("visible", True) in (False, "legendonly"):
            continue
        x, y = _nums(t.get("x")), _nums(t.get("y"))
        line, marker = t.get("line", {}) or {}, t.get("marker", {}) or {}
        marker_color = marker.get("color") if isinstance(marker.get("color"), str) else None
        color = _color(line.get("color") or marker_color)
        label = t.get("name") if t.get("showlegend", True) and spec["layout"].get("showlegend") else None
        if t.get("type", "scatter") == "bar":
            ax.bar([str(v) for v in x] if x and isinstance(x[0], str) else x, y, color=_color(marker.get("color")),
                   label=label)
            continue
        mode = t.get("mode", "lines")
        if t.get("fill") in ("tozeroy", "tonexty"):
            base = previous_y if t["fill"] == "tonexty" and previous_y is not None else [0.0] * len(y)
            ax.fill_between(x, base, y, color=_color(t.get("fillcolor"), color), alpha=0.35, linewidth=0)
        if "lines" in mode:
            ax.plot(x, y, color=color, linewidth=line.get("width", 2), linestyle=DASHES.get(line.get("dash"), "-"),
                    label=label)
            label = None
        if "markers" in mode:
            ax.plot(x, y, linestyle="none", marker="o", markersize=(marker.get("size") or 8) * 0.6,
                    color=_color(marker_color, color), label=label)
        if "text" in mode:
            texts = t.get("text") or []
            texts = [texts] * len(x) if isinstance(texts, str) else texts
            for xi, yi, s in zip(x, y, texts):
                if s and not (isinstance(xi, float) and math.isnan(xi)):
                    ax.annotate(s, (xi, yi), textcoords="offset points", xytext=(6, -12), fontsize=10, color=color)
        previous_y = y
    layout = spec["layout"]
    for shape in layout.get("shapes", []) or []:
        if shape.get("type", "line") == "line":
            ax.plot([shape["x0"], shape["x1"]], [shape["y0"], shape["y1"]], color=_color((shape.get("line") or {}).get("color"), "#555"),
                    linestyle=DASHES.get((shape.get("line") or {}).get("dash")), linewidth=1)
    for note in layout.get("annotations", []) or []:
        if note.get("xref", "x") == "x" and note.get("yref", "y") == "y":
            ax.annotate(note.get("text", ""), (note["x"], note["y"]), fontsize=10)
    _axis(ax, "x", layout)
    _axis(ax, "y", layout)
    ax.set_title(_text(layout.get("title")), loc="left", fontsize=14)
    ax.grid(True, which="major", color="#e5e5e5", linewidth=0.8)
    if layout.get("showlegend") and ax.get_legend_handles_labels()[0]:
        ax.legend(frameon=False, fontsize=10)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    fig.tight_layout()
    return fig


def render(spec: dict) -> dict[str, bytes]:
    """The SVG and PNG bytes of a spec, identical on every run."""
    plt.rcParams["svg.hashsalt"] = "inferlimits"
    fig = draw(spec)
    out = {}
    for ext, meta in (("svg", {"Date": None}), ("png", {"Software": None})):
        buf = io.BytesIO()
        fig.savefig(buf, format=ext, metadata=meta, dpi=150 if ext == "png" else None)
        out[ext] = buf.getvalue()
    plt.close(fig)
    return out


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    OUT.mkdir(exist_ok=True)
    for name, make in SLIDES.items():
        for ext, data in render(make()).items():
            path = OUT / f"{name}.{ext}"
            if check:
                if not path.exists() or path.read_bytes() != data:
                    stale.append(path.name)
            else:
                path.write_bytes(data)
                print(f"wrote {path.relative_to(OUT.parent)}")
    if stale:
        print("out of date (run `make figures`):", ", ".join(stale))
    return 1 if stale else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
