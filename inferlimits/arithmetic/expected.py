"""The expected rate of a run: the book's physics at achievable rates, with the fixed costs and the
communication the chapters teach, and a handful of parameters fitted to the published runs.

A ceiling (``measured.compare``) says what no run can beat. The expected rate says what a good run
gets. Both count the same bytes and FLOPs; the expected rate differs in four ways, each one a term
a chapter derives:

- **Achievable rates.** Memory delivers a share ``e`` of its datasheet bandwidth, one share per
  device family ("an H100 delivers N% of its bandwidth to decode"); the tensor cores a share
  ``m`` of their dense rate, one for 16-bit math and one for narrower formats.
- **Kernels in order** (chapters 3 and 4). A step is a sequence of kernels, so their times add:
  the weight products, max((W + A_products) / (e BW), F_linear / (m P)); attention,
  max((K L B + A_attention) / (e BW), F_attention / (m16 P16)); the elementwise kernels, whose
  activations no math hides, A_elementwise / (e BW).
- **Fixed costs** (chapter 6): a cost per step, one per layer, one more per layer in an eager
  engine, and one per sequence per step (the scheduler's and the sampler's work).
- **Communication** (chapter 9): the book's collective costs, tensor-parallel all-reduces or
  expert-parallel all-to-alls, times one fitted factor.

A run is a plan of passes (a prefill, decode steps, draft steps), each counted so many times; the
measured figure is the tokens the plan yields over its time, or its time. The parameters are fitted
by least squares on the logarithms of the rates, with a weak pull toward round prior values so that
a family with no runs keeps a sensible share (``PRIOR``), never per run. Their accuracy is measured by
leave-one-source-out cross-validation: each source's runs are predicted by a fit that never saw them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

import numpy as np

from inferlimits.arithmetic.activations import (ATTENTION, ELEMENTWISE, PRODUCT, activation_bytes_per_token,
                                                layer_kernels, outer_kernels)
from inferlimits.arithmetic.generation import (attention_flops_per_token, decode_flops_per_token,
                                               prefill_attention_flops, prefill_flops)
from inferlimits.arithmetic.parallel import exchange_time_s, moe_layers, tensor_parallel_communication_s
from inferlimits.arithmetic.speculative import EXAMPLE_ACCEPTANCE, expected_tokens_per_step
from inferlimits.data.hardware import Accelerator, device
from inferlimits.data.measurements import Measurement
from inferlimits.data.models import Config, cached_tokens, embedding_params, kv_bytes_per_token, model

#: device families, by the start of the device's name; processors by their vendor
FAMILIES = (("A100", "NVIDIA Ampere"), ("H100", "NVIDIA Hopper"), ("H200", "NVIDIA Hopper"), ("H20", "NVIDIA Hopper"),
            ("B200", "NVIDIA Blackwell"), ("B300", "NVIDIA Blackwell"), ("L4", "NVIDIA Ada"),
            ("RTX 4090", "NVIDIA Ada"), ("MI3", "AMD Instinct"), ("Apple", "Apple silicon"))
CPU = "server CPU"
#: the math rates a product can run at, by the width of its inputs (attention runs at the 16-bit rate)
MATH = {"16-bit": ("BF16", "FP16", "unstated"), "8-bit": ("FP8", "INT8"), "4-bit": ("FP4", "FP6")}
#: how an engine issues a step's kernels, which sets its fixed cost per layer
ENGINES = {"compiled": "in a compiled engine: its kernels replayed as a graph or issued by a runtime (launch gaps)",
           "eager": ("in an engine that launches each kernel as it goes: an eager Python framework (transformers, "
                     "PyTorch eager, vLLM with enforce_eager) or llama.cpp's own loop")}
#: the most sequences an engine decodes together per GPU when it chooses the batch itself: vLLM's
#: default max_num_seqs (256), here per GPU of the model's copy
ENGINE_MAX_BATCH = 256
#: the usable share of memory an engine fills when it chooses the batch (its caches beside the weights)
ENGINE_MEMORY_SHARE = 0.9


def family(a: Accelerator) -> str:
    """The device family whose achievable bandwidth a run on ``a`` shares."""
    for prefix, name in FAMILIES:
        if a.name.startswith(prefix):
            return name
    return CPU


# ---- the parameters -------------------------------------------------------------------------

@dataclass(frozen=True)
class Parameter:
    name: str
    meaning: str
    prior: float     # a round value the fit is pulled toward, weakly
    unit: str        # "share" or "s"


def _article(name: str) -> str:
    """The indefinite article before a family's name, as it is read aloud ("an NVIDIA", "a server")."""
    return "an" if name[0] in "AEIOU" or name.startswith("NVIDIA") else "a"


@cache
def parameters() -> tuple[Parameter, ...]:
    """The model's parameters, in the order of its vector."""
    fams = sorted({name for _, name in FAMILIES} | {CPU})
    return (*(Parameter(f"bandwidth, {f}", f"the share of its datasheet bandwidth {_article(f)} {f} device delivers to inference",
                        0.75, "share") for f in fams),
            *(Parameter(f"math, {bits}", f"the share of the dense {bits} tensor rate the matrix products reach", 0.5,
                        "share") for bits in MATH),
            Parameter("per step", "the fixed cost of every forward pass in a compiled engine (launch, sync, sampling)",
                      2e-4, "s"),
            *(Parameter(f"per kernel, {mode}", f"the fixed cost of each kernel {ENGINES[mode]}", prior, "s")
              for mode, prior in (("compiled", 2e-6), ("eager", 1e-5))),
            Parameter("per sequence", "the scheduler's and the sampler's cost of each sequence in each step", 1e-5, "s"),
            Parameter("communication", "the factor on the book's collective costs (all-reduce, all-to-all)", 1.0,
                      "factor"))


@cache
def _share_mask() -> tuple[bool, ...]:
    return tuple(p.unit == "share" for p in parameters())


def _shares() -> np.ndarray:
    return np.array(_share_mask())


def values(theta: np.ndarray) -> np.ndarray:
    """The parameters from their fitted coordinates: a share (between 0 and 1) through the
    logistic function, a time or a factor through the exponential."""
    with np.errstate(over="ignore"):
        return np.where(_shares(), 1 / (1 + np.exp(-theta)), np.exp(theta))


def coordinates(v) -> np.ndarray:
    """The inverse of ``values``."""
    v = np.asarray(v, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(_shares(), np.log(v / (1 - v)), np.log(v))


def _index() -> dict[str, int]:
    return {p.name: i for i, p in enumerate(parameters())}


# ---- a run as a plan of passes ----------------------------------------------------------------

@dataclass(frozen=True)
class Pass:
    """One forward pass of one model instance: what it reads and computes, on how many devices."""

    weights: float          # bytes the weight products move: their weights, inputs and outputs
    cache: float            # bytes attention moves: the KV cache, queries and outputs
    activations: float      # bytes the elementwise kernels move, which no math hides
    linear_flops: float     # the weight products' math
    attention_flops: float  # attention's own math
    kernels: float          # kernels launched (a layer's routed experts as one grouped kernel)
    sequences: float
    communication_s: float  # at the book's collective costs
    bandwidth: float        # bytes/s of the devices together, datasheet
    peak: float             # FLOP/s of the products on the devices together, dense, datasheet
    peak16: float           # FLOP/s at 16 bits, which attention runs at
    family: str
    math: str               # the products' class in MATH
    engine: str


@dataclass(frozen=True)
class Plan:
    """What a run's figure is: ``scale`` x (sum of count x pass time) ** power (power -1 for a rate,
    +1 for a time), in the metric's own unit."""

    passes: tuple[tuple[float, Pass], ...]
    scale: float
    power: int


def _math(m: Measurement, a: Accelerator) -> tuple[float, str]:
    """The dense rate the row's products run at, and its class in ``MATH``."""
    p = m.math_precision
    for bits, names in MATH.items():
        if p in names and bits != "16-bit" and a.supports(p):
            return a.math_flops_per_s(p), bits
    return a.dense_bf16_flops_per_s, "16-bit"


def engine(m: Measurement) -> str:
    """How the run's engine issues its kernels (``ENGINES``): eager for llama.cpp's own loop, and
    where the row says so or its framework is named eager; else compiled."""
    if "llama.cpp" in m.framework:
        return "eager"
    if m.engine_mode:
        return m.engine_mode
    text = m.framework.lower()
    eager = "enforce_eager=true" in text or re.search(r"(?<!enforce_)eager", text)
    return "eager" if eager else "compiled"


def _instance(m: Measurement) -> int:
    """Devices that hold one copy of the model: the tensor (and pipeline) group, or every device
    where the experts are spread over them or the layout is not stated."""
    if m.ep or m.attention_dp or not m.tp:
        return m.gpus
    return m.tp * (m.pp or 1)


def _kv_precision(m: Measurement) -> str:
    if m.kv_precision != "unstated":
        return m.kv_precision
    return "FP8" if m.math_precision in ("FP8", "NVFP4", "MXFP4", "FP4") else "BF16"


def _pass(m: Measurement, c: Config, a: Accelerator, devices: int, sequences: float, tokens_per_sequence: float,
          context: float, prefill: bool) -> Pass:
    """One pass over ``sequences`` x ``tokens_per_sequence`` new tokens at ``context`` cached tokens
    (a prefill: ``tokens_per_sequence`` is the prompt)."""
    from inferlimits.arithmetic.measured import weights_read
    q = sequences * tokens_per_sequence
    peak, bits = _math(m, a)
    if prefill:
        attention = sequences * prefill_attention_flops(c, tokens_per_sequence)
        linear = sequences * prefill_flops(c, tokens_per_sequence) - attention
        cache = 0.0
    else:
        attention = q * attention_flops_per_token(c, context)
        linear = q * decode_flops_per_token(c, context) - attention
        cache = sequences * kv_bytes_per_token(c, _kv_precision(m)) * cached_tokens(c, context)
    if devices == 1:
        comm = 0.0
    elif c.is_moe and (m.ep or m.attention_dp):
        comm = 2 * moe_layers(c) * exchange_time_s(a, c, devices, q) if c.routed_experts % devices == 0 else 0.0
    else:
        comm = tensor_parallel_communication_s(a, c, devices, q, logits_tokens=sequences)
    phase = "prefill" if prefill else "decode"
    moved = {kind: q * activation_bytes_per_token(c, phase, kinds=(kind,)) for kind in (PRODUCT, ATTENTION, ELEMENTWISE)}
    return Pass(weights_read(m, c, q) + moved[PRODUCT], cache + moved[ATTENTION], moved[ELEMENTWISE],
                linear, attention, kernels_per_step(c), sequences, comm, devices * a.bandwidth_bytes_per_s,
                devices * peak, devices * a.dense_bf16_flops_per_s, family(a), bits, engine(m))


def _draft_pass(m: Measurement, c: Config, a: Accelerator, devices: int, sequences: float, context: float) -> Pass:
    """One drafting step for ``sequences`` sequences: a whole draft model's decode step, or for
    EAGLE and multi-token prediction one decoder layer of the target and its output head."""
    if m.speculative == "draft" and m.draft_model:
        return _pass(m, model(m.draft_model).config, a, devices, sequences, 1, context, False)
    target = _pass(m, c, a, devices, sequences, 1, context, False)
    head = embedding_params(c) * 2.0
    share = 1 / c.num_hidden_layers
    return Pass(target.weights * share + head, target.cache * share, target.activations * share,
                target.linear_flops * share + 2.0 * sequences * embedding_params(c), target.attention_flops * share,
                target.kernels * share, sequences, 0.0, target.bandwidth, target.peak, target.peak16, target.family, target.math, target.engine)


@cache
def kernels_per_step(c: Config) -> int:
    """The kernels of one forward pass in the book's list (``activations.layer_kernels``), a
    layer's routed experts counted once, as the grouped kernel an engine launches for them."""
    layers = sum(len({k.name for k in layer_kernels(c, i, "decode")}) for i in range(c.num_hidden_layers))
    return layers + len(outer_kernels(c, "decode"))


def nominal_s(p: Pass) -> float:
    """A pass's time at the datasheet rates, kernels in order, without fixed costs."""
    return (max(p.weights / p.bandwidth, p.linear_flops / p.peak) + max(p.cache / p.bandwidth, p.attention_flops / p.peak16)
            + p.activations / p.bandwidth)


def tokens_per_verify(m: Measurement) -> float:
    """Tokens a sequence gains per verify step: the published acceptance length, or from the
    acceptance a (or the book's assumed 0.7) over k drafted tokens; 1 without speculation."""
    if m.speculative == "none":
        return 1.0
    if m.acceptance_length:
        return m.acceptance_length
    return expected_tokens_per_step(m.acceptance or EXAMPLE_ACCEPTANCE, m.draft_tokens)


def engine_batch(m: Measurement, c: Config, a: Accelerator, devices: int) -> int:
    """The batch an engine chooses for itself: as many sequences of the run's length as fit beside
    the weights in its usable memory, at most ``ENGINE_MAX_BATCH`` per device."""
    from inferlimits.arithmetic.measured import stored_bytes
    length = max((m.input_tokens or 0) + (m.output_tokens or 0), 1)
    left = devices * a.capacity_bytes * ENGINE_MEMORY_SHARE - stored_bytes(m, c)
    per = kv_bytes_per_token(c, _kv_precision(m)) * cached_tokens(c, length)
    most = ENGINE_MAX_BATCH * devices
    return int(max(1, min(most, left // per if per else most)))


def plan(m: Measurement) -> Plan:
    """The passes that make up ``m``'s figure, and how the figure follows from their time."""
    c, a = model(m.model).config, device(m.accelerator)
    devices = _instance(m)
    replicas = max(1, m.gpus // devices)
    if m.serving == "disaggregated" and m.decode_workers:
        devices, replicas = m.decode_workers, 1
    S, n = m.input_tokens or 0, m.output_tokens or 0
    total = m.sequences if m.sequences is not None else replicas * engine_batch(m, c, a, devices)
    B = max(total / replicas, 1)
    L = S + n / 2
    k = m.draft_tokens or 0
    tau = tokens_per_verify(m)
    step = [(1.0, _pass(m, c, a, devices, B, 1 + k, L, False))]
    if k:
        step.append((float(k), _draft_pass(m, c, a, devices, B, L)))
    if m.metric == "ms_to_first_token":
        if m.batch:  # a static batch: every prompt of the batch read in one pass
            return Plan(((1.0, _pass(m, c, a, devices, B, S, 0, True)),), 1e3, 1)
        prompt = _pass(m, c, a, devices, 1, S, 0, True)
        if B == 1:
            return Plan(((1.0, prompt),), 1e3, 1)
        # among B requests in flight: a step in progress, the prompt's own prefill, and the share f of
        # the time the device spends on other prompts' prefills, which a new prompt waits behind
        # (f from the datasheet rates: C t_prefill / (C t_prefill + n t_step))
        busy = B * nominal_s(prompt)
        f = busy / (busy + max(n, 1) * nominal_s(step[0][1]))
        return Plan(((1.0 + f, prompt), *step), 1e3, 1)
    # a serving run mixes every arriving prompt's prefill into its decode steps; a run timed from
    # its prompts holds their prefill; a decode-only figure holds none
    mixed = m.serving != "disaggregated" and S > 0 and n > 0 and (
        m.prefill_in_time or m.batch is None or m.metric == "ms_end_to_end")
    if mixed:  # the whole run: the prefill gives the first token, n - 1 more in verify steps
        passes = [((n - 1) / tau * w, p) for w, p in step] + [(1.0, _pass(m, c, a, devices, B, S, 0, True))]
        tokens = B * n
    else:  # one step's worth: tau tokens per sequence
        passes = [(w / tau, p) for w, p in step]
        tokens = B
    if m.metric == "ms_end_to_end":
        return Plan(tuple(passes), 1e3, 1)
    if m.metric == "ms_per_output_token":
        return Plan(tuple(passes), 1e3 * B / tokens, 1)
    if m.metric == "tokens_per_s_per_user":
        return Plan(tuple(passes), tokens / B, -1)
    per_gpu = m.counted_gpus if m.metric == "tokens_per_s_per_gpu" else 1
    return Plan(tuple(passes), tokens * replicas / per_gpu, -1)


# ---- the model, vectorised over the runs -------------------------------------------------------

class Design:
    """Every run's plan as arrays, so that the fit can evaluate all of them at once."""

    def __init__(self, plans: list[Plan]):
        idx = _index()
        rows = [(i, w, p) for i, pl in enumerate(plans) for w, p in pl.passes]
        self.n = len(plans)
        self.row = np.array([r[0] for r in rows])
        self.weight = np.array([r[1] for r in rows], float)
        cols = ("weights", "cache", "activations", "linear_flops", "attention_flops", "kernels", "sequences",
                "communication_s", "bandwidth", "peak", "peak16")
        for col in cols:
            setattr(self, col, np.array([getattr(r[2], col) for r in rows], float))
        self.fam = np.array([idx[f"bandwidth, {r[2].family}"] for r in rows])
        self.math = np.array([idx[f"math, {r[2].math}"] for r in rows])
        self.math16 = idx["math, 16-bit"]
        self.per_kernel = np.array([idx[f"per kernel, {r[2].engine}"] for r in rows])
        self.gather = np.zeros((len(rows), self.n))  # pass -> run, times the pass's count
        self.gather[np.arange(len(rows)), self.row] = self.weight
        self.scale = np.array([pl.scale for pl in plans], float)
        self.power = np.array([pl.power for pl in plans], float)
        self.i = {name: idx[name] for name in ("per step", "per sequence", "communication")}

    def log_values(self, theta: np.ndarray) -> np.ndarray:
        """log of each run's figure under the parameters' coordinates ``theta`` (one vector, or a
        matrix with one vector per row, evaluated together)."""
        p = values(theta)
        bw = self.bandwidth * p[..., self.fam]
        peak = self.peak * p[..., self.math]
        i = self.i
        t = (np.maximum(self.weights / bw, self.linear_flops / peak)
             + np.maximum(self.cache / bw, self.attention_flops / (self.peak16 * p[..., self.math16, None]))
             + self.activations / bw + p[..., i["per step"], None] + self.kernels * p[..., self.per_kernel]
             + self.sequences * p[..., i["per sequence"], None]
             + p[..., i["communication"], None] * self.communication_s)
        return np.log(self.scale) + self.power * np.log(t @ self.gather)


#: how strongly each parameter is held to its prior, per unit of its coordinate (a residual of
#: 0.1 is a 10% miss of one run); the bandwidth shares firmly (BANDWIDTH_PRIOR_WEIGHT), because the
#: runs cannot tell a slower memory from the costs the model leaves out of large serving runs,
#: and a share fitted to those would misplace a single stream on the same device
PRIOR_WEIGHT = 0.2
BANDWIDTH_PRIOR_WEIGHT = 1.0
#: misses beyond this (in log units, about 20%) count linearly, not squared (Huber's loss), so that
#: a run the model cannot describe does not pull every parameter toward it
ROBUST = 0.2


def fit(design: Design, log_measured: np.ndarray, rounds: int = 4,
        start: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Least squares on log figures with Huber's loss (iteratively reweighted; Levenberg-Marquardt
    with a numeric Jacobian inside), and the weak prior: the fitted coordinates of the parameters
    (``values`` turns them into parameters), and their covariance. ``start``: where to begin (the
    prior by default); the result does not depend on it, only the time it takes."""
    prior = coordinates([p.prior for p in parameters()])
    theta = prior.copy() if start is None else start.copy()
    weight = np.ones(log_measured.size)
    for _ in range(rounds):
        theta, J, r = _least_squares(design, log_measured, prior, theta, np.sqrt(weight))
        miss = np.abs(design.log_values(theta) - log_measured)
        weight = np.where(miss <= ROBUST, 1.0, ROBUST / np.maximum(miss, 1e-12))
    n = log_measured.size
    dof = max(1, n - theta.size)
    sigma2 = float(r[:n] @ r[:n]) / dof
    return theta, sigma2 * np.linalg.pinv(J.T @ J)


@cache
def _prior_weights() -> tuple[float, ...]:
    return tuple(BANDWIDTH_PRIOR_WEIGHT if p.name.startswith("bandwidth") else PRIOR_WEIGHT for p in parameters())


def _least_squares(design, log_measured, prior, theta, root_weight, iterations: int = 60):
    held = np.array(_prior_weights())

    def residuals(th):  # one vector of coordinates, or one per row
        return np.concatenate([root_weight * (design.log_values(th) - log_measured), held * (th - prior)], axis=-1)

    r = residuals(theta)
    lam = 1e-2
    J = np.zeros((r.size, theta.size))
    nudge = 1e-6 * np.eye(theta.size)
    for _ in range(iterations):
        J = ((residuals(theta + nudge) - r) / 1e-6).T  # every column of the Jacobian at once
        A, g = J.T @ J, J.T @ r
        step, gain = np.zeros_like(theta), 0.0
        while lam <= 1e8:
            step = np.linalg.solve(A + lam * np.diag(np.diag(A) + 1e-12), -g)
            new = residuals(theta + step)
            if new @ new < r @ r:
                gain = (r @ r - new @ new) / (r @ r)
                theta, r, lam = theta + step, new, lam / 3
                break
            lam *= 4
        if lam > 1e8 or np.abs(step).max() < 1e-7 or gain < 1e-9:
            break
    return theta, J, r


def source_group(m: Measurement) -> str:
    """The publication a run comes from, for leaving whole sources out: the repository a source
    names first (owner/name), else a URL's site and path (a GitHub URL's repository), else a
    repository named anywhere, else the source's words."""
    s = m.source
    lead = re.match(r"([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)\s", s)  # a repository named first
    if lead and "://" not in lead.group(1):
        return lead.group(1)
    url = re.search(r"https?://([^\s,;)'\"]+)", s)
    if url:
        u = url.group(1).split("#")[0].split("?")[0].rstrip("/.")
        gh = re.match(r"github\.com/([^/]+/[^/]+)", u)
        return gh.group(1) if gh else u
    repo = re.search(r"\b([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)\b", s)
    return repo.group(1) if repo else s


def relative_error(log_predicted: np.ndarray, log_measured: np.ndarray) -> np.ndarray:
    """|predicted / measured - 1| for each run."""
    return np.abs(np.exp(log_predicted - log_measured) - 1)



# ---- fitted on the book's runs, scored on runs each fit never saw ----------------------------

CATEGORIES = ("batch 1", "batched", "first token", "MoE", "multi-GPU", "speculative")
#: the interval the predictions carry: the 10th to the 90th percentile of the cross-validated misses
INTERVAL = (0.1, 0.9)


def categories(m: Measurement) -> tuple[str, ...]:
    """The categories a run is scored in (a run may be in several)."""
    out = []
    if m.metric == "ms_to_first_token":
        out.append("first token")
    elif m.sequences == 1:
        out.append("batch 1")
    else:
        out.append("batched")
    if model(m.model).config.is_moe:
        out.append("MoE")
    if m.gpus > 1:
        out.append("multi-GPU")
    if m.speculative != "none":
        out.append("speculative")
    return tuple(out)


@dataclass(frozen=True)
class Fitted:
    """The model fitted to every run, and its cross-validated record."""

    keys: tuple[str, ...]
    theta: np.ndarray            # log parameters, fitted on every run
    cov: np.ndarray              # their covariance
    log_measured: np.ndarray
    log_fitted: np.ndarray       # in-sample
    log_cross: np.ndarray        # each run predicted by a fit without its source
    groups: tuple[str, ...]
    low_high: np.ndarray         # per run: the interval's log factors, from the other sources' misses

    def parameter_table(self) -> list[dict]:
        """Each parameter: its fitted value, the range one standard deviation either side, its
        unit, its meaning and the prior it is pulled toward."""
        sd = np.sqrt(np.clip(np.diag(self.cov), 0, None))
        v, lo, hi = values(self.theta), values(self.theta - sd), values(self.theta + sd)
        return [{"name": p.name, "value": float(x), "low": float(a), "high": float(b), "unit": p.unit,
                 "meaning": p.meaning, "prior": p.prior} for p, x, a, b in zip(parameters(), v, lo, hi)]

    def interval(self) -> tuple[float, float]:
        """The log factors of the 80% interval a prediction carries (``measured.predict``): the
        10th and 90th percentiles of every run's cross-validated miss, log(measured / predicted)."""
        return _interval(self.log_measured - self.log_cross)

    def errors(self) -> np.ndarray:
        return relative_error(self.log_cross, self.log_measured)

    def covered(self) -> np.ndarray:
        r = self.log_measured - self.log_cross
        return (r >= self.low_high[:, 0]) & (r <= self.low_high[:, 1])


def _interval(residuals: np.ndarray) -> tuple[float, float]:
    lo, hi = np.quantile(residuals, INTERVAL)
    return float(lo), float(hi)


def fit_runs(runs: list[Measurement]) -> Fitted:
    """Fit on ``runs``, then leave each source out in turn and predict its runs."""
    plans = [plan(m) for m in runs]
    y = np.log([float(m.value) for m in runs])
    design = Design(plans)
    theta, cov = fit(design, y)
    groups = tuple(source_group(m) for m in runs)
    cross = np.empty(len(runs))
    for g in dict.fromkeys(groups):
        out = np.array([x == g for x in groups])
        t, _ = fit(Design([p for p, o in zip(plans, out) if not o]), y[~out], start=theta)
        cross[out] = Design([p for p, o in zip(plans, out) if o]).log_values(t)
    resid = y - cross
    low_high = np.empty((len(runs), 2))
    for g in dict.fromkeys(groups):  # each source's interval from the other sources' misses
        out = np.array([x == g for x in groups])
        low_high[out] = _interval(resid[~out])
    return Fitted(tuple(m.key for m in runs), theta, cov, y, design.log_values(theta), cross, groups, low_high)


def scores(f: Fitted, runs: list[Measurement]) -> dict[str, dict]:
    """Cross-validated scores, over all runs and by category: how many runs, the median absolute
    error, the share within 25%, and the share inside its 80% interval."""
    err, cov = f.errors(), f.covered()
    cats = [categories(m) for m in runs]
    out = {}
    for name in ("all", *CATEGORIES):
        sel = np.array([name == "all" or name in c for c in cats])
        if sel.any():
            out[name] = {"runs": int(sel.sum()), "median error": float(np.median(err[sel])),
                         "within 25%": float(np.mean(err[sel] <= 0.25)),
                         "in the 80% interval": float(np.mean(cov[sel]))}
    return out


def main() -> None:
    """Print the fitted parameters and the cross-validated scores (``python -m inferlimits.arithmetic.expected``)."""
    from inferlimits.arithmetic.measured import fitted
    from inferlimits.data.measurements import measurements
    runs, f = list(measurements().values()), fitted()
    print(f"{len(runs)} published runs from {len(set(f.groups))} sources; each source predicted by a fit without it\n")
    print(f"{'':18s}{'runs':>6s}{'median error':>14s}{'within 25%':>12s}{'in 80% interval':>17s}")
    for name, s in scores(f, runs).items():
        print(f"{name:18s}{s['runs']:6d}{s['median error']:14.1%}{s['within 25%']:12.0%}{s['in the 80% interval']:17.0%}")
    print()
    for p in f.parameter_table():
        scale, unit = (1e6, " us") if p["unit"] == "s" else (1, "")
        print(f"{p['name']:28s} {p['value'] * scale:8.3g}{unit} ({p['low'] * scale:.3g}-{p['high'] * scale:.3g}{unit})"
              f"  {p['meaning']}")


if __name__ == "__main__":
    main()
