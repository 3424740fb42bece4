"""Chapter 12, the worked example: a model on one card, claim by claim."""
from __future__ import annotations

from inferlimits.arithmetic.generation import decode_point
from inferlimits.arithmetic.kvcache import (kv_cache_bytes, max_sequences, memory_left_for_cache_bytes,
                                            usable_memory_fraction)
from inferlimits.data.models import kv_bytes_per_token, param_count, weight_bytes
from inferlimits.data.units import GB, GIB
from inferlimits.book.homework import Key, Template, pick, register, sig, whole
from inferlimits.book.homework.common import (multiplied_note, vocabulary_note, an, billions, card, cards, cfg, dense_models, gb, kib, mdl, pct, times,
                                         tokens)

CONTEXTS = (2048, 4096, 8192, 16384, 24576, 32768)


def _room(a, W, share=None):
    return memory_left_for_cache_bytes(a.capacity_bytes, W, share)


@register
class Fp8Cache(Template):
    chapter, label = "12_worked_example", "worked-example-ex1"

    def draw(self, rng):
        return {"model": pick(rng, dense_models()), "card": pick(rng, cards()), "context": pick(rng, CONTEXTS)}

    def holds(self, p):
        c, a, L = cfg(p["model"]), card(p["card"]), p["context"]
        n = max_sequences(a.capacity_bytes, weight_bytes(c), kv_bytes_per_token(c, "FP8"), L)
        return {"the context fits the model": L <= mdl(p["model"]).context_length, "one to 60 sequences fit": 1 <= n <= 60}

    def key(self, p):
        name, c, a, L = p["model"], cfg(p["model"]), card(p["card"]), p["context"]
        k8 = kv_bytes_per_token(c, "FP8")
        one = kv_cache_bytes(k8, 1, L)
        room = _room(a, weight_bytes(c))
        n = max_sequences(a.capacity_bytes, weight_bytes(c), k8, L)
        return Key(
            (f"Store the cache of {name} in FP8 instead of BF16. How many bytes does one token add to a sequence's "
             f"cache, how large is a sequence of {L:,} tokens, and how many whole such sequences fit on "
             f"{an(a.name)} with the book's {pct(usable_memory_fraction(), 2)} usable and BF16 weights?",
             f"The data you need: {name} has {c.num_hidden_layers} layers and {c.num_key_value_heads} KV heads of "
             f"{c.head_dim_qk} numbers, and stores {billions(param_count(c))} weights; the {a.name} reports "
             f"{gb(a.capacity_bytes, 4)}."),
            (f"K = 2 × {c.num_hidden_layers} × {c.num_key_value_heads} × {c.head_dim_qk} × 1 byte = {whole(k8)} bytes "
             f"({kib(k8)}); a sequence of {L:,} tokens: {gb(one, 4)}.",
             f"Room: {pct(usable_memory_fraction(), 2)} × {gb(a.capacity_bytes, 4)} - {gb(weight_bytes(c), 4)} = "
             f"{gb(room, 4)}, so {n} whole sequences ({sig(room / one, 3)} if they could be split)."),
            (self.number("cache bytes per token", k8, f"{whole(k8)} bytes"),
             self.number("one sequence's cache", one, gb(one)),
             self.number("whole sequences that fit", n, whole(n))))


@register
class CacheOrWeights(Template):
    chapter, label = "12_worked_example", "worked-example-ex2"

    def draw(self, rng):
        p = {"model": pick(rng, dense_models()), "card": pick(rng, cards())}
        # a context at which one to three conversations fit today, where this pair has one
        fitting = [L for L in CONTEXTS if all(self.holds({**p, "context": L}).values())]
        return {**p, "context": pick(rng, fitting) if fitting else CONTEXTS[0]}

    def _counts(self, p):
        c, a, L = cfg(p["model"]), card(p["card"]), p["context"]
        out = {}
        for label, w, k in (("today", "BF16", "BF16"), ("FP8 cache", "BF16", "FP8"), ("INT8 weights", "INT8", "BF16"),
                            ("both", "INT8", "FP8")):
            out[label] = max_sequences(a.capacity_bytes, weight_bytes(c, w), kv_bytes_per_token(c, k), L)
        return out

    def holds(self, p):
        n = self._counts(p)
        return {"the context fits the model": p["context"] <= mdl(p["model"]).context_length,
                "one to three fit today": 1 <= n["today"] <= 3,
                "the two proposals differ": n["FP8 cache"] != n["INT8 weights"]}

    def key(self, p):
        name, c, a, L = p["model"], cfg(p["model"]), card(p["card"]), p["context"]
        n = self._counts(p)
        better = max(("FP8 cache", "INT8 weights"), key=n.get)
        P, BW = a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s
        gain = decode_point(c, P, BW, weight_precision="INT8").ceiling / decode_point(c, P, BW).ceiling
        return Key(
            (f"You need more {L:,}-token conversations of {name} on {an(a.name)}, where today, with the book's "
             f"{pct(usable_memory_fraction(), 2)} usable and BF16 weights and cache, only {n['today']} "
             f"{'fits' if n['today'] == 1 else 'fit'}. One colleague proposes an FP8 cache; another proposes INT8 "
             f"weights (converted back to BF16 for the math) with the cache left in BF16. Take the INT8 checkpoint to "
             f"keep the vocabulary tables in BF16, and every other weight in one byte. How many "
             f"conversations fit with each, and with both? Which helps more? By what factor do INT8 weights raise the "
             f"ceiling for one sequence with no context?",
             f"The data you need: {name} stores {billions(param_count(c))} weights; {vocabulary_note(c)} (a token "
             f"multiplies {multiplied_note(c)}); its cache "
             f"takes {kib(kv_bytes_per_token(c))} per token in BF16; the {a.name} reports {gb(a.capacity_bytes, 4)}."),
            (f"INT8 weights: {gb(weight_bytes(c, 'INT8'), 4)}, room {gb(_room(a, weight_bytes(c, 'INT8')), 4)}; BF16 "
             f"weights {gb(weight_bytes(c), 4)}, room {gb(_room(a, weight_bytes(c)), 4)}.",
             f"Conversations: FP8 cache {n['FP8 cache']}, INT8 weights {n['INT8 weights']}, both {n['both']}; "
             f"{better} helps more.",
             f"One sequence: INT8 weights read about half the bytes, the head still in BF16: {times(gain, 4)}."),
            (self.number("conversations with an FP8 cache", n["FP8 cache"], whole(n["FP8 cache"])),
             self.number("conversations with INT8 weights", n["INT8 weights"], whole(n["INT8 weights"])),
             self.number("conversations with both", n["both"], whole(n["both"])),
             self.choice("helps more", better),
             self.number("the single-sequence ceiling's gain", gain, times(gain))))


@register
class UnitSlip(Template):
    chapter, label = "12_worked_example", "worked-example-ex5"

    def draw(self, rng):
        return {"model": pick(rng, dense_models()), "card": pick(rng, cards()), "context": pick(rng, (1024, 2048, 4096)),
                "shares": sorted(pick(rng, ((0.9, 0.95), (0.85, 0.9), (0.9, 0.92), (0.8, 0.95))), reverse=True)}

    def _rows(self, p):
        c, a, L = cfg(p["model"]), card(p["card"]), p["context"]
        W, K = weight_bytes(c), kv_bytes_per_token(c)
        misread = a.capacity_bytes * GB / GIB
        rows = []
        for u in p["shares"]:
            room = memory_left_for_cache_bytes(a.capacity_bytes, W, u)
            slipped = memory_left_for_cache_bytes(misread, W, u)
            rows.append((u, room, 1 - slipped / room if room else 0.0, max_sequences(a.capacity_bytes, W, K, L, u),
                         max_sequences(misread, W, K, L, u)))
        return rows

    def holds(self, p):
        c, a = cfg(p["model"]), card(p["card"])
        rows = self._rows(p)
        return {"the weights fill much of the card": weight_bytes(c) > 0.4 * min(p["shares"]) * a.capacity_bytes,
                "the weights fit under the slip at both shares":
                    all(memory_left_for_cache_bytes(a.capacity_bytes * GB / GIB, weight_bytes(c), u) > 0 for u in p["shares"]),
                "the slip costs caches at both shares": all(right > wrong for *_, right, wrong in rows)}

    def key(self, p):
        name, c, a, L = p["model"], cfg(p["model"]), card(p["card"]), p["context"]
        rows = self._rows(p)
        eps = 1 - GB / GIB
        K = kv_bytes_per_token(c)
        lines = [f"ε = 1 - GB/GiB = {pct(eps, 3)}; room uC - W, misread u(C - εC) - W: understated by "
                 f"εuC/(uC - W)."]
        answers = []
        for u, room, under, right, wrong in rows:
            lines.append(f"u = {pct(u, 2)}: room {gb(room, 4)}, understated by {pct(under, 3)}; caches {right} "
                         f"against {wrong} misread.")
            answers += [self.number(f"understated share at {pct(u, 2)}", under, pct(under)),
                        self.number(f"caches that fit at {pct(u, 2)}", right, whole(right)),
                        self.number(f"caches that fit at {pct(u, 2)}, misread", wrong, whole(wrong))]
        u1, u2 = (pct(u, 2) for u in p["shares"])
        return Key(
            ("Suppose a card's capacity C is misread as C - εC, as when a card's GiB are counted as billions of "
             "bytes: a GB falls short of a GiB by ε, about 6.9%. With a usable share u and stored weights W, show that "
             "the room left for caches, uC - W, is then understated by the share ε · uC/(uC - W).",
             f"Evaluate it for {name} on {an(a.name)} (stored weights of {gb(weight_bytes(c), 4)}, a capacity of "
             f"{gb(a.capacity_bytes, 4)}) with a usable share of {u1} and of {u2}, and say what it does to the number "
             f"of {L:,}-token BF16 caches, {gb(K * L, 4)} each, that fit. Why does the same slip matter more on a card "
             f"the weights nearly fill?"),
            tuple(lines) + ("The slip is a share of the whole card, taken out of the room alone: the fuller the card, "
                            "the larger the share of the room it takes.",),
            tuple(answers))
