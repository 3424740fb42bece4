"""Chapter 1, two speeds: the balance point, the roof, and what overlap buys."""
from __future__ import annotations

from inferlimits.arithmetic.roofline import (COMPUTE_BOUND, MEMORY_BOUND, arithmetic_intensity_flop_per_byte,
                                             attainable_flop_per_s, balance_point_flop_per_byte, bound,
                                             matmul_bytes, matmul_flops, step_time_no_overlap_s, step_time_s)
from inferlimits.data.units import bytes_per_element
from inferlimits.book.homework import Key, Template, calc, pick, pick_distinct, register, sig
from inferlimits.book.homework.common import an, card, cards, flop_per_byte, gbps, mb, pct, tflops, times, us

INTENSITIES = (10, 20, 25, 30, 40, 50, 60, 75, 80, 100, 120, 150, 200, 250, 300, 400)


@register
class BalancePoint(Template):
    chapter, label = "01_two_speeds", "two-speeds-ex1"
    tolerance = 0.01

    def draw(self, rng):
        return {"card": pick(rng, cards()), "intensity": pick(rng, INTENSITIES)}

    def holds(self, p):
        a = card(p["card"])
        R = balance_point_flop_per_byte(a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s)
        # clearly below the ridge: the question is about the slanted roof (on the flat one the answer,
        # the peak, would be in the question)
        return {"memory-bound": bound(p["intensity"], a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s) == MEMORY_BOUND,
                "well below the ridge": p["intensity"] <= 0.8 * R}

    def key(self, p):
        a, I = card(p["card"]), p["intensity"]
        P, BW = a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s
        R = balance_point_flop_per_byte(P, BW)
        roof = attainable_flop_per_s(I, P, BW)
        wall = bound(I, P, BW)
        return Key(
            (f"The {a.name} does {tflops(P)} of dense BF16 math and moves {gbps(BW)}. A kernel performs {I} FLOP per "
             f"byte. Is it memory-bound or compute-bound on this chip? What math rate can it reach at most, and what "
             f"share of the peak is that?",),
            (f"R = P / BW = {tflops(P)} / {gbps(BW)} = {flop_per_byte(R, 4)}.",
             f"I = {I} is below R: {wall}, so the roof is I × BW = {tflops(roof)}.",
             f"Share of the peak: I / R = {pct(roof / P)}."),
            (self.choice("memory-bound or compute-bound", wall),
             self.number("attainable math rate", roof, tflops(roof)),
             self.number("share of the peak", roof / P, pct(roof / P))))


@register
class HigherPeakLoses(Template):
    chapter, label = "01_two_speeds", "two-speeds-ex2"

    def draw(self, rng):
        x, y = pick_distinct(rng, cards(), 2)
        # an intensity between the two balance points, where the card with the lower peak is ahead (if any)
        fitting = [I for I in INTENSITIES if all(self.holds({"higher": x, "other": y, "intensity": I}).values())]
        return {"higher": x, "other": y, "intensity": pick(rng, fitting) if fitting else INTENSITIES[0]}

    def holds(self, p):
        x, y, I = card(p["higher"]), card(p["other"]), p["intensity"]
        rx = attainable_flop_per_s(I, x.dense_bf16_flops_per_s, x.bandwidth_bytes_per_s)
        ry = attainable_flop_per_s(I, y.dense_bf16_flops_per_s, y.bandwidth_bytes_per_s)
        return {"the first card has the higher peak": x.dense_bf16_flops_per_s > y.dense_bf16_flops_per_s,
                "memory-bound on the higher peak": bound(I, x.dense_bf16_flops_per_s, x.bandwidth_bytes_per_s) == MEMORY_BOUND,
                "compute-bound on the other": bound(I, y.dense_bf16_flops_per_s, y.bandwidth_bytes_per_s) == COMPUTE_BOUND,
                "the higher peak loses, clearly": ry > 1.05 * rx}

    def key(self, p):
        x, y, I = card(p["higher"]), card(p["other"]), p["intensity"]
        rx = attainable_flop_per_s(I, x.dense_bf16_flops_per_s, x.bandwidth_bytes_per_s)
        ry = attainable_flop_per_s(I, y.dense_bf16_flops_per_s, y.bandwidth_bytes_per_s)
        Rx = balance_point_flop_per_byte(x.dense_bf16_flops_per_s, x.bandwidth_bytes_per_s)
        Ry = balance_point_flop_per_byte(y.dense_bf16_flops_per_s, y.bandwidth_bytes_per_s)
        return Key(
            (f"You must run a workload whose intensity is {I} FLOP per byte, and you can rent either {an(x.name)} "
             f"or {an(y.name)}. The {x.name} does {tflops(x.dense_bf16_flops_per_s)} of dense BF16 math and moves "
             f"{gbps(x.bandwidth_bytes_per_s)}; the {y.name} does {tflops(y.dense_bf16_flops_per_s)} and moves "
             f"{gbps(y.bandwidth_bytes_per_s)}. The {x.name} has the higher peak math rate. Which card runs this "
             f"workload faster, and by what factor?",),
            (calc(f"R of the {x.name}", "P / BW", f"{tflops(x.dense_bf16_flops_per_s)} / {gbps(x.bandwidth_bytes_per_s)}",
                  flop_per_byte(Rx, 4)),
             f"I = {I} FLOP per byte is below it: on the {x.name} the workload is memory-bound.",
             calc(f"rate on the {x.name}", "min(P, I × BW)",
                  f"min({tflops(x.dense_bf16_flops_per_s)}, {I} FLOP per byte × {gbps(x.bandwidth_bytes_per_s)})",
                  tflops(rx)),
             calc(f"R of the {y.name}", "P / BW", f"{tflops(y.dense_bf16_flops_per_s)} / {gbps(y.bandwidth_bytes_per_s)}",
                  flop_per_byte(Ry, 4)),
             f"I is at or above it: on the {y.name} the workload is compute-bound, at the full peak.",
             calc(f"rate on the {y.name}", "min(P, I × BW)",
                  f"min({tflops(y.dense_bf16_flops_per_s)}, {I} FLOP per byte × {gbps(y.bandwidth_bytes_per_s)})",
                  tflops(ry)),
             calc("factor", f"rate on the {y.name} / rate on the {x.name}", f"{tflops(ry)} / {tflops(rx)}",
                  times(ry / rx, 4)),
             f"The {y.name} is faster, though its peak is lower."),
            (self.choice("the faster card", y.name),
             self.number("by what factor", ry / rx, times(ry / rx))))


@register
class WithoutOverlap(Template):
    chapter, label = "01_two_speeds", "two-speeds-ex4"

    def draw(self, rng):
        return {"card": pick(rng, cards()), "side": pick(rng, (2048, 4096, 8192, 16384)),
                "few": pick(rng, (1, 2, 4, 8)), "middle": pick(rng, (128, 256, 512, 1024, 2048)),
                "many": pick(rng, (4096, 8192, 16384))}

    def _parts(self, p):
        a, d = card(p["card"]), p["side"]
        b = bytes_per_element("BF16")
        P, BW = a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s
        out = []
        for m in (p["few"], p["middle"], p["many"]):
            f, bts = matmul_flops(m, d, d), matmul_bytes(m, d, d, b)
            cost = step_time_no_overlap_s(f, bts, P, BW) / step_time_s(f, bts, P, BW) - 1
            out.append((m, arithmetic_intensity_flop_per_byte(f, bts), cost))
        return a, balance_point_flop_per_byte(P, BW), out

    def holds(self, p):
        a, R, ((_, i_few, c_few), (_, _, c_mid), (_, i_many, c_many)) = self._parts(p)
        return {"few tokens: memory-bound": i_few < R, "many tokens: compute-bound": i_many > R,
                "the middle count costs clearly most": c_mid > 1.1 * max(c_few, c_many)}

    def key(self, p):
        a, R, parts = self._parts(p)
        d = p["side"]

        def tokens(m):
            return "one token" if m == 1 else f"{m:,} tokens"

        counts = [tokens(m) for m, _, _ in parts]
        largest = counts[max(range(3), key=lambda i: parts[i][2])]
        P, BW = a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s
        lines = [calc("R", "P / BW", f"{tflops(P)} / {gbps(BW)}", flop_per_byte(R, 4))]
        for (m, i, c), t in zip(parts, counts):
            lines.append(calc(f"I with {t}", "2 m d² / ((m d + d² + m d) × 2 bytes)",
                              f"2 × {m:,} × {d:,} × {d:,} / (({m:,} × {d:,} + {d:,} × {d:,} + {m:,} × {d:,}) × 2)",
                              flop_per_byte(i, 4)))
            if i < R:
                lines.append(calc(f"cost with {t}", "I / R (below the ridge)", f"{flop_per_byte(i, 4)} / {flop_per_byte(R, 4)}",
                                  pct(c, 4)))
            else:
                lines.append(calc(f"cost with {t}", "R / I (above the ridge)", f"{flop_per_byte(R, 4)} / {flop_per_byte(i, 4)}",
                                  pct(c, 4)))
        answers = []
        for (m, i, c), t in zip(parts, counts):
            answers += [self.number(f"intensity with {t}", i, flop_per_byte(i)),
                        self.number(f"cost without overlap, {t}", c, pct(c))]
        return Key(
            ("A piece of work performs F operations and moves M bytes on a chip with math rate P and bandwidth BW. "
             "Write R = P/BW for the chip's balance point and I = F/M for the work's intensity.",
             "(a) Show that the work takes at least max(F/P, M/BW) if fetching and computing overlap perfectly, and "
             "at least F/P + M/BW if they do not overlap at all, which is never more than twice as long.",
             "(b) Repeat the work over and over. Memory alone would allow BW/M runs per second, math alone P/F. Show "
             "that the math ceiling over the memory ceiling is R/I, the balance point over the intensity, so that the "
             "work is memory-bound exactly when I < R, and that at its memory ceiling it uses the share I/R of the "
             "peak math.",
             f"(c) Show that doing without overlap costs a factor of one plus the smaller of I/R and R/I. Where is that "
             f"cost largest? Work it out on {an(a.name)} ({tflops(a.dense_bf16_flops_per_s)} of dense BF16 math, "
             f"{gbps(a.bandwidth_bytes_per_s)}) for a square BF16 weight matrix of side {d:,} (each number two bytes; "
             f"the product reads the matrix and the tokens' vectors and writes the results), with {counts[0]}, "
             f"{counts[1]} and {counts[2]} at once: give the intensity and the cost of doing without overlap in each "
             f"case, as a share of the overlapped time, and say which case costs most."),
            ("(a) Math needs F/P and memory M/BW; overlapped the work ends with the slower, else they add, and each "
             "term is at most the larger, so the sum is at most twice it.",
             "(b) (P/F)/(BW/M) = R/I; at its memory ceiling the work does I × BW operations a second, I/R of P.",
             "(c) Without overlap a step takes the larger time plus the smaller: 1 + min(I/R, R/I), largest (2) at "
             "I = R, where fetching and computing take equally long. A product of m tokens by a d × d matrix does "
             "2 m d² operations and moves (m d + d² + m d) numbers of two bytes.")
            + tuple(lines) + (f"Largest with {largest}: its intensity is nearest the ridge.",),
            tuple(answers) + (self.choice("where the cost is largest", largest),))


@register
class TwoKernels(Template):
    chapter, label = "01_two_speeds", "two-speeds-ex6"

    def draw(self, rng):
        return {"card": pick(rng, cards()), "side": pick(rng, (2048, 4096, 8192)), "few": pick(rng, (1, 2, 4, 8)),
                "many": pick(rng, (1024, 2048, 4096, 8192))}

    def _times(self, p):
        a, d = card(p["card"]), p["side"]
        P, BW = a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s
        b = bytes_per_element("BF16")
        kernels = [(matmul_flops(m, d, d), matmul_bytes(m, d, d, b)) for m in (p["few"], p["many"])]
        F, M = sum(f for f, _ in kernels), sum(m for _, m in kernels)
        one = step_time_s(F, M, P, BW)
        two = sum(step_time_s(f, m, P, BW) for f, m in kernels)
        sides = [bound(arithmetic_intensity_flop_per_byte(f, m), P, BW) for f, m in kernels]
        return a, kernels, F, M, one, two, sides

    def holds(self, p):
        *_, one, two, sides = self._times(p)
        return {"the kernels lie on opposite sides of the ridge": sides == [MEMORY_BOUND, COMPUTE_BOUND],
                "the single roofline understates by more than the tolerance": 1 - one / two > 0.05}

    def key(self, p):
        a, kernels, F, M, one, two, sides = self._times(p)
        d, few, many = p["side"], p["few"], p["many"]
        I = arithmetic_intensity_flop_per_byte(F, M)
        short = 1 - one / two
        P, BW = a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s
        (f1, m1), (f2, m2) = kernels
        tokens = "one token" if few == 1 else f"{few} tokens"
        return Key(
            ("A step runs two kernels, one after the other: kernel 1 does F₁ operations on M₁ bytes, kernel 2 does F₂ "
             "on M₂. Each overlaps its own fetching and computing perfectly, but the second starts only when the "
             "first has finished.",
             "(a) Show that the step takes at least T₂ = max(F₁/P, M₁/BW) + max(F₂/P, M₂/BW), and that this is never "
             "less than T₁ = max(F/P, M/BW), the bound of the step taken as one workload with F = F₁ + F₂ and "
             "M = M₁ + M₂.",
             "(b) Show that T₂ = T₁ when both kernels lie on the same side of the ridge, and that T₂ is never more than "
             "twice T₁. When does it come close to twice?",
             f"(c) On {an(a.name)} ({tflops(a.dense_bf16_flops_per_s)} of dense BF16 math, "
             f"{gbps(a.bandwidth_bytes_per_s)}), let kernel 1 push {tokens} through a square matrix of BF16 weights, "
             f"{d:,} on a side, and let kernel 2 push a batch of {many:,} tokens through another matrix of the same "
             f"shape (each kernel reads its matrix and its tokens' vectors, and writes its results, two bytes a "
             f"number). What is the intensity of the step taken as one workload, what are T₁ and T₂, and by what "
             f"share of T₂ does the single roofline understate the step's time?"),
            ("(a) Each kernel takes at least its own max, and they run one after the other: T₂ is the sum. Each max "
             "is at least its own F_i/P and M_i/BW, so the sum is at least F/P and at least M/BW: T₂ ≥ T₁.",
             "(b) On one side of the ridge both maxima pick the same term (both F_i/P, or both M_i/BW), and the sum "
             "is F/P or M/BW, which is T₁. Each max is at most T₁, so T₂ ≤ 2T₁; near twice when the kernels take "
             "equally long on opposite sides of the ridge.",
             f"(c) A product of m tokens by a d × d matrix does 2 m d² operations and moves (2 m d + d²) × 2 bytes; "
             f"P = {tflops(P)}, BW = {gbps(BW)}.",
             calc("F₁", "2 m₁ d²", f"2 × {few:,} × {d:,} × {d:,}", f"{sig(f1 / 1e9, 4)} GFLOP"),
             calc("M₁", "(2 m₁ d + d²) × 2 bytes", f"(2 × {few:,} × {d:,} + {d:,} × {d:,}) × 2", mb(m1, 4)),
             calc("F₂", "2 m₂ d²", f"2 × {many:,} × {d:,} × {d:,}", f"{sig(f2 / 1e9, 4)} GFLOP"),
             calc("M₂", "(2 m₂ d + d²) × 2 bytes", f"(2 × {many:,} × {d:,} + {d:,} × {d:,}) × 2", mb(m2, 4)),
             calc("F", "F₁ + F₂", f"{sig(f1 / 1e9, 4)} GFLOP + {sig(f2 / 1e9, 4)} GFLOP", f"{sig(F / 1e9, 4)} GFLOP"),
             calc("M", "M₁ + M₂", f"{mb(m1, 4)} + {mb(m2, 4)}", mb(M, 4)),
             calc("I", "F / M", f"{sig(F / 1e9, 4)} GFLOP / {mb(M, 4)}", flop_per_byte(I, 4)),
             calc("T₁", "max(F/P, M/BW)", f"max({sig(F / 1e9, 4)} GFLOP / {tflops(P)}, {mb(M, 4)} / {gbps(BW)})",
                  us(one, 4)),
             calc("T₂", "max(F₁/P, M₁/BW) + max(F₂/P, M₂/BW)",
                  f"max({sig(f1 / 1e9, 4)} GFLOP / {tflops(P)}, {mb(m1, 4)} / {gbps(BW)}) + "
                  f"max({sig(f2 / 1e9, 4)} GFLOP / {tflops(P)}, {mb(m2, 4)} / {gbps(BW)})", us(two, 4)),
             calc("understated share", "1 - T₁/T₂", f"1 - {us(one, 4)} / {us(two, 4)}", pct(short, 4))),
            (self.number("intensity of the whole step", I, flop_per_byte(I)),
             self.number("T₁", one, f"{sig(one * 1e6)} µs"),
             self.number("T₂", two, f"{sig(two * 1e6)} µs"),
             self.number("the share the single roofline understates", short, pct(short))))
