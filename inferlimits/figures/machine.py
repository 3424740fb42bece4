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
chapter's.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from IPython.display import Markdown

from inferlimits.machine import measure, tinyllm
from inferlimits.figures.interactive import Control, panel as _panel
from inferlimits.arithmetic.generation import OVERHEAD_BOUND, decode_flops_per_token, decode_knee_batch, decode_point, regime
from inferlimits.arithmetic.roofline import COMPUTE_BOUND, MEMORY_BOUND
from inferlimits.data.units import GB, MIB, positive, whole
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


def roofline_spec(array_mib: int | None = None, matmul_side: int = 2048) -> dict:
    """This machine's roof from the fastest repeats of its bandwidth and math rate, with the roofs
    its medians and its slowest repeats would draw (how much the measurement wobbles). The array
    defaults to the one sized from this machine's cache (``measure.bandwidth_array_bytes``)."""
    array_mib = _chapter_array_mib() if array_mib is None else int(array_mib)
    m = measure.this_machine(array_mib * MIB, int(matmul_side))
    x, y, ridge = _roof(m)
    lx, ly, _ = _roof(m, m.bandwidth.low, m.matmul.low)
    mx, my, _ = _roof(m, m.bandwidth.median, m.matmul.median)
    data = [
        dict(type="scatter", x=lx + [None] + mx, y=ly + [None] + my, mode="lines",
             line=dict(color=FAINT, width=1, dash="dot"), hoverinfo="skip", name="slowest repeats and medians"),
        dict(type="scatter", x=x, y=y, mode="lines", line=dict(color=ACCENT, width=3),
             name="this machine (fastest repeats)",
             hovertemplate="%{x:.3g} FLOP/byte → %{y:.4g} GFLOP/s<extra></extra>"),
        dict(type="scatter", x=[ridge, ridge], y=[GFLOPS_RANGE[0], y[1]], mode="lines+text",
             line=dict(color=ACCENT, width=1, dash="dot"), text=["", f"ridge {ridge:.3g} FLOP/byte"],
             textposition="top left", hoverinfo="skip", name="ridge"),
        dict(type="scatter", x=[INTENSITY_RANGE[0] * 2, INTENSITY_RANGE[1] / 2], mode="text",
             y=[INTENSITY_RANGE[0] * 2 * m.bandwidth_bytes_per_s / GIGA / 3, y[1] * 1.6],
             text=[f"bandwidth {m.bandwidth_bytes_per_s / GB:.3g} GB/s ({m.bandwidth_from}, fastest repeat)",
                   f"matrix product {m.peak_flop_per_s / GIGA:.3g} GFLOP/s (fastest repeat)"],
             textposition=["bottom right", "top left"], hoverinfo="skip", name="measurements"),
    ]
    layout = base_layout(_title("Roofline of this machine", m), "arithmetic intensity (FLOP per byte moved)",
                         "attainable math rate (float32 GFLOP/s)", x_log=True, y_log=True,
                         x_range=INTENSITY_RANGE, y_range=GFLOPS_RANGE)
    layout["margin"] = {**layout["margin"], "t": TOP_MARGIN}
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
             # how fast a product read its weights means something only below the ridge, where memory sets the pace
             customdata=[[p.batch, f", weights read at {p.bandwidth_bytes_per_s / GB:.3g} GB/s"
                          if p.intensity_flop_per_byte < ridge else ""] for p in sweep],
             hovertemplate="%{customdata[0]} vectors: %{x:.3g} FLOP/byte, %{y:.4g} GFLOP/s%{customdata[1]}<extra></extra>"),
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
             name="memory ceiling B·BW/(W + B·(K·L + A))", hovertemplate="batch %{x:.3g}: %{y:.4g} tokens/s<extra></extra>"),
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


# ---- words that follow the measurements ------------------------------------------------------

#: A rate within this fraction of twice the last one "doubled"; one within ``LEVEL_WITHIN`` of the
#: last one "held level".
DOUBLED_WITHIN = 0.1
LEVEL_WITHIN = 0.05
#: A measured change within this fraction of the roof's (or the formula's) change kept pace with it.
PACE_WITHIN = 0.1
#: The book's rule (``generation.regime``, from the chapter on overhead): a rate below this share
#: of the lower ceiling is far below both ceilings.
NEAR = 0.5
#: A run is quiet when every measurement's fastest repeat is at most this many times its slowest.
QUIET_SPREAD = 1.25
#: The regime ``regime_kinds`` gives a rate above its lower ceiling (``generation.regime`` refuses one).
ABOVE = "above its lower ceiling"

#: Why a measured rate can sit above a roof drawn from the fastest repeats.
_BEAT = ("it beat the fastest repeats the {what} was drawn from, in a quieter spell than theirs or with some of "
         "its bytes from a cache")


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


def _times(k: int) -> str:
    return {1: "once", 2: "twice"}.get(k, f"{k} times")


def pace_word(measured: float, yardstick: float) -> str:
    """How a measured change (new rate / old rate) compares with the roof's change over the same
    doubling, ``yardstick``: "keeping pace with it" (within PACE_WITHIN of it), "outpacing it" or
    "falling behind it"."""
    r, y = positive("measured", measured), positive("yardstick", yardstick)
    if r > y * (1 + PACE_WITHIN):
        return "outpacing it"
    if r >= y * (1 - PACE_WITHIN):
        return "keeping pace with it"
    return "falling behind it"


def _pace(steps: Sequence[tuple[float, float]]) -> str:
    """"keeping pace with it at both doublings", "falling behind it once and outpacing it twice"."""
    words = [pace_word(r, y) for r, y in steps]
    counts = {w: words.count(w) for w in dict.fromkeys(words)}
    if len(counts) == 1:
        return words[0] + ("" if len(words) == 1 else " at both doublings" if len(words) == 2 else " at every doubling")
    return _join([f"{w} {_times(k)}" for w, k in counts.items()])


def doubling_words(batches: Sequence[int], rates: Sequence[float], roofs: Sequence[float],
                   what: str = "vectors", rate: str = "math rate", where: str = "") -> str:
    """What a measured rate did at each doubling of the batch, against the right yardstick for
    each region of the roof: below the ridge the roof doubles (×2), across it the roof rises by
    its own factor, past it the roof is flat (×1). One short sentence per region, with the
    measured factors and whether they kept pace with the roof's. ``batches`` double from one to
    the next; ``rates`` are the measured rates and ``roofs`` the roof's at each batch (any one
    unit); ``where`` ("On this machine") opens the first sentence."""
    batches = [whole("batch", b) for b in batches]
    rates = [positive("rate", r) for r in rates]
    roofs = [positive("roof", r) for r in roofs]
    if not len(batches) == len(rates) == len(roofs) or len(batches) < 2:
        raise ValueError("batches, rates and roofs must be of one length, at least 2")
    if any(b1 != 2 * b0 for b0, b1 in zip(batches, batches[1:])):
        raise ValueError(f"batches must double from one to the next; got {batches}")
    steps = [(b0, b1, r1 / r0, f1 / f0)
             for b0, b1, r0, r1, f0, f1 in zip(batches, batches[1:], rates, rates[1:], roofs, roofs[1:])]

    def region_of(step) -> str:
        roof = step[3]
        if roof >= 2 * (1 - DOUBLED_WITHIN):
            return "below"
        return "past" if roof <= 1 + LEVEL_WITHIN else "across"

    sentences = []
    for region in _runs(steps, region_of):
        kind = region_of(region[0])
        span = f"from {region[0][0]:,} to {region[-1][1]:,} {what}"
        factors = _join([f"×{s[2]:.2g}" for s in region])
        if kind == "below":
            lead, roof, yard = "below the ridge", "the roof doubles at each doubling of the batch", [2.0] * len(region)
        elif kind == "past":
            lead, roof, yard = "past the ridge", "the roof is flat", [1.0] * len(region)
        else:
            lead, yard = "across the ridge", [s[3] for s in region]
            roof = f"the roof rises {_join([f'×{y:.2g}' for y in yard])}"
        subject = f"the measured {rate}" if not sentences else "the measured rate"
        pace = _pace([(s[2], y) for s, y in zip(region, yard)])
        sentences.append(f"{lead}, {span}, {roof}; {subject} went {factors}, {pace}.")
    return _sentences(sentences, where)


def _sentences(sentences: Sequence[str], where: str = "") -> str:
    """Sentences joined, each capitalised, ``where`` opening the first ("On this machine, below ...")."""
    sentences = list(sentences)
    if where:
        sentences[0] = f"{where}, {sentences[0][0].lower()}{sentences[0][1:]}"
    return " ".join(x[0].upper() + x[1:] for x in sentences)


def products_words(sweep: measure.ProductSweep, m: measure.Machine) -> Markdown:
    """``doubling_words`` for a measured product sweep against this machine's roof, and
    ``above_roof_words`` for any point above it."""
    points = list(sweep)
    roofs = [min(m.peak_flop_per_s, p.intensity_flop_per_byte * m.bandwidth_bytes_per_s) for p in points]
    words = doubling_words([p.batch for p in points], [p.flop_per_s for p in points], roofs, where="On this machine")
    above = [(p.batch, p.flop_per_s / r, p.intensity_flop_per_byte >= m.balance_point_flop_per_byte)
             for p, r in zip(points, roofs) if p.flop_per_s > r]
    return Markdown(words + (" " + above_roof_words([a[0] for a in above], [a[1] for a in above],
                                                     [p.batch for p in points], past=[a[2] for a in above])
                             if above else ""))


def above_roof_words(batches: Sequence[int], shares: Sequence[float], every: Sequence[int],
                     what: str = "vectors", past: Sequence[bool] | None = None) -> str:
    """A sentence naming the measured points that sat above their roof (``shares`` > 1 of it), and
    why a point can: a quieter spell than the roof's fastest repeats saw, or, for a point below the
    ridge (``past`` says which points lie past it; default none), bytes found in a cache."""
    if not batches or len(batches) != len(shares) or any(positive("share", x) <= 1 for x in shares):
        raise ValueError("batches and shares must name at least one point, each share above 1")
    past = [False] * len(batches) if past is None else [bool(x) for x in past]
    if len(past) != len(batches):
        raise ValueError("past must say of every point whether it lies past the ridge")
    one = list(batches) == [1] and what.endswith("s")
    why = ("in a quieter spell than theirs" if all(past) else
           "in a quieter spell than theirs or with some of its bytes from a cache" if not any(past) else
           "in a quieter spell than theirs or, below the ridge, with some of its bytes from a cache")
    return (f"With {_numbers(list(batches), list(every))} {what[:-1] if one else what} the measured rate sat above "
            f"the roof ({_shares(shares)} of it): it beat the fastest repeats the roof was drawn from, {why}.")


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


def _shares(shares: Sequence[float]) -> str:
    lo, hi = min(shares), max(shares)
    return f"{lo:.0%}" if f"{lo:.0%}" == f"{hi:.0%}" else f"from {lo:.0%} to {hi:.0%}"


def regime_kinds(measured: Sequence[float], memory: Sequence[float], math_: Sequence[float]) -> list[str]:
    """The regime of each measured rate by the book's rule (``generation.regime``), or ``ABOVE``
    for a rate above its lower ceiling."""
    return [ABOVE if x > min(mm, f) else regime(x, mm, f, NEAR)
            for x, mm, f in zip(measured, memory, math_)]


def regime_words(batches: Sequence[int], measured: Sequence[float], memory: Sequence[float],
                 math_: Sequence[float], where: str = "") -> str:
    """Which regime each measured batch sat in by the book's rule (``generation.regime``): at
    least half of the lower ceiling is bound by that wall, less is far below both ceilings; a rate
    above its ceiling is named as such. ``measured``, ``memory`` and ``math_`` are tokens/s;
    ``where`` ("In this run") opens the first sentence."""
    batches = [whole("batch", b) for b in batches]
    measured = [positive("measured", x) for x in measured]
    memory = [positive("memory", x) for x in memory]
    math_ = [positive("math_", x) for x in math_]
    if not batches or not len(batches) == len(measured) == len(memory) == len(math_):
        raise ValueError("batches, measured, memory and math_ must be of one length, at least 1")
    shares = [x / min(mm, f) for x, mm, f in zip(measured, memory, math_)]
    kinds = regime_kinds(measured, memory, math_)
    groups = {k: [(b, s) for b, s, kk in zip(batches, shares, kinds) if kk == k] for k in dict.fromkeys(kinds)}

    def who(k: str) -> tuple[str, str]:
        chosen = [b for b, _ in groups[k]]
        return _batches(chosen, batches), "its" if len(chosen) == 1 else "their"

    sentences = []
    everyone = len(groups) == 1
    for kind, members in groups.items():
        name, its = who(kind)
        name = "every batch" if everyone and len(batches) > 1 else name
        its = "its" if name == "every batch" else its
        share = _shares([s for _, s in members])
        if kind == OVERHEAD_BOUND:
            sentences.append(f"{name} reached less than half of {its} lower ceiling ({share}): "
                             f"{OVERHEAD_BOUND}, by the book's rule. Neither memory nor math set the pace there; "
                             "costs the roofline does not model did, such as the Python loop, threads waiting for "
                             "busy cores, or library routines that read memory slowly.")
        elif kind in (MEMORY_BOUND, COMPUTE_BOUND):
            wall = "memory" if kind == MEMORY_BOUND else "math"
            sentences.append(f"{name} reached at least half of {its} lower ceiling, the {wall} ceiling ({share}): "
                             f"{kind}, by the book's rule.")
        else:
            sentences.append(f"{name} measured above {its} lower ceiling ({share}): "
                             f"{_BEAT.format(what='ceiling')}.")
    if OVERHEAD_BOUND in groups:
        sentences.append(("This run was dominated by those costs. " if everyone else "")
                         + "If other programs were busy during this run, a quiet machine would lose the time spent "
                         "waiting for cores and keep the time to read memory. Shares like these should then rise: "
                         "close other programs and run the chapter again to see how far.")
    return _sentences(sentences, where)


def _about(x: float) -> str:
    """A batch, rounded as the words give it: "6.6", "64", "1,200"."""
    return f"{x:,.1f}" if x < 10 else f"{x:,.0f}"


def crossing_words(crossing: float, estimate: float, largest: int, context_tokens: int) -> str:
    """Where the book's two decode ceilings cross on this machine: ``crossing``, the batch at
    which the memory ceiling reaches the math ceiling (``math.inf``: never), beside ``estimate``,
    the short-context rule (balance point x W / F), and ``largest``, the largest batch measured."""
    estimate, largest = positive("estimate", estimate), whole("largest", largest)
    context_tokens = whole("context_tokens", context_tokens, 0)
    at = f"At {context_tokens:,} tokens of context"
    if crossing == math.inf:
        return f"{at} the two ceilings never cross on this machine: memory is the lower ceiling at every batch."
    crossing = positive("crossing", crossing)
    rule = f"the balance point times W/F gives {_about(estimate)}"
    if crossing <= 1:
        return (f"{at} the two ceilings cross below a batch of 1 on this machine ({rule}): the math ceiling is the "
                "lower one at every batch.")
    after = ("past it the math ceiling is the lower one" if crossing < largest else
             f"that is beyond the largest batch measured, {largest:,}, so memory is the lower ceiling at every batch here")
    return f"{at} the two ceilings cross at a batch of about {_about(crossing)} on this machine ({rule}); {after}."


def rise_words(batches: Sequence[int], rates: Sequence[float], what: str = "sequences") -> str:
    """How measured tokens/s changed from the smallest batch to the largest, in all and at each
    doubling: "grew 5.4× in all, rising at every doubling", or which doublings fell or held level."""
    batches = [whole("batch", b) for b in batches]
    rates = [positive("rate", r) for r in rates]
    if len(batches) != len(rates) or len(batches) < 2:
        raise ValueError("batches and rates must be of one length, at least 2")
    total = rates[-1] / rates[0]
    span = f"From {batches[0]:,} to {batches[-1]:,} {what}"
    if total > 1 + LEVEL_WITHIN:
        overall = f"{span} the measured tokens per second grew {total:,.2g}× in all"
    elif total >= 1 - LEVEL_WITHIN:
        overall = f"{span} the measured tokens per second held level in all (×{total:.2g})"
    else:
        overall = f"{span} the measured tokens per second fell in all (×{total:.2g})"
    steps = [(b0, b1, change_word(r1 / r0)) for b0, b1, r0, r1 in zip(batches, batches[1:], rates, rates[1:])]
    odd = {w: [(b0, b1) for b0, b1, ww in steps if ww == w] for w in ("fell", "held level")}
    if not any(odd.values()):
        return f"{overall}, rising at every doubling."
    parts = [f"{w} {_join([f'from {b0:,} to {b1:,}' for b0, b1 in pairs])} {what}"
             for w, pairs in odd.items() if pairs]
    return f"{overall}, but not at every doubling: they {_join(parts)}."


def decode_words(points: Sequence[measure.DecodePoint], m: measure.Machine) -> Markdown:
    """Under a decode table: where the two ceilings cross on this machine (``crossing_words``),
    how the measured rate rose with the batch (``rise_words``), and where each batch sat by the
    book's rule (``regime_words``), as three short items."""
    points = list(points)
    if not points:
        raise ValueError("points must hold at least one measured batch")
    c, context = points[0].config, points[0].context_tokens
    ceilings = [measure.decode_ceilings_tokens_per_s(m, p.batch, p.context_tokens, p.config) for p in points]
    fp32 = measure.PRECISION
    crossing = decode_knee_batch(c, m.peak_flop_per_s, m.bandwidth_bytes_per_s, context, fp32, fp32, fp32)
    w = decode_point(c, 1.0, 1.0, 1, 0, fp32, fp32, fp32).weight_bytes
    estimate = m.balance_point_flop_per_byte * w / decode_flops_per_token(c)
    items = [("where the ceilings cross", crossing_words(crossing, estimate, max(p.batch for p in points), context))]
    if len(points) > 1:
        items.append(("the rise", rise_words([p.batch for p in points], [p.tokens_per_s for p in points])))
    items.append(("each batch, by the book's rule",
                  regime_words([p.batch for p in points], [p.tokens_per_s for p in points],
                               [x[0] for x in ceilings], [x[1] for x in ceilings], where="In this run")))
    return Markdown("\n".join(f"- **{name}:** {text}" for name, text in items))


def context_words(batch: int, contexts: tuple[int, int], measured_ratio: float,
                  memory: tuple[float, float], math_: tuple[float, float]) -> str:
    """At one ``batch``, how far going from the short context to the long one (``contexts``)
    lowers the formula's lower ceiling, against how far it lowered the measured tokens/s
    (``measured_ratio``: long over short, compared round by round, as the chapter's check compares
    them); ``memory`` and ``math_`` are the two ceilings (short, long; tokens/s). Then what the
    difference says: a rate that fell further than its ceiling sat further below it at the long
    context."""
    batch = whole("batch", batch)
    short, long_ = (whole("contexts", L, 0) for L in contexts)
    observed = positive("measured_ratio", measured_ratio)
    mems, meml = (positive("memory", x) for x in memory)
    fs, fl = (positive("math_", x) for x in math_)
    predicted = min(meml, fl) / min(mems, fs)
    walls = ["the math ceiling" if f < mm else "the memory ceiling" for mm, f in ((mems, fs), (meml, fl))]
    binds = (f"{walls[0]} is the lower one at both" if walls[0] == walls[1] else
             f"the lower one is {walls[0]} at the short context and {walls[1]} at the long one")
    ceiling = (f"lowers the formula's lower ceiling by {1 - predicted:.0%}" if predicted < 1 else
               f"leaves the formula's lower ceiling at ×{predicted:.2g}")
    rate = (f"compared round by round, the measured rate fell by {1 - observed:.0%}" if observed < 1 else
            f"compared round by round, the measured rate did not fall (×{observed:.2g})")
    first = f"At a batch of {batch:,}, going from {short:,} to {long_:,} tokens of context {ceiling} ({binds}); {rate}."
    if observed < predicted * (1 - PACE_WITHIN):
        second = ("The measured rate fell further than the formula predicts, so it sat further below its ceiling at "
                  "the long context: a cost the formula does not count grew with the context.")
    elif observed > predicted * (1 + PACE_WITHIN):
        second = ("That goes against the formula, which predicts a fall: " if observed >= 1 else
                  "The measured rate fell less than the formula predicts: ")
        second += "it sat further below its ceiling at the short context than at the long one."
    else:
        second = "The measured rate fell about as far as the formula predicts."
    return f"{first} {second}"


def context_change(short: Sequence[measure.DecodePoint], long: Sequence[measure.DecodePoint],
                   m: measure.Machine, batch: int | None = None) -> Markdown:
    """``context_words`` for the chapter's two contexts at ``batch`` (default: the largest measured
    at both), the measured rates compared round by round (``measure.paired_ratio``)."""
    common = sorted({p.batch for p in short} & {p.batch for p in long})
    if not common:
        raise ValueError("short and long must share at least one measured batch")
    batch = max(common) if batch is None else batch
    a, b = measure.point_at(short, batch), measure.point_at(long, batch)
    ca = measure.decode_ceilings_tokens_per_s(m, a.batch, a.context_tokens, a.config)
    cb = measure.decode_ceilings_tokens_per_s(m, b.batch, b.context_tokens, b.config)
    return Markdown(context_words(batch, (a.context_tokens, b.context_tokens), measure.paired_ratio(b.rate, a.rate),
                                  (ca[0], cb[0]), (ca[1], cb[1])))


def verdict_words(spreads: Mapping[str, float], kinds: Sequence[str]) -> str:
    """The whole run in one line: quiet or noisy (``spreads``: how far each measurement's fastest
    repeat lay above its slowest, keyed by what was repeated, e.g. "repeats of the plain read";
    quiet when none exceeds QUIET_SPREAD), and how close the decoder came to its ceilings
    (``kinds``: the regime of every decode point, as ``regime_kinds`` names them); then what to
    read in it: the relations only, or the heights too."""
    if not spreads or not kinds:
        raise ValueError("spreads and kinds must each hold at least one value")
    spreads = {name: positive("spreads", x) for name, x in spreads.items()}
    name, worst = max(spreads.items(), key=lambda item: item[1])
    noisy = worst > QUIET_SPREAD
    if noisy:
        run = (f"noisy (the {name} spread {worst:,.2g}× from slowest to fastest, more than the "
               f"{QUIET_SPREAD:g}× this chapter calls quiet)")
    else:
        run = (f"quiet (every measurement's repeats agreed within {worst:,.2g}× from slowest to fastest, "
               f"at most the {QUIET_SPREAD:g}× this chapter calls quiet)")
    far, n = sum(k == OVERHEAD_BOUND for k in kinds), len(kinds)
    if far == n:
        decoder = ("overhead-bound (every decode batch, at both contexts, reached less than half of its lower "
                   "ceiling: far below both ceilings)")
    elif far == 0:
        decoder = "close to its ceilings (every decode batch, at both contexts, reached at least half of its lower ceiling)"
    else:
        decoder = (f"partly overhead-bound ({far} of the {n} decode measurements reached less than half of their "
                   "lower ceiling)")
    if noisy and far:
        advice = "Read the relations, not the heights."
    elif noisy:
        advice = "Read the relations first: another run may put the heights elsewhere by as much as the spread."
    elif far:
        advice = ("The speeds are steady, but Python's costs, not the hardware, set the decoder's heights where it "
                  "fell below half: read the relations there, not the heights.")
    else:
        advice = "The heights, too, describe this machine."
    return f"**This run:** {run}, and {decoder}. {advice}"


def run_spreads(m: measure.Machine, runs: Sequence[measure.DecodePoint],
                products: measure.ProductSweep | None = None) -> dict[str, float]:
    """How far repeated measurements spread in this run (fastest over slowest), by what was
    repeated: the repeats of each speed, and the rounds of a typical setting of each sweep (the
    median over its settings, so that one hiccup does not speak for a whole sweep)."""
    out = {f"repeats of the {name}": x for name, x in m.spreads.items()}
    if products is not None:
        out["rounds of a typical batch of the product sweep"] = float(np.median([p.rate.spread for p in products]))
    if runs:
        out["rounds of a typical setting of the decode sweep"] = float(np.median([p.rate.spread for p in runs]))
    return out


def run_verdict(m: measure.Machine, runs: Sequence[measure.DecodePoint],
                products: measure.ProductSweep | None = None) -> Markdown:
    """``verdict_words`` for this run: the spreads of ``run_spreads`` and the regime of every decode
    point (every context) against this machine's ceilings."""
    runs = list(runs)
    if not runs:
        raise ValueError("runs must hold at least one measured decode point")
    ceilings = [measure.decode_ceilings_tokens_per_s(m, p.batch, p.context_tokens, p.config) for p in runs]
    kinds = regime_kinds([p.tokens_per_s for p in runs], [c[0] for c in ceilings], [c[1] for c in ceilings])
    return Markdown(verdict_words(run_spreads(m, runs, products), kinds))


def share_words(measured: float, memory: float, math_: float, eager_share: float) -> str:
    """A single stream's measured tokens/s against its two ceilings (its share of the lower one),
    set beside the eager B200 run's share of its own ceiling, in words: how many times that share
    it is, above, about the same or below; and, by the book's rule, whether it reaches half of
    the lower ceiling."""
    measured, memory, math_ = positive("measured", measured), positive("memory", memory), positive("math_", math_)
    eager_share = positive("eager_share", eager_share)
    share = measured / min(memory, math_)
    ratio = share / eager_share
    if ratio > 1 + LEVEL_WITHIN:
        compared = (f"This machine's share is {ratio:,.2g} times the eager run's: above it, "
                    "as the reasoning above expects of a processor whose memory is slow beside its fixed costs.")
    elif ratio >= 1 - LEVEL_WITHIN:
        compared = "This machine's share is about the eager run's, less than the reasoning above expects."
    else:
        compared = (f"This machine's share is only {ratio:,.2g} times the eager run's: below it, against what the "
                    "reasoning above expects. Costs other than reading memory took a larger part of each step "
                    "than in the eager run; the next paragraph says how a busy processor does that.")
    if share > 1:
        rule = f"The share is above 100%: {_BEAT.format(what='ceiling')}."
    else:
        kind = regime(measured, memory, math_, NEAR)
        if kind == OVERHEAD_BOUND:
            rule = (f"That is less than half of the ceiling: {OVERHEAD_BOUND}, by the book's rule, so costs the "
                    "roofline does not model set the pace of this run.")
        else:
            rule = f"That is at least half of the ceiling: {kind}, by the book's rule."
    return f"{compared} {rule}"
