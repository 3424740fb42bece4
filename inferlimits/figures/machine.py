"""Figures of this machine, measured: its roofline, matrix-vector to matrix-matrix products on
it, and the small decoder's tokens per second against the book's ceilings.

Each spec measures what it draws (``inferlimits.machine.measure``, remembered for the session, so a
figure redrawn at settings seen before is instant). The live controls therefore re-measure, and
only when a slider is released; in the static book each figure shows the measurements made when
the book was built, and its title says on which machine and when.

The ``*_words`` functions word what a measurement shows (the batch doubled and the rate fell; a
point reached less than half of its ceiling; the repeats spread 3×), from the measured values, so
that sentences about a measurement are true of whichever machine ran the chapter. Each takes plain
numbers, so that the tests can hand it made-up measurements; a thin wrapper feeds it the
chapter's. Each sweep figure also draws the book's formula at every measured setting, from this
machine's measured roof, labelled as the model (computed, not measured): the shape a quiet
machine shows, beside the points this run measured.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
from IPython.display import Markdown

from inferlimits.machine import measure, tinyllm
from inferlimits.figures.interactive import Control, panel as _panel
from inferlimits.arithmetic.generation import OVERHEAD_BOUND, decode_flops_per_token, decode_knee_batch, decode_point, regime
from inferlimits.arithmetic.roofline import COMPUTE_BOUND, MEMORY_BOUND
from inferlimits.data.units import GB, MB, MIB, positive, whole
from inferlimits.figures import ACCENT, FAINT, INK, base_layout

GIGA = 1e9
INTENSITY_RANGE = (0.01, 1000.0)     # FLOP per byte
GFLOPS_RANGE = (0.05, 20_000.0)      # GFLOP/s
BATCH_RANGE = (0.8, 100.0)           # decode batches, log axis
TOKENS_RANGE = (1.0, 100_000.0)      # tokens/s

# what the live controls offer: a few settings each, since every change measures again
ARRAY_MIB = tuple(range(4, 257, 4))             # MiB (and the array the chapter measured)
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


def _chapter_array_mib() -> int:
    return measure.bandwidth_array_bytes() // MIB


#: The machines ``judge`` judged this session, by their roof's settings (array bytes, matrix side):
#: the figures draw the roof the chapter's tables use.
_JUDGED: dict[tuple[int, int], measure.Machine] = {}


def _machine(array_bytes: int | None = None, matmul_side: int = measure.ROOF_SIDE) -> measure.Machine:
    """The machine whose roof a figure draws: the one ``judge`` judged at these settings this
    session, where it did, else ``measure.this_machine`` (the first repeats alone)."""
    key = measure.roof_settings(array_bytes, matmul_side)
    return _JUDGED.get(key) or measure.this_machine(*key)


def _bandwidth_label(m: measure.Machine) -> str:
    if m.roof_source in ("the reference run", "the reference run for the bandwidth"):
        return "the reference run's"
    return f"{m.bandwidth_from}, fastest sample"


def _math_label(m: measure.Machine) -> str:
    if m.roof_source in ("the reference run", "the reference run for the math rate"):
        return "the reference run's"
    return "fastest sample"


def roofline_spec(array_mib: int | None = None, matmul_side: int = 2048) -> dict:
    """This machine's roof from the fastest samples of its bandwidth and math rate (the roof the
    chapter's tables use: ``judge``), with the roofs its first repeats' medians and slowest would
    draw (how much the measurement wobbles). The array defaults to the one sized from this
    machine's cache (``measure.bandwidth_array_bytes``)."""
    array_mib = _chapter_array_mib() if array_mib is None else int(array_mib)
    m = _machine(array_mib * MIB, int(matmul_side))
    x, y, ridge = _roof(m)
    lx, ly, _ = _roof(m, m.bandwidth.low, m.matmul.low)
    mx, my, _ = _roof(m, m.bandwidth.median, m.matmul.median)
    data = [
        dict(type="scatter", x=lx + [None] + mx, y=ly + [None] + my, mode="lines",
             line=dict(color=FAINT, width=1, dash="dot"), hoverinfo="skip",
             name="the roofs the slowest repeats and the medians would draw"),
        *_roof_traces(x, y, ridge, "the roof (fastest samples)", f"ridge {ridge:.3g} FLOP/byte"),
        dict(type="scatter", x=[INTENSITY_RANGE[0] * 2, INTENSITY_RANGE[1] / 2], mode="text",
             y=[INTENSITY_RANGE[0] * 2 * m.bandwidth_bytes_per_s / GIGA / 3, y[1] * 1.6],
             text=[f"bandwidth {m.bandwidth_bytes_per_s / GB:.3g} GB/s ({_bandwidth_label(m)})",
                   f"matrix product {m.peak_flop_per_s / GIGA:.3g} GFLOP/s ({_math_label(m)})"],
             textposition=["bottom right", "top left"], hoverinfo="skip", name="measurements"),
    ]
    layout = base_layout(_title("Roofline of this machine", m), "arithmetic intensity (FLOP per byte moved)",
                         "attainable math rate (float32 GFLOP/s)", x_log=True, y_log=True,
                         x_range=INTENSITY_RANGE, y_range=GFLOPS_RANGE, legend=True)
    layout["margin"] = {**layout["margin"], "t": TOP_MARGIN}
    for trace in data[2:]:
        trace["showlegend"] = False   # the ridge and the speeds are labelled where they stand
    return {"data": data, "layout": layout}


def array_stops(array_mib: int) -> tuple[int, ...]:
    """What the array slider offers: ``ARRAY_MIB``, then powers of two up to the chapter's array,
    and the chapter's array itself."""
    array_mib = whole("array_mib", array_mib)
    doublings = {2**i for i in range(array_mib.bit_length()) if 2**i > ARRAY_MIB[-1]}
    return tuple(sorted(set(ARRAY_MIB) | doublings | {array_mib}))


def roofline_panel(array_mib: int | None = None, matmul_side: int = 2048, div_id: str = "fig-machine-roofline"):
    """Re-measure with another array size or matrix side (live); the built machine's roof (static)."""
    array_mib = _chapter_array_mib() if array_mib is None else int(array_mib)
    controls = [Remeasure("array_mib", "array read (MiB)", array_stops(array_mib), kind="slider"),
                Remeasure("matmul_side", "matrix side", MATMUL_SIDES, kind="slider")]
    return _panel(roofline_spec, dict(array_mib=array_mib, matmul_side=matmul_side), controls, div_id)


def _rounds(chapter: bool, rounds: int) -> tuple[int, str]:
    """The chapter's own settings keep its rounds (and its measurement); any other setting is
    measured live, in one round, so that a control answers within seconds."""
    return ((rounds, f"points: fastest of {rounds} rounds; bars reach the slowest") if chapter else
            (1, "one round, measured live"))


#: The legend of the model's points in each sweep figure: the model, computed, not measured (no promise
#: of what any machine shows: the words under each table say whether this run showed it).
MODEL_NAME = "the model, computed, not measured: {formula}"


def _roof_traces(x: Sequence[float], y: Sequence[float], ridge: float, name: str, ridge_text: str) -> list[dict]:
    """A roof (``x``, ``y``: its three corners, as ``_roof`` gives them) and the dotted line up to its ridge."""
    return [dict(type="scatter", x=list(x), y=list(y), mode="lines", line=dict(color=ACCENT, width=3), name=name,
                 hovertemplate="%{x:.3g} FLOP/byte → %{y:.4g} GFLOP/s<extra></extra>"),
            dict(type="scatter", x=[ridge, ridge], y=[GFLOPS_RANGE[0], y[1]], mode="lines+text",
                 line=dict(color=ACCENT, width=1, dash="dot"), text=["", ridge_text],
                 textposition="top left", hoverinfo="skip", name="ridge")]


def _ceiling_traces(curve: Sequence[float], memory: Sequence[float], math_: float, largest: int) -> list[dict]:
    """A decoder's two ceilings over ``curve`` (batches), with the lower one drawn wide and faint beneath them."""
    return [dict(type="scatter", x=list(curve), y=[min(v, math_) for v in memory], mode="lines",
                 line=dict(color=FAINT, width=8), name="the lower ceiling", hoverinfo="skip",
                 showlegend=False),  # the model's circles sit on it
            dict(type="scatter", x=list(curve), y=list(memory), mode="lines", line=dict(color=INK, width=1, dash="dash"),
                 name="memory ceiling B·BW/(W + B·(K·L + A))",
                 hovertemplate="batch %{x:.3g}: %{y:.4g} tokens/s<extra></extra>"),
            dict(type="scatter", x=[1, largest], y=[math_, math_], mode="lines",
                 line=dict(color=ACCENT, width=1, dash="dash"), name="math ceiling P/F",
                 hovertemplate="%{y:.4g} tokens/s<extra></extra>")]


def _model_trace(x: Sequence[float], y: Sequence[float], formula: str, hover: str) -> dict:
    """The book's formula at each setting of a sweep, with this machine's measured roof: the
    shape the formula predicts, at or above the measured points. Hollow circles on a dotted line, named
    in the legend as the model (``MODEL_NAME``) and labelled "model" at the last point, so that no
    reader takes them for measurements."""
    x, y = list(x), list(y)
    return dict(type="scatter", x=x, y=y, mode="markers+lines+text",
                marker=dict(size=13, color=ACCENT, symbol="circle-open", line=dict(width=2, color=ACCENT)),
                line=dict(color=ACCENT, width=1, dash="dot"), text=[""] * (len(x) - 1) + ["model"],
                textposition="top center", textfont=dict(color=ACCENT), name=MODEL_NAME.format(formula=formula),
                hovertemplate=f"model: {hover}<extra></extra>")


def _down_to_slowest(samples: Sequence[measure.Samples], scale: float = 1.0) -> dict:
    """Error bars from each point (its fastest round) down to its slowest round."""
    return dict(type="data", symmetric=False, array=[0.0] * len(samples),
                arrayminus=[(x.high - x.low) / scale for x in samples], color=INK, thickness=1, width=3)


def products_spec(side: int = 8192, max_batch: int = 256, chapter: tuple[int, int] = (8192, 256)) -> dict:
    """A side x side float32 weight matrix times 1, 2, 4, ... vectors, each measured product a
    point on this machine's measured roof; beside the roof's slanted line, the plain read of the
    same matrix timed in the same rounds; and the model at each batch, min(P, I x BW) with this
    machine's roof (``_model_trace``: the climb-then-level shape the roofline predicts).
    ``chapter`` is the (side, max_batch) the chapter measured."""
    m = _machine()
    side, max_batch = int(side), int(max_batch)
    at_chapter = (side, max_batch) == tuple(chapter)
    rounds, how = _rounds(at_chapter, measure.SWEEP_ROUNDS)
    sweep = measure.product_sweep(side, side, measure.powers_of_two(max_batch), rounds,
                                  roof=(m.array_bytes, m.matmul_side) if at_chapter else None)
    x, y, ridge = _roof(m)
    x0, x1 = INTENSITY_RANGE
    read = sweep.read_bytes_per_s
    data = [
        dict(type="scatter", x=[x0, m.peak_flop_per_s / read], y=[x0 * read / GIGA, m.peak_flop_per_s / GIGA],
             mode="lines", line=dict(color=INK, width=1, dash="dot"), name="plain read of this matrix",
             hovertemplate=f"read at {read / GB:.3g} GB/s<extra></extra>"),
        *_roof_traces(x, y, ridge, "this machine's roof", f"ridge {ridge:.3g}"),
        dict(type="scatter", x=[p.intensity_flop_per_byte for p in sweep], y=[p.flop_per_s / GIGA for p in sweep],
             mode="markers+lines+text", marker=dict(size=10, color=INK), line=dict(color=INK, width=1),
             error_y=_down_to_slowest([p.rate for p in sweep], GIGA),
             text=[str(p.batch) for p in sweep], textposition="bottom right", name="measured products",
             # how fast a product read its weights means something only below the ridge, where memory sets the pace
             customdata=[[p.batch, f", weights read at {p.bandwidth_bytes_per_s / GB:.3g} GB/s"
                          if p.intensity_flop_per_byte < ridge else ""] for p in sweep],
             hovertemplate="%{customdata[0]} vectors: %{x:.3g} FLOP/byte, %{y:.4g} GFLOP/s%{customdata[1]}<extra></extra>"),
        _model_trace([p.intensity_flop_per_byte for p in sweep],
                     [min(m.peak_flop_per_s, p.intensity_flop_per_byte * m.bandwidth_bytes_per_s) / GIGA for p in sweep],
                     "min(P, I·BW)", "%{x:.3g} FLOP/byte → %{y:.4g} GFLOP/s"),
    ]
    mb = side * side * 4 / MB
    article = "An" if f"{side:,}".startswith(("8", "11,", "18,")) else "A"   # "an eight thousand ...", "an eleven ..."
    layout = base_layout(_title(f"{article} {side:,} × {side:,} weight matrix ({mb:,.3g} MB) times 1 to {max_batch} vectors",
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
    """Measured tokens/s of the small decoder at batches 1, 2, 4, ... against the two ceilings,
    and the model at each measured batch, min(memory, math) (``_model_trace``: the memory-to-math
    knee the ceilings predict). The chapter measured the contexts in ``together`` in the same rounds, up to
    ``chapter_max_batch``; any other setting is measured live, on its own."""
    m = _machine()
    context_tokens, max_batch = int(context_tokens), int(max_batch)
    batches = measure.powers_of_two(max_batch)
    chapter = context_tokens in together and max_batch == chapter_max_batch
    rounds, how = _rounds(chapter, measure.DECODE_ROUNDS)
    contexts = tuple(together) if chapter else (context_tokens,)
    points = measure.at_context(measure.decode_sweep(tinyllm.TINY_LLAMA, batches, contexts, rounds=rounds,
                                                     roof=(m.array_bytes, m.matmul_side) if chapter else None),
                                context_tokens)
    curve = list(np.geomspace(1, max(batches), 48))
    memory = [measure.decode_ceilings_tokens_per_s(m, b, context_tokens)[0] for b in curve]
    math_ = measure.decode_ceilings_tokens_per_s(m, 1, context_tokens)[1]
    data = [
        *_ceiling_traces(curve, memory, math_, max(batches)),
        dict(type="scatter", x=[p.batch for p in points], y=[p.tokens_per_s for p in points],
             mode="markers+lines", marker=dict(size=10, color=INK), line=dict(color=INK, width=1),
             error_y=_down_to_slowest([p.rate for p in points]),
             name="measured", customdata=[[measure.efficiency(p, m)] for p in points],
             hovertemplate="batch %{x}: %{y:.4g} tokens/s, %{customdata[0]:.0%} of the ceiling<extra></extra>"),
        _model_trace(batches, [min(measure.decode_ceilings_tokens_per_s(m, b, context_tokens)) for b in batches],
                     "the lower ceiling, min(memory, math)", "batch %{x}: %{y:.4g} tokens/s"),
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


# ---- words that follow the measurements ------------------------------------------------------
#
# Short sentences, one number each, in bullets whose bold label says what the bullet is about.
# Each block opens with whether the measurements it speaks for were quiet or noisy, and closes
# with whether this run shows the sweep's lesson; where it does not, it says why (noise, or a
# rate far below its ceilings) and what a quiet machine should show instead. Every verdict follows
# a rule the chapter states, with the constants below: quiet only when every spread is at most
# QUIET_SPREAD; the climb-then-level shape only by CLIMB_SHARE and LEVEL_FACTOR, past the batches
# where numpy switches routine (SWITCH).
#
# A verdict names only a cause the data show. Two facts about the run decide which ones
# (``measure.Machine.steady`` and ``clean_ceiling``, from ``judge``): a steady load from other
# programs slows every round alike, so rounds that agree show that noise did not cause a shortfall
# only where such a load is ruled out (``steady``); and noise, which only slows a measured rate,
# cannot have lowered a point's share of its ceiling only where the ceiling itself was measured
# cleanly (``clean_ceiling``). A cache is named as a reason a point beat its roof only where the
# overshoot is within what a cache could hold (``cache_lift``). The library is named as a cause
# only as a likely one, unless the sweep's control shows it.

#: A rate within this fraction of twice the last one "doubled"; one within ``LEVEL_WITHIN`` of the
#: last one "held level".
DOUBLED_WITHIN = 0.1
LEVEL_WITHIN = 0.05
#: A measured change within this fraction of the roof's (or the formula's) change kept pace with it.
PACE_WITHIN = 0.1
#: The book's rule (``generation.regime``, from the chapter on overhead): a rate below this share
#: of the lower ceiling is far below both ceilings.
NEAR = 0.5
#: A measurement is quiet when its fastest repeat (or round) is at most this many times its slowest,
#: and a run or a sweep is quiet when every one of its measurements is (``measure.QUIET_SPREAD``).
QUIET_SPREAD = measure.QUIET_SPREAD
#: The climb-then-level shape, in two rules the chapter states: from 1 vector to the first batch past
#: the routine switch, the measured rate rises by at least this share of the roof's factor ...
CLIMB_SHARE = 0.5
#: ... and past the ridge (and past the switch), where the roof is flat, it changes by less than this
#: factor either way.
LEVEL_FACTOR = 1.5
#: The batches at which numpy may switch from its matrix-vector routine to its general one, and the
#: rate may dip below one vector's (the chapter says so): the shape's rules leave them out.
SWITCH = (2, 8)
#: The quiet target of the chapter's project (exercise 8): every spread at most this, the chapter's own quiet
#: bar (so that the project and the run's summary call the same run quiet), beside a roof within 1 - KEPT_UP
#: of a reference run or of a second run.
PROJECT_SPREAD = QUIET_SPREAD
#: The regime ``regime_kinds`` gives a rate above its lower ceiling (``generation.regime`` refuses one).
ABOVE = "above its lower ceiling"
#: The regime ``regime_kinds`` gives a rate below NEAR of its lower ceiling that noise alone could have
#: held there (its rounds were noisy, or the run was not steady): it is not placed by the book's rule.
TOO_NOISY = "not placed"


def _beat(what: str, plural: bool = False, *, cache: bool = False, shape: bool = False,
          source: str = "this run") -> str:
    """Why a measured rate sat above its ``what`` (roof or ceiling), among the reasons the data
    allow: it ran in a quieter spell than the fastest sample the roof came from (``source``: whose,
    "this run" or the reference run); it read some of its bytes from a cache (``cache``: only where
    ``cache_lift`` allows); it ran its own products more efficiently than the roof's square one
    (``shape``: only where the math sets the pace)."""
    they, it, their = ("They", "they", "their") if plural else ("It", "it", "its")
    fastest = ("the fastest sample of this run's roof" if source == "this run" else
               "the reference run's fastest sample")
    why = [f"{it} ran in a quieter spell than {fastest}"]
    if cache:
        why.append(f"{it} read some of {their} bytes from a cache")
    if shape:
        why.append(f"{it} ran {their} own products more efficiently than the roof's square one")
    return f"{they} beat the {what}: {', or '.join(why)}."


def cache_lift(cache_bytes: float | None, step_bytes: float, resident_bytes: float = 0.0) -> float:
    """How far above its memory roof a cache could lift a point that moves ``step_bytes`` per step
    (or per product), as a share: (C + R) / S, where C is the last-level cache (``cache_bytes``;
    none where not reported) and R the bytes a step writes and reads back soon after, such as the
    activations, which may never leave the caches (``resident_bytes``); at most 1. A point whose
    share of its roof exceeds 1 by more than this did not owe it to a cache."""
    step = positive("step_bytes", step_bytes)
    return min(1.0, ((cache_bytes or 0) + max(0.0, resident_bytes)) / step)


def _factor(r: float) -> str:
    """A factor as the words give it: "0.75×", "4.8×", "16×", "120×"."""
    return f"{r:.2g}×" if r < 10 else f"{r:,.0f}×"


def _factors(a: float, b: float) -> tuple[str, str]:
    """Two factors as the words give them (``_factor``), with the decimals that keep them apart where they differ:
    "4.97×" and "5.02×", not "5×" and "5×"."""
    for decimals in range(4):
        shown = (_factor(a), _factor(b)) if decimals == 0 else (f"{a:,.{decimals}f}×", f"{b:,.{decimals}f}×")
        if shown[0] != shown[1] or a == b:
            return shown
    return shown


_spread_text = measure.spread_text


def _went(r: float) -> str:
    """How a rate changed over a span, ``r`` = new / old: "rose 4.8×", "held level", "fell by 20%"."""
    if r > 1 + LEVEL_WITHIN:
        return f"rose {_factor(r)}"
    if r >= 1 - LEVEL_WITHIN:
        return "held level"
    return f"fell by {1 - r:.0%}"


def _bullets(items: Sequence[tuple[str, str]]) -> str:
    """"- **Label:** text" lines."""
    return "\n".join(f"- **{label}:** {text[0].upper()}{text[1:]}" for label, text in items)


#: The title of the folded bullets under a sweep's table: the evidence its shown bullets rest on.
EVIDENCE = "Refinement: the evidence behind these words"


def _folded(shown: Sequence[tuple[str, str]], details: Sequence[tuple[str, str]]) -> str:
    """``shown`` as bullets, then ``details`` as bullets in a collapsed block (EVIDENCE) where there are any: the
    reader meets the verdict first, and the evidence one click away."""
    if not details:
        return _bullets(shown)
    return f"{_bullets(shown)}\n\n```{{admonition}} {EVIDENCE}\n:class: dropdown\n{_bullets(details)}\n```"


def is_noisy(spread: float) -> bool:
    """Whether a spread (fastest over slowest) is more than this chapter calls quiet."""
    return positive("spread", spread) > QUIET_SPREAD


def noise_words(spreads: Sequence[float], what: str = "rows") -> str:
    """Whether a sweep was quiet by the chapter's rule: quiet only when every one of its
    measurements (``spreads``: each one's fastest round over its slowest; ``what`` names them, e.g.
    "rows" of its table) spread at most QUIET_SPREAD; else noisy, however few spread more (the
    chapter defines no third word). "quiet: all 10 rows varied at most 1.20× from slowest to
    fastest." or "noisy: 1 of its 7 batches varied more than 1.25× from slowest to fastest, 1.50×;
    the other 6 varied at most 1.25×."
    """
    spreads = [positive("spreads", x) for x in spreads]
    if not spreads:
        raise ValueError("spreads must hold at least one value")
    noisy = [x for x in spreads if is_noisy(x)]
    n, worst = len(spreads), max(spreads)
    if not noisy:
        return f"quiet: all {n} {what} varied at most {_spread_text(worst)} from slowest to fastest."
    if len(noisy) == n:
        return (f"noisy: all {n} {what} varied more than {QUIET_SPREAD:g}× from slowest to fastest, "
                f"up to {_spread_text(worst)}.")
    most = _spread_text(worst) if len(noisy) == 1 else f"up to {_spread_text(worst)}"
    rest = "the other varied" if n - len(noisy) == 1 else f"the other {n - len(noisy)} varied"
    return (f"noisy: {len(noisy)} of its {n} {what} varied more than {QUIET_SPREAD:g}× from slowest to fastest, "
            f"{most}; {rest} at most {QUIET_SPREAD:g}×.")


def change_word(ratio: float) -> str:
    """How a rate changed when the batch doubled, ``ratio`` = new rate / old rate: "more than
    doubled" (above 2 x (1 + DOUBLED_WITHIN)), "doubled", "rose less than double", "held level"
    (within LEVEL_WITHIN of 1) or "fell"."""
    r = positive("ratio", ratio)
    if r > 2 * (1 + DOUBLED_WITHIN):
        return "more than doubled"
    if r >= 2 * (1 - DOUBLED_WITHIN):
        return "doubled"
    if r > 1 + LEVEL_WITHIN:
        return "rose less than double"
    if r >= 1 - LEVEL_WITHIN:
        return "held level"
    return "fell"


def _join(parts: Sequence[str]) -> str:
    """"a", "a and b", "a, b and c"."""
    parts = list(parts)
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _runs(items: Sequence, key) -> list[list]:
    """Consecutive items with the same key, grouped."""
    runs: list[list] = []
    for item in items:
        if runs and key(runs[-1][-1]) == key(item):
            runs[-1].append(item)
        else:
            runs.append([item])
    return runs


def pace_word(measured: float, yardstick: float) -> str:
    """How a measured change (new rate / old rate) compares with the roof's change over the same
    span, ``yardstick``: "keeping pace with it" (within PACE_WITHIN of it), "outpacing it" or
    "falling behind it"."""
    r, y = positive("measured", measured), positive("yardstick", yardstick)
    if r > y * (1 + PACE_WITHIN):
        return "outpacing it"
    if r >= y * (1 - PACE_WITHIN):
        return "keeping pace with it"
    return "falling behind it"


def drop_words(batches: Sequence[int], rates: Sequence[float], what: str = "vectors", subject: str = "The rate",
               level: bool = False) -> str:
    """The doublings of the batch at which a measured rate fell (and, with ``level``, held level),
    as one sentence: "The rate dropped from 1 to 2 and from 64 to 128 vectors."; "" where it
    did neither."""
    steps = [(b0, b1, change_word(r1 / r0)) for b0, b1, r0, r1 in zip(batches, batches[1:], rates, rates[1:])]
    kinds = (("fell", "dropped"), ("held level", "held level")) if level else (("fell", "dropped"),)
    parts = [f"{said} {_join([f'from {b0:,} to {b1:,}' for b0, b1, w in steps if w == word])}"
             for word, said in kinds if any(w == word for _, _, w in steps)]
    return f"{subject} {_join(parts)} {what}." if parts else ""


def doubling_words(batches: Sequence[int], rates: Sequence[float], roofs: Sequence[float],
                   what: str = "vectors", rate: str = "math rate") -> str:
    """What a measured rate did over each region of the roof, against the roof's own change there:
    below the ridge the roof doubles with the batch, across it the roof rises by its own factor,
    past it the roof is flat. One bullet per region, two short sentences each: the roof's change,
    then the measured change and whether it kept pace (``pace_word``, over the region's doublings).
    ``batches`` double from one to the next; ``rates`` are the measured rates and ``roofs`` the
    roof's at each batch (any one unit)."""
    batches = [whole("batch", b) for b in batches]
    rates = [positive("rate", r) for r in rates]
    roofs = [positive("roof", r) for r in roofs]
    if not len(batches) == len(rates) == len(roofs) or len(batches) < 2:
        raise ValueError("batches, rates and roofs must be of one length, at least 2")
    if any(b1 != 2 * b0 for b0, b1 in zip(batches, batches[1:])):
        raise ValueError(f"batches must double from one to the next; got {batches}")
    steps = [(i, f1 / f0) for i, (f0, f1) in enumerate(zip(roofs, roofs[1:]))]

    def region_of(step) -> str:
        roof = step[1]
        if roof >= 2 * (1 - DOUBLED_WITHIN):
            return "Below the ridge"
        return "Past the ridge" if roof <= 1 + LEVEL_WITHIN else "Across the ridge"

    items = []
    for region in _runs(steps, region_of):
        first, last = region[0][0], region[-1][0] + 1
        roof, measured = roofs[last] / roofs[first], rates[last] / rates[first]
        flat = region_of(region[0]) == "Past the ridge"
        said = "the roof is flat" if flat else f"the roof rises {_factor(roof)}"
        pace = pace_word(measured, roof)
        if pace == "keeping pace with it":
            tail = ": it kept pace with the roof"
        elif pace == "outpacing it":
            tail = ": it rose faster than the roof"
        elif measured > 1 + LEVEL_WITHIN:
            tail = ": it rose less than the roof"
        else:
            tail = ", while the roof stayed flat" if flat else ", while the roof rose"
        items.append((f"{region_of(region[0])}, {batches[first]:,} to {batches[last]:,} {what}",
                      f"{said}. The measured {rate} {_went(measured)}{tail}."))
    return _bullets(items)


def products_words(sweep: measure.ProductSweep, m: measure.Machine) -> Markdown:
    """Under the product table: whether the sweep was quiet (``noise_words``, over every row of
    the table), any point above the roof, first, and why (``above_roof_words``: past the ridge, a
    point whose median round beat the median of the roof's square product in the same rounds ran
    its shape more efficiently than the roof's product; one that beat it only in its fastest round
    ran in a quieter spell; below the ridge, a cache only where ``cache_lift`` allows), where the
    rate dropped, the plain read beside the 1-vector product's read of the same matrix
    (``plain_read_words``), and whether this run shows the climb-then-level shape (``product_lesson_words``,
    told whether the run was steady and what the control showed). The lesson alone sets the rate
    beside the roof over spans of batches, the two spans its rules test, so that the words define
    "below" and "past the ridge" once (``doubling_words``, region by region, is not shown here). The lesson and any
    point above the roof show; the rest is the evidence, folded (``_folded``)."""
    points = list(sweep)
    roofs = [min(m.peak_flop_per_s, p.intensity_flop_per_byte * m.bandwidth_bytes_per_s) for p in points]
    batches, rates = [p.batch for p in points], [p.flop_per_s for p in points]
    spreads = [p.rate.spread for p in points] + [sweep.read.spread]
    if sweep.one_at_a_time is not None:
        spreads.append(sweep.one_at_a_time.spread)
    shown, details = [], [("This sweep", noise_words(spreads))]
    roof_median = (sweep.roof_matmul or m.rounds_matmul or m.matmul).median
    above = [(p.batch, p.flop_per_s / r, p.intensity_flop_per_byte >= m.balance_point_flop_per_byte,
              p.rate.median > roof_median,
              p.flop_per_s / r - 1 <= cache_lift(m.last_level_cache, p.bytes_moved))
             for p, r in zip(points, roofs) if p.flop_per_s > r]
    if above:
        shown.append(("Above the roof", above_roof_words(
            [a[0] for a in above], [a[1] for a in above], batches, past=[a[2] for a in above],
            typical=[a[3] for a in above], roof_side=m.matmul_side, cached=[a[4] for a in above],
            source=m.roof_source)))
    if len(points) > 1:
        drops = drop_words(batches, rates)
        if drops:
            details.append(("Drops", drops))
    vector = measure.vector_read(sweep)
    details.append(("The plain read", plain_read_words(sweep.read_bytes_per_s,
                                                       vector.high if vector is not None else None)))
    if len(points) > 1:
        control = None
        if sweep.one_at_a_time is not None:
            batched = measure.point_at(sweep, sweep.control_batch).rate.values
            quiet = not is_noisy(sweep.one_at_a_time.spread) and not is_noisy(
                measure.point_at(sweep, sweep.control_batch).rate.spread)
            control = (sweep.control_batch, [c / b for c, b in zip(sweep.one_at_a_time.values, batched)],
                       quiet and m.products_steady)
        shown.insert(0, ("The lesson", product_lesson_words(batches, rates, roofs, max(spreads),
                                                            rounds=[p.rate.values for p in points],
                                                            steady=m.products_steady, control=control)))
    if not shown:   # a single batch has no lesson to lead with: every bullet shows
        shown, details = details, []
    return Markdown(_folded(shown, details))


def plain_read_words(read: float, vector: float | None = None) -> str:
    """The sweep's plain read of the weight matrix (``read``, bytes/s in its fastest round) beside the 1-vector
    product's read of the same matrix in the same rounds (``vector``, its fastest; None where the sweep has no batch
    of 1), in short sentences: two ways of reading the same bytes in the same spells, so a gap between them comes
    from the way of reading, not from the machine's spell. The roof takes the faster (``measure.Machine.bandwidth``)."""
    read = positive("read", read)
    said = f"its fastest round read {read / GB:,.1f} GB/s"
    if vector is None:
        return said + "."
    vector = positive("vector", vector)
    said += (f", {read / vector:.0%} of what the 1-vector product read from the same matrix in the same rounds "
             f"({vector / GB:,.1f} GB/s).")
    if read > vector * (1 + LEVEL_WITHIN):
        why = "Here numpy's plain sum read faster than the BLAS library's product. The roof takes the fastest read of the whole run."
    elif read >= vector * (1 - LEVEL_WITHIN):
        why = "The two ways of reading agree."
    else:
        why = "Here numpy's plain sum reads slower than the BLAS library's product. The roof takes the fastest read of the whole run."
    return f"{said} {why}"


def _climb_and_level(batches: Sequence[int], roofs: Sequence[float]) -> tuple[tuple[int, int] | None,
                                                                                tuple[int, int] | None]:
    """The spans of a sweep (first and last index) that the climb-then-level rules test: the climb,
    from its smallest batch, where the roof must still rise, to the first batch past the routine
    switch (SWITCH; or its last batch); and the level part, from the first batch past both the
    ridge and the switch to the last, where the roof is flat. None where the sweep has no such span."""
    n = len(roofs)
    past_switch = next((i for i, b in enumerate(batches) if b > SWITCH[-1]), None)
    rising = n > 1 and roofs[1] / roofs[0] > 1 + LEVEL_WITHIN
    end = past_switch if past_switch is not None else n - 1
    climb = (0, end) if rising and end > 0 else None
    flat_from = n - 1
    while flat_from > 0 and roofs[flat_from] / roofs[flat_from - 1] <= 1 + LEVEL_WITHIN:
        flat_from -= 1
    start = max(flat_from, past_switch if past_switch is not None else flat_from)
    level = (start, n - 1) if start < n - 1 else None
    return climb, level


def _vectors(n: int) -> str:
    return f"{n:,} {'vector' if n == 1 else 'vectors'}"


def product_lesson_words(batches: Sequence[int], rates: Sequence[float], roofs: Sequence[float],
                         spread: float, rounds: Sequence[Sequence[float]] | None = None, steady: bool = True,
                         control: tuple[int, Sequence[float], bool] | None = None) -> str:
    """Whether a product sweep shows the roofline's lesson, the climb-then-level shape, by the two
    rules the chapter states, which leave out the batches where numpy may switch routine (SWITCH):
    from its smallest batch to the first batch past the switch the rate rose by at least CLIMB_SHARE
    of the roof's factor, and past the ridge (and the switch), where the roof is flat, it changed
    by less than LEVEL_FACTOR either way. Then a dip at the switch, and what the control says of
    it (``control``: the batch it multiplied one vector at a time, in each round its rate over the
    batched product's, and whether both were measured cleanly: quiet rounds on a steady run).
    Faster in every round, measured cleanly, shows that the routine made the dip; faster in every
    round on a noisy or unsteady run points to the routine, with the size of the gap in doubt. How the
    widest batch reached; and, where the shape is missing, why, and what a quiet machine should
    show only where noise may explain every failure the rounds judged (nothing more where the rounds rule
    noise out: the cause they name is the lesson). ``batches`` double from one
    to the next; ``rates`` and ``roofs`` are in any one unit; ``spread`` is the sweep's widest
    spread of rounds (noisy above QUIET_SPREAD). Where the control settles nothing, the words count
    the rounds it was faster in, since the table gives each row's fastest round only.

    A rule that fails is put down to noise only where the rounds show it: with ``rounds`` (each
    batch's rate in every round, the rounds in one order), a failure that held within every round
    (the ratio of the span's two ends, round by round), with quiet rounds at both ends, on a
    ``steady`` run (a steady load from other programs ruled out), is not noise; the library is
    then a likely cause, named as such, since the sweep does not test it. One that held in every
    round on a run that was not steady, or with a noisy end, may still be noise in part; one that
    some round did not share may be noise. Without ``rounds``, a failure is noise where ``spread``
    is noisy or the run was not steady."""
    batches = [whole("batch", b) for b in batches]
    rates = [positive("rate", r) for r in rates]
    roofs = [positive("roof", r) for r in roofs]
    spread = positive("spread", spread)
    if not len(batches) == len(rates) == len(roofs) or len(batches) < 2:
        raise ValueError("batches, rates and roofs must be of one length, at least 2")
    if rounds is not None:
        rounds = [[positive("rounds", x) for x in r] for r in rounds]
        if len(rounds) != len(batches) or len({len(r) for r in rounds}) != 1 or not rounds[0]:
            raise ValueError("rounds must give every batch's rate in each of the same rounds")

    def reason(a: int, b: int, fails, what: str, cause: str) -> tuple[str, bool]:
        """Why a rule failed between batches ``a`` and ``b`` (indices), and whether noise may be why."""
        busy = ("but other programs may have slowed every round alike (see how this run was judged, in \"Can you "
                "trust this run?\"), so it may still be noise")
        if rounds is None:
            if is_noisy(spread):
                return "The rounds were noisy, so other programs may have caused it.", True
            if not steady:
                return f"The rounds agreed, {busy}.", True
            return (f"The rounds agreed, so it is not noise. A likely cause, which this sweep does not test: "
                    f"{cause}."), False
        if not all(fails(y / x) for x, y in zip(rounds[a], rounds[b])):
            return (f"The {what} did not hold in every round: it lies within the rounds' variation, so this sweep "
                    "cannot confirm it."), True
        ends = [i for i in (a, b) if is_noisy(max(rounds[i]) / min(rounds[i]))]
        if not ends and steady:
            return (f"The {what} held in every round, so it is not noise. A likely cause, which this sweep does not "
                    f"test: {cause}."), False
        if not ends:
            return f"The {what} held in every round, {busy}.", True
        worst = max(max(rounds[i]) / min(rounds[i]) for i in ends)
        who = _vectors(batches[ends[0]]) if len(ends) == 1 else f"{batches[a]:,} and {batches[b]:,} vectors"
        return (f"The {what} held in every round, which points past noise. A likely cause, which this sweep does not "
                f"test: {cause}. But the rounds of {who} varied up to {_spread_text(worst)}, so part of it may be "
                "noise."), True

    climb, level = _climb_and_level(batches, roofs)
    said, fails, noisy, sure = [], 0, 0, 0
    climbed = False   # whether the climb's rule held (the verdict's first sentence says which half the run shows)
    climb_maybe = level_sure = False   # a failed climb that noise may explain; a failed level part that it cannot
    if climb is None:
        said.append(f"Its smallest batch, {_vectors(batches[0])}, lies at or "
                    "past the ridge, so it cannot show the climb.")
        fails += 1
    else:
        a, b = climb
        rose, roof = rates[b] / rates[a], roofs[b] / roofs[a]
        span = f"The climb, from {_vectors(batches[a])} to {batches[b]:,}: "
        rose_, bar_ = _factors(rose, CLIMB_SHARE * roof)
        if rose >= CLIMB_SHARE * roof:
            climbed = True
            said.append(f"{span}the rate rose {rose_}, above the bar of {bar_}, half of the roof's {roof:,.1f}×.")
        else:
            said.append(f"{span}the rate rose only {rose_}, below the bar of {bar_}, half of the roof's {roof:,.1f}×."
                        if rose > 1 else
                        f"{span}the rate did not rise ({_factor(rose)}), while the roof rose {_factor(roof)}.")
            fails += 1
            why, maybe = reason(a, b, lambda r: r < CLIMB_SHARE * roof, "shortfall",
                                "numpy's general routine, which takes over from 2 vectors, may stream the weights "
                                "less well than its matrix-vector routine")
            climb_maybe = maybe
            said.append(why)
            noisy += maybe
            sure += not maybe
    if level is None:
        said.append(f"Its widest batch, {_vectors(batches[-1])}, lies below "
                    "the ridge, so it cannot show the level part.")
        fails += 1
    else:
        a, b = level
        changed = rates[b] / rates[a]
        span = f"The level part, past the ridge, from {batches[a]:,} vectors to {batches[b]:,}: "
        if 1 / LEVEL_FACTOR < changed < LEVEL_FACTOR:
            said.append(f"{span}the rate changed only {_factor(changed)}, within {LEVEL_FACTOR:g}× either way.")
        else:
            said.append(f"{span}the rate {_went(changed)}, more than {LEVEL_FACTOR:g}× either way.")
            fails += 1
            up = changed >= LEVEL_FACTOR
            why, maybe = reason(a, b, (lambda r: r >= LEVEL_FACTOR) if up else (lambda r: r <= 1 / LEVEL_FACTOR),
                                "rise" if up else "fall",
                                "reading and math that take turns, and the library's tiling, whose cost per weight "
                                "shrinks as the batch grows" if up else
                                "the library may run the widest batches less efficiently")
            level_sure = not maybe
            said.append(why)
            noisy += maybe
            sure += not maybe
    dip = [b for b, r in zip(batches, rates) if SWITCH[0] <= b <= SWITCH[-1] and r < rates[0] * (1 - LEVEL_WITHIN)]
    if dip and batches[0] == 1:
        where = f"{dip[0]:,}" if len(dip) == 1 else f"{dip[0]:,} to {dip[-1]:,}"
        said.append(f"At {where} vectors the rate dipped below one vector's, as the rules allow.")
        if control is not None and control[0] in dip:
            pair, ratios = whole("control batch", control[0]), [positive("control", x) for x in control[1]]
            clean = bool(control[2]) if len(control) > 2 else True
            faster = (f"the same {pair:,} vectors, multiplied one at a time, ran faster in every round, "
                      f"{_factor(float(np.median(ratios)))} in the median round.")
            if all(x > 1 + LEVEL_WITHIN for x in ratios) and clean:
                said.append(f"The control shows why: {faster} The routine numpy switches to, not the machine, made "
                            "the dip.")
            elif all(x > 1 + LEVEL_WITHIN for x in ratios):
                doubt = (f"these rounds varied more than {_spread_text(QUIET_SPREAD)}" if steady else
                         "other programs may have slowed every round alike")
                said.append(f"The control points to the routine numpy switches to: {faster} But {doubt}, so the size "
                            "of the gap is in doubt.")
            else:
                won = sum(x > 1 + LEVEL_WITHIN for x in ratios)
                rounds_won = "none" if not won else f"only {won}"
                said.append(f"The control does not settle why: the same {pair:,} vectors, multiplied one at a time, "
                            f"were faster in {rounds_won} of the {len(ratios)} rounds, compared round by round "
                            "(the table gives each one's fastest round).")
        elif control is None:
            said.append("numpy may switch routine there; this sweep does not test that.")
    height = f"The widest batch reached {rates[-1] / roofs[-1]:.0%} of the {'flat ' if level else ''}roof."
    if not fails:
        tail = ["The rounds were noisy, so the heights may still move."] if is_noisy(spread) else []
        return " ".join(["this run shows the climb-then-level shape.", *said, height, *tail])
    shape = ("the rate to climb along the slanted roof to the ridge, then level off under the flat roof, as the "
             "model's circles do. numpy may still dip at a few vectors, where it switches routine.")
    # a quiet machine is promised the shape only where noise may explain every failure the rounds judged; where the
    # rounds rule noise out, the words stop at the cause they name
    after = [f"On a quiet machine, the roofline expects {shape}"] if noisy and not sure else []
    first = ("this run shows the climb, but not the level part of the climb-then-level shape." if climbed else
             "this run does not show the level part of the climb-then-level shape, and its climb is undecided: it "
             "missed its bar within noise." if climb_maybe and level_sure else
             "this run does not clearly show the climb-then-level shape." if noisy and not sure else
             "this run does not show the climb-then-level shape.")
    return " ".join([first, *said, height, *after])


def above_roof_words(batches: Sequence[int], shares: Sequence[float], every: Sequence[int],
                     what: str = "vectors", past: Sequence[bool] | None = None, why: bool = True,
                     typical: Sequence[bool] | None = None, roof_side: int | None = None,
                     cached: Sequence[bool] | None = None, source: str = "this run") -> str:
    """Sentences naming the measured points that sat above their roof (``shares`` > 1 of it), then
    why (without ``why``, only the first sentence). ``past`` says which points lie past the ridge
    (default none); ``cached``, for which points a cache could explain the overshoot
    (``cache_lift``; default none); ``source``, whose speeds the roof uses. Without ``typical``, the
    reasons the data allow (``_beat``). With ``typical`` (for each point, whether its median round
    also beat the median of the roof's square product in the same rounds), the reason they show:
    past the ridge the roof is flat and does not depend on bytes, so reading fewer bytes cannot lift
    a point above it; a point that beat the roof in its median round too ran its product more
    efficiently than the roof's own square product of side ``roof_side`` (the flat roof
    under-estimates what numpy reaches on that shape), and one that beat it only in its fastest
    round ran in a quieter spell. Below the ridge, a quieter spell, or, where ``cached``, bytes
    found in a cache."""
    if not batches or len(batches) != len(shares) or any(positive("share", x) <= 1 for x in shares):
        raise ValueError("batches and shares must name at least one point, each share above 1")
    past = [False] * len(batches) if past is None else [bool(x) for x in past]
    if len(past) != len(batches):
        raise ValueError("past must say of every point whether it lies past the ridge")
    cached = [False] * len(batches) if cached is None else [bool(x) for x in cached]
    if len(cached) != len(batches):
        raise ValueError("cached must say of every point whether a cache could explain it")
    one = list(batches) == [1] and what.endswith("s")
    said = f"{_numbers(list(batches), list(every))} {what[:-1] if one else what} ran at {_shares(shares)} of the roof."
    if not why:
        return said
    if typical is None:
        below_cached = any(c and not p for c, p in zip(cached, past))
        return f"{said} {_beat('roof', plural=len(batches) > 1, cache=below_cached, shape=any(past), source=source)}"
    typical = [bool(x) for x in typical]
    if len(typical) != len(batches):
        raise ValueError("typical must say of every point whether its median round beat the roof's median")
    side = f"{whole('roof_side', roof_side):,} × {whole('roof_side', roof_side):,}" if roof_side else "square"
    groups = {"shape": [b for b, p, t in zip(batches, past, typical) if p and t],
              "spell": [b for b, p, t in zip(batches, past, typical) if p and not t],
              "below": [b for b, p in zip(batches, past) if not p]}
    out = [said]
    if any(past):
        out.append("Past the ridge the roof is flat and does not depend on bytes, so reading fewer bytes cannot lift "
                   "a point above it.")
    fastest = "the roof's fastest sample" if source == "this run" else "the reference run's fastest sample"
    for reason, chosen in groups.items():
        if not chosen:
            continue
        alone = len(chosen) == len(batches)
        many = len(chosen) > 1
        name = ("They" if many else "It") if alone else (
            f"{_numbers(chosen, list(every))} {what[:-1] if chosen == [1] and what.endswith('s') else what}")
        plural = many or (not alone and chosen != [1])   # "16 vectors ... their", "1 vector ... its"
        its, it = ("their", "they") if plural else ("its", "it")
        if reason == "shape":
            out.append(f"{name} beat the roof in {its} median round too. The roof's own {side} product ran less "
                       f"efficiently than {'these wider products' if many else 'this wider product'}, so the flat "
                       "roof under-estimates what numpy reaches here.")
        elif reason == "spell":
            out.append(f"{name} beat the roof only in {its} fastest round: {it} ran in a quieter spell than {fastest}.")
        else:
            cache = any(c for b, c in zip(batches, cached) if b in chosen)
            lift = "a quieter spell, or bytes found in a cache," if cache else "only a quieter spell"
            out.append(f"{name} {'lie' if plural else 'lies'} below the ridge, where {lift} can lift a point above "
                       "the roof.")
    return " ".join(out)


def _numbers(chosen: Sequence[int], every: Sequence[int]) -> str:
    """"4", "2 to 16" (consecutive in ``every``), "1, 8 and 64"."""
    if len(chosen) == 1:
        return f"{chosen[0]:,}"
    at = [list(every).index(b) for b in chosen]
    if at == list(range(at[0], at[0] + len(at))):
        return f"{chosen[0]:,} to {chosen[-1]:,}"
    return _join([f"{b:,}" for b in chosen])


def _batches(chosen: Sequence[int], every: Sequence[int]) -> str:
    """"batch 4", "batches 2 to 16", "batches 1, 8 and 64"."""
    return ("batch " if len(chosen) == 1 else "batches ") + _numbers(chosen, every)


#: "137%"; "100.4%" or "49.6%" where whole percents would hide which side of 100%, or of the half that places a
#: point, a share lies: as the tables print it
_share = measure._percent


def _percent_range(xs: Sequence[float]) -> str:
    """"50.2%", or "50.2% to 64%": shares printed on their side of half (``measure._percent``)."""
    lo, hi = measure._percent(min(xs), (NEAR,)), measure._percent(max(xs), (NEAR,))
    return lo if lo == hi else f"{lo} to {hi}"


def _shares(shares: Sequence[float]) -> str:
    """"137%", "105% to 120%", "100.4%"."""
    lo, hi = _share(min(shares)), _share(max(shares))
    return lo if lo == hi else f"{lo} to {hi}"


def regime_kinds(measured: Sequence[float], memory: Sequence[float], math_: Sequence[float],
                 spreads: Sequence[float] | None = None, steady: bool = True) -> list[str]:
    """The regime of each measured rate by the book's rule (``generation.regime``): ``ABOVE`` for a
    rate above its lower ceiling; memory-bound or compute-bound for one at or above NEAR of it;
    below that, far below both ceilings (``OVERHEAD_BOUND``), unless noise alone could have held it
    there: its rate times the spread of its rounds (``spreads``, one per rate; default: none) reaches
    NEAR of the ceiling, or the run was not ``steady`` (a steady load from other programs slows every
    round alike): then ``TOO_NOISY``. A rough guide, not a proof: a few rounds cannot say how much even
    the fastest was slowed. Noise only ever slows a rate, so a noisy point that still reached NEAR of
    its ceiling would sit at least as high on a quiet run and is placed."""
    spreads = [1.0] * len(measured) if spreads is None else [positive("spreads", x) for x in spreads]
    if len(spreads) != len(measured):
        raise ValueError("spreads must give one spread per measured rate")
    kinds = [ABOVE if x > min(mm, f) else regime(x, mm, f, NEAR) for x, mm, f in zip(measured, memory, math_)]
    return [TOO_NOISY if k == OVERHEAD_BOUND and (x * s >= NEAR * min(mm, f) or not steady) else k
            for k, s, x, mm, f in zip(kinds, spreads, measured, memory, math_)]


#: The label of each regime's line under a decode table (``regime_items``).
REGIME_LABELS = {MEMORY_BOUND: "Memory-bound", COMPUTE_BOUND: "Compute-bound", OVERHEAD_BOUND: "Far below both",
                 TOO_NOISY: "Not placed", ABOVE: "Above the ceiling"}


#: Each regime's name in the one-line verdict that leads the words under a decode table (``verdict_line``)
VERDICT_NAMES = {MEMORY_BOUND: "memory-bound", COMPUTE_BOUND: "compute-bound", OVERHEAD_BOUND: "overhead-bound",
                 TOO_NOISY: "not placed", ABOVE: "above its lower ceiling"}


def verdict_line(batches: Sequence[int], kinds: Sequence[str], shares: Sequence[float]) -> str:
    """Every batch's regime in one line, in the order the regimes first appear, each with its share of the lower
    ceiling: "Batch 1 memory-bound (74%); batches 2 to 32 overhead-bound (33% to 47%); batch 64 compute-bound
    (56%)." (``kinds`` as ``regime_kinds`` names them; ``shares``, each batch's share of its lower ceiling)."""
    batches = [whole("batch", b) for b in batches]
    shares = [positive("shares", x) for x in shares]
    if not batches or not len(batches) == len(kinds) == len(shares):
        raise ValueError("batches, kinds and shares must be of one length, at least 1")
    groups = {k: [(b, x) for b, x, kk in zip(batches, shares, kinds) if kk == k] for k in dict.fromkeys(kinds)}
    parts = [f"{_batches([b for b, _ in members], batches)} {VERDICT_NAMES[kind]} ({_shares([x for _, x in members])})"
             for kind, members in groups.items()]
    line = "; ".join(parts) + "."
    return line[0].upper() + line[1:]


def regime_items(batches: Sequence[int], measured: Sequence[float], memory: Sequence[float],
                 math_: Sequence[float], spreads: Sequence[float] | None = None, steady: bool = True,
                 clean: bool = True, cached: Sequence[bool] | None = None,
                 source: str = "this run") -> list[tuple[str, str]]:
    """Which regime each measured batch sat in by the book's rule (``generation.regime``), one
    line per regime, labelled (``REGIME_LABELS``), in the order the regimes first appear: at least
    half of the lower ceiling is bound by that wall; less is far below both ceilings, unless noise
    alone could have held it there (``regime_kinds``: noisy rounds, or a run that was not
    ``steady``), when it is not placed; a rate above its ceiling is named as such, with
    the reasons the data allow (``_beat``: a cache only where ``cached``, per batch; a more
    efficient product only against the math ceiling). A placed batch whose rounds spread more than
    QUIET_SPREAD stays placed where the ceilings were measured cleanly (``clean``): noise only slows
    a rate, so a quiet run would place it at least as high; where they were not, a quiet run may
    place it elsewhere. ``measured``, ``memory`` and ``math_`` are tokens/s."""
    batches = [whole("batch", b) for b in batches]
    measured = [positive("measured", x) for x in measured]
    memory = [positive("memory", x) for x in memory]
    math_ = [positive("math_", x) for x in math_]
    if not batches or not len(batches) == len(measured) == len(memory) == len(math_):
        raise ValueError("batches, measured, memory and math_ must be of one length, at least 1")
    spreads = [1.0] * len(batches) if spreads is None else list(spreads)
    cached = [False] * len(batches) if cached is None else [bool(x) for x in cached]
    if len(cached) != len(batches):
        raise ValueError("cached must say of every batch whether a cache could explain it")
    shares = [x / min(mm, f) for x, mm, f in zip(measured, memory, math_)]
    kinds = regime_kinds(measured, memory, math_, spreads, steady)
    groups = {k: [(b, s, v, c) for b, s, v, c, kk in zip(batches, shares, spreads, cached, kinds) if kk == k]
              for k in dict.fromkeys(kinds)}
    items = []
    for kind, members in groups.items():
        chosen = [b for b, _, _, _ in members]
        every = len(groups) == 1 and len(batches) > 1
        name = "every batch" if every else _batches(chosen, batches)
        plural = len(chosen) > 1 and not every
        its, that = ("their", "those are") if plural else ("its", "that is")
        share = _shares([s for _, s, _, _ in members])
        said = []
        if kind == TOO_NOISY:
            the = "their" if plural else "the" if every else "its"
            them, they = ("them", "they are") if len(chosen) > 1 else ("it", "it is")
            if steady:   # ``regime_kinds``: each one's share times its spread reaches half
                lifts = [s * v for _, s, v, _ in members]
                shown = f" ({_percent_range(lifts)})" if max(lifts) <= 1 else ""
                many = len(chosen) > 1
                said.append(f"{name} reached less than half of {its} lower ceiling ({share}), but "
                            f"{'their shares times the spreads' if many else 'its share times the spread'} of {the} "
                            f"rounds ({_spreads([v for _, _, v, _ in members])}) {'reach' if many else 'reaches'} at "
                            f"least half{shown}: noise alone could have held {them} there, so {they} not placed.")
            else:
                said.append(f"{name} reached less than half of {its} lower ceiling ({share}). This run was not "
                            "steady (see \"Can you trust this run?\"), so other programs may have slowed every round "
                            f"alike: {they} not placed.")
        elif kind == OVERHEAD_BOUND:
            said.append(f"{name} reached less than half of {its} lower ceiling ({share}). By the book's rule, "
                        f"{that} {OVERHEAD_BOUND}: overhead-bound by elimination, since neither memory nor math set the "
                        "pace.")
        elif kind in (MEMORY_BOUND, COMPUTE_BOUND):
            wall = "memory" if kind == MEMORY_BOUND else "math"
            said.append(f"{name} reached at least half of {its} lower ceiling, the {wall} ceiling ({share}). "
                        f"By the book's rule, {that} {kind}.")
            noisy = [b for b, _, v, _ in members if is_noisy(v)]
            if noisy:
                subject = (("the rounds" if every else f"{its} rounds") if noisy == chosen else
                           f"the rounds of {_batches(noisy, batches)}")
                them = "them" if len(noisy) > 1 else "it"
                said.append(f"{subject} varied more than {QUIET_SPREAD:g}×, but noise only slows a rate: a quiet run "
                            f"would place {them} at least as high." if clean else
                            f"{subject} varied more than {QUIET_SPREAD:g}×, and this run's ceilings may be too low "
                            f"as well, so a quiet run may place {them} elsewhere.")
        else:
            walls = {"math" if f < mm else "memory" for b, mm, f in zip(batches, memory, math_) if b in chosen}
            wall = "math ceiling" if walls == {"math"} else "memory ceiling" if walls == {"memory"} else "ceiling"
            cache = any(c for _, _, _, c in members) and "memory" in walls
            said.append(f"{name} measured above {its} lower ceiling ({share}). "
                        + _beat(wall, plural or every, cache=cache, shape="math" in walls, source=source))
        items.append((REGIME_LABELS[kind], " ".join(x[0].upper() + x[1:] for x in said)))
    return items


def regime_words(batches: Sequence[int], measured: Sequence[float], memory: Sequence[float],
                 math_: Sequence[float], spreads: Sequence[float] | None = None, **how) -> str:
    """``regime_items`` as one paragraph (``how``: its keywords ``steady``, ``clean``, ``cached``,
    ``source``)."""
    return " ".join(text for _, text in regime_items(batches, measured, memory, math_, spreads, **how))


def _spreads(spreads: Sequence[float]) -> str:
    """"2.80×", "1.40× to 9.60×"."""
    lo, hi = _spread_text(min(spreads)), _spread_text(max(spreads))
    return lo if lo == hi else f"{lo} to {hi}"


def _about(x: float) -> str:
    """A batch, rounded as the words give it: "6.6", "64", "1,200"."""
    return f"{x:,.1f}" if x < 10 else f"{x:,.0f}"


def crossing_words(crossing: float, estimate: float, largest: int,
                   per_sequence_bytes: float | None = None) -> str:
    """Where the book's two decode ceilings cross on this machine, the knee: ``crossing``, the
    batch at which the memory ceiling reaches the math ceiling (``math.inf``: never), beside
    ``estimate``, the short-context rule (balance point x W / F, with F at zero context), and
    ``largest``, the largest batch measured. Where the two differ by more than PACE_WITHIN, why:
    the crossing is B* = R W / (F - R (K L + A)), so the bytes each sequence adds to a step
    (``per_sequence_bytes``, K L + A) push it above the rule, and the work attention adds at a
    long context (a larger F) pulls it below."""
    estimate, largest = positive("estimate", estimate), whole("largest", largest)
    if crossing == math.inf:
        return "the ceilings never cross. Memory is the lower ceiling at every batch."
    crossing = positive("crossing", crossing)
    rule = f"The short rule, balance point × W/F, gives {_about(estimate)}."
    if crossing <= 1:
        return f"the ceilings cross below a batch of 1. {rule} Math is the lower ceiling at every batch."
    after = ("Past the knee, math is the lower ceiling." if crossing < largest else
             "That lies past the largest batch measured, so memory is the lower ceiling at every batch here.")
    why = ""
    if crossing > estimate * (1 + PACE_WITHIN) and per_sequence_bytes is not None:
        why = (f" The knee lies above the rule, which leaves out the "
               f"{measure._mb(positive('per_sequence_bytes', per_sequence_bytes))} of KV cache and activations each "
               "sequence adds to a step. With them, the memory ceiling climbs more slowly and meets the math "
               "ceiling later.")
    elif crossing < estimate * (1 - PACE_WITHIN):
        why = (" The knee lies below the rule, which leaves out attention's work: at this context each token costs "
               "more operations, which lowers the math ceiling.")
    return f"the ceilings cross at a batch of about {_about(crossing)}. {rule}{why} {after}"


def rise_words(batches: Sequence[int], rates: Sequence[float], what: str = "sequences") -> str:
    """How measured tokens/s changed from the smallest batch to the largest, in all, then at which
    doublings it fell or held level: "From 1 to 64 sequences, tokens per second rose 5.4×. They
    dropped from 1 to 2 sequences." """
    batches = [whole("batch", b) for b in batches]
    rates = [positive("rate", r) for r in rates]
    if len(batches) != len(rates) or len(batches) < 2:
        raise ValueError("batches and rates must be of one length, at least 2")
    overall = f"From {batches[0]:,} to {batches[-1]:,} {what}, tokens per second {_went(rates[-1] / rates[0])}."
    odd = drop_words(batches, rates, what, subject="They", level=True)
    return f"{overall} {odd or 'They rose at every doubling.'}"


def _decode_cached(points: Sequence[measure.DecodePoint], m: measure.Machine) -> list[bool]:
    """For each decode point above its ceiling, whether a cache could explain the overshoot
    (``cache_lift``, with the step's activations as bytes that may stay in the caches)."""
    out = []
    for p in points:
        share = measure.efficiency(p, m)
        out.append(share - 1 <= cache_lift(m.last_level_cache, p.bytes_per_step, p.activation_bytes_per_step))
    return out


def reference_speeds(m: measure.Machine) -> str:
    """Which of the roof's speeds come from the reference run, in words: "the reference run's
    bandwidth", "... math rate", "... bandwidth and math rate"; "" where none does."""
    return f"the reference run's {' and '.join(m.lifted_speeds)}" if m.lifted_speeds else ""


def ceiling_words(m: measure.Machine) -> str:
    """Where a table's ceilings come from, in one sentence, from how ``judge`` judged the run: this
    run's own roof; the reference run's speed where a measured point beat this run's (named); this
    run's roof below the reference's, which no point beat (and which other programs may have held
    down, where the ceilings are not clean); or this run's roof, which other programs may have
    lowered (then the shares may be too high)."""
    j = m.judgement
    if m.reference_roof and m.roof_source != "this run":
        beat = [j.beaten_by(speed) for speed in _lifted_speeds(m)] if j is not None else []
        why = f": {beat[0]}" if beat and beat[0] else ""
        return f"they use {reference_speeds(m)}, since a measured point beat this run's own{why}."
    if j is not None and j.state == measure.ROOF_BELOW:
        shares = dict(zip(("bandwidth", "math rate"), j.roof_shares or ()))
        said = (f"they use this run's own roof, though its {_join([f'{s} is {_kept(shares[s])}' for s in _short_speeds(m)])} "
                "of the reference run's: no measured point beat it.")
        return said + ("" if m.clean_ceiling else
                       " Other programs may have held it down: the shares may then be too high.")
    if j is not None and j.state == measure.ROOF_SLOWED:
        return ("they use this run's roof, which other programs slowed along with the decoder: the shares are "
                "those of a slowed machine.")
    if not m.clean_ceiling:
        return "they use this run's roof, which other programs may have lowered: the shares may be too high."
    return "they use this run's own roof."


def decode_words(points: Sequence[measure.DecodePoint], m: measure.Machine, split_test: bool = False) -> Markdown:
    """Under a decode table, in short bullets: every batch's regime in one line (``verdict_line``), whether its
    rounds were quiet (``noise_words``),
    whose roof the ceilings use where that is not plainly this run's (``ceiling_words``), the knee
    (``crossing_words``), how the measured rate rose with the batch (``rise_words``), one line per
    regime the batches sat in by the book's rule (``regime_items``), and whether this run shows the
    memory-to-math knee (``knee_lesson_words``; ``split_test``: a step's weight products are timed alone at this
    context, after the figure). The verdicts show; the lesson and the evidence it rests on are folded (``_folded``)."""
    points = list(points)
    if not points:
        raise ValueError("points must hold at least one measured batch")
    c, context = points[0].config, points[0].context_tokens
    ceilings = [measure.decode_ceilings_tokens_per_s(m, p.batch, p.context_tokens, p.config) for p in points]
    fp32 = measure.PRECISION
    crossing = decode_knee_batch(c, m.peak_flop_per_s, m.bandwidth_bytes_per_s, context, fp32, fp32, fp32)
    w = decode_point(c, 1.0, 1.0, 1, 0, fp32, fp32, fp32).weight_bytes
    estimate = m.balance_point_flop_per_byte * w / decode_flops_per_token(c)
    one = decode_point(c, 1.0, 1.0, 1, context, fp32, fp32, fp32)
    spreads = [p.rate.spread for p in points]
    batches, rates = [p.batch for p in points], [p.tokens_per_s for p in points]
    memory, math_ = [x[0] for x in ceilings], [x[1] for x in ceilings]
    kinds = regime_kinds(rates, memory, math_, spreads, m.steady)
    shares = [x / min(mm, f) for x, mm, f in zip(rates, memory, math_)]
    items = [("This sweep", noise_words(spreads, "batches"))]
    ceiling = ceiling_words(m)
    if ceiling != "they use this run's own roof.":
        items.append(("The ceilings", ceiling))
    items.append(("The knee", crossing_words(crossing, estimate, max(batches), one.bytes - one.weight_bytes)))
    if len(points) > 1:
        items.append(("The rise", rise_words(batches, rates)))
    items += regime_items(batches, rates, memory, math_, spreads, steady=m.steady, clean=m.clean_ceiling,
                          cached=_decode_cached(points, m), source=m.roof_source)
    lesson = knee_lesson_words(batches, kinds, crossing, spreads, shares, split_test)
    return Markdown(_folded([("In short", verdict_line(batches, kinds, shares))], [("The lesson", lesson)] + items))


def _listed(batches: Sequence[int]) -> str:
    """"batch 2", "batches 2 and 16": each named, since the batches a test picked need not follow one another."""
    return ("batch " if len(batches) == 1 else "batches ") + _join([f"{b:,}" for b in batches])


def split_cause(products_share: float, part: float) -> str:
    """What did most to hold a step below its ceiling, from its weight products timed alone: "products" where the time
    they took beyond their roof, part x (1 - share), exceeds all the rest of the step's, 1 - part; else "rest"."""
    return "products" if part * (1 - products_share) > 1 - part else "rest"


def split_cause_words(batches: Sequence[int], products_shares: Sequence[float], parts: Sequence[float]) -> str:
    """Why decode steps at ``batches`` fell below NEAR of their ceiling, from their weight products timed alone:
    each batch's products' share of their own roof (``products_shares``) and the share of its step's time they
    took (``parts``); batches with the same cause share one sentence. The products did most to hold a step down where
    the time they took beyond their roof, part x (1 - share), exceeds all the rest of the step's, 1 - part; else the
    rest of the step did."""
    batches = [whole("batch", b) for b in batches]
    products_shares = [positive("products_shares", x) for x in products_shares]
    parts = [positive("parts", x) for x in parts]
    if not batches or not len(batches) == len(products_shares) == len(parts):
        raise ValueError("batches, products_shares and parts must be of one length, at least 1")
    causes = {
        "products": "So the products themselves, run by numpy's BLAS library, did most to hold the step below half: "
                    "the time they took beyond their roof exceeds all the rest of the step's.",
        "rest": "So the rest of the step (attention, norms and Python's calls) did most to hold it below half: it took "
                "longer than the products' time beyond their roof."}
    groups: dict[str, list[int]] = {}
    for i, (x, part) in enumerate(zip(products_shares, parts)):
        kind = split_cause(x, part)
        groups.setdefault(kind, []).append(i)
    said = []
    for kind, members in groups.items():
        shares = _join([_share(products_shares[i]) for i in members])
        took = _join([_share(parts[i]) for i in members])
        said.append(f"At {_listed([batches[i] for i in members])}, the weight products alone reached "
                    f"{shares} of their roof and took {took} of the step's time. {causes[kind]}")
    return " ".join(said)


def step_split_view(splits: Sequence[measure.StepSplit], m: measure.Machine) -> Markdown:
    """The batches of ``splits`` in one table: the whole step's share of its lower ceiling (the decode table's, since
    the split times its products in the decode sweep's rounds), the decoder's weight products alone as a share of
    their roof (``StepSplit.products_share``), the products' part of the step's time and the spread of their rounds;
    then, for each batch below NEAR of its ceiling, what held it there (``split_cause_words``). A batch whose
    products spread more than QUIET_SPREAD gets no cause, nor one whose step's spread could have lifted it to NEAR
    (the decode table's test, ``regime_kinds``), nor any batch of a run that is not ``steady``: noise could have made
    the difference."""
    if not splits:
        raise ValueError("splits must hold at least one batch")
    bw, p = m.bandwidth_bytes_per_s, m.peak_flop_per_s
    rows = ["| batch | whole step, share of its lower ceiling | weight products alone, share of their roof "
            "| products' part of the step's time | spread of the products' rounds |",
            "|--:|--:|--:|--:|--:|"]
    causes, noisy, uncertain = [], [], []  # causes: (batch, the products' share of their roof, their part of its time)
    for split in splits:
        step_share = split.step.high / min(measure.decode_ceilings_tokens_per_s(m, split.batch, split.context_tokens,
                                                                                split.config))
        alone, part = split.products_share(bw, p), split.products_part
        rows.append(f"| {split.batch:,} | {_share(step_share)} | {_share(alone)} | {_share(part)} "
                    f"| {_spread_text(split.products.spread)} |")
        if step_share < NEAR:
            # the step's noise by the decode table's test (could its spread lift it to NEAR?); the products', by theirs
            if is_noisy(split.products.spread) or step_share * split.step.spread >= NEAR or not m.steady:
                noisy.append(split.batch)
            else:
                causes.append((split.batch, alone, part))
        elif is_noisy(split.products.spread) or is_noisy(split.step.spread):
            uncertain.append(split.batch)
    words = [split_cause_words(*zip(*causes))] if causes else []
    if noisy:
        why = ("the rounds of its step or of its products varied more than " + _spread_text(QUIET_SPREAD)
               if m.steady else "the run was not steady")
        words.append(f"At {_listed(noisy)}, noise could have made the difference ({why}), so no cause is named.")
    if not causes and not noisy:
        words.append("Every batch here reached at least half of its lower ceiling.")
    if uncertain:
        words.append(f"The rounds of {_listed(uncertain)} varied more than {_spread_text(QUIET_SPREAD)}, so "
                     f"{'its row is' if len(uncertain) == 1 else 'their rows are'} less certain.")
    return Markdown(f"Measured on {m.label}, at {splits[0].context_tokens:,} tokens of context; the weight products "
                    f"timed alone right after each step, in the decode sweep's {len(splits[0].step.values)} rounds, "
                    "so the step's share is the decode table's:\n\n" + "\n".join(rows)
                    + "\n\n" + _bullets([("What held it", " ".join(words))]))


def knee_lesson_words(batches: Sequence[int], kinds: Sequence[str], crossing: float,
                      spreads: Sequence[float] | None = None, shares: Sequence[float] | None = None,
                      split_test: bool = False) -> str:
    """Whether a decode sweep shows the lesson of its ceilings, the memory-to-math knee, and if
    not, why not and what the data do show. It shows the knee when the knee
    (``crossing``, the batch at which the ceilings cross; ``math.inf``: never) lies between the
    smallest and the largest batch measured, and every batch was placed near its lower ceiling
    (``kinds``, as ``regime_kinds`` names them: none overhead-bound, none not placed): then
    each batch sat near the memory ceiling below the knee and near the math ceiling past it.
    Where it does not, each batch below half is put down to its cause: an overhead-bound batch's
    rounds agreed on a steady run (``regime_kinds`` names any other not placed), so costs
    the formula leaves out, not noise, held it there; likely ones are named as likely. The batches
    not placed are put down to other programs: by their noisy rounds, or, where their
    rounds agreed (``spreads``, one per batch; default: noisy), by a run other programs may have
    slowed throughout. With ``shares`` (each batch's share of its lower ceiling), overhead-bound
    batches that sat further below their ceiling than the smallest batch rule out a fixed cost per
    step (such as Python's calls), which weighs less as the batch grows: the likely causes named are
    then left to the test of a step's weight products (``step_split_view``) where it was made at this context
    (``split_test``), and otherwise named as likely: costs that grow with the batch, numpy's routines for small
    products and attention's loop over each sequence and head.

    A quiet machine is promised the shape only where noise may explain every batch below half (none
    overhead-bound). Where some were overhead-bound, the words say instead which ends of the sweep
    still reached half of their ceiling on either side of the knee (``ends_words``)."""
    batches = [whole("batch", b) for b in batches]
    if not batches or len(batches) != len(kinds):
        raise ValueError("batches and kinds must be of one length, at least 1")
    if crossing != math.inf:
        crossing = positive("crossing", crossing)
    if not batches[0] < crossing < batches[-1]:
        where = "past the largest" if crossing >= batches[-1] else "below the smallest"
        return f"this sweep cannot show the memory-to-math knee: the knee lies {where} batch measured."
    n = len(kinds)
    noisy, far = sum(k == TOO_NOISY for k in kinds), sum(k == OVERHEAD_BOUND for k in kinds)
    if not noisy and not far:
        return ("this run shows the memory-to-math knee. Every batch reached at least half of its lower ceiling: "
                "the memory ceiling below the knee, the math ceiling past it.")
    parts = []
    for count, kind in ((far, "overhead-bound"), (noisy, "not placed")):
        if count:
            who = f"all {n} batches" if count == n else (f"{count} of its {n} batches" if not parts else f"{count}")
            parts.append(f"{who} {'was' if count == 1 else 'were'} {kind}")
    shape = ("the rate to rise near the memory ceiling up to the knee, then level off under the math ceiling, as the "
             "model's circles do.")
    ends = ends_words(batches, kinds, crossing)
    both_ends = ends.startswith("Its two ends")
    said = [f"this run shows the memory-to-math knee only by its two ends, one on each side of it (batch "
            f"{batches[0]:,} memory-bound, batch {batches[-1]:,} compute-bound): {_join(parts)}." if both_ends and far else
            f"this run does not show the memory-to-math knee: {_join(parts)}."]
    if far:
        whose = ("Their" if not noisy else "The overhead-bound batches'" if far > 1 else "The overhead-bound batch's")
        said.append(f"{whose} rounds varied too little to lift {'them' if far > 1 else 'it'} to half, so noise did not "
                    f"hold {'them' if far > 1 else 'it'} below half. Costs the formula leaves out set the pace.")
        deeper = []
        if shares is not None:
            shares = [positive("shares", x) for x in shares]
            if len(shares) != len(batches):
                raise ValueError("shares must give one share per batch")
            deeper = [b for b, k, x in zip(batches[1:], kinds[1:], shares[1:]) if k == OVERHEAD_BOUND and x < shares[0]]
        if deeper:
            many = len(deeper) > 1
            said.append(f"{_batches(deeper, batches).capitalize()} sat further below {'their' if many else 'its'} "
                        f"ceiling than batch {batches[0]:,} ({_share(shares[0])}), which a fixed cost per step cannot "
                        "do." + (" The table after the figure tests what held them, at two of these batches."
                                 if split_test else
                                 " Likely causes grow with the batch: numpy's routines for small products, and "
                                 "attention's loop over each sequence and head, which grows with the context too. "
                                 "The chapter times the weight products alone only at the short context."))
        else:
            said.append("Likely ones are numpy's slower routine at a few sequences (see the product sweep's control) "
                        "and Python's loop over numpy's calls.")
    if noisy:
        calm = spreads is not None and all(
            not is_noisy(v) for k, v in zip(kinds, spreads) if k == TOO_NOISY)
        them = "them" if noisy > 1 else "it"
        if calm:
            why = f"other programs may have slowed every round alike and held {them} below half."
        else:
            why = f"other programs may have held {them} below half."
        if not far:
            said.append(f"{'Their' if noisy > 1 else 'Its'} rounds {'agreed, but' if calm else 'were noisy:'} {why}")
        else:
            said.append(f"The {'batches' if noisy > 1 else 'batch'} not placed may owe "
                        f"{'their' if noisy > 1 else 'its'} place below half to other programs.")
    if not far:
        said.append(f"On a quiet machine, the formula expects {shape}")
    elif ends and not both_ends:
        said.append(ends)
    return " ".join(said)


def ends_words(batches: Sequence[int], kinds: Sequence[str], crossing: float) -> str:
    """Which ends of a decode sweep reached half of their lower ceiling on their side of the knee
    (``crossing``; ``kinds`` as ``regime_kinds`` names them): the smallest batch memory-bound below
    it, the largest compute-bound past it. "Its two ends still lie on either side of the knee: batch
    1 was memory-bound and batch 64 compute-bound.", one end alone, or "" where neither did."""
    batches = [whole("batch", b) for b in batches]
    if not batches or len(batches) != len(kinds):
        raise ValueError("batches and kinds must be of one length, at least 1")
    first = kinds[0] == MEMORY_BOUND and batches[0] < crossing
    last = len(batches) > 1 and kinds[-1] == COMPUTE_BOUND and batches[-1] > crossing
    if first and last:
        return (f"Its two ends still lie on either side of the knee: batch {batches[0]:,} was memory-bound and batch "
                f"{batches[-1]:,} compute-bound.")
    if first:
        return f"Only its smallest batch, {batches[0]:,}, reached half of its ceiling: memory-bound, below the knee."
    if last:
        return f"Only its largest batch, {batches[-1]:,}, reached half of its ceiling: compute-bound, past the knee."
    return ""


def context_words(batch: int, contexts: tuple[int, int], measured_ratio: float,
                  memory: tuple[float, float], math_: tuple[float, float], spread: float | None = None,
                  far: tuple[bool, bool] = (False, False), per_round: Sequence[float] | None = None,
                  steady: bool = True, fastest_ratio: float | None = None) -> str:
    """At one ``batch``, how far going from the short context to the long one (``contexts``)
    lowers the formula's lower ceiling, against how far it lowered the measured tokens/s
    (``measured_ratio``: long over short, compared round by round, as the chapter's check compares
    them); ``memory`` and ``math_`` are the two ceilings (short, long; tokens/s). Then what the
    difference says: the ceiling's fall bounds the rate's only where the rate sits near the
    ceiling (``far``: whether it sat below NEAR of it, at the short and at the long context), so a
    larger fall points to a cost the formula leaves out. Whether the difference is noise: with
    ``per_round`` (long over short within each round), it is not where every round shows it on a
    ``steady`` run, may still be where the run was not steady (a steady load slows every round
    alike), and may be where some round does not; without, it may be where ``spread`` (how far the
    two settings' rounds lay apart) is noisy. With ``fastest_ratio`` (long over short, the tables' fastest rounds), the
    fall the tables show is given beside the paired one where the two print differently."""
    batch = whole("batch", batch)
    short, long_ = (whole("contexts", L, 0) for L in contexts)
    observed = positive("measured_ratio", measured_ratio)
    mems, meml = (positive("memory", x) for x in memory)
    fs, fl = (positive("math_", x) for x in math_)
    predicted = min(meml, fl) / min(mems, fs)
    walls = ["Math" if f < mm else "Memory" for mm, f in ((mems, fs), (meml, fl))]
    binds = (f"{walls[0]} is the lower ceiling at both." if walls[0] == walls[1] else
             f"The lower ceiling is {walls[0].lower()} at the short context and {walls[1].lower()} at the long one.")
    ceiling = (f"lowers the formula's lower ceiling by {1 - predicted:.0%}" if predicted < 1 else
               f"leaves the formula's lower ceiling at {_factor(predicted)}")
    rate = (f"Compared round by round, the measured rate fell by {1 - observed:.0%}" if observed < 1 else
            f"Compared round by round, the measured rate did not fall ({_factor(observed)})")
    if fastest_ratio is not None and observed < 1 and f"{1 - observed:.0%}" != f"{1 - fastest_ratio:.0%}":
        rate += (f"; the tables' fastest rounds, which need not come from the same round, give "
                 f"{1 - positive('fastest_ratio', fastest_ratio):.0%}")
    rate += "."
    first = f"At a batch of {batch:,}, going from {short:,} to {long_:,} tokens of context {ceiling}."
    far_short, far_long = (bool(x) for x in far)
    where = "both contexts" if far_short else "the long context"
    bound = (f" The rate sat below half of its ceiling at {where}, so how far the ceiling fell says nothing of how far "
             "the rate could fall."
             if far_long else "")
    if observed < predicted * (1 - PACE_WITHIN):
        verdict = f"That is further than the ceiling fell.{bound} A cost the formula leaves out grew with the context."
    elif observed > predicted * (1 + PACE_WITHIN):
        verdict = ("That goes against the ceiling, which fell." if observed >= 1 else
                   "That is less far than the ceiling fell.")
        verdict += " The rate sat further below its ceiling at the short context."
    else:
        return f"{first} {binds} {rate} That is about as far as the ceiling fell."
    if per_round is not None:
        rounds = [positive("per_round", r) for r in per_round]
        further = observed < predicted * (1 - PACE_WITHIN)
        held = all((r < predicted * (1 - PACE_WITHIN)) if further else (r > predicted * (1 + PACE_WITHIN))
                   for r in rounds)
        if held and steady:
            noise = " The gap held in every round, so it is not noise."
        elif held:
            noise = (" The gap held in every round, but other programs may have slowed every round alike, so part of "
                     "it may still be noise.")
        else:
            noise = " The gap did not hold in every round, so part of it may be noise."
    else:
        noise = (" The rounds were noisy, so part of this gap may be noise." if spread and is_noisy(spread) else
                 "" if steady else " Other programs may have slowed the run, so part of this gap may be noise.")
    return f"{first} {binds} {rate} {verdict}{noise}"


def context_change(short: Sequence[measure.DecodePoint], long: Sequence[measure.DecodePoint],
                   m: measure.Machine, batch: int | None = None) -> Markdown:
    """``context_words`` for the chapter's two contexts at ``batch`` (default: the largest measured
    at both), the measured rates compared round by round (``measure.paired_ratio``), and whether
    each sat far below its ceilings (``regime_kinds``: a point not placed is not)."""
    common = sorted({p.batch for p in short} & {p.batch for p in long})
    if not common:
        raise ValueError("short and long must share at least one measured batch")
    batch = max(common) if batch is None else batch
    a, b = measure.point_at(short, batch), measure.point_at(long, batch)
    ca = measure.decode_ceilings_tokens_per_s(m, a.batch, a.context_tokens, a.config)
    cb = measure.decode_ceilings_tokens_per_s(m, b.batch, b.context_tokens, b.config)
    kinds = regime_kinds([a.tokens_per_s, b.tokens_per_s], [ca[0], cb[0]], [ca[1], cb[1]],
                         [a.rate.spread, b.rate.spread], m.steady)
    return Markdown(context_words(batch, (a.context_tokens, b.context_tokens), measure.paired_ratio(b.rate, a.rate),
                                  (ca[0], cb[0]), (ca[1], cb[1]), spread=max(a.rate.spread, b.rate.spread),
                                  far=tuple(k == OVERHEAD_BOUND for k in kinds),
                                  per_round=[y / x for x, y in zip(a.rate.values, b.rate.values)], steady=m.steady,
                                  fastest_ratio=b.tokens_per_s / a.tokens_per_s))


#: How ``verdict_words`` counts the decode measurements of each regime, in this order.
_VERDICT_KINDS = ((MEMORY_BOUND, "reached at least half of the lower ceiling, the memory ceiling (memory-bound)"),
                  (COMPUTE_BOUND, "reached at least half of the lower ceiling, the math ceiling (compute-bound)"),
                  (OVERHEAD_BOUND, "reached less than half of the lower ceiling (overhead-bound)"),
                  (ABOVE, "measured above the lower ceiling"),
                  (TOO_NOISY, "{was} not placed (below half, where noise alone could have held {them})"))


def _inventory(spreads: Mapping[str, float]) -> str:
    """" The 30 are the roof's 5, the product sweep's 11 and the decode sweep's 14.": what the run's measurements
    (``spreads``, keyed as ``measure.run_spreads`` names them) are, where they come from more than one place."""
    groups = {"the roof's": 0, "the product sweep's": 0, "the decode sweep's": 0}
    for name in spreads:
        key = ("the decode sweep's" if "decode sweep" in name else
               "the product sweep's" if "product sweep" in name or "control" in name else "the roof's")
        groups[key] += 1
    parts = [f"{whose} {n:,}" for whose, n in groups.items() if n]
    return f" The {len(spreads):,} are {_join(parts)}." if len(parts) > 1 else ""


def verdict_words(spreads: Mapping[str, float], kinds: Sequence[str], busy: bool = False,
                  reference: str = "", steady: bool = True, ceilings: str = "",
                  waited: float | None = None, bounds: str = "") -> str:
    """The whole run in short bullets: quiet or noisy (``spreads``: how far each measurement's
    fastest repeat or round lay above its slowest, keyed by what was measured, e.g. "repeats of the
    plain read"; quiet only when every one is at most QUIET_SPREAD and the machine was not
    ``busy`` before measuring), where the ceilings come from (``ceilings``, ``ceiling_words``'
    sentence, where given), how many decode measurements sat where (``kinds``: the regime of
    every decode point, as ``regime_kinds`` names them, counted plainly), and what to read in it:
    the relations only, or the heights too, and what a quiet machine would show. Noise is blamed
    only for what it can explain: the points not placed; a point below half whose rounds
    agreed on a ``steady`` run was held there by the decoder's own costs, so a quiet machine is not
    promised the model's shape where any such point is. The run is quiet or noisy by the chapter's
    own definition, with no third word: quiet only when every spread is. With ``waited`` (the most
    any measurement's fastest sample waited for a core, a share of its time) above WAIT_SHARE, a bullet says so. With
    ``reference`` (``decode_against_reference``'s words), a bullet sets the decoder beside the
    reference run. With ``bounds`` (``bounds_words``' sentence), a bullet says whether every point sat under its
    ceiling."""
    if not spreads or not kinds:
        raise ValueError("spreads and kinds must each hold at least one value")
    spreads = {name: positive("spreads", x) for name, x in spreads.items()}
    if any(k not in dict(_VERDICT_KINDS) for k in kinds):
        raise ValueError(f"kinds must be regimes as regime_kinds names them; got {sorted(set(kinds))}")
    name, worst = max(spreads.items(), key=lambda item: item[1])
    noisy_ones, total = sum(is_noisy(x) for x in spreads.values()), len(spreads)
    noisy = bool(noisy_ones) or bool(busy) or not steady
    if noisy_ones:
        share = f"all {total}" if noisy_ones == total else f"{noisy_ones} of its {total}"
        noise = (f"noisy: {share} measurements varied more than {QUIET_SPREAD:g}× from slowest to fastest. "
                 f"The {name} varied most, {_spread_text(worst)}.")
        if busy:
            noise += " Other programs also kept the cores busy before measuring."
    elif busy:
        noise = (f"noisy: other programs kept the cores busy, though all {total} measurements varied at most "
                 f"{_spread_text(worst)}.")
    else:
        noise = f"quiet: all {total} measurements varied at most {_spread_text(worst)} from slowest to fastest."
    noise += _inventory(spreads)
    n = len(kinds)
    counted = [(sum(k == kind for k in kinds), said) for kind, said in _VERDICT_KINDS]
    counted = [(c, said.format(was="was" if c == 1 else "were", them="it" if c == 1 else "them"))
               for c, said in counted if c]
    if n == 1:
        decoder = f"its one decode measurement {counted[0][1]}."
    elif len(counted) == 1:
        decoder = f"all {n} decode measurements {counted[0][1]}."
    else:
        decoder = f"of its {n} decode measurements, " + _join([f"{c} {said}" for c, said in counted]) + "."
    unplaced = sum(k == TOO_NOISY for k in kinds)
    far = sum(k == OVERHEAD_BOUND for k in kinds) if steady else 0
    own = ("{its} rounds varied too little to lift {it} to half, so the decoder's own costs, not noise, held {it} "
           "there." if far else "")
    own = own.format(it="it" if far == 1 else "them", its="its" if far == 1 else "their")
    if unplaced:
        below = (f" The {far} below half are different: {own}" if far > 1 else
                 f" The one below half is different: {own}" if far else "")
        advice = (f"the relations, and the heights only where the rounds were quiet. "
                  f"{'The one measurement' if unplaced == 1 else f'The {unplaced} measurements'} not placed "
                  f"may sit higher on another run.{below} On a quiet machine, expect smaller spreads"
                  + ("." if far else ", and points that follow the shape of the model's circles."))
    elif noisy and far:
        advice = (f"the relations, and the shares below half too: {own} Another run may move the other heights by as "
                  "much as their spread.")
    elif noisy:
        advice = "the relations first. Another run may move the heights by as much as the spread."
    elif far:
        advice = ("the relations. No steady load from other programs showed, so where the decoder fell below half, "
                  "its own costs, not noise, set its heights.")
    else:
        advice = "the relations and the heights. Both describe this machine."
    items = [("Quiet or noisy", noise)]
    if waited is not None and waited > measure.WAIT_SHARE:
        shown = measure._wait_text(waited)
        items.append(("Waiting for a core", f"in the fastest sample of one of the run's measurements, the sweeps' "
                      f"points among them (not only the roof's rows), this process's threads, together, waited up to "
                      f"{shown} s for a core per second, above {measure.WAIT_SHARE:.2f} s: other threads, most likely "
                      "other programs', pushed them off their cores."))
    if ceilings:
        items.append(("The ceilings", ceilings))
    if bounds:
        items.append(("Under the ceilings", bounds))
    items.append(("The decoder", decoder))
    if reference:
        items.append(("The decoder against the reference run", reference))
    return "**This run, in short**\n\n" + _bullets(items + [("What to read", advice)])


#: every spread of a run, by what was measured (``measure.run_spreads``; here too, where the words use it)
run_spreads = measure.run_spreads


def bounds_words(shares: Sequence[float], aside: str = "") -> str:
    """Whether every measured point sat at or below its ceiling (``shares``: each point's rate over its lower ceiling
    or roof), the first thing a measurement tests of a ceiling: "Every one of the 25 measured points sat below its
    ceiling; the highest reached 93% of it." or "2 of the 25 measured points sat above their ceiling: the words
    under each table say why." ``aside`` names a point left out because it set the ceiling itself."""
    shares = [positive("shares", x) for x in shares]
    if not shares:
        raise ValueError("shares must hold at least one share")
    above = sum(x > 1 for x in shares)
    if not above:
        left = f" ({aside} aside)" if aside else ""
        return (f"every one of the {len(shares)} measured points sat at or below its ceiling{left}; the highest "
                f"reached {_share(max(shares))} of it. The ceilings held as upper bounds.")
    return (f"{above} of the {len(shares)} measured points sat above their ceiling, up to {_share(max(shares))} of it: "
            "the words under each table say why.")


def run_verdict(m: measure.Machine, runs: Sequence[measure.DecodePoint],
                products: measure.ProductSweep | None = None, reference: bool = False) -> Markdown:
    """``verdict_words`` for this run: every spread of ``run_spreads``, where the ceilings come
    from (``ceiling_words``, where ``judge`` judged the run), and the regime of every decode point
    (every context) against this machine's ceilings (``regime_kinds``, told whether the run was
    steady), and the most any measurement's fastest sample waited for a core (the judgement's, over every sample, where
    judged); with ``reference``, the decoder beside the reference run kept in the book's data
    (``decode_against_reference``)."""
    sweep, runs = runs, list(runs)   # the sweep keeps its split, whose spreads count too (``run_spreads``)
    if not runs:
        raise ValueError("runs must hold at least one measured decode point")
    ceilings = [measure.decode_ceilings_tokens_per_s(m, p.batch, p.context_tokens, p.config) for p in runs]
    kinds = regime_kinds([p.tokens_per_s for p in runs], [c[0] for c in ceilings], [c[1] for c in ceilings],
                         [p.rate.spread for p in runs], m.steady)
    waited = m.judgement.waited if m.judgement is not None else m.waited
    # the 1-vector product that set the roof's bandwidth sits on its roof by construction: it tests nothing
    set_roof = m.rounds_vector is not None and m.bandwidth is m.rounds_vector and m.roof_source == "this run"
    shares = [p.tokens_per_s / min(c) for p, c in zip(runs, ceilings)] + [
        p.flop_per_s / min(m.peak_flop_per_s, p.intensity_flop_per_byte * m.bandwidth_bytes_per_s)
        for p in (products or ()) if not (set_roof and p.batch == 1)]
    return Markdown(verdict_words(run_spreads(m, sweep, products), kinds, busy=m.busy,
                                  reference=decode_against_reference(m, runs) if reference else "",
                                  steady=m.steady, ceilings=ceiling_words(m) if m.judgement else "",
                                  waited=waited, bounds=bounds_words(
                                      shares, "the 1-vector product, which set the roof's bandwidth," if set_roof else "")))


def share_words(measured: float, memory: float, math_: float, eager_share: float,
                spread: float | None = None, clean: bool = True, cache: bool = False,
                source: str = "this run", steady: bool = True) -> str:
    """A single stream's measured tokens/s against its two ceilings (its share of the lower one),
    set beside the eager B200 run's share of its own ceiling, in short sentences: how many times
    that share it is, above, about the same or below; and, by the book's rule, whether it reaches
    half of the lower ceiling. The comparison is made only from a share of a ceiling that was
    measured cleanly (``clean``) and that the point did not beat: a share above 100% says the
    ceiling, not the decoder, was off (``_beat``, with a cache only where ``cache``). Noise only
    slows a rate: where its rounds (``spread``: fastest over slowest; default quiet) were noisy, a
    share at or above half is still placed (on a clean ceiling), and one below half is too noisy to
    place; so is one below half on a run that was not ``steady``, whose every round other programs
    may have slowed alike."""
    measured, memory, math_ = positive("measured", measured), positive("memory", memory), positive("math_", math_)
    eager_share = positive("eager_share", eager_share)
    share = measured / min(memory, math_)
    ratio = share / eager_share
    lower = ("The reasoning above expects it higher: costs other than reading memory took a larger part of each "
             "step. The refinement below says how a busy processor does that.")
    if share > 1:
        compared = "The share is above 100%, so it is not set beside the eager run's."
    elif not clean:
        compared = ("This run's ceiling may be too low (see how this run was judged, in \"Can you trust this run?\"), "
                    "so its share may be too high to compare with the eager run's.")
    elif ratio > 1 + LEVEL_WITHIN:
        compared = f"This machine's share is {ratio:,.2g} times the eager run's: higher, as the reasoning above expects."
    elif ratio >= 1 - LEVEL_WITHIN:
        compared = f"This machine's share is about the eager run's. {lower}"
    else:
        compared = f"This machine's share is only {ratio:,.2g} times the eager run's. {lower}"
    noisy = spread is not None and is_noisy(spread)
    if share > 1:
        rule = _beat("ceiling", cache=cache, shape=math_ < memory, source=source)
    elif regime(measured, memory, math_, NEAR) == OVERHEAD_BOUND:
        rule = (f"This share is below half of the ceiling, but its rounds varied {_spread_text(spread)}, more than "
                f"{QUIET_SPREAD:g}×: noise alone could have held it there, so it is not placed." if noisy else
                "This share is below half of the ceiling. Its rounds agreed, but other programs may have slowed every "
                "round alike, so it is not placed." if not steady else
                f"This share is below half of the ceiling: {OVERHEAD_BOUND}, by the book's rule.")
    else:
        rule = f"This share is at least half of the ceiling: {regime(measured, memory, math_, NEAR)}, by the book's rule."
        if noisy and clean:
            rule += (f" Its rounds varied {_spread_text(spread)}, but noise only slows a rate: a quiet run would place "
                     "it at least as high.")
        elif noisy:
            rule += (f" Its rounds varied {_spread_text(spread)}, and its ceiling may be too low, so a quiet run may "
                 "differ.")
    return f"{compared} {rule}"


def single_stream(point: measure.DecodePoint, m: measure.Machine, eager_tokens_per_s: float,
                  eager_ceiling: float, eager_label: str = "Llama-3.1-8B, eager, on a B200") -> Markdown:
    """A single stream on this machine beside the eager B200 run: a small table of each one's
    tokens/s, lower ceiling and share of it, then ``share_words`` (which sets the shares side by
    side only from a clean ceiling the point did not beat, and places the point by the book's rule
    only where its rounds were quiet)."""
    eager_tokens_per_s, eager_ceiling = positive("eager_tokens_per_s", eager_tokens_per_s), positive(
        "eager_ceiling", eager_ceiling)
    memory, math_ = measure.decode_ceilings_tokens_per_s(m, point.batch, point.context_tokens, point.config)
    ceiling, eager_share = min(memory, math_), eager_tokens_per_s / eager_ceiling
    rows = ["| a single stream | tokens/s | lower ceiling, tokens/s | share |", "|:--|--:|--:|--:|",
            f"| the small decoder on this machine, {point.context_tokens:,} tokens of context "
            f"| {point.tokens_per_s:,.1f} | {ceiling:,.1f} | **{point.tokens_per_s / ceiling:.0%}** |",
            f"| {eager_label} | {eager_tokens_per_s:,.0f} | {eager_ceiling:,.0f} | {eager_share:.1%} |"]
    whose = "" if m.roof_source == "this run" else f" (ceiling from {reference_speeds(m)})"
    return Markdown(f"Measured on {m.label}{whose}:\n\n" + "\n".join(rows) + "\n\n"
                    + share_words(point.tokens_per_s, memory, math_, eager_share, spread=point.rate.spread,
                                  clean=m.clean_ceiling, cache=_decode_cached([point], m)[0], source=m.roof_source,
                                  steady=m.steady))


# ---- a fresh run beside the reference run kept in the book's data ------------------------------

#: A fresh rate at least this share of the reference's kept up with it (``measure.KEPT_UP``).
KEPT_UP = measure.KEPT_UP


def reference_words(ratios: Mapping[str, float], same_machine: bool, label: str, date: str) -> str:
    """A fresh run's rates as shares of the reference run's (``ratios``: what was measured -> this
    run's rate over the reference's), then what the gap says: on the same kind of machine
    (``same_machine``: ``_same_machine``; the reference measured on ``date``), a run that kept up
    (every share at least KEPT_UP), or one that fell behind, most likely slowed by other programs;
    on another machine (``label`` names the reference's), a comparison of two machines, not of
    noise."""
    if not ratios:
        raise ValueError("ratios must hold at least one share")
    ratios = {k: positive("ratios", v) for k, v in ratios.items()}
    said = "this run's rates as shares of the reference's: " + _join([f"{k} {_kept(r)}" for k, r in ratios.items()]) + "."
    if not same_machine:
        return (f"{said} The reference ran on another machine, {label}, so these shares compare the two machines, "
                "not this run's noise.")
    same = f"The reference ran on the same kind of machine, on {date}"
    if min(ratios.values()) >= KEPT_UP:
        return f"{said} {same}; each kept up with it.{_faster_words({k: r for k, r in ratios.items() if r > 1 / KEPT_UP})}"
    return (f"{said} {same}; a share below {KEPT_UP:.0%} means that other programs slowed this run, or that this "
            "machine ran slower this time.")


def _faster_words(faster: Mapping[str, float]) -> str:
    """" Its bandwidth ran 24% faster than the reference's: ..." for the speeds (``faster``: name -> this run's rate
    over the reference's) that beat the reference's by more than a run may fall short of it and still keep up
    (1 / KEPT_UP); "" for none."""
    if not faster:
        return ""
    by = _join([f"{name} ran {r - 1:.0%} faster" for name, r in faster.items()])
    return (f" Its {by} than the reference's, by the fastest samples of both: a virtual machine shares its memory "
            "with other machines, whose demand moves.")


def _kept_range(shares: Sequence[float]) -> str:
    """"96%", or "89% to 97%" for several shares (each as ``_kept`` gives it); "" for none."""
    if not shares:
        return ""
    lo, hi = _kept(min(shares)), _kept(max(shares))
    return lo if lo == hi else f"{lo} to {hi}"


def _kept(share: float) -> str:
    """A share of the reference's rate: "96%"; "89.97%" where whole percents would hide which side of
    KEPT_UP it lies."""
    whole_ = f"{share:.0%}"
    return f"{share:.2%}" if (float(whole_[:-1]) / 100 >= KEPT_UP) != (share >= KEPT_UP) else whole_


def _same_machine(m: measure.Machine, ref) -> bool:
    """Whether ``m`` is the same kind of machine as the reference run ``ref``: the same processor
    name and cores, and, where the reference keeps them, the same vector features, last-level
    cache and BLAS library (a name like "AMD EPYC" alone covers very different processors)."""
    if m.processor != ref.processor or m.cores != ref.cores:
        return False
    kept = [(getattr(ref, "features", None), " ".join(m.features)),
            (getattr(ref, "last_level_cache_bytes", None), m.last_level_cache),
            (getattr(ref, "blas", None), m.blas)]
    return all(theirs == ours for theirs, ours in kept if theirs is not None)


def _most_waited(samples: Sequence[measure.Samples | None]) -> float | None:
    """The most that any measurement's fastest sample (the one the tables show) waited for a core; None where any
    is unknown."""
    waits = [s.fastest_waited for s in samples if s is not None]
    return None if not waits or any(w is None for w in waits) else max(waits)


def _decoder_shares(runs: Sequence[measure.DecodePoint], ref) -> dict[str, float]:
    """The decoder's tokens/s at the reference's settings over the reference run's, by what was measured."""
    from inferlimits.machine import reference  # noqa: PLC0415

    wanted = {"the decoder at batch 1": (1, reference.SHORT_CONTEXT, ref.single_stream_tokens_per_s),
              f"at batch {reference.LARGEST_BATCH}": (reference.LARGEST_BATCH, reference.SHORT_CONTEXT,
                                                      ref.batch_64_tokens_per_s),
              f"at batch {reference.LARGEST_BATCH} and the long context": (
                  reference.LARGEST_BATCH, reference.LONG_CONTEXT, ref.batch_64_long_tokens_per_s)}
    found = {(p.batch, p.context_tokens): p.tokens_per_s for p in runs}
    return {what: found[b, L] / rate for what, (b, L, rate) in wanted.items() if (b, L) in found}


def _widest_share(products: measure.ProductSweep | None, ref) -> float | None:
    """The product sweep's widest batch at the reference's setting, over the reference run's rate; None where
    this sweep did not measure it."""
    from inferlimits.machine import reference  # noqa: PLC0415

    if products is None:
        return None
    found = [p for p in products if p.batch == reference.WIDEST_PRODUCT and p.rows == p.cols == reference.PRODUCT_SIDE]
    return found[0].flop_per_s / 1e9 / ref.widest_product_gflop_per_s if found else None


def _beaten(m: measure.Machine, products: measure.ProductSweep | None = None,
            runs: Sequence[measure.DecodePoint] | None = None) -> tuple[tuple[str, str], ...]:
    """For each of this run's own roof speeds, the measured point (fastest round, as the tables show it) that beat
    furthest a ceiling or roof drawn from this run's own speeds, in words, keyed by the speed that sets it: the
    bandwidth (a decode point under its memory ceiling, a product below the ridge, under the slanted roof) or the
    math rate (under the math ceiling, or past the ridge, under the flat roof). Such a point ran faster than that
    speed allows, so the data show that speed too low. ``()`` where no point beat either."""
    bw, peak = m.measured_bandwidth_bytes_per_s, m.measured_peak_flop_per_s
    fp32 = measure.PRECISION
    found: dict[str, tuple[float, str]] = {}

    def note(speed: str, share: float, words: str) -> None:
        if share > 1 and share > found.get(speed, (1.0, ""))[0]:
            found[speed] = (share, words)

    for p in products or ():
        slanted = p.intensity_flop_per_byte * bw
        speed, roof, which = ("bandwidth", slanted, "the slanted roof") if slanted < peak else (
            "math rate", peak, "the flat roof")
        share = p.flop_per_s / roof
        note(speed, share, f"{_vectors(p.batch)} in the product sweep ran at {_share(share)} of {which} it gives")
    for d in runs or ():
        point = decode_point(d.config, peak, bw, d.batch, d.context_tokens, fp32, fp32, fp32)
        memory = point.memory_ceiling <= point.math_ceiling
        speed, ceiling, which = ("bandwidth", point.memory_ceiling, "memory") if memory else (
            "math rate", point.math_ceiling, "math")
        share = d.tokens_per_s / ceiling
        note(speed, share, f"batch {d.batch:,} at {d.context_tokens:,} tokens of context ran at {_share(share)} of the "
                           f"{which} ceiling it gives")
    return tuple((speed, found[speed][1]) for speed in ("bandwidth", "math rate") if speed in found)


def _speed_waits(m: measure.Machine) -> dict[str, float | None]:
    """For each of this run's own roof speeds, how long the sample that set it (its fastest) waited for a core, a
    share of its time (None where not reported): the one sample whose wait says whether other programs held that
    speed down."""
    products = [x for x in (m.matmul, m.rounds_matmul) if x is not None]
    return {"bandwidth": m.bandwidth.fastest_waited,
            "math rate": max(products, key=lambda x: x.high).fastest_waited}


def judge(m: measure.Machine, products: measure.ProductSweep | None = None,
          runs: Sequence[measure.DecodePoint] | None = None, ref=None) -> measure.Machine:
    """This run's machine as the chapter's tables and figures use it: ``m`` with the roof's samples
    from the sweeps' rounds (``measure.with_rounds``), judged against the reference run ``ref``
    (default: the one kept in the book's data) by its own evidence (``measure.Judgement``). The
    ceilings use this run's own roof unless the data show a speed of it too low:

    - on the same kind of machine (``_same_machine``), the roof kept up when both its speeds reached
      KEPT_UP of the reference's (``ROOF_CLEAN``). A speed that fell below that is too low only
      where a measured point beat a ceiling drawn from it (``_beaten``: a point cannot run faster
      than the machine it runs on, so that speed under-states the machine): the ceilings then take
      the reference's speed instead, and only for such a speed (``ROOF_LOW``, ``reference_roof``).
      A speed that fell below it and that nothing beat stays: where the decoder kept up with the
      reference's, or where no measurement's fastest sample waited for a core more than WAIT_SHARE
      and the load was not busy (no program in this machine slowed it: the machine itself, its memory
      shared with others on the same host, ran slower this time), the roof is below the reference's
      (``ROOF_BELOW``); where the decoder fell behind too and other programs pushed the run off its
      cores, they slowed the whole run (``ROOF_SLOWED``);
    - on another machine, nothing can be said from the reference (``ROOF_UNKNOWN``).

    A sweep is steady (rounds that agree show that noise did not cause what they show) where its
    own rates kept up with the reference's (the decoder at the reference's settings; the product
    sweep's widest batch), or, without them, where the roof kept up; or where no measurement's fastest sample
    waited for a core more than WAIT_SHARE of its time (unless the whole run was slowed); or,
    without a reference and without that report, where the load before measuring was not busy.
    Its ceilings are clean where the roof kept up, or where the reference's speeds replace every
    speed that fell short; where a speed is kept below the reference's, only where the sample that
    set it (its fastest) did not wait for a core more than WAIT_SHARE of its time (``_speed_waits``;
    without that report, where the load was not busy): then other programs did not hold it down,
    and the low speed is this machine's this time; without a reference, only where no roof measurement's fastest sample
    waited (or, without that report, where the load was not busy). The figures draw the judged roof."""
    from inferlimits.machine import reference  # noqa: PLC0415

    ref = ref or reference.reference_run()
    m = measure.with_rounds(replace(m, rounds_read=None, rounds_matmul=None, rounds_vector=None, reference_roof=None,
                                    judgement=None),
                            products, runs)
    samples = [m.read, m.matvec_read, m.matmul, m.rounds_read, m.rounds_matmul]
    if products is not None:
        samples += [p.rate for p in products] + [products.read, products.one_at_a_time]
    samples += [p.rate for p in runs or ()]
    waited, roof_waited = _most_waited(samples), m.waited
    undisturbed = waited is not None and waited <= measure.WAIT_SHARE
    roof_calm = roof_waited <= measure.WAIT_SHARE if roof_waited is not None else not m.busy
    roof_shares, decoder, reference_roof, products_steady, beaten, decoder_names = None, (), None, None, (), ()
    if _same_machine(m, ref):
        roof_shares = (m.measured_bandwidth_bytes_per_s / 1e9 / ref.bandwidth_gb_per_s,
                       m.measured_peak_flop_per_s / 1e9 / ref.math_gflop_per_s)
        named = _decoder_shares(runs or (), ref)
        decoder, decoder_names = tuple(named.values()), tuple(k.removeprefix("the decoder ") for k in named)
        kept = bool(decoder) and min(decoder) >= KEPT_UP
        widest = _widest_share(products, ref)
        beaten = _beaten(m, products, runs)
        short = [share < KEPT_UP for share in roof_shares]
        lifted = [low and bool(dict(beaten).get(speed)) for low, speed in zip(short, ("bandwidth", "math rate"))]
        if not any(short):
            state = measure.ROOF_CLEAN
        elif any(lifted):
            state = measure.ROOF_LOW   # the reference lifts each speed that fell short and was beaten, and only those
            reference_roof = tuple(speed if lift else 0.0 for speed, lift in
                                   zip((ref.bandwidth_gb_per_s * 1e9, ref.math_gflop_per_s * 1e9), lifted))
        elif kept or (undisturbed and not m.busy):
            state = measure.ROOF_BELOW
        else:
            state = measure.ROOF_SLOWED
        calm = state != measure.ROOF_SLOWED and undisturbed
        # each sweep's rounds are clear of a steady load where that sweep's own rates kept up with the reference's
        steady = kept or (state == measure.ROOF_CLEAN and not decoder) or calm
        products_steady = ((widest is not None and widest >= KEPT_UP)
                           or (state == measure.ROOF_CLEAN and widest is None) or calm)
        # a speed kept below the reference's is clean where the sample that set it was not pushed off its cores
        waits = _speed_waits(m)
        kept_waits = [waits[speed] for low, lift, speed in zip(short, lifted, ("bandwidth", "math rate"))
                      if low and not lift]
        calm_kept = (all(w <= measure.WAIT_SHARE for w in kept_waits) if None not in kept_waits else not m.busy)
        clean = (state != measure.ROOF_SLOWED) and calm_kept
    else:
        state = measure.ROOF_UNKNOWN
        steady = undisturbed if waited is not None else not m.busy
        clean = roof_calm
    judged = replace(m, reference_roof=reference_roof,
                     judgement=measure.Judgement(state, roof_shares, decoder, waited, steady, clean, products_steady,
                                                 beaten, decoder_names))
    _JUDGED[(m.array_bytes, m.matmul_side)] = judged
    return judged


def _short_speeds(m: measure.Machine) -> list[str]:
    """The roof speeds of a judged run that fell below KEPT_UP of the reference's ("bandwidth", "math rate")."""
    j = m.judgement
    if j is None or j.roof_shares is None:
        return []
    return [speed for speed, share in zip(("bandwidth", "math rate"), j.roof_shares) if share < KEPT_UP]


def _lifted_speeds(m: measure.Machine) -> list[str]:
    """The roof speeds the reference run's replace (``reference_roof``, where faster than this run's)."""
    if not m.reference_roof:
        return []
    return [speed for speed, ref, own in zip(("bandwidth", "math rate"), m.reference_roof,
                                            (m.measured_bandwidth_bytes_per_s, m.measured_peak_flop_per_s))
            if ref > own]


def roof_words(m: measure.Machine) -> str:
    """What ``judge`` found of this run's roof, in short sentences: kept up with the reference run's
    (its ceilings can be trusted); a speed below it that a measured point beat (named: the data show
    that speed too low, so the ceilings use the reference run's); a speed below it that nothing beat,
    kept (a busy machine, or this machine slower this time; the waits for a core say which is the
    likelier, and whether the shares may be too high); slowed along with the decoder (read the
    relations, not the heights); or no reference of this kind of machine, with what the waits for
    a core say. "" for a machine not judged."""
    j = m.judgement
    if j is None:
        return ""
    if j.roof_shares is not None:
        shares = f"bandwidth {_kept(j.roof_shares[0])} and math rate {_kept(j.roof_shares[1])} of the reference run's"
        decoder = _kept_range(j.decoder_shares or ())
        # the decoder's shares that fell short, each named by what it measured where the judgement names them
        short_ = [(name, x) for name, x in zip(j.decoder_names or [""] * len(j.decoder_shares), j.decoder_shares)
                  if x < KEPT_UP]
        behind = (_join([f"{name} ({_kept(x)})" for name, x in short_]) if short_ and all(name for name, _ in short_)
                  else f"({_kept_range([x for _, x in short_])})")
    if j.state == measure.ROOF_CLEAN:
        said = f"this run's roof kept up with the reference run's ({shares}). Its ceilings can be trusted."
        if j.decoder_shares and min(j.decoder_shares) < KEPT_UP:
            said += (f" But the decoder fell below {KEPT_UP:.0%} of the reference run's rate {behind}: other programs, "
                     "or this machine running slower this time, slowed its steps, so its shares of the ceilings are "
                     "lower than a quiet run's.")
        return said
    short, lifted = _short_speeds(m), _lifted_speeds(m)
    if j.state == measure.ROOF_LOW:
        kept = [speed for speed in short if speed not in lifted]
        by = [(f"{speed} ({speed_ / 1e9:,.1f} {'GB/s' if speed == 'bandwidth' else 'GFLOP/s'})", j.beaten_by(speed))
              for speed, speed_ in zip(("bandwidth", "math rate"), m.reference_roof or (0, 0)) if speed in lifted]
        said = [f"this run's {_join(short)} fell below {KEPT_UP:.0%} of the reference run's ({shares})."]
        beats = [beat for _, beat in by if beat]
        if len(beats) == 1:
            said.append(f"A measured point then beat a ceiling drawn from this run's {_join(lifted)}: {beats[0]}.")
        elif beats:
            said.append(f"Measured points then beat ceilings drawn from both: {beats[0]}, and {beats[1]}.")
        said.append(f"No program runs faster than its machine allows, so this run's {_join(lifted)} "
                    f"{'was' if len(lifted) == 1 else 'were'} too low. The ceilings use the reference run's "
                    f"{_join([speed for speed, _ in by])} instead.")
        if kept:
            said.append(f"This run's {_join(kept)} stays: no measured point beat it.")
        if j.decoder_shares and min(j.decoder_shares) < KEPT_UP:
            said.append(f"The decoder fell below {KEPT_UP:.0%} of the reference run's rate too {behind}: other "
                        "programs, or this machine running slower this time, slowed its steps.")
        return " ".join(said)
    if j.state == measure.ROOF_BELOW:
        said = (f"this run's {_join(short)} fell below {KEPT_UP:.0%} of the reference run's ({shares}), but no measured "
                "point beat a ceiling drawn from it, so the ceilings keep this run's own roof. A roof below the "
                "reference's means a busy machine, or a machine slower this time than the reference's was.")
        decoder_too = (f" The decoder fell below {KEPT_UP:.0%} of the reference run's rate too {behind}, as it would on a "
                       "slower or busier machine."
                       if j.decoder_shares and min(j.decoder_shares) < KEPT_UP else "")
        waits = _speed_waits(m)
        waited = [waits[speed] for speed in short]
        if None in waited:
            if not j.clean_ceiling:
                said += " Other programs kept the cores busy, so they may have held it down: the shares may be too high."
            return said + decoder_too
        most = max(waited)
        decoder_kept = bool(j.decoder_shares) and min(j.decoder_shares) >= KEPT_UP
        if most <= measure.WAIT_SHARE and decoder_kept and "bandwidth" in short:
            said += (f" The sample that set it waited {most:.2f} s for a core per second of it, so no other program "
                     f"in this machine pushed it off its cores. Yet the decoder kept up with the reference run ({decoder}): "
                     "the memory was most likely slower during these reads than during its steps (a virtual machine shares its "
                     "memory with the other machines on its host, and their demand moves). The ceilings may then sit "
                     "a little low, and the shares a little high.")
        elif most <= measure.WAIT_SHARE:
            said += (f" The sample that set it waited {most:.2f} s for a core per second of it, so no other program "
                     "in this machine pushed it off its cores: the machine itself most likely delivered less this time (a virtual "
                     "machine shares its memory with the other machines on its host).")
        else:
            said += (f" The sample that set it waited {most:.2f} s for a core per second of it, so other programs may "
                     "have held it down. If they did, its ceilings are too low and the shares too high.")
        return said + decoder_too
    if j.state == measure.ROOF_SLOWED:
        after = f", and so did the decoder ({decoder})" if decoder else ""
        return (f"this run's {_join(short)} fell below {KEPT_UP:.0%} of the reference run's ({shares}){after}. Other "
                "programs slowed the whole run. Its ceilings and its points are those of a slowed machine: read the "
                "relations, not the heights.")
    said = ("they use this run's own roof. The reference ran on another kind of machine, so it cannot say whether "
            "other programs slowed this run.")
    if j.waited is not None:
        said += (f" In the fastest sample of every measurement, the sweeps' points among them (not only the table's rows), "
                 f"this process's threads, together, waited up to "
                 f"{measure._wait_text(j.waited)} s for a core per second: "
                 + ("no other thread pushed them off their cores." if j.waited <= measure.WAIT_SHARE else
                    "other threads, most likely other programs', pushed them off their cores."))
    return said


def against_reference(m: measure.Machine, ref=None) -> Markdown:
    """Under the machine table: this run's roof against the reference run's (``reference_words``),
    then, for a judged machine, what that says of the ceilings (``roof_words``)."""
    from inferlimits.machine import reference  # noqa: PLC0415

    ref = ref or reference.reference_run()
    ratios = {"bandwidth": m.measured_bandwidth_bytes_per_s / 1e9 / ref.bandwidth_gb_per_s,
              "math rate": m.measured_peak_flop_per_s / 1e9 / ref.math_gflop_per_s}
    items = [("Against the reference run", reference_words(ratios, _same_machine(m, ref), ref.label, ref.date))]
    if m.judgement is not None:
        items.append(("What the ceilings use", roof_words(m)))
    return Markdown(_bullets(items))


def decode_against_reference(m: measure.Machine, runs: Sequence[measure.DecodePoint], ref=None) -> str:
    """For the run's verdict: the small decoder's tokens/s at the reference's settings, as shares
    of the reference run's (``reference_words``); "" where this run did not measure them."""
    from inferlimits.machine import reference  # noqa: PLC0415

    ref = ref or reference.reference_run()
    ratios = _decoder_shares(runs, ref)
    return reference_words(ratios, _same_machine(m, ref), ref.label, ref.date) if ratios else ""
