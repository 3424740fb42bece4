"""A reference run of chapter 13's measurements, kept as data (``data/machine_reference.toml``) so
that a fresh run can be set beside a quiet one of the machine that builds the hosted book: the
roof's two speeds, the widest matrix product, and the small decoder at its chapter settings, with
the machine, the date and how quiet the run was.

    python -m inferlimits.machine.reference          # measure now; print the TOML for the data file

Measure on a quiet machine (nothing else running): the printed file says how many of the run's
measurements spread more than the chapter's quiet bar, and the chapter shows that beside the
reference, so a noisy reference is never passed off as a quiet one. The file also keeps what
makes two machines the same kind (the processor's vector features, its last-level cache, numpy's
BLAS library), and, for the roof, the median beside the fastest sample.
"""
from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from IPython.display import Markdown

from inferlimits.data import datafiles
from inferlimits.data.units import non_negative, positive, whole
from inferlimits.machine.measure import _mb

#: the settings of the chapter's measurements that the reference keeps (the chapter states them)
ROOF_SIDE = 2048            # the square product that measures the math rate (``measure.ROOF_SIDE``)
WIDEST_PRODUCT = 256        # vectors times the 8,192 x 8,192 weight matrix
PRODUCT_SIDE = 8192
LARGEST_BATCH = 64
SHORT_CONTEXT, LONG_CONTEXT = 128, 1024
SPLIT_BATCHES = (1, 2, 16)   # the batches whose steps are set beside their weight products alone
#: the fields that hold a sweep, batch -> rate, each a table of its own in the data file
SWEEPS = ("product_gflop_per_s", "short_context_tokens_per_s", "long_context_tokens_per_s",
          "split_products_tokens_per_s")


@dataclass(frozen=True)
class ReferenceRun:
    """One run of the chapter's measurements, summed up: each rate is its measurement's fastest
    repeat or round, as the chapter's tables give it (GB/s, GFLOP/s, tokens/s)."""

    processor: str
    cores: int
    date: str
    numpy: str
    load_before: float               # the 1-minute load average before measuring
    measurements: int                # repeated measurements the run made (``measure.run_spreads``)
    noisy_measurements: int          # of them, how many spread more than the chapter's quiet bar
    widest_spread: float             # the widest spread of them all (fastest over slowest)
    bandwidth_gb_per_s: float        # the roof's bandwidth
    math_gflop_per_s: float          # the roof's math rate
    product_gflop_per_s: Mapping[int, float]        # vectors -> GFLOP/s, times the 8,192 x 8,192 matrix
    control_gflop_per_s: float                      # the smallest batch past one, a vector at a time
    short_context_tokens_per_s: Mapping[int, float]  # batch -> tokens/s, 128 tokens of context
    long_context_tokens_per_s: Mapping[int, float]   # batch -> tokens/s, 1,024 tokens of context
    split_products_tokens_per_s: Mapping[int, float]  # batch -> tokens/s of a step's weight products alone
    # what makes two machines the same kind (absent from a file made before they were kept)
    features: str | None = None           # the processor's vector features (``measure.processor_features``)
    last_level_cache_bytes: int | None = None
    blas: str | None = None               # numpy's BLAS library (``measure.blas``)
    blas_threads: int | None = None
    # the medians beside the fastest samples, where kept
    bandwidth_median_gb_per_s: float | None = None
    math_median_gflop_per_s: float | None = None
    # the runs the reference was chosen from (the one nearest their median), and their range of bandwidths
    runs_compared: int | None = None
    bandwidth_lowest_gb_per_s: float | None = None
    bandwidth_highest_gb_per_s: float | None = None

    @property
    def label(self) -> str:
        """As ``measure.Machine.label`` names a machine: "AMD EPYC (2 cores), 2026-12-05"."""
        return f"{self.processor} ({self.cores} cores), {self.date}"

    @property
    def widest_product_gflop_per_s(self) -> float:
        return self.product_gflop_per_s[WIDEST_PRODUCT]

    @property
    def single_stream_tokens_per_s(self) -> float:
        return self.short_context_tokens_per_s[1]

    @property
    def batch_64_tokens_per_s(self) -> float:
        return self.short_context_tokens_per_s[LARGEST_BATCH]

    @property
    def batch_64_long_tokens_per_s(self) -> float:
        return self.long_context_tokens_per_s[LARGEST_BATCH]

    def tokens_per_s(self, context_tokens: int) -> Mapping[int, float]:
        """Batch -> tokens/s at one of the two contexts the reference measured."""
        runs = {SHORT_CONTEXT: self.short_context_tokens_per_s, LONG_CONTEXT: self.long_context_tokens_per_s}
        return datafiles.lookup(runs, "context_tokens", context_tokens)

    @property
    def balance_point_flop_per_byte(self) -> float:
        return self.math_gflop_per_s / self.bandwidth_gb_per_s

    @property
    def quiet(self) -> bool:
        return self.noisy_measurements == 0


@datafiles.cached
def reference_run() -> ReferenceRun:
    """The reference run kept in ``data/machine_reference.toml``."""
    row = datafiles.load("machine_reference.toml")["reference"]
    run = ReferenceRun(**{k: ({int(b): x for b, x in v.items()} if isinstance(v, dict) else v) for k, v in row.items()})
    whole("cores", run.cores)
    whole("measurements", run.measurements)
    if not 0 <= run.noisy_measurements <= run.measurements:
        raise ValueError("noisy_measurements must lie between 0 and measurements")
    non_negative("load_before", run.load_before)
    for name in ("widest_spread", "bandwidth_gb_per_s", "math_gflop_per_s", "control_gflop_per_s"):
        positive(name, getattr(run, name))
    for name in SWEEPS:
        for x in getattr(run, name).values():
            positive(name, x)
    if 1 not in run.product_gflop_per_s or WIDEST_PRODUCT not in run.product_gflop_per_s:
        raise ValueError(f"product_gflop_per_s must hold 1 and {WIDEST_PRODUCT} vectors")
    if not {1, LARGEST_BATCH} <= set(run.short_context_tokens_per_s) & set(run.long_context_tokens_per_s):
        raise ValueError(f"short_context_tokens_per_s and long_context_tokens_per_s must hold batches 1 and {LARGEST_BATCH}")
    if not set(run.split_products_tokens_per_s) <= set(run.short_context_tokens_per_s):
        raise ValueError("split_products_tokens_per_s must hold only batches of short_context_tokens_per_s")
    for name in ("last_level_cache_bytes", "blas_threads", "runs_compared"):
        if getattr(run, name) is not None:
            whole(name, getattr(run, name))
    for name in ("bandwidth_median_gb_per_s", "math_median_gflop_per_s", "bandwidth_lowest_gb_per_s",
                 "bandwidth_highest_gb_per_s"):
        if getattr(run, name) is not None:
            positive(name, getattr(run, name))
    return run


def quiet_words(run: ReferenceRun, quiet_spread: float) -> str:
    """How quiet the reference run was, by the chapter's bar ``quiet_spread``."""
    if run.quiet:
        return (f"quiet: all {run.measurements} of its measurements varied at most {run.widest_spread:.2f}× "
                "from slowest to fastest")
    return (f"{run.measurements - run.noisy_measurements} of its {run.measurements} measurements varied at most "
            f"{quiet_spread:g}×; the widest spread was {run.widest_spread:.2f}×")


def _identity(run: ReferenceRun) -> str:
    """The reference's machine beyond its name, where the file keeps it: "AVX2 and FMA vector units, 33.6 MB of
    last-level cache, numpy's BLAS scipy-openblas 0.3.31.188.0, 2 threads"."""
    parts = []
    if run.features:
        parts.append(" and ".join(f.upper() for f in run.features.split()) + " vector units")
    if run.last_level_cache_bytes:
        parts.append(f"{_mb(run.last_level_cache_bytes)} of last-level cache")
    if run.blas:
        threads = f", {run.blas_threads} threads" if run.blas_threads else ""
        parts.append(f"numpy's BLAS {run.blas}{threads}")
    return ", ".join(parts)


def reference_table(run: ReferenceRun | None = None) -> Markdown:
    """The reference run's machine and roof, as the chapter's main line shows them: the machine, the date, then the
    roof's two speeds (fastest samples, with their medians where the file keeps them) and the balance point."""
    run = run or reference_run()
    bw_median = f" (median {run.bandwidth_median_gb_per_s:,.1f})" if run.bandwidth_median_gb_per_s else ""
    math_median = f" (median {run.math_median_gflop_per_s:,.1f})" if run.math_median_gflop_per_s else ""
    rows = ["| measured | reference run |", "|:--|--:|",
            f"| bandwidth (fastest read) | {run.bandwidth_gb_per_s:,.1f} GB/s{bw_median} |",
            f"| math rate ({ROOF_SIDE:,} × {ROOF_SIDE:,} product) "
            f"| {run.math_gflop_per_s:,.1f} GFLOP/s{math_median} |",
            f"| balance point | {run.balance_point_flop_per_byte:,.1f} FLOP per byte |"]
    return Markdown(f"**Reference run:** {run.label} (numpy {run.numpy}, float32), kept in the book's data.\n\n"
                    + "\n".join(rows))


def quality_words(run: ReferenceRun | None = None, quiet_spread: float = 1.25) -> Markdown:
    """What made the reference run (the machine, numpy's library) and how quiet it was, by the chapter's bar
    ``quiet_spread``, with the load before it and the runs it was chosen from."""
    run = run or reference_run()
    identity = _identity(run)
    chosen = (f" It is the middle one, by bandwidth, of {run.runs_compared} runs made back to back, whose bandwidths ranged "
              f"from {run.bandwidth_lowest_gb_per_s:,.1f} to {run.bandwidth_highest_gb_per_s:,.1f} GB/s."
              if run.runs_compared and run.bandwidth_lowest_gb_per_s and run.bandwidth_highest_gb_per_s else "")
    return Markdown(f"**Reference run:** {run.label}" + (f"; {identity}" if identity else "")
                    + f". Load before measuring {run.load_before:.1f}; {quiet_words(run, quiet_spread)}.{chosen}")


def summary(m, products, runs, spreads: dict[str, float], quiet_spread: float = 1.25) -> dict:
    """A run summed up as the data file keeps it (``m``: ``measure.Machine``, with the roof's samples
    from the sweeps' rounds; ``products``: the product sweep; ``runs``: the decode sweep at both
    contexts; ``spreads``: every spread of the run, ``measure.run_spreads``), each rate rounded as
    the chapter shows it."""
    from inferlimits.machine import measure  # noqa: PLC0415

    short, long_ = measure.at_context(runs, SHORT_CONTEXT), measure.at_context(runs, LONG_CONTEXT)
    row = {"processor": m.processor, "cores": m.cores, "date": m.date, "numpy": np.__version__,
           "load_before": round(m.load or 0.0, 1),
           "measurements": len(spreads), "noisy_measurements": sum(x > quiet_spread for x in spreads.values()),
           "widest_spread": round(max(spreads.values()), 2),
           "bandwidth_gb_per_s": round(m.measured_bandwidth_bytes_per_s / 1e9, 1),
           "math_gflop_per_s": round(m.measured_peak_flop_per_s / 1e9, 1),
           "control_gflop_per_s": round(products.one_at_a_time.high / 1e9, 1),
           "product_gflop_per_s": {p.batch: round(p.flop_per_s / 1e9, 1) for p in products},
           "short_context_tokens_per_s": {p.batch: round(p.tokens_per_s, 1) for p in short},
           "long_context_tokens_per_s": {p.batch: round(p.tokens_per_s, 1) for p in long_},
           "split_products_tokens_per_s": {x.batch: round(x.products.high, 1) for x in runs.splits}}
    if m.features:
        row["features"] = " ".join(m.features)
    if m.last_level_cache:
        row["last_level_cache_bytes"] = int(m.last_level_cache)
    if m.blas:
        row["blas"] = m.blas
    if m.blas_threads:
        row["blas_threads"] = int(m.blas_threads)
    products_ = m.matmul + (m.rounds_matmul or measure.Samples(()))
    row["bandwidth_median_gb_per_s"] = round(m.bandwidth.median / 1e9, 1)
    row["math_median_gflop_per_s"] = round(products_.median / 1e9, 1) if products_.values else None
    return {k: v for k, v in row.items() if v is not None}


HEADER = """\
# A reference run of chapter 13's measurements (inferlimits/machine/reference.py), kept so that a
# fresh run can be set beside it. Made with `python -m inferlimits.machine.reference`, which
# measures as the chapter does and prints this file, on the kind of machine that builds the hosted
# book, with nothing else running. Each rate is its measurement's fastest repeat or round, as the chapter's
# tables give it. A virtual machine's bandwidth moves from run to run, so measure several times and
# keep the run nearest the median of them (say which, and the range, below the header).
#
#   processor, cores, date, numpy   the machine, the day and the numpy that measured
#   load_before                     the system's 1-minute load average before measuring
#   measurements                    how many repeated measurements the run made
#   noisy_measurements              of them, how many spread more than the chapter's quiet bar, 1.25x
#   widest_spread                   the widest spread (fastest over slowest) of them all
#   bandwidth_gb_per_s              the roof's bandwidth: the fastest sample of any read, the sweeps' rounds
#                                   and the product sweep's 1-vector product among them
#   math_gflop_per_s                the roof's math rate: the fastest sample of the 2,048 x 2,048 product
#   control_gflop_per_s             2 vectors times the same matrix, one matrix-vector product each
#   [reference.product_gflop_per_s]          vectors -> GFLOP/s, times the 8,192 x 8,192 weight matrix
#   [reference.short_context_tokens_per_s]   batch -> the small decoder's tokens/s, 128 tokens of context
#   [reference.long_context_tokens_per_s]    batch -> the same, 1,024 tokens of context
#   [reference.split_products_tokens_per_s]  batch -> tokens/s of a step's weight products alone, timed right
#                                   after each step (128 tokens of context): B tokens per set of products;
#                                   their part of the step's time is the step's rate over theirs
#   features                        the processor's vector features, as /proc/cpuinfo names them
#   last_level_cache_bytes          the last-level caches of all cores together, as the system reports them
#   blas, blas_threads              numpy's BLAS library and the threads it ran
#   bandwidth_median_gb_per_s       the median sample of the read the roof's bandwidth came from
#   math_median_gflop_per_s         the median sample of the square product, first repeats and rounds together
#   runs_compared                   how many runs, made back to back, the reference was chosen from
#   bandwidth_lowest_gb_per_s, bandwidth_highest_gb_per_s   the range of those runs' roof bandwidths

[reference]
"""


def to_toml(row: dict) -> str:
    """The data file for a run summed up by ``summary``."""
    def value(x):
        return f'"{x}"' if isinstance(x, str) else f"{x}"

    plain = "".join(f"{k} = {value(v)}\n" for k, v in row.items() if not isinstance(v, dict))
    tables = "".join(f"\n[reference.{k}]\n" + "".join(f"{b} = {x}\n" for b, x in v.items())
                     for k, v in row.items() if isinstance(v, dict))
    return HEADER + plain + tables


def main(argv: list[str]) -> int:
    """Measure as the chapter does and print the data file."""
    from inferlimits.machine import measure, tinyllm  # noqa: PLC0415

    m = measure.this_machine(measure.bandwidth_array_bytes(), ROOF_SIDE)
    roof = measure.roof_settings(m.array_bytes, m.matmul_side)
    products = measure.product_sweep(PRODUCT_SIDE, PRODUCT_SIDE, measure.powers_of_two(WIDEST_PRODUCT), roof=roof)
    runs = measure.decode_sweep(tinyllm.TINY_LLAMA, measure.powers_of_two(LARGEST_BATCH),
                                (SHORT_CONTEXT, LONG_CONTEXT), roof=roof, split=SPLIT_BATCHES)
    m = measure.with_rounds(m, products, runs)
    row = summary(m, products, runs, measure.run_spreads(m, runs, products), measure.QUIET_SPREAD)
    sys.stdout.write(to_toml(row))
    if row["noisy_measurements"]:
        print(f"# not quiet: {row['noisy_measurements']} of {row['measurements']} measurements spread more than "
              f"{measure.QUIET_SPREAD:g}x (load before measuring {row['load_before']}, {measure.cores()} cores)",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
