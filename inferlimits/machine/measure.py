"""Measuring this machine with numpy: its memory bandwidth, its matrix-multiply rate, the
throughput of one weight matrix times 1, 2, 4, ... vectors, and the decode speed of a small
Llama-shaped model (``tinyllm``).

Every measurement is repeated. A ceiling (the roof) and a measured point both take the fastest
repeat, the most the machine was seen to deliver: other programs slow a repeat down, and rarely
speed one up (Python's ``timeit.Timer.repeat`` says the same of the lowest time), so on a busy
machine the fastest repeat is the one least disturbed, and a point set against a roof is compared
like with like. How far the repeats spread (fastest over slowest) says how busy the machine was;
the tables print it. A comparison between two points takes the median over rounds of their ratio
within each round, which one slow round (another program waking up) cannot move much. Sweeps
measure in rounds, each round visiting every setting once, so that a slow spell of the machine
touches all settings alike instead of one of them.

The functions whose names start with ``this_`` or end in ``_sweep`` remember their results for
the rest of the session (the same arguments give the same measurement back), so that one
chapter's cells and figures all show one set of measurements, and a figure redrawn with earlier
settings does not measure again. Restart the kernel to measure afresh.
"""
from __future__ import annotations

import datetime
import os
import platform
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache

import numpy as np
from IPython.display import Markdown

from inferlimits.machine import tinyllm
from inferlimits.checks import CheckFailed
from inferlimits.arithmetic.generation import decode_flops_per_token, decode_point
from inferlimits.data.models import Config
from inferlimits.arithmetic.roofline import balance_point_flop_per_byte, matmul_bytes, matmul_flops
from inferlimits.data.units import GB, MB, MIB, bytes_per_element, non_negative, positive, whole

PRECISION = "FP32"  #: numpy on a CPU computes in float32: 4 bytes per number
DTYPE = np.float32

#: How often each measurement is repeated (the chapter states these numbers).
BANDWIDTH_REPEATS = 7
MATMUL_REPEATS = 5
SWEEP_ROUNDS = 3
DECODE_STEPS = 1   # tokens generated per context, batch and round
DECODE_ROUNDS = 3


@dataclass(frozen=True)
class Samples:
    """One quantity measured several times (a rate, in base units: bytes/s, FLOP/s, tokens/s)."""

    values: tuple[float, ...]

    @property
    def median(self) -> float:
        return float(np.median(self.values))

    @property
    def low(self) -> float:
        return min(self.values)

    @property
    def high(self) -> float:
        return max(self.values)

    @property
    def spread(self) -> float:
        """The fastest repeat over the slowest (1 for a single repeat): how noisy the measurement was."""
        return self.high / self.low


def _seconds(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _repeat(fn: Callable[[], object], repeats: int) -> list[float]:
    """Seconds per call for ``repeats`` calls, after one warm-up call that is not counted (it
    pays for first touches of memory and for the library setting up its threads)."""
    fn()
    return [_seconds(fn) for _ in range(repeats)]


# ---- the machine's two speeds ----------------------------------------------------------------

def read_bandwidth_bytes_per_s(array_bytes: float = 256 * MIB, repeats: int = 7,
                               threads: int | None = None) -> Samples:
    """Streaming read bandwidth: read every byte of an array of ``array_bytes``, in chunks that
    ``threads`` threads (default: one per core) read at once; bandwidth = bytes / seconds.

    Reading means adding the bytes up as 64-bit integers, the cheapest arithmetic numpy offers
    (a float32 sum does more work per byte, and on some processors that work, not memory, would
    set its speed). Reading without writing is what a decode step does to its weights."""
    n = whole("array_bytes", array_bytes, 1024) // 8
    repeats = whole("repeats", repeats)
    data = np.ones(n, np.uint64)  # written here, so that every page exists before the timing
    with _Reader(data, threads) as read:
        time.sleep(SETTLE_S)
        seconds = _repeat(read, repeats)
    return Samples(tuple(data.nbytes / s for s in seconds))


#: Seconds to wait before a timed read: the BLAS library's threads keep spinning for a moment
#: after each matrix product, and a read that starts at once competes with them for the cores.
SETTLE_S = 0.25


class _Reader:
    """Reads every byte of a contiguous array when called: its 64-bit words are summed in chunks
    by one thread per core (``threads``); a context manager that owns the threads."""

    def __init__(self, data: np.ndarray, threads: int | None = None):
        threads = whole("threads", threads if threads is not None else os.cpu_count() or 1)
        words = data.reshape(-1).view(np.uint64)
        self.chunks = np.array_split(words, 4 * threads)  # small chunks: a thread that lags gets fewer
        self.pool = ThreadPoolExecutor(threads)

    def __call__(self) -> None:
        list(self.pool.map(np.add.reduce, self.chunks))

    def __enter__(self) -> _Reader:
        return self

    def __exit__(self, *exc) -> None:
        self.pool.shutdown()


def matvec_read_bytes_per_s(array_bytes: float = 256 * MIB, repeats: int = 7) -> Samples:
    """Read bandwidth as the BLAS library's matrix-vector product attains it: a float32 matrix of
    ``array_bytes`` times one vector, bandwidth = the matrix's bytes / seconds (the vector and the
    result are negligible beside it). Libraries tune this routine to stream memory, with
    prefetching and their own threads, and on some processors it reads faster than the plain read."""
    n = whole("array_bytes", array_bytes, 1024) // 4
    repeats = whole("repeats", repeats)
    cols = min(4096, n)
    matrix = np.ones((n // cols, cols), DTYPE)  # written here, so that every page exists before the timing
    vector, out = np.ones(cols, DTYPE), np.empty(n // cols, DTYPE)
    time.sleep(SETTLE_S)
    seconds = _repeat(lambda: np.matmul(matrix, vector, out=out), repeats)
    return Samples(tuple(matrix.nbytes / s for s in seconds))


def matmul_flop_per_s(side: int = 2048, repeats: int = 5) -> Samples:
    """Math rate of a large square float32 matrix product (side x side times side x side):
    2 x side^3 FLOPs / seconds. Large products are as close to peak math as numpy gets."""
    side = whole("side", side, 16)
    repeats = whole("repeats", repeats)
    rng = np.random.default_rng(0)
    a, b = rng.random((side, side), dtype=DTYPE), rng.random((side, side), dtype=DTYPE)
    out = np.empty((side, side), DTYPE)
    seconds = _repeat(lambda: np.matmul(a, b, out=out), repeats)
    return Samples(tuple(matmul_flops(side, side, side) / s for s in seconds))


def processor_name() -> str:
    """The processor's model name (from /proc/cpuinfo on Linux), else what ``platform`` reports."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown processor"


_CACHE_SIZE_UNITS = {"K": 2**10, "M": 2**20, "G": 2**30}


def _cache_size(text: str) -> int:
    text = text.strip()
    return int(text[:-1]) * _CACHE_SIZE_UNITS[text[-1]] if text[-1] in _CACHE_SIZE_UNITS else int(text)


def last_level_cache_bytes(root: str = "/sys/devices/system/cpu") -> int | None:
    """The last-level cache of the whole machine, in bytes, as the operating system reports it
    (Linux's sysfs): the size of every distinct cache of the highest level, summed over all cores
    (a server with several core complexes or sockets has one L3 per complex, and together they can
    hold far more of an array than the first core's alone), or None where it reports none. On a
    virtual machine these are the host processor's caches, shared with whatever else runs on it."""
    instances: dict[tuple[int, str], int] = {}
    try:
        cpus = [e for e in os.listdir(root) if e.startswith("cpu") and e[3:].isdigit()]
        for cpu in cpus:
            caches = os.path.join(root, cpu, "cache")
            if not os.path.isdir(caches):
                continue
            for entry in os.listdir(caches):
                if not entry.startswith("index"):
                    continue
                here = os.path.join(caches, entry)
                with open(os.path.join(here, "size"), encoding="utf-8") as f:
                    size = _cache_size(f.read())
                level = int(_read(os.path.join(here, "level"), "0"))
                shared = _read(os.path.join(here, "shared_cpu_list"), cpu)   # which cores share this one
                instances[(level, shared)] = size
    except (OSError, ValueError):
        return None
    if not instances:
        return None
    top = max(level for level, _ in instances)
    return sum(size for (level, _), size in instances.items() if level == top)


def _read(path: str, default: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().strip()
    except OSError:
        return default


def physical_memory_bytes() -> int | None:
    """The machine's main memory in bytes, as the operating system reports it (``os.sysconf``),
    or None where it does not."""
    try:
        pages, page = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None
    return pages * page if pages > 0 and page > 0 else None


#: The bandwidth array is at least this many times the last-level caches the system reports, so that a
#: cache could hold at most a quarter of it even if it kept the best part of the array between reads.
CACHE_MULTIPLE = 4
#: ... and never smaller than the chapter's weight matrix, so that its reads last long enough to time.
MIN_ARRAY_BYTES = 256 * MIB
#: The cache assumed where the system reports none (the array is then four times it, 1 GiB). A guess,
#: and said to be one beside the measurement: some processors report larger caches than this.
UNREPORTED_CACHE_BYTES = 256 * MIB
#: The array never takes more than this share of the machine's memory (the chapter holds other arrays too).
MEMORY_SHARE = 0.25


def bandwidth_array_bytes_for(cache_bytes: int | None, memory_bytes: int | None) -> int:
    """The size of the array that measures bandwidth on a machine whose last-level caches are
    ``cache_bytes`` (None: not reported) and whose memory is ``memory_bytes`` (None: not reported):
    A = max(MIN_ARRAY_BYTES, CACHE_MULTIPLE x C) in whole MiB, with C = UNREPORTED_CACHE_BYTES where
    the cache is not reported; but at most MEMORY_SHARE x memory, even where that leaves the array
    smaller than CACHE_MULTIPLE x C (``Machine`` then says so beside the measurement)."""
    cache = UNREPORTED_CACHE_BYTES if cache_bytes is None else whole("cache_bytes", cache_bytes)
    wanted = max(MIN_ARRAY_BYTES, CACHE_MULTIPLE * cache)
    wanted = -(-wanted // MIB) * MIB  # whole MiB, rounded up
    if memory_bytes is None:
        return wanted
    cap = int(MEMORY_SHARE * whole("memory_bytes", memory_bytes)) // MIB * MIB
    if cap < MIB:
        raise ValueError(f"memory_bytes ({memory_bytes!r}) leaves no room for an array of even 1 MiB")
    return min(wanted, cap)


def bandwidth_array_bytes() -> int:
    """The size of the array that measures this machine's bandwidth (``bandwidth_array_bytes_for``
    with the cache and memory this machine reports)."""
    return bandwidth_array_bytes_for(last_level_cache_bytes(), physical_memory_bytes())


def _mb(n: float) -> str:
    """A size in decimal megabytes, as the chapter writes sizes: "33.6 MB", "268 MB", "1,258 MB"."""
    return f"{n / MB:,.1f} MB" if n < 100 * MB else f"{n / MB:,.0f} MB"


@dataclass(frozen=True)
class Machine:
    """This machine's two measured speeds and what it is."""

    processor: str
    cores: int
    date: str
    read: Samples         # bytes/s, the plain read
    matvec_read: Samples  # bytes/s, the library's matrix-vector product
    matmul: Samples       # FLOP/s
    array_bytes: int
    matmul_side: int
    last_level_cache: int | None = None  # bytes, as the operating system reports it
    memory: int | None = None            # bytes of main memory, as the operating system reports it
    load: float | None = None            # the 1-minute load average before measuring (``load_before_measuring``)

    @property
    def busy(self) -> bool:
        """Whether other programs kept the cores busy before measuring: a load average above
        BUSY_LOAD_PER_CORE per core (False where the system reports none)."""
        return self.load is not None and self.load > BUSY_LOAD_PER_CORE * self.cores

    @property
    def array_over_cache(self) -> float | None:
        """How many times the largest reported cache the bandwidth array is (None: no cache reported)."""
        return self.array_bytes / self.last_level_cache if self.last_level_cache else None

    @property
    def cache_note(self) -> str:
        """The table's words on the array against the cache: whether it is the CACHE_MULTIPLE times
        the cache that keeps the cache out of the measurement, and if not, why not."""
        ratio = self.array_over_cache
        if ratio is None:
            return (f"The array assumes one of {_mb(UNREPORTED_CACHE_BYTES)}, "
                    f"and is {self.array_bytes / UNREPORTED_CACHE_BYTES:,.2g}× that.")
        if ratio >= CACHE_MULTIPLE:
            return f"The array is {ratio:,.2g}× that ({CACHE_MULTIPLE}× needed)."
        why = ""
        if self.memory and self.array_bytes >= int(MEMORY_SHARE * self.memory) // MIB * MIB:
            why = (f" It is capped at {MEMORY_SHARE:.0%} of this machine's memory, "
                   f"{self.memory / GB:,.1f} GB.")
        return (f"**The array is only {ratio:,.2g}× that**, less than the {CACHE_MULTIPLE}× needed.{why} "
                "Part of each read may come from the cache, so the bandwidth may be too high.")

    @property
    def bandwidth(self) -> Samples:
        """The faster of the two reads, by its fastest repeat: the read that showed the most this
        machine's memory was seen to deliver."""
        return max(self.read, self.matvec_read, key=lambda s: s.high)

    @property
    def bandwidth_from(self) -> str:
        return "the plain read" if self.bandwidth is self.read else "the matrix-vector read"

    @property
    def bandwidth_bytes_per_s(self) -> float:
        """The roof's bandwidth: the fastest repeat of the faster read, so that no honest program
        beats it except through a cache or in a quieter spell than any repeat saw."""
        return self.bandwidth.high

    @property
    def peak_flop_per_s(self) -> float:
        """The roof's math rate, which plays the role of the datasheet's peak: the fastest repeat of
        the large product."""
        return self.matmul.high

    @property
    def spreads(self) -> dict[str, float]:
        """Each measurement's fastest repeat over its slowest, by name: how noisy the run was."""
        return {"plain read": self.read.spread, "matrix-vector read": self.matvec_read.spread,
                "matrix product": self.matmul.spread}

    @property
    def balance_point_flop_per_byte(self) -> float:
        return balance_point_flop_per_byte(self.peak_flop_per_s, self.bandwidth_bytes_per_s)

    @property
    def label(self) -> str:
        """Which machine measured, and when: "AMD EPYC (2 cores), 2026-05-14"."""
        return f"{self.processor} ({self.cores} cores), {self.date}"

    def _repr_markdown_(self) -> str:
        def row(what: str, x: Samples, scale: float, unit: str) -> str:
            return (f"| {what} | {x.high / scale:,.1f} {unit} | {x.median / scale:,.1f} {unit} "
                    f"| {x.low / scale:,.1f} {unit} | {_spread(x)} |")

        size = _mb(self.array_bytes)
        caches = (f"{_mb(self.last_level_cache)} of last-level cache in all, as the system reports it. "
                  f"{self.cache_note}" if self.last_level_cache else
                  f"none reported. {self.cache_note}")
        return "\n".join([
            f"**Measured on {self.label}** (numpy {np.__version__}, float32)",
            "",
            "| measured | fastest repeat | median | slowest repeat | spread (fastest ÷ slowest) |",
            "|:--|--:|--:|--:|--:|",
            row(f"plain read, {size} array", self.read, 1e9, "GB/s"),
            row(f"matrix-vector read, {size} matrix", self.matvec_read, 1e9, "GB/s"),
            row(f"matrix product, {self.matmul_side:,} × {self.matmul_side:,}", self.matmul, 1e9, "GFLOP/s"),
            "",
            f"- **Roof bandwidth:** {self.bandwidth_bytes_per_s / 1e9:,.1f} GB/s, the fastest repeat of "
            f"{self.bandwidth_from}.",
            f"- **Roof math rate:** {self.peak_flop_per_s / 1e9:,.1f} GFLOP/s, the fastest repeat of the product.",
            f"- **Balance point:** {self.balance_point_flop_per_byte:,.1f} FLOP per byte, the math rate over the "
            "bandwidth.",
            f"- **Caches:** {caches}",
        ] + ([f"- **Load before measuring:** {self.load:,.1f}, the system's 1-minute load average. An idle machine "
              f"shows near 0. Above {BUSY_LOAD_PER_CORE * self.cores:g}, other programs kept more than half of its "
              f"{self.cores} cores busy."] if self.load is not None else []))


def this_bandwidth(array_bytes: int | None = None) -> tuple[Samples, Samples]:
    """This machine's plain read and matrix-vector read of ``array_bytes`` (default:
    ``bandwidth_array_bytes()``, sized from this machine's cache; remembered for the session)."""
    if array_bytes is None:
        array_bytes = bandwidth_array_bytes()
    return _this_bandwidth(whole("array_bytes", array_bytes, 1024))


@cache
def _this_bandwidth(array_bytes: int) -> tuple[Samples, Samples]:
    return (read_bandwidth_bytes_per_s(array_bytes, repeats=BANDWIDTH_REPEATS),
            matvec_read_bytes_per_s(array_bytes, repeats=BANDWIDTH_REPEATS))


def this_matmul(side: int = 2048) -> Samples:
    """This machine's matrix-multiply rate (remembered for the session)."""
    return _this_matmul(whole("side", side, 16))


@cache
def _this_matmul(side: int) -> Samples:
    return matmul_flop_per_s(side, repeats=MATMUL_REPEATS)


#: Other programs kept the cores busy when the load average exceeded this many per core.
BUSY_LOAD_PER_CORE = 0.5


def _load_average() -> float | None:
    """The system's 1-minute load average: the mean number of programs running or waiting to
    run (``os.getloadavg``), or None where the system reports none."""
    try:
        return float(os.getloadavg()[0])
    except (AttributeError, OSError):
        return None


@cache
def load_before_measuring() -> float | None:
    """The load average when this session first measured this machine (remembered for the
    session, so that it describes the conditions the chapter's measurements began in)."""
    return _load_average()


def this_machine(array_bytes: int | None = None, matmul_side: int = 2048) -> Machine:
    """This machine's two reads of an array of ``array_bytes`` (default: ``bandwidth_array_bytes()``,
    sized from this machine's cache) and its matrix-multiply rate, with its name, core count and
    the date (each measurement remembered for the session: see the module's notes)."""
    if array_bytes is None:
        array_bytes = bandwidth_array_bytes()
    load = load_before_measuring()  # before the first measurement, whose threads would count
    read, matvec_read = this_bandwidth(array_bytes)
    return Machine(processor=processor_name(), cores=os.cpu_count() or 1,
                   date=datetime.date.today().isoformat(), read=read, matvec_read=matvec_read,
                   matmul=this_matmul(matmul_side), array_bytes=int(array_bytes), matmul_side=int(matmul_side),
                   last_level_cache=last_level_cache_bytes(), memory=physical_memory_bytes(), load=load)


# ---- matrix-vector to matrix-matrix ----------------------------------------------------------

@dataclass(frozen=True)
class ProductPoint:
    """A (batch x rows) by (rows x cols) float32 product, measured."""

    batch: int
    rows: int
    cols: int
    rate: Samples  # FLOP/s

    @property
    def flops(self) -> float:
        return matmul_flops(self.batch, self.rows, self.cols)

    @property
    def bytes_moved(self) -> float:
        return matmul_bytes(self.batch, self.rows, self.cols, bytes_per_element(PRECISION))

    @property
    def intensity_flop_per_byte(self) -> float:
        return self.flops / self.bytes_moved

    @property
    def flop_per_s(self) -> float:
        """The product's math rate in its fastest round (the roof, too, is a fastest repeat)."""
        return self.rate.high

    @property
    def bandwidth_bytes_per_s(self) -> float:
        """The memory traffic this product sustained: its bytes over its fastest round's time."""
        return self.flop_per_s / self.intensity_flop_per_byte


def powers_of_two(largest: int) -> tuple[int, ...]:
    """1, 2, 4, ... up to ``largest``, which must be a power of two itself."""
    largest = whole("largest", largest)
    if largest & (largest - 1):
        raise ValueError(f"largest must be a power of two; got {largest}")
    return tuple(2**i for i in range(largest.bit_length()))


@dataclass(frozen=True)
class ProductSweep:
    """One weight matrix times growing batches, measured, with a plain read of the same matrix
    timed in the same rounds (so that the two can be compared under the same conditions)."""

    points: tuple[ProductPoint, ...]
    read: Samples  # bytes/s of reading the weight matrix

    def __iter__(self):
        return iter(self.points)

    def __len__(self) -> int:
        return len(self.points)

    @property
    def read_bytes_per_s(self) -> float:
        """The plain read of the weight matrix in its fastest round."""
        return self.read.high


def product_sweep(rows: int = 8192, cols: int = 8192, batches: tuple[int, ...] = powers_of_two(256),
                  rounds: int = SWEEP_ROUNDS) -> ProductSweep:
    """Multiply ``batches`` vectors at once by one rows x cols float32 weight matrix, for each
    batch in turn, and read the matrix once more as a plain read, ``rounds`` times; every round's
    rate of each (remembered for the session: the same settings, however they are passed, give
    the same measurement back)."""
    rows, cols, rounds = whole("rows", rows), whole("cols", cols), whole("rounds", rounds)
    batches = tuple(whole("batch", b) for b in batches)
    return _product_sweep(rows, cols, batches, rounds)


@cache
def _product_sweep(rows: int, cols: int, batches: tuple[int, ...], rounds: int) -> ProductSweep:
    rng = np.random.default_rng(0)
    weights = rng.random((rows, cols), dtype=DTYPE)
    inputs = {b: rng.random((b, rows), dtype=DTYPE) for b in batches}
    outputs = {b: np.empty((b, cols), DTYPE) for b in batches}

    def run(b: int) -> None:
        np.matmul(inputs[b], weights, out=outputs[b])

    with _Reader(weights) as read:
        read()
        for b in batches:
            run(b)  # warm-up, not counted
        seconds = {b: [] for b in batches}
        reads = []
        for _ in range(rounds):
            time.sleep(SETTLE_S)
            reads.append(_seconds(read))
            for b in batches:
                seconds[b].append(_seconds(lambda: run(b)))
    points = tuple(ProductPoint(b, rows, cols, Samples(tuple(matmul_flops(b, rows, cols) / s for s in seconds[b])))
                   for b in batches)
    return ProductSweep(points, Samples(tuple(weights.nbytes / s for s in reads)))


# ---- the small decoder, really run -----------------------------------------------------------

@cache
def decoder_weights(c: Config = tinyllm.TINY_LLAMA, seed: int = 0) -> tinyllm.Weights:
    """Random weights for the small decoder (made once per session: a third of a gigabyte)."""
    return tinyllm.random_weights(c, seed)


@dataclass(frozen=True)
class DecodePoint:
    """Tokens per second of B sequences decoding together at a context of L tokens, measured."""

    config: Config
    batch: int
    context_tokens: int
    rate: Samples  # tokens/s, all sequences together

    @property
    def tokens_per_s(self) -> float:
        """Tokens/s in the fastest round (the ceilings, too, come from fastest repeats)."""
        return self.rate.high

    @property
    def bytes_per_step(self) -> float:
        """What the book's formula says a step reads: W + B x (K x L + A), all in float32."""
        return decode_point(self.config, 1.0, 1.0, self.batch, self.context_tokens,
                            PRECISION, PRECISION, PRECISION).bytes

    @property
    def flops_per_token(self) -> float:
        return decode_flops_per_token(self.config, self.context_tokens)


def decode_sweep(c: Config = tinyllm.TINY_LLAMA, batches: tuple[int, ...] = powers_of_two(64),
                 contexts: tuple[int, ...] = (128,), steps: int = DECODE_STEPS,
                 rounds: int = DECODE_ROUNDS) -> tuple[DecodePoint, ...]:
    """Generate ``steps`` tokens for B sequences whose caches already hold L tokens, for each
    context L in ``contexts`` and batch B in ``batches`` in turn, ``rounds`` times; every
    round's tokens/s of each (context, batch), in that order (remembered for the session).

    The caches are filled with random numbers instead of by reading a real prompt: a decode step
    costs the same whatever the cached numbers are. One cache, sized for the largest batch and
    context, serves every setting (a batch of B uses its first B sequences, a context of L its
    first L positions), so that all settings can be measured in the same rounds."""
    batches = tuple(whole("batch", b) for b in batches)
    contexts = tuple(whole("context_tokens", L, 0) for L in contexts)
    steps, rounds = whole("steps", steps), whole("rounds", rounds)
    if not batches or not contexts:
        raise ValueError("batches and contexts must each hold at least one value")
    return _decode_sweep(c, batches, contexts, steps, rounds)


@cache
def _decode_sweep(c: Config, batches: tuple[int, ...], contexts: tuple[int, ...], steps: int,
                  rounds: int) -> tuple[DecodePoint, ...]:
    w = decoder_weights(c)
    cache_ = tinyllm.KVCache(c, max(batches), max(contexts) + steps)
    cache_.fill(max(contexts))
    # a round visits each batch at every context back to back, so that the contexts of one batch
    # are compared under the same conditions
    settings = [(L, b) for b in batches for L in contexts]

    def run(L: int, b: int, n: int) -> None:
        tokens = np.zeros(b, dtype=np.int64)
        for i in range(n):
            tokens = tinyllm.decode_step(w, tokens, cache_, L + i)

    run(max(contexts), max(batches), 1)  # warm-up, not counted (the cache is already written)
    seconds = {s: [] for s in settings}
    for _ in range(rounds):
        for L, b in settings:
            seconds[L, b].append(_seconds(lambda: run(L, b, steps)))
    return tuple(DecodePoint(c, b, L, Samples(tuple(b * steps / s for s in seconds[L, b])))
                 for L in contexts for b in batches)


def at_context(points: Sequence[DecodePoint], context_tokens: int) -> tuple[DecodePoint, ...]:
    """The points measured at one context."""
    found = tuple(p for p in points if p.context_tokens == context_tokens)
    if not found:
        raise ValueError(f"context_tokens {context_tokens} was not measured; measured: "
                         f"{sorted({p.context_tokens for p in points})}")
    return found


def paired_ratio(a: Samples, b: Samples) -> float:
    """The median over rounds of a's rate over b's rate in the same round: a comparison that a
    slow spell of the machine, which touches both measurements of a round, barely moves."""
    if len(a.values) != len(b.values):
        raise ValueError("a and b must come from the same rounds")
    return float(np.median([x / y for x, y in zip(a.values, b.values)]))


def product_ratio(sweep: ProductSweep, batch: int, over: int | None = None) -> Ratio:
    """The math rate of the product with ``batch`` vectors over that with ``over`` vectors, or,
    without ``over``, the rate at which it read its weights over the plain read; paired by
    round, with a way to measure the two again head to head."""
    p = point_at(sweep, batch)

    def ratio(s: ProductSweep) -> float:
        a = point_at(s, batch)
        if over is not None:
            return paired_ratio(a.rate, point_at(s, over).rate)
        return paired_ratio(Samples(tuple(r / a.intensity_flop_per_byte for r in a.rate.values)), s.read)

    def again() -> float:
        return ratio(_product_sweep.__wrapped__(p.rows, p.cols, (batch,) if over is None else (batch, over),
                                                len(p.rate.values)))

    return Ratio(ratio(sweep), again)


def decode_ratio(points: Sequence[DecodePoint], a: tuple[int, int], b: tuple[int, int]) -> Ratio:
    """Tokens/s at (batch, context) ``a`` over tokens/s at ``b``, paired by round, with a way to
    measure the two settings again head to head."""
    def at(ps, setting):
        return point_at(at_context(ps, setting[1]), setting[0])

    def ratio(ps) -> float:
        return paired_ratio(at(ps, a).rate, at(ps, b).rate)

    first = at(points, a)

    def again() -> float:
        batches, contexts = tuple(sorted({a[0], b[0]})), tuple(sorted({a[1], b[1]}))
        return ratio(_decode_sweep.__wrapped__(first.config, batches, contexts, DECODE_STEPS,
                                               len(first.rate.values)))

    return Ratio(ratio(points), again)


def point_at(points: Sequence, batch: int):
    """The point measured at ``batch``, among points of one sweep and one context."""
    for p in points:
        if p.batch == batch:
            return p
    raise ValueError(f"batch {batch} was not measured; measured: {[p.batch for p in points]}")


# ---- what the measurements say against the book's formulas ------------------------------------

def decode_ceilings_tokens_per_s(m: Machine, batch: float, context_tokens: float,
                                 c: Config = tinyllm.TINY_LLAMA) -> tuple[float, float]:
    """The book's two ceilings for a float32 decoder on this machine: memory
    B x BW / (W + B x (K x L + A)) with the roof's bandwidth, and math P / F with the roof's
    matrix-multiply rate (each the fastest repeat of its measurement: see ``Machine``)."""
    point = decode_point(c, m.peak_flop_per_s, m.bandwidth_bytes_per_s, batch, context_tokens,
                         PRECISION, PRECISION, PRECISION)
    return point.memory_ceiling, point.math_ceiling


def efficiency(point: DecodePoint, m: Machine) -> float:
    """Measured tokens/s over the lower of the two ceilings."""
    return point.tokens_per_s / min(decode_ceilings_tokens_per_s(m, point.batch, point.context_tokens, point.config))


#: The one line a table adds above its rows when a point beat its roof or ceiling, so that a share
#: above 100% is explained before the reader meets it.
_ABOVE_NOTE = {what: (f". Each share above 100% beat the {what}, which came from the early repeats: that round ran in "
                      f"a quieter spell, or{where} read some bytes from a cache.")
               for what, where in (("roof", ", below the ridge,"), ("ceiling", ""))}


def _caption(said: str, above: str | None) -> str:
    """A table's first line: what it is, then a colon; or, where some share beat its roof or ceiling
    (``above``: "roof" or "ceiling"), the line that says why, before the reader meets the share."""
    return f"{said}{_ABOVE_NOTE[above]}" if above else f"{said}:"


def _spread(x: Samples) -> str:
    """A spread as the tables print it: "1.1×", "6.2×", "14×"."""
    return f"{x.spread:,.2g}×" if x.spread < 10 else f"{x.spread:,.0f}×"


def _fastest(rounds: int) -> str:
    """What a table's rows are: "each row is its fastest of 3 rounds", or "one round each"."""
    return f"each row is its fastest of {rounds} rounds" if rounds > 1 else "one round each"


def products_table(sweep: ProductSweep, m: Machine) -> Markdown:
    """Each measured product: intensity, math rate (fastest round), share of the roof, how far its
    rounds spread, and, below the ridge only, how fast it read the weights (past the ridge the math
    sets the pace, and that speed says nothing about the memory); and the plain read of the same
    matrix in the same rounds."""
    rows = ["| vectors | FLOP per byte | GFLOP/s | share of the roof | spread of rounds "
            "| weights read at (below the ridge) |",
            "|--:|--:|--:|--:|--:|--:|"]
    for p in sweep:
        roof = min(m.peak_flop_per_s, p.intensity_flop_per_byte * m.bandwidth_bytes_per_s)
        below = p.intensity_flop_per_byte < m.balance_point_flop_per_byte
        read = f"{p.bandwidth_bytes_per_s / 1e9:,.1f} GB/s" if below else ""
        rows.append(f"| {p.batch:,} | {p.intensity_flop_per_byte:,.2f} | {p.flop_per_s / 1e9:,.1f} "
                    f"| {p.flop_per_s / roof:.0%} | {_spread(p.rate)} | {read} |")
    rows.append(f"| plain read, same rounds | | | | {_spread(sweep.read)} | {sweep.read_bytes_per_s / 1e9:,.1f} GB/s |")
    above = any(p.flop_per_s > min(m.peak_flop_per_s, p.intensity_flop_per_byte * m.bandwidth_bytes_per_s)
                for p in sweep)
    return Markdown(_caption(f"Measured on {m.label}; {_fastest(len(sweep.read.values))}", "roof" if above else None)
                    + "\n\n" + "\n".join(rows))


def decode_table(points: Sequence[DecodePoint], m: Machine) -> Markdown:
    """Each measured batch: tokens/s (fastest round), the two ceilings, the share of the lower one,
    and how far its rounds spread."""
    rows = ["| batch | measured tokens/s | memory ceiling | math ceiling | share of the lower ceiling "
            "| spread of rounds |",
            "|--:|--:|--:|--:|--:|--:|"]
    for p in points:
        memory, math_ = decode_ceilings_tokens_per_s(m, p.batch, p.context_tokens, p.config)
        rows.append(f"| {p.batch:,} | {p.tokens_per_s:,.1f} | {memory:,.0f} | {math_:,.0f} "
                    f"| {efficiency(p, m):.0%} | {_spread(p.rate)} |")
    context = points[0].context_tokens if points else 0
    rounds = f"; {_fastest(len(points[0].rate.values))}" if points else ""
    above = any(efficiency(p, m) > 1 for p in points)
    return Markdown(_caption(f"Measured on {m.label}, {context:,} tokens of context{rounds}",
                             "ceiling" if above else None) + "\n\n" + "\n".join(rows))


@dataclass(frozen=True)
class Ratio:
    """A ratio of two measured rates (``value``), and, where it can, a way to measure the two
    again head to head (``again``, returning the new ratio) should a busy spell of the machine
    have spoiled the first measurement."""

    value: float
    again: Callable[[], float] | None = None


#: How often ``relation`` measures a ratio again before it calls a relation false.
RETRIES = 2


def relation(claim: str, measured: float | Ratio, *, at_least: float | None = None,
             below: float | None = None, show_measured: bool = False) -> None:
    """Assert a relation that holds on any machine: ``measured`` is at least ``at_least``, or
    below ``below``. When it does not hold and ``measured`` can be measured again, measure it
    again (up to ``RETRIES`` times) before raising CheckFailed, which names the claim and the
    values measured. Prints one line with the bound; stable, without the measured values (they
    belong to the machine), unless ``show_measured``: then the line also gives what this machine
    measured, for a cell whose outputs nbval does not compare."""
    if not isinstance(claim, str) or not claim.strip():
        raise ValueError("claim must say in words what relation holds")
    if (at_least is None) == (below is None):
        raise ValueError("give exactly one of at_least and below")
    bound = positive("at_least" if below is None else "below", at_least if below is None else below)
    ratio = measured if isinstance(measured, Ratio) else Ratio(measured)
    seen = [non_negative("measured", ratio.value)]

    def holds(x: float) -> bool:
        return x >= bound if below is None else x < bound

    while not holds(seen[-1]) and ratio.again is not None and len(seen) <= RETRIES:
        seen.append(ratio.again())
    need = f"{'at least' if below is None else 'below'} {bound:g}"
    values = ", then ".join(f"{x:.3g}" for x in seen)
    if not holds(seen[-1]):
        raise CheckFailed(f"{claim}: not so on this machine (measured {values}; "
                          f"{need} needed). Was another program busy? Run the chapter again.")
    if show_measured:
        print(f"✓ {claim} (on this machine: {values}; {need} needed)")
    else:
        print(f"✓ {claim} (on this machine: {need})")
