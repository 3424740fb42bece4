"""Chapter 12, the worked example: a model on one card, claim by claim."""
from __future__ import annotations

import math

from inferlimits.arithmetic.kvcache import (fit, kv_cache_bytes, max_sequences, memory_left_for_cache_bytes,
                                            usable_fraction_needed, usable_memory_fraction)
from inferlimits.data.models import embedding_params, kv_bytes_per_token, weight_bytes
from inferlimits.data.units import GB, GIB, bytes_per_element
from inferlimits.book.homework import Key, Template, calc, pick, register, sig, whole
from inferlimits.book.homework.common import an, card, cards, cfg, dense_models, gb, kib, mdl, pct

CONTEXTS = (2048, 4096, 8192, 16384, 24576, 32768)


def _room(a, W, share=None):
    return memory_left_for_cache_bytes(a.capacity_bytes, W, share)


def _steady(room: float, per_sequence: float, slack: float = 0.01) -> bool:
    """Whether the whole number of sequences of ``per_sequence`` bytes that fit in ``room`` stays the
    same when the room moves by ``slack`` either way: a count graded exactly must not sit at the edge
    of a whole number, where the rounding of the question's figures would tip it."""
    return len({math.floor(room * f / per_sequence) for f in (1 - slack, 1, 1 + slack)}) == 1


@register
class Fp8Cache(Template):
    chapter, label = "12_worked_example", "worked-example-ex1"
    counts_exact = True

    def draw(self, rng):
        return {"model": pick(rng, dense_models()), "card": pick(rng, cards()), "context": pick(rng, CONTEXTS)}

    def holds(self, p):
        c, a, L = cfg(p["model"]), card(p["card"]), p["context"]
        k8 = kv_bytes_per_token(c, "FP8")
        n = max_sequences(a.capacity_bytes, weight_bytes(c), k8, L)
        return {"the context fits the model": L <= mdl(p["model"]).context_length, "one to 60 sequences fit": 1 <= n <= 60,
                "the count is not at the edge of a whole number": _steady(_room(a, weight_bytes(c)), kv_cache_bytes(k8, 1, L))}

    def key(self, p):
        name, c, a, L = p["model"], cfg(p["model"]), card(p["card"]), p["context"]
        k8 = kv_bytes_per_token(c, "FP8")
        one = kv_cache_bytes(k8, 1, L)
        room = _room(a, weight_bytes(c))
        n = max_sequences(a.capacity_bytes, weight_bytes(c), k8, L)
        converts = ("; attention converts it back as it reads it, since the card has no FP8 math"
                    if not a.supports("FP8") else "")
        return Key(
            (f"At the book's {pct(usable_memory_fraction(), 2)} usable, store the cache of {name} in FP8, one byte "
             f"per number, instead of BF16{converts}. For each token, the cache keeps a key and a value of "
             f"{c.head_dim_qk} numbers for each of {c.num_key_value_heads} KV heads in each of {c.num_hidden_layers} "
             f"layers. How large is the FP8 cache of one sequence of {L:,} tokens? How many whole such sequences fit "
             f"on {an(a.name)}, where that share leaves {gb(room)} beside the BF16 weights?",),
            (f"K = 2 × {c.num_hidden_layers} × {c.num_key_value_heads} × {c.head_dim_qk} × 1 byte = {whole(k8)} bytes "
             f"({kib(k8)}).",
             f"A sequence of {L:,} tokens: {whole(k8)} bytes × {L:,} = {gb(one, 4)}.",
             f"Whole sequences in the room the problem gives: floor({gb(room, 4)} / {gb(one, 4)}) = {n} "
             f"({sig(room / one, 3)} if they could be split)."),
            (self.number("one sequence's cache", one, gb(one)),
             self.count("whole sequences that fit", n, whole(n))))


@register
class CacheOrWeights(Template):
    chapter, label = "12_worked_example", "worked-example-ex2"
    tolerance, counts_exact = 0.0, True

    def draw(self, rng):
        p = {"model": pick(rng, dense_models()), "card": pick(rng, cards())}
        # a context at which one to three conversations fit today, where this pair has one
        fitting = [L for L in CONTEXTS if all(self.holds({**p, "context": L}).values())]
        return {**p, "context": pick(rng, fitting) if fitting else CONTEXTS[0]}

    SETUPS = (("today", "BF16", "BF16"), ("FP8 cache", "BF16", "FP8"), ("INT8 weights", "INT8", "BF16"),
              ("both", "INT8", "FP8"))

    def _counts(self, p):
        c, a, L = cfg(p["model"]), card(p["card"]), p["context"]
        return {label: max_sequences(a.capacity_bytes, weight_bytes(c, w), kv_bytes_per_token(c, k), L)
                for label, w, k in self.SETUPS}

    def holds(self, p):
        c, a, L = cfg(p["model"]), card(p["card"]), p["context"]
        n = self._counts(p)
        return {"the context fits the model": L <= mdl(p["model"]).context_length,
                "one to three fit today": 1 <= n["today"] <= 3,
                "the two proposals differ": n["FP8 cache"] != n["INT8 weights"],
                "no count at the edge of a whole number": all(
                    _steady(_room(a, weight_bytes(c, w)), kv_cache_bytes(kv_bytes_per_token(c, k), 1, L))
                    for _, w, k in self.SETUPS)}

    def key(self, p):
        name, c, a, L = p["model"], cfg(p["model"]), card(p["card"]), p["context"]
        n = self._counts(p)
        better = max(("FP8 cache", "INT8 weights"), key=n.get)
        u = usable_memory_fraction()
        usable, W16, W8, K = u * a.capacity_bytes, weight_bytes(c), weight_bytes(c, "INT8"), kv_bytes_per_token(c)
        room16, room8 = _room(a, W16), _room(a, W8)
        cache16, cache8 = kv_cache_bytes(K, 1, L), kv_cache_bytes(kv_bytes_per_token(c, "FP8"), 1, L)
        tables, table = (1 if c.tie_word_embeddings else 2), embedding_params(c) * bytes_per_element("BF16")
        return Key(
            (f"At the book's {pct(u, 2)} usable, only {('one', 'two', 'three')[n['today'] - 1]} {L:,}-token "
             f"{'conversation fits' if n['today'] == 1 else 'conversations fit'} when {name} runs on {an(a.name)} "
             f"with BF16 weights and cache, and you need more. One colleague proposes an FP8 cache; another proposes "
             f"INT8 weights (converted back to BF16 for the math) with the cache left in BF16. The INT8 checkpoint "
             f"keeps the embedding table and the output head in BF16, "
             f"{gb(embedding_params(c) * bytes_per_element('BF16'))} each, and stores every other weight of the "
             f"{gb(weight_bytes(c))} in one byte instead of two. The BF16 cache takes {whole(kv_bytes_per_token(c))} "
             f"bytes per token, and the usable memory is {gb(u * a.capacity_bytes)}. Which helps more, and how many "
             f"sequences does doing both fit?",),
            ("Whole conversations that fit: floor((u C - W) / (L K)), with W the stored weights and K the cache per "
             "token (half in FP8).",
             calc("room with BF16 weights", "u C - W", f"{gb(usable, 4)} - {gb(W16, 4)}", gb(room16, 4)),
             calc("an FP8 cache", "L × K / 2", f"{L:,} × {whole(K)} bytes / 2", gb(cache8, 4)),
             calc("conversations with an FP8 cache", "floor(room / cache)", f"floor({gb(room16, 4)} / {gb(cache8, 4)})",
                  whole(n["FP8 cache"])),
             calc("INT8 weights", f"{tables} × table + (W - {tables} × table) / 2",
                  f"{tables} × {gb(table, 4)} + ({gb(W16, 4)} - {tables} × {gb(table, 4)}) / 2", gb(W8, 4)),
             calc("room with INT8 weights", "u C - W", f"{gb(usable, 4)} - {gb(W8, 4)}", gb(room8, 4)),
             calc("a BF16 cache", "L × K", f"{L:,} × {whole(K)} bytes", gb(cache16, 4)),
             calc("conversations with INT8 weights", "floor(room / cache)", f"floor({gb(room8, 4)} / {gb(cache16, 4)})",
                  whole(n["INT8 weights"])),
             f"Helps more: {better}.",
             calc("conversations with both", "floor(room / cache)", f"floor({gb(room8, 4)} / {gb(cache8, 4)})",
                  whole(n["both"]))),
            (self.count("conversations with an FP8 cache", n["FP8 cache"], whole(n["FP8 cache"])),
             self.count("conversations with INT8 weights", n["INT8 weights"], whole(n["INT8 weights"])),
             self.choice("helps more", better),
             self.count("conversations with both", n["both"], whole(n["both"]))))


@register
class UnitSlip(Template):
    chapter, label = "12_worked_example", "worked-example-ex5"
    counts_exact = True

    def draw(self, rng):
        return {"model": pick(rng, dense_models()), "card": pick(rng, cards()), "context": pick(rng, (1024, 2048, 4096))}

    def _numbers(self, p):
        c, a, L = cfg(p["model"]), card(p["card"]), p["context"]
        u, W, K = usable_memory_fraction(), weight_bytes(c), kv_bytes_per_token(c)
        misread = a.capacity_bytes * GB / GIB
        one = kv_cache_bytes(K, 1, L)
        room = memory_left_for_cache_bytes(a.capacity_bytes, W)
        slipped = memory_left_for_cache_bytes(misread, W)
        multiplier = fit(a.capacity_bytes, W).usable_bytes / room if room else math.inf
        under = 1 - slipped / room if room else 0.0
        threshold = usable_fraction_needed(misread, W, one)
        return dict(u=u, W=W, K=K, misread=misread, one=one, room=room, slipped=slipped, multiplier=multiplier,
                    under=under, right=max_sequences(a.capacity_bytes, W, K, L),
                    wrong=max_sequences(misread, W, K, L), threshold=threshold,
                    at_threshold=max_sequences(a.capacity_bytes, W, K, L, min(1.0, threshold)))

    def holds(self, p):
        c, a = cfg(p["model"]), card(p["card"])
        x = self._numbers(p)
        return {"the weights fill much of the card": x["W"] > 0.4 * x["u"] * a.capacity_bytes,
                "the misread room holds a cache": x["wrong"] >= 1,
                "the slip costs caches": x["right"] > x["wrong"],
                "the threshold lies below the book's share": x["threshold"] < x["u"],
                "no count at the edge of a whole number": _steady(x["room"], x["one"]) and _steady(x["slipped"], x["one"])
                and _steady(x["threshold"] * a.capacity_bytes - x["W"], x["one"], 0.002 * a.capacity_bytes
                            / max(1.0, x["threshold"] * a.capacity_bytes - x["W"]))}

    def key(self, p):
        name, c, a, L = p["model"], cfg(p["model"]), card(p["card"]), p["context"]
        x = self._numbers(p)
        eps = 1 - GB / GIB
        return Key(
            (f"This exercise works at the book's {pct(x['u'], 2)} usable. Suppose a card's capacity C is misread as "
             f"C - εC, as when a card's GiB are counted as billions of bytes: a GB falls short of a GiB by "
             f"ε = (GiB - GB)/GiB, about {pct(eps, 2)}. With a usable share u and stored weights W, show that the room "
             f"left for caches, uC - W, is then understated by the share ε · uC/(uC - W): the slip in the capacity, "
             f"multiplied by the usable memory over the room.",
             f"Evaluate the multiplier and the share for {name} on {an(a.name)} (stored weights of {gb(x['W'])}, a "
             f"capacity of {gb(a.capacity_bytes)}), and say what the slip does to the number of {L:,}-token BF16 "
             f"caches, {gb(x['one'])} each, that fit. Below what usable share does the misread room hold not a single "
             f"one of those caches, and how many really fit at that share? Why does the same slip matter more on a "
             f"card the weights nearly fill?"),
            ("The room is uC - W; misread, u(C - εC) - W, smaller by εuC. As a share of the room that is "
             "εuC/(uC - W) = ε · uC/(uC - W).",
             calc("ε", "(GiB - GB)/GiB", f"({GIB:,} - {GB:,.0f}) / {GIB:,}", pct(eps, 4)),
             calc("uC", "", f"{pct(x['u'], 2)} × {gb(a.capacity_bytes, 4)}", gb(x['u'] * a.capacity_bytes, 4)),
             calc("the room", "uC - W", f"{gb(x['u'] * a.capacity_bytes, 4)} - {gb(x['W'], 4)}", gb(x['room'], 4)),
             calc("the multiplier", "uC/(uC - W)", f"{gb(x['u'] * a.capacity_bytes, 4)} / {gb(x['room'], 4)}",
                  sig(x['multiplier'], 4)),
             calc("the share the room is understated by", "ε × uC/(uC - W)", f"{pct(eps, 4)} × {sig(x['multiplier'], 4)}",
                  pct(x['under'], 4)),
             calc("the misread capacity", "C - εC", f"{gb(a.capacity_bytes, 4)} - {pct(eps, 4)} × "
                  f"{gb(a.capacity_bytes, 4)}", gb(x['misread'], 4)),
             calc("the misread room", "u(C - εC) - W", f"{pct(x['u'], 2)} × {gb(x['misread'], 4)} - {gb(x['W'], 4)}",
                  gb(x['slipped'], 4)),
             calc("caches that fit", "floor(room / cache)", f"floor({gb(x['room'], 4)} / {gb(x['one'], 4)})",
                  whole(x['right'])),
             calc("caches that fit, misread", "floor(misread room / cache)",
                  f"floor({gb(x['slipped'], 4)} / {gb(x['one'], 4)})", whole(x['wrong'])),
             "The misread room holds no cache once u(C - εC) < W + one cache, that is below u* = (W + cache)/(C - εC).",
             calc("u*", "(W + cache)/(C - εC)", f"({gb(x['W'], 4)} + {gb(x['one'], 4)}) / {gb(x['misread'], 4)}",
                  pct(x['threshold'], 4)),
             calc("caches that really fit at u*", "floor((u* C - W) / cache)",
                  f"floor(({pct(x['threshold'], 4)} × {gb(a.capacity_bytes, 4)} - {gb(x['W'], 4)}) / {gb(x['one'], 4)})",
                  whole(x['at_threshold'])),
             "The slip is a share of the whole card, taken out of the room alone: the fuller the card, the larger "
             "the share of the room it takes."),
            (self.number("the multiplier uC/(uC - W)", x["multiplier"], sig(x["multiplier"])),
             self.number("the share the room is understated by", x["under"], pct(x["under"])),
             self.count("caches that fit", x["right"], whole(x["right"])),
             self.count("caches that fit, misread", x["wrong"], whole(x["wrong"])),
             self.number("the usable share below which the misread room holds none", x["threshold"],
                         pct(x["threshold"])),
             self.count("caches that really fit at that share", x["at_threshold"], whole(x["at_threshold"]))))
