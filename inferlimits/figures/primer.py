"""The primer's figures: a decoder drawn as its weight matrices, every shape read from a model's
config, and where the bytes of one decode step go (``generation.decode_step_bytes_by_part``).

Shapes are written as a token meets them: a matrix of ``inputs`` x ``outputs`` takes a vector of
``inputs`` numbers to one of ``outputs`` numbers (a 1 x inputs row times an inputs x outputs
matrix). The embedding table is the exception: one row of hidden-size numbers per vocabulary
entry, of which a token copies its own row.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from inferlimits.arithmetic.generation import STEP_PARTS, decode_step_bytes_by_part
from inferlimits.arithmetic.roofline import matmul_flops
from inferlimits.data.models import (Config, Weights, kv_bytes_per_token, model, multiplied_params_per_token,
                                     param_count, weights_bytes)
from inferlimits.data.units import GB, KB, KIB, MB, bytes_per_element
from inferlimits.figures import ACCENT, FAINT, FONT, INK, PALETTE, TEMPLATE, translucent
from inferlimits.figures.interactive import Control, panel as _panel

#: the models the primer draws: dense, with standard or grouped-query attention
MODELS = ("Llama-3.1-8B", "Llama-3.1-70B", "Qwen2.5-7B", "Qwen3-32B")
#: context lengths of the bytes figure's slider (tokens already in the conversation)
CONTEXTS = (0, 1024, 4096, 8192, 16_384, 32_768)


@dataclass(frozen=True)
class Matrix:
    """One weight matrix of a decoder: ``inputs`` numbers in, ``outputs`` numbers out. For the
    embedding table (``looked_up``), ``inputs`` rows (one per vocabulary entry) of ``outputs``
    numbers, of which a token copies one. ``per_layer``: every decoder layer has its own."""

    key: str
    name: str
    inputs: int
    outputs: int
    per_layer: bool
    looked_up: bool = False

    @property
    def weights(self) -> int:
        return self.inputs * self.outputs

    @property
    def shape(self) -> str:
        return f"{self.inputs:,} × {self.outputs:,}"

    def flops_per_token(self) -> float:
        """What one token does to it: a matrix-vector product, ``matmul_flops(1, inputs, outputs)``;
        nothing for a table it looks a row up in."""
        return 0.0 if self.looked_up else matmul_flops(1, self.inputs, self.outputs)


def _dense(c: Config) -> Config:
    if c.uses_mla or c.is_moe:
        raise ValueError("c must be a dense model with standard or grouped-query attention "
                         "(the primer draws no MLA and no mixture of experts)")
    return c


def decoder_matrices(c: Config) -> list[Matrix]:
    """Every weight matrix of a dense decoder, from its config: the embedding table (vocab x
    hidden), per layer the query, key, value and output projections (hidden x heads x d,
    hidden x kv heads x d twice, heads x d x hidden) and the MLP's gate, up and down projections
    (hidden x inner twice, inner x hidden), and the LM head (hidden x vocab; the embedding table
    itself when the two are tied). Norm weights and biases are vectors, not matrices."""
    c = _dense(c)
    h, v, inner = c.hidden_size, c.vocab_size, c.intermediate_size
    q, kv = c.num_attention_heads * c.head_dim_qk, c.num_key_value_heads * c.head_dim_qk
    out = c.num_attention_heads * c.head_dim_v
    head = "LM head (the embedding table, tied)" if c.tie_word_embeddings else "LM head"
    return [Matrix("embedding", "embedding table", v, h, False, looked_up=True),
            Matrix("q", "Q projection", h, q, True),
            Matrix("k", "K projection", h, kv, True),
            Matrix("v", "V projection", h, c.num_key_value_heads * c.head_dim_v, True),
            Matrix("o", "O projection", out, h, True),
            Matrix("gate", "gate projection", h, inner, True),
            Matrix("up", "up projection", h, inner, True),
            Matrix("down", "down projection", inner, h, True),
            Matrix("head", head, h, v, False)]


# ---- the block diagram ---------------------------------------------------------------------

VOCAB, ATTN, MLP, NORM = PALETTE[3], INK, PALETTE[2], FAINT
#: key -> (x0, y0, x1, y1, colour): the boxes, the same for every model (only their text changes)
BOXES = {
    "embedding": (20, 102, 70, 110, VOCAB),
    "norm1": (28, 91, 62, 95, NORM),
    "q": (8, 81, 30, 88, ATTN),
    "k": (34, 81, 56, 88, ATTN),
    "v": (60, 81, 82, 88, ATTN),
    "attention": (8, 70, 82, 77, ATTN),
    "o": (24, 59, 66, 66, ATTN),
    "norm2": (28, 50, 62, 54, NORM),
    "gate": (8, 40, 42, 47, MLP),
    "up": (48, 40, 82, 47, MLP),
    "silu": (28, 33, 62, 37, MLP),
    "down": (24, 23, 66, 30, MLP),
    "final": (28, 13, 62, 17, NORM),
    "head": (20, 2, 70, 9, VOCAB),
    "cache": (86, 66, 118, 92, ACCENT),
}
LAYER_FRAME = (3, 20, 122, 99)
#: arrows (from x, from y, to x, to y): the vector's way down, and the keys and values into the cache
ARROWS = [(45, 118, 45, 110), (45, 102, 45, 95), (45, 91, 45, 88), (19, 81, 19, 77), (45, 81, 45, 77),
          (71, 81, 71, 77), (45, 70, 45, 66), (45, 59, 45, 54), (45, 50, 25, 47), (45, 50, 65, 47),
          (25, 40, 40, 37), (65, 40, 50, 37), (45, 33, 45, 30), (45, 23, 45, 17), (45, 13, 45, 9),
          (82, 84.5, 86, 84.5), (86, 73.5, 82, 73.5), (45, 2, 45, -3)]
X_RANGE, Y_RANGE = (0, 125), (-8, 122)


def _n(x: float) -> str:
    """A count of weights, in millions or billions."""
    return f"{x / 1e9:,.2f} billion" if x >= 1e9 else f"{x / 1e6:,.1f} million"


def _extras(c: Config) -> str:
    """What a config adds to attention beside its four matrices: vectors, which the diagram leaves out."""
    notes = (["biases on the query, key and value projections"] if c.qkv_bias or c.attention_bias else []) + \
        (["a norm of every head's query and key"] if c.qk_norm else [])
    return f"<br>(this model also has {' and '.join(notes)}: vectors, not matrices)" if notes else ""


def _box_text(c: Config, precision: str = "BF16") -> dict[str, tuple[str, str]]:
    """key -> (label, hover text) for every box, from the config."""
    b = bytes_per_element(precision)
    m = {x.key: x for x in decoder_matrices(c)}
    h, L = c.hidden_size, c.num_hidden_layers

    def matrix(key: str, label: str, stacked: bool = False) -> tuple[str, str]:
        """A box's label (name and shape, on two lines in the narrow boxes) and its hover text."""
        x = m[key]
        where = f", in each of {L} layers" if x.per_layer else ""
        does = ("a token copies its own row: no arithmetic" if x.looked_up
                else f"one token: a matrix-vector product, {_n(x.flops_per_token())} FLOPs")
        return (f"<b>{label}</b>{'<br>' if stacked else '  '}{x.shape}",
                f"{x.name}{where}: {x.shape} = {_n(x.weights)} weights, "
                f"{weights_bytes(Weights(matrices=x.weights), precision) / MB:,.1f} MB in {precision}<br>{does}")

    norm = (f"RMSNorm  ({h:,} weights)", f"RMSNorm: scales each of the {h:,} numbers by its own weight; a vector, not a matrix")
    kv_layer = 2 * c.num_key_value_heads * c.head_dim_qk
    k_token = kv_bytes_per_token(c, precision)
    return {
        "embedding": (f"<b>embedding table</b>  {m['embedding'].shape}<br>lookup: copies one row of {h:,}",
                      matrix("embedding", "")[1]),
        "norm1": norm, "norm2": norm,
        "q": matrix("q", "Q", True), "k": matrix("k", "K", True), "v": matrix("v", "V", True),
        "attention": (f"<b>attention</b>: {c.num_attention_heads} query heads, {c.num_key_value_heads} key-value heads"
                      f" of {c.head_dim_qk}",
                      "each query head scores its query against the keys of every token so far, its own included<br>"
                      "(both first rotated by position, RoPE), and sums their values weighted by the softmax of the "
                      "scores; no weights of its own" + _extras(c)),
        "o": matrix("o", "O"),
        "gate": matrix("gate", "gate"), "up": matrix("up", "up"),
        "silu": ("SiLU(gate) × up", "elementwise: no weights"),
        "down": matrix("down", "down"),
        "final": (f"final RMSNorm  ({h:,} weights)", norm[1]),
        "head": (f"<b>{m['head'].name}</b>  {m['head'].shape}<br>one score (logit) per vocabulary entry",
                 matrix("head", "")[1]),
        "cache": (f"<b>KV cache</b><br>each token adds<br>{kv_layer:,} numbers<br>a layer ({k_token / KIB:,.0f} KiB<br>"
                  f"over {L} layers<br>in {precision});<br>every step<br>reads it all",
                  f"keys and values of every earlier token: {c.num_key_value_heads} key-value heads × "
                  f"{c.head_dim_qk} numbers, for K and for V, in each of {L} layers"),
    }


def diagram_spec(model_name: str) -> dict:
    """The decoder of ``model_name`` as a block diagram: boxes for the embedding table, one layer's
    attention (Q, K, V, O) and MLP (gate, up, down), the norms, the LM head and the KV cache, each
    matrix labelled with its shape from the config (``decoder_matrices``)."""
    m = model(model_name)
    c = _dense(m.config)
    text = _box_text(c)
    keys = list(BOXES)
    labels = dict(type="scatter", mode="text", name="matrices",
                  x=[(BOXES[k][0] + BOXES[k][2]) / 2 for k in keys], y=[(BOXES[k][1] + BOXES[k][3]) / 2 for k in keys],
                  text=[text[k][0] for k in keys], customdata=[text[k][1] for k in keys],
                  textfont=dict(size=12, color="#1b2631"), hovertemplate="%{customdata}<extra></extra>")
    x0, y0, x1, y1 = LAYER_FRAME
    counts = (f"decoder layer, repeated {c.num_hidden_layers} times · "
              f"{_n(sum(x.weights for x in decoder_matrices(c) if x.per_layer))} matrix weights each")
    caption = dict(type="scatter", mode="text", name="layer", x=[x1 - 1], y=[y1 - 1.5], text=[counts],
                   textposition="bottom left", textfont=dict(size=12, color="#566573"), hoverinfo="skip")
    ends = dict(type="scatter", mode="text", name="ends", x=[47, 47], y=[119, -5],
                text=[f"a token: one of {c.vocab_size:,} vocabulary entries",
                      f"sample the next token<br>{_n(param_count(c))} weights stored, "
                      f"{_n(multiplied_params_per_token(c))} multiplied per token"],
                textposition="middle right", textfont=dict(size=12, color="#566573"), hoverinfo="skip")
    shapes = [dict(type="rect", x0=x0, y0=y0, x1=x1, y1=y1, line=dict(color=FAINT, width=1, dash="dash"),
                   fillcolor="rgba(0,0,0,0)", layer="below")]
    shapes += [dict(type="rect", x0=a, y0=b, x1=d, y1=e, line=dict(color=col, width=2),
                    fillcolor=translucent(col, 0.12), layer="below") for a, b, d, e, col in BOXES.values()]
    arrows = [dict(x=tx, y=ty, ax=fx, ay=fy, xref="x", yref="y", axref="x", ayref="y", text="", showarrow=True,
                   arrowhead=2, arrowsize=1, arrowwidth=1.5, arrowcolor="#566573") for fx, fy, tx, ty in ARROWS]
    arrows += [dict(x=67, y=y, xref="x", yref="y", text="+ added to the vector (residual)", showarrow=False,
                    font=dict(size=11, color="#566573"), xanchor="left") for y in (62.5, 26.5)]
    hidden = dict(visible=False, range=None, fixedrange=True)
    layout = dict(title=dict(text=f"{model_name} as matrix shapes (inputs × outputs)", x=0.02, xanchor="left"),
                  template=TEMPLATE, font=FONT, height=820, margin=dict(l=10, r=10, t=60, b=10), showlegend=False,
                  xaxis=dict(hidden, range=list(X_RANGE)), yaxis=dict(hidden, range=list(Y_RANGE)),
                  shapes=shapes, annotations=arrows)
    return {"data": [labels, caption, ends], "layout": layout}


def diagram_panel(model_names: Sequence[str] = MODELS, model_name: str = "Llama-3.1-8B",
                  div_id: str = "fig-primer-decoder"):
    """A model dropdown over the block diagram (plotly's own dropdown without a kernel)."""
    controls = [Control("model_name", "model", list(model_names))]
    return _panel(diagram_spec, dict(model_name=model_name), controls, div_id, static_dropdown="model_name")


# ---- where the bytes of a decode step go -------------------------------------------------------

PART_COLORS = dict(zip(STEP_PARTS, (VOCAB, ATTN, MLP, NORM, VOCAB, ACCENT, PALETTE[4])))
BYTES_RANGE = (1e3, 2e12)   # fixed log axis, from a kB to 2 TB
TICKS = [10.0 ** e for e in range(3, 13)]
TICK_TEXT = ["1 kB", "10 kB", "100 kB", "1 MB", "10 MB", "100 MB", "1 GB", "10 GB", "100 GB", "1 TB"]


def _size(b: float) -> str:
    """Bytes in decimal units, as the book writes them."""
    for unit, scale, digits in (("GB", GB, 2), ("MB", MB, 1), ("kB", KB, 1)):
        if b >= scale:
            return f"{b / scale:,.{digits}f} {unit}"
    return f"{b:,.0f} B"


def _share(x: float) -> str:
    """A share of the step, as a percentage; "under 0.01%" where two decimals would show nothing."""
    return f"{x:.2%}" if x >= 1e-4 else "under 0.01%"


def bytes_spec(model_name: str, context_tokens: int, weight_precision: str = "BF16") -> dict:
    """One decode step of one sequence of ``model_name`` with ``context_tokens`` tokens of
    context, its bytes by part (``decode_step_bytes_by_part``) on a log axis, each with its share."""
    import math  # noqa: PLC0415

    c = _dense(model(model_name).config)
    parts = decode_step_bytes_by_part(c, 1, context_tokens, weight_precision)
    total = sum(parts.values())
    names = list(parts)
    labels = [(f"{_size(v)} · {_share(v / total)}" if v else "nothing yet: no earlier tokens") for v in parts.values()]
    bars = dict(type="bar", orientation="h", y=names, x=[v or None for v in parts.values()], name="bytes",
                marker=dict(color=[translucent(PART_COLORS[n], 0.55) for n in names],
                            line=dict(color=[PART_COLORS[n] for n in names], width=1.5)),
                customdata=labels, hovertemplate="%{y}: %{customdata}<extra></extra>")
    text = dict(type="scatter", mode="text", name="sizes", y=names, text=labels, textposition="middle right",
                x=[max(v, BYTES_RANGE[0]) * 1.3 for v in parts.values()], cliponaxis=False, hoverinfo="skip",
                textfont=dict(size=12))
    where = dict(type="scatter", mode="text", name="total", x=[BYTES_RANGE[1] / 1.2], y=[names[0]],
                 text=[f"{model_name}, {weight_precision}, {context_tokens:,} tokens of context:<br>"
                       f"{_size(total)} per step"],
                 textposition="middle left", hoverinfo="skip", textfont=dict(size=13))
    layout = dict(title=dict(text="Where the bytes of one decode step go (one sequence)", x=0.02, xanchor="left"),
                  template=TEMPLATE, font=FONT, height=560, margin=dict(l=170, r=30, t=60, b=60), showlegend=False,
                  xaxis=dict(title="bytes read or written in the step (log scale)", type="log",
                             range=[math.log10(v) for v in BYTES_RANGE], tickvals=TICKS, ticktext=TICK_TEXT),
                  yaxis=dict(autorange="reversed", type="category"), bargap=0.35)
    return {"data": [bars, text, where], "layout": layout}


def bytes_panel(model_names: Sequence[str] = MODELS, model_name: str = "Llama-3.1-8B", context_tokens: int = 0,
                div_id: str = "fig-primer-bytes"):
    """Model dropdown and context slider over where the bytes of a decode step go."""
    controls = [Control("model_name", "model", list(model_names)),
                Control("context_tokens", "context (tokens)", CONTEXTS, kind="slider")]
    values = dict(model_name=model_name, context_tokens=context_tokens)
    return _panel(bytes_spec, values, controls, div_id, static_dropdown="model_name", static_slider="context_tokens")


# ---- the matrices as a table -----------------------------------------------------------------

def config_table(model_name: str):
    """The ``config.json`` fields that set every matrix shape of ``model_name``, with the values
    the book's data holds (written as the file writes them, without thousands separators), the symbol the book writes for each and which shapes it sets. A config
    without ``head_dim`` implies hidden_size / num_attention_heads; the table says so."""
    from inferlimits.figures.tables import _table  # noqa: PLC0415

    c = model(model_name).config
    head_dim = str(c.head_dim) if c.head_dim else f"absent (hidden_size / num_attention_heads = {c.head_dim_qk})"
    rows = [
        ("hidden_size", str(c.hidden_size), "$h$",
         "the vector between layers: the inputs of Q, K, V, gate and up, the outputs of O and down, "
         "a row of the embedding table"),
        ("num_attention_heads", str(c.num_attention_heads), "$n_q$", "query heads: Q has $n_q d$ outputs, O as many inputs"),
        ("num_key_value_heads", str(c.num_key_value_heads), "$n_{kv}$", "key-value heads: K and V have $n_{kv} d$ outputs each"),
        ("head_dim", head_dim, "$d$", "the numbers of one head, query, key or value"),
        ("intermediate_size", str(c.intermediate_size), "$f$", "the MLP's inner width: the outputs of gate and up, the inputs of down"),
        ("vocab_size", str(c.vocab_size), "$V$", "the rows of the embedding table, the outputs of the LM head"),
        ("num_hidden_layers", str(c.num_hidden_layers), "$n_\\text{layers}$", "how many times the layer repeats"),
        ("tie_word_embeddings", str(c.tie_word_embeddings).lower(), "–", "whether the LM head is the embedding table itself"),
    ]
    return _table(["`config.json` field", "value", "symbol", "what it sets"], [(f"`{k}`", *r) for k, *r in rows], "lrcl")


def matrix_table(model_name: str, precision: str = "BF16"):
    """Every weight matrix of ``model_name`` (``decoder_matrices``): its shape, how many the model
    has, its weights, its bytes in ``precision`` and what one token spends on it; then the norm
    vectors and biases, and the total, ``param_count``."""
    from inferlimits.data.models import stored_weights  # noqa: PLC0415
    from inferlimits.figures.tables import _table  # noqa: PLC0415

    c = _dense(model(model_name).config)
    rows = []
    for m in decoder_matrices(c):
        if m.key == "head" and c.tie_word_embeddings:
            count = "(the embedding table)"
        else:
            count = f"{c.num_hidden_layers} (one a layer)" if m.per_layer else "1"
        does = "a lookup: none" if m.looked_up else f"{m.flops_per_token() / 1e6:,.1f} million"
        rows.append([m.name, m.shape, count, f"{m.weights / 1e6:,.1f} million",
                     f"{weights_bytes(Weights(matrices=m.weights), precision) / MB:,.1f}", does])
    vectors = stored_weights(c).vectors
    rows.append(["norm weights and biases (vectors)", "–", "–", f"{vectors / 1e6:,.2f} million",
                 f"{weights_bytes(Weights(vectors=vectors), precision) / MB:,.1f}", "–"])
    rows.append(["**every stored weight**", "", "", f"**{_n(param_count(c))}**",
                 f"**{weights_bytes(stored_weights(c), precision) / MB:,.0f}**", ""])
    return _table(["matrix", "shape (inputs × outputs)", "how many", "weights each", f"MB each in {precision}",
                   "FLOPs per token, each"], rows, "llrrrr")
