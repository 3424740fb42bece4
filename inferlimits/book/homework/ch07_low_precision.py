"""Chapter 7, low precision: the bytes a weight takes, and the math it is multiplied in."""
from __future__ import annotations

import math
from functools import lru_cache

from inferlimits.arithmetic.activations import activation_bytes_per_token
from inferlimits.arithmetic.generation import decode_flops_per_token, weight_bytes_read_per_step
from inferlimits.arithmetic.kvcache import (fit, largest_batch_at_user_rate, max_sequences, sequence_bytes_per_step,
                                            usable_memory_fraction)
from inferlimits.arithmetic.generation import attention_flops_per_token
from inferlimits.arithmetic.precision import (decode_math_rate, decode_on, knee_on, knee_weights_only_on,
                                              product_flops_by_precision)
from inferlimits.data.models import embedding_params, kv_bytes_per_token, stored_weights, weight_bytes
from inferlimits.data.units import Format, formats
from inferlimits.book.homework import Key, Template, calc, pick, register, sig
from inferlimits.book.homework.common import (mdl, An, an, billions, card, cards_with, cfg, dense_models, gb, gbps,
                                         gib, kib, mb, mib, moe_models, pct, rate, tflops, times)

RECIPE = "MXFP4 experts"


def _block_format(bits: int, block: int, scale: int) -> Format:
    return Format(f"{bits}-bit, {block} per {scale}-bit scale", float(bits), block, float(scale), "none", False,
                  "a block format of the homework")


def _gflop(x: float) -> str:
    return f"{sig(x / 1e9, 4)} GFLOP"


def _fp8_rate(a, c, L: float = 0.0):
    """A line of working: the effective rate of a decode step with FP8 weights and math, whose output
    head (and attention, over L tokens) runs in BF16: F over the summed times of its parts."""
    parts = product_flops_by_precision(c, "FP8", "FP8")
    wide, narrow = parts.get("BF16", 0.0), parts.get("FP8", 0.0)
    attention = attention_flops_per_token(c, L)
    rate_ = decode_math_rate(a, c, "FP8", "FP8", L)
    P16, P8 = a.dense_bf16_flops_per_s, a.math_flops_per_s("FP8")
    F = wide + narrow + attention
    if attention:
        return (calc("2(N - H), the products in FP8", "F - 2H - attention",
                     f"{_gflop(F)} - {_gflop(wide)} - {_gflop(attention)}", _gflop(narrow)),
                calc("the effective FP8 rate", "F / ((2H + attention) / P₁₆ + 2(N - H) / P₈)",
                     f"{_gflop(F)} / (({_gflop(wide)} + {_gflop(attention)}) / {tflops(P16)} + "
                     f"{_gflop(narrow)} / {tflops(P8)})", tflops(rate_))), rate_
    return (calc("2(N - H), the products in FP8", "F - 2H", f"{_gflop(F)} - {_gflop(wide)}", _gflop(narrow)),
            calc("the effective FP8 rate", "F / (2H / P₁₆ + 2(N - H) / P₈)",
                 f"{_gflop(F)} / ({_gflop(wide)} / {tflops(P16)} + {_gflop(narrow)} / {tflops(P8)})",
                 tflops(rate_))), rate_


def _head_flops(c) -> float:
    """2H: the output head's FLOPs per token, which stay in BF16 when the other products run in FP8."""
    return product_flops_by_precision(c, "FP8", "FP8").get("BF16", 0.0)


@register
class BitsPerWeight(Template):
    chapter, label = "07_low_precision", "low-precision-ex1"
    tolerance = 0.03

    def draw(self, rng):
        return {"wide": [pick(rng, (6, 8)), pick(rng, (16, 32, 64)), pick(rng, (8, 16))],
                "narrow": [pick(rng, (3, 4)), pick(rng, (32, 64, 128)), pick(rng, (8, 16))],
                "model": pick(rng, moe_models())}

    def holds(self, p):
        return {"the model has experts to quantize": stored_weights(cfg(p["model"])).experts > 0}

    def key(self, p):
        (e1, g1, s1), (e2, g2, s2), name = p["wide"], p["narrow"], p["model"]
        c = cfg(p["model"])
        one, two = _block_format(e1, g1, s1).bits_per_element, _block_format(e2, g2, s2).bits_per_element
        mx = formats()["MXFP4"]
        w = stored_weights(c)
        held, wide = weight_bytes(c, RECIPE), weight_bytes(c, "BF16")
        return Key(
            (f"{_a(e1).capitalize()} {e1}-bit format gives every {g1} numbers one {s1}-bit scale; {_a(e2)} {e2}-bit format "
             f"gives every {g2} numbers one {s2}-bit scale. How many bits does each cost per weight?",
             f"{name} stores {billions(w.total)} weights, {billions(w.experts)} of them in its experts' matrices. What "
             f"do they take on disk with those in MXFP4, at {sig(mx.bits_per_element, 3)} bits, and everything else in "
             f"BF16, in GiB? What would the same weights take in BF16, in GB? (A byte is 8 bits; a BF16 weight takes 2 "
             f"bytes.)"),
            (f"Bits per weight: element bits + scale bits / block = {e1} + {s1}/{g1} = {sig(one, 4)}, and {e2} + "
             f"{s2}/{g2} = {sig(two, 4)}.",
             f"MXFP4 experts at {sig(mx.bits_per_element, 3)} bits: {billions(w.experts)} × "
             f"{sig(mx.bits_per_element, 3)} / 8 bytes + ({billions(w.total)} - {billions(w.experts)}) × 2 bytes = {gib(held, 4)}.",
             f"All in BF16: {billions(w.total)} × 2 bytes = {gb(wide, 4)}."),
            (self.number(f"bits per weight, the {_words(e1)}-bit format", one, sig(one, 4)),
             self.number(f"bits per weight, the {_words(e2)}-bit format", two, sig(two, 4)),
             self.number("the model with MXFP4 experts", held, gib(held)),
             self.number("the model in BF16", wide, gb(wide))))


def _a(bits: int) -> str:
    """The article before a width written in numerals: an 8-bit format, a 4-bit format."""
    return "an" if str(bits).startswith("8") or bits in (11, 18) else "a"


def _words(bits: int) -> str:
    """A width in words, as the exercise writes it: eight, four."""
    return {3: "three", 4: "four", 6: "six", 8: "eight"}[bits]


def _fp8_double() -> tuple[str, ...]:
    """Cards whose FP8 rate is twice their BF16 rate (within 1%): the derivation's premise."""
    return tuple(n for n in cards_with("FP8")
                 if abs(card(n).math_flops_per_s("FP8") / card(n).dense_bf16_flops_per_s - 2) < 0.02)


@register
class KneeUnchanged(Template):
    chapter, label = "07_low_precision", "low-precision-ex2"
    tolerance = 0.03   # the exercise states none; the chapter's other exercises grade at 3%

    def draw(self, rng):
        return {"model": pick(rng, dense_models()), "card": pick(rng, _fp8_double())}

    def _knees(self, p):
        c, a = cfg(p["model"]), card(p["card"])
        return (knee_weights_only_on(a, c), knee_weights_only_on(a, c, "FP8", "FP8"),
                knee_on(a, c), knee_on(a, c, 0.0, "FP8", "BF16", "FP8"),
                decode_math_rate(a, c, "FP8", "FP8") / decode_math_rate(a, c))

    def holds(self, p):
        c = cfg(p["model"])
        return {"the output head is its own matrix": not c.tie_word_embeddings,
                "every knee is finite": all(math.isfinite(k) for k in self._knees(p)[:4])}

    def key(self, p):
        name, c, a = p["model"], cfg(p["model"]), card(p["card"])
        w16, w8, k16, k8, gain = self._knees(p)
        eta = embedding_params(c) / (weight_bytes_read_per_step(c) / 2)
        rate_lines, P8 = _fp8_rate(a, c)
        P16, BW, F, A = a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s, decode_flops_per_token(c), activation_bytes_per_token(c)
        W16, W8 = weight_bytes_read_per_step(c), weight_bytes_read_per_step(c, "FP8")
        return Key(
            ("Start from B*_W = (P / BW) · (W / F), the knee counting the weights alone. (a) Show that storing the "
             "weights in FP8 and multiplying in FP8, on a part whose FP8 rate is twice its BF16 rate, leaves this knee "
             "unchanged. (b) Now keep the output head, a fraction η of the weights, in BF16 for both its bytes and its "
             "math. Write the step's math time and bytes per token for both cases and show that the knee is still "
             "unchanged. (c) Which term of the full knee formula B* = P W / (BW F - P (K L + A)) does change, and in "
             "which direction?",
             f"Check your answers for {name} on {an(a.name)} ({tflops(a.dense_bf16_flops_per_s)} in BF16, "
             f"{tflops(a.math_flops_per_s('FP8'))} in FP8, {gbps(a.bandwidth_bytes_per_s)}) with no context: a step "
             f"reads {gb(weight_bytes_read_per_step(c), 4)} of weights in BF16 and "
             f"{gb(weight_bytes_read_per_step(c, 'FP8'), 4)} with FP8 weights and a BF16 head (η = {sig(eta, 3)}), a "
             f"token does {sig(decode_flops_per_token(c) / 1e9, 4)} GFLOP and moves "
             f"{mb(activation_bytes_per_token(c), 4)} of BF16 activations. Give the weights-only knee in both cases, "
             f"the effective FP8 rate over the BF16 rate, and the full knee in both cases."),
            ("(a) B*_W = (P / BW) · (W / F): P → 2P and W → W/2 leave P·W, and so B*_W, unchanged; F, two operations "
             "per weight, does not depend on the format.",
             "(b) With the head in BF16 the bytes per token are (1 - η) N + 2η N = (1 + η) N against 2N in BF16, and "
             "the math time (1 - η) 2N / 2P + η 2N / P = (1 + η) N / P against 2N / P. Both grow by the same factor, "
             "(1 + η)/2, so the knee, where math time meets memory time, stays where it was.",
             calc("weights-only knee, BF16", "(P / BW) · (W / F)", f"({tflops(P16)} / {gbps(BW)}) × ({gb(W16, 4)} / "
                  f"{_gflop(F)})", sig(w16, 4)),
             calc("2H, the head's products in BF16", "η F", f"{sig(eta, 3)} × {_gflop(F)}", _gflop(_head_flops(c))),
             *rate_lines,
             calc("effective FP8 rate over BF16", "", f"{tflops(P8)} / {tflops(P16)}", times(gain, 4)),
             calc("weights-only knee, FP8", "(P / BW) · (W / F)", f"({tflops(P8)} / {gbps(BW)}) × ({gb(W8, 4)} / "
                  f"{_gflop(F)})", sig(w8, 4)),
             "(c) In B* = P W / (BW F - P (K L + A)) the product P W is unchanged, but P (K L + A) grows with the "
             "effective rate: the denominator shrinks and the knee rises.",
             calc("full knee, BF16", "P W / (BW F - P A)", f"{tflops(P16)} × {gb(W16, 4)} / ({gbps(BW)} × {_gflop(F)} - "
                  f"{tflops(P16)} × {mb(A, 4)})", sig(k16, 4)),
             calc("full knee, FP8", "P W / (BW F - P A)", f"{tflops(P8)} × {gb(W8, 4)} / ({gbps(BW)} × {_gflop(F)} - "
                  f"{tflops(P8)} × {mb(A, 4)})", sig(k8, 4))),
            (self.number("weights-only knee, BF16", w16, sig(w16)),
             self.number("weights-only knee, FP8 weights and math", w8, sig(w8)),
             self.number("effective FP8 rate over BF16", gain, times(gain)),
             self.number("full knee, BF16", k16, sig(k16)),
             self.number("full knee, FP8 weights and math", k8, sig(k8))))


@register
class Int4OrFp8(Template):
    chapter, label = "07_low_precision", "low-precision-ex3"
    tolerance = 0.03

    def draw(self, rng):
        return {"model": pick(rng, dense_models()), "card": pick(rng, cards_with("FP8")),
                "context": pick(rng, (256, 512, 1024, 2048)), "batch": pick(rng, (128, 256, 512, 1024))}

    def _points(self, p):
        c, a, L, B = cfg(p["model"]), card(p["card"]), p["context"], p["batch"]
        return {b: (decode_on(a, c, b, L, "INT4", "FP8"), decode_on(a, c, b, L, "FP8", "FP8", "FP8")) for b in (1, B)}

    def holds(self, p):
        c, a, L, B = cfg(p["model"]), card(p["card"]), p["context"], p["batch"]
        pts = self._points(p)
        k = kv_bytes_per_token(c, "FP8")
        return {"both fit the batch": all(fit(a.capacity_bytes, weight_bytes(c, w), k, B, L).fits for w in ("INT4", "FP8")),
                "INT4 wins for one user, clearly": pts[1][0].ceiling > 1.05 * pts[1][1].ceiling,
                "FP8 wins at the batch, clearly": pts[B][1].ceiling > 1.05 * pts[B][0].ceiling,
                "both compute-bound at the batch": pts[B][0].wall == pts[B][1].wall == "compute-bound"}

    def key(self, p):
        name, c, a, L, B = p["model"], cfg(p["model"]), card(p["card"]), p["context"], p["batch"]
        pts = self._points(p)
        (i1, f1), (iB, fB) = pts[1], pts[B]
        k = kv_bytes_per_token(c, "FP8")
        return Key(
            (f"You serve {name} on one {a.name} with an FP8 cache and must choose between INT4 weight-only "
             f"quantization (math in BF16) and FP8 weights with FP8 math. Which gives the higher ceiling for one user "
             f"with {L:,} tokens of context, and by what factor? Which for {B:,} sequences of {L:,} tokens each (check "
             f"that they fit), and by what factor? Why do the answers differ?",
             f"The data you need: a step reads {gb(weight_bytes_read_per_step(c, 'INT4'), 4)} of INT4 weights or "
             f"{gb(weight_bytes_read_per_step(c, 'FP8'), 4)} of FP8 weights (the output head stays in BF16, for its "
             f"bytes and its math), and memory holds {gb(weight_bytes(c, 'INT4'), 4)} or "
             f"{gb(weight_bytes(c, 'FP8'), 4)}; the FP8 cache is {kib(k)} per token; a token moves "
             f"{mb(activation_bytes_per_token(c), 4)} of BF16 activations and does "
             f"{sig(decode_flops_per_token(c, L) / 1e9, 4)} GFLOP at this context, of which the output head does "
             f"{_gflop(_head_flops(c))} and attention {_gflop(attention_flops_per_token(c, L))}, both in BF16. "
             f"The {a.name} does {tflops(a.dense_bf16_flops_per_s)} in BF16 and {tflops(a.math_flops_per_s('FP8'))} "
             f"in FP8, moves {gbps(a.bandwidth_bytes_per_s)}, and can use {gb(usable_memory_fraction() * a.capacity_bytes, 4)}."),
            self._working(p),
            (self.choice("higher for one user", "INT4"),
             self.number("INT4 over FP8, one user", i1.ceiling / f1.ceiling, times(i1.ceiling / f1.ceiling)),
             self.choice(f"higher for {B:,} sequences", "FP8"),
             self.number(f"FP8 over INT4, {B:,} sequences", fB.ceiling / iB.ceiling, times(fB.ceiling / iB.ceiling)),
             self.number("INT4 ceiling, one user", i1.ceiling, rate(i1.ceiling)),
             self.number(f"FP8 ceiling, {B:,} sequences", fB.ceiling, rate(fB.ceiling))))


    def _working(self, p):
        c, a, L, B = cfg(p["model"]), card(p["card"]), p["context"], p["batch"]
        (i1, f1), (iB, fB) = self._points(p)[1], self._points(p)[B]
        k, A, F = kv_bytes_per_token(c, "FP8"), activation_bytes_per_token(c), decode_flops_per_token(c, L)
        W4, W8 = weight_bytes_read_per_step(c, "INT4"), weight_bytes_read_per_step(c, "FP8")
        P16, BW, u = a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s, usable_memory_fraction()
        rate_lines, P8 = _fp8_rate(a, c, L)
        lines = ["A step of B sequences makes min(B × BW / (W + B(K L + A)), P / F) tokens a second: INT4 weight-only "
                 "multiplies at the BF16 rate, FP8 at an effective rate between the two (its head and attention stay "
                 "in BF16).", *rate_lines]
        for b, (i, f) in ((1, (i1, f1)), (B, (iB, fB))):
            for name_, W, P, pt in (("INT4", W4, P16, i), ("FP8", W8, P8, f)):
                lines.append(calc(f"{name_} ceiling, {b:,} sequence{'s' if b > 1 else ''}", "",
                                  f"min({b:,} × {gbps(BW)} / ({gb(W, 4)} + {b:,} × ({kib(k)} × {L:,} + {mb(A, 4)})), "
                                  f"{tflops(P)} / {_gflop(F)})", rate(pt.ceiling, 4)))
            if b == 1:
                lines += [calc("INT4 over FP8, one user", "", f"{rate(i1.ceiling, 4)} / {rate(f1.ceiling, 4)}",
                               times(i1.ceiling / f1.ceiling, 4)),
                          "Higher for one user: INT4. One user is memory-bound: the bytes count.",
                          calc(f"caches of {B:,} sequences", "B K L", f"{B:,} × {kib(k)} × {L:,}", gb(B * L * k, 4)),
                          calc("INT4 weights and the caches", "W_s + B K L",
                               f"{gb(weight_bytes(c, 'INT4'), 4)} + {gb(B * L * k, 4)}",
                               gb(weight_bytes(c, 'INT4') + B * L * k, 4)),
                          calc("FP8 weights and the caches", "W_s + B K L",
                               f"{gb(weight_bytes(c, 'FP8'), 4)} + {gb(B * L * k, 4)}",
                               gb(weight_bytes(c, 'FP8') + B * L * k, 4)),
                          f"Both fit: each stays below the usable {gb(u * a.capacity_bytes, 4)}."]
        lines += [calc(f"FP8 over INT4, {B:,} sequences", "", f"{rate(fB.ceiling, 4)} / {rate(iB.ceiling, 4)}",
                       times(fB.ceiling / iB.ceiling, 4)),
                  f"Higher for {B:,} sequences: FP8. The batch is compute-bound, and only FP8 multiplies faster. "
                  "Weight-only formats buy bytes; only narrower math buys FLOP/s."]
        return tuple(lines)


#: the recipes the decision compares: weights / cache / math
RECIPES = (("BF16", "BF16", "BF16"), ("FP8", "BF16", "FP8"), ("FP8", "FP8", "FP8"), ("INT4", "FP8", "BF16"))
#: the single choice each step from one recipe to the next makes
STEPS = ("FP8 weights and math", "an FP8 cache", "INT4 weights")


@lru_cache(maxsize=1024)
def _recipe_rows(model_name: str, card_name: str, L: int, line: float) -> dict:
    """For each recipe: the conversations that fit, the largest batch at the line, its decode step
    (remembered: the template's conditions and its key read the same rows)."""
    c, a = cfg(model_name), card(card_name)
    rows = {}
    for r in RECIPES:
        room = max_sequences(a.capacity_bytes, weight_bytes(c, r[0]), kv_bytes_per_token(c, r[1]), L)
        own = sequence_bytes_per_step(kv_bytes_per_token(c, r[1]), L, activation_bytes_per_token(c))
        B = min(room, largest_batch_at_user_rate(a.bandwidth_bytes_per_s, weight_bytes_read_per_step(c, r[0]), own, line))
        rows[r] = (room, B, decode_on(a, c, B, L, *r) if B else None)
    return rows


@register
class FourRecipes(Template):
    chapter, label = "07_low_precision", "low-precision-ex7"
    tolerance, counts_exact = 0.03, True

    def draw(self, rng):
        big = [n for n in dense_models() if weight_bytes(cfg(n)) > 50e9]
        return {"model": pick(rng, big), "card": pick(rng, cards_with("FP8")), "context": pick(rng, (2048, 4096, 8192)),
                "line": pick(rng, (20, 30, 40, 50, 60))}

    def _rows(self, p):
        return _recipe_rows(p["model"], p["card"], p["context"], p["line"])

    def holds(self, p):
        rows = self._rows(p)
        made = sorted((d.ceiling for _, B, d in rows.values() if d), reverse=True)
        return {"the context fits the model": p["context"] <= mdl(p["model"]).context_length,
                "every recipe serves at least one user": all(B >= 1 for _, B, _ in rows.values()),
                "every recipe memory-bound at its batch": all(d and d.wall == "memory-bound" for *_, d in rows.values()),
                "every user at the line at that batch": all(d and d.per_user >= p["line"] for *_, d in rows.values()),
                "one recipe clearly makes the most": len(made) >= 2 and made[0] > 1.06 * made[1],
                "one step clearly moves the rate most": len(made) == len(RECIPES) and self._steps_clear(rows)}

    @staticmethod
    def _steps_clear(rows) -> bool:
        g = sorted((rows[RECIPES[i + 1]][2].ceiling / rows[RECIPES[i]][2].ceiling for i in range(len(STEPS))),
                   reverse=True)
        return g[0] > 1.06 * g[1]

    def key(self, p):
        name, c, a, L, line = p["model"], cfg(p["model"]), card(p["card"]), p["context"], p["line"]
        rows = self._rows(p)
        label = {r: "/".join(r) for r in RECIPES}
        best = max(rows, key=lambda r: rows[r][2].ceiling)
        gains = {STEPS[i]: rows[RECIPES[i + 1]][2].ceiling / rows[RECIPES[i]][2].ceiling for i in range(len(STEPS))}
        most = max(gains, key=gains.get)
        answers = []
        for r, (room, B, d) in rows.items():
            answers += [self.count(f"{label[r]}: conversations that fit", room, f"{room:,}"),
                        self.count(f"{label[r]}: the largest batch at {line} tokens/s", B, f"{B:,}"),
                        self.number(f"{label[r]}: tokens/s the GPU makes", d.ceiling, rate(d.ceiling))]
        return Key(
            (f"You serve {name} on one {a.name} to users whose conversations run to {L:,} tokens, and each user must "
             f"get at least {line} tokens per second. Compare four recipes, written weights/cache/math: "
             + ", ".join(label[r] for r in RECIPES) + ". For each: how many such conversations fit, what is the "
             "largest batch that keeps every user at that speed, and how many tokens per second does the GPU then "
             "make? Which recipe would you pick, and which single step from one recipe to the next ("
             + "; ".join(f"{label[RECIPES[i]]} to {label[RECIPES[i + 1]]}: {STEPS[i]}" for i in range(len(STEPS)))
             + ") moves the GPU's rate most, and by what factor?",
             f"The data you need: the {a.name} moves {gbps(a.bandwidth_bytes_per_s)} and has "
             f"{gb(usable_memory_fraction() * a.capacity_bytes, 4)} of usable memory. The weights are stored in "
             f"{gb(weight_bytes(c), 4)} in BF16, {gb(weight_bytes(c, 'FP8'), 4)} in FP8 and "
             f"{gb(weight_bytes(c, 'INT4'), 4)} in INT4; a step reads {gb(weight_bytes_read_per_step(c), 4)}, "
             f"{gb(weight_bytes_read_per_step(c, 'FP8'), 4)} and {gb(weight_bytes_read_per_step(c, 'INT4'), 4)} of "
             f"them. A token of context adds {kib(kv_bytes_per_token(c))} of cache in BF16 and "
             f"{kib(kv_bytes_per_token(c, 'FP8'))} in FP8, and each sequence adds "
             f"{mb(activation_bytes_per_token(c), 4)} of activation traffic to a step. Every recipe stays "
             f"memory-bound at these batches."),
            self._working(p, rows, label, gains, best, most),
            tuple(answers) + (self.choice("the recipe to pick", label[best]),
                              self.choice("the step that moves the rate most", most),
                              self.number("its factor", gains[most], times(gains[most]))))

    @staticmethod
    def _working(p, rows, label, gains, best, most):
        c, a, L, line = cfg(p["model"]), card(p["card"]), p["context"], p["line"]
        BW, usable = a.bandwidth_bytes_per_s, usable_memory_fraction() * a.capacity_bytes
        A = activation_bytes_per_token(c)
        lines = ["For each recipe: whole conversations that fit, floor((u C - W_s) / (K L)); the largest batch that "
                 "keeps each user at the line, floor((BW / line - W) / (K L + A)); the batch is the smaller; the GPU "
                 "then makes B × BW / (W + B(K L + A)), memory-bound."]
        for r, (room, B, d) in rows.items():
            K, Ws, W = kv_bytes_per_token(c, r[1]), weight_bytes(c, r[0]), weight_bytes_read_per_step(c, r[0])
            at_line = largest_batch_at_user_rate(BW, W, sequence_bytes_per_step(K, L, A), line)
            lines += [calc(f"{label[r]}: conversations that fit", "", f"floor(({gb(usable, 4)} - {gb(Ws, 4)}) / "
                           f"({kib(K)} × {L:,}))", f"{room:,}"),
                      calc(f"{label[r]}: batch at {line} tokens/s", "", f"floor(({gbps(BW)} / {line} - {gb(W, 4)}) / "
                           f"({kib(K)} × {L:,} + {mb(A, 4)}))", f"{at_line:,}"),
                      calc(f"{label[r]}: tokens/s at B = {B:,}", "", f"{B:,} × {gbps(BW)} / ({gb(W, 4)} + {B:,} × "
                           f"({kib(K)} × {L:,} + {mb(A, 4)}))", rate(d.ceiling, 4))]
        for i, step in enumerate(STEPS):
            lines.append(calc(f"step {label[RECIPES[i]]} to {label[RECIPES[i + 1]]} ({step})", "",
                              f"{rate(rows[RECIPES[i + 1]][2].ceiling, 4)} / {rate(rows[RECIPES[i]][2].ceiling, 4)}",
                              times(gains[step], 4)))
        lines.append(f"Pick {label[best]}: it makes the most tokens per second. The step that moves the rate most: "
                     f"{most}.")
        return tuple(lines)
