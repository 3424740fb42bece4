"""Figures of this machine, measured: its roofline, matrix-vector to matrix-matrix products on
it, and the small decoder's tokens per second against the book's ceilings.

Each spec measures what it draws (``inferlimits.machine.measure``, remembered for the session, so a
figure redrawn at settings seen before is instant). The live controls therefore re-measure, and
only when a slider is released; in the static book each figure shows the measurements made when
the book was built, and its title says on which machine and when.

The ``*_words`` functions word what a measurement shows (the batch doubled and the rate fell; a
point reached less than half of its ceiling), from the measured values, so that sentences about
a measurement are true of whichever machine ran the chapter.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from IPython.display import Markdown

from inferlimits.machine import measure, tinyllm
from inferlimits.figures.interactive import Control, panel as _panel
from inferlimits.arithmetic.generation import OVERHEAD_BOUND, regime
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
    """This machine's roof from its median bandwidth and math rate, with the roofs its slowest
    and fastest repeats would draw (how much the measurement wobbles). The array defaults to the
    one sized from this machine's cache (``measure.bandwidth_array_bytes``)."""
    array_mib = _chapter_array_mib() if array_mib is None else int(array_mib)
    m = measure.this_machine(array_mib * MIB, int(matmul_side))
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


# ---- words that follow the measurements ------------------------------------------------------

#: A rate within this fraction of twice the last one "doubled"; one within ``LEVEL_WITHIN`` of the
#: last one "held level".
DOUBLED_WITHIN = 0.1
LEVEL_WITHIN = 0.05
#: The book's rule (``generation.regime``, from the chapter on overhead): a rate below this share
#: of the lower ceiling is far below both ceilings.
NEAR = 0.5


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


def doubling_words(batches: Sequence[int], rates: Sequence[float], roofs: Sequence[float],
                   what: str = "vectors", rate: str = "math rate", where: str = "") -> str:
    """What a measured rate did at each doubling of the batch, set against what the roof did
    there: below the ridge the roof nearly doubles, across it the roof rises less, past it the roof
    is flat. ``batches`` double from one to the next; ``rates`` are the measured rates and
    ``roofs`` the roof's at each batch (any one unit); ``where`` ("On this machine") opens the
    first sentence."""
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

    def phrase(run) -> str:
        word, ratios = change_word(run[0][2]), ", ".join(f"×{s[2]:.2g}" for s in run)
        if len(run) == 1:
            return f"{word} from {run[0][0]:,} to {run[0][1]:,} {what} ({ratios})"
        return f"{word} at each doubling from {run[0][0]:,} to {run[-1][1]:,} ({ratios})"

    sentences = []
    for region in _runs(steps, region_of):
        subject = f"the measured {rate}" if not sentences else "it"
        did = _join([phrase(run) for run in _runs(region, lambda s: change_word(s[2]))])
        kind = region_of(region[0])
        if kind == "below":
            lead = "Below the ridge, where the roof nearly doubles with each doubling of the batch"
        elif kind == "past":
            lead = "Past the ridge, where the roof is flat"
        else:
            lead = f"Across the ridge, where the roof rises by {_join([f'{s[3]:.2g}×' for s in region])}"
        sentences.append(f"{lead}, {subject} {did}.")
    return _sentences(sentences, where)


def _sentences(sentences: Sequence[str], where: str = "") -> str:
    """Sentences joined, each capitalised, ``where`` opening the first ("On this machine, below ...")."""
    sentences = list(sentences)
    if where:
        sentences[0] = f"{where}, {sentences[0][0].lower()}{sentences[0][1:]}"
    return " ".join(x[0].upper() + x[1:] for x in sentences)


def products_words(sweep: measure.ProductSweep, m: measure.Machine) -> Markdown:
    """``doubling_words`` for a measured product sweep against this machine's roof."""
    points = list(sweep)
    roofs = [min(m.peak_flop_per_s, p.intensity_flop_per_byte * m.bandwidth_bytes_per_s) for p in points]
    words = doubling_words([p.batch for p in points], [p.flop_per_s for p in points], roofs, where="On this machine")
    above = [(p.batch, p.flop_per_s / r) for p, r in zip(points, roofs) if p.flop_per_s > r]
    return Markdown(words + (" " + above_roof_words([b for b, _ in above], [x for _, x in above],
                                                     [p.batch for p in points]) if above else ""))


def above_roof_words(batches: Sequence[int], shares: Sequence[float], every: Sequence[int],
                     what: str = "vectors") -> str:
    """A sentence naming the measured points that sat above their roof (``shares`` > 1 of it)."""
    if not batches or len(batches) != len(shares) or any(positive("share", x) <= 1 for x in shares):
        raise ValueError("batches and shares must name at least one point, each share above 1")
    one = list(batches) == [1] and what.endswith("s")
    return (f"With {_numbers(list(batches), list(every))} {what[:-1] if one else what} the measured rate sat above the roof ({_shares(shares)} of it): there the "
            "measured speeds behind the roof understate this machine, because they were measured at another "
            "moment, perhaps in a slow spell, or the product found some of its bytes in a cache.")


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
    kinds = ["above" if s > 1 else regime(x, mm, f, NEAR)
             for s, x, mm, f in zip(shares, measured, memory, math_)]
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
            sentences.append(f"{name} measured above {its} lower ceiling ({share}). There the measured speeds "
                             "behind the ceiling understate this machine: they were measured at another moment, "
                             "perhaps in a slow spell, or the step found some of its bytes in a cache.")
    if OVERHEAD_BOUND in groups:
        sentences.append(("This run was dominated by those costs. " if everyone else "")
                         + "If other programs were busy during this run, a quiet machine would lose the time spent "
                         "waiting for cores and keep the time to read memory. Shares like these should then rise: "
                         "close other programs and run the chapter again to see how far.")
    return _sentences(sentences, where)


def decode_words(points: Sequence[measure.DecodePoint], m: measure.Machine) -> Markdown:
    """``regime_words`` for measured decode points at one context against this machine's ceilings."""
    points = list(points)
    if not points:
        raise ValueError("points must hold at least one measured batch")
    ceilings = [measure.decode_ceilings_tokens_per_s(m, p.batch, p.context_tokens, p.config) for p in points]
    return Markdown(regime_words([p.batch for p in points], [p.tokens_per_s for p in points],
                                 [c[0] for c in ceilings], [c[1] for c in ceilings],
                                 where=f"In this run at {points[0].context_tokens:,} tokens of context"))


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
        rule = ("The share is above 100%: the measured speeds behind the ceiling understate this machine here; "
                "they were measured at another moment, perhaps in a slow spell, or the step found some of its "
                "bytes in a cache.")
    else:
        kind = regime(measured, memory, math_, NEAR)
        if kind == OVERHEAD_BOUND:
            rule = (f"That is less than half of the ceiling: {OVERHEAD_BOUND}, by the book's rule, so costs the "
                    "roofline does not model set the pace of this run.")
        else:
            rule = f"That is at least half of the ceiling: {kind}, by the book's rule."
    return f"{compared} {rule}"
