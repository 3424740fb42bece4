"""Chapter 6, overhead: the host's launches, a third ceiling."""
from __future__ import annotations

import math

from inferlimits.arithmetic.generation import OVERHEAD_BOUND, decode_point, regime, weight_bytes_read_per_step
from inferlimits.arithmetic.kvcache import fit, max_sequences, memory_left_for_cache_bytes, sequence_bytes_per_step
from inferlimits.arithmetic.overhead import (MICROSECOND, binding_wall, eager_launches_per_step, host_time_per_step_s,
                                             launch_assumptions, launch_budget_per_step, launches_per_step, longest_gap_s,
                                             overhead_bound_batch, overhead_ceiling_tokens_per_s,
                                             seconds_per_launch_to_explain)
from inferlimits.data.models import kv_bytes_per_token, weight_bytes
from inferlimits.book.homework import Key, Template, calc, pick, pick_distinct, register, sig, whole
from inferlimits.arithmetic.kvcache import usable_memory_fraction
from inferlimits.book.homework.common import (an, card, cards, cfg, datasheet, dense_models, gb, gbps, kib, mb, mib, ms, pct,
                                              rate, tflops, times, us, yes_no)


def _point(c, a, batch=1, context=0, precision="BF16"):
    return decode_point(c, a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s, batch, context, weight_precision=precision)


@register
class LaunchBudget(Template):
    chapter, label = "06_overhead", "overhead-ex1"
    tolerance, counts_exact = 0.03, True

    def draw(self, rng):
        return {"model": pick(rng, dense_models()), "card": pick(rng, cards()), "launch_us": pick(rng, (2, 3, 4, 5, 6, 8))}

    def _numbers(self, p):
        c, a = cfg(p["model"]), card(p["card"])
        t = p["launch_us"] * MICROSECOND
        ceiling = _point(c, a).memory_ceiling
        budget = launch_budget_per_step(ceiling, t)
        outside = launch_assumptions().outside_layers
        per_layer = (budget - outside) / c.num_hidden_layers
        return c, t, ceiling, budget, outside, per_layer

    def holds(self, p):
        c, t, ceiling, budget, outside, per_layer = self._numbers(p)
        a = card(p["card"])
        return {"the weights fit": fit(a.capacity_bytes, weight_bytes(c)).fits,
                "at least two kernels per layer": per_layer >= 2,
                "whole kernels: the floor fits the budget and one more does not":
                    launches_per_step(c, math.floor(per_layer), outside) <= budget
                    < launches_per_step(c, math.floor(per_layer) + 1, outside),
                "the count is not at the edge of a whole number (it is graded exactly)":
                    len({math.floor((budget * f - outside) / c.num_hidden_layers) for f in (0.995, 1, 1.005)}) == 1}

    def key(self, p):
        name, a = p["model"], card(p["card"])
        c, t, ceiling, budget, outside, per_layer = self._numbers(p)
        return Key(
            (f"{name} with BF16 weights decodes one sequence on {an(a.name)}. How many launches can a decode step "
             f"afford, at {p['launch_us']} µs of host time each, before the overhead ceiling falls below the memory "
             f"ceiling? If {outside} of those launches go to work outside the decoder layers, how many whole kernels "
             f"may each of the {c.num_hidden_layers} layers launch?",
             f"The data you need: a step reads {gb(weight_bytes_read_per_step(c), 4)} of weights and "
             f"{mb(_point(c, a).activation_bytes, 4)} of activations. " + datasheet(a, memory=False, math=False)),
            (f"Memory ceiling: BW / (W + A) = {gbps(a.bandwidth_bytes_per_s)} / ({gb(weight_bytes_read_per_step(c), 4)} "
             f"+ {mb(_point(c, a).activation_bytes, 4)}) = {rate(ceiling, 4)}.",
             f"Budget: n = 1 / (ceiling × t) = 1 / ({rate(ceiling, 4)} × {p['launch_us']} µs) = {sig(budget, 4)} launches.",
             f"Per layer: ({sig(budget, 4)} - {outside}) / {c.num_hidden_layers} = {sig(per_layer, 4)}, so "
             f"{math.floor(per_layer)} whole kernels."),
            (self.number("memory ceiling", ceiling, rate(ceiling)),
             self.number("launches a step can afford", budget, sig(budget)),
             self.count("whole kernels per layer", math.floor(per_layer), whole(math.floor(per_layer)))))


@register
class FarBelow(Template):
    chapter, label = "06_overhead", "overhead-ex2"
    tolerance = 0.03

    def draw(self, rng):
        now, new = pick_distinct(rng, cards(), 2)
        return {"model": pick(rng, dense_models()), "now": now, "new": new,
                "share": pick(rng, (0.08, 0.12, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4))}

    def _measured(self, p):
        ceiling = _point(cfg(p["model"]), card(p["now"])).memory_ceiling
        return float(sig(p["share"] * ceiling, 2).replace(",", ""))

    def holds(self, p):
        c, a, b = cfg(p["model"]), card(p["now"]), card(p["new"])
        d = _point(c, a)
        r = self._measured(p)
        return {"the weights fit on both": all(fit(x.capacity_bytes, weight_bytes(c)).fits for x in (a, b)),
                "the new card has more bandwidth": b.bandwidth_bytes_per_s > 1.3 * a.bandwidth_bytes_per_s,
                "far below both ceilings": regime(r, d.memory_ceiling, d.math_ceiling) == OVERHEAD_BOUND}

    def key(self, p):
        name, c, a, b = p["model"], cfg(p["model"]), card(p["now"]), card(p["new"])
        d, e = _point(c, a), _point(c, b)
        r = self._measured(p)
        n = eager_launches_per_step(c)
        t = seconds_per_launch_to_explain(r, n)
        gain = b.bandwidth_bytes_per_s / a.bandwidth_bytes_per_s
        return Key(
            (f"A team serves {name} in BF16 with a hand-written eager loop on {an(a.name)}, one sequence at a time, "
             f"and measures {sig(r, 2)} tokens per second. They propose to move to {b.name} cards, whose bandwidth is "
             f"{times(gain, 3)} as high. What is the {a.name}'s memory ceiling, and what share of it does the loop "
             f"reach? What host time per launch would explain that rate? What would you try first?",
             f"The data you need: a step reads {gb(d.weight_bytes, 4)} of weights and {mb(d.activation_bytes, 4)} of "
             f"activations, and launches about {whole(n)} kernels. " + datasheet(a, memory=False) + " "
             + datasheet(b, memory=False)),
            (calc(f"memory ceiling on the {a.name}", "BW / (W + A)", f"{gbps(a.bandwidth_bytes_per_s)} / "
                  f"({gb(d.weight_bytes, 4)} + {mb(d.activation_bytes, 4)})", rate(d.memory_ceiling, 4)),
             calc("share of that ceiling", "r / ceiling", f"{sig(r, 2)} tokens/s / {rate(d.memory_ceiling, 4)}",
                  pct(r / d.memory_ceiling, 4)),
             "Far below both ceilings (below half the lower one): neither memory nor math is the wall.",
             calc(f"memory ceiling on the {b.name}", "BW / (W + A)", f"{gbps(b.bandwidth_bytes_per_s)} / "
                  f"({gb(e.weight_bytes, 4)} + {mb(e.activation_bytes, 4)})", rate(e.memory_ceiling, 4)),
             "A higher ceiling helps only if memory is the limit, and nothing says it is.",
             calc("host time per launch that explains it", "1 / (r × n)", f"1 / ({sig(r, 2)} tokens/s × {whole(n)})",
                  us(t, 4)),
             "That time does not depend on the GPU. Try first: profile the loop, then cut launches (fuse kernels, "
             "capture a CUDA Graph, or use a serving engine) before buying cards."),
            (self.number(f"memory ceiling on the {a.name}", d.memory_ceiling, rate(d.memory_ceiling)),
             self.number("share of that ceiling", r / d.memory_ceiling, pct(r / d.memory_ceiling)),
             self.number("host time per launch that explains it", t, us(t))))


@register
class HostBoundBatch(Template):
    chapter, label = "06_overhead", "overhead-ex4"
    tolerance = 0.03   # the exercise grades every number, the count of sequences too, at 3%

    def draw(self, rng):
        return {"model": pick(rng, dense_models()), "card": pick(rng, cards()),
                "launch_us": pick(rng, (5, 10, 20)), "context": pick(rng, (2048, 4096, 8192, 16384))}

    def _at(self, p, context):
        c, a = cfg(p["model"]), card(p["card"])
        t = p["launch_us"] * MICROSECOND
        n = eager_launches_per_step(c)
        host = host_time_per_step_s(n, t)
        d = _point(c, a, 1, context, "FP16")
        s = sequence_bytes_per_step(kv_bytes_per_token(c), context, d.activation_bytes)
        b_o = overhead_bound_batch(host, d.weight_bytes, s, a.bandwidth_bytes_per_s, d.flops_per_token,
                                   a.dense_bf16_flops_per_s)
        above = _point(c, a, max(1.0, b_o * 1.02), context, "FP16")
        wall = binding_wall(above.memory_ceiling, above.math_ceiling, overhead_ceiling_tokens_per_s(n, t, above.batch))
        return n, host, d, s, b_o, wall

    def _wall_near(self, p, context) -> bool:
        c, a = cfg(p["model"]), card(p["card"])
        n, host, d, s, b_o, wall = self._at(p, context)
        t = p["launch_us"] * MICROSECOND

        def wall_at(B):
            x = _point(c, a, B, context, "FP16")
            return binding_wall(x.memory_ceiling, x.math_ceiling, overhead_ceiling_tokens_per_s(n, t, B))
        return b_o > 1 and wall_at(0.96 * b_o) == "overhead" and wall_at(1.04 * b_o) == wall_at(1.25 * b_o) == wall

    def holds(self, p):
        c, a = cfg(p["model"]), card(p["card"])
        n, host, d, *_ = self._at(p, 0)
        b_far = self._at(p, p["context"])[4]
        steady = all(self._wall_near(p, L) for L in (0, p["context"]))
        return {"the host binds at some batch": host > d.weight_bytes / a.bandwidth_bytes_per_s,
                "the wall above B_o is clear (the same from 1.04 to 1.25 B_o)": steady,
                "still at the longer context": b_far >= 2,
                "and with torch.cat's copies": self._with_copies(p) >= 2,
                "the context fits the model": p["context"] <= c.max_position_embeddings,
                "one sequence fits at the longer context":
                    max_sequences(a.capacity_bytes, weight_bytes(c, "FP16"), kv_bytes_per_token(c), p["context"]) >= 1,
                "the count that fits is not at the edge of a whole number (it is graded exactly)":
                    self._steady_fit(p),
                "B_o at the longer context clearly fits or clearly does not": b_far > 0 and abs(
                    max_sequences(a.capacity_bytes, weight_bytes(c, "FP16"), kv_bytes_per_token(c), p["context"])
                    / b_far - 1) > 0.04}

    def key(self, p):
        name, c, a, L = p["model"], cfg(p["model"]), card(p["card"]), p["context"]
        n, host, d, s, b0, wall0 = self._at(p, 0)
        _, _, dL, sL, bL, wallL = self._at(p, L)
        held = max_sequences(a.capacity_bytes, weight_bytes(c, "FP16"), kv_bytes_per_token(c), L)
        b_cat = self._with_copies(p)
        BW, P, K, u = a.bandwidth_bytes_per_s, a.dense_bf16_flops_per_s, kv_bytes_per_token(c), usable_memory_fraction()
        return Key(
            ("A step of B sequences launches the same n kernels at t seconds of host time each, whatever B is, while "
             "its bytes W + B s (with s = K L + A, the bytes each sequence brings for itself) and its math B F grow "
             "with the batch. (a) Show with symbols that the overhead ceiling is the lowest of the three exactly while "
             "B < B_o = min((n t · BW - W) / s, n t · P / F), and that it binds at no batch if n t ≤ W / BW.",
             f"(b) Evaluate B_o for an eager loop of {name} in FP16 on {an(a.name)}, {whole(n)} launches at "
             f"{p['launch_us']} µs each, with no context and with {L:,} tokens of context, and say which wall takes "
             f"over above it. Count each sequence's bytes as the memory ceiling does: its cache read once per step, "
             f"its activations at a serving engine's fusion. How many such sequences fit in memory, and does a "
             f"batch of B_o fit? (c) The loop's DynamicCache grows each layer's cache with torch.cat, which reads the whole cache "
             f"and writes it again at every step. Evaluate B_o at the longer context with its copies counted.",
             f"The data you need: a step reads {gb(d.weight_bytes, 4)} of weights; a sequence's token moves "
             f"{mb(d.activation_bytes, 4)} of activations, and its cache takes {sig(kv_bytes_per_token(c) / 1024, 4)} "
             f"KiB per token; a token does {sig(d.flops_per_token / 1e9, 4)} GFLOP with no context and "
             f"{sig(dL.flops_per_token / 1e9, 4)} GFLOP at {L:,} tokens; memory holds {gb(weight_bytes(c, 'FP16'), 4)} "
             f"of weights. " + datasheet(a) + f" Weights and caches may use {pct(usable_memory_fraction(), 2)} of its "
             f"memory."),
            ("(a) The host needs n t per step whatever B is; the GPU needs (W + B s) / BW for the bytes and B F / P for "
             "the math. The overhead ceiling is the lowest while the host is the slowest: n t > (W + B s) / BW, that "
             "is B < (n t · BW - W) / s, and n t > B F / P, that is B < n t · P / F. Both hold below the smaller "
             "bound, B_o. If n t ≤ W / BW the first fails at every batch: the host never binds.",
             calc("n t", "", f"{whole(n)} × {p['launch_us']} µs", ms(host, 5), "(b)"),
             calc("W / BW", "", f"{gb(d.weight_bytes, 5)} / {gbps(BW)}", ms(d.weight_bytes / BW, 4)),
             f"n t is longer: the host binds at small batches. With no context, s = A = {mb(s, 4)}.",
             calc("B_o with no context", "min((n t · BW - W) / s, n t · P / F)",
                  f"min(({ms(host, 5)} × {gbps(BW)} - {gb(d.weight_bytes, 5)}) / {mb(s, 4)}, {ms(host, 5)} × "
                  f"{tflops(P)} / {sig(d.flops_per_token / 1e9, 4)} GFLOP)", sig(b0, 4)),
             f"Above it the {wall0} wall binds, the term that gave the minimum.",
             calc(f"K L at {L:,} tokens", "", f"{kib(K)} × {L:,}", gb(dL.cache_bytes, 4)),
             calc(f"s at {L:,} tokens", "K L + A", f"{gb(dL.cache_bytes, 4)} + {mb(d.activation_bytes, 4)}", gb(sL, 4)),
             calc(f"B_o at {L:,} tokens", "min((n t · BW - W) / s, n t · P / F)",
                  f"min(({ms(host, 5)} × {gbps(BW)} - {gb(d.weight_bytes, 5)}) / {gb(sL, 4)}, {ms(host, 5)} × "
                  f"{tflops(P)} / {sig(dL.flops_per_token / 1e9, 4)} GFLOP)", sig(bL, 4)),
             f"Above it the {wallL} wall binds.",
             calc(f"sequences of {L:,} tokens that fit", "floor((u C - W_s) / (K L))",
                  f"floor(({pct(u, 2)} × {mib(a.capacity_bytes)} - {gb(weight_bytes(c, 'FP16'), 5)}) / "
                  f"({kib(K)} × {L:,}))", whole(held)),
             f"Does B_o at {L:,} tokens fit? {yes_no(held >= bL).capitalize()}: {held} sequences fit, "
             f"{'at least' if held >= bL else 'fewer than'} B_o.",
             calc("(c) s with torch.cat's copies", "K L + A + 2 K L", f"{gb(sL, 4)} + 2 × {gb(dL.cache_bytes, 4)}",
                  gb(sL + 2 * dL.cache_bytes, 4)),
             calc(f"B_o at {L:,} tokens with the copies", "min((n t · BW - W) / s, n t · P / F)",
                  f"min(({ms(host, 5)} × {gbps(BW)} - {gb(d.weight_bytes, 5)}) / {gb(sL + 2 * dL.cache_bytes, 4)}, "
                  f"{ms(host, 5)} × {tflops(P)} / {sig(dL.flops_per_token / 1e9, 4)} GFLOP)", sig(b_cat, 4))),
            (self.number("the host's time per step", host, ms(host)),
             self.number("B_o with no context", b0, sig(b0)),
             self.choice("the wall above it, no context", wall0),
             self.number(f"B_o at {L:,} tokens", bL, sig(bL)),
             self.choice(f"the wall above it, {L:,} tokens", wallL),
             self.count(f"sequences of {L:,} tokens that fit", held, whole(held)),
             self.choice(f"does B_o at {L:,} tokens fit", yes_no(held >= bL)),
             self.number(f"B_o at {L:,} tokens with torch.cat's copies", b_cat, sig(b_cat))))

    def _steady_fit(self, p) -> bool:
        c, a, L = cfg(p["model"]), card(p["card"]), p["context"]
        room = memory_left_for_cache_bytes(a.capacity_bytes, weight_bytes(c, "FP16"))
        one = kv_bytes_per_token(c) * L
        return len({math.floor(room * f / one) for f in (0.99, 1, 1.01)}) == 1

    def _with_copies(self, p) -> float:
        """B_o at the longer context when each step also reads the cache and writes it again (torch.cat)."""
        a = card(p["card"])
        n, host, d, s, _, _ = self._at(p, p["context"])
        return overhead_bound_batch(host, d.weight_bytes, s + 2 * d.cache_bytes, a.bandwidth_bytes_per_s,
                                    d.flops_per_token, a.dense_bf16_flops_per_s)


#: the layer's parts whose kernels a fused RMSNorm replaces with one (``data/overhead.toml``)
NORMS = ("norm_before_attention", "norm_before_mlp")


def _fused_launches(c) -> float:
    """An eager loop's launches per step with each RMSNorm fused into one kernel."""
    A = launch_assumptions()
    saved = sum(g.count - 1 for g in A.per_layer if g.part in NORMS)
    return launches_per_step(c, A.kernels_per_layer - saved, A.outside_layers)


@register
class GraphGaps(Template):
    chapter, label = "06_overhead", "overhead-ex6"
    tolerance = 0.03

    def draw(self, rng):
        return {"model": pick(rng, dense_models()), "card": pick(rng, cards()), "launch_us": pick(rng, (5, 8, 10, 15, 20)),
                "share": pick(rng, (0.8, 0.85, 0.9, 0.95))}

    def _numbers(self, p):
        c, a = cfg(p["model"]), card(p["card"])
        t = p["launch_us"] * MICROSECOND
        D = _point(c, a, precision="FP16").bytes / a.bandwidth_bytes_per_s
        n, nf = eager_launches_per_step(c), _fused_launches(c)
        s = p["share"]
        return c, a, t, D, n, nf, (longest_gap_s(D, n, nf * t), longest_gap_s(D, n, D / s), longest_gap_s(D, nf, D / s))

    def holds(self, p):
        c, a, t, D, n, nf, gaps = self._numbers(p)
        return {"the weights fit": fit(a.capacity_bytes, weight_bytes(c, "FP16")).fits,
                "the fused eager loop is host-bound": nf * t > 1.2 * D}

    def key(self, p):
        name = p["model"]
        c, a, t, D, n, nf, (win, at_share, fused_share) = self._numbers(p)
        s = p["share"]
        return Key(
            ("A CUDA Graph removes the host's cost per launch, but not every cost of a kernel boundary. Between the end "
             "of one kernel and the start of the next the GPU loses a short gap, g. Take one sequence, every kernel "
             "memory-bound and the host far ahead of the GPU.",
             "(a) Show that a graph of n kernels allows at most 1 / (D + n g) tokens per second, with D the step's "
             "bytes over the bandwidth. Show that it beats an eager loop of n_f launches at t each, bound by its host, "
             "exactly while g < (n_f t - D) / n.",
             f"(b) A step of {name} in FP16 on {an(a.name)} has D = {ms(D, 4)}. A graph records its {whole(n)} eager "
             f"kernels; the rival eager loop fuses both normalisations, for {whole(nf)} launches at {p['launch_us']} µs "
             f"each. Below what gap does the graph win? How small must g be for the graph to reach {pct(s, 2)} of the "
             f"memory ceiling? And how small for {pct(s, 2)} if fusion inside the graph also cuts it to the fused "
             f"count?"),
            ("(a) The host launches the graph once, so the GPU sets the pace: its step moves the bytes, D, and loses a "
             "gap after each of its n kernels, D + n g, one token per step. The host-bound eager loop takes n_f t a "
             "step. The graph is faster while D + n g < n_f t, that is g < (n_f t - D) / n.",
             calc("the gap below which the graph wins", "(n_f t - D) / n",
                  f"({whole(nf)} × {p['launch_us']} µs - {ms(D, 4)}) / {whole(n)}", us(win, 4), "(b)"),
             f"A share s of the memory ceiling 1/D needs D + n g ≤ D / s, that is g ≤ D (1/s - 1) / n.",
             calc(f"the gap for {pct(s, 2)}, {whole(n)} kernels", "D (1/s - 1) / n",
                  f"{ms(D, 4)} × (1 / {pct(s, 2)} - 1) / {whole(n)}", us(at_share, 4)),
             calc(f"the gap for {pct(s, 2)}, {whole(nf)} kernels", "D (1/s - 1) / n_f",
                  f"{ms(D, 4)} × (1 / {pct(s, 2)} - 1) / {whole(nf)}", us(fused_share, 4))),
            (self.number("the gap below which the graph wins", win, us(win)),
             self.number(f"the gap for {pct(s, 2)} of the ceiling, every eager kernel", at_share, us(at_share)),
             self.number(f"the gap for {pct(s, 2)} of the ceiling, the fused count", fused_share, us(fused_share))))
