"""Chapter 9, serving at scale: several GPUs for one model, or one model per GPU."""
from __future__ import annotations

import math

from inferlimits.arithmetic.generation import weight_bytes_read_per_step
from inferlimits.arithmetic.activations import activation_bytes_per_token, tensor_parallel_activation_share
from inferlimits.arithmetic.parallel import (all_reduces_per_step, cache_share, collective_latency_s, data_parallel_on,
                                             tensor_parallel_on, tensor_parallel_read_bytes, tensor_parallel_tie_batch)
from inferlimits.arithmetic.precision import decode_on
from inferlimits.data import datafiles
from inferlimits.data.units import GB
from inferlimits.data.models import kv_bytes_per_token
from inferlimits.book.homework import Key, Template, calc, pick, pick_distinct, register, sig
from inferlimits.book.homework.common import (an, card, cfg, dense_models, fp8_or_bf16, gb, gbps, kib, linked_cards,
                                              mb, mdl, ms, pct, rate, us, yes_no)


@register
class MoreGpusSlowerUsers(Template):
    chapter, label = "09_serving_at_scale", "serving-at-scale-ex1"
    tolerance = 0.03

    def draw(self, rng):
        small = [n for n in dense_models() if weight_bytes_read_per_step(cfg(n)) < 20e9]
        return {"model": pick(rng, small), "card": pick(rng, linked_cards()), "top": pick(rng, (4, 8))}

    def _steps(self, p):
        c, a = cfg(p["model"]), card(p["card"])
        return {T: tensor_parallel_on(a, c, T) for T in (1, 2, p["top"])}

    def holds(self, p):
        s, top = self._steps(p), p["top"]
        return {"fits on one GPU": s[1].fits, "two GPUs clearly slower than one": s[2].per_user < 0.96 * s[1].per_user,
                f"{top} GPUs clearly faster than one": s[top].per_user > 1.04 * s[1].per_user}

    def key(self, p):
        name, c, a, top = p["model"], cfg(p["model"]), card(p["card"]), p["top"]
        words = {4: "four", 8: "eight"}[top]
        s = self._steps(p)
        n = all_reduces_per_step(c) + 1
        alphas = sorted({collective_latency_s(a.link.kind, T) for T in (2, top)})
        each = " or ".join(us(x) for x in alphas)
        return Key(
            (f"{name} in BF16 on {a.name} cards, one sequence, no context, the model split over the GPUs in tensor "
             f"parallelism. What does each user get on one {a.name}, on two and on {words}? Why is two slower than "
             f"one, but {words} faster?",
             f"The data you need: a step reads {gb(weight_bytes_read_per_step(c), 4)} of weights; the model has "
             f"{c.num_hidden_layers} layers, so a split step makes {n} collectives (2 per layer, one after the "
             f"embedding and one gather of the logits), at about {each} each over {a.link.kind} "
             f"({gbps(a.link.bytes_per_s)} each way); its messages are small. The {a.name} moves "
             f"{gbps(a.bandwidth_bytes_per_s)}."),
            tuple(f"{T} GPU{'s' if T > 1 else ''}: read {ms(st.memory_s, 4)} + communication "
                  f"{ms(st.communication_s, 4)} = {ms(st.step_s, 4)}: {rate(st.per_user, 4)}." for T, st in s.items())
            + (f"The collectives do not divide: two GPUs save half the read, less than the collectives cost; {words} "
               f"save {1 - 1 / top:.0%} of it, more than the collectives cost.",),
            tuple(self.number(f"each user on {T}", st.per_user, rate(st.per_user)) for T, st in s.items()))


@register
class WhenSplittingPays(Template):
    chapter, label = "09_serving_at_scale", "serving-at-scale-ex7"
    tolerance = 0.03

    def draw(self, rng):
        one, two = pick_distinct(rng, dense_models(), 2)
        return {"models": [one, two], "card": pick(rng, linked_cards())}

    @staticmethod
    def _fixed(c, a) -> float:
        """t_comm as the question counts it: the collectives' fixed costs, (2n + 2) α."""
        return (all_reduces_per_step(c) + 1) * collective_latency_s(a.link.kind, 2)

    def _bound(self, c, a) -> float:
        return 2 * self._fixed(c, a) * a.bandwidth_bytes_per_s

    def holds(self, p):
        a = card(p["card"])
        cs = [cfg(n) for n in p["models"]]
        ok = {}
        for n, c in zip(p["models"], cs):
            slower = tensor_parallel_on(a, c, 2).per_user < tensor_parallel_on(a, c, 1).per_user
            ok[f"{n}: the bound and the full count agree"] = (weight_bytes_read_per_step(c) < self._bound(c, a)) == slower
            ok[f"{n}: not within the tolerance of the bound"] = abs(weight_bytes_read_per_step(c) / self._bound(c, a) - 1) > 0.05
        ok["different layer counts"] = cs[0].num_hidden_layers != cs[1].num_hidden_layers
        ok["the messages' bytes add under 1% to the fixed costs"] = all(
            tensor_parallel_on(a, c, 2).communication_s < 1.01 * self._fixed(c, a) for c in cs)
        ok["both fit on one GPU"] = all(tensor_parallel_on(a, c, 1).fits for c in cs)
        return ok

    def key(self, p):
        a = card(p["card"])
        names, cs = p["models"], [cfg(n) for n in p["models"]]
        bounds = [self._bound(c, a) for c in cs]
        comm = [self._fixed(c, a) for c in cs]
        extra = max(tensor_parallel_on(a, c, 2).communication_s / self._fixed(c, a) - 1 for c in cs)
        slower = [tensor_parallel_on(a, c, 2).per_user < tensor_parallel_on(a, c, 1).per_user for c in cs]
        alpha = collective_latency_s(a.link.kind, 2)
        return Key(
            ("At one sequence and no context a decode step is memory-bound; leave the activations aside. Show that "
             "splitting a model over T GPUs makes each user slower than one GPU exactly when (1 - 1/T) W/BW < t_comm, "
             "and that for two GPUs this means W < 2 t_comm BW.",
             f"On {a.name} cards ({gbps(a.bandwidth_bytes_per_s)}), with about {us(alpha)} per collective and 2n + 2 "
             f"collectives per step for n layers, below what weight bytes is a model of {cs[0].num_hidden_layers} "
             f"layers slower on two GPUs than on one? And a model of {cs[1].num_hidden_layers} layers? Check both "
             f"answers against {names[0]} and {names[1]} in BF16, which read {gb(weight_bytes_read_per_step(cs[0]), 4)} "
             f"and {gb(weight_bytes_read_per_step(cs[1]), 4)} of weights per step."),
            ("One GPU reads the weights in W/BW. Each of T GPUs reads a T-th of them, W/(T BW), and then the group "
             "talks, t_comm. A user is slower on T GPUs when W/(T BW) + t_comm > W/BW, that is when "
             "(1 - 1/T) W/BW < t_comm; for T = 2, when W/(2 BW) < t_comm, W < 2 t_comm BW. The messages are small, "
             "so t_comm is about the collectives' fixed costs, (2n + 2) α. (Their bytes over the link, the hidden "
             f"vector of each all-reduce and the logits of the gather, would add {pct(extra, 2)} here.)",)
            + tuple(line for n, c, t, b, sl in zip(names, cs, comm, bounds, slower) for line in (
                calc(f"t_comm, {c.num_hidden_layers} layers", "(2n + 2) α", f"(2 × {c.num_hidden_layers} + 2) × {us(alpha)}",
                     ms(t, 4)),
                calc(f"the bound, {c.num_hidden_layers} layers", "2 t_comm BW", f"2 × {ms(t, 4)} × "
                     f"{gbps(a.bandwidth_bytes_per_s)}", gb(b, 4)),
                f"Is {n} slower on two GPUs? {yes_no(sl).capitalize()}: it reads {gb(weight_bytes_read_per_step(c), 4)}, "
                f"{'below' if sl else 'above'} the bound.")),
            tuple(self.number(f"the bound, {c.num_hidden_layers} layers", b, gb(b)) for c, b in zip(cs, bounds))
            + tuple(self.choice(f"is {n} slower on two GPUs", yes_no(s)) for n, s in zip(names, slower)))


@register
class SplitOrReplicate(Template):
    chapter, label = "09_serving_at_scale", "serving-at-scale-ex6"
    tolerance = 0.03

    def draw(self, rng):
        return {"model": pick(rng, dense_models()), "card": pick(rng, linked_cards()),
                "context": pick(rng, (1024, 2048, 4096, 8192)), "few": pick(rng, (16, 32, 64)),
                "many": pick(rng, (512, 1024, 2048))}

    def _steps(self, p):
        c, a, L = cfg(p["model"]), card(p["card"]), p["context"]
        pr = fp8_or_bf16(a)
        return {B: (tensor_parallel_on(a, c, 8, B, L, pr, pr, pr), data_parallel_on(a, c, 8, B, L, pr, pr, pr))
                for B in (p["few"], p["many"])}

    def holds(self, p):
        s = self._steps(p)
        few, many = s[p["few"]], s[p["many"]]
        return {"everything fits": all(x.fits for pair in s.values() for x in pair),
                "memory-bound throughout": all(x.memory_s > x.math_s for pair in s.values() for x in pair),
                "the context fits the model": p["context"] <= mdl(p["model"]).context_length,
                "the split wins the small batch": few[0].aggregate > 1.05 * few[1].aggregate,
                "the replicas win the large batch": many[1].aggregate > 1.05 * many[0].aggregate}

    def key(self, p):
        name, c, a, L = p["model"], cfg(p["model"]), card(p["card"]), p["context"]
        pr = fp8_or_bf16(a)
        s = self._steps(p)
        lines, answers = list(self._terms(p)), []
        T, W, BW = 8, weight_bytes_read_per_step(c, pr), a.bandwidth_bytes_per_s
        *_, s1, sT, n_c, alpha, beta = self._numbers(p)
        K, A, share_K, share_A = self._numbers(p)[:4]
        for B, (split, copies) in s.items():
            lines += [calc(f"{B:,} sequences, a group GPU's read", "(W/T + B s_T) / BW",
                           f"({gb(W, 4)} / {T} + {B:,} × {mb(sT, 4)}) / {gbps(BW)}", ms(split.memory_s, 4)),
                      calc(f"{B:,} sequences, the group's talk", "n_c α + β B",
                           f"{n_c} × {us(alpha)} + {us(beta, 4)} × {B:,}", ms(split.communication_s, 4)),
                      calc(f"{B:,} sequences, split: each user", "1 / (read + talk)",
                           f"1 / ({ms(split.memory_s, 4)} + {ms(split.communication_s, 4)})", rate(split.per_user, 4)),
                      calc(f"{B:,} sequences, split: in all", "B / (read + talk)",
                           f"{B:,} / ({ms(split.memory_s, 4)} + {ms(split.communication_s, 4)})", rate(split.aggregate, 4)),
                      calc(f"{B:,} sequences, a replica's read", "(W + (B/T) s) / BW",
                           f"({gb(W, 4)} + {B:,} / {T} × {mb(s1, 4)}) / {gbps(BW)}", ms(copies.memory_s, 4)),
                      calc(f"{B:,} sequences, replicas: each user", "1 / read", f"1 / {ms(copies.memory_s, 4)}",
                           rate(copies.per_user, 4)),
                      calc(f"{B:,} sequences, replicas: in all", "B / read", f"{B:,} / {ms(copies.memory_s, 4)}",
                           rate(copies.aggregate, 4)),
                      f"{B:,} sequences: the better plan is "
                      f"{'split' if split.aggregate > copies.aggregate else 'replicas'}: "
                      + ("the weights, which the split divides, are most of the bytes." if split.aggregate > copies.aggregate
                         else "the caches, which the split cannot shrink below its share, and the talk outweigh the "
                              "weights it saves.")]
            answers += [self.number(f"{B:,} sequences, split: each user", split.per_user, rate(split.per_user)),
                        self.number(f"{B:,} sequences, split: in all", split.aggregate, rate(split.aggregate)),
                        self.number(f"{B:,} sequences, replicas: each user", copies.per_user, rate(copies.per_user)),
                        self.number(f"{B:,} sequences, replicas: in all", copies.aggregate, rate(copies.aggregate)),
                        self.choice(f"{B:,} sequences: the better plan",
                                    "split" if split.aggregate > copies.aggregate else "replicas")]
        lines.append("Split while the weights are most of a step's bytes; replicate once the caches are.")
        return Key(
            (f"You have eight {a.name} cards (T = 8) for {name} with {pr} weights, {pr} math and {an(pr)} cache, contexts of "
             f"{L:,} tokens. Should they form one tensor-parallel group of eight (split) or serve as eight replicas? "
             f"Decide at {p['few']} sequences in all and at {p['many']:,} sequences in all: what does each user get, "
             f"and what do the eight GPUs make together? Say which term decides each case.",
             f"The data you need: a step reads {gb(weight_bytes_read_per_step(c, pr), 4)} of weights. On one GPU a "
             f"sequence's cache takes {kib(K)} per token and its token moves {mb(A, 4)} of activations; on a GPU of "
             f"the group, which holds its share of the {c.num_key_value_heads} KV heads and of the activations that "
             f"split, {kib(share_K * K)} and {mb(share_A * A, 4)}. The model has {c.num_hidden_layers} layers of width {c.hidden_size:,} and a vocabulary of "
             f"{c.vocab_size:,}; a split step makes 2n + 1 all-reduces of the batch's BF16 hidden vectors and one "
             f"gather of its logits, each costing {us(collective_latency_s(a.link.kind, 8))} plus its bytes over "
             f"{gbps(a.link.bytes_per_s_among(8))} each way (an all-reduce sends 2(T - 1)/T of its message, a gather "
             f"(T - 1)/T). The {a.name} moves {gbps(a.bandwidth_bytes_per_s)}; both plans are memory-bound here."),
            tuple(lines), tuple(answers))


    def _numbers(self, p):
        """What each plan's step is made of: s, a replica's bytes per sequence; s_T, a group GPU's; the
        collectives per step, their fixed cost α and the link time β per sequence."""
        c, a, L = cfg(p["model"]), card(p["card"]), p["context"]
        pr, T = fp8_or_bf16(a), 8
        K, A = kv_bytes_per_token(c, pr), activation_bytes_per_token(c)
        share_K, share_A = cache_share(c, T), tensor_parallel_activation_share(c, "decode", T)
        link, alpha = a.link.bytes_per_s_among(T), collective_latency_s(a.link.kind, T)
        beta = ((all_reduces_per_step(c) * 2 * (T - 1) / T * c.hidden_size * 2 + (T - 1) / T * c.vocab_size * 2)
                / link)
        s1 = K * L + A
        sT = share_K * K * L + share_A * A
        return K, A, share_K, share_A, link, s1, sT, all_reduces_per_step(c) + 1, alpha, beta

    def _terms(self, p):
        c, L = cfg(p["model"]), p["context"]
        K, A, share_K, share_A, link, s1, sT, n_c, alpha, beta = self._numbers(p)
        n = c.num_hidden_layers
        return (calc("s, a sequence's bytes on its replica", "K L + A", f"{kib(K)} × {L:,} + {mb(A, 4)}", mb(s1, 4)),
                calc("s_T, a sequence's bytes on a group GPU", "K_T L + A_T",
                     f"{kib(share_K * K)} × {L:,} + {mb(share_A * A, 4)}", mb(sT, 4)),
                f"K_T and A_T: a group GPU keeps only its KV heads, and the activations that split (heads, the MLP's "
                f"inner width) divide by 8; the norms, residuals and the whole hidden vector each product reads do "
                f"not, so A_T is {pct(share_A, 4)} of A.",
                calc("n_c, the collectives per step", "(2n + 1) + 1", f"2 × {n} + 1 + 1", str(n_c)),
                calc("β, the link time per sequence", "((2n + 1) × 2(T - 1)/T × 2h + (T - 1)/T × 2V) / link",
                     f"((2 × {n} + 1) × 2 × (8 - 1) / 8 × 2 × {c.hidden_size:,} + (8 - 1) / 8 × 2 × {c.vocab_size:,}) "
                     f"/ {gbps(link)}", us(beta, 4)),
                "A split step: read (W/T + B s_T) / BW, then talk n_c α + β B; B tokens a step. A replica's step: "
                "(W + (B/T) s) / BW, B/T tokens on each of the 8 GPUs.")


def measured_busbw() -> dict[str, float]:
    """The all-reduce bus bandwidth measured on eight GPUs of a card (``data/collectives.toml``), bytes/s."""
    return {r["system"]: r["busbw_gb_s"] * GB for r in datafiles.load("collectives.toml")["allreduce"]
            if r.get("gpus") == 8 and "busbw_gb_s" in r}


@register
class WhereTheyTie(Template):
    chapter, label = "09_serving_at_scale", "serving-at-scale-ex8"
    tolerance = 0.03
    T = 8

    def draw(self, rng):
        measured = tuple(n for n in linked_cards() if n in measured_busbw())
        return {"model": pick(rng, dense_models()), "card": pick(rng, measured),
                "context": pick(rng, (1024, 2048, 4096, 8192))}

    def _terms(self, p):
        c, a, L, T = cfg(p["model"]), card(p["card"]), p["context"], self.T
        pr = fp8_or_bf16(a)
        W = weight_bytes_read_per_step(c, pr)
        one = decode_on(a, c, 1, L, pr, pr, pr)
        s = one.bytes - one.weight_bytes
        s_T = sum(tensor_parallel_read_bytes(c, T, one)[1:])
        n_c = all_reduces_per_step(c) + 1
        alpha = collective_latency_s(a.link.kind, T)
        comm = [tensor_parallel_on(a, c, T, B, L, pr, pr, pr).communication_s for B in (1, 2)]
        beta = comm[1] - comm[0]
        link, nccl = a.link.bytes_per_s_among(T), measured_busbw()[a.name]
        BW = a.bandwidth_bytes_per_s
        tie = tensor_parallel_tie_batch(W, BW, T, s, s_T, n_c, alpha, beta)
        at_nccl = tensor_parallel_tie_batch(W, BW, T, s, s_T, n_c, alpha, beta * link / nccl)
        at_slow = tensor_parallel_tie_batch(W, BW, T, s, s_T, n_c, 2 * alpha, beta)
        return pr, W, s, s_T, n_c, alpha, beta, link, nccl, tie, at_nccl, at_slow

    def _plans(self, p, B):
        c, a, L = cfg(p["model"]), card(p["card"]), p["context"]
        pr = fp8_or_bf16(a)
        return (tensor_parallel_on(a, c, self.T, B, L, pr, pr, pr), data_parallel_on(a, c, self.T, B, L, pr, pr, pr))

    def holds(self, p):
        c = cfg(p["model"])
        pr, W, s, s_T, n_c, alpha, beta, link, nccl, tie, at_nccl, at_slow = self._terms(p)
        finite = all(math.isfinite(x) and x >= self.T for x in (tie, at_nccl, at_slow))
        plans = self._plans(p, tie) if finite else ()
        return {"the context fits the model": p["context"] <= c.max_position_embeddings,
                "a tie of at least one sequence per GPU, in every case": finite,
                "both plans hold the tie's batch": finite and all(x.fits for x in plans),
                "both memory-bound there": finite and all(x.memory_s > x.math_s for x in plans),
                "the full count ties there too": finite and math.isclose(plans[0].aggregate, plans[1].aggregate,
                                                                          rel_tol=1e-6),
                "the measured rate is below the link's": nccl < link,
                "one change clearly matters more": finite and abs((tie - at_nccl) / max(1e-9, tie - at_slow) - 1) > 0.1}

    def key(self, p):
        name, c, a, L, T = p["model"], cfg(p["model"]), card(p["card"]), p["context"], self.T
        pr, W, s, s_T, n_c, alpha, beta, link, nccl, tie, at_nccl, at_slow = self._terms(p)
        BW = a.bandwidth_bytes_per_s
        more = "the fixed cost" if at_slow < at_nccl else "the link's rate"
        saving = (1 - 1 / T) * W / BW
        return Key(
            ("A tensor-parallel group of T GPUs wins at a small batch and T replicas at a large one. Find the batch "
             "where they tie. Let a step read W bytes of weights, let each sequence bring s bytes to its replica's GPU "
             "and s_T to each GPU of the group, and let the group's collectives take n_c α + β B per step for B "
             "sequences.",
             "(a) Both memory-bound, show that the group makes more tokens per second in all exactly while B < B_x = "
             "((1 - 1/T) W/BW - n_c α) / ((s_T - s/T)/BW + β).",
             f"(b) Evaluate B_x for {name} with {pr} weights, math and cache on eight {a.name} cards at {L:,} tokens "
             f"of context: W = {gb(W, 4)}, BW = {gbps(BW)}, T = {T}, s = {mb(s, 4)}, s_T = {mb(s_T, 4)}, "
             f"n_c = {n_c}, α = {us(alpha)}, and β = {us(beta, 4)} per sequence.",
             f"(c) Where does B_x move if the collectives' bytes cross at the measured all-reduce rate of "
             f"{gbps(nccl)} rather than the link's {gbps(link)}, and where if each collective's fixed cost is "
             f"{us(2 * alpha)}? Which of the two matters more here?"),
            ("(a) A replica's step: (W + B s / T) / BW; a group GPU's: (W/T + B s_T) / BW + n_c α + β B. Both make B "
             "tokens a step, so the group makes more while its step is shorter: W/T + B s_T + BW (n_c α + β B) < "
             "W + B s/T. Gather the B terms: B ((s_T - s/T)/BW + β) < (1 - 1/T) W/BW - n_c α, that is B < B_x.",
             calc("the numerator", "(1 - 1/T) W/BW - n_c α", f"(1 - 1 / {T}) × {gb(W, 4)} / {gbps(BW)} - {n_c} × "
                  f"{us(alpha)}", ms(saving - n_c * alpha, 4), "(b)"),
             calc("the denominator", "(s_T - s/T)/BW + β", f"({mb(s_T, 4)} - {mb(s, 4)} / {T}) / {gbps(BW)} + "
                  f"{us(beta, 4)}", us((s_T - s / T) / BW + beta, 4)),
             calc("B_x", "numerator / denominator", f"{ms(saving - n_c * alpha, 4)} / {us((s_T - s / T) / BW + beta, 4)}",
                  sig(tie, 4)),
             calc("β at the measured rate", "β × link / measured", f"{us(beta, 4)} × {gbps(link)} / {gbps(nccl)}",
                  us(beta * link / nccl, 4), "(c)"),
             calc("B_x at the measured rate", "", f"{ms(saving - n_c * alpha, 4)} / (({mb(s_T, 4)} - {mb(s, 4)} / {T}) / "
                  f"{gbps(BW)} + {us(beta * link / nccl, 4)})", sig(at_nccl, 4)),
             calc("B_x at the doubled fixed cost", "", f"((1 - 1 / {T}) × {gb(W, 4)} / {gbps(BW)} - {n_c} × "
                  f"{us(2 * alpha)}) / {us((s_T - s / T) / BW + beta, 4)}", sig(at_slow, 4)),
             f"Which matters more? {more.capitalize()}: it moves B_x further."),
            (self.number("B_x", tie, sig(tie)),
             self.number("B_x at the measured rate", at_nccl, sig(at_nccl)),
             self.number("B_x at the doubled fixed cost", at_slow, sig(at_slow)),
             self.choice("which matters more", more)))
