"""Chapter 3, prefill: the same weights, read once for the whole prompt."""
from __future__ import annotations

import itertools
import math
from functools import lru_cache

from inferlimits.arithmetic.activations import activation_bytes_per_token
from inferlimits.arithmetic.generation import (decode_point, new_tokens_where_prefix_pays, prefill_attention_flops,
                                               prefill_attention_share, prefill_chunk_point, prefill_crossover_tokens,
                                               prefill_point,
                                               prompt_tokens_at_attention_share, weight_bytes_read_per_step)
from inferlimits.arithmetic.kvcache import fit
from inferlimits.arithmetic.roofline import COMPUTE_BOUND, MEMORY_BOUND, balance_point_flop_per_byte
from inferlimits.data.models import embedding_params, kv_bytes_per_token, multiplied_params_per_token, weight_bytes
from inferlimits.book.homework import Key, Template, calc, pick, pick_distinct, register, sig, whole
from inferlimits.book.homework.common import (An, an, billions, card, cards, cfg, dense_models, flop_per_byte, gb, gbps,
                                         kib, mb, millions, ms, pct, tflops, times, tokens)

PROMPTS = (2048, 4096, 8192, 16384, 32768)


def _n_minus_h(c) -> float:
    """N - H: the weights every prompt token passes through (all but the output head)."""
    return multiplied_params_per_token(c) - embedding_params(c)


def _a(c) -> float:
    """a, attention's coefficient: a S (S + 1) operations for a causal prompt of S tokens."""
    return prefill_attention_flops(c, 1) / 2


def _model_data(name, c, *, int4: bool = False) -> str:
    weights = f"a pass reads {gb(weight_bytes_read_per_step(c, 'BF16'), 4)} of weights in BF16" + (
        f" and {gb(weight_bytes_read_per_step(c, 'INT4'), 4)} with INT4 weights" if int4 else "")
    return (f"{name}: N - H = {billions(_n_minus_h(c))} weights that every prompt token passes through, an output "
            f"head of H = {billions(embedding_params(c))} multiplied once per prompt, a = {round(_a(c)):,} (causal "
            f"attention does a·S(S + 1) operations), K = {kib(kv_bytes_per_token(c))} of cache per token, "
            f"A = {mb(activation_bytes_per_token(c, 'prefill'), 4)} of activations per prompt token; {weights}.")


@register
class Crossover(Template):
    chapter, label = "03_prefill", "prefill-ex1"

    def draw(self, rng):
        return {"model": pick(rng, dense_models()), "card": pick(rng, cards()), "prompt": pick(rng, PROMPTS)}

    def holds(self, p):
        c, a, S = cfg(p["model"]), card(p["card"]), p["prompt"]
        P, BW = a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s
        bf16 = prefill_crossover_tokens(c, P, BW)
        return {"a crossover exists": math.isfinite(bf16),
                "the prompt is past it": S > 1.2 * bf16,
                "the prompt fits the model": S <= cfg(p["model"]).max_position_embeddings,
                "weights and the prompt's cache fit": fit(a.capacity_bytes, weight_bytes(c), kv_bytes_per_token(c), 1, S).fits}

    def key(self, p):
        name, c, a, S = p["model"], cfg(p["model"]), card(p["card"]), p["prompt"]
        P, BW = a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s
        bf16 = prefill_crossover_tokens(c, P, BW)
        int4 = prefill_crossover_tokens(c, P, BW, "INT4")
        pt = prefill_point(c, P, BW, S)
        share = prefill_attention_share(c, S)
        return Key(
            (f"{An(a.name)} does {tflops(P)} of dense BF16 math and moves {gbps(BW)}. For {name} on it, at "
             f"what prompt length does prefill become compute-bound with BF16 weights, and with INT4 weights (math at "
             f"the BF16 rate)? What is the ideal time to first token for a prompt of {S:,} tokens, and what share of "
             f"its operations is attention?",
             "The data you need: " + _model_data(name, c, int4=True)),
            (f"R = P / BW = {flop_per_byte(balance_point_flop_per_byte(P, BW), 4)}; the crossover solves "
             f"prefill FLOPs / P = (W + S (K + A)) / BW: {tokens(bf16)} in BF16, {tokens(int4)} with INT4 weights.",
             f"At {S:,} tokens: 2(N - H)S + 2H + aS(S + 1) = {sig(pt.flops / 1e12, 4)} trillion operations, "
             f"{sig(pt.attention_flops / 1e12, 4)} trillion of them attention; math {ms(pt.flops / P, 4)} against "
             f"{ms(pt.bytes / BW, 4)} for its {gb(pt.bytes, 4)}: compute-bound, so the time to first token is "
             f"{ms(pt.time_s, 4)}."),
            (self.number("crossover, BF16 weights", bf16, tokens(bf16)),
             self.number("crossover, INT4 weights", int4, tokens(int4)),
             self.number(f"time to first token, {S:,} tokens", pt.time_s, ms(pt.time_s)),
             self.number("attention's share of the operations", share, pct(share))))


@lru_cache(maxsize=4096)
def _phases(model_name: str, card_name: str, prompt: int):
    """The prefill of a prompt and the first decode step after it, on one card (remembered)."""
    c, a = cfg(model_name), card(card_name)
    return (prefill_point(c, a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s, prompt),
            decode_point(c, a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s, 1, prompt))


@register
class FasterFirstToken(Template):
    chapter, label = "03_prefill", "prefill-ex2"

    def draw(self, rng):
        p = {"model": pick(rng, dense_models()), "prompt": pick(rng, (4096, 8192, 16384, 32768))}
        # the first three cards, in an order the seed draws, that make a fair question (if any)
        order = [cards()[i] for i in rng.permutation(len(cards()))]
        usable = [n for n in order if self._alone(p, n)]
        for trio in itertools.combinations(usable, 3):
            for now in trio:
                q = {**p, "cards": [now, *(n for n in trio if n != now)]}
                if all(self.holds(q).values()):
                    return q
        return {**p, "cards": order[:3]}

    def _alone(self, p, name) -> bool:
        """Whether one card suits the question: compute-bound prefill, memory-bound decode, room."""
        c, S = cfg(p["model"]), p["prompt"]
        pt, d = _phases(p["model"], name, S)
        return (pt.wall == COMPUTE_BOUND and d.wall == MEMORY_BOUND and S <= c.max_position_embeddings
                and fit(card(name).capacity_bytes, weight_bytes(c), kv_bytes_per_token(c), 1, S).fits)

    def _points(self, p):
        return {n: _phases(p["model"], n, p["prompt"]) for n in p["cards"]}

    def holds(self, p):
        pts = self._points(p)
        first = min(pts, key=lambda n: pts[n][0].time_s)
        stream = max(pts, key=lambda n: pts[n][1].ceiling)
        return {"prefill compute-bound, decode memory-bound, and room on all three": all(self._alone(p, n) for n in pts),
                "the current card is slowest to the first token": max(pts, key=lambda n: pts[n][0].time_s) == p["cards"][0],
                "the two phases pick different cards": first != stream,
                "each phase's best card is clearly best":
                    all(pts[n][0].time_s > 1.04 * pts[first][0].time_s for n in pts if n != first)
                    and all(pts[stream][1].ceiling > 1.04 * pts[n][1].ceiling for n in pts if n != stream)}

    def key(self, p):
        name, c, S = p["model"], cfg(p["model"]), p["prompt"]
        now, *moves = p["cards"]
        pts = self._points(p)
        first = min(pts, key=lambda n: pts[n][0].time_s)
        stream = max(pts, key=lambda n: pts[n][1].ceiling)
        specs = "; ".join(f"the {n} does {tflops(card(n).dense_bf16_flops_per_s)} and moves "
                          f"{gbps(card(n).bandwidth_bytes_per_s)}" for n in pts)
        return Key(
            (f"A service runs {name} on {now} cards, and its users send prompts of {S:,} tokens. The time to first "
             f"token is too long. You can move to {moves[0]} cards or to {moves[1]} cards. Which move shortens the time to first token "
             f"more, and by what factor against today? What does each card do to the first decode step that follows "
             f"(a single stream, with the prompt in the cache)? Give the time to first token and the decode step on "
             f"all three cards.",
             f"The data you need (dense BF16 math and bandwidth): {specs}. " + _model_data(name, c)
             + f" A decode step moves {mb(activation_bytes_per_token(c), 4)} of activations and does "
               f"{sig(pts[now][1].flops_per_token / 1e9, 4)} GFLOP."),
            self._working(p, pts, now, first, stream),
            tuple(self.number(f"time to first token on the {n}", pts[n][0].time_s, ms(pts[n][0].time_s)) for n in pts)
            + tuple(self.number(f"decode step on the {n}", 1 / pts[n][1].ceiling, ms(1 / pts[n][1].ceiling)) for n in pts)
            + (self.choice("the move that shortens the first token more", first),
               self.number("by what factor", pts[now][0].time_s / pts[first][0].time_s,
                           times(pts[now][0].time_s / pts[first][0].time_s)),
               self.choice("the card with the fastest decode step", stream)))


    @staticmethod
    def _working(p, pts, now, first, stream):
        c, S = cfg(p["model"]), p["prompt"]
        pt0, d0 = pts[now]
        NH, H, a_, K = _n_minus_h(c), embedding_params(c), round(_a(c)), kv_bytes_per_token(c)
        A, Ad = activation_bytes_per_token(c, "prefill"), activation_bytes_per_token(c)
        F, M = pt0.flops, pt0.bytes
        lines = [calc("the prompt's operations F", "2(N - H)S + 2H + aS(S + 1)",
                      f"2 × {billions(NH)} × {S:,} + 2 × {billions(H)} + {a_:,} × {S:,} × ({S:,} + 1)",
                      f"{sig(F / 1e12, 4)} TFLOP"),
                 calc("the prompt's bytes M", "W + S(K + A)",
                      f"{gb(pt0.weight_bytes, 4)} + {S:,} × ({kib(K)} + {mb(A, 4)})", gb(M, 4)),
                 calc("a decode step's bytes", "W + K S + A",
                      f"{gb(d0.weight_bytes, 4)} + {kib(K)} × {S:,} + {mb(Ad, 4)}", gb(d0.bytes, 4)),
                 "The time to first token is the longer of the math, F/P, and the memory, M/BW; the decode step, "
                 "memory-bound, its bytes over BW."]
        for n, (pt, d) in pts.items():
            P, BW = card(n).dense_bf16_flops_per_s, card(n).bandwidth_bytes_per_s
            lines.append(calc(f"time to first token on the {n}", "max(F/P, M/BW)",
                              f"max({sig(F / 1e12, 4)} TFLOP / {tflops(P)}, {gb(M, 4)} / {gbps(BW)})", ms(pt.time_s, 4)))
            lines.append(calc(f"decode step on the {n}", "bytes / BW", f"{gb(d.bytes, 4)} / {gbps(BW)}",
                              ms(1 / d.ceiling, 4)))
        lines += [calc("factor", f"on the {now} / on the {first}",
                       f"{ms(pt0.time_s, 4)} / {ms(pts[first][0].time_s, 4)}",
                       times(pt0.time_s / pts[first][0].time_s, 4)),
                  f"Shortest first token: {first} (most math per second; the prompt is compute-bound). Fastest decode "
                  f"step: {stream} (most bandwidth; decode is memory-bound)."]
        return tuple(lines)


#: dense models whose query heads together span the hidden size, with d_qk = d_v (the derivation's case)
def _spanning() -> tuple[str, ...]:
    return tuple(n for n in dense_models() if cfg(n).num_attention_heads * cfg(n).head_dim_qk == cfg(n).hidden_size
                 and cfg(n).head_dim_qk == cfg(n).head_dim_v)


@register
class AttentionCatchesUp(Template):
    chapter, label = "03_prefill", "prefill-ex4"

    def draw(self, rng):
        return {"models": pick_distinct(rng, _spanning(), 2)}

    def holds(self, p):
        one, two = (cfg(n) for n in p["models"])
        return {"the second model is wider": two.hidden_size > one.hidden_size,
                "a = 2 n_layers h for both": all(_a(c) == 2 * c.num_hidden_layers * c.hidden_size for c in (one, two))}

    def key(self, p):
        (n1, n2), (c1, c2) = p["models"], [cfg(n) for n in p["models"]]
        per = [_n_minus_h(c) / c.num_hidden_layers for c in (c1, c2)]
        s = [prompt_tokens_at_attention_share(c, 0.5) for c in (c1, c2)]
        return Key(
            ("Derive where attention's arithmetic catches up with the weight products'. (a) With 2(N - H)S operations "
             "for the weight products that every prompt token passes through and aS(S + 1) for causal attention, show "
             "that the two are equal at a prompt length S_eq one less than 2(N - H)/a. (b) In a model whose query "
             "heads together span the hidden size h, with d_qk = d_v, show that a is twice the number of layers times "
             "h, so that S_eq is about one layer's weights divided by h.",
             f"(c) {n1} has {c1.num_hidden_layers} layers of width {c1.hidden_size:,} and, leaving out the head, "
             f"{millions(per[0])} weights per layer; {n2} has {c2.num_hidden_layers} layers of width "
             f"{c2.hidden_size:,} and {millions(per[1])}. Evaluate S_eq for both, and the ratios of S_eq and of the "
             f"weights per layer from the first model to the second."),
            ("(a) Set aS(S + 1) = 2(N - H)S and divide by aS: S + 1 = 2(N - H)/a, so S_eq = 2(N - H)/a - 1.",
             "(b) Each layer's n_q query heads do d_qk + d_v operations per pair, a multiply and an add each, so "
             "a = n_layers n_q (d_qk + d_v) = 2 n_layers n_q d_qk = 2 n_layers h. Then 2(N - H)/a = ((N - H)/n_layers)/h: "
             "one layer's weights over h.",
             calc(f"S_eq, {n1}", "(N - H)/n_layers / h - 1", f"{millions(per[0])} / {c1.hidden_size:,} - 1", tokens(s[0]),
                  "(c)"),
             calc(f"S_eq, {n2}", "(N - H)/n_layers / h - 1", f"{millions(per[1])} / {c2.hidden_size:,} - 1", tokens(s[1])),
             calc("ratio of S_eq", "", f"{tokens(s[1])} / {tokens(s[0])}", times(s[1] / s[0], 4)),
             calc("ratio of the weights per layer", "", f"{millions(per[1])} / {millions(per[0])}",
                  times(per[1] / per[0], 4)),
             "The weights per layer grow nearly with the square of the width, S_eq nearly in proportion to it."),
            (self.number(f"S_eq, {n1}", s[0], tokens(s[0])),
             self.number(f"S_eq, {n2}", s[1], tokens(s[1])),
             self.number("ratio of S_eq", s[1] / s[0], times(s[1] / s[0])),
             self.number("ratio of the weights per layer", per[1] / per[0], times(per[1] / per[0]))))


@register
class PassAndFirstToken(Template):
    chapter, label = "03_prefill", "prefill-ex7"

    def draw(self, rng):
        return {"model": pick(rng, dense_models()), "card": pick(rng, cards()),
                "prompt": pick(rng, (512, 1024, 2048, 4096, 8192, 16384))}

    def holds(self, p):
        c, a, S = cfg(p["model"]), card(p["card"]), p["prompt"]
        pt = prefill_point(c, a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s, S)
        approx = 2 * _n_minus_h(c) * S + _a(c) * S ** 2
        return {"the prompt fits the model": S <= c.max_position_embeddings,
                "weights and the prompt's cache fit": fit(a.capacity_bytes, weight_bytes(c), kv_bytes_per_token(c), 1, S).fits,
                "the question's count is within a tenth of the tolerance of the full one": abs(approx / pt.flops - 1) < 0.002}

    def key(self, p):
        name, c, a, S = p["model"], cfg(p["model"]), card(p["card"]), p["prompt"]
        P, BW = a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s
        pt = prefill_point(c, P, BW, S)
        products = 2 * _n_minus_h(c)
        return Key(
            (f"{name} reads a prompt of {S:,} tokens on {an(a.name)}, which does {tflops(P)} of dense BF16 math and "
             f"moves {gbps(BW)}. The model's weight products do {billions(products)} operations per prompt token, its "
             f"attention coefficient a is {round(_a(c)):,}, and the pass moves {gb(pt.bytes, 4)} in all: weights, cache "
             f"and activations. With F ≈ 2(N - H)S + aS², how many operations does the pass do, and what is its ideal "
             f"time to first token?",),
            (f"Weight products: {billions(products)} × {S:,} = {sig(products * S / 1e12, 4)} trillion; attention "
             f"a S² = {sig(_a(c) * S ** 2 / 1e12, 4)} trillion; F = {sig(pt.flops / 1e12, 4)} trillion (the head's 2H "
             f"and the a S of the exact count change nothing at this tolerance).",
             f"Math F / P = {ms(pt.flops / P, 4)}; memory {gb(pt.bytes, 4)} / BW = {ms(pt.bytes / BW, 4)}: "
             f"{pt.wall}, so the ideal time to first token is the larger, {ms(pt.time_s, 4)}."),
            (self.number("operations of the pass", pt.flops, f"{sig(pt.flops / 1e12)} trillion"),
             self.number("ideal time to first token", pt.time_s, ms(pt.time_s))))


@register
class CachedDocument(Template):
    chapter, label = "03_prefill", "prefill-ex8"

    def draw(self, rng):
        return {"model": pick(rng, dense_models()), "card": pick(rng, cards()),
                "document": pick(rng, (8192, 16384, 32768, 65536)), "question": pick(rng, (256, 512, 1024, 2048))}

    def _points(self, p):
        c, a, D, C = cfg(p["model"]), card(p["card"]), p["document"], p["question"]
        P, BW = a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s
        return (prefill_chunk_point(c, P, BW, C, D), prefill_point(c, P, BW, D + C), prefill_point(c, P, BW, C))

    def holds(self, p):
        c, a, D, C = cfg(p["model"]), card(p["card"]), p["document"], p["question"]
        P, BW = a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s
        R = balance_point_flop_per_byte(P, BW)
        cached, full, alone = self._points(p)
        return {"document and question fit the model": D + C <= c.max_position_embeddings,
                "weights and the whole cache fit": fit(a.capacity_bytes, weight_bytes(c), kv_bytes_per_token(c), 1, D + C).fits,
                "the question alone is past the crossover": C > prefill_crossover_tokens(c, P, BW),
                "the question is past R K / (2a)": C >= new_tokens_where_prefix_pays(R, kv_bytes_per_token(c), _a(c)),
                "so every pass is compute-bound": cached.wall == full.wall == alone.wall == COMPUTE_BOUND}

    def key(self, p):
        name, c, a, D, C = p["model"], cfg(p["model"]), card(p["card"]), p["document"], p["question"]
        P, BW = a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s
        R = balance_point_flop_per_byte(P, BW)
        K = kv_bytes_per_token(c)
        bound = new_tokens_where_prefix_pays(R, K, _a(c))
        cached, full, alone = self._points(p)
        shorter, longer = full.time_s / cached.time_s, cached.time_s / alone.time_s
        NH, H = _n_minus_h(c), embedding_params(c)
        return Key(
            ("A chat server keeps the cache of a long document that many requests share. A request whose prompt starts "
             "with that document then prefills only its own C new tokens, after the P tokens already cached. Each new "
             "token still attends to every token before it, cached or new.",
             "(a) Show that this pass does about 2(N - H)C + a(2PC + C²) operations and moves W + KP + C(K + A) bytes. "
             "Show that it is compute-bound for every P once an ordinary prompt of C tokens would be, and C is also at "
             "least RK/(2a).",
             f"(b) Evaluate RK/(2a) for {name} on {an(a.name)}, with R = {flop_per_byte(R, 4)}, K = {kib(K)} per token "
             f"and a = {round(_a(c)):,}.",
             f"(c) The document is {D:,} tokens long, and a question of {C:,} tokens follows it. On the {a.name}, what "
             f"is the ideal time to first token with the document cached? How many times shorter is it than reading "
             f"all {D + C:,} tokens in one pass, and how many times longer than a {C:,}-token prompt with no document "
             f"before it?",
             "The data you need: " + _model_data(name, c)
             + f" The {a.name} does {tflops(P)} of dense BF16 math and moves {gbps(BW)}."),
            ("(a) The j-th new token attends to P + j tokens: PC + C(C + 1)/2 pairs at 2a operations each, "
             "a(2PC + C² + C). With the weight products 2(N - H)C (and the head's 2H) that is about "
             "2(N - H)C + a(2PC + C²). The pass reads W and the P cached tokens' K P bytes, and writes C tokens of "
             "cache and moves their activations, C(K + A). It is compute-bound when operations ≥ R × bytes: an "
             "ordinary prompt's condition, 2(N - H)C + aC² ≥ R(W + C(K + A)), plus P(2aC - RK) ≥ 0, which holds for "
             "every P once C ≥ RK/(2a).",
             calc("R K / (2a)", "", f"{flop_per_byte(R, 4)} × {kib(K)} / (2 × {round(_a(c)):,})",
                  f"{sig(bound, 4)} tokens", "(b)"),
             calc("operations, document cached", "2(N - H)C + 2H + a(2PC + C² + C)",
                  f"2 × {billions(NH)} × {C:,} + 2 × {billions(H)} + {round(_a(c)):,} × (2 × {D:,} × {C:,} + "
                  f"{C:,} × {C:,} + {C:,})", f"{sig(cached.flops / 1e12, 4)} TFLOP", "(c)"),
             calc("time to first token, document cached", "F / P (compute-bound)",
                  f"{sig(cached.flops / 1e12, 4)} TFLOP / {tflops(P)}", ms(cached.time_s, 4)),
             calc(f"one pass over {D + C:,} tokens", "(2(N - H)S + 2H + aS(S + 1)) / P",
                  f"(2 × {billions(NH)} × {D + C:,} + 2 × {billions(H)} + {round(_a(c)):,} × {D + C:,} × ({D + C:,} + 1)) "
                  f"/ {tflops(P)}", ms(full.time_s, 4)),
             calc(f"the question alone, {C:,} tokens", "(2(N - H)C + 2H + aC(C + 1)) / P",
                  f"(2 × {billions(NH)} × {C:,} + 2 × {billions(H)} + {round(_a(c)):,} × {C:,} × ({C:,} + 1)) / {tflops(P)}",
                  ms(alone.time_s, 4)),
             calc("times shorter than one pass", "", f"{ms(full.time_s, 4)} / {ms(cached.time_s, 4)}", times(shorter, 4)),
             calc("times longer than the question alone", "", f"{ms(cached.time_s, 4)} / {ms(alone.time_s, 4)}",
                  times(longer, 4)),
             "The cached pass still takes longer than the question alone: its tokens attend to the whole document."),
            (self.number("R K / (2a)", bound, f"{sig(bound)} tokens"),
             self.number("time to first token, document cached", cached.time_s, ms(cached.time_s)),
             self.number("times shorter than one pass over everything", shorter, times(shorter)),
             self.number("times longer than the question alone", longer, times(longer))))
