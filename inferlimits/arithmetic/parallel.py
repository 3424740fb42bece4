"""One model served by several GPUs: tensor, pipeline, expert and data parallelism, each with its
bytes, its math and the fourth term it brings, communication.

Notation as in ``generation``, and G GPUs, T tensor-parallel degree, M a message's bytes, alpha
the fixed time of one collective (``collective_latency_s``), BW_link what one GPU sends one way
over its link (``hardware.Link``), h the hidden size, n the layers.

In a plain implementation a collective inside a decode step does not overlap the kernels around
it: the next layer needs its result. So a step on each GPU takes at least max(math, memory) +
communication, every term at its ideal rate: the ceiling of an engine that does not overlap. One
that overlaps one micro-batch's communication with another's math, or fuses the all-reduce into
the kernels beside it, could approach max(math, memory, communication); real steps are slower
than either. Every split assumes the
work divides evenly (no straggler GPU). Under tensor parallelism the activations do not all split:
every GPU repeats the norms and residual adds on the whole hidden state
(``activations.tensor_parallel_activation_share``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from inferlimits.data import datafiles
from inferlimits.arithmetic.activations import tensor_parallel_activation_share
from inferlimits.arithmetic.generation import (COMPUTE_BOUND, MEMORY_BOUND, DecodePoint, _first_crossing,
                                               experts_touched_per_layer, weight_bytes_read_per_step)
from inferlimits.data.hardware import Accelerator
from inferlimits.arithmetic.kvcache import Fit, fit
from inferlimits.data.models import Config, cached_tokens, kv_bytes_per_token, routed_experts_read, weight_bytes, weights_bytes
from inferlimits.arithmetic.precision import crossover_on, decode_on, prefill_math_rate, prefill_on
from inferlimits.data.units import bytes_per_element, non_negative, positive, whole

COMMUNICATION_BOUND = "communication-bound"
MICRO = 1e-6
#: Tensor-parallel degrees within one server: beyond eight, the GPUs of most platforms talk over a
#: network, which the book does not model.
TENSOR_PARALLEL_DEGREES = (1, 2, 4, 8)
#: GPUs one server joins over its own link (NVLink, Infinity Fabric or PCIe): eight in an HGX or
#: DGX board and on AMD's platforms.
SERVER_GPUS = 8
#: Parts whose link joins more GPUs than one server: a GB200 NVL72 rack joins 72 GPUs, on 18 trays,
#: through NVLink switch trays, each at the part's full link rate (jax-ml/scaling-book gpus.md,
#: commit 1a55377a: "72 GPUs in a single NVLink domain with full 900GB/s of GPU to GPU bandwidth").
#: A GB300 NVL72 rack is built the same way (ai-dynamo/aiconfigurator gb300.yaml, commit 095f58a5:
#: "num_gpus_per_rack: 72", "NVLink via NVSwitch within rack" at 900 GB/s per GPU each way).
NVLINK_DOMAIN_GPUS = {"B200 (GB200)": 72, "B300 (GB300)": 72}
#: A GB200 NVL72 rack's compute trays (flat servers that slide into the rack) and the GPUs on each:
#: two GB200 boards of one Grace CPU and two B200s each (NVIDIA GB200 NVL Multi-Node Tuning Guide,
#: "Understanding Your Grace-Blackwell Systems": "GB200 72x1 contains one rack with 72 GPUs.
#: Reference configuration: 18x 1RU Compute trays (4 GPUs per compute tray). 9x 1RU NVL72 NVLink
#: Switch trays."). 18 x 4 is the rack's 72 in ``NVLINK_DOMAIN_GPUS``.
NVL72_COMPUTE_TRAYS = 18
NVL72_GPUS_PER_TRAY = 4


@datafiles.cached
def _collectives() -> dict:
    return datafiles.load("collectives.toml")


def collective_latency_s(link_kind: str, gpus: int = 2) -> float:
    """alpha: the time of one small all-reduce among ``gpus`` GPUs of one server over a link of
    ``link_kind`` (``data/collectives.toml``, an assumption read from serving engines' own kernels;
    where it depends on the GPU count, the entry for the fewest GPUs that holds ``gpus``)."""
    G = whole("gpus", gpus)
    table = _collectives()["latency"]
    kinds = {k: v for k, v in table.items() if isinstance(v, (int, float, dict))}
    value = datafiles.lookup(kinds, "link_kind", link_kind)
    if isinstance(value, dict):
        counts = sorted(int(k) for k in value if k.isdigit())
        holds = [n for n in counts if n >= G]
        if not holds:
            raise ValueError(f"gpus: the book has no {link_kind} latency for more than {counts[-1]} GPUs; got {G}")
        value = value[str(holds[0])]
    return value * MICRO


def link_domain_gpus(a: Accelerator) -> int:
    """The most GPUs that reach one another over ``a``'s own link rather than a network: its
    NVLink domain, 72 for the GB200 and the GB300 in an NVL72 rack (``NVLINK_DOMAIN_GPUS``), one
    server's eight otherwise (``SERVER_GPUS``). Tensor and expert parallelism at the link's rate stay
    inside it."""
    return NVLINK_DOMAIN_GPUS.get(a.name, SERVER_GPUS)


def all_reduce_time_s(message_bytes: float, gpus: int, link_bytes_per_s: float, latency_s: float) -> float:
    """An all-reduce of an M-byte message over T GPUs: alpha + 2 (T - 1) / T x M / BW_link (each
    GPU sends, one way, 2 (T - 1) / T of the message in a ring: nccl-tests' "bus bandwidth");
    zero for one GPU, which has nothing to exchange."""
    T = whole("gpus", gpus)
    M = non_negative("message_bytes", message_bytes)
    if T == 1:
        return 0.0
    return non_negative("latency_s", latency_s) + 2 * (T - 1) / T * M / positive("link_bytes_per_s", link_bytes_per_s)


def all_gather_time_s(message_bytes: float, gpus: int, link_bytes_per_s: float, latency_s: float) -> float:
    """Gathering an M-byte result that T GPUs hold a T-th each: alpha + (T - 1) / T x M / BW_link;
    zero for one GPU."""
    T = whole("gpus", gpus)
    if T == 1:
        return 0.0
    return (non_negative("latency_s", latency_s)
            + (T - 1) / T * non_negative("message_bytes", message_bytes) / positive("link_bytes_per_s", link_bytes_per_s))


def send_time_s(message_bytes: float, link_bytes_per_s: float, latency_s: float) -> float:
    """One GPU sending M bytes to the next: alpha + M / BW_link."""
    return non_negative("latency_s", latency_s) + non_negative("message_bytes", message_bytes) / positive(
        "link_bytes_per_s", link_bytes_per_s)


def cache_share(c: Config, gpus: int) -> float:
    """The share of each sequence's KV cache one of T tensor-parallel GPUs holds: its KV heads,
    ceil(n_kv / T) / n_kv, so 1 / T while T divides the heads and 1 / n_kv once T passes them (each
    head is then kept on T / n_kv GPUs). MLA's latent serves every head: each GPU keeps all of it."""
    T = whole("gpus", gpus)
    if c.uses_mla:
        return 1.0
    heads = c.num_key_value_heads or c.num_attention_heads
    return math.ceil(heads / T) / heads


def all_reduces_per_step(c: Config) -> int:
    """Tensor parallelism's all-reduces in one forward pass: one after the input embedding (split
    over the vocabulary, each GPU looks up the tokens of its share), then two per layer, after
    attention's output projection and after the MLP's down projection (Megatron-LM's split):
    2 n + 1."""
    return 2 * c.num_hidden_layers + 1


def moe_layers(c: Config) -> int:
    return sum(c.layer_is_moe(i) for i in range(c.num_hidden_layers))


@dataclass(frozen=True)
class ParallelStep:
    """A decode step of ``batch`` sequences spread over ``gpus`` GPUs as ``scheme`` says. ``math_s``,
    ``memory_s`` and ``communication_s`` are one GPU's (one stage's, for a pipeline) per step;
    ``rounds`` is how many such steps pass between two tokens of one sequence (a pipeline's stages
    take turns; 1 otherwise). A step takes max(math, memory) + communication."""

    scheme: str
    gpus: int
    batch: float
    math_s: float
    memory_s: float
    communication_s: float
    weight_bytes_per_gpu: float   # what each GPU stores
    cache_bytes_per_gpu: float    # what each GPU stores of the caches, all sequences
    fits: bool
    rounds: float = 1.0

    @property
    def step_s(self) -> float:
        """One GPU's step: max(math, memory) + communication."""
        return max(self.math_s, self.memory_s) + self.communication_s

    @property
    def token_interval_s(self) -> float:
        """The time between two tokens of one sequence."""
        return self.rounds * self.step_s

    @property
    def per_user(self) -> float:
        """Each sequence's tokens/s."""
        return 1.0 / self.token_interval_s

    @property
    def aggregate(self) -> float:
        """Every sequence's tokens together, per second (all GPUs)."""
        return self.batch / self.token_interval_s

    @property
    def per_gpu(self) -> float:
        return self.aggregate / self.gpus

    @property
    def wall(self) -> str:
        """The largest of the three terms."""
        if self.communication_s > max(self.math_s, self.memory_s):
            return COMMUNICATION_BOUND
        return COMPUTE_BOUND if self.math_s > self.memory_s else MEMORY_BOUND


def _activation_bytes(activation_precision: str) -> float:
    return bytes_per_element(activation_precision, "activation_precision")


def _fits(a: Accelerator, stored: float, cache: float) -> bool:
    """Fit first, on each GPU: its weights and its caches within its usable memory."""
    return fit(a.capacity_bytes, stored, cache, 1, 1).fits


def tensor_parallel_communication_s(a: Accelerator, c: Config, gpus: int, batch: float = 1,
                                    activation_precision: str = "BF16", logits_tokens: float | None = None) -> float:
    """The communication of one tensor-parallel forward pass over ``batch`` tokens on T GPUs of
    ``a``: 2 n + 1 all-reduces of the B x h activations (``all_reduces_per_step``) and one gather
    of the logits of the tokens that are sampled (the output head is split over the vocabulary;
    ``logits_tokens``, default every token of the pass), (2 n + 1) t_allreduce(B h) + t_gather(B V);
    zero on one GPU."""
    T = whole("gpus", gpus)
    B = positive("batch", batch)
    sampled = B if logits_tokens is None else non_negative("logits_tokens", logits_tokens)
    act = _activation_bytes(activation_precision)
    if T == 1:
        return 0.0
    link, alpha = a.link.bytes_per_s_among(T), collective_latency_s(a.link.kind, T)
    return (all_reduces_per_step(c) * all_reduce_time_s(B * c.hidden_size * act, T, link, alpha)
            + all_gather_time_s(sampled * c.vocab_size * act, T, link, alpha))


def tensor_parallel_fit(a: Accelerator, c: Config, gpus: int, batch: float = 1, context_tokens: float = 0.0,
                        weight_precision: str = "BF16", kv_precision: str = "BF16") -> Fit:
    """Fit first, on each of T tensor-parallel GPUs of ``a``: a T-th of the stored weights and
    ``cache_share`` of every sequence's cache, W_stored / T + B x s x K x L, within its usable
    memory (on one GPU, ``kvcache.fit``)."""
    T = whole("gpus", gpus)
    return fit(a.capacity_bytes, weight_bytes(c, weight_precision) / T,
               kv_bytes_per_token(c, kv_precision) * cache_share(c, T), batch,
               cached_tokens(c, non_negative("context_tokens", context_tokens)))


def tensor_parallel_read_bytes(c: Config, gpus: int, point: DecodePoint,
                               tokens_per_sequence: int = 1) -> tuple[float, float, float]:
    """What one of T GPUs reads in a pass that ``point`` describes on one GPU (every token of the
    pass, ``tokens_per_sequence`` for each sequence): its T-th of the weights, its share of each
    sequence's cache, read once however many of the sequence's tokens attend to it, and its share
    of the activations, which do not all split (``activations.tensor_parallel_activation_share``):
    (W / T, s x B K L, B A_T)."""
    T, q = whole("gpus", gpus), whole("tokens_per_sequence", tokens_per_sequence)
    return (point.weight_bytes / T, point.cache_bytes / q * cache_share(c, T),
            point.activation_bytes * tensor_parallel_activation_share(c, "decode", T))


def tensor_parallel_on(a: Accelerator, c: Config, gpus: int, batch: float = 1, context_tokens: float = 0.0,
                       weight_precision: str = "BF16", kv_precision: str = "BF16", math_precision: str = "BF16",
                       activation_precision: str = "BF16", tokens_per_sequence: int = 1) -> ParallelStep:
    """Decode on T GPUs of ``a`` in tensor parallelism. Each GPU holds and reads 1 / T of the
    weights, ``cache_share`` of every cache, does 1 / T of the math and moves A_T of each token's
    activations (``tensor_parallel_read_bytes``); the embedding and every layer's two products add
    all-reduces of the batch's hidden states (B x h x 2 bytes in BF16) and the step one gather of
    the logits (B x vocabulary): step = max(B F / (T P), (W / T + B (s K L + A_T)) / BW)
    + (2 n + 1) t_allreduce(B h) + t_gather(B V), so the ceilings are
    B x BW / (W / T + B (s K L + A_T)) and T P / F. With ``tokens_per_sequence`` q > 1 each
    sequence checks q tokens in the pass (speculative decoding): q times the math, activations and
    messages, each cache still read once."""
    T = whole("gpus", gpus)
    q = whole("tokens_per_sequence", tokens_per_sequence)
    B = positive("batch", batch)
    point = decode_on(a, c, B * q, context_tokens, weight_precision, kv_precision, math_precision,
                      activation_precision=activation_precision)
    comm = tensor_parallel_communication_s(a, c, T, point.batch, activation_precision)
    memory = sum(tensor_parallel_read_bytes(c, T, point, q)) / a.bandwidth_bytes_per_s
    held = tensor_parallel_fit(a, c, T, B, context_tokens, weight_precision, kv_precision)
    return ParallelStep("tensor", T, B, point.batch / (T * point.math_ceiling), memory, comm, held.weight_bytes,
                        held.cache_bytes, held.fits)


def tensor_parallel_prefill_crossover(a: Accelerator, c: Config, gpus: int, weight_precision: str = "BF16",
                                      kv_precision: str = "BF16", math_precision: str = "BF16") -> float:
    """The prompt length from which one of T GPUs' share of a prefill is paced by its math:
    F_prefill / (T P) against (W / T + S (s K + A_pre,T)) / BW, the all-reduces apart (they add
    to either); on one GPU, ``precision.crossover_on``. The cache does not split as the weights
    do, nor all the activations, so the crossover moves up with T."""
    T = whole("gpus", gpus)
    if T == 1:
        return crossover_on(a, c, weight_precision, kv_precision, math_precision)
    kv, act = cache_share(c, T), tensor_parallel_activation_share(c, "prefill", T)

    def memory_bound(S: float) -> bool:
        p = prefill_on(a, c, S, weight_precision, kv_precision, math_precision)
        math_s = p.flops / (T * prefill_math_rate(a, c, S, weight_precision, math_precision))
        return math_s < (p.weight_bytes / T + p.cache_bytes * kv + p.activation_bytes * act) / a.bandwidth_bytes_per_s

    return _first_crossing(memory_bound)


def pipeline_on(a: Accelerator, c: Config, stages: int, batch: float = 1, context_tokens: float = 0.0,
                micro_batches: int | None = None, weight_precision: str = "BF16", kv_precision: str = "BF16",
                math_precision: str = "BF16", activation_precision: str = "BF16") -> ParallelStep:
    """Decode on P GPUs in pipeline parallelism: each holds n / P consecutive layers. The batch
    goes through in m micro-batches of B / m sequences (default: m = P, or B when B < P); a stage
    works on one micro-batch at a time, then sends its hidden states to the next (alpha + b h x 2
    bytes). A sequence's next token waits until its micro-batch has passed every stage and every
    other micro-batch has had its turn: max(P, m) stage steps. With one sequence a pipeline is no
    faster than one GPU reading the whole model (P stages of 1 / P each); it holds more."""
    P = whole("stages", stages)
    B = positive("batch", batch)
    m = micro_batches if micro_batches is not None else min(P, max(1, math.floor(B)))
    m = whole("micro_batches", m)
    if m > B:
        raise ValueError(f"micro_batches must not exceed the batch ({B:g}); got {m}")
    b = B / m
    point = decode_on(a, c, b, context_tokens, weight_precision, kv_precision, math_precision,
                      activation_precision=activation_precision)
    hop = send_time_s(b * c.hidden_size * _activation_bytes(activation_precision), a.link.bytes_per_s_among(2),
                      collective_latency_s(a.link.kind, 2)) if P > 1 else 0.0
    stored = weight_bytes(c, weight_precision) / P
    cache = B * kv_bytes_per_token(c, kv_precision) * cached_tokens(c, context_tokens) / P
    return ParallelStep("pipeline", P, B, b / (P * point.math_ceiling), point.bytes / P / a.bandwidth_bytes_per_s,
                        hop, stored, cache, _fits(a, stored, cache), rounds=max(P, m))


def network_bytes_per_s() -> float:
    """What one GPU sends one way to another server over its own network card
    (``data/collectives.toml``, [network])."""
    return _collectives()["network"]["gb_s"] * 1e9


def measured_exchanges_s(gpus: int = SERVER_GPUS) -> tuple[float, float]:
    """A published expert-parallel decode exchange, (dispatch, combine) in seconds: DeepEP's
    low-latency kernels on ``gpus`` GPUs, 128 tokens on each (``data/collectives.toml``,
    [[all_to_all]]; rows for 8 and 64 GPUs, both sent over the network cards). ValueError for a
    GPU count the data has no row for."""
    G = whole("gpus", gpus)
    rows = {row["gpus"]: row for row in _collectives()["all_to_all"]}
    if G not in rows:
        raise ValueError(f"gpus: no measured all-to-all on {G} GPUs; the data has {sorted(rows)}")
    return rows[G]["dispatch_us"] * MICRO, rows[G]["combine_us"] * MICRO


def remote_destinations(c: Config, gpus: int) -> float:
    """The other GPUs a token's hidden state goes to under expert parallelism: each of the G - 1
    others unless none of its k experts is there, (G - 1) (1 - C(E - E / G, k) / C(E, k)) with the
    E experts of a layer spread evenly and chosen uniformly; one copy per GPU, however many of its
    experts that GPU holds (as DeepEP's normal kernels send them; its low-latency kernels send
    one copy per expert, k in all, counting local ones)."""
    G = whole("gpus", gpus)
    E, k = c.routed_experts, c.num_experts_per_tok
    if E % G:
        raise ValueError(f"gpus must divide the {E} routed experts evenly; got {G}")
    return (G - 1) * (1 - math.comb(E - E // G, k) / math.comb(E, k))


def exchange_time_s(a: Accelerator, c: Config, gpus: int, batch: float = 1, activation_precision: str = "BF16") -> float:
    """One all-to-all of an MoE layer under expert parallelism on G GPUs of ``a`` (dispatch, or
    combine): each GPU sends the hidden states of its B / G tokens to the other GPUs that hold
    their experts, once to each (``remote_destinations``), alpha + B / G x r x h x 2 / BW_link,
    at the all-reduce's fixed cost, which no measurement here gives for an all-to-all over NVLink
    (``measured_exchanges_s`` bounds it); zero on one GPU."""
    G = whole("gpus", gpus)
    B = positive("batch", batch)
    if G == 1:
        return 0.0
    sent = B / G * remote_destinations(c, G) * c.hidden_size * _activation_bytes(activation_precision)
    return send_time_s(sent, a.link.bytes_per_s_among(G), collective_latency_s(a.link.kind, G))


def expert_parallel_on(a: Accelerator, c: Config, gpus: int, batch: float = 1, context_tokens: float = 0.0,
                       weight_precision: str = "BF16", kv_precision: str = "BF16", math_precision: str = "BF16",
                       activation_precision: str = "BF16", exchange_s: float | None = None) -> ParallelStep:
    """An MoE model's decode on G GPUs in expert parallelism, in the style of SGLang's data-parallel
    attention with expert parallelism (after DeepSeek's serving of V3): each GPU holds
    E / G of every layer's routed experts and a whole copy of the rest (attention, shared experts,
    embeddings), and decodes B / G of the sequences with its copy (data-parallel attention). Each
    MoE layer dispatches every token's hidden state to the GPUs of its experts and combines the
    results back, two all-to-alls of ``exchange_s`` each (None: ``exchange_time_s``, the book's
    model): communication 2 n_moe t_exchange. Per GPU: memory = (W_rest + W_experts(B) / G
    + B / G (K L + A)) / BW, math B F / (G P)."""
    if not c.is_moe:
        raise ValueError("expert parallelism needs a mixture-of-experts model; this config has no routed experts")
    G = whole("gpus", gpus)
    B = positive("batch", batch)
    total = decode_on(a, c, B, context_tokens, weight_precision, kv_precision, math_precision,
                      activation_precision=activation_precision)
    routed = weights_bytes(routed_experts_read(c, experts_touched_per_layer(c, B)), weight_precision)
    rest = weight_bytes_read_per_step(c, weight_precision, B) - routed
    memory = (rest + routed / G + (total.cache_bytes + total.activation_bytes) / G) / a.bandwidth_bytes_per_s
    each = (exchange_time_s(a, c, G, B, activation_precision) if exchange_s is None
            else non_negative("exchange_s", exchange_s))
    comm = 2 * moe_layers(c) * each if G > 1 else 0.0
    experts_stored = weights_bytes(routed_experts_read(c, c.routed_experts), weight_precision)
    stored = weight_bytes(c, weight_precision) - experts_stored + experts_stored / G
    cache = B / G * kv_bytes_per_token(c, kv_precision) * cached_tokens(c, context_tokens)
    return ParallelStep("expert", G, B, B / (G * total.math_ceiling), memory, comm, stored, cache,
                        _fits(a, stored, cache))


def data_parallel_on(a: Accelerator, c: Config, replicas: int, batch: float = 1, context_tokens: float = 0.0,
                     weight_precision: str = "BF16", kv_precision: str = "BF16", math_precision: str = "BF16",
                     activation_precision: str = "BF16") -> ParallelStep:
    """G whole copies of the model, one per GPU, each decoding B / G of the sequences: no
    communication, each user as fast as on one GPU with B / G sequences, G times the tokens."""
    G = whole("replicas", replicas)
    B = positive("batch", batch)
    point = decode_on(a, c, B / G, context_tokens, weight_precision, kv_precision, math_precision,
                      activation_precision=activation_precision)
    stored = weight_bytes(c, weight_precision)
    cache = B / G * kv_bytes_per_token(c, kv_precision) * cached_tokens(c, context_tokens)
    return ParallelStep("data", G, B, point.batch / point.math_ceiling, point.bytes / a.bandwidth_bytes_per_s, 0.0,
                        stored, cache, _fits(a, stored, cache))


def tensor_parallel_tie_batch(weight_bytes: float, bandwidth_bytes_per_s: float, gpus: int,
                              replica_sequence_bytes: float, split_sequence_bytes: float, collectives: int,
                              latency_s: float, seconds_per_sequence: float) -> float:
    """The batch B_x at which one tensor-parallel group of T GPUs and T replicas make as many tokens
    per second, both memory-bound. A replica's step reads W + (B / T) s (``data_parallel_on``); each
    GPU of the group reads W / T + B s_T and then talks, n_c alpha + beta B (``tensor_parallel_on``:
    n_c collectives of fixed cost alpha, and beta seconds of link time per sequence). Both make B
    tokens a step, so the group makes more exactly while B < B_x:

        B_x = ((1 - 1/T) W / BW - n_c alpha) / ((s_T - s / T) / BW + beta).

    The numerator is what the split saves on the weights less the talk's fixed cost; the
    denominator what each sequence costs the group and not the replicas. 0 when the fixed cost eats
    the whole saving (the replicas win at every batch); ``math.inf`` when a sequence costs the group
    no more than the replicas (the group wins at every batch)."""
    T = whole("gpus", gpus, 2)
    bw = positive("bandwidth_bytes_per_s", bandwidth_bytes_per_s)
    saving = (1.0 - 1.0 / T) * positive("weight_bytes", weight_bytes) / bw \
        - whole("collectives", collectives) * non_negative("latency_s", latency_s)
    per_sequence = ((positive("split_sequence_bytes", split_sequence_bytes)
                     - positive("replica_sequence_bytes", replica_sequence_bytes) / T) / bw
                    + non_negative("seconds_per_sequence", seconds_per_sequence))
    if saving <= 0:
        return 0.0
    return saving / per_sequence if per_sequence > 0 else math.inf
