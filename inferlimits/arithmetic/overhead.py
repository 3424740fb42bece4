"""The overhead regime: a third ceiling on decode speed, set by the work the host does per step,
and a small measurement of dispatch cost on this machine's CPU.

Notation (the book's, plus two symbols): n launches per decode step (kernels the host starts),
t the host time each launch costs (s), B batch. A step cannot finish before the host has launched
its n kernels, so

    aggregate tokens/s  <=  B / (n x t),

beside the memory ceiling B x BW / (W + B x (K x L + A)) and the math ceiling P / F. The launch counts
and costs come from ``data/overhead.toml``: assumptions of a realistic size, not hardware facts.

The batch below which the host is the wall, B_o (``overhead_bound_batch``), and one step drawn on a
time axis, the host's launches against the GPU's kernels (``eager_step_kernels``, ``launch_timeline``).
"""
from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from inferlimits.data import datafiles
from inferlimits.data.models import Config
from inferlimits.data.units import non_negative, positive, whole

MEMORY, MATH, OVERHEAD = "memory", "math", "overhead"
MICROSECOND = 1e-6
PER_MICROSECOND = 1e6  # dividing by it is exact for whole microseconds (10 / 1e6 == 1e-05)


# ---- the assumptions ---------------------------------------------------------------------------

@dataclass(frozen=True)
class KernelGroup:
    """Kernels one part of an eager decoder layer launches per step, and what they are."""

    part: str
    count: int
    what: str


@dataclass(frozen=True)
class LaunchAssumptions:
    """The modelling inputs of ``data/overhead.toml``, in base units (seconds, counts)."""

    seconds_per_launch: float
    reported_low_s: float
    reported_high_s: float
    launch_what: str
    launch_seen: str
    per_layer: tuple[KernelGroup, ...]
    outside_layers: int
    outside_what: str

    @property
    def kernels_per_layer(self) -> int:
        """The kernels of one layer, the sum over its parts."""
        return sum(g.count for g in self.per_layer)


@datafiles.cached
def launch_assumptions() -> LaunchAssumptions:
    """The assumed launch cost and kernel counts of ``data/overhead.toml`` (remembered; tests
    that change the file call ``launch_assumptions.cache_clear()``)."""
    table = datafiles.load("overhead.toml")
    cost = table["launch_cost"]
    groups = tuple(KernelGroup(part, int(positive(f"kernels_per_layer.{part}", row["count"])), row["what"])
                   for part, row in table["kernels_per_layer"].items())
    outside = table["kernels_outside_layers"]
    return LaunchAssumptions(
        seconds_per_launch=positive("launch_cost.typical", cost["typical"]) / PER_MICROSECOND,
        reported_low_s=positive("launch_cost.reported_low", cost["reported_low"]) / PER_MICROSECOND,
        reported_high_s=positive("launch_cost.reported_high", cost["reported_high"]) / PER_MICROSECOND,
        launch_what=cost["what"], launch_seen=cost["seen"], per_layer=groups,
        outside_layers=int(non_negative("kernels_outside_layers", outside["count"])),
        outside_what=outside["what"])


# ---- the third ceiling ---------------------------------------------------------------------------

def launches_per_step(c: Config, kernels_per_layer: float, kernels_outside_layers: float = 0) -> float:
    """Kernels one decode step launches: n = layers x kernels per layer + kernels outside the layers."""
    return (c.num_hidden_layers * positive("kernels_per_layer", kernels_per_layer)
            + non_negative("kernels_outside_layers", kernels_outside_layers))


def host_time_per_step_s(launches_per_step: float, seconds_per_launch: float) -> float:
    """The host's time to start one step's kernels: n x t."""
    return positive("launches_per_step", launches_per_step) * positive("seconds_per_launch", seconds_per_launch)


def overhead_ceiling_tokens_per_s(launches_per_step: float, seconds_per_launch: float, batch: float = 1) -> float:
    """Aggregate tokens/s the host's launches allow: B / (n x t). With B = 1 it is 1 / (n x t): one
    token per step, and a step needs n launches of t seconds each."""
    return positive("batch", batch) / host_time_per_step_s(launches_per_step, seconds_per_launch)


def seconds_per_launch_to_explain(measured_tokens_per_s: float, launches_per_step: float, batch: float = 1) -> float:
    """The cost per launch that would make the overhead ceiling equal a measured rate r:
    t = B / (r x n). What would have to be true, not a measurement of it."""
    return positive("batch", batch) / (positive("measured_tokens_per_s", measured_tokens_per_s)
                                       * positive("launches_per_step", launches_per_step))


def launch_budget_per_step(target_tokens_per_s: float, seconds_per_launch: float, batch: float = 1) -> float:
    """The most launches a step may make and still allow a target rate r: n = B / (r x t)."""
    return positive("batch", batch) / (positive("target_tokens_per_s", target_tokens_per_s)
                                       * positive("seconds_per_launch", seconds_per_launch))


def serial_tokens_per_s(host_seconds_per_step: float, device_seconds_per_step: float, batch: float = 1) -> float:
    """Aggregate tokens/s when host and device time add, B / (T_host + T_device): the worst case, in
    which the host waits for each kernel before launching the next (a synchronisation inside the
    step). One wait at the end of a step costs far less: within the step the device runs each
    kernel while the host queues the next."""
    return positive("batch", batch) / (positive("host_seconds_per_step", host_seconds_per_step)
                                       + positive("device_seconds_per_step", device_seconds_per_step))


def eager_launches_per_step(c: Config) -> float:
    """Launches per step of an eager decode of ``c`` under the assumptions of ``data/overhead.toml``:
    layers x (the sum of the kernels of a layer's parts) + kernels outside the layers."""
    a = launch_assumptions()
    return launches_per_step(c, a.kernels_per_layer, a.outside_layers)


def binding_wall(memory_ceiling: float, math_ceiling: float, overhead_ceiling: float) -> str:
    """Which of the three ceilings is lowest: "memory", "math" or "overhead" (the first of them on
    a tie). The attainable rate is the lowest ceiling, min(memory, math, overhead)."""
    ceilings = {MEMORY: positive("memory_ceiling", memory_ceiling), MATH: positive("math_ceiling", math_ceiling),
                OVERHEAD: positive("overhead_ceiling", overhead_ceiling)}
    return min(ceilings, key=ceilings.get)


def longest_gap_s(device_seconds_per_step: float, kernels_per_step: float, target_seconds_per_step: float) -> float:
    """The longest gap g the GPU may lose between consecutive kernels of a step replayed as a graph
    (no host cost per launch) for the step to take no more than a target time T: the step takes
    D + n g, with D its device time and n its kernels, so g = (T - D) / n; 0 when D >= T. With T an
    eager rival's host time, n_f x t, it is the gap below which the graph wins; with T = D / s, the
    gap that keeps the graph at the share s of its memory ceiling."""
    room = (positive("target_seconds_per_step", target_seconds_per_step)
            - positive("device_seconds_per_step", device_seconds_per_step))
    return max(0.0, room) / positive("kernels_per_step", kernels_per_step)


# ---- the batch below which the host is the wall ---------------------------------------------------

def overhead_bound_batch(host_seconds_per_step: float, weight_bytes: float, sequence_bytes: float,
                         bandwidth_bytes_per_s: float, flops_per_token: float, peak_flop_per_s: float) -> float:
    """B_o, the batch below which the host's time per step is the wall. The host needs n x t per
    step whatever the batch; the GPU needs (W + B x s) / BW to move the step's bytes, with
    s = K x L + A the bytes each sequence brings, and B x F / P for its math. The host binds while
    it is the slowest of the three:

        n x t > (W + B x s) / BW   and   n x t > B x F / P,
        so  B < B_o = min((n x t x BW - W) / s,  n x t x P / F).

    0 where n x t <= W / BW: the host has issued a whole step before the GPU has read the weights,
    and binds at no batch."""
    host = positive("host_seconds_per_step", host_seconds_per_step)
    W, s = positive("weight_bytes", weight_bytes), positive("sequence_bytes", sequence_bytes)
    bw, P = positive("bandwidth_bytes_per_s", bandwidth_bytes_per_s), positive("peak_flop_per_s", peak_flop_per_s)
    by_memory = (host * bw - W) / s
    return max(0.0, min(by_memory, host * P / positive("flops_per_token", flops_per_token)))


# ---- one step on a time axis: the host's launches against the GPU's kernels ------------------------

OUTSIDE = "outside the layers"
#: where a layer's weights sit among the kernels of each part of ``data/overhead.toml``, in launch
#: order: a matrix's name, "norm" (the norm's weight vector, applied by its last kernel),
#: "attention" (the step's cache read and attention math), or None for a kernel that moves only
#: activations. A part whose count differs from its list keeps the named kernels last.
_LAYER_SLOTS = {
    "norm_before_attention": [None] * 7 + ["norm"],
    "qkv_projections": ["q", "k", "v"],
    "attention": [None, None, "attention"],
    "output_projection": [None, "o"],
    "norm_before_mlp": [None] * 7 + ["norm"],
    "mlp": ["gate", "up", None, None, "down"],
}


@dataclass(frozen=True)
class StepKernel:
    """One kernel of an eager decode step: the part of ``data/overhead.toml`` it belongs to (or
    ``OUTSIDE``), the bytes it moves and the FLOPs it does, for the whole batch."""

    part: str
    bytes: float
    flops: float

    def seconds(self, peak_flop_per_s: float, bandwidth_bytes_per_s: float) -> float:
        """Its time on the GPU by the book's model: max(bytes / BW, FLOPs / P)."""
        return max(self.bytes / positive("bandwidth_bytes_per_s", bandwidth_bytes_per_s),
                   self.flops / positive("peak_flop_per_s", peak_flop_per_s))


def _slots(part: str, count: int) -> list:
    slots = _LAYER_SLOTS.get(part, [])
    if len(slots) == count:
        return list(slots)
    named = [s for s in slots if s is not None]
    if count >= len(named):
        return [None] * (count - len(named)) + named
    return named[:count - 1] + [tuple(named[count - 1:])]   # fewer kernels than weights: the last carries the rest


def eager_step_kernels(c: Config, batch: float = 1, context_tokens: float = 0.0, weight_precision: str = "BF16",
                       kv_precision: str = "BF16", activation_precision: str = "BF16") -> tuple[StepKernel, ...]:
    """The n kernels of one eager decode step of a dense model (``eager_launches_per_step``), in
    launch order, each with its bytes and FLOPs. The step's bytes are the book's
    (``generation.decode_step_bytes_by_part``), placed where they are read: each attention and MLP
    matrix on its product (q, k, v, o; gate, up, down, the MLP's bytes in thirds), each norm's
    weights on the norm's last kernel, a layer's share of the cache B x K x L and of attention's
    math on its attention kernel, the output head on a kernel after the layers, the embedding rows
    on the first kernel, and the other activations B x A spread evenly over all n kernels. A
    product does 2 FLOPs per weight per sequence. The kernels outside the layers are one before
    them (the embedding lookup) and the rest after (the final norm, the output head, then the
    small ones). So the bytes sum to ``decode_point(...).bytes`` and the FLOPs to B x F."""
    from inferlimits.arithmetic.generation import attention_flops_per_token, decode_step_bytes_by_part, weights_read_per_step  # noqa: PLC0415

    if c.is_moe or c.uses_mla:
        raise ValueError("c must be a dense model with standard attention: the eager kernel counts of "
                         "data/overhead.toml are those of a Llama-style layer")
    B = positive("batch", batch)
    a = launch_assumptions()
    part_bytes = decode_step_bytes_by_part(c, B, context_tokens, weight_precision, kv_precision, activation_precision)
    read = weights_read_per_step(c, B)
    layers = c.num_hidden_layers
    h, q_out = c.hidden_size, c.num_attention_heads * c.head_dim_qk
    kv_out = c.num_key_value_heads * c.head_dim_qk
    attention = {"q": h * q_out, "k": h * kv_out, "v": h * kv_out, "o": q_out * h}   # weights per layer
    mlp = (read.matrices - layers * sum(attention.values())) / layers / 3
    norms = 2 * layers + 1
    per_weight = part_bytes["attention projections"] / (layers * sum(attention.values()))   # bytes of one weight
    # bytes and FLOPs of each named slot, for one layer (or the step, outside the layers)
    load = {name: (per_weight * w, 2 * B * w) for name, w in attention.items()}
    load.update({name: (part_bytes["MLP"] / layers / 3, 2 * B * mlp) for name in ("gate", "up", "down")})
    load["norm"] = (part_bytes["norms and biases"] / norms, 2 * B * read.vectors / norms)
    load["attention"] = (part_bytes["KV cache"] / layers, B * attention_flops_per_token(c, context_tokens) / layers)
    load["LM head"] = (part_bytes["LM head"], 2 * B * read.vocabulary)
    load["embedding"] = (part_bytes["embedding rows"], 0.0)

    def kernel(part: str, slot) -> tuple[str, float, float]:
        names = slot if isinstance(slot, tuple) else (() if slot is None else (slot,))
        return part, sum(load[s][0] for s in names), sum(load[s][1] for s in names)

    layer = [kernel(g.part, slot) for g in a.per_layer for slot in _slots(g.part, g.count)]
    outside = int(a.outside_layers)
    before = [kernel(OUTSIDE, "embedding")][:outside]
    after = [kernel(OUTSIDE, s) for s in (["norm", "LM head"] + [None] * (outside - 3))[:max(0, outside - 1)]]
    steps = before + layer * layers + after
    placed = sum(b for _, b, _ in steps)
    expected = part_bytes["attention projections"] + part_bytes["MLP"] + part_bytes["norms and biases"] \
        + part_bytes["LM head"] + part_bytes["KV cache"] + part_bytes["embedding rows"]
    if not math.isclose(placed, expected, rel_tol=1e-9):
        raise ValueError("the kernel parts of data/overhead.toml do not place every weight of c "
                         "(a part with weights is missing, or there are too few kernels outside the layers)")
    spread = part_bytes["other activations"] / len(steps)
    return tuple(StepKernel(part, b + spread, f) for part, b, f in steps)


@dataclass(frozen=True)
class StepTimeline:
    """One decode step on a time axis, in seconds from its start: when the host issues each launch
    and when the GPU runs each kernel, in launch order."""

    launches: tuple[tuple[float, float], ...]   # (start, end) of each launch on the host
    kernels: tuple[tuple[float, float], ...]    # (start, end) of each kernel on the GPU

    @property
    def host_s(self) -> float:
        """The host's time for the step's launches."""
        return self.launches[-1][1]

    @property
    def busy_s(self) -> float:
        """The GPU's time running kernels, their times added."""
        return sum(end - start for start, end in self.kernels)

    @property
    def step_s(self) -> float:
        """The step ends when both its last launch and its last kernel are done."""
        return max(self.host_s, self.kernels[-1][1])

    @property
    def idle_share(self) -> float:
        """The share of the step in which the GPU runs no kernel: 1 - busy / step."""
        return 1 - self.busy_s / self.step_s


def launch_timeline(kernel_seconds: Sequence[float], seconds_per_launch: float, graph: bool = False) -> StepTimeline:
    """A step's n kernels of the given GPU times, issued by a host that spends t on each launch.

    Eager: launch i takes the host from i x t to (i + 1) x t, and kernel i starts when its launch
    is done and the kernel before it has finished, max((i + 1) x t, end of kernel i - 1): the GPU
    runs each kernel as it arrives and waits, idle, for the next. CUDA Graph: one launch from 0 to
    t, then every kernel back to back. The model counts no time on the GPU between two kernels.
    So an eager step takes at least n x t, and a graph step t + the sum of the kernel times."""
    times = [non_negative("kernel_seconds", k) for k in _sequence("kernel_seconds", kernel_seconds)]
    t = positive("seconds_per_launch", seconds_per_launch)
    launches = ((0.0, t),) if graph else tuple((i * t, (i + 1) * t) for i in range(len(times)))
    kernels, end = [], 0.0
    for i, k in enumerate(times):
        start = max(t if graph else (i + 1) * t, end)
        end = start + k
        kernels.append((start, end))
    return StepTimeline(launches, tuple(kernels))


# ---- measuring dispatch on this machine ----------------------------------------------------------

def _median_seconds(fn: Callable[[], object], repeats: int = 5) -> float:
    """Run ``fn`` ``repeats`` times (after one warm-up run) and return the median wall time, which
    one slow repeat cannot move much."""
    n = whole("repeats", repeats)
    fn()
    times = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


@dataclass(frozen=True)
class DispatchSweep:
    """One array multiplied elementwise by another, the same arithmetic done as ``total // k``
    numpy calls of k elements each, for several k, and as one call. Seconds are medians, measured
    on this machine."""

    total_elements: int
    elements_per_call: tuple[int, ...]
    loop_seconds: tuple[float, ...]
    one_call_seconds: float

    def calls(self, k: int) -> int:
        return self.total_elements // k

    def slowdown(self, k: int) -> float:
        """How many times longer the loop of k-element calls takes than one call."""
        return self.loop_seconds[self.elements_per_call.index(k)] / self.one_call_seconds

    def fit(self) -> tuple[float, float]:
        """(seconds per call, seconds per element) of the model time = calls x c + elements x e,
        fitted to every loop and the one call by least squares on relative error."""
        return fit_call_overhead([self.calls(k) for k in self.elements_per_call] + [1],
                                 [self.total_elements] * (len(self.elements_per_call) + 1),
                                 list(self.loop_seconds) + [self.one_call_seconds])


def fit_call_overhead(calls: Sequence[float], elements: Sequence[float], seconds: Sequence[float]) -> tuple[float, float]:
    """Fit time = calls x c + elements x e to measured times (each row weighted by 1 / time, so a
    short run counts as much as a long one); return (c, e) in seconds, neither below zero."""
    rows = [_numbers(name, v) for name, v in (("calls", calls), ("elements", elements), ("seconds", seconds))]
    if len({len(r) for r in rows}) != 1 or len(rows[0]) < 2:
        raise ValueError("calls, elements and seconds must have the same length, at least 2")
    n, e, t = (np.asarray(r) for r in rows)
    a = np.column_stack([n / t, e / t])
    (c, per_element), *_ = np.linalg.lstsq(a, np.ones_like(t), rcond=None)
    return max(float(c), 0.0), max(float(per_element), 0.0)


def _numbers(name: str, values: object) -> list[float]:
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise ValueError(f"{name} must be a sequence of numbers; got {values!r}")
    return [positive(name, v) for v in values]


def dispatch_sweep(total_elements: int = 2**15, elements_per_call: tuple[int, ...] = (1, 4, 16, 64, 256, 1024, 4096),
                   repeats: int = 5) -> DispatchSweep:
    """Measure the same elementwise product of two float64 arrays of ``total_elements`` as a Python
    loop of numpy calls on slices of each size in ``elements_per_call``, and as one call.

    Remembered for the session: the same arguments give the same measurement back (restart the
    kernel to measure afresh), so a chapter's figure and its relation checks show one measurement."""
    total = whole("total_elements", total_elements)
    sizes = tuple(whole("elements_per_call", k) for k in _sequence("elements_per_call", elements_per_call))
    if any(total % k for k in sizes):
        raise ValueError(f"elements_per_call must divide total_elements ({total}); got {sizes}")
    return _measure(total, sizes, whole("repeats", repeats))


@cache
def _measure(total: int, sizes: tuple[int, ...], repeats: int) -> DispatchSweep:
    rng = np.random.default_rng(0)
    a, b, out = rng.random(total), rng.random(total), np.empty(total)

    def loop(k: int) -> None:
        for s in range(0, total, k):
            np.multiply(a[s:s + k], b[s:s + k], out=out[s:s + k])

    one = _median_seconds(lambda: np.multiply(a, b, out=out), repeats)
    looped = tuple(_median_seconds(lambda k=k: loop(k), repeats) for k in sizes)
    return DispatchSweep(total, sizes, looped, one)


def _sequence(name: str, values: object) -> tuple:
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or not values:
        raise ValueError(f"{name} must be a non-empty sequence of whole numbers; got {values!r}")
    return tuple(values)
