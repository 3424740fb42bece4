"""Chapter 5, the KV cache: what every conversation keeps, and reads at every step."""
from __future__ import annotations

import math

from inferlimits.arithmetic.activations import activation_bytes_per_token
from inferlimits.arithmetic.generation import decode_point, weight_bytes_read_per_step
from inferlimits.arithmetic.kvcache import (batch_at_user_rate, batch_where_cache_equals_weights, fit, kv_cache_bytes,
                                            largest_batch_at_user_rate, max_sequences, memory_left_for_cache_bytes,
                                            sequence_bytes_per_step, usable_memory_fraction)
from inferlimits.data.models import kv_bytes_per_token, weight_bytes
from inferlimits.data.units import bytes_per_element
from inferlimits.book.homework import Key, Template, calc, pick, register, sig, whole
from inferlimits.book.homework.common import (an, card, cards, cfg, datasheet, dense_models, gb, gbps, gib, kib, mb, mdl,
                                              mib, pct, rate, tokens, yes_no)

CONTEXTS = (4096, 8192, 16384, 32768, 65536)


def _steady(p, K: float, weights: str = "BF16", slack: float = 0.003) -> bool:
    """Whether the whole conversations of ``p["context"]`` tokens that fit beside the weights stay as many when the
    room moves by ``slack`` either way: a count graded exactly must not sit at the edge of a whole number."""
    c, a, L = cfg(p["model"]), card(p["card"]), p["context"]
    room = memory_left_for_cache_bytes(a.capacity_bytes, weight_bytes(c, weights))
    return len({math.floor(room * f / (K * L)) for f in (1 - slack, 1, 1 + slack)}) == 1


def _config_line(name, c) -> str:
    return (f"{name} has {c.num_hidden_layers} layers and {c.num_key_value_heads} KV heads of "
            f"{c.head_dim_qk} numbers each")


@register
class CacheAgainstWeights(Template):
    chapter, label = "05_kv_cache", "kv-cache-ex1"
    counts_exact = True

    def draw(self, rng):
        return {"model": pick(rng, dense_models()), "card": pick(rng, cards()), "context": pick(rng, CONTEXTS)}

    def _numbers(self, p):
        c, a, L = cfg(p["model"]), card(p["card"]), p["context"]
        K = kv_bytes_per_token(c, "FP8")
        even = batch_where_cache_equals_weights(weight_bytes_read_per_step(c), K, L)
        return K, even, max_sequences(a.capacity_bytes, weight_bytes(c), K, L)

    def holds(self, p):
        K, even, most = self._numbers(p)
        return {"the context fits the model": p["context"] <= mdl(p["model"]).context_length,
                "at least one conversation fits": most >= 1,
                "the caches reach the weights at a batch of one or more": even >= 1,
                "that batch is clearly above or below what fits": abs(round(even) / max(1, most) - 1) > 0.04,
                "the count is not at the edge of a whole number (it is graded exactly)": _steady(p, K)}

    def key(self, p):
        name, c, a, L = p["model"], cfg(p["model"]), card(p["card"]), p["context"]
        K, even, most = self._numbers(p)
        W, stored = weight_bytes_read_per_step(c), weight_bytes(c)
        one = kv_cache_bytes(K, 1, L)
        holds = fit(a.capacity_bytes, stored, K, round(even), L).fits
        return Key(
            (f"{_config_line(name, c)}. What is its cache per token when the cache is stored in FP8, one byte a "
             f"number? How large is one conversation of {L:,} tokens, and at what batch do such caches weigh as much "
             f"as the weights a decode step reads? How many such conversations fit on {an(a.name)}, and can it hold "
             f"that batch?",
             f"The data you need: a decode step reads {gb(W, 4)} of its weights in BF16, memory must hold all "
             f"{gb(stored, 4)} of them, and the {a.name} reports {gb(a.capacity_bytes, 4)}, of which "
             f"{pct(usable_memory_fraction(), 2)} is usable."),
            (f"K = 2 × {c.num_hidden_layers} × {c.num_key_value_heads} × {c.head_dim_qk} × "
             f"{bytes_per_element('FP8'):g} byte = {kib(K)}.",
             f"One conversation: K L = {kib(K)} × {L:,} = {gib(one, 4)} ({gb(one, 4)}).",
             f"Caches equal the weights at W / (K L) = {gb(W, 4)} / {gb(one, 4)} = {sig(even, 4)} conversations.",
             f"Room beside the weights: {gb(usable_memory_fraction() * a.capacity_bytes - stored, 4)}, for {most} "
             f"whole conversations: the batch of {round(even)} {'fits' if holds else 'does not fit'}."),
            (self.number("cache per token", K, kib(K)),
             self.number("one conversation's cache", one, gb(one)),
             self.number("the batch where caches equal the weights", even, sig(even)),
             self.count("conversations that fit", most, whole(most)),
             self.choice("can it hold that batch", yes_no(holds))))


@register
class ShrinkWhich(Template):
    chapter, label = "05_kv_cache", "kv-cache-ex2"
    counts_exact = True

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
                "the two choices hold clearly different numbers": abs(s["FP8 weights"][1] / max(1, s["FP8 cache"][1]) - 1) > 0.04,
                "no count at the edge of a whole number (they are graded exactly)":
                    all(_steady(p, kv_bytes_per_token(cfg(p["model"]), kp), wp) for wp, kp in
                        (("BF16", "BF16"), ("FP8", "BF16"), ("BF16", "FP8")))}

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
            self._working(p, s, best, roomiest),
            tuple(self.number(f"ceiling, {k}", d.ceiling, rate(d.ceiling)) for k, (d, _) in s.items())
            + tuple(self.count(f"conversations that fit, {k}", m, whole(m)) for k, (_, m) in s.items())
            + (self.choice("raises the ceiling more", best), self.choice("fits more conversations", roomiest)))


    @staticmethod
    def _working(p, s, best, roomiest):
        c, a, B, L = cfg(p["model"]), card(p["card"]), p["batch"], p["context"]
        u, BW = usable_memory_fraction(), a.bandwidth_bytes_per_s
        lines = [calc("usable", "u × C", f"{pct(u, 2)} × {mib(a.capacity_bytes)}", gb(u * a.capacity_bytes, 4)),
                 "A memory-bound step of B conversations reads W + B(K L + A) bytes and makes B tokens: the ceiling is "
                 "B × BW over those bytes. Whole conversations that fit: floor((u C - W_s) / (K L)), with W_s the "
                 "stored weights.",
                 calc("the cache per token in FP8", "K / 2", f"{kib(kv_bytes_per_token(c))} / 2",
                      kib(kv_bytes_per_token(c, "FP8")))]
        for (k, (d, m)), (wp, kp) in zip(s.items(), (("BF16", "BF16"), ("FP8", "BF16"), ("BF16", "FP8"))):
            K, A, Ws = kv_bytes_per_token(c, kp), d.activation_bytes / B, weight_bytes(c, wp)
            lines += [calc(f"step bytes, {k}", "W + B(K L + A)", f"{gb(d.weight_bytes, 4)} + {B} × ({kib(K)} × {L:,} + "
                           f"{mb(A, 4)})", gb(d.bytes, 4)),
                      calc(f"ceiling, {k}", "B × BW / bytes", f"{B} × {gbps(BW)} / {gb(d.bytes, 4)}", rate(d.ceiling, 4)),
                      calc(f"conversations that fit, {k}", "floor((u C - W_s) / (K L))",
                           f"floor(({gb(u * a.capacity_bytes, 4)} - {gb(Ws, 4)}) / ({kib(K)} × {L:,}))", whole(m))]
        lines += [f"Raises the ceiling more: {best}, which removes more bytes from each step.",
                  f"Fits more conversations: {roomiest}, which leaves more room per conversation."]
        return tuple(lines)


@register
class CacheFromConfig(Template):
    chapter, label = "05_kv_cache", "kv-cache-ex5"
    counts_exact = True

    def draw(self, rng):
        return {"model": pick(rng, dense_models()), "card": pick(rng, cards()), "context": pick(rng, (4096, 8192, 16384))}

    def _full(self, p):
        """Memory filled with conversations of the context, with the cache in BF16 and in FP8."""
        c, a, L = cfg(p["model"]), card(p["card"]), p["context"]
        out = {}
        for kp in ("BF16", "FP8"):
            B = max_sequences(a.capacity_bytes, weight_bytes(c), kv_bytes_per_token(c, kp), L)
            out[kp] = (B, decode_point(c, a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s, B, L, "BF16", kp)
                       if B >= 1 else None)
        return out

    def holds(self, p):
        c, m = cfg(p["model"]), mdl(p["model"])
        full = self._full(p)
        return {"grouped-query or standard attention": c.num_key_value_heads is not None,
                "L_= clearly within or beyond the supported context":
                    abs(weight_bytes_read_per_step(c) / kv_bytes_per_token(c) / m.context_length - 1) > 0.04,
                "the context fits the model": p["context"] <= m.context_length,
                "memory holds many conversations (where the estimate holds)": full["BF16"][0] >= 8,
                "memory-bound with memory full": all(d is not None and d.wall == "memory-bound" for _, d in full.values()),
                "no count at the edge of a whole number (they are graded exactly)":
                    all(_steady(p, kv_bytes_per_token(c, kp)) for kp in ("BF16", "FP8"))}

    def key(self, p):
        name, c, m, a, L = p["model"], cfg(p["model"]), mdl(p["model"]), card(p["card"]), p["context"]
        K, K8, W = kv_bytes_per_token(c), kv_bytes_per_token(c, "FP8"), weight_bytes_read_per_step(c)
        L_eq = W / K
        full_len = batch_where_cache_equals_weights(W, K, m.context_length)
        beyond = L_eq > m.context_length
        usable = fit(a.capacity_bytes, weight_bytes(c)).usable_bytes
        estimate = a.bandwidth_bytes_per_s / usable
        full = self._full(p)
        (B16, d16), (B8, d8) = full["BF16"], full["FP8"]
        A = activation_bytes_per_token(c)
        return Key(
            (f"(a) From the config alone, derive the cache bytes per token K of a model with standard or grouped-query "
             f"attention, and evaluate it for {name}: {c.num_hidden_layers} layers, {c.num_key_value_heads} KV heads "
             f"of {c.head_dim_qk} numbers each, in BF16 and with the cache in FP8.",
             "(b) Show that one conversation's cache read equals the weights its step reads at a context L_= = W / K, "
             "and that with B conversations this happens at W / (B K). What is one user's memory ceiling there, as a "
             "share of the ceiling with no context?",
             f"(c) A decode step of {name} reads {gb(W, 4)} of weights in BF16, and the model supports contexts of "
             f"{m.context_length:,} tokens. Evaluate L_= for one conversation with a BF16 cache, say whether it lies "
             f"beyond the supported context, and give the batch at which caches of full length equal the weights.",
             "(d) Now fill the memory: C bytes are usable, the stored weights take W_s, and B_m conversations of L "
             "tokens fit beside them. Show that each user then gets about BW / C tokens per second, whatever L and K, "
             "and say when that estimate fails. What does halving K buy at full memory? Evaluate B_m and each user's "
             f"ceiling for {name} on {an(a.name)} at {L:,} tokens, with the cache in BF16 and in FP8, against BW / C. "
             f"The {a.name} moves {gbps(a.bandwidth_bytes_per_s)} and has {gb(usable, 4)} of usable memory; {name} "
             f"stores {gb(weight_bytes(c), 4)} of weights, and each conversation moves "
             f"{mb(activation_bytes_per_token(c), 3)} of activations in a step."),
            ("(a) Each layer keeps a key and a value (2) for each of its n_kv KV heads, d_head numbers each, at b bytes "
             "a number: K = 2 n_layers n_kv d_head b.",
             calc("K in BF16", "2 n_layers n_kv d_head b", f"2 × {c.num_hidden_layers} × {c.num_key_value_heads} × "
                  f"{c.head_dim_qk} × 2", f"{whole(K)} bytes"),
             calc("K in FP8", "2 n_layers n_kv d_head b", f"2 × {c.num_hidden_layers} × {c.num_key_value_heads} × "
                  f"{c.head_dim_qk} × 1", f"{whole(K8)} bytes"),
             "(b) The step reads W + K L + A; the cache's part equals W at L = W / K, or W / (B K) with B caches. "
             "There the step reads 2W + A instead of W + A: about half the ceiling.",
             calc("L_=", "W / K", f"{gb(W, 4)} / {whole(K)} bytes", f"{sig(L_eq, 4)} tokens", "(c)"),
             f"Is L_= beyond the supported context? {yes_no(beyond).capitalize()}: it is "
             f"{'more' if beyond else 'less'} than {m.context_length:,} tokens.",
             calc("the batch where full-length caches equal the weights", "W / (K L_max)",
                  f"{gb(W, 4)} / ({whole(K)} bytes × {m.context_length:,})", sig(full_len, 4)),
             "(d) B_m K L ≈ C - W_s, so a full step reads about C bytes, W_s + B_m K L, and each user gets about "
             "BW / C.",
             calc("BW / C", "", f"{gbps(a.bandwidth_bytes_per_s)} / {gb(usable, 4)}", rate(estimate, 4)),
             calc("B_m, BF16 cache", "floor((C - W_s) / (K L))", f"floor(({gb(usable, 4)} - {gb(weight_bytes(c), 4)}) / "
                  f"({whole(K)} bytes × {L:,}))", whole(B16)),
             calc("each user's ceiling, BF16 cache", "BW / (W + B_m (K L + A))",
                  f"{gbps(a.bandwidth_bytes_per_s)} / ({gb(W, 4)} + {B16} × ({whole(K)} bytes × {L:,} + {mb(A, 4)}))",
                  rate(d16.per_user, 4)),
             calc("B_m, FP8 cache", "floor((C - W_s) / (K L))", f"floor(({gb(usable, 4)} - {gb(weight_bytes(c), 4)}) / "
                  f"({whole(K8)} bytes × {L:,}))", whole(B8)),
             calc("each user's ceiling, FP8 cache", "BW / (W + B_m (K L + A))",
                  f"{gbps(a.bandwidth_bytes_per_s)} / ({gb(W, 4)} + {B8} × ({whole(K8)} bytes × {L:,} + {mb(A, 4)}))",
                  rate(d8.per_user, 4)),
             "Halving K doubles the conversations, so the aggregate, not any user's speed (a little less: more "
             "activations move). The estimate fails when few conversations fit, where the slack left over and the "
             "activations are no longer small."),
            (self.number("cache bytes per token, BF16", K, f"{whole(K)} bytes"),
             self.number("cache bytes per token, FP8", K8, f"{whole(K8)} bytes"),
             self.number("L_= for one conversation", L_eq, tokens(L_eq)),
             self.choice("is L_= beyond the supported context", yes_no(beyond)),
             self.number("the batch where full-length caches equal the weights", full_len, sig(full_len)),
             self.number("BW / C", estimate, rate(estimate)),
             self.count("B_m, BF16 cache", B16, whole(B16)),
             self.number("each user's ceiling, BF16 cache", d16.per_user, rate(d16.per_user)),
             self.count("B_m, FP8 cache", B8, whole(B8)),
             self.number("each user's ceiling, FP8 cache", d8.per_user, rate(d8.per_user))))


@register
class ConversationsBeside(Template):
    chapter, label = "05_kv_cache", "kv-cache-ex7"
    tolerance = 0.01

    def draw(self, rng):
        return {"model": pick(rng, dense_models()), "card": pick(rng, cards()),
                "context": pick(rng, (1000, 2000, 3000, 4000, 6000, 8000, 12000, 16000))}

    def holds(self, p):
        c, a, L = cfg(p["model"]), card(p["card"]), p["context"]
        most = max_sequences(a.capacity_bytes, weight_bytes(c), kv_bytes_per_token(c), L)
        room = memory_left_for_cache_bytes(a.capacity_bytes, weight_bytes(c))
        return {"the context fits the model": L <= mdl(p["model"]).context_length,
                "a few conversations fit": most >= 3,
                "the count is not at the edge of a whole number": (room / kv_cache_bytes(kv_bytes_per_token(c), 1, L)) % 1
                < 0.95}

    def key(self, p):
        name, c, a, L = p["model"], cfg(p["model"]), card(p["card"]), p["context"]
        K, stored = kv_bytes_per_token(c), weight_bytes(c)
        one = kv_cache_bytes(K, 1, L)
        u = usable_memory_fraction()
        room = memory_left_for_cache_bytes(a.capacity_bytes, stored)
        most = max_sequences(a.capacity_bytes, stored, K, L)
        return Key(
            (f"{name} stores {gb(stored, 4)} of weights in BF16 and caches {kib(K)} per token. How much cache does one "
             f"conversation of {L:,} tokens hold, and how many such conversations fit beside the weights on "
             f"{an(a.name)}, which reports {mib(a.capacity_bytes)}, of which {pct(u, 2)} is usable?",),
            (f"One conversation: {L:,} × {kib(K)} = {gb(one, 4)}.",
             f"Usable: {pct(u, 2)} × {gb(a.capacity_bytes, 4)} = {gb(u * a.capacity_bytes, 4)}; less the weights, "
             f"{gb(room, 4)}: room for {most} whole conversations."),
            (self.number("one conversation's cache", one, gb(one)),
             self.count("conversations that fit", most, whole(most))))


@register
class SpeedPromise(Template):
    chapter, label = "05_kv_cache", "kv-cache-ex8"

    def draw(self, rng):
        return {"model": pick(rng, dense_models()), "card": pick(rng, cards()),
                "context": pick(rng, (2048, 4096, 8192, 16384)), "promise": pick(rng, (10, 15, 20, 25, 30, 40, 50, 60))}

    def _numbers(self, p):
        c, a, L, s = cfg(p["model"]), card(p["card"]), p["context"], p["promise"]
        P, BW = a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s
        W, K = weight_bytes_read_per_step(c), kv_bytes_per_token(c)
        own = sequence_bytes_per_step(K, L, decode_point(c, P, BW).activation_bytes)
        B_s = batch_at_user_rate(BW, W, own, s)
        B = largest_batch_at_user_rate(BW, W, own, s)
        most = max_sequences(a.capacity_bytes, weight_bytes(c), K, L)
        at_B = decode_point(c, P, BW, B, L) if B >= 1 else None
        full = decode_point(c, P, BW, most, L) if most >= 1 else None
        return W, K, own, B_s, B, most, at_B, full

    def holds(self, p):
        W, K, own, B_s, B, most, at_B, full = self._numbers(p)
        return {"the context fits the model": p["context"] <= mdl(p["model"]).context_length,
                "the promise allows a batch of two or more": B >= 2,
                "memory holds two or more": most >= 2,
                "memory-bound at both batches": bool(at_B and full) and at_B.wall == full.wall == "memory-bound",
                "one limit clearly binds": bool(full) and abs(full.per_user / p["promise"] - 1) > 0.04}

    def key(self, p):
        name, c, a, L, s = p["model"], cfg(p["model"]), card(p["card"]), p["context"], p["promise"]
        W, K, own, B_s, B, most, at_B, full = self._numbers(p)
        A = own - K * L
        meet = full.per_user
        binds = "the promise" if s > meet else "the memory"
        return Key(
            ("A service promises each user at least s tokens per second. With B conversations of L tokens each, a "
             "memory-bound decode step reads W + B(KL + A) bytes.",
             "(a) Show that the largest batch that keeps the promise is B_s = (BW/s - W)/(KL + A), and that the "
             "aggregate rate there is s B_s.",
             "(b) Memory holds at most B_m such conversations. Show that the promise, not the memory, limits the batch "
             "when s exceeds BW/(W + B_m (KL + A)).",
             f"(c) Take {name} on {an(a.name)} at {L:,} tokens of context: {gb(W, 4)} of weights read per step, "
             f"{kib(K)} of cache per token, {mb(A, 4)} of activations per conversation, a bandwidth of "
             f"{gbps(a.bandwidth_bytes_per_s)}, and memory for {most} such conversations. Evaluate B_s and the "
             f"aggregate rate at the whole batch below it for s = {s} tokens per second, and the promise at which the "
             f"two limits meet. Which limit binds?"),
            ("(a) Each user gets one token per step, BW / (W + B(KL + A)) per second; setting it to s gives B_s; the "
             "batch makes B tokens a step, s B_s per second.",
             "(b) Speed falls as the batch grows, so memory binds first when B_m < B_s, that is when s < "
             "BW/(W + B_m(KL + A)), the speed with memory full.",
             calc("KL + A", "", f"{L:,} × {kib(K)} + {mb(A, 4)}", gb(own, 4), "(c)"),
             calc("B_s", "(BW/s - W)/(KL + A)", f"({gbps(a.bandwidth_bytes_per_s)} / {s} - {gb(W, 4)}) / {gb(own, 4)}",
                  sig(B_s, 4)),
             calc("the whole batch below it", "floor(B_s)", f"floor({sig(B_s, 4)})", f"{B} conversations"),
             calc("the aggregate there", "B × BW / (W + B(KL + A))",
                  f"{B} × {gbps(a.bandwidth_bytes_per_s)} / ({gb(W, 4)} + {B} × {gb(own, 4)})", rate(at_B.ceiling, 4)),
             calc("the promise at which the limits meet", "BW/(W + B_m(KL + A))",
                  f"{gbps(a.bandwidth_bytes_per_s)} / ({gb(W, 4)} + {most} × {gb(own, 4)})", rate(meet, 4)),
             f"Which limit binds? {binds.capitalize()}: s = {s} tokens per second is "
             f"{'above' if s > meet else 'below'} that promise."),
            (self.number("B_s", B_s, sig(B_s)),
             self.number("the aggregate at the whole batch", at_B.ceiling, rate(at_B.ceiling)),
             self.number("the promise at which the limits meet", meet, rate(meet)),
             self.choice("the limit that binds", binds)))
