"""Measuring this machine with numpy: its memory bandwidth, its matrix-multiply rate, the
throughput of one weight matrix times 1, 2, 4, ... vectors, and the decode speed of a small
Llama-shaped model (``tinyllm``).

Every measurement is repeated. A ceiling (the roof) and a measured point both take the fastest
sample, the most the machine was seen to deliver: other programs slow a sample down, and rarely
speed one up (Python's ``timeit.Timer.repeat`` says the same of the lowest time), so on a busy
machine the fastest sample is the one least disturbed, and a point set against a roof is compared
like with like. The roof's two measurements are taken first, then again in every round of both
sweeps (``Machine.rounds_read``, ``Machine.rounds_matmul``, via ``with_rounds``), so that the roof
is the fastest of them all and never the work of one busy spell. How far the samples spread
(fastest over slowest) says how busy the machine was; the tables print it. A comparison between
two points takes the median over rounds of their ratio within each round, which one slow round
(another program waking up) cannot move much. Sweeps measure in rounds, each round visiting every
setting once, in an order shuffled afresh each round, so that a slow spell of the machine touches
all settings alike instead of one of them.

Each sample lasts at least ``MIN_SAMPLE_S``: a read, a product or a decode step is repeated until
it does (a timer's resolution and a scheduler's time slice are then small beside it), after one
warm-up call per setting that is not counted. Where the system reports it (Linux), each sample
also records how long this process's threads waited for a core while it ran (``Samples.waited``):
a process that never waited was not pushed off its cores by other programs.

The functions whose names start with ``this_`` or end in ``_sweep`` remember their results for
the rest of the session (the same arguments give the same measurement back), so that one
chapter's cells and figures all show one set of measurements, and a figure redrawn with earlier
settings does not measure again. Restart the kernel to measure afresh.
"""
from __future__ import annotations

import ctypes
import datetime
import math
import os
import platform
import random
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
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

#: How often each measurement is repeated (the chapter states these numbers). The roof's read and product are
#: timed again in every round of both sweeps (``with_rounds``), so the first repeats need not be many.
BANDWIDTH_REPEATS = 5
MATMUL_REPEATS = 3
SWEEP_ROUNDS = 3
DECODE_STEPS = 1   # tokens generated per call of a decode setting (a sample repeats the call: MIN_SAMPLE_S)
DECODE_ROUNDS = 3
#: The least length of one timed sample, in seconds: a setting is called again and again until it lasts this long.
MIN_SAMPLE_S = 0.1
#: The square product that measures the roof's math rate.
ROOF_SIDE = 2048
#: A sample during which this process's threads, together, waited for a core more than this many seconds per
#: second of the sample was pushed off its cores by other programs.
WAIT_SHARE = 0.05


@dataclass(frozen=True)
class Samples:
    """One quantity measured several times (a rate, in base units: bytes/s, FLOP/s, tokens/s), and,
    where the system reports it, the share of each sample's time that this process's threads spent
    waiting for a core (``waited``; None where not reported)."""

    values: tuple[float, ...]
    waited: tuple[float | None, ...] | None = None

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
        """The fastest sample over the slowest (1 for a single sample): how noisy the measurement was."""
        return self.high / self.low

    @property
    def fastest_waited(self) -> float | None:
        """The share of the fastest sample's time that the threads waited for a core (the sample the
        book's tables show, so the wait that says whether other programs held the shown rate down); None
        where it is unknown."""
        if self.waited is None or not self.waited:
            return None
        return self.waited[max(range(len(self.values)), key=lambda i: self.values[i])]

    def __add__(self, other: Samples) -> Samples:
        """Two measurements of one quantity, as one."""
        waited = None if self.waited is None or other.waited is None else self.waited + other.waited
        return Samples(self.values + other.values, waited)


def cores() -> int:
    """The cores this process may run on (``os.sched_getaffinity``; a container or a job scheduler
    may allow fewer than the machine has), else every core ``os.cpu_count`` reports."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _waiting_s() -> float | None:
    """Seconds that this process's threads have spent runnable but waiting for a core, all threads
    together (Linux's per-thread ``schedstat``), or None where the system does not report it."""
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return None
    total = 0
    for tid in tasks:
        try:
            with open(f"/proc/self/task/{tid}/schedstat", encoding="ascii") as f:
                total += int(f.read().split()[1])
        except FileNotFoundError:   # a thread that ended meanwhile
            continue
        except (OSError, ValueError, IndexError):
            return None
    return total / 1e9


def _seconds(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _timed(fn: Callable[[], object], calls: int = 1) -> tuple[float, float | None]:
    """Seconds per call over ``calls`` calls in a row, and the share of that time this process's
    threads waited for a core (None where not reported)."""
    before, start = _waiting_s(), time.perf_counter()
    for _ in range(calls):
        fn()
    wall = time.perf_counter() - start
    after = _waiting_s()
    waited = None if before is None or after is None or wall <= 0 else max(0.0, (after - before) / wall)
    return wall / calls, waited


def calls_for(seconds_per_call: float, least_s: float | None = None) -> int:
    """How many calls of ``seconds_per_call`` make a sample of at least ``least_s`` (default
    ``MIN_SAMPLE_S``): ceil(least / per call), at least 1."""
    least = MIN_SAMPLE_S if least_s is None else least_s
    per_call = non_negative("seconds_per_call", seconds_per_call)
    return max(1, math.ceil(least / per_call)) if per_call > 0 else 1


class _Sampler:
    """Times one setting again and again. Made with one warm-up call that is not counted (it pays
    for first touches of memory and for the library setting up its threads) and that says how many
    calls make a sample of at least MIN_SAMPLE_S; each ``sample()`` then times that many calls in a
    row (re-counted from the fastest call seen so far) and keeps the rate, ``work`` per call over
    seconds per call. A setting that another has just warmed up (``warmed``: the seconds of a call
    of that one, no faster than this one's) skips its own warm-up call."""

    def __init__(self, fn: Callable[[], object], work: float, warmed: float | None = None):
        self.fn, self.work = fn, work
        self.fastest = _seconds(fn) if warmed is None else warmed
        self.rates: list[float] = []
        self.waits: list[float | None] = []

    def sample(self) -> None:
        seconds, waited = _timed(self.fn, calls_for(self.fastest))
        self.fastest = min(self.fastest, seconds)
        self.rates.append(self.work / seconds)
        self.waits.append(waited)

    @property
    def samples(self) -> Samples:
        return Samples(tuple(self.rates), tuple(self.waits))


def _repeat(fn: Callable[[], object], repeats: int, work: float) -> Samples:
    """``repeats`` samples of ``fn`` (each at least MIN_SAMPLE_S long), after one warm-up call."""
    sampler = _Sampler(fn, work)
    for _ in range(repeats):
        sampler.sample()
    return sampler.samples


def _shuffled(items: Sequence, round_index: int) -> list:
    """``items`` in the order one round visits them: shuffled afresh each round, by a generator
    seeded with the round's number, so that every run visits them in the same orders."""
    order = list(items)
    random.Random(round_index).shuffle(order)
    return order


# ---- the machine's two speeds ----------------------------------------------------------------

def read_bandwidth_bytes_per_s(array_bytes: float = 256 * MIB, repeats: int = 7,
                               threads: int | None = None) -> Samples:
    """Streaming read bandwidth: read every byte of an array of ``array_bytes``, in parts that
    ``threads`` threads (default: one per core) read at once; bandwidth = bytes / seconds. Each
    sample reads the array again and again for at least MIN_SAMPLE_S.

    Reading means adding the bytes up as 64-bit integers, the cheapest arithmetic numpy offers
    (a float32 sum does more work per byte, and on some processors that work, not memory, would
    set its speed). Reading without writing is what a decode step does to its weights."""
    n = whole("array_bytes", array_bytes, 1024) // 8
    repeats = whole("repeats", repeats)
    data = np.ones(n, np.uint64)  # written here, so that every page exists before the timing
    with _Reader(data, threads) as read:
        time.sleep(SETTLE_S)
        return _repeat(read, repeats, data.nbytes)


#: Seconds to wait before a timed read: the BLAS library's threads keep spinning for a moment
#: after each matrix product (OpenBLAS's, about 0.1 s), and a read that starts at once competes with
#: them for the cores.
SETTLE_S = 0.15


class _Reader:
    """Reads every byte of a contiguous array when called: its 64-bit words are summed in one part per
    core (``threads``), the calling thread summing the first while the others sum the rest, so that the
    process never keeps more threads runnable than it asks cores for (its own threads would otherwise
    wait for one another, and those waits would read as other programs'); a context manager that owns
    the helper threads."""

    def __init__(self, data: np.ndarray, threads: int | None = None):
        threads = whole("threads", threads if threads is not None else cores())
        words = data.reshape(-1).view(np.uint64)
        self.parts = np.array_split(words, threads)
        self.pool = ThreadPoolExecutor(threads - 1) if threads > 1 else None

    def __call__(self) -> None:
        rest = [self.pool.submit(np.add.reduce, part) for part in self.parts[1:]] if self.pool else []
        np.add.reduce(self.parts[0])
        for part in rest:
            part.result()

    def __enter__(self) -> _Reader:
        return self

    def __exit__(self, *exc) -> None:
        if self.pool:
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
    return _repeat(lambda: np.matmul(matrix, vector, out=out), repeats, matrix.nbytes)


def matmul_flop_per_s(side: int = ROOF_SIDE, repeats: int = 5) -> Samples:
    """Math rate of a large square float32 matrix product (side x side times side x side):
    2 x side^3 FLOPs / seconds. Large products are as close to peak math as numpy gets."""
    side = whole("side", side, 16)
    repeats = whole("repeats", repeats)
    rng = np.random.default_rng(0)
    a, b = rng.random((side, side), dtype=DTYPE), rng.random((side, side), dtype=DTYPE)
    out = np.empty((side, side), DTYPE)
    return _repeat(lambda: np.matmul(a, b, out=out), repeats, matmul_flops(side, side, side))


class _RoofProbe:
    """The roof's two measurements, set up to be timed again in the rounds of a sweep: the plain
    read of an array of ``array_bytes`` (as ``read_bandwidth_bytes_per_s``) and the square product
    of side ``side`` (as ``matmul_flop_per_s``), each warmed up once; a context manager that owns
    the read's threads."""

    def __init__(self, array_bytes: int, side: int):
        data = np.ones(whole("array_bytes", array_bytes, 1024) // 8, np.uint64)
        side = whole("side", side, 16)
        rng = np.random.default_rng(0)
        a, b = rng.random((side, side), dtype=DTYPE), rng.random((side, side), dtype=DTYPE)
        out = np.empty((side, side), DTYPE)
        self.reader = _Reader(data)
        self.read = _Sampler(self.reader, data.nbytes)   # its warm-up; the rounds settle before they read
        self.product = _Sampler(lambda: np.matmul(a, b, out=out), matmul_flops(side, side, side))

    def __enter__(self) -> _RoofProbe:
        return self

    def __exit__(self, *exc) -> None:
        self.reader.__exit__()


def blas() -> tuple[str, int | None]:
    """The BLAS library numpy hands its matrix products to, as numpy reports it ("scipy-openblas
    0.3.31.188.0", with OpenBLAS's kernel family where it says), and the threads it runs (from the
    library itself where it is an OpenBLAS and answers, else None)."""
    try:
        info = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        name = f"{info.get('name', 'unknown')} {info.get('version', '')}".strip()
    except Exception:  # noqa: BLE001 - numpy's report differs between versions
        return "unknown", None
    threads, kernels = None, None
    try:
        with open("/proc/self/maps", encoding="utf-8") as f:
            paths = sorted({line.split()[-1] for line in f if "openblas" in line.lower() and "/" in line})
    except OSError:
        paths = []
    for path in paths[:1]:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            break
        for prefix, suffix in (("scipy_openblas", "64_"), ("openblas", "64_"), ("openblas", "")):
            get = getattr(lib, f"{prefix}_get_num_threads{suffix}", None)
            if get is None:
                continue
            get.restype = ctypes.c_int
            threads = int(get())
            core = getattr(lib, f"{prefix}_get_corename{suffix}", None)
            if core is not None:
                core.restype = ctypes.c_char_p
                kernels = (core() or b"").decode("ascii", "replace") or None
            break
    return (f"{name} ({kernels} kernels)" if kernels else name), threads


#: The vector-unit features that set a processor's float32 speed, named as Linux's /proc/cpuinfo does.
FEATURES = ("avx512f", "avx2", "fma", "asimd", "sve")


def processor_features(text: str | None = None) -> tuple[str, ...]:
    """Which of FEATURES the processor reports (the flags of /proc/cpuinfo, or ``text`` in its
    form), in FEATURES' order; () where it reports none."""
    if text is None:
        try:
            with open("/proc/cpuinfo", encoding="utf-8") as f:
                text = f.read()
        except OSError:
            return ()
    for line in text.splitlines():
        if line.lower().startswith(("flags", "features")):
            have = set(line.split(":", 1)[1].split())
            return tuple(x for x in FEATURES if x in have)
    return ()


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


#: What ``figures.machine.judge`` found of a run's roof, set beside the reference run kept in the book's data.
ROOF_CLEAN = "kept up"         # the same kind of machine, and both roof speeds at least KEPT_UP of the reference's
ROOF_LOW = "too low"           # a roof speed fell below that, and a measured point beat a ceiling drawn from it:
                               # the data show it too low, and the ceilings take the reference's speed instead
ROOF_BELOW = "below"           # a roof speed fell below that, nothing beat it, and the decoder kept up or no
                               # program in this machine slowed the run: the ceilings keep this run's roof (a busy
                               # machine, or this machine slower this time)
ROOF_SLOWED = "slowed"         # the roof and the decoder both fell behind, nothing beat the roof, and other
                               # programs pushed the run off its cores: they slowed the whole run
ROOF_UNKNOWN = "no reference"  # no reference of this kind of machine to judge by
#: A fresh rate at least this share of the reference's kept up with it.
KEPT_UP = 0.9


def _below_share(share: float) -> str:
    """A share of the reference run's speed, below KEPT_UP: "79%"; "89.97%" where whole percents would read as
    KEPT_UP itself."""
    return f"{share:.2%}" if f"{share:.0%}" == f"{KEPT_UP:.0%}" else f"{share:.0%}"


@dataclass(frozen=True)
class Judgement:
    """What a run's own evidence says about its roof (``figures.machine.judge``): ``state``, one of
    the ROOF_* values; this run's roof speeds over the reference's (``roof_shares``: bandwidth,
    math rate) and its decoder's rates over the reference's (``decoder_shares``), where the
    reference ran on the same kind of machine; the most that any measurement's fastest sample (the one
    the tables show) waited for a core (``waited``, a share of its time; None where not reported); and the two things the words may
    then say. ``steady``: a steady load from other programs, which slows every round alike, is ruled
    out for the decode sweep (``products_steady``: for the product sweep), so rounds that agree
    show that noise did not cause what they show. ``clean_ceiling``: the
    ceilings come from a clean measurement, so noise, which only slows a measured rate, cannot have
    lowered a point's share of them. ``beaten``: for each roof speed ("bandwidth", "math rate") that
    a measured point beat, the words that name the point that beat it furthest, e.g. ("bandwidth",
    "batch 1 at 128 tokens of context ran at 112% of the memory ceiling it gives"), judged against this run's
    own roof."""

    state: str
    roof_shares: tuple[float, float] | None = None
    decoder_shares: tuple[float, ...] = ()
    waited: float | None = None
    steady: bool = False
    clean_ceiling: bool = False
    products_steady: bool | None = None   # the same as ``steady``, for the product sweep (None: as ``steady``)
    beaten: tuple[tuple[str, str], ...] = ()
    decoder_names: tuple[str, ...] = ()   # what each of ``decoder_shares`` measured: "at batch 1", ...

    def beaten_by(self, speed: str) -> str:
        """The words naming the point that beat the ceiling ``speed`` sets ("bandwidth" or "math rate"); "" if none."""
        return dict(self.beaten).get(speed, "")


@dataclass(frozen=True)
class Machine:
    """This machine's two measured speeds and what it is. The roof's speeds are the fastest of
    the first repeats and of the samples taken again in the sweeps' rounds (``rounds_read``,
    ``rounds_matmul``, and the product sweep's 1-vector product, a read too: ``rounds_vector``;
    ``with_rounds``); where ``figures.machine.judge`` found one of them too
    low (below KEPT_UP of the reference run of the same kind of machine, and beaten by a measured
    point), ``reference_roof`` (bytes/s, FLOP/s; 0 for a speed it keeps) lifts it to the reference's."""

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
    rounds_read: Samples | None = None   # bytes/s, the plain read timed again in every round of the sweeps
    rounds_matmul: Samples | None = None  # FLOP/s, the square product timed again in every round of the sweeps
    rounds_vector: Samples | None = None  # bytes/s, the product sweep's 1-vector product (all its bytes), each round
    reference_roof: tuple[float, float] | None = None  # bytes/s and FLOP/s of the reference run, where used
    judgement: Judgement | None = None   # ``figures.machine.judge``
    blas: str | None = None              # numpy's BLAS library (``blas``)
    blas_threads: int | None = None      # the threads it runs
    features: tuple[str, ...] = ()       # the processor's vector features (``processor_features``)

    @property
    def busy(self) -> bool:
        """Whether other programs kept the cores busy before measuring: a load average above
        BUSY_LOAD_PER_CORE per core (False where the system reports none)."""
        return self.load is not None and self.load > BUSY_LOAD_PER_CORE * self.cores

    @property
    def load_text(self) -> str:
        """The load average as the tables give it: one decimal, or as many more as keep it on its side of the line
        above which the machine was busy ("1.0" for 0.98, "1.04" for 1.04 on 2 cores); "" where none is reported."""
        if self.load is None:
            return ""
        return _above_text(self.load, BUSY_LOAD_PER_CORE * self.cores, 1)

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

    def _reads(self) -> list[tuple[str, Samples]]:
        reads = [("the plain read", self.read), ("the matrix-vector read", self.matvec_read)]
        return (reads + ([("the plain read in the sweeps' rounds", self.rounds_read)] if self.rounds_read else [])
                + ([("the 1-vector product in the product sweep", self.rounds_vector)] if self.rounds_vector else []))

    @property
    def bandwidth(self) -> Samples:
        """The read with the fastest sample, of the plain read, the matrix-vector read, the plain
        read in the sweeps' rounds and the product sweep's 1-vector product: the read that showed the most
        this machine's memory was seen to deliver."""
        return max((s for _, s in self._reads()), key=lambda s: s.high)

    @property
    def bandwidth_from(self) -> str:
        return next(name for name, s in self._reads() if s is self.bandwidth)

    @property
    def measured_bandwidth_bytes_per_s(self) -> float:
        """This run's own roof bandwidth: the fastest sample of any read."""
        return self.bandwidth.high

    @property
    def measured_peak_flop_per_s(self) -> float:
        """This run's own roof math rate: the fastest sample of the square product, first or in the rounds."""
        return max(self.matmul.high, self.rounds_matmul.high if self.rounds_matmul else 0.0)

    @property
    def peak_from(self) -> str:
        first = self.rounds_matmul is None or self.matmul.high >= self.rounds_matmul.high
        return "the first repeats" if first else "the sweeps' rounds"

    @property
    def bandwidth_bytes_per_s(self) -> float:
        """The roof's bandwidth: this run's fastest read, so that no honest program beats it except
        through a cache or in a quieter spell than any sample saw; or the reference run's, where
        ``judge`` found this run's too low (a measured point beat it) and the reference's is the faster."""
        own = self.measured_bandwidth_bytes_per_s
        return max(own, self.reference_roof[0]) if self.reference_roof else own

    @property
    def peak_flop_per_s(self) -> float:
        """The roof's math rate, which plays the role of the datasheet's peak: the fastest sample of
        the square product (or the reference run's, as for the bandwidth)."""
        own = self.measured_peak_flop_per_s
        return max(own, self.reference_roof[1]) if self.reference_roof else own

    @property
    def lifted_speeds(self) -> tuple[str, ...]:
        """The roof's speeds that are the reference run's, not this run's: ("bandwidth",), ("math rate",), both,
        or none."""
        if not self.reference_roof:
            return ()
        return tuple(name for name, ref, own in (
            ("bandwidth", self.reference_roof[0], self.measured_bandwidth_bytes_per_s),
            ("math rate", self.reference_roof[1], self.measured_peak_flop_per_s)) if ref > own)

    @property
    def roof_source(self) -> str:
        """Whose speeds the roof uses: "this run", "the reference run", or, where the reference lifted
        only one speed, "the reference run for the math rate" (or "... for the bandwidth")."""
        lifted = self.lifted_speeds
        if not lifted:
            return "this run"
        return "the reference run" if len(lifted) == 2 else f"the reference run for the {lifted[0]}"

    @property
    def spreads(self) -> dict[str, float]:
        """Each measurement's fastest sample over its slowest, by name: how noisy the run was."""
        out = {"plain read": self.read.spread, "matrix-vector read": self.matvec_read.spread,
               "matrix product": self.matmul.spread}
        if self.rounds_read:
            out["plain read in the sweeps' rounds"] = self.rounds_read.spread
        if self.rounds_matmul:
            out["matrix product in the sweeps' rounds"] = self.rounds_matmul.spread
        return out

    @property
    def waited(self) -> float | None:
        """The most that the fastest sample of any of the roof's measurements (the one its table shows)
        waited for a core, a share of its time; None where any is unknown."""
        samples = [self.read, self.matvec_read, self.matmul, self.rounds_read, self.rounds_matmul, self.rounds_vector]
        waits = [s.fastest_waited for s in samples if s is not None]
        return None if any(w is None for w in waits) else max(waits)

    @property
    def steady(self) -> bool:
        """Whether a steady load from other programs is ruled out (the judgement's, where judged;
        else: no measurement's fastest sample waited more than WAIT_SHARE for a core, or, where the
        system does not report waits, the load was not busy)."""
        if self.judgement is not None:
            return self.judgement.steady
        return self.waited <= WAIT_SHARE if self.waited is not None else not self.busy

    @property
    def products_steady(self) -> bool:
        """As ``steady``, for the product sweep (the judgement's, where it judged the two sweeps apart)."""
        if self.judgement is not None and self.judgement.products_steady is not None:
            return self.judgement.products_steady
        return self.steady

    @property
    def clean_ceiling(self) -> bool:
        """Whether the ceilings come from a clean measurement (the judgement's, where judged; else as ``steady``)."""
        return self.judgement.clean_ceiling if self.judgement is not None else self.steady

    @property
    def _lifted_note(self) -> str:
        """For the balance point's line: which of its two speeds are the reference run's (", both the
        reference run's", ", the bandwidth the reference run's"); "" where both are this run's."""
        lifted = self.lifted_speeds
        if not lifted:
            return ""
        return ", both the reference run's" if len(lifted) == 2 else f", the {lifted[0]} the reference run's"

    @property
    def balance_point_flop_per_byte(self) -> float:
        return balance_point_flop_per_byte(self.peak_flop_per_s, self.bandwidth_bytes_per_s)

    @property
    def label(self) -> str:
        """Which machine measured, and when: "AMD EPYC (2 cores), 2026-05-14"."""
        return f"{self.processor} ({self.cores} cores), {self.date}"

    def _repr_markdown_(self) -> str:
        return self.table()

    def view(self, part: str) -> Markdown:
        """One part of ``table``, to display: "speeds" or "samples"."""
        return Markdown(self.table(part))

    def table(self, part: str = "all") -> str:
        """The run's measurements and what the roof takes from them. ``part`` "speeds": one row per way of
        measuring (its first repeats pooled with its samples in the sweeps' rounds), with the roof's speeds, the
        balance point, the caches and the library; "samples": every measurement, the sweeps' rounds too, with the
        load and the waits for a core; "all": both."""
        if part not in ("speeds", "samples", "all"):
            raise ValueError(f"part must be 'speeds', 'samples' or 'all'; got {part!r}")

        def row(what: str, x: Samples, scale: float, unit: str, spread: bool = True) -> str:
            return (f"| {what} | {x.high / scale:,.1f} {unit} | {x.median / scale:,.1f} {unit} "
                    f"| {x.low / scale:,.1f} {unit} |" + (f" {_spread(x)} |" if spread else ""))

        size = _mb(self.array_bytes)
        caches = (f"{_mb(self.last_level_cache)} of last-level cache in all, as the system reports it. "
                  f"{self.cache_note}" if self.last_level_cache else
                  f"none reported. {self.cache_note}")
        rows = [row(f"plain read, {size} array, {len(self.read.values)} repeats", self.read, 1e9, "GB/s"),
                row(f"matrix-vector read, {size} matrix, {len(self.matvec_read.values)} repeats", self.matvec_read,
                    1e9, "GB/s"),
                row(f"matrix product, {self.matmul_side:,} × {self.matmul_side:,}, {len(self.matmul.values)} repeats",
                    self.matmul, 1e9, "GFLOP/s")]
        if self.rounds_read:
            rows.append(row(f"plain read, in the sweeps' {len(self.rounds_read.values)} rounds", self.rounds_read, 1e9,
                            "GB/s"))
        if self.rounds_matmul:
            rows.append(row(f"matrix product, in the sweeps' {len(self.rounds_matmul.values)} rounds",
                            self.rounds_matmul, 1e9, "GFLOP/s"))
        if self.rounds_vector:
            rows.append(row(f"1-vector product of the product sweep, read as bytes, its {len(self.rounds_vector.values)} "
                            "rounds", self.rounds_vector, 1e9, "GB/s"))

        def pooled(what: str, first: Samples, later: Samples | None, unit: str) -> str:
            """One row for one way of measuring: its first repeats and the same measurement in the rounds, named by
            what it measures alone (the samples table names where each sample came from)."""
            both = first + later if later else first
            # no spread: pooled samples come from different moments, and each measurement's spread is judged apart
            return row(what, both, 1e9, unit, spread=False)

        speeds = [pooled(f"plain read, {size} array", self.read, self.rounds_read, "GB/s"),
                  pooled(f"matrix-vector read, {size} matrix", self.matvec_read, self.rounds_vector, "GB/s"),
                  pooled(f"matrix product, {self.matmul_side:,} × {self.matmul_side:,}", self.matmul,
                         self.rounds_matmul, "GFLOP/s")]
        j = self.judgement
        shares = j.roof_shares if j is not None and j.roof_shares is not None else None

        def roof_line(name: str, i: int, scale: float, unit: str, own: float, what: str, where: str) -> str:
            """A roof speed's bullet: this run's fastest sample, and where it lies below the reference run's, by
            how much; or the reference run's, with this run's and the point that beat it."""
            lifted = self.reference_roof is not None and self.reference_roof[i] > own
            ours = f"{own / scale:,.1f} {unit}"
            if lifted:
                beat = j.beaten_by(("bandwidth", "math rate")[i]) if j is not None else ""
                share = f", {_below_share(shares[i])} of it," if shares else ","
                why = f": {beat}" if beat else ""
                return (f"- **Roof {name}:** {self.reference_roof[i] / scale:,.1f} {unit}, the reference run's. This "
                        f"run's fastest {what}, {ours}{share} was too low{why} (see below).")
            said = f"- **Roof {name}:** {ours}, the fastest sample of {where}."
            if shares and shares[i] < KEPT_UP:
                said += f" That is {_below_share(shares[i])} of the reference run's (see below)."
            return said

        # the speeds table pools each way of measuring in one row, so its bullets name the row, and where a sample
        # taken later set the roof, where it was taken
        pooled_from = {"the plain read": "the plain read", "the matrix-vector read": "the matrix-vector read",
                       "the plain read in the sweeps' rounds": "the plain read, taken again in the sweeps below",
                       "the 1-vector product in the product sweep":
                           "the matrix-vector read row, from the product sweep's 1-vector product (the trust table at the end "
                           "splits the row)"}
        bandwidth = roof_line("bandwidth", 0, 1e9, "GB/s", self.measured_bandwidth_bytes_per_s, "read",
                              pooled_from[self.bandwidth_from] if part == "speeds" else self.bandwidth_from)
        math_rate = roof_line("math rate", 1, 1e9, "GFLOP/s", self.measured_peak_flop_per_s, "product",
                              "the matrix product" if part == "speeds" else f"the product, in {self.peak_from}")
        library = ([f"- **numpy's BLAS library:** {self.blas}"
                    + (f", running {self.blas_threads} {'thread' if self.blas_threads == 1 else 'threads'}."
                       if self.blas_threads else ", its thread count not reported.")] if self.blas else [])
        waited = self.waited
        waits = ([f"- **Waiting for a core:** in the fastest sample of each row, this process's threads, together, waited "
                  f"up to {_wait_text(waited)} s for a core per second. Above {WAIT_SHARE:.2f} s, other threads, most "
                  "likely other programs', pushed them off their cores."]
                 if waited is not None else [])
        roof = [bandwidth, math_rate,
                f"- **Balance point:** {self.balance_point_flop_per_byte:,.1f} FLOP per byte, the roof's math rate "
                f"over the roof's bandwidth{self._lifted_note}.",
                f"- **Caches:** {caches}", *library]
        conditions = ([f"- **Load before measuring:** {self.load_text}, the system's 1-minute load average: a decaying "
                       "average of the programs running or waiting to run (Linux also counts those waiting on the "
                       f"disk). An idle machine shows near 0. Above {BUSY_LOAD_PER_CORE * self.cores:g}, other "
                       f"programs kept more than half of its {self.cores} cores busy."]
                      if self.load is not None else []) + waits
        shown = speeds if part == "speeds" else rows
        bullets = roof if part == "speeds" else conditions if part == "samples" else roof + conditions
        return "\n".join([
            f"**Measured on {self.label}** (numpy {np.__version__}, float32)",
            "",
            *(("| measured | fastest | median | slowest |", "|:--|--:|--:|--:|") if part == "speeds" else
              ("| measured | fastest | median | slowest | spread (fastest ÷ slowest) |", "|:--|--:|--:|--:|--:|")),
            *shown,
            "",
            *bullets])


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


def this_matmul(side: int = ROOF_SIDE) -> Samples:
    """This machine's matrix-multiply rate (remembered for the session)."""
    return _this_matmul(whole("side", side, 16))


@cache
def _this_matmul(side: int) -> Samples:
    return matmul_flop_per_s(side, repeats=MATMUL_REPEATS)


#: Other programs kept the cores busy when the load average exceeded this many per core.
BUSY_LOAD_PER_CORE = 0.5


def _load_average() -> float | None:
    """The system's 1-minute load average: a decaying average of the programs running or waiting
    to run (Linux also counts those waiting on the disk; ``os.getloadavg``), or None where the
    system reports none."""
    try:
        return float(os.getloadavg()[0])
    except (AttributeError, OSError):
        return None


@cache
def load_before_measuring() -> float | None:
    """The load average when this session first measured this machine (remembered for the
    session, so that it describes the conditions the chapter's measurements began in)."""
    return _load_average()


@cache
def _blas() -> tuple[str, int | None]:
    return blas()


def roof_settings(array_bytes: int | None = None, matmul_side: int = ROOF_SIDE) -> tuple[int, int]:
    """The roof's two settings, as the sweeps take them to time the roof again in their rounds:
    the read's array (default: ``bandwidth_array_bytes()``) and the square product's side."""
    array_bytes = bandwidth_array_bytes() if array_bytes is None else whole("array_bytes", array_bytes, 1024)
    return int(array_bytes), whole("matmul_side", matmul_side, 16)


def this_machine(array_bytes: int | None = None, matmul_side: int = ROOF_SIDE) -> Machine:
    """This machine's two reads of an array of ``array_bytes`` (default: ``bandwidth_array_bytes()``,
    sized from this machine's cache) and its matrix-multiply rate, with its name, the cores this
    process may use, its BLAS library and the date (each measurement remembered for the session:
    see the module's notes). ``with_rounds`` adds the samples the sweeps take again."""
    if array_bytes is None:
        array_bytes = bandwidth_array_bytes()
    load = load_before_measuring()  # before the first measurement, whose threads would count
    read, matvec_read = this_bandwidth(array_bytes)
    library, threads = _blas()
    return Machine(processor=processor_name(), cores=cores(),
                   date=datetime.date.today().isoformat(), read=read, matvec_read=matvec_read,
                   matmul=this_matmul(matmul_side), array_bytes=int(array_bytes), matmul_side=int(matmul_side),
                   last_level_cache=last_level_cache_bytes(), memory=physical_memory_bytes(), load=load,
                   blas=library, blas_threads=threads, features=processor_features())


def with_rounds(m: Machine, *sweeps) -> Machine:
    """``m`` with the roof's samples that ``sweeps`` (product and decode sweeps measured with
    ``roof=roof_settings(m.array_bytes, m.matmul_side)``) took in their rounds: its roof is then the
    fastest sample of all. A product sweep's 1-vector product of a matrix at least as large as the
    roof's array is a read of that matrix too (``rounds_vector``: all its bytes per second). A sweep
    measured without the roof, or with another roof's settings, adds nothing."""
    reads, products, vector = m.rounds_read, m.rounds_matmul, m.rounds_vector
    for sweep in sweeps:
        if sweep is None or getattr(sweep, "roof", None) != (m.array_bytes, m.matmul_side):
            continue
        reads = sweep.roof_read if reads is None else reads + sweep.roof_read
        products = sweep.roof_matmul if products is None else products + sweep.roof_matmul
        one = vector_read(sweep, m.array_bytes) if isinstance(sweep, ProductSweep) else None
        if one is not None:
            vector = one if vector is None else vector + one
    return replace(m, rounds_read=reads, rounds_matmul=products, rounds_vector=vector)


def vector_read(sweep: ProductSweep, least_bytes: float = 0) -> Samples | None:
    """A product sweep's 1-vector product as a read: bytes/s = FLOP/s / (FLOP per byte), every round; None where
    the sweep has no batch of 1, or its matrix is smaller than ``least_bytes`` (a cache could then serve it)."""
    one = [p for p in sweep if p.batch == 1 and p.rows * p.cols * bytes_per_element(PRECISION) >= least_bytes]
    if not one:
        return None
    p = one[0]
    return Samples(tuple(r / p.intensity_flop_per_byte for r in p.rate.values), p.rate.waited)


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
    timed in the same rounds (so that the two can be compared under the same conditions); the
    control (``one_at_a_time``: the smallest batch past one, its vectors multiplied one at a time
    by the matrix-vector routine, in the same rounds); and the roof's two measurements timed again
    in the same rounds (``roof``: their settings, as ``roof_settings`` gives them; None where the
    sweep did not time them)."""

    points: tuple[ProductPoint, ...]
    read: Samples  # bytes/s of reading the weight matrix
    one_at_a_time: Samples | None = None  # FLOP/s of the smallest batch past one, one vector at a time
    roof_read: Samples | None = None      # bytes/s, the roof's plain read, in the same rounds
    roof_matmul: Samples | None = None    # FLOP/s, the roof's square product, in the same rounds
    roof: tuple[int, int] | None = None

    def __iter__(self):
        return iter(self.points)

    def __len__(self) -> int:
        return len(self.points)

    @property
    def read_bytes_per_s(self) -> float:
        """The plain read of the weight matrix in its fastest round."""
        return self.read.high

    @property
    def control_batch(self) -> int | None:
        """The batch the control multiplied one vector at a time (the smallest past one), or None."""
        if self.one_at_a_time is None:
            return None
        return min(p.batch for p in self.points if p.batch > 1)


def product_sweep(rows: int = 8192, cols: int = 8192, batches: tuple[int, ...] = powers_of_two(256),
                  rounds: int = SWEEP_ROUNDS, roof: tuple[int, int] | None = None,
                  control: bool = True) -> ProductSweep:
    """Multiply ``batches`` vectors at once by one rows x cols float32 weight matrix, for each
    batch, read the matrix once more as a plain read, and, where 1 vector and a batch past it are
    both measured (and ``control``), multiply the smallest batch past one a vector at a time (the control), in
    ``rounds`` rounds; with ``roof`` (``roof_settings``: the read's array and the square product's
    side), time the roof's two measurements in every round too. Every round's rate of each
    (remembered for the session: the same settings, however they are passed, give the same
    measurement back)."""
    rows, cols, rounds = whole("rows", rows), whole("cols", cols), whole("rounds", rounds)
    batches = tuple(whole("batch", b) for b in batches)
    if roof is not None:
        roof = (whole("roof array_bytes", roof[0], 1024), whole("roof matmul_side", roof[1], 16))
    return _product_sweep(rows, cols, batches, rounds, roof, bool(control))


@cache
def _product_sweep(rows: int, cols: int, batches: tuple[int, ...], rounds: int,
                   roof: tuple[int, int] | None = None, control: bool = True) -> ProductSweep:
    rng = np.random.default_rng(0)
    weights = rng.random((rows, cols), dtype=DTYPE)
    inputs = {b: rng.random((b, rows), dtype=DTYPE) for b in batches}
    outputs = {b: np.empty((b, cols), DTYPE) for b in batches}
    past = [b for b in batches if b > 1]
    pair = min(past) if past and 1 in batches and control else None

    def run(b: int) -> None:
        np.matmul(inputs[b], weights, out=outputs[b])

    def one_at_a_time() -> None:   # the same vectors, each its own matrix-vector product
        for i in range(pair):
            np.matmul(inputs[pair][i], weights, out=outputs[pair][i])

    with _Reader(weights) as reader, (_RoofProbe(*roof) if roof else _Nothing()) as probe:
        plain = _Sampler(reader, weights.nbytes)
        # the plain read of a matrix at least as large as the roof's array is the roof's read too
        doubles = roof is not None and weights.nbytes >= roof[0]
        reads = [plain] + ([probe.read] if roof and not doubles else [])
        products = {b: _Sampler(lambda b=b: run(b), matmul_flops(b, rows, cols)) for b in batches}
        checked = _Sampler(one_at_a_time, matmul_flops(pair, rows, cols)) if pair else None
        others = list(products.values()) + ([checked] if checked else []) + ([probe.product] if roof else [])
        for r in range(rounds):
            time.sleep(SETTLE_S)   # the reads first, once the library's threads have stopped spinning
            for sampler in (reads if r % 2 == 0 else reads[::-1]):
                sampler.sample()
            for sampler in _shuffled(others, r):
                sampler.sample()
    points = tuple(ProductPoint(b, rows, cols, products[b].samples) for b in batches)
    roof_read = (plain if doubles else probe.read).samples if roof else None
    return ProductSweep(points, plain.samples, checked.samples if checked else None,
                        roof_read, probe.product.samples if roof else None, roof)


class _Nothing:
    """A context manager that holds nothing (for a sweep that does not time the roof)."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc) -> None:
        return None


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
        """Tokens/s in the fastest round (the ceilings, too, come from fastest samples)."""
        return self.rate.high

    @property
    def bytes_per_step(self) -> float:
        """What the book's formula says a step reads: W + B x (K x L + A), all in float32."""
        return decode_point(self.config, 1.0, 1.0, self.batch, self.context_tokens,
                            PRECISION, PRECISION, PRECISION).bytes

    @property
    def activation_bytes_per_step(self) -> float:
        """Of them, the activations: B x A."""
        return decode_point(self.config, 1.0, 1.0, self.batch, self.context_tokens,
                            PRECISION, PRECISION, PRECISION).activation_bytes

    @property
    def flops_per_token(self) -> float:
        return decode_flops_per_token(self.config, self.context_tokens)


@dataclass(frozen=True)
class DecodeSweep:
    """The decode sweep's points (every context, every batch), with the roof's two measurements
    timed again in its rounds (``roof``: their settings; None where the sweep did not time them).
    Iterates, indexes and counts as its points do."""

    points: tuple[DecodePoint, ...]
    roof_read: Samples | None = None
    roof_matmul: Samples | None = None
    roof: tuple[int, int] | None = None
    splits: tuple["StepSplit", ...] = ()   # steps beside their weight products alone, in the same rounds

    def __iter__(self):
        return iter(self.points)

    def __len__(self) -> int:
        return len(self.points)

    def __getitem__(self, i):
        return self.points[i]


def decode_sweep(c: Config = tinyllm.TINY_LLAMA, batches: tuple[int, ...] = powers_of_two(64),
                 contexts: tuple[int, ...] = (128,), steps: int = DECODE_STEPS,
                 rounds: int = DECODE_ROUNDS, roof: tuple[int, int] | None = None,
                 split: tuple[int, ...] = ()) -> DecodeSweep:
    """Decode B sequences whose caches already hold L tokens, for each context L in ``contexts``
    and batch B in ``batches``, in ``rounds`` rounds; every round's tokens/s of each (context,
    batch), in that order (remembered for the session). A call of a setting generates ``steps``
    tokens per sequence, each at the same context (each step writes position L of the cache and
    attends over positions 0 to L, as the next token after L cached ones does); a sample repeats
    the call until it lasts MIN_SAMPLE_S. With ``roof`` (``roof_settings``), time the roof's two
    measurements in every round too. For each batch in ``split`` (each one of ``batches``), time the step's
    weight products alone too, right after its step at the first context in every round (``DecodeSweep.splits``).

    The caches are filled with random numbers instead of by reading a real prompt: a decode step
    costs the same whatever the cached numbers are. One cache, sized for the largest batch and
    context, serves every setting (a batch of B uses its first B sequences, a context of L its
    first L positions), so that all settings can be measured in the same rounds. Each round visits
    the batches in a shuffled order, and each batch's contexts back to back, so that the contexts
    of one batch are compared under the same conditions. Each batch is warmed up once, at its
    largest context, whose call touches every array the smaller contexts use."""
    batches = tuple(whole("batch", b) for b in batches)
    contexts = tuple(whole("context_tokens", L, 0) for L in contexts)
    steps, rounds = whole("steps", steps), whole("rounds", rounds)
    if not batches or not contexts:
        raise ValueError("batches and contexts must each hold at least one value")
    if roof is not None:
        roof = (whole("roof array_bytes", roof[0], 1024), whole("roof matmul_side", roof[1], 16))
    split = tuple(whole("split batch", b) for b in split)
    if not set(split) <= set(batches):
        raise ValueError(f"split must name batches the sweep measures ({batches}); got {split}")
    return _decode_sweep(c, batches, contexts, steps, rounds, roof, split)


@cache
def _decode_sweep(c: Config, batches: tuple[int, ...], contexts: tuple[int, ...], steps: int,
                  rounds: int, roof: tuple[int, int] | None = None, split: tuple[int, ...] = ()) -> DecodeSweep:
    w = decoder_weights(c)
    cache_ = tinyllm.KVCache(c, max(batches), max(contexts) + 1)
    cache_.fill(max(contexts))
    matrices = tinyllm.weight_matrices(w)
    rng = np.random.default_rng(0)   # stand-in vectors for the products alone: their speed does not hang on values
    widths = sorted({m.shape[0] for m in matrices})
    inputs = {b: {k: rng.standard_normal((b, k)).astype(DTYPE) for k in widths} for b in split}

    def run(L: int, b: int) -> None:
        tokens = np.zeros(b, dtype=np.int64)
        for _ in range(steps):
            tokens = tinyllm.decode_step(w, tokens, cache_, L)

    with (_RoofProbe(*roof) if roof else _Nothing()) as probe:
        samplers = {}
        for b in batches:   # one warm-up per batch, at its largest context: it touches every array the others do
            longest = max(contexts)
            first = samplers[longest, b] = _Sampler(lambda b=b: run(longest, b), b * steps)
            for L in contexts:
                if L != longest:   # its call is estimated from the warm-up's, by the bytes a step moves
                    share = _step_bytes(c, b, L) / _step_bytes(c, b, longest)
                    samplers[L, b] = _Sampler(lambda L=L, b=b: run(L, b), b * steps, warmed=first.fastest * share)
            if b in split:
                samplers["products", b] = _Sampler(lambda b=b: tinyllm.weight_products(matrices, inputs[b]), b)
        others = list(batches) + (["roof"] if roof else [])
        for r in range(rounds):
            if roof:
                time.sleep(SETTLE_S)
                probe.read.sample()
            for item in _shuffled(others, r):
                if item == "roof":
                    probe.product.sample()
                    continue
                for L in (contexts if r % 2 == 0 else contexts[::-1]):
                    samplers[L, item].sample()
                    if L == contexts[0] and item in split:
                        samplers["products", item].sample()
    points = tuple(DecodePoint(c, b, L, samplers[L, b].samples) for L in contexts for b in batches)
    shapes = tuple(m.shape for m in matrices)
    splits = tuple(StepSplit(c, b, contexts[0], shapes, samplers[contexts[0], b].samples,
                             samplers["products", b].samples) for b in split)
    return DecodeSweep(points, probe.read.samples if roof else None, probe.product.samples if roof else None, roof,
                       splits)


def _step_bytes(c: Config, batch: int, context_tokens: int) -> float:
    """What the book's formula says a float32 decode step moves: W + B x (K x L + A)."""
    return decode_point(c, 1.0, 1.0, batch, context_tokens, PRECISION, PRECISION, PRECISION).bytes


@dataclass(frozen=True)
class StepSplit:
    """A decode step of B sequences against its products with the weights alone, timed in the same
    rounds: whether those products, or the rest of the step, hold it below its ceiling."""

    config: Config
    batch: int
    context_tokens: int
    shapes: tuple[tuple[int, int], ...]  # (in, out) of each weight matrix the step multiplies
    step: Samples      # tokens/s of whole steps
    products: Samples  # tokens/s of the weight products alone (B tokens per set of products)

    @property
    def products_part(self) -> float:
        """The share of a step's time its weight products take: the median over rounds of the
        step's rate over the products' rate, t_products / t_step."""
        return paired_ratio(self.step, self.products)

    def products_roof_s(self, bandwidth_bytes_per_s: float, peak_flop_per_s: float) -> float:
        return products_roof_s(self.shapes, self.batch, bandwidth_bytes_per_s, peak_flop_per_s)

    def products_share(self, bandwidth_bytes_per_s: float, peak_flop_per_s: float) -> float:
        """The products' share of their roof in their fastest round (``products_share``)."""
        return products_share(self.shapes, self.batch, self.products.high, bandwidth_bytes_per_s, peak_flop_per_s)


def products_roof_s(shapes: Sequence[tuple[int, int]], batch: int, bandwidth_bytes_per_s: float,
                    peak_flop_per_s: float) -> float:
    """Seconds a batch's products with weight matrices of ``shapes`` (in, out) need at the roof, each at its own:
    sum over matrices of max(bytes / BW, FLOPs / P), each reading its weights once."""
    bw = positive("bandwidth_bytes_per_s", bandwidth_bytes_per_s)
    p = positive("peak_flop_per_s", peak_flop_per_s)
    b, fp = whole("batch", batch), bytes_per_element(PRECISION)
    return sum(max(matmul_bytes(b, k, n, fp) / bw, matmul_flops(b, k, n) / p) for k, n in shapes)


def products_share(shapes: Sequence[tuple[int, int]], batch: int, tokens_per_s: float,
                   bandwidth_bytes_per_s: float, peak_flop_per_s: float) -> float:
    """A batch's weight products alone, run at ``tokens_per_s`` (B tokens per set of products), as a share of their
    roof: roof seconds (``products_roof_s``) over measured seconds, B / tokens_per_s."""
    return products_roof_s(shapes, batch, bandwidth_bytes_per_s, peak_flop_per_s) * positive(
        "tokens_per_s", tokens_per_s) / whole("batch", batch)


def step_split(c: Config = tinyllm.TINY_LLAMA, batches: tuple[int, ...] = (1, 2, 16),
               context_tokens: int = 128, rounds: int = DECODE_ROUNDS) -> tuple[StepSplit, ...]:
    """For each batch, whole decode steps at ``context_tokens`` beside the step's weight products alone
    (``tinyllm.weight_products`` on stand-in activations), in ``rounds`` rounds of a decode sweep of those batches
    alone (``decode_sweep``'s ``split``; remembered for the session)."""
    batches = tuple(whole("batch", b) for b in batches)
    if not batches:
        raise ValueError("batches must hold at least one value")
    return decode_sweep(c, batches, (whole("context_tokens", context_tokens, 0),), rounds=whole("rounds", rounds),
                        split=batches).splits


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
    round, with a way to measure the two again head to head (only called after a failure)."""
    p = point_at(sweep, batch)

    def ratio(s: ProductSweep) -> float:
        a = point_at(s, batch)
        if over is not None:
            return paired_ratio(a.rate, point_at(s, over).rate)
        return paired_ratio(Samples(tuple(r / a.intensity_flop_per_byte for r in a.rate.values)), s.read)

    def again() -> float:
        return ratio(_product_sweep.__wrapped__(p.rows, p.cols, (batch,) if over is None else (batch, over),
                                                len(p.rate.values), None, False))

    return Ratio(ratio(sweep), again)


def split_ratio(splits: Sequence[StepSplit], batch: int, over: int, bandwidth_bytes_per_s: float,
                peak_flop_per_s: float) -> Ratio:
    """The weight products' share of their roof at ``batch`` over that at ``over`` (``StepSplit.products_share``),
    paired by round, with a way to measure the two again head to head (only called after a failure)."""
    def ratio(ss) -> float:
        a, b = point_at(ss, batch), point_at(ss, over)
        roofs = (a.products_roof_s(bandwidth_bytes_per_s, peak_flop_per_s) / a.batch) / (
            b.products_roof_s(bandwidth_bytes_per_s, peak_flop_per_s) / b.batch)
        return roofs * paired_ratio(a.products, b.products)

    first = point_at(splits, batch)

    def again() -> float:
        pair = tuple(sorted({batch, over}))
        return ratio(_decode_sweep.__wrapped__(first.config, pair, (first.context_tokens,), DECODE_STEPS,
                                               len(first.products.values), None, pair).splits)

    return Ratio(ratio(splits), again)


def decode_ratio(points: Sequence[DecodePoint], a: tuple[int, int], b: tuple[int, int]) -> Ratio:
    """Tokens/s at (batch, context) ``a`` over tokens/s at ``b``, paired by round, with a way to
    measure the two settings again head to head (only called after a failure)."""
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

#: A measurement is quiet when its fastest repeat (or round) is at most this many times its slowest,
#: and a run or a sweep is quiet when every one of its measurements is.
QUIET_SPREAD = 1.25


def run_spreads(m: Machine, runs: Sequence[DecodePoint], products: ProductSweep | None = None) -> dict[str, float]:
    """How far every repeated measurement of this run spread (fastest over slowest), by what was
    measured: the repeats of each speed (and its samples in the sweeps' rounds), the rounds of each
    batch of the product sweep, of its plain read and of its control, and the rounds of each batch
    and context of the decode sweep, and of each step's weight products timed alone in it. Every one counts: the chapter calls a run quiet only when all
    of them are."""
    out = {f"{'samples' if 'rounds' in name else 'repeats'} of the {name}": x for name, x in m.spreads.items()}
    if products is not None:
        for p in products:
            out[f"rounds of {p.batch:,} {'vector' if p.batch == 1 else 'vectors'} in the product sweep"] = \
                p.rate.spread
        out["rounds of the product sweep's plain read"] = products.read.spread
        if products.one_at_a_time is not None:
            out[f"rounds of the control ({products.control_batch:,} vectors one at a time)"] = \
                products.one_at_a_time.spread
    for p in runs:
        out[f"rounds of batch {p.batch:,} at {p.context_tokens:,} tokens in the decode sweep"] = p.rate.spread
    for s in getattr(runs, "splits", ()):
        out[f"rounds of batch {s.batch:,}'s weight products alone, in the decode sweep"] = s.products.spread
    return out


def decode_ceilings_tokens_per_s(m: Machine, batch: float, context_tokens: float,
                                 c: Config = tinyllm.TINY_LLAMA) -> tuple[float, float]:
    """The book's two ceilings for a float32 decoder on this machine: memory
    B x BW / (W + B x (K x L + A)) with the roof's bandwidth, and math P / F with the roof's
    matrix-multiply rate (each the fastest sample of its measurement, or the reference run's: see ``Machine``)."""
    point = decode_point(c, m.peak_flop_per_s, m.bandwidth_bytes_per_s, batch, context_tokens,
                         PRECISION, PRECISION, PRECISION)
    return point.memory_ceiling, point.math_ceiling


def efficiency(point: DecodePoint, m: Machine) -> float:
    """Measured tokens/s over the lower of the two ceilings."""
    return point.tokens_per_s / min(decode_ceilings_tokens_per_s(m, point.batch, point.context_tokens, point.config))


#: The one line a table adds above its rows when a point beat its roof or ceiling, so that a share
#: above 100% is announced before the reader meets it; the words under the table say which reason
#: the data show (``figures.machine.above_roof_words``, ``figures.machine.regime_words``).
_ABOVE_NOTE = {what: f". Each share above 100% beat the {what}; the words under the table say why."
               for what in ("roof", "ceiling")}


def _caption(said: str, above: str | None, m: Machine | None = None, what: str = "roof") -> str:
    """A table's first line: what it is, whose speeds its ``what`` ("roof" or "ceilings") uses where
    they are not all this run's own (``m.reference_roof``), then a colon; or, where some share beat
    its roof or ceiling (``above``: "roof" or "ceiling"), the line that says why, before the reader
    meets the share."""
    if m is not None and m.reference_roof and m.roof_source != "this run":
        speeds = m.roof_source.removeprefix("the reference run for the ")
        speeds = "speeds" if speeds == "the reference run" else speeds
        said += f"; the {what} from the reference run's {speeds}, since a measured point beat this run's"
    return f"{said}{_ABOVE_NOTE[above]}" if above else f"{said}:"


def _percent(x: float, edges: tuple[float, ...] = (0.5, 1.0)) -> str:
    """A share as the tables print it: "98%"; "100.4%", "49.6%" or "49.96%" where fewer decimals would hide which
    side of 100%, or of the half that places a point, it lies (``edges``: the lines that matter where it is shown)."""
    for decimals in range(4):   # the fewest decimals that leave the printed share on x's side of each edge
        shown = f"{x:.{decimals}%}"
        printed = float(shown[:-1]) / 100
        if all((printed < edge) == (x < edge) and (printed > edge) == (x > edge) for edge in edges):
            return shown
    return shown


def _above_text(x: float, edge: float, decimals: int) -> str:
    """``x`` with the fewest decimals, from ``decimals`` on, that print it above ``edge`` exactly where it lies above
    it: a spread, a load or a wait just past its line never prints as the line itself ("1.253", "0.052")."""
    for d in range(decimals, decimals + 4):
        shown = f"{x:,.{d}f}"
        if (float(shown.replace(",", "")) > edge) == (x > edge):
            break
    return shown


def _wait_text(waited: float) -> str:
    """A wait for a core, seconds per second: "0.01"; "0.052" where two decimals would print the line WAIT_SHARE."""
    return _above_text(waited, WAIT_SHARE, 2)


def spread_text(x: float) -> str:
    """A spread (fastest over slowest) as the tables and words give it: two decimals, so that it
    can be set beside the quiet bar of 1.25×: "1.00×", "1.26×", "6.20×"; "14×" from 10 up; and as many more
    as keep a spread just above the bar from printing as the bar itself ("1.252×")."""
    x = positive("spread", x)
    return f"{x:,.0f}×" if x >= 10 else f"{_above_text(x, QUIET_SPREAD, 2)}×"


def _spread(x: Samples) -> str:
    """A measurement's spread as the tables print it (``spread_text``)."""
    return spread_text(x.spread)


def _fastest(rounds: int) -> str:
    """What a table's rows are: "each row is its fastest of 3 rounds", or "one round each"."""
    return f"each row is its fastest of {rounds} rounds" if rounds > 1 else "one round each"


def products_table(sweep: ProductSweep, m: Machine) -> Markdown:
    """Each measured product: intensity, math rate (fastest round), share of the roof, how far its
    rounds spread, and, below the ridge only, how fast it read the weights (past the ridge the math
    sets the pace, and that speed says nothing about the memory); then the plain read of the same
    matrix in the same rounds, and the control (the smallest batch past one, one vector at a time)."""
    rows = ["| vectors | FLOP per byte | GFLOP/s | share of the roof | spread of rounds "
            "| weights read at (below the ridge) |",
            "|--:|--:|--:|--:|--:|--:|"]
    # the 1-vector product whose fastest round set the roof's bandwidth sits on the roof by construction: say so
    set_roof = (m.rounds_vector is not None and m.bandwidth is m.rounds_vector and m.reference_roof is None
                and getattr(sweep, "roof", None) == (m.array_bytes, m.matmul_side))
    for p in sweep:
        roof = min(m.peak_flop_per_s, p.intensity_flop_per_byte * m.bandwidth_bytes_per_s)
        below = p.intensity_flop_per_byte < m.balance_point_flop_per_byte
        read = f"{p.bandwidth_bytes_per_s / 1e9:,.1f} GB/s" if below else ""
        mark = " (set the roof)" if set_roof and below and p.batch == 1 else ""
        rows.append(f"| {p.batch:,} | {p.intensity_flop_per_byte:,.2f} | {p.flop_per_s / 1e9:,.1f} "
                    f"| {_percent(p.flop_per_s / roof, (1.0,))}{mark} | {_spread(p.rate)} | {read} |")
    if sweep.one_at_a_time is not None:
        b = sweep.control_batch
        rows.append(f"| control: the same {b:,} vectors, one matrix-vector product each | | "
                    f"{sweep.one_at_a_time.high / 1e9:,.1f} | | "
                    f"{_spread(sweep.one_at_a_time)} | |")
    rows.append(f"| plain read of the same matrix, same rounds | | | | {_spread(sweep.read)} | {sweep.read_bytes_per_s / 1e9:,.1f} GB/s |")
    above = any(p.flop_per_s > min(m.peak_flop_per_s, p.intensity_flop_per_byte * m.bandwidth_bytes_per_s)
                for p in sweep)
    return Markdown(_caption(f"Measured on {m.label}; {_fastest(len(sweep.read.values))}", "roof" if above else None,
                             m, "roof") + "\n\n" + "\n".join(rows))


def decode_table(points: Sequence[DecodePoint], m: Machine) -> Markdown:
    """Each measured batch: tokens/s (fastest round), the two ceilings, the share of the lower one,
    and how far its rounds spread."""
    rows = ["| batch | measured tokens/s | memory ceiling, tokens/s | math ceiling, tokens/s "
            "| share of the lower ceiling | spread of rounds |",
            "|--:|--:|--:|--:|--:|--:|"]
    for p in points:
        memory, math_ = decode_ceilings_tokens_per_s(m, p.batch, p.context_tokens, p.config)
        rows.append(f"| {p.batch:,} | {p.tokens_per_s:,.1f} | {memory:,.0f} | {math_:,.0f} "
                    f"| {_percent(efficiency(p, m))} | {_spread(p.rate)} |")
    context = points[0].context_tokens if points else 0
    rounds = f"; {_fastest(len(points[0].rate.values))}" if points else ""
    above = any(efficiency(p, m) > 1 for p in points)
    return Markdown(_caption(f"Measured on {m.label}, {context:,} tokens of context{rounds}",
                             "ceiling" if above else None, m, "ceilings") + "\n\n" + "\n".join(rows))


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
             below: float | None = None, show_measured: bool = False, as_ratio: str = "") -> None:
    """Assert a relation that holds on any machine: ``measured`` is at least ``at_least``, or
    below ``below``. When it does not hold and ``measured`` can be measured again, measure it
    again (up to ``RETRIES`` times) before raising CheckFailed, which names the claim and the
    values measured. Prints one line with the bound; stable, without the measured values (they
    belong to the machine), unless ``show_measured``: then the line also gives what this machine
    measured, for a cell whose outputs nbval does not compare; ``as_ratio`` names that value as the
    ratio it is ("ratio to the B200's"), so that no reader takes it for a quantity of its own:
    "(on this machine, ratio to the B200's: 0.0142; below 1 needed)"."""
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
        named = f", {as_ratio.strip()}" if as_ratio.strip() else ""
        print(f"✓ {claim} (on this machine{named}: {values}; {need} needed)")
    else:
        print(f"✓ {claim} (on this machine: {need})")
