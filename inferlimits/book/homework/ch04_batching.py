"""Chapter 4, batching: many conversations share one read of the weights."""
from __future__ import annotations

import math

from inferlimits.arithmetic.activations import activation_bytes_per_token
from inferlimits.arithmetic.economics import cost_per_million_tokens_usd, gpu_hour_prices
from inferlimits.arithmetic.generation import (attention_flops_per_token, decode_flops_per_token, decode_knee_batch,
                                               decode_point, weight_bytes_read_per_step)
from inferlimits.arithmetic.kvcache import fit, longest_context_where_math_binds, max_sequences, usable_memory_fraction
from inferlimits.arithmetic.roofline import balance_point_flop_per_byte
from inferlimits.data.models import kv_bytes_per_token, weight_bytes
from inferlimits.book.homework import Key, Template, pick, pick_distinct, register, sig, whole
from inferlimits.book.homework.common import (an, card, cards, cfg, datasheet, dense_models, flop_per_byte, gb, kib,
                                         mb, pct, rate, tokens, usd, yes_no)


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

    def draw(self, rng):
        return {"model": pick(rng, dense_models()), "cards": pick_distinct(rng, tuple(gpu_hour_prices()), 2),
                "batch": pick(rng, (64, 128, 256, 512)), "short": pick(rng, (256, 512, 1024, 2048)),
                "longer": pick(rng, (2, 4, 8))}

    def _cases(self, p):
        c, B, L = cfg(p["model"]), p["batch"], p["short"]
        return {"(a)": (1, 0), "(b)": (B, 0), "(c)": (B, L)}

    def holds(self, p):
        c, B, L2 = cfg(p["model"]), p["batch"], p["short"] * p["longer"]
        K, W = kv_bytes_per_token(c), weight_bytes(c)
        ok = all(fit(card(n).capacity_bytes, W, K, b, L).fits for n in p["cards"] for b, L in self._cases(p).values())
        at_long = [fit(card(n).capacity_bytes, W, K, B, L2).fits for n in p["cards"]]
        costs = self._costs(p)
        return {"(a) to (c) fit on both": ok, "(d) fits on one card only": sum(at_long) == 1,
                "the longer context fits the model": L2 <= c.max_position_embeddings,
                "no case is within the tolerance of a tie": all(abs(x / y - 1) > 0.04 for x, y in costs.values())}

    def _costs(self, p):
        c = cfg(p["model"])
        prices = gpu_hour_prices()
        return {case: tuple(cost_per_million_tokens_usd(prices[n].usd_per_gpu_hour, _point(c, card(n), b, L).ceiling)
                            for n in p["cards"]) for case, (b, L) in self._cases(p).items()}

    def key(self, p):
        name, c, (x, y), B, L = p["model"], cfg(p["model"]), p["cards"], p["batch"], p["short"]
        L2 = L * p["longer"]
        prices = gpu_hour_prices()
        costs = self._costs(p)
        K, W = kv_bytes_per_token(c), weight_bytes(c)
        long_fits = {n: fit(card(n).capacity_bytes, W, K, B, L2).fits for n in (x, y)}
        short_of = next(n for n, f in long_fits.items() if not f)
        most = max_sequences(card(short_of).capacity_bytes, W, K, L2)
        working = []
        for case, (b, ctx) in self._cases(p).items():
            pts = [_point(c, card(n), b, ctx) for n in (x, y)]
            working.append(f"{case} batch {b}, context {ctx:,}: {x} {rate(pts[0].ceiling, 4)} ({pts[0].wall}), "
                           f"{usd(costs[case][0], 4)} per million; {y} {rate(pts[1].ceiling, 4)} ({pts[1].wall}), "
                           f"{usd(costs[case][1], 4)} per million.")
        working.append(f"(d) weights and caches need {gb(fit(1e12, W, K, B, L2).needed_bytes, 4)}: "
                       + "; ".join(f"{n} {'holds them' if f else 'does not'} (usable "
                                   f"{gb(usable_memory_fraction() * card(n).capacity_bytes, 4)})" for n, f in long_fits.items())
                       + f"; the {short_of} holds at most {most} such conversations.")
        cheaper = {case: (x if cx < cy else y) for case, (cx, cy) in costs.items()}
        return Key(
            (f"At assumed prices of {usd(prices[x].usd_per_gpu_hour, 3)} per hour for {an(x)} and "
             f"{usd(prices[y].usd_per_gpu_hour, 3)} for {an(y)}, which chip generates {name} tokens more cheaply "
             f"(a) for a single user with no context, (b) for a service that keeps {B} conversations in every batch, "
             f"still with no context, and (c) for the same service when each conversation has {L:,} tokens of context "
             f"in its KV cache? Give the cost per million tokens on each chip in each case. (d) What changes at "
             f"{L2:,} tokens of context: which chip still holds the batch, and how many such conversations does the "
             f"other hold at most? Check first that each setup fits: weights and caches within "
             f"{pct(usable_memory_fraction(), 2)} of the memory the device reports.",
             "The data you need: " + _model_data(name, c) + " " + datasheet(card(x)) + " " + datasheet(card(y))),
            tuple(working),
            tuple(self.number(f"{case} cost per million on the {n}", costs[case][i], usd(costs[case][i]))
                  for case in costs for i, n in enumerate((x, y)))
            + tuple(self.choice(f"{case} the cheaper chip", cheaper[case]) for case in costs)
            + tuple(self.choice(f"(d) does the {n} hold the batch", yes_no(f)) for n, f in long_fits.items())
            + (self.number(f"(d) conversations of {L2:,} tokens the {short_of} holds", most, whole(most)),))


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
        return Key(
            ("Bring the KV cache into the knee. Each of the B conversations now holds L tokens of context; every step "
             "reads its cache, K bytes per cached token, and its attention does 2a FLOPs per cached token on top of F. "
             "(a) Show, with symbols before any number, at which batch B*(L) decode turns compute-bound, and that "
             "with no context it is the knee R·W / (F - R·A). (b) Show that past some context L_max no batch reaches "
             "the math ceiling, and say what the condition means in time.",
             f"(c) For {name} on {an(a.name)}, evaluate the cache's own intensity 2a/K, L_max, the knee with no context "
             f"and the knee at {L} tokens of context. Does that batch fit in memory? The data you need: "
             + _model_data(name, c) + f" Attention does 2a = {round(two_a):,} FLOPs per cached token. "
             + datasheet(a)),
            ("(a) B (F + 2aL) = R W + R B (A + K L) gives B*(L) = R W / (F + 2aL - R (A + K L)).",
             "(b) The knee exists while L (R K - 2a) < F - R A, i.e. L < L_max = (F - R A) / (R K - 2a): one "
             "conversation's math, (F + 2aL)/P, must outlast the memory traffic it brings, (A + K L)/BW.",
             f"(c) R = {flop_per_byte(R, 4)}, 2a/K = {flop_per_byte(two_a / K, 4)}, L_max = {tokens(L_max)}; knee "
             f"{sig(knee0, 4)} with no context, {sig(knee, 4)} at {L} tokens; caches {gb(held.cache_bytes, 4)} beside "
             f"{gb(held.weight_bytes, 4)} of weights against {gb(held.usable_bytes, 4)} usable."),
            (self.number("the cache's own intensity 2a/K", two_a / K, flop_per_byte(two_a / K)),
             self.number("L_max", L_max, tokens(L_max)),
             self.number("the knee with no context", knee0, f"{sig(knee0)} conversations"),
             self.number(f"the knee at {L} tokens of context", knee, f"{sig(knee)} conversations"),
             self.choice("does that batch fit", yes_no(held.fits))))
