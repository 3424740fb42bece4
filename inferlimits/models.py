"""Models, read from ``data/models.toml`` as their config.json fields.

Parameter counts and KV-cache bytes per token are derived here from those fields, never stored:
grouped-query attention (GQA), multi-head latent attention (MLA), tied or untied embeddings,
QKV biases, and mixture-of-experts (MoE) layers with total and active counts.
"""
from __future__ import annotations

from dataclasses import dataclass, fields

from . import datafiles
from .units import WHOLE_MODEL_FORMATS, bytes_per_element, non_negative, positive


@dataclass(frozen=True)
class Config:
    """The config.json fields the arithmetic needs, under their config.json names.

    MLA and MoE fields are ``None`` for models without them.
    """

    hidden_size: int
    intermediate_size: int
    num_hidden_layers: int
    num_attention_heads: int
    vocab_size: int
    num_key_value_heads: int | None = None  # not used by MLA
    tie_word_embeddings: bool = False
    head_dim: int | None = None
    attention_bias: bool = False
    qkv_bias: bool = False
    sliding_window: int | None = None
    max_position_embeddings: int | None = None
    # multi-head latent attention (DeepSeek)
    q_lora_rank: int | None = None
    kv_lora_rank: int | None = None
    qk_nope_head_dim: int | None = None
    qk_rope_head_dim: int | None = None
    v_head_dim: int | None = None
    # mixture of experts (DeepSeek)
    moe_intermediate_size: int | None = None
    n_routed_experts: int | None = None
    n_shared_experts: int | None = None
    num_experts_per_tok: int | None = None
    first_k_dense_replace: int = 0
    moe_layer_freq: int = 1
    topk_method: str | None = None

    @property
    def uses_mla(self) -> bool:
        return self.kv_lora_rank is not None

    @property
    def is_moe(self) -> bool:
        return self.n_routed_experts is not None

    @property
    def head_dim_qk(self) -> int:
        """Width of one head's query and key vectors."""
        if self.uses_mla:
            return self.qk_nope_head_dim + self.qk_rope_head_dim
        return self.head_dim or self.hidden_size // self.num_attention_heads

    @property
    def head_dim_v(self) -> int:
        """Width of one head's value vector."""
        if self.uses_mla:
            return self.v_head_dim
        return self.head_dim_qk

    def layer_is_moe(self, layer: int) -> bool:
        """DeepSeek's rule: the first ``first_k_dense_replace`` layers keep a dense MLP."""
        return (self.is_moe and layer >= self.first_k_dense_replace
                and layer % self.moe_layer_freq == 0)


@dataclass(frozen=True)
class Model:
    """A model: its config, the context length its publisher supports (``config.json``'s
    ``max_position_embeddings`` is only the range its rotary position embedding is set up for,
    which can be larger), and
    the parameter counts its publisher states (for comparison only)."""

    name: str
    family: str
    source: str
    config: Config
    context_length: int
    context_length_source: str
    published_params: float
    published_params_exact: bool
    published_params_source: str
    published_active_params: float | None = None


_CONFIG_FIELDS = {f.name for f in fields(Config)}


def _from_row(name: str, row: dict) -> Model:
    cfg = {k: v for k, v in row["config"].items() if k in _CONFIG_FIELDS}
    return Model(
        name=name,
        family=row["family"],
        source=row["source"],
        config=Config(**cfg),
        context_length=int(row["context_length"]),
        context_length_source=row["context_length_source"],
        published_params=(row["published_params"] if "published_params" in row
                          else row["published_params_billions"] * 1e9),
        published_params_exact="published_params" in row,
        published_params_source=row["published_params_source"],
        published_active_params=(row["published_active_params_billions"] * 1e9
                                 if "published_active_params_billions" in row else None),
    )


@datafiles.cached
def models() -> dict[str, Model]:
    """All models in the data file, in file order, keyed by name."""
    return {name: _from_row(name, row) for name, row in datafiles.load("models.toml")["models"].items()}


def model(name: str) -> Model:
    """The model called ``name`` (as in the data file), or a ValueError listing the names."""
    return datafiles.lookup(models(), "model", name)


# ---- parameter counts -------------------------------------------------------------------------

def attention_params_per_layer(c: Config) -> int:
    """Weights of one attention block (projections, biases, MLA's internal norms)."""
    h, nh = c.hidden_size, c.num_attention_heads
    if c.uses_mla:
        q_out = nh * c.head_dim_qk
        q = h * q_out if c.q_lora_rank is None else h * c.q_lora_rank + c.q_lora_rank + c.q_lora_rank * q_out
        kv = (h * (c.kv_lora_rank + c.qk_rope_head_dim) + c.kv_lora_rank
              + c.kv_lora_rank * nh * (c.qk_nope_head_dim + c.v_head_dim))
        return q + kv + nh * c.v_head_dim * h
    q_out = nh * c.head_dim_qk
    kv_out = c.num_key_value_heads * c.head_dim_qk
    weights = h * q_out + 2 * h * kv_out + q_out * h
    biases = (q_out + 2 * kv_out if (c.qkv_bias or c.attention_bias) else 0) + (h if c.attention_bias else 0)
    return weights + biases


def _gated_mlp(hidden: int, inner: int) -> int:
    """A gated MLP: gate, up and down projections, 3 x hidden x inner."""
    return 3 * hidden * inner


def _layer_index(c: Config, layer: object) -> int:
    """``layer`` if it is a layer of ``c`` (0 to layers - 1), else a ValueError naming it."""
    if isinstance(layer, bool) or not isinstance(layer, int) or not 0 <= layer < c.num_hidden_layers:
        raise ValueError(f"layer must be a whole number from 0 to {c.num_hidden_layers - 1}; got {layer!r}")
    return layer


def mlp_params_per_layer(c: Config, layer: int, active_only: bool = False) -> int:
    """Weights of one layer's MLP; for an MoE layer, all experts or (``active_only``) the
    shared experts, the ones a token is routed to, and the router."""
    if not c.layer_is_moe(_layer_index(c, layer)):
        return _gated_mlp(c.hidden_size, c.intermediate_size)
    router = c.n_routed_experts * c.hidden_size + (c.n_routed_experts if c.topk_method == "noaux_tc" else 0)
    routed = c.num_experts_per_tok if active_only else c.n_routed_experts
    return router + (routed + c.n_shared_experts) * _gated_mlp(c.hidden_size, c.moe_intermediate_size)


def embedding_params(c: Config) -> int:
    """The input embedding table, vocab x hidden."""
    return c.vocab_size * c.hidden_size


def _count(c: Config, active_only: bool) -> int:
    layers = sum(attention_params_per_layer(c) + mlp_params_per_layer(c, i, active_only)
                 + 2 * c.hidden_size  # two RMSNorm weight vectors
                 for i in range(c.num_hidden_layers))
    head = 0 if c.tie_word_embeddings else c.vocab_size * c.hidden_size
    return layers + embedding_params(c) + head + c.hidden_size  # + final norm


def routed_expert_params(c: Config) -> int:
    """The weights of one routed expert of one MoE layer: a gated MLP, 3 x hidden x moe width."""
    if not c.is_moe:
        raise ValueError("c must be a mixture-of-experts config; this model has no routed experts")
    return _gated_mlp(c.hidden_size, c.moe_intermediate_size)


def param_count(c: Config) -> int:
    """Every stored weight: layers + embedding + untied LM head + final norm."""
    return _count(c, active_only=False)


def active_param_count(c: Config) -> int:
    """Weights one token passes through: for an MoE model, only its routed experts count.
    Equal to ``param_count`` for a dense model."""
    return _count(c, active_only=True)


def multiplied_params_per_token(c: Config) -> int:
    """N, the weights one token multiplies: every active weight except the input embedding table,
    of which a token only copies its own row (no arithmetic). A table tied to the output head is
    multiplied in full there, so it stays in. This is the count behind F = 2N and behind the
    weight bytes a decode step reads."""
    return active_param_count(c) - (0 if c.tie_word_embeddings else embedding_params(c))


# ---- KV cache ------------------------------------------------------------------------------

def kv_bytes_per_token(c: Config, kv_precision: str = "BF16") -> float:
    """Cache bytes one token adds to one sequence.

    Standard and grouped-query attention: K = 2 x layers x kv_heads x head_dim x bytes.
    MLA: K = layers x (kv_lora_rank + qk_rope_head_dim) x bytes (one latent and one shared RoPE key).
    """
    b = bytes_per_element(kv_precision, "kv_precision")
    if c.uses_mla:
        return c.num_hidden_layers * (c.kv_lora_rank + c.qk_rope_head_dim) * b
    return 2 * c.num_hidden_layers * c.num_key_value_heads * c.head_dim_qk * b


def cached_tokens(c: Config, context_tokens: float) -> float:
    """Tokens a sequence keeps in its cache: all of them, or at most the sliding window."""
    n = non_negative("context_tokens", context_tokens)
    return min(n, c.sliding_window) if c.sliding_window else n


@datafiles.cached
def kept_precision() -> str:
    """The precision a quantized checkpoint keeps its embedding table and output head in
    (``data/serving.toml``: quantization recipes convert only the decoder's linear layers)."""
    return datafiles.load("serving.toml")["quantization"]["kept_precision"]


def vocabulary_params(c: Config) -> int:
    """The weights of the two vocabulary-sized tables, the input embedding and the output head
    (one table when they are tied)."""
    return embedding_params(c) * (1 if c.tie_word_embeddings else 2)


def quantized_bytes(params: float, vocabulary: float, weight_precision: str) -> float:
    """Bytes of ``params`` weights of which ``vocabulary`` belong to the embedding table or the
    output head: at ``weight_precision``, except that a format lighter than the kept precision
    (``kept_precision``, BF16) leaves those vocabulary tables at the kept precision:
    (params - vocabulary) x b + vocabulary x b_kept; llama.cpp's formats quantize every weight."""
    n, v = positive("params", params), non_negative("vocabulary", vocabulary)
    if v > n:
        raise ValueError(f"vocabulary ({v:g}) cannot exceed params ({n:g})")
    b = bytes_per_element(weight_precision, "weight_precision")
    kept = bytes_per_element(kept_precision(), "kept_precision")
    return n * b if b >= kept or weight_precision in WHOLE_MODEL_FORMATS else (n - v) * b + v * kept


def weight_bytes(c: Config, weight_precision: str = "BF16") -> float:
    """Bytes of all stored weights, what memory must hold: parameters x bytes per weight, with the
    embedding table and the output head kept in BF16 when the rest is quantized."""
    return quantized_bytes(param_count(c), vocabulary_params(c), weight_precision)
