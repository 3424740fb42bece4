"""Chapter 13's reference run shown: its sweeps as tables, each measured rate beside the roof or the
ceiling that the book's formulas draw from the run's own two speeds. The run is data
(``machine.reference``), not a measurement, so the chapter's main line can state its numbers and
check them; the chapter's last section measures the reader's machine with the same settings."""
from __future__ import annotations

from dataclasses import dataclass

from IPython.display import Markdown

from inferlimits.arithmetic.generation import decode_point
from inferlimits.arithmetic.roofline import attainable_flop_per_s, matmul_bytes, matmul_flops, no_overlap_flop_per_s
from inferlimits.data.units import bytes_per_element
from inferlimits.figures import INK, base_layout, machine
from inferlimits.figures.interactive import Control, panel
from inferlimits.figures.machine import NEAR, VERDICT_NAMES, regime_kinds, split_cause
from inferlimits.machine import measure, reference, tinyllm
from inferlimits.machine.reference import ReferenceRun

_share = measure._percent
#: who lost more time beyond the roof, the products or the rest of the step, as the split table names them
#: (``figures.machine.split_cause``)
HELD_BY = {"products": "the products", "rest": "the rest of the step"}


def _roof(ref: ReferenceRun) -> tuple[float, float]:
    """The reference run's bandwidth (bytes/s) and math rate (FLOP/s)."""
    return ref.bandwidth_gb_per_s * 1e9, ref.math_gflop_per_s * 1e9


@dataclass(frozen=True)
class ProductRow:
    """One batch of the reference's product sweep against the roof min(P, I x BW) at its intensity I."""

    batch: int
    intensity_flop_per_byte: float
    roof_gflop_per_s: float
    gflop_per_s: float
    no_overlap_gflop_per_s: float   # the rate if reading and multiplying took turns (``no_overlap_flop_per_s``)

    @property
    def share(self) -> float:
        return self.gflop_per_s / self.roof_gflop_per_s


def product_rows(ref: ReferenceRun | None = None) -> tuple[ProductRow, ...]:
    ref = ref or reference.reference_run()
    bw, p = _roof(ref)
    n, fp = reference.PRODUCT_SIDE, bytes_per_element(measure.PRECISION)
    rows = []
    for b, rate in sorted(ref.product_gflop_per_s.items()):
        i = matmul_flops(b, n, n) / matmul_bytes(b, n, n, fp)
        rows.append(ProductRow(b, i, attainable_flop_per_s(i, p, bw) / 1e9, rate,
                               no_overlap_flop_per_s(i, p, bw) / 1e9))
    return tuple(rows)


def products_view(ref: ReferenceRun | None = None) -> Markdown:
    """The reference's product sweep: each batch's intensity, its roof, the rate if reading and multiplying took
    turns, the measured GFLOP/s (fastest round) and its share of the roof; then the control, the smallest batch past
    one multiplied a vector at a time."""
    ref = ref or reference.reference_run()
    rows = ["| vectors | FLOP per byte | roof, GFLOP/s | reading and math in turn, GFLOP/s | measured GFLOP/s "
            "| share of the roof |", "|--:|--:|--:|--:|--:|--:|"]
    rows += [f"| {r.batch:,} | {r.intensity_flop_per_byte:,.2f} | {r.roof_gflop_per_s:,.1f} "
             f"| {r.no_overlap_gflop_per_s:,.1f} | {r.gflop_per_s:,.1f} | {_share(r.share, (1.0,))} |"
             for r in product_rows(ref)]
    control = min(b for b in ref.product_gflop_per_s if b > 1)
    rows.append(f"| control: the same {control} vectors, one at a time | | | | {ref.control_gflop_per_s:,.1f} | |")
    return Markdown(f"**Reference run**, {ref.label}: the {reference.PRODUCT_SIDE:,} × {reference.PRODUCT_SIDE:,} "
                    "weight matrix times each batch of vectors, fastest of its rounds\n\n" + "\n".join(rows))


@dataclass(frozen=True)
class DecodeRow:
    """One batch of the reference's decode sweep against its two ceilings, placed by the book's rule."""

    batch: int
    memory_ceiling: float   # tokens/s
    math_ceiling: float     # tokens/s
    tokens_per_s: float
    kind: str               # memory-bound, compute-bound or overhead-bound (``regime_kinds``)

    @property
    def share(self) -> float:
        return self.tokens_per_s / min(self.memory_ceiling, self.math_ceiling)


def decode_rows(context_tokens: int, ref: ReferenceRun | None = None) -> tuple[DecodeRow, ...]:
    ref = ref or reference.reference_run()
    bw, p = _roof(ref)
    measured = sorted(ref.tokens_per_s(context_tokens).items())
    points = [decode_point(tinyllm.TINY_LLAMA, p, bw, b, context_tokens, measure.PRECISION, measure.PRECISION,
                           measure.PRECISION) for b, _ in measured]
    kinds = regime_kinds([x for _, x in measured], [q.memory_ceiling for q in points],
                         [q.math_ceiling for q in points])
    return tuple(DecodeRow(b, q.memory_ceiling, q.math_ceiling, x, k)
                 for (b, x), q, k in zip(measured, points, kinds))


def decode_view(context_tokens: int, ref: ReferenceRun | None = None) -> Markdown:
    """The reference's decode sweep at one context, in the columns of the live run's table: each batch's measured
    tokens/s (fastest round), its two ceilings, the share of the lower ceiling and the bound the book's rule gives it."""
    ref = ref or reference.reference_run()
    rows = ["| batch | measured tokens/s | memory ceiling, tokens/s | math ceiling, tokens/s "
            "| share of the lower ceiling | bound |", "|--:|--:|--:|--:|--:|:--|"]
    rows += [f"| {r.batch:,} | {r.tokens_per_s:,.1f} | {r.memory_ceiling:,.0f} | {r.math_ceiling:,.0f} "
             f"| {_share(r.share)} | {VERDICT_NAMES[r.kind]} |" for r in decode_rows(context_tokens, ref)]
    return Markdown(f"**Reference run**, {ref.label}: the small decoder at {context_tokens:,} tokens of context, "
                    "fastest of its rounds\n\n" + "\n".join(rows))


@dataclass(frozen=True)
class SplitRow:
    """One batch whose steps were set beside their weight products alone, in the same rounds."""

    batch: int
    step_share: float       # the whole step's share of its lower ceiling (the decode table's)
    products_share: float   # the products alone: their roof time over their measured time
    products_part: float    # the products' part of the step's time

    @property
    def held_by(self) -> str | None:
        """What did most to hold the step below half ("products" or "rest"), or None at or above half."""
        return split_cause(self.products_share, self.products_part) if self.step_share < NEAR else None


def split_rows(ref: ReferenceRun | None = None) -> tuple[SplitRow, ...]:
    ref = ref or reference.reference_run()
    bw, p = _roof(ref)
    steps = {r.batch: r.share for r in decode_rows(reference.SHORT_CONTEXT, ref)}
    shapes = tinyllm.weight_shapes(tinyllm.TINY_LLAMA)
    return tuple(SplitRow(b, steps[b], measure.products_share(shapes, b, rate, bw, p),
                          ref.short_context_tokens_per_s[b] / rate)   # t_products / t_step, from the fastest rounds
                 for b, rate in sorted(ref.split_products_tokens_per_s.items()))


def split_view(ref: ReferenceRun | None = None) -> Markdown:
    """The reference's split: each batch's whole step as a share of its lower ceiling, its weight products alone as a
    share of their roof, their part of the step's time, and, below half, what did most to hold the step there."""
    ref = ref or reference.reference_run()
    rows = ["| batch | whole step, share of its lower ceiling | weight products alone, tokens/s "
            "| their share of their roof | their part of the step's time | more time lost beyond the roof by |",
            "|--:|--:|--:|--:|--:|:--|"]
    rows += [f"| {r.batch:,} | {_share(r.step_share)} | {ref.split_products_tokens_per_s[r.batch]:,.1f} "
             f"| {_share(r.products_share)} | {r.products_part:.1%} | {HELD_BY.get(r.held_by, 'not below half')} |"
             for r in split_rows(ref)]
    return Markdown(f"**Reference run**, {ref.label}: at {reference.SHORT_CONTEXT:,} tokens of context, the weight "
                    "products timed alone right after each step, in the same rounds; their part of the step's time is "
                    "the step's rate over theirs, each its fastest round\n\n" + "\n".join(rows))


# ---- the reference run, drawn ---------------------------------------------------------------------------------

def _title(what: str, ref: ReferenceRun) -> str:
    return f"{what}<br><sub>the reference run: {ref.label}</sub>"


def products_spec(ref: ReferenceRun | None = None) -> dict:
    """The reference's roof on log scales, its product sweep's points on it, and the model at each batch,
    min(P, I x BW) (hollow circles: computed, not measured)."""
    ref = ref or reference.reference_run()
    bw, p = _roof(ref)
    x0, x1 = machine.INTENSITY_RANGE
    ridge = p / bw
    rows = product_rows(ref)
    data = [
        *machine._roof_traces([x0, ridge, x1], [x0 * bw / 1e9, p / 1e9, p / 1e9], ridge,
                              "the roof, from the reference run's two speeds", f"ridge {ridge:.3g}"),
        dict(type="scatter", x=[r.intensity_flop_per_byte for r in rows], y=[r.gflop_per_s for r in rows],
             mode="markers+lines+text", marker=dict(size=10, color=INK), line=dict(color=INK, width=1),
             text=[str(r.batch) for r in rows], textposition="bottom right", name="measured products (vectors)",
             customdata=[[r.batch, r.share] for r in rows],
             hovertemplate="%{customdata[0]} vectors: %{y:.4g} GFLOP/s, %{customdata[1]:.0%} of the roof<extra></extra>"),
        machine._model_trace([r.intensity_flop_per_byte for r in rows], [r.roof_gflop_per_s for r in rows],
                             "min(P, I·BW)", "%{x:.3g} FLOP/byte → %{y:.4g} GFLOP/s"),
    ]
    layout = base_layout(_title(f"An {reference.PRODUCT_SIDE:,} × {reference.PRODUCT_SIDE:,} weight matrix times "
                                f"1 to {reference.WIDEST_PRODUCT} vectors", ref),
                         "arithmetic intensity (FLOP per byte moved)", "math rate (float32 GFLOP/s)",
                         x_log=True, y_log=True, x_range=machine.INTENSITY_RANGE, y_range=machine.GFLOPS_RANGE,
                         legend=True)
    layout["margin"] = {**layout["margin"], "t": machine.TOP_MARGIN}
    return {"data": data, "layout": layout}


def decode_spec(context_tokens: int = reference.SHORT_CONTEXT, ref: ReferenceRun | None = None) -> dict:
    """The reference's decoder at one context against its two ceilings, and the model at each batch, the lower
    ceiling (hollow circles: computed, not measured)."""
    ref = ref or reference.reference_run()
    bw, p = _roof(ref)
    rows = decode_rows(context_tokens, ref)
    largest = max(r.batch for r in rows)
    curve = [largest ** (i / 47) for i in range(48)]
    ceilings = [decode_point(tinyllm.TINY_LLAMA, p, bw, b, context_tokens, measure.PRECISION, measure.PRECISION,
                             measure.PRECISION) for b in curve]
    data = [
        *machine._ceiling_traces(curve, [q.memory_ceiling for q in ceilings], ceilings[0].math_ceiling, largest),
        dict(type="scatter", x=[r.batch for r in rows], y=[r.tokens_per_s for r in rows], mode="markers+lines",
             marker=dict(size=10, color=INK), line=dict(color=INK, width=1), name="measured",
             customdata=[[r.share, VERDICT_NAMES[r.kind]] for r in rows],
             hovertemplate="batch %{x}: %{y:.4g} tokens/s, %{customdata[0]:.0%} of the ceiling, "
                           "%{customdata[1]}<extra></extra>"),
        machine._model_trace([r.batch for r in rows], [min(r.memory_ceiling, r.math_ceiling) for r in rows],
                             "the lower ceiling, min(memory, math)", "batch %{x}: %{y:.4g} tokens/s"),
    ]
    layout = base_layout(_title(f"The small decoder at {context_tokens:,} tokens of context, float32", ref),
                         "batch (sequences decoded together)", "tokens per second, all sequences",
                         x_log=True, y_log=True, x_range=machine.BATCH_RANGE, y_range=machine.TOKENS_RANGE, legend=True)
    layout["margin"] = {**layout["margin"], "t": machine.TOP_MARGIN}
    return {"data": data, "layout": layout}


def products_panel(div_id: str = "fig-reference-products"):
    """The reference's product sweep on its roof (data: the same with or without a kernel)."""
    return panel(lambda: products_spec(), {}, [], div_id)


def decode_panel(div_id: str = "fig-reference-decode"):
    """The reference's decoder against its ceilings, at either context it measured (a dropdown)."""
    contexts = (reference.SHORT_CONTEXT, reference.LONG_CONTEXT)
    control = Control("context_tokens", "context (tokens)", contexts)
    return panel(decode_spec, {"context_tokens": reference.SHORT_CONTEXT}, [control], div_id,
                 static_dropdown="context_tokens")
