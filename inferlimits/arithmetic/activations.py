"""Activation traffic: the bytes a forward pass moves between its kernels, besides the weights and
the KV cache.

A forward pass is a chain of kernels. Each reads its inputs from HBM and writes its outputs back,
for the next kernel to read. On a GPU the intermediates do not stay in the on-chip cache between
two matrix products: the next product streams its weights through that cache and pushes them out.
So every kernel boundary costs HBM traffic, and the book counts it, per token:

    A = sum over the kernels of (numbers read + numbers written) x bytes per number.

Which kernels exist depends on what the framework fuses. The book assumes the kernel boundaries of
a serving engine such as vLLM (``vllm/model_executor/models/llama.py`` and ``deepseek_v2.py``):

* the residual add and the RMSNorm after it are one kernel;
* the query, key and value projections are one matrix product, and so are the gate and up
  projections of the MLP (for MLA: the query's and the latent's down-projections);
* the rotary embedding rewrites the query and key in place (Qwen3 first normalizes each head's
  query and key, one more kernel);
* SiLU and the elementwise product are one kernel;
* attention is one fused kernel (FlashAttention-style): it reads queries, keys and values once and
  writes its output once, never the score matrix. In decode its keys and values come from the KV
  cache, whose bytes are counted in K, not here. MLA decodes in the absorbed form (attention over
  the cached latent, with W_UK folded into the query and W_UV applied after), and prefills in the
  expanded form;
* an MoE layer reads each token's vector once per expert it is routed to (and once for the shared
  experts), and writes one output per expert, which a last kernel sums.

Outside the layers: the embedding lookup copies a token's row of the table (that row is the only
part of the table a token touches, so the book counts it here rather than with the weights), the
final norm, and in decode the output head writes one logit per vocabulary entry, which sampling
reads. In prefill only the last prompt position gets logits, so the head is left out per token.

This is an estimate of what kernels of this fusion level move, not a bound: fusing more (a norm
into the next product, SiLU into the gate product's epilogue) moves less, and at very small
batches some intermediates can stay in the on-chip cache. For a single token it is a few MB
against gigabytes of weights; for thousands of prompt tokens it is as large as the weights.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from inferlimits.data.models import Config, _layer_index
from inferlimits.data.units import bytes_per_element, whole

PHASES = ("decode", "prefill")
#: What a kernel does: multiply the token by weights, attend over the cache or the prompt, or work
#: number by number (norms, rotary embeddings, SiLU, copies). Products and attention can be
#: compute-bound; elementwise kernels never are, so their traffic cannot hide under math.
PRODUCT, ATTENTION, ELEMENTWISE = "product", "attention", "elementwise"
KINDS = (PRODUCT, ATTENTION, ELEMENTWISE)
#: the label of a routed expert's kernels; their products are a part of their own in
#: ``activation_bytes_by_part`` (their rows are the tokens routed to each expert, not the batch)
ROUTED = "routed expert"
#: the parts a step's kernels fall into when counted one kind after another
PARTS = (PRODUCT, ROUTED, ATTENTION, ELEMENTWISE)


@dataclass(frozen=True)
class Kernel:
    """One kernel of a forward pass: the numbers it reads and writes for each token (activations
    only: weights and cache are counted elsewhere), what it is, and its kind (``KINDS``).
    ``whole_reads`` and ``whole_writes`` are the part of them that every GPU moves in full under
    tensor parallelism (``tensor_parallel_activation_share``); the rest splits."""

    name: str
    reads: int
    writes: int
    what: str
    kind: str = ELEMENTWISE
    whole_reads: int = 0
    whole_writes: int = 0

    @property
    def numbers(self) -> int:
        return self.reads + self.writes


def _phase(phase: str) -> str:
    if phase not in PHASES:
        raise ValueError(f"phase must be one of {', '.join(PHASES)}; got {phase!r}")
    return phase


def _attention_kernels(c: Config, phase: str) -> list[Kernel]:
    h, nh = c.hidden_size, c.num_attention_heads
    if c.uses_mla:
        r_kv, rope, q_out = c.kv_lora_rank, c.qk_rope_head_dim, nh * c.head_dim_qk
        v_out = nh * c.head_dim_v
        down = (c.q_lora_rank or 0) + r_kv + rope
        # under tensor parallelism the down-projections, their norms and the latent are kept whole
        out = [Kernel("latent projections", h, down, "the query's and the latent's down-projections, one product", PRODUCT,
                      h, down)]
        if c.q_lora_rank:
            out += [Kernel("query norm", c.q_lora_rank, c.q_lora_rank, "RMSNorm of the query's latent", ELEMENTWISE,
                           c.q_lora_rank, c.q_lora_rank),
                    Kernel("query up-projection", c.q_lora_rank, q_out, "the query's latent to every head", PRODUCT,
                           c.q_lora_rank)]
        else:
            out[0] = Kernel("latent projections", h, q_out + r_kv + rope, "the query and the latent, one product", PRODUCT,
                            h, r_kv + rope)
        out += [Kernel("latent norm", r_kv, r_kv, "RMSNorm of the key-value latent", ELEMENTWISE, r_kv, r_kv),
                Kernel("rotary embedding", nh * rope + rope, nh * rope + rope, "position of queries and the shared key",
                       ELEMENTWISE, rope, rope),
                Kernel("cache write", r_kv + rope, 0, "the latent and the rotary key, copied into the cache", ELEMENTWISE,
                       r_kv + rope)]
        if phase == "prefill":
            expanded = nh * (c.qk_nope_head_dim + c.head_dim_v)
            out += [Kernel("key-value up-projection", r_kv, expanded, "the latent expanded to every head's key and value", PRODUCT,
                           r_kv),
                    Kernel("attention", 2 * q_out + v_out, v_out, "fused attention over the prompt (expanded form)", ATTENTION)]
        else:
            latent_q = nh * (r_kv + rope)
            out += [Kernel("query absorption", nh * c.qk_nope_head_dim, nh * r_kv, "W_UK folded into each head's query", PRODUCT),
                    Kernel("attention", latent_q, nh * r_kv, "fused attention over the cached latent (absorbed form)", ATTENTION),
                    Kernel("value up-projection", nh * r_kv, v_out, "W_UV applied to the attended latent", PRODUCT)]
        return out + [Kernel("output projection", v_out, h, "attention's output back to the hidden size", PRODUCT, 0, h)]
    q, kv = nh * c.head_dim_qk, c.num_key_value_heads * c.head_dim_qk
    reads = q + 2 * kv if phase == "prefill" else q  # in decode, keys and values come from the cache
    norms = [Kernel("query and key norms", q + kv, q + kv, "RMSNorm of every head's query and key (Qwen3)")] if c.qk_norm else []
    return [Kernel("QKV projection", h, q + 2 * kv, "query, key and value projections, one product", PRODUCT, h),
            *norms,
            Kernel("rotary embedding", q + kv, q + kv, "position of queries and keys, in place"),
            Kernel("cache write", 2 * kv, 0, "the new keys and values, copied into the cache"),
            Kernel("attention", reads, q, "fused attention (FlashAttention-style)", ATTENTION),
            Kernel("output projection", q, h, "attention's output back to the hidden size", PRODUCT, 0, h)]


def _gated_mlp(h: int, inner: int, label: str) -> list[Kernel]:
    return [Kernel(f"{label} gate and up", h, 2 * inner, "gate and up projections, one product", PRODUCT, h),
            Kernel(f"{label} SiLU and multiply", 2 * inner, inner, "one fused elementwise kernel"),
            Kernel(f"{label} down", inner, h, "down projection", PRODUCT, 0, h)]


def layer_kernels(c: Config, layer: int, phase: str = "decode") -> list[Kernel]:
    """The kernels of decoder layer ``layer`` in ``phase`` ("decode" or "prefill"), with the numbers
    each reads and writes per token under the book's fusion assumptions (see the module)."""
    _phase(phase)
    h = c.hidden_size
    norm = "residual add and RMSNorm, one kernel: reads the sub-block's output and the residual, writes both"
    out = [Kernel("norm before attention", 2 * h, 2 * h, norm, ELEMENTWISE, 2 * h, 2 * h), *_attention_kernels(c, phase),
           Kernel("norm before MLP", 2 * h, 2 * h, norm, ELEMENTWISE, 2 * h, 2 * h)]
    if not c.layer_is_moe(_layer_index(c, layer)):
        return out + _gated_mlp(h, c.intermediate_size, "MLP")
    routed, shared = c.num_experts_per_tok, c.shared_experts
    out.append(Kernel("router", h, c.routed_experts, "a score for every expert", PRODUCT, h, c.routed_experts))
    for _ in range(routed):
        out += _gated_mlp(h, c.expert_width, ROUTED)
    if shared:
        out += _gated_mlp(h, shared * c.expert_width, "shared experts")
    summed = (routed + (1 if shared else 0)) * h
    return out + [Kernel("combine experts", summed, h, "the experts' outputs summed", ELEMENTWISE, summed, h)]


def outer_kernels(c: Config, phase: str = "decode") -> list[Kernel]:
    """The kernels outside the layers, per token: the embedding row, the final norm, and in decode
    the output head's logits and the sampling that reads them."""
    h, v = c.hidden_size, c.vocab_size
    out = [Kernel("embedding lookup", h, h, "the token's row of the table, copied out", ELEMENTWISE, h, h),
           Kernel("final norm", h, h, "RMSNorm after the last layer", ELEMENTWISE, h, h)]
    if _phase(phase) == "decode":
        out += [Kernel("output head", h, v, "one logit per vocabulary entry", PRODUCT, h),
                Kernel("sampling", v, 1, "reads the logits, picks a token", ELEMENTWISE, v, 1)]
    return out


def activation_numbers_per_token(c: Config, phase: str = "decode", kinds: tuple[str, ...] = KINDS) -> int:
    """Numbers one token reads and writes between kernels in one forward pass: every layer's
    kernels plus those outside the layers (only the kernels of the given ``kinds``)."""
    unknown = set(kinds) - set(KINDS)
    if unknown or not kinds:
        raise ValueError(f"kinds must be some of {', '.join(KINDS)}; got {kinds!r}")
    return _numbers(c, _phase(phase), frozenset(kinds))


@cache
def _numbers(c: Config, phase: str, kinds: frozenset[str]) -> int:
    """``activation_numbers_per_token``, remembered per config: figures redraw it for every point."""
    every = [k for i in range(c.num_hidden_layers) for k in layer_kernels(c, i, phase)] + outer_kernels(c, phase)
    return sum(k.numbers for k in every if k.kind in kinds)


def activation_bytes_per_token(c: Config, phase: str = "decode", activation_precision: str = "BF16",
                               kinds: tuple[str, ...] = KINDS) -> float:
    """A, the activation bytes one token moves in one forward pass, in ``phase``:
    (numbers read + numbers written, over every kernel) x bytes per activation. ``kinds`` keeps
    only some kernels, e.g. (ELEMENTWISE,) for the traffic that no math can hide."""
    return activation_numbers_per_token(c, phase, kinds) * bytes_per_element(activation_precision,
                                                                             "activation_precision")


@cache
def _numbers_by_part(c: Config, phase: str) -> dict[str, int]:
    every = [k for i in range(c.num_hidden_layers) for k in layer_kernels(c, i, phase)] + outer_kernels(c, phase)
    out = dict.fromkeys(PARTS, 0)
    for k in every:
        part = ROUTED if k.kind == PRODUCT and k.name.startswith(ROUTED) else k.kind
        out[part] += k.numbers
    return out


def activation_bytes_by_part(c: Config, phase: str = "decode", activation_precision: str = "BF16") -> dict[str, float]:
    """A split by ``PARTS``: the weight products (the routed experts' apart), attention, and the
    elementwise kernels; the values sum to ``activation_bytes_per_token``."""
    b = bytes_per_element(activation_precision, "activation_precision")
    return {part: n * b for part, n in _numbers_by_part(c, _phase(phase)).items()}


@cache
def _whole_and_all(c: Config, phase: str) -> tuple[int, int]:
    every = [k for i in range(c.num_hidden_layers) for k in layer_kernels(c, i, phase)] + outer_kernels(c, phase)
    return sum(k.whole_reads + k.whole_writes for k in every), sum(k.numbers for k in every)


def tensor_parallel_activation_share(c: Config, phase: str = "decode", gpus: int = 1) -> float:
    """The share of A that one of T tensor-parallel GPUs moves, (whole + (all - whole) / T) / all,
    summed over the kernels; 1 on one GPU. Under Megatron-LM's split every GPU reads the whole
    hidden vector into each product split by columns (QKV, gate and up), writes a whole partial sum
    out of each product split by rows (attention's output, down) before the all-reduce, and repeats
    the norms, residual adds, embedding row and sampling; the heads and the MLP's inner width, and
    what lives in them, split T ways. MLA's down-projections and latent are kept whole."""
    T = whole("gpus", gpus)
    kept, every = _whole_and_all(c, _phase(phase))
    return (kept + (every - kept) / T) / every
