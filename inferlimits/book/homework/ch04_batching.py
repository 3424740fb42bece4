"""Chapter 4, batching: many conversations share one read of the weights."""
from __future__ import annotations

import math

from inferlimits.arithmetic.activations import activation_bytes_per_token
from inferlimits.arithmetic.economics import cost_per_million_tokens_usd, gpu_hour_prices
from inferlimits.arithmetic.generation import (attention_flops_per_token, decode_flops_per_token, decode_knee_batch,
                                               decode_point, weight_bytes_read_per_step)
from inferlimits.arithmetic.kvcache import (fit, longest_context_where_math_binds, max_sequences,
                                            memory_left_for_cache_bytes, usable_memory_fraction)
from inferlimits.arithmetic.roofline import balance_point_flop_per_byte
from inferlimits.data.models import kv_bytes_per_token, weight_bytes
from inferlimits.book.homework import Key, Template, calc, pick, pick_distinct, register, sig
from inferlimits.book.homework.common import (an, card, cards, cfg, datasheet, dense_models, flop_per_byte, gb, gbps,
                                              kib, mb, mib, pct, rate, tflops, tokens, usd, yes_no)


def _point(c, a, batch=1, context=0):
    return decode_point(c, a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s, batch, context)


def _model_data(name, c) -> str:
    return (f"{name} in BF16: a decode step reads {gb(weight_bytes_read_per_step(c), 4)} of weights (memory holds "
            f"{gb(weight_bytes(c), 4)}), a token does {sig(decode_flops_per_token(c) / 1e9, 4)} GFLOP with no context "
            f"and moves {mb(activation_bytes_per_token(c), 4)} of activations, and the KV cache takes "
            f"{kib(kv_bytes_per_token(c))} per token.")


@register
class Knee(Template):
    chapter, label = "04_batching", "batching-ex1"

    def draw(self, rng):
        return {"model": pick(rng, dense_models()), "card": pick(rng, cards())}

    def holds(self, p):
        c, a = cfg(p["model"]), card(p["card"])
        return {"the weights fit": fit(a.capacity_bytes, weight_bytes(c)).fits,
                "a knee exists": math.isfinite(decode_knee_batch(c, a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s))}

    def key(self, p):
        name, c, a = p["model"], cfg(p["model"]), card(p["card"])
        P, BW = a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s
        one = _point(c, a)
        knee = decode_knee_batch(c, P, BW)
        R = balance_point_flop_per_byte(P, BW)
        return Key(
            (f"Serve {name} in BF16 on {an(a.name)}, with no context. What is the memory ceiling for a single "
             f"conversation? At what batch does the math ceiling start to bind, and what aggregate rate does the chip "
             f"reach there?",
             "The data you need: " + _model_data(name, c) + " " + datasheet(a, memory=False)),
            (f"One conversation: BW / (W + A) = {rate(one.memory_ceiling, 4)}.",
             f"Knee: R·W / (F - R·A), with R = {flop_per_byte(R, 4)}: {sig(knee, 4)} conversations.",
             f"There the aggregate reaches the math ceiling P / F = {rate(one.math_ceiling, 4)}."),
            (self.number("single-conversation memory ceiling", one.memory_ceiling, rate(one.memory_ceiling)),
             self.number("the batch where math binds", knee, f"{sig(knee)} conversations"),
             self.number("the aggregate rate there", one.math_ceiling, rate(one.math_ceiling))))


@register
class CheaperChip(Template):
    chapter, label = "04_batching", "batching-ex2"
    counts_exact = True

    def draw(self, rng):
        # half the sheets set a context at which one chip cannot hold the batch, as the book's does: the seed
        # draws which half first, then settings until they meet the conditions (if any do)
        short = bool(pick(rng, (True, False)))
        for _ in range(100):
            p = {"model": pick(rng, dense_models()), "cards": pick_distinct(rng, tuple(gpu_hour_prices()), 2),
                 "batch": pick(rng, (64, 128, 256, 512)), "short": pick(rng, (512, 1024, 2048, 4096, 8192, 16384)),
                 "one_chip_short": short}
            if all(self.holds(p).values()):
                break
        return p

    def _cases(self, p):
        return {"(a)": (1, 0), "(b)": (p["batch"], 0), "(c)": (p["batch"], p["short"])}

    def _batch(self, p, name, b, L) -> int:
        """The batch a chip runs: the service's, or the largest whose caches fit beside the weights."""
        if L == 0:
            return b
        c = cfg(p["model"])
        return min(b, max_sequences(card(name).capacity_bytes, weight_bytes(c), kv_bytes_per_token(c), L))

    def _points(self, p):
        c = cfg(p["model"])
        return {case: tuple(_point(c, card(n), self._batch(p, n, b, L), L) for n in p["cards"])
                for case, (b, L) in self._cases(p).items()}

    def holds(self, p):
        c, L = cfg(p["model"]), p["short"]
        W, K = weight_bytes(c), kv_bytes_per_token(c)
        weights = all(fit(card(n).capacity_bytes, W).fits for n in p["cards"])
        if not weights:
            return {"the weights fit on both": False}
        held = {n: self._batch(p, n, p["batch"], L) for n in p["cards"]}
        if min(held.values()) < 2:
            return {"the weights fit on both": True, "each chip holds at least two conversations at the context": False}
        costs = self._costs(p)
        return {"the weights fit on both": True,
                "each chip holds at least two conversations at the context": True,
                "a chip cannot hold the batch at the context, as the draw asks (or both can)":
                    (min(held.values()) < p["batch"]) == p["one_chip_short"],
                "the context fits the model": L <= c.max_position_embeddings,
                "a chip that cannot hold the batch does not sit at the edge of a whole number": all(
                    held[n] == p["batch"] or len({math.floor(memory_left_for_cache_bytes(card(n).capacity_bytes, W) * f
                                                             / (K * L)) for f in (0.997, 1, 1.003)}) == 1
                    for n in p["cards"]),
                "no case is within the tolerance of a tie": all(abs(x / y - 1) > 0.04 for x, y in costs.values())}

    def _costs(self, p):
        prices = gpu_hour_prices()
        return {case: tuple(cost_per_million_tokens_usd(prices[n].usd_per_gpu_hour, pt.ceiling)
                            for n, pt in zip(p["cards"], pts)) for case, pts in self._points(p).items()}

    def key(self, p):
        name, c, (x, y), B, L = p["model"], cfg(p["model"]), p["cards"], p["batch"], p["short"]
        prices = gpu_hour_prices()
        costs, points = self._costs(p), self._points(p)
        K, W = kv_bytes_per_token(c), weight_bytes(c)
        need = fit(1e12, W, K, B, L).needed_bytes
        u = usable_memory_fraction()
        Wr, A, F0 = weight_bytes_read_per_step(c), activation_bytes_per_token(c), decode_flops_per_token(c)
        two_a = attention_flops_per_token(c, 1)
        working = [calc(f"(c) what {B} conversations need", "W + B K L", f"{gb(W, 4)} + {B} × {kib(K)} × {L:,}",
                        gb(need, 4))]
        for n in (x, y):
            C = card(n).capacity_bytes
            working.append(calc(f"usable on the {n}", "u × C", f"{pct(u, 2)} × {mib(C)}", gb(u * C, 4)))
            held = self._batch(p, n, B, L)
            if held < B:
                working.append(calc(f"the batch the {n} holds", "floor((u C - W) / (K L))",
                                    f"floor(({gb(u * C, 4)} - {gb(W, 4)}) / ({kib(K)} × {L:,}))", str(held)))
        working.append("Each step's rate is the lower ceiling, min(B × BW / (W + B(K L + A)), P / F), with F = F₀ + 2aL "
                       f"(2a = {round(two_a):,} FLOPs per cached token); a million tokens cost the price per hour over "
                       "3,600 s times that rate.")
        for case, pts in points.items():
            for i, (n, pt) in enumerate(zip((x, y), pts)):
                a = card(n)
                b, ctx = round(pt.batch), round(pt.context_tokens)
                put_in = (f"min({b} × {gbps(a.bandwidth_bytes_per_s)} / ({gb(Wr, 4)} + {b} × ({kib(K)} × {ctx:,} + "
                          f"{mb(A, 4)})), {tflops(a.dense_bf16_flops_per_s)} / ({sig(F0 / 1e9, 4)} GFLOP + "
                          f"{round(two_a):,} FLOP × {ctx:,}))" if ctx else
                          f"min({b} × {gbps(a.bandwidth_bytes_per_s)} / ({gb(Wr, 4)} + {b} × {mb(A, 4)}), "
                          f"{tflops(a.dense_bf16_flops_per_s)} / {sig(F0 / 1e9, 4)} GFLOP)")
                working.append(calc(f"{case} rate on the {n}", "", put_in, rate(pt.ceiling, 4)))
                working.append(calc(f"{case} cost on the {n}", "", f"{usd(prices[n].usd_per_gpu_hour, 4)} × 1,000,000 / "
                                    f"(3,600 × {rate(pt.ceiling, 4)})", usd(costs[case][i], 4)))
        cheaper = {case: (x if cx < cy else y) for case, (cx, cy) in costs.items()}
        working += [f"{case} cheaper: {cheaper[case]}." for case in costs]
        short_of = [n for n in (x, y) if self._batch(p, n, B, L) < B]
        return Key(
            (f"At assumed prices of {usd(prices[x].usd_per_gpu_hour, 3)} per hour for {an(x)} and "
             f"{usd(prices[y].usd_per_gpu_hour, 3)} for {an(y)}, which chip generates {name}'s tokens more cheaply in "
             f"BF16 (a) for a single user with no context, (b) for a service that keeps {B} conversations in every "
             f"batch, still with no context, and (c) for the same service when each conversation has {L:,} tokens of "
             f"context in its KV cache? Give the cost per million tokens on each chip in each case. Check first that "
             f"each setup fits: weights and caches within {pct(usable_memory_fraction(), 2)} of the memory the device "
             f"reports. Where a chip cannot hold {B} such conversations, run it at the largest batch that fits.",
             "The data you need: " + _model_data(name, c) + f" Attention does 2a = "
             f"{round(attention_flops_per_token(c, 1)):,} FLOPs per cached token. " + datasheet(card(x)) + " "
             + datasheet(card(y))),
            tuple(working),
            tuple(self.count(f"(c) the batch the {n} holds", self._batch(p, n, B, L), str(self._batch(p, n, B, L)))
                  for n in short_of)
            + tuple(self.number(f"{case} cost per million on the {n}", costs[case][i], usd(costs[case][i]))
                    for case in costs for i, n in enumerate((x, y)))
            + tuple(self.choice(f"{case} the cheaper chip", cheaper[case]) for case in costs))


@register
class KneeWithContext(Template):
    chapter, label = "04_batching", "batching-ex5"

    def draw(self, rng):
        return {"model": pick(rng, dense_models()), "card": pick(rng, cards()), "context": pick(rng, (32, 64, 128, 256))}

    def _values(self, p):
        c, a, L = cfg(p["model"]), card(p["card"]), p["context"]
        P, BW = a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s
        two_a = attention_flops_per_token(c, 1)
        K, A, F = kv_bytes_per_token(c), activation_bytes_per_token(c), decode_flops_per_token(c)
        L_max = longest_context_where_math_binds(P, BW, F, two_a, K, A)
        return P, BW, two_a, K, A, F, L_max

    def holds(self, p):
        c, a, L = cfg(p["model"]), card(p["card"]), p["context"]
        P, BW, two_a, K, A, F, L_max = self._values(p)
        R = balance_point_flop_per_byte(P, BW)
        knee = decode_knee_batch(c, P, BW, L)
        held = fit(a.capacity_bytes, weight_bytes(c), K, knee, L) if knee < 1e7 else None
        return {"the cache's own intensity is below the ridge": two_a / K < R,
                "the knee's batch clearly fits or clearly does not":
                    held is not None and abs(held.needed_bytes / held.usable_bytes - 1) > 0.04,
                "a knee exists at the short context": L < 0.8 * L_max,
                "the weights fit": fit(a.capacity_bytes, weight_bytes(c)).fits}

    def key(self, p):
        name, c, a, L = p["model"], cfg(p["model"]), card(p["card"]), p["context"]
        P, BW, two_a, K, A, F, L_max = self._values(p)
        R = balance_point_flop_per_byte(P, BW)
        knee0 = decode_knee_batch(c, P, BW)
        knee = decode_knee_batch(c, P, BW, L)
        held = fit(a.capacity_bytes, weight_bytes(c), K, knee, L)
        Wr = weight_bytes_read_per_step(c)
        return Key(
            ("Bring the KV cache into the knee. Each of the B conversations now holds L tokens of context; every step "
             "reads its cache, K bytes per cached token, and its attention does 2a FLOPs per cached token on top of F. "
             "(a) Show, with symbols before any number, at which batch B*(L) decode turns compute-bound, and that "
             "with no context it is the knee R·W / (F - R·A). (b) Show that past some context L_max no batch reaches "
             "the math ceiling, and say what the condition means in time.",
             f"(c) For {name} on {an(a.name)}, evaluate the cache's own intensity 2a/K, L_max, the knee with no context "
             f"and the knee at {L} tokens of context. Does that batch fit in memory? The data you need: "
             + _model_data(name, c) + f" Attention does 2a = {round(two_a):,} FLOPs per cached token. "
             + datasheet(a) + f" Weights and caches may use {pct(usable_memory_fraction(), 2)} of its memory."),
            ("(a) A step of B conversations does B (F + 2aL) operations and moves W + B (A + K L) bytes. It turns "
             "compute-bound where the math time meets the memory time, B (F + 2aL)/P = (W + B (A + K L))/BW, that is "
             "B (F + 2aL) = R W + R B (A + K L), which gives B*(L) = R W / (F + 2aL - R (A + K L)). At L = 0 it is "
             "R W / (F - R A).",
             "(b) B*(L) is finite and positive only while F + 2aL > R (A + K L), that is L (R K - 2a) < F - R A: "
             "L < L_max = (F - R A) / (R K - 2a) when the cache's own intensity 2a/K is below R. In time: one "
             "conversation's math, (F + 2aL)/P, must outlast the memory traffic it brings, (A + K L)/BW.",
             calc("R", "P / BW", f"{tflops(P)} / {gbps(BW)}", flop_per_byte(R, 4), "(c)"),
             calc("the cache's own intensity", "2a / K", f"{round(two_a):,} FLOP / {kib(K)}", flop_per_byte(two_a / K, 4)),
             calc("L_max", "(F - R A) / (R K - 2a)", f"({sig(F / 1e9, 4)} GFLOP - {flop_per_byte(R, 4)} × {mb(A, 4)}) / "
                  f"({flop_per_byte(R, 4)} × {kib(K)} - {round(two_a):,} FLOP)", f"{sig(L_max, 4)} tokens"),
             calc("the knee with no context", "R W / (F - R A)", f"{flop_per_byte(R, 4)} × {gb(Wr, 4)} / "
                  f"({sig(F / 1e9, 4)} GFLOP - {flop_per_byte(R, 4)} × {mb(A, 4)})", f"{sig(knee0, 4)} conversations"),
             calc(f"the knee at {L} tokens", "R W / (F + 2aL - R (A + K L))",
                  f"{flop_per_byte(R, 4)} × {gb(Wr, 4)} / ({sig(F / 1e9, 4)} GFLOP + {round(two_a):,} FLOP × {L} - "
                  f"{flop_per_byte(R, 4)} × ({mb(A, 4)} + {kib(K)} × {L}))", f"{sig(knee, 4)} conversations"),
             calc("memory that batch needs", "W + B K L", f"{gb(held.weight_bytes, 4)} + {sig(knee, 4)} × {kib(K)} × {L}",
                  gb(held.needed_bytes, 4)),
             calc("usable", "u × C", f"{pct(usable_memory_fraction(), 2)} × {mib(a.capacity_bytes)}",
                  gb(held.usable_bytes, 4)),
             f"Does that batch fit? {yes_no(held.fits).capitalize()}: it needs {'less' if held.fits else 'more'} than "
             f"the usable memory."),
            (self.number("the cache's own intensity 2a/K", two_a / K, flop_per_byte(two_a / K)),
             self.number("L_max", L_max, tokens(L_max)),
             self.number("the knee with no context", knee0, f"{sig(knee0)} conversations"),
             self.number(f"the knee at {L} tokens of context", knee, f"{sig(knee)} conversations"),
             self.choice("does that batch fit", yes_no(held.fits))))
