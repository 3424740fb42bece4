"""Models, read from ``data/models.toml`` as their config.json fields.

Parameter counts and KV-cache bytes per token are derived here from those fields, never stored:
grouped-query attention (GQA), multi-head latent attention (MLA), tied or untied embeddings,
QKV biases, and mixture-of-experts (MoE) layers with total and active counts.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from functools import cache

from inferlimits.data import datafiles
from inferlimits.data.units import bytes_per_element, non_negative, positive, storage_format


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
    # mixture of experts: DeepSeek's names (n_routed_experts, moe_intermediate_size, ...), Mixtral's
    # and gpt-oss's (num_local_experts; intermediate_size is the expert width), Qwen3's
    # (num_experts, moe_intermediate_size, decoder_sparse_step, mlp_only_layers)
    moe_intermediate_size: int | None = None
    n_routed_experts: int | None = None
    num_local_experts: int | None = None
    num_experts: int | None = None
    n_shared_experts: int | None = None
    num_experts_per_tok: int | None = None
    first_k_dense_replace: int = 0
    moe_layer_freq: int = 1
    decoder_sparse_step: int = 1
    mlp_only_layers: tuple[int, ...] = ()
    topk_method: str | None = None
    # which layers attend over a sliding window (gpt-oss: "sliding_attention" / "full_attention");
    # without it, a sliding_window applies to every layer (Mistral-7B-v0.1)
    layer_types: tuple[str, ...] = ()
    # Not config.json fields: what an architecture's code adds that config.json leaves implicit
    # (recorded in models.toml beside qkv_bias): Qwen3's RMSNorm of each head's query and key,
    # gpt-oss's per-head attention sinks and the biases of its router and experts.
    qk_norm: bool = False
    attention_sinks: bool = False
    router_bias: bool = False
    expert_bias: bool = False

    @property
    def uses_mla(self) -> bool:
        return self.kv_lora_rank is not None

    @property
    def routed_experts(self) -> int | None:
        """E, the routed experts of an MoE layer, whatever the config calls them (None: dense)."""
        return self.n_routed_experts or self.num_local_experts or self.num_experts

    @property
    def is_moe(self) -> bool:
        return self.routed_experts is not None

    @property
    def shared_experts(self) -> int:
        """Experts every token uses beside its routed ones (DeepSeek's); 0 where there are none."""
        return self.n_shared_experts or 0

    @property
    def expert_width(self) -> int:
        """The inner width of one expert: moe_intermediate_size, or intermediate_size in configs
        whose every MLP is an MoE layer and that have no separate field (Mixtral, gpt-oss)."""
        return self.moe_intermediate_size or self.intermediate_size

    @property
    def windowed_layers(self) -> int:
        """Layers whose cache keeps at most ``sliding_window`` tokens: those ``layer_types`` marks
        "sliding_attention", or every layer when the config gives a window without layer types."""
        if not self.sliding_window:
            return 0
        if not self.layer_types:
            return self.num_hidden_layers
        return sum(t == "sliding_attention" for t in self.layer_types)

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
        """Whether layer ``layer`` has an MoE MLP: DeepSeek's rule (the first
        ``first_k_dense_replace`` layers keep a dense MLP, then every ``moe_layer_freq``-th) and
        Qwen's (layers in ``mlp_only_layers`` are dense, the others every ``decoder_sparse_step``-th
        counting from one)."""
        return (self.is_moe and layer >= self.first_k_dense_replace and layer % self.moe_layer_freq == 0
                and layer not in self.mlp_only_layers and (layer + 1) % self.decoder_sparse_step == 0)


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
    #: whether the publisher's active count includes the input embedding table (Mistral's and
    #: Qwen's do; DeepSeek's and OpenAI's count what a token multiplies)
    published_active_includes_embedding: bool = False
    published_active_source: str | None = None
    #: the format the publisher's checkpoint stores the weights in (a format or a recipe)
    published_format: str = "BF16"
    published_checkpoint_gib: float | None = None
    published_checkpoint_source: str | None = None


_CONFIG_FIELDS = {f.name for f in fields(Config)}


def _from_row(name: str, row: dict) -> Model:
    cfg = {k: tuple(v) if isinstance(v, list) else v for k, v in row["config"].items() if k in _CONFIG_FIELDS}
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
        published_active_includes_embedding=bool(row.get("published_active_includes_embedding", False)),
        published_active_source=row.get("published_active_source"),
        published_format=row.get("published_format", "BF16"),
        published_checkpoint_gib=row.get("published_checkpoint_gib"),
        published_checkpoint_source=row.get("published_checkpoint_source"),
    )


@datafiles.cached
def models() -> dict[str, Model]:
    """All models in the data file, in file order, keyed by name."""
    return {name: _from_row(name, row) for name, row in datafiles.load("models.toml")["models"].items()}


def model(name: str) -> Model:
    """The model called ``name`` (as in the data file), or a ValueError listing the names."""
    return datafiles.lookup(models(), "model", name)


# ---- parameter counts, by the parts a checkpoint stores differently ---------------------------

#: The parts of a model's weights that a quantized checkpoint treats differently. The decoder's
#: matrices (attention projections, dense MLPs) and the experts' matrices take the checkpoint's
#: format (or two formats: gpt-oss keeps attention in BF16 and its experts in MXFP4); the
#: vocabulary tables (input embedding, output head), the MoE router and the vectors (norm weights,
#: biases, attention sinks) stay in the kept precision, 16 bits.
VOCABULARY, MATRICES, EXPERTS, ROUTER, VECTORS = "vocabulary", "matrices", "experts", "router", "vectors"
COMPONENTS = (VOCABULARY, MATRICES, EXPERTS, ROUTER, VECTORS)


@dataclass(frozen=True)
class Weights:
    """Weight counts by component (``COMPONENTS``): of a whole model, of what one token passes
    through, or of what one step over several tokens reads."""

    vocabulary: float = 0
    matrices: float = 0
    experts: float = 0
    router: float = 0
    vectors: float = 0

    @property
    def total(self) -> float:
        return self.vocabulary + self.matrices + self.experts + self.router + self.vectors

    def __add__(self, other: "Weights") -> "Weights":
        return Weights(*(getattr(self, k) + getattr(other, k) for k in COMPONENTS))

    def scaled(self, factor: float) -> "Weights":
        return Weights(*(getattr(self, k) * factor for k in COMPONENTS))


def _attention_weights(c: Config) -> Weights:
    """One attention block: its projection matrices, and its vectors (biases, MLA's internal norms,
    Qwen3's per-head query and key norms, gpt-oss's sinks)."""
    h, nh = c.hidden_size, c.num_attention_heads
    if c.uses_mla:
        q_out = nh * c.head_dim_qk
        q = h * q_out if c.q_lora_rank is None else h * c.q_lora_rank + c.q_lora_rank * q_out
        kv = h * (c.kv_lora_rank + c.qk_rope_head_dim) + c.kv_lora_rank * nh * (c.qk_nope_head_dim + c.v_head_dim)
        norms = (c.q_lora_rank or 0) + c.kv_lora_rank
        return Weights(matrices=q + kv + nh * c.v_head_dim * h, vectors=norms)
    q_out = nh * c.head_dim_qk
    kv_out = c.num_key_value_heads * c.head_dim_qk
    biases = (q_out + 2 * kv_out if (c.qkv_bias or c.attention_bias) else 0) + (h if c.attention_bias else 0)
    extras = (2 * c.head_dim_qk if c.qk_norm else 0) + (nh if c.attention_sinks else 0)
    return Weights(matrices=h * q_out + 2 * h * kv_out + q_out * h, vectors=biases + extras)


def attention_params_per_layer(c: Config) -> int:
    """Weights of one attention block (projections, biases, MLA's internal norms, Qwen3's query and
    key norms, gpt-oss's sinks)."""
    return int(_attention_weights(c).total)


def _gated_mlp(hidden: int, inner: int) -> int:
    """A gated MLP: gate, up and down projections, 3 x hidden x inner."""
    return 3 * hidden * inner


def _expert(c: Config) -> Weights:
    """One expert: a gated MLP of the expert width, and (gpt-oss) its biases, 2 x width + hidden."""
    w = c.expert_width
    return Weights(experts=_gated_mlp(c.hidden_size, w), vectors=(2 * w + c.hidden_size) if c.expert_bias else 0)


def _layer_index(c: Config, layer: object) -> int:
    """``layer`` if it is a layer of ``c`` (0 to layers - 1), else a ValueError naming it."""
    if isinstance(layer, bool) or not isinstance(layer, int) or not 0 <= layer < c.num_hidden_layers:
        raise ValueError(f"layer must be a whole number from 0 to {c.num_hidden_layers - 1}; got {layer!r}")
    return layer


def _mlp_weights(c: Config, layer: int, experts: float | None = None) -> Weights:
    """One layer's MLP: a dense gated MLP, or for an MoE layer the router (with its bias) and
    ``experts`` routed experts (None: all of them) beside the shared ones."""
    if not c.layer_is_moe(_layer_index(c, layer)):
        return Weights(matrices=_gated_mlp(c.hidden_size, c.intermediate_size))
    E = c.routed_experts
    router = Weights(router=E * c.hidden_size, vectors=E if (c.router_bias or c.topk_method == "noaux_tc") else 0)
    return router + _expert(c).scaled((E if experts is None else experts) + c.shared_experts)


def mlp_params_per_layer(c: Config, layer: int, active_only: bool = False) -> int:
    """Weights of one layer's MLP; for an MoE layer, all experts or (``active_only``) the
    shared experts, the ones a token is routed to, and the router."""
    return int(_mlp_weights(c, layer, c.num_experts_per_tok if active_only else None).total)


def embedding_params(c: Config) -> int:
    """The input embedding table, vocab x hidden."""
    return c.vocab_size * c.hidden_size


def _weights(c: Config, experts_per_layer) -> Weights:
    """Every layer (attention, MLP with ``experts_per_layer(layer)`` routed experts, two norm
    vectors), the vocabulary tables and the final norm."""
    layers = Weights()
    attention = _attention_weights(c)
    for i in range(c.num_hidden_layers):
        layers = layers + attention + _mlp_weights(c, i, experts_per_layer(i)) + Weights(vectors=2 * c.hidden_size)
    return layers + Weights(vocabulary=vocabulary_params(c), vectors=c.hidden_size)


@cache
def stored_weights(c: Config) -> Weights:
    """Every stored weight, by component."""
    return _weights(c, lambda i: None)


@cache
def active_weights(c: Config) -> Weights:
    """The weights one token passes through, by component: for an MoE model only its routed
    experts (and the shared ones)."""
    return _weights(c, lambda i: c.num_experts_per_tok)


def routed_experts_read(c: Config, experts_per_moe_layer: float) -> Weights:
    """The routed experts' weights, by component, when a step touches D = ``experts_per_moe_layer``
    of them in each MoE layer: D x the MoE layers x one expert (its matrices, and its biases where
    it has them). The shared experts are not in it."""
    if not c.is_moe:
        raise ValueError("c must be a mixture-of-experts config; this model has no routed experts")
    D = positive("experts_per_moe_layer", experts_per_moe_layer)
    moe_layers = sum(c.layer_is_moe(i) for i in range(c.num_hidden_layers))
    return _expert(c).scaled(D * moe_layers)


def routed_expert_params(c: Config) -> int:
    """The weights of one routed expert of one MoE layer: a gated MLP, 3 x hidden x expert width
    (and its biases, where the architecture has them)."""
    if not c.is_moe:
        raise ValueError("c must be a mixture-of-experts config; this model has no routed experts")
    return int(_expert(c).total)


def param_count(c: Config) -> int:
    """Every stored weight: layers + embedding + untied LM head + final norm."""
    return int(stored_weights(c).total)


def active_param_count(c: Config) -> int:
    """Weights one token passes through: for an MoE model, only its routed experts count.
    Equal to ``param_count`` for a dense model."""
    return int(active_weights(c).total)


def multiplied_weights(c: Config) -> Weights:
    """What one token multiplies, by component: the active weights less the input embedding table,
    of which a token only copies its own row (a table tied to the output head is multiplied in
    full there, so it stays in)."""
    return active_weights(c) + Weights(vocabulary=-(0 if c.tie_word_embeddings else embedding_params(c)))


def weights_touching(c: Config, experts_per_moe_layer: float) -> Weights:
    """What a step multiplies, by component, when its tokens touch D = ``experts_per_moe_layer``
    routed experts in each MoE layer (one token: D = k): ``multiplied_weights`` with D experts in
    place of k. A dense model has no experts, and D changes nothing."""
    D = positive("experts_per_moe_layer", experts_per_moe_layer)
    if not c.is_moe:
        return multiplied_weights(c)
    return _touching(c, D)


@datafiles.cached(maxsize=4096)  # summed again for every batch a search tries, so remembered
def _touching(c: Config, D: float) -> Weights:
    return _weights(c, lambda i: D) + Weights(vocabulary=-(0 if c.tie_word_embeddings else embedding_params(c)))


def multiplied_params_per_token(c: Config) -> int:
    """N, the weights one token multiplies: every active weight except the input embedding table,
    of which a token only copies its own row (no arithmetic). A table tied to the output head is
    multiplied in full there, so it stays in. This is the count behind F = 2N and behind the
    weight bytes a decode step reads."""
    return int(multiplied_weights(c).total)


# ---- KV cache ------------------------------------------------------------------------------

def kv_bytes_per_token(c: Config, kv_precision: str = "BF16") -> float:
    """Cache bytes one token adds to one sequence, counted over every layer.

    Standard and grouped-query attention: K = 2 x layers x kv_heads x head_dim x bytes.
    MLA: K = layers x (kv_lora_rank + qk_rope_head_dim) x bytes (one latent and one shared RoPE key).
    Layers with a sliding window stop adding once they hold the window; ``cached_tokens`` counts that.
    """
    b = bytes_per_element(kv_precision, "kv_precision")
    if c.uses_mla:
        return c.num_hidden_layers * (c.kv_lora_rank + c.qk_rope_head_dim) * b
    return 2 * c.num_hidden_layers * c.num_key_value_heads * c.head_dim_qk * b


def cached_tokens(c: Config, context_tokens: float) -> float:
    """Tokens each layer keeps in its cache, averaged over the layers, so that K x cached_tokens
    is a sequence's cache: all L tokens, or at most the sliding window W in a layer that has one,
    (full layers x L + windowed layers x min(L, W)) / layers. Mistral-7B-v0.1 windows every
    layer; gpt-oss every other one (``layer_types``)."""
    n = non_negative("context_tokens", context_tokens)
    if not c.sliding_window:
        return n
    windowed = c.windowed_layers
    return (windowed * min(n, c.sliding_window) + (c.num_hidden_layers - windowed) * n) / c.num_hidden_layers


@datafiles.cached
def kept_precision() -> str:
    """The precision a quantized checkpoint keeps its embedding table, output head, router and
    vectors in (``data/serving.toml``: quantization recipes convert only the decoder's matrices)."""
    return datafiles.load("serving.toml")["quantization"]["kept_precision"]


def vocabulary_params(c: Config) -> int:
    """The weights of the two vocabulary-sized tables, the input embedding and the output head
    (one table when they are tied)."""
    return embedding_params(c) * (1 if c.tie_word_embeddings else 2)


@datafiles.cached
def recipes() -> dict[str, dict[str, str]]:
    """The checkpoints that store their matrices and their experts in different formats
    (``data/formats.toml``, [recipes]): name -> {"matrices": format, "experts": format, "source": ...}."""
    return datafiles.load("formats.toml").get("recipes", {})


def weight_precisions() -> tuple[str, ...]:
    """Every value ``weight_precision`` may take: a storage format, or a recipe."""
    from inferlimits.data.units import formats  # noqa: PLC0415

    return tuple(formats()) + tuple(recipes())


def component_formats(weight_precision: str) -> dict[str, str]:
    """The storage format of each component (``COMPONENTS``) under ``weight_precision``: a format
    (the matrices and experts in it; the vocabulary tables, router and vectors in the kept
    precision when it is lighter than that, in it too for llama.cpp's whole-model formats), or a
    recipe of ``data/formats.toml`` that names the matrices' and the experts' formats apart."""
    kept = kept_precision()
    if isinstance(weight_precision, str) and weight_precision in recipes():
        r = recipes()[weight_precision]
        return {VOCABULARY: kept, MATRICES: r["matrices"], EXPERTS: r["experts"], ROUTER: kept, VECTORS: kept}
    f = storage_format(weight_precision, "weight_precision")
    light = f.bytes_per_element < bytes_per_element(kept) and not f.whole_model
    return {k: (kept if light and k in (VOCABULARY, ROUTER, VECTORS) else f.name) for k in COMPONENTS}


def weights_bytes(w: Weights, weight_precision: str) -> float:
    """Bytes of the weights ``w`` under ``weight_precision``: each component's count times the
    bytes of its format (``component_formats``)."""
    fmt = component_formats(weight_precision)
    return sum(getattr(w, k) * bytes_per_element(fmt[k]) for k in COMPONENTS)


def quantized_bytes(params: float, vocabulary: float, weight_precision: str) -> float:
    """Bytes of ``params`` weights of which ``vocabulary`` belong to the embedding table or the
    output head: at ``weight_precision``, except that a format lighter than the kept precision
    (``kept_precision``, BF16) leaves those vocabulary tables at the kept precision:
    (params - vocabulary) x b + vocabulary x b_kept; llama.cpp's formats quantize every weight."""
    n, v = positive("params", params), non_negative("vocabulary", vocabulary)
    if v > n:
        raise ValueError(f"vocabulary ({v:g}) cannot exceed params ({n:g})")
    return weights_bytes(Weights(vocabulary=v, matrices=n - v), weight_precision)


def weight_bytes(c: Config, weight_precision: str = "BF16") -> float:
    """Bytes of all stored weights, what memory must hold: each component at its format, so the
    embedding table, the output head, the router and the vectors stay in BF16 when the matrices
    are quantized (``component_formats``)."""
    return weights_bytes(stored_weights(c), weight_precision)
