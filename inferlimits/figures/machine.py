"""Figures of this machine, measured: its roofline, matrix-vector to matrix-matrix products on
it, and the small decoder's tokens per second against the book's ceilings.

Each spec measures what it draws (``inferlimits.machine.measure``, remembered for the session, so a
figure redrawn at settings seen before is instant). The live controls therefore re-measure, and
only when a slider is released; in the static book each figure shows the measurements made when
the book was built, and its title says on which machine and when.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from inferlimits.machine import measure, tinyllm
from inferlimits.figures.interactive import Control, panel as _panel
from inferlimits.data.units import GB, MIB
from inferlimits.figures import ACCENT, FAINT, INK, base_layout

GIGA = 1e9
INTENSITY_RANGE = (0.01, 1000.0)     # FLOP per byte
GFLOPS_RANGE = (0.05, 20_000.0)      # GFLOP/s
BATCH_RANGE = (0.8, 100.0)           # decode batches, log axis
TOKENS_RANGE = (1.0, 100_000.0)      # tokens/s

# what the live controls offer: a few settings each, since every change measures again
ARRAY_MIB = tuple(range(4, 257, 4))             # MiB
MATMUL_SIDES = tuple(range(256, 2049, 256))
PRODUCT_SIDES = tuple(range(1024, 8193, 512))
PRODUCT_MAX_BATCH = (16, 256)
DECODE_MAX_BATCH = (8, 64)
CONTEXTS = tuple(range(0, 1025, 128))           # tokens


@dataclass(frozen=True)
class Remeasure(Control):
    """A control whose every change measures again: sliders act only when released."""

    def widget(self, value):
        w = super().widget(value)
        if hasattr(w, "continuous_update"):
            w.continuous_update = False
        return w


TOP_MARGIN = 100  # room for the title's second line, which names the machine


def _title(what: str, m: measure.Machine, how: str = "") -> str:
    return f"{what}<br><sub>measured on {m.label}{'; ' + how if how else ''}</sub>"


def _roof(m: measure.Machine, bandwidth: float | None = None, peak: float | None = None):
    bw = m.bandwidth_bytes_per_s if bandwidth is None else bandwidth
    p = m.peak_flop_per_s if peak is None else peak
    x0, x1 = INTENSITY_RANGE
    ridge = p / bw
    return [x0, ridge, x1], [x0 * bw / GIGA, p / GIGA, p / GIGA], ridge


def roofline_spec(array_mib: int = 256, matmul_side: int = 2048) -> dict:
    """This machine's roof from its median bandwidth and math rate, with the roofs its slowest
    and fastest repeats would draw (how much the measurement wobbles)."""
    m = measure.this_machine(int(array_mib) * MIB, int(matmul_side))
    x, y, ridge = _roof(m)
    lx, ly, _ = _roof(m, m.bandwidth.low, m.matmul.low)
    hx, hy, _ = _roof(m, m.bandwidth.high, m.matmul.high)
    data = [
        dict(type="scatter", x=lx + [None] + hx, y=ly + [None] + hy, mode="lines",
             line=dict(color=FAINT, width=1, dash="dot"), hoverinfo="skip", name="slowest and fastest repeats"),
        dict(type="scatter", x=x, y=y, mode="lines", line=dict(color=ACCENT, width=3), name="this machine (medians)",
             hovertemplate="%{x:.3g} FLOP/byte → %{y:.4g} GFLOP/s<extra></extra>"),
        dict(type="scatter", x=[ridge, ridge], y=[GFLOPS_RANGE[0], y[1]], mode="lines+text",
             line=dict(color=ACCENT, width=1, dash="dot"), text=["", f"ridge {ridge:.3g} FLOP/byte"],
             textposition="top left", hoverinfo="skip", name="ridge"),
        dict(type="scatter", x=[INTENSITY_RANGE[0] * 2, INTENSITY_RANGE[1] / 2], mode="text",
             y=[INTENSITY_RANGE[0] * 2 * m.bandwidth_bytes_per_s / GIGA / 3, y[1] * 1.6],
             text=[f"bandwidth {m.bandwidth_bytes_per_s / GB:.3g} GB/s ({m.bandwidth_from})",
                   f"matrix product {m.peak_flop_per_s / GIGA:.3g} GFLOP/s"],
             textposition=["bottom right", "top left"], hoverinfo="skip", name="measurements"),
    ]
    layout = base_layout(_title("Roofline of this machine", m), "arithmetic intensity (FLOP per byte moved)",
                         "attainable math rate (float32 GFLOP/s)", x_log=True, y_log=True,
                         x_range=INTENSITY_RANGE, y_range=GFLOPS_RANGE)
    layout["margin"] = {**layout["margin"], "t": TOP_MARGIN}
    return {"data": data, "layout": layout}


def roofline_panel(array_mib: int = 256, matmul_side: int = 2048, div_id: str = "fig-machine-roofline"):
    """Re-measure with another array size or matrix side (live); the built machine's roof (static)."""
    controls = [Remeasure("array_mib", "array read (MiB)", ARRAY_MIB, kind="slider"),
                Remeasure("matmul_side", "matrix side", MATMUL_SIDES, kind="slider")]
    return _panel(roofline_spec, dict(array_mib=array_mib, matmul_side=matmul_side), controls, div_id)


def _rounds(chapter: bool, rounds: int) -> tuple[int, str]:
    """The chapter's own settings keep its rounds (and its measurement); any other setting is
    measured live, in one round, so that a control answers within seconds."""
    return (rounds, f"median of {rounds} rounds") if chapter else (1, "one round, measured live")


def products_spec(side: int = 8192, max_batch: int = 256, chapter: tuple[int, int] = (8192, 256)) -> dict:
    """A side x side float32 weight matrix times 1, 2, 4, ... vectors, each measured product a
    point on this machine's measured roof; beside the roof's slanted line, the plain read of the
    same matrix timed in the same rounds. ``chapter`` is the (side, max_batch) the chapter measured."""
    m = measure.this_machine()
    side, max_batch = int(side), int(max_batch)
    rounds, how = _rounds((side, max_batch) == tuple(chapter), measure.SWEEP_ROUNDS)
    sweep = measure.product_sweep(side, side, measure.powers_of_two(max_batch), rounds)
    x, y, ridge = _roof(m)
    x0, x1 = INTENSITY_RANGE
    read = sweep.read_bytes_per_s
    data = [
        dict(type="scatter", x=[x0, m.peak_flop_per_s / read], y=[x0 * read / GIGA, m.peak_flop_per_s / GIGA],
             mode="lines", line=dict(color=INK, width=1, dash="dot"), name="plain read of this matrix",
             hovertemplate=f"read at {read / GB:.3g} GB/s<extra></extra>"),
        dict(type="scatter", x=x, y=y, mode="lines", line=dict(color=ACCENT, width=3), name="this machine's roof",
             hovertemplate="%{x:.3g} FLOP/byte → %{y:.4g} GFLOP/s<extra></extra>"),
        dict(type="scatter", x=[ridge, ridge], y=[GFLOPS_RANGE[0], y[1]], mode="lines+text",
             line=dict(color=ACCENT, width=1, dash="dot"), text=["", f"ridge {ridge:.3g}"],
             textposition="top left", hoverinfo="skip", name="ridge"),
        dict(type="scatter", x=[p.intensity_flop_per_byte for p in sweep], y=[p.flop_per_s / GIGA for p in sweep],
             mode="markers+lines+text", marker=dict(size=10, color=INK), line=dict(color=INK, width=1),
             text=[str(p.batch) for p in sweep], textposition="bottom right", name="measured products",
             customdata=[[p.batch, p.bandwidth_bytes_per_s / GB] for p in sweep],
             hovertemplate=("%{customdata[0]} vectors: %{x:.3g} FLOP/byte, %{y:.4g} GFLOP/s, "
                            "weights read at %{customdata[1]:.3g} GB/s<extra></extra>")),
    ]
    mib = side * side * 4 / MIB
    layout = base_layout(_title(f"A {side:,} × {side:,} weight matrix ({mib:,.0f} MiB) times 1 to {max_batch} vectors",
                                m, how),
                         "arithmetic intensity (FLOP per byte moved)", "measured math rate (float32 GFLOP/s)",
                         x_log=True, y_log=True, x_range=INTENSITY_RANGE, y_range=GFLOPS_RANGE, legend=True)
    layout["margin"] = {**layout["margin"], "t": TOP_MARGIN}
    return {"data": data, "layout": layout}


def products_panel(side: int = 8192, max_batch: int = 256, div_id: str = "fig-machine-products"):
    """Re-measure with another matrix or largest batch (live); the built machine's sweep (static)."""
    controls = [Remeasure("side", "matrix side", PRODUCT_SIDES, kind="slider"),
                Remeasure("max_batch", "largest batch", PRODUCT_MAX_BATCH)]
    values = dict(side=side, max_batch=max_batch, chapter=(side, max_batch))
    return _panel(products_spec, values, controls, div_id)


def decode_spec(context_tokens: int = 128, max_batch: int = 64, together: tuple[int, ...] = (128, 1024),
                chapter_max_batch: int = 64) -> dict:
    """Measured tokens/s of the small decoder at batches 1, 2, 4, ... against the two ceilings.
    The chapter measured the contexts in ``together`` in the same rounds, up to
    ``chapter_max_batch``; any other setting is measured live, on its own."""
    m = measure.this_machine()
    context_tokens, max_batch = int(context_tokens), int(max_batch)
    batches = measure.powers_of_two(max_batch)
    chapter = context_tokens in together and max_batch == chapter_max_batch
    rounds, how = _rounds(chapter, measure.DECODE_ROUNDS)
    contexts = tuple(together) if chapter else (context_tokens,)
    points = measure.at_context(measure.decode_sweep(tinyllm.TINY_LLAMA, batches, contexts, rounds=rounds),
                                context_tokens)
    curve = list(np.geomspace(1, max(batches), 48))
    memory = [measure.decode_ceilings_tokens_per_s(m, b, context_tokens)[0] for b in curve]
    math_ = measure.decode_ceilings_tokens_per_s(m, 1, context_tokens)[1]
    lower = [min(v, math_) for v in memory]
    data = [
        dict(type="scatter", x=curve, y=lower, mode="lines", line=dict(color=FAINT, width=8),
             name="the lower ceiling", hoverinfo="skip"),
        dict(type="scatter", x=curve, y=memory, mode="lines", line=dict(color=INK, width=1, dash="dash"),
             name="memory ceiling B·BW/(W + B·K·L)", hovertemplate="batch %{x:.3g}: %{y:.4g} tokens/s<extra></extra>"),
        dict(type="scatter", x=[1, max(batches)], y=[math_, math_], mode="lines",
             line=dict(color=ACCENT, width=1, dash="dash"), name="math ceiling P/F",
             hovertemplate="%{y:.4g} tokens/s<extra></extra>"),
        dict(type="scatter", x=[p.batch for p in points], y=[p.tokens_per_s for p in points],
             mode="markers+lines", marker=dict(size=10, color=INK), line=dict(color=INK, width=1),
             name="measured", customdata=[[measure.efficiency(p, m)] for p in points],
             hovertemplate="batch %{x}: %{y:.4g} tokens/s, %{customdata[0]:.0%} of the ceiling<extra></extra>"),
    ]
    layout = base_layout(_title(f"The small decoder at {context_tokens:,} tokens of context, float32", m, how),
                         "batch (sequences decoded together)", "tokens per second, all sequences",
                         x_log=True, y_log=True, x_range=BATCH_RANGE, y_range=TOKENS_RANGE, legend=True)
    layout["margin"] = {**layout["margin"], "t": TOP_MARGIN}
    return {"data": data, "layout": layout}


def decode_panel(context_tokens: int = 128, max_batch: int = 64, together: tuple[int, ...] = (128, 1024),
                 div_id: str = "fig-machine-decode"):
    """Re-measure at another context or largest batch (live); the built machine's run (static)."""
    controls = [Remeasure("context_tokens", "context (tokens)", CONTEXTS, kind="slider"),
                Remeasure("max_batch", "largest batch", DECODE_MAX_BATCH)]
    values = dict(context_tokens=context_tokens, max_batch=max_batch, together=tuple(together),
                  chapter_max_batch=max_batch)
    return _panel(decode_spec, values, controls, div_id)
