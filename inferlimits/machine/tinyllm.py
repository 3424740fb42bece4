"""A small Llama-shaped decoder in numpy, really run: RMSNorm, rotary positions, grouped-query
attention over a KV cache, a gated (SwiGLU) MLP, and an LM head tied to the embedding.

Its shape is an ordinary :class:`inferlimits.data.models.Config`, so the book's formulas (parameter
count, weight bytes, KV bytes per token, FLOPs per token) apply to it unchanged. Weights are
random: the speed of a decode step does not depend on what the numbers are, only on how many
there are and how they are laid out. Everything is float32 (4 bytes per number), because numpy
on a CPU has no fast BF16 arithmetic.

Two code paths compute the same thing: :func:`forward` uses the KV cache (a prompt, then one token
per step, as a serving system does), :func:`reference_logits` recomputes every position from
scratch with no cache at all; the tests hold them equal.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from inferlimits.data.models import Config

DTYPE = np.float32
#: Llama 3's rotary base and RMSNorm epsilon.
ROPE_THETA = 500_000.0
RMS_EPS = 1e-5

#: The decoder the measuring chapter runs: Llama's proportions (head width 64, four query heads
#: per key/value head, a gated MLP three times the hidden width, tied embeddings like the small
#: Llama 3.2 models), scaled so that its weights, about 323 MB in float32, dwarf a CPU's caches.
TINY_LLAMA = Config(hidden_size=1024, intermediate_size=3072, num_hidden_layers=6, num_attention_heads=16,
                    num_key_value_heads=4, head_dim=64, vocab_size=8192, tie_word_embeddings=True)


@dataclass(frozen=True)
class Layer:
    """One decoder layer's weights. Projections are stored (in, out), so ``x @ w`` applies them.

    As fast implementations do, the query, key and value projections sit side by side in one
    matrix, and so do the gate and up projections: one matrix product each per step, with the
    same weights as nine separate matrices (``from_parts``, ``parts``)."""

    attn_norm: np.ndarray   # (hidden,)
    wqkv: np.ndarray        # (hidden, (heads + 2 x kv_heads) x head_dim): query, key, value
    wo: np.ndarray          # (heads x head_dim, hidden)
    mlp_norm: np.ndarray    # (hidden,)
    w_gate_up: np.ndarray   # (hidden, 2 x intermediate): gate, then up
    w_down: np.ndarray      # (intermediate, hidden)

    @classmethod
    def from_parts(cls, attn_norm, wq, wk, wv, wo, mlp_norm, w_gate, w_up, w_down) -> Layer:
        return cls(attn_norm, np.concatenate([wq, wk, wv], axis=1), wo, mlp_norm,
                   np.concatenate([w_gate, w_up], axis=1), w_down)

    @property
    def _q_kv(self) -> tuple[int, int]:
        q = self.wo.shape[0]
        return q, (self.wqkv.shape[1] - q) // 2

    @property
    def wq(self) -> np.ndarray:
        return self.wqkv[:, :self._q_kv[0]]

    @property
    def wk(self) -> np.ndarray:
        q, kv = self._q_kv
        return self.wqkv[:, q:q + kv]

    @property
    def wv(self) -> np.ndarray:
        q, kv = self._q_kv
        return self.wqkv[:, q + kv:]

    @property
    def w_gate(self) -> np.ndarray:
        return self.w_gate_up[:, :self.w_down.shape[0]]

    @property
    def w_up(self) -> np.ndarray:
        return self.w_gate_up[:, self.w_down.shape[0]:]

    def parts(self) -> dict[str, np.ndarray]:
        """The nine arrays of a Llama layer, by their usual names (views, not copies)."""
        return dict(attn_norm=self.attn_norm, wq=self.wq, wk=self.wk, wv=self.wv, wo=self.wo,
                    mlp_norm=self.mlp_norm, w_gate=self.w_gate, w_up=self.w_up, w_down=self.w_down)

    def arrays(self) -> list[np.ndarray]:
        return [self.attn_norm, self.wqkv, self.wo, self.mlp_norm, self.w_gate_up, self.w_down]


@dataclass(frozen=True)
class Weights:
    """A whole decoder: its config, the embedding (also the LM head when tied), layers, final norm."""

    config: Config
    embed: np.ndarray       # (vocab, hidden)
    layers: tuple[Layer, ...]
    final_norm: np.ndarray  # (hidden,)
    lm_head: np.ndarray | None = None  # (hidden, vocab), only when not tied

    def arrays(self) -> list[np.ndarray]:
        out = [self.embed, self.final_norm] + [a for layer in self.layers for a in layer.arrays()]
        return out + ([self.lm_head] if self.lm_head is not None else [])

    @property
    def param_count(self) -> int:
        """Numbers stored, counted from the arrays themselves."""
        return sum(a.size for a in self.arrays())

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in self.arrays())


def _check_config(c: Config) -> None:
    if c.uses_mla or c.is_moe or c.num_key_value_heads is None:
        raise ValueError("config must describe a dense model with standard or grouped-query attention")
    if c.num_attention_heads % c.num_key_value_heads:
        raise ValueError("config: num_attention_heads must be a multiple of num_key_value_heads")
    if c.head_dim_qk % 2:
        raise ValueError("config: head_dim must be even for rotary positions")
    if c.attention_bias or c.qkv_bias or c.sliding_window:
        raise ValueError("config: biases and sliding windows are not part of this small decoder")


def random_weights(c: Config = TINY_LLAMA, seed: int = 0) -> Weights:
    """Random weights for ``c``, each projection scaled by 1/sqrt(fan-in) so that activations
    stay near unit size through the layers; norm weights start at one, as in training."""
    _check_config(c)
    rng = np.random.default_rng(seed)
    h, hd = c.hidden_size, c.head_dim_qk
    q_out, kv_out = c.num_attention_heads * hd, c.num_key_value_heads * hd

    def proj(fan_in: int, fan_out: int) -> np.ndarray:
        w = rng.random((fan_in, fan_out), dtype=DTYPE)
        w -= 0.5
        w *= DTYPE(np.sqrt(12.0 / fan_in))  # uniform with variance 1/fan_in
        return w

    layers = tuple(Layer(attn_norm=np.ones(h, DTYPE), wqkv=proj(h, q_out + 2 * kv_out), wo=proj(q_out, h),
                         mlp_norm=np.ones(h, DTYPE), w_gate_up=proj(h, 2 * c.intermediate_size),
                         w_down=proj(c.intermediate_size, h))
                   for _ in range(c.num_hidden_layers))
    embed = proj(c.vocab_size, h) * DTYPE(np.sqrt(c.vocab_size))  # rows of unit-size entries
    lm_head = None if c.tie_word_embeddings else proj(h, c.vocab_size)
    return Weights(config=c, embed=embed, layers=layers, final_norm=np.ones(h, DTYPE), lm_head=lm_head)


# ---- the pieces ---------------------------------------------------------------------------------

def rms_norm(x: np.ndarray, weight: np.ndarray, eps: float = RMS_EPS) -> np.ndarray:
    """RMSNorm over the last axis: x / sqrt(mean(x^2) + eps) x weight."""
    ms = np.mean(np.square(x), axis=-1, keepdims=True)
    return x / np.sqrt(ms + DTYPE(eps)) * weight


def silu(x: np.ndarray) -> np.ndarray:
    """x x sigmoid(x), the gate's activation."""
    return x / (DTYPE(1.0) + np.exp(-x))


def rope(x: np.ndarray, positions: np.ndarray, theta: float = ROPE_THETA) -> np.ndarray:
    """Rotary positions on the last axis (head_dim), Llama's "rotate half" layout: the pair
    (x_i, x_{i+d/2}) is rotated by the angle position x theta^(-2i/d). ``x`` is
    (..., tokens, head_dim) and ``positions`` (tokens,)."""
    d = x.shape[-1]
    inv_freq = theta ** (-np.arange(0, d, 2, dtype=np.float64) / d)
    angles = np.outer(positions, inv_freq)                     # (tokens, d/2)
    cos, sin = np.cos(angles).astype(DTYPE), np.sin(angles).astype(DTYPE)
    x1, x2 = x[..., : d // 2], x[..., d // 2:]
    return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)


def softmax(x: np.ndarray) -> np.ndarray:
    """Softmax over the last axis, shifted by the maximum so that it cannot overflow."""
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def query_head_groups(c: Config) -> list[list[int]]:
    """Grouped-query attention: which query heads share each key/value head (consecutive
    groups of heads / kv_heads, as in Llama)."""
    g = c.num_attention_heads // c.num_key_value_heads
    return [list(range(k * g, (k + 1) * g)) for k in range(c.num_key_value_heads)]


def gated_mlp(x: np.ndarray, layer: Layer) -> np.ndarray:
    """down(silu(gate(x)) x up(x)), with gate and up computed in one product."""
    inner = layer.w_down.shape[0]
    gate_up = x @ layer.w_gate_up
    return (silu(gate_up[..., :inner]) * gate_up[..., inner:]) @ layer.w_down


def attend(q: np.ndarray, k: np.ndarray, v: np.ndarray, scale: float,
           mask: np.ndarray | None = None) -> np.ndarray:
    """Scaled dot-product attention for R independent rows (one per sequence and key/value
    head): q (R, queries, d) against k and v (R, keys, d), softmax(q k^T x scale + mask) v.
    numpy's matmul runs one small matrix product per row."""
    scores = np.matmul(q, k.transpose(0, 2, 1))
    scores *= DTYPE(scale)
    if mask is not None:
        scores += mask
    return np.matmul(softmax(scores), v)


# ---- decoding with a KV cache ------------------------------------------------------------------

class KVCache:
    """Keys and values of every layer for up to ``batch`` sequences of ``max_tokens`` tokens,
    stored (batch, kv_heads, tokens, head_dim) so that one sequence's keys of one head are a
    contiguous block. A step on a smaller batch uses the first sequences."""

    def __init__(self, c: Config, batch: int, max_tokens: int):
        _check_config(c)
        if batch < 1 or max_tokens < 1:
            raise ValueError("batch and max_tokens must be at least 1")
        shape = (batch, c.num_key_value_heads, max_tokens, c.head_dim_qk)
        self.config, self.batch, self.max_tokens = c, batch, max_tokens
        self.k = [np.empty(shape, DTYPE) for _ in range(c.num_hidden_layers)]
        self.v = [np.empty(shape, DTYPE) for _ in range(c.num_hidden_layers)]

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in self.k + self.v)

    def fill(self, tokens: int, seed: int = 0) -> None:
        """Make the first ``tokens`` positions of every sequence hold unit-size numbers, as if a
        prompt of that length had been read (fast: one small random block, tiled)."""
        if not 0 <= tokens <= self.max_tokens:
            raise ValueError(f"tokens must be between 0 and {self.max_tokens}; got {tokens}")
        if tokens == 0:
            return
        rng = np.random.default_rng(seed)
        block = rng.standard_normal((min(tokens, 64), self.config.head_dim_qk)).astype(DTYPE)
        reps = -(-tokens // block.shape[0])
        tile = np.tile(block, (reps, 1))[:tokens]
        for a in self.k + self.v:
            a[:, :, :tokens, :] = tile


def forward(w: Weights, tokens: np.ndarray, cache: KVCache, start: int) -> np.ndarray:
    """Run ``tokens`` (batch, new) at positions start ... start + new - 1 through the decoder,
    reading the cache for positions before ``start`` and writing the new keys and values into it.
    Returns the logits of the last new position, (batch, vocab). A decode step is new = 1."""
    c = w.config
    tokens = np.asarray(tokens)
    if tokens.ndim != 2:
        raise ValueError("tokens must be (batch, new tokens)")
    B, T = tokens.shape
    end = start + T
    if B > cache.batch or end > cache.max_tokens or start < 0:
        raise ValueError(f"the cache holds {cache.batch} sequences of {cache.max_tokens} tokens; "
                         f"got batch {B}, positions {start} to {end - 1}")
    nh, kvh, hd = c.num_attention_heads, c.num_key_value_heads, c.head_dim_qk
    g = nh // kvh
    positions = np.arange(start, end)
    scale = 1.0 / np.sqrt(hd)
    causal = None
    if T > 1:  # new token i sees cached positions and new positions up to itself
        causal = np.where(np.arange(end)[None, :] <= positions[:, None], 0.0, -np.inf).astype(DTYPE)
    # activations stay 2-D, (B x T, hidden), so that each projection is one matrix product that
    # reads its weights once for the whole batch (a 3-D product would loop over the batch)
    x = w.embed[tokens.reshape(-1)]
    for layer, K, V in zip(w.layers, cache.k, cache.v):
        a = rms_norm(x, layer.attn_norm)
        qkv = a @ layer.wqkv                                              # one product for q, k, v
        q = qkv[:, :nh * hd].reshape(B, T, nh, hd).transpose(0, 2, 1, 3)  # (B, nh, T, hd)
        k = qkv[:, nh * hd:(nh + kvh) * hd].reshape(B, T, kvh, hd).transpose(0, 2, 1, 3)
        v = qkv[:, (nh + kvh) * hd:].reshape(B, T, kvh, hd).transpose(0, 2, 1, 3)
        K[:B, :, start:end] = rope(k, positions)
        V[:B, :, start:end] = v
        q = rope(q, positions).reshape(B * kvh, g * T, hd)                # group the query heads
        mask = None if causal is None else np.tile(causal, (g, 1))          # (g*T, end)
        o = attend(q, K[:B, :, :end].reshape(B * kvh, end, hd), V[:B, :, :end].reshape(B * kvh, end, hd),
                   scale, mask)                                             # (B*kvh, g*T, hd)
        o = o.reshape(B, nh, T, hd).transpose(0, 2, 1, 3).reshape(B * T, nh * hd)
        x = x + o @ layer.wo
        x = x + gated_mlp(rms_norm(x, layer.mlp_norm), layer)
    last = rms_norm(x.reshape(B, T, -1)[:, -1], w.final_norm)
    return last @ (w.embed.T if w.lm_head is None else w.lm_head)


def decode_step(w: Weights, tokens: np.ndarray, cache: KVCache, position: int) -> np.ndarray:
    """One generated token for each of B sequences: ``tokens`` (B,) at ``position``; returns the
    next tokens (greedy: the largest logit)."""
    logits = forward(w, np.asarray(tokens).reshape(-1, 1), cache, position)
    return np.argmax(logits, axis=-1)


def weight_matrices(w: Weights) -> list[np.ndarray]:
    """The weight matrices a decode step multiplies, in the order ``forward`` does, each (in, out):
    every layer's query-key-value, output, gate-up and down projections, then the head."""
    head = w.embed.T if w.lm_head is None else w.lm_head
    return [m for layer in w.layers for m in (layer.wqkv, layer.wo, layer.w_gate_up, layer.w_down)] + [head]


def weight_shapes(c: Config) -> tuple[tuple[int, int], ...]:
    """The (in, out) shape of each matrix ``weight_matrices`` gives, from the config alone."""
    d, q, kv = c.hidden_size, c.num_attention_heads * c.head_dim, c.num_key_value_heads * c.head_dim
    layer = ((d, q + 2 * kv), (q, d), (d, 2 * c.intermediate_size), (c.intermediate_size, d))
    return layer * c.num_hidden_layers + ((d, c.vocab_size),)


def weight_products(matrices: list[np.ndarray], inputs: dict[int, np.ndarray]) -> None:
    """A decode step's products with its weights alone: each matrix of ``weight_matrices`` times
    stand-in activations (``inputs``: one (B, in) array per input width), one product per matrix
    for the whole batch, as ``forward`` makes them; no attention, norms or other calls."""
    for m in matrices:
        inputs[m.shape[0]] @ m


def generate(w: Weights, prompt: np.ndarray, new_tokens: int) -> np.ndarray:
    """Greedy generation: read ``prompt`` (B, S) in one pass, then ``new_tokens`` decode steps.
    Returns the generated tokens, (B, new_tokens)."""
    prompt = np.asarray(prompt)
    B, S = prompt.shape
    cache = KVCache(w.config, B, S + new_tokens)
    nxt = np.argmax(forward(w, prompt, cache, 0), axis=-1)
    out = [nxt]
    for i in range(new_tokens - 1):
        nxt = decode_step(w, nxt, cache, S + i)
        out.append(nxt)
    return np.stack(out, axis=1)


# ---- the same model with no cache at all -------------------------------------------------------

def reference_logits(w: Weights, tokens: np.ndarray) -> np.ndarray:
    """Logits of the last position of ``tokens`` (batch, length), recomputing every position with
    full causal attention, one query head at a time, with no cache: the plain definition that
    :func:`forward` must agree with."""
    c = w.config
    tokens = np.asarray(tokens)
    B, T = tokens.shape
    nh, hd = c.num_attention_heads, c.head_dim_qk
    group_of = {h: k for k, heads in enumerate(query_head_groups(c)) for h in heads}
    positions = np.arange(T)
    mask = np.triu(np.full((T, T), -np.inf, DTYPE), k=1)
    x = w.embed[tokens]
    for layer in w.layers:
        a = rms_norm(x, layer.attn_norm)
        q, k, v = a @ layer.wq, a @ layer.wk, a @ layer.wv
        heads = []
        for h in range(nh):
            kv = group_of[h]
            qh = rope(q[..., h * hd:(h + 1) * hd], positions)
            kh = rope(k[..., kv * hd:(kv + 1) * hd], positions)
            vh = v[..., kv * hd:(kv + 1) * hd]
            att = softmax(qh @ kh.transpose(0, 2, 1) / np.sqrt(hd).astype(DTYPE) + mask)
            heads.append(att @ vh)
        x = x + np.concatenate(heads, axis=-1) @ layer.wo
        x = x + gated_mlp(rms_norm(x, layer.mlp_norm), layer)
    last = rms_norm(x[:, -1], w.final_norm)
    return last @ (w.embed.T if w.lm_head is None else w.lm_head)
