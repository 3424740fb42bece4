"""Chapter 5, the KV cache: what every conversation keeps, and reads at every step."""
from __future__ import annotations

from inferlimits.arithmetic.generation import decode_point, weight_bytes_read_per_step
from inferlimits.arithmetic.kvcache import (batch_where_cache_equals_weights, fit, kv_cache_bytes, max_sequences,
                                            usable_memory_fraction)
from inferlimits.data.models import kv_bytes_per_token, weight_bytes
from inferlimits.data.units import bytes_per_element
from inferlimits.book.homework import Key, Template, pick, register, sig, whole
from inferlimits.book.homework.common import (an, card, cards, cfg, datasheet, dense_models, gb, gib, kib, mdl, pct, rate,
                                         tokens, yes_no)

CONTEXTS = (4096, 8192, 16384, 32768, 65536)


def _config_line(name, c) -> str:
    return (f"{name} has {c.num_hidden_layers} layers and {c.num_key_value_heads} KV heads of "
            f"{c.head_dim_qk} numbers each")


@register
class CacheAgainstWeights(Template):
    chapter, label = "05_kv_cache", "kv-cache-ex1"

    def draw(self, rng):
        return {"model": pick(rng, dense_models()), "card": pick(rng, cards()), "context": pick(rng, CONTEXTS)}

    def holds(self, p):
        c, a, L = cfg(p["model"]), card(p["card"]), p["context"]
        return {"the context fits the model": L <= mdl(p["model"]).context_length,
                "at least one conversation fits": max_sequences(a.capacity_bytes, weight_bytes(c), kv_bytes_per_token(c), L) >= 1,
                "the caches reach the weights at a batch of one or more":
                    batch_where_cache_equals_weights(weight_bytes_read_per_step(c), kv_bytes_per_token(c), L) >= 1,
                "that batch is clearly above or below what fits": abs(
                    round(batch_where_cache_equals_weights(weight_bytes_read_per_step(c), kv_bytes_per_token(c), L))
                    / max(1, max_sequences(a.capacity_bytes, weight_bytes(c), kv_bytes_per_token(c), L)) - 1) > 0.04}

    def key(self, p):
        name, c, a, L = p["model"], cfg(p["model"]), card(p["card"]), p["context"]
        K = kv_bytes_per_token(c)
        W, stored = weight_bytes_read_per_step(c), weight_bytes(c)
        one = kv_cache_bytes(K, 1, L)
        even = batch_where_cache_equals_weights(W, K, L)
        most = max_sequences(a.capacity_bytes, stored, K, L)
        holds = fit(a.capacity_bytes, stored, K, round(even), L).fits
        return Key(
            (f"{_config_line(name, c)}. What is its cache per token in BF16, how large is one conversation of "
             f"{L:,} tokens, and at what batch do such caches weigh as much as the weights a decode step reads? How "
             f"many such conversations fit on {an(a.name)}, and can it hold that batch?",
             f"The data you need: a decode step reads {gb(W, 4)} of its weights in BF16, memory must hold all "
             f"{gb(stored, 4)} of them, and the {a.name} reports {gb(a.capacity_bytes, 4)}, of which "
             f"{pct(usable_memory_fraction(), 2)} is usable."),
            (f"K = 2 × {c.num_hidden_layers} × {c.num_key_value_heads} × {c.head_dim_qk} × "
             f"{bytes_per_element('BF16'):g} bytes = {kib(K)}; {L:,} tokens take {gib(one, 4)} ({gb(one, 4)}).",
             f"Caches equal the weights at W / (K L) = {gb(W, 4)} / {gb(one, 4)} = {sig(even, 4)} conversations.",
             f"Room beside the weights: {gb(usable_memory_fraction() * a.capacity_bytes - stored, 4)}, for {most} "
             f"whole conversations: the batch of {round(even)} {'fits' if holds else 'does not fit'}."),
            (self.number("cache per token", K, kib(K)),
             self.number("one conversation's cache", one, gb(one)),
             self.number("the batch where caches equal the weights", even, sig(even)),
             self.number("conversations that fit", most, whole(most)),
             self.choice("can it hold that batch", yes_no(holds))))


@register
class ShrinkWhich(Template):
    chapter, label = "05_kv_cache", "kv-cache-ex2"

    def draw(self, rng):
        return {"model": pick(rng, dense_models()), "card": pick(rng, cards()), "context": pick(rng, CONTEXTS),
                "batch": pick(rng, (4, 8, 16, 32, 64))}

    def _setups(self, p):
        c, a, B, L = cfg(p["model"]), card(p["card"]), p["batch"], p["context"]
        out = {}
        for label, wp, kp in (("BF16", "BF16", "BF16"), ("FP8 weights", "FP8", "BF16"), ("FP8 cache", "BF16", "FP8")):
            d = decode_point(c, a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s, B, L, wp, kp)
            most = max_sequences(a.capacity_bytes, weight_bytes(c, wp), kv_bytes_per_token(c, kp), L)
            out[label] = (d, most)
        return out

    def holds(self, p):
        s = self._setups(p)
        ceilings = sorted(d.ceiling for d, _ in s.values())
        return {"the context fits the model": p["context"] <= mdl(p["model"]).context_length,
                "all three hold the batch": all(m >= p["batch"] for _, m in s.values()),
                "all three memory-bound": all(d.wall == "memory-bound" for d, _ in s.values()),
                "the two choices differ clearly": s["FP8 weights"][0].ceiling != s["FP8 cache"][0].ceiling
                and abs(s["FP8 weights"][0].ceiling / s["FP8 cache"][0].ceiling - 1) > 0.05,
                "the two choices hold clearly different numbers": abs(s["FP8 weights"][1] / max(1, s["FP8 cache"][1]) - 1) > 0.04}

    def key(self, p):
        name, c, a, B, L = p["model"], cfg(p["model"]), card(p["card"]), p["batch"], p["context"]
        s = self._setups(p)
        best = max(("FP8 weights", "FP8 cache"), key=lambda k: s[k][0].ceiling)
        roomiest = max(("FP8 weights", "FP8 cache"), key=lambda k: s[k][1])
        return Key(
            (f"You serve {name} on {an(a.name)} with conversations of {L:,} tokens, {B} at a time. You can store "
             f"either the weights or the cache in FP8 (but not both). Give the memory ceiling in BF16 and with each "
             f"choice, and how many such conversations fit in each case. Which choice raises the memory ceiling more, "
             f"and which lets more conversations fit?",
             f"The data you need: a decode step reads {gb(weight_bytes_read_per_step(c), 4)} of weights in BF16 and "
             f"{gb(weight_bytes_read_per_step(c, 'FP8'), 4)} with FP8 weights (the embedding table and the output head "
             f"stay in BF16); memory holds {gb(weight_bytes(c), 4)} of them in BF16 and "
             f"{gb(weight_bytes(c, 'FP8'), 4)} in FP8; the cache takes {kib(kv_bytes_per_token(c))} per token in BF16; "
             f"a token moves {sig(s['BF16'][0].activation_bytes / B / 1e6, 4)} MB of activations. "
             + datasheet(a, math=False) + f" Weights and caches may use {pct(usable_memory_fraction(), 2)} of it."),
            tuple(f"{k}: a step reads {gb(d.weight_bytes, 4)} of weights + {gb(d.cache_bytes, 4)} of caches + "
                  f"{gb(d.activation_bytes, 4)} of activations = {gb(d.bytes, 4)}; ceiling {rate(d.ceiling, 4)}; "
                  f"{m} conversations fit." for k, (d, m) in s.items()),
            tuple(self.number(f"ceiling, {k}", d.ceiling, rate(d.ceiling)) for k, (d, _) in s.items())
            + tuple(self.number(f"conversations that fit, {k}", m, whole(m)) for k, (_, m) in s.items())
            + (self.choice("raises the ceiling more", best), self.choice("fits more conversations", roomiest)))


@register
class CacheFromConfig(Template):
    chapter, label = "05_kv_cache", "kv-cache-ex5"

    def draw(self, rng):
        return {"model": pick(rng, dense_models())}

    def holds(self, p):
        c, m = cfg(p["model"]), mdl(p["model"])
        return {"grouped-query or standard attention": c.num_key_value_heads is not None,
                "L_= clearly within or beyond the supported context":
                    abs(weight_bytes_read_per_step(c) / kv_bytes_per_token(c) / m.context_length - 1) > 0.04}

    def key(self, p):
        name, c, m = p["model"], cfg(p["model"]), mdl(p["model"])
        K, W = kv_bytes_per_token(c), weight_bytes_read_per_step(c)
        L_eq = W / K
        full = batch_where_cache_equals_weights(W, K, m.context_length)
        beyond = L_eq > m.context_length
        return Key(
            (f"(a) From the config alone, derive the cache bytes per token K of a model with standard or grouped-query "
             f"attention, and evaluate it for {name}: {c.num_hidden_layers} layers, {c.num_key_value_heads} KV heads "
             f"of {c.head_dim_qk} numbers each, in BF16.",
             "(b) Show that one conversation's cache read equals the weights its step reads at a context L_= = W / K, "
             "and that with B conversations this happens at W / (B K). What is one user's memory ceiling there, as a "
             "share of the ceiling with no context?",
             f"(c) A decode step of {name} reads {gb(W, 4)} of weights in BF16, and the model supports contexts of "
             f"{m.context_length:,} tokens. Evaluate L_= for one conversation, say whether it lies beyond the "
             f"supported context, and give the batch at which caches of full length equal the weights."),
            (f"(a) K = 2 n_layers n_kv d_head b = 2 × {c.num_hidden_layers} × {c.num_key_value_heads} × "
             f"{c.head_dim_qk} × 2 bytes = {whole(K)} bytes ({kib(K)}).",
             "(b) The step reads W + K L + A; the cache's part equals W at L = W / K, or W / (B K) with B caches. "
             "There the step reads 2W + A instead of W + A: about half the ceiling.",
             f"(c) L_= = {gb(W, 4)} / {whole(K)} bytes = {tokens(L_eq)}, {'beyond' if beyond else 'within'} the "
             f"{m.context_length:,} supported; full-length caches equal the weights at a batch of {sig(full, 4)}."),
            (self.number("cache bytes per token", K, f"{whole(K)} bytes"),
             self.number("L_= for one conversation", L_eq, tokens(L_eq)),
             self.choice("is L_= beyond the supported context", yes_no(beyond)),
             self.number("the batch where full-length caches equal the weights", full, sig(full))))
