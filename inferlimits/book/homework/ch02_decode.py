"""Chapter 2, decode: one token reads every weight."""
from __future__ import annotations

from inferlimits.arithmetic.activations import activation_bytes_per_token
from inferlimits.arithmetic.generation import decode_flops_per_token, decode_point, weight_bytes_read_per_step
from inferlimits.arithmetic.kvcache import fit, memory_left_for_cache_bytes, usable_memory_fraction
from inferlimits.arithmetic.roofline import balance_point_flop_per_byte
from inferlimits.data.units import bytes_per_element
from inferlimits.data.models import (embedding_params, kv_bytes_per_token, multiplied_params_per_token, param_count,
                                     weight_bytes)
from inferlimits.book.homework import Key, Template, calc, figures_for, pick, pick_distinct, register, sig
from inferlimits.book.homework.common import (multiplied_note, an, billions, card, cards, cfg, datasheet, dense_models, flop_per_byte, gb, gbps,
                                         kib, mb, mdl, mib, ms, pct, rate, tflops, times, yes_no)

#: the weight formats a decode question stores a dense model in (FP8 and INT8 keep the vocabulary
#: tables in BF16, as the chapter's checkpoints do)
ONE_BYTE = ("FP8", "INT8")


def _step(c, a, precision="BF16", context=0):
    return decode_point(c, a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s, 1, context, weight_precision=precision)


@register
class SingleStream(Template):
    chapter, label = "02_decode", "decode-ex1"

    def draw(self, rng):
        return {"model": pick(rng, dense_models()), "card": pick(rng, cards())}

    def holds(self, p):
        c, a = cfg(p["model"]), card(p["card"])
        return {"the weights fit": fit(a.capacity_bytes, weight_bytes(c)).fits,
                "memory-bound": _step(c, a).wall == "memory-bound"}

    def key(self, p):
        name, c, a = p["model"], cfg(p["model"]), card(p["card"])
        stored = weight_bytes(c)
        d = _step(c, a)
        u = usable_memory_fraction()
        return Key(
            (f"{name} runs in BF16 on one {a.name}. Do the weights fit, with weights and caches allowed {pct(u, 2)} "
             f"of the memory the device reports? What is the single-stream memory ceiling, the time per token, and "
             f"the math ceiling, the tokens per second that the {a.name}'s math alone would allow?",
             f"The data you need: {name} stores {billions(param_count(c))} weights, of which a token multiplies "
             f"{billions(multiplied_params_per_token(c))} ({multiplied_note(c)}); each token's step moves "
             f"{mb(activation_bytes_per_token(c), 4)} of activations. {datasheet(a)}"),
            (f"Stored weights: 2 bytes × {billions(param_count(c))} = {gb(stored, 4)}; usable: {pct(u, 2)} × "
             f"{gb(a.capacity_bytes, 4)} = {gb(u * a.capacity_bytes, 4)}: they fit.",
             f"A step reads {gb(d.weight_bytes, 4)} of weights and {mb(d.activation_bytes)} of activations, "
             f"{gb(d.bytes, 4)} in all: ceiling = BW / bytes = {rate(d.memory_ceiling, 4)}, {ms(1 / d.memory_ceiling, 4)} "
             f"per token.",
             f"Math: a token costs 2 × {billions(multiplied_params_per_token(c))} = "
             f"{sig(d.flops_per_token / 1e9, 4)} GFLOP; P / F = {rate(d.math_ceiling, 4)}, far above the memory "
             f"ceiling."),
            (self.choice("do the weights fit", "yes"),
             self.number("memory ceiling", d.memory_ceiling, rate(d.memory_ceiling)),
             self.number("time per token", 1 / d.memory_ceiling, ms(1 / d.memory_ceiling)),
             self.number("math ceiling", d.math_ceiling, rate(d.math_ceiling))))


@register
class WhichSetup(Template):
    chapter, label = "02_decode", "decode-ex2"

    def draw(self, rng):
        big = [n for n in dense_models() if weight_bytes(cfg(n)) > 50e9]
        one, two, three = pick_distinct(rng, cards(), 3)
        return {"model": pick(rng, big), "context": pick(rng, (4096, 8192, 16384, 32768)),
                "setups": [(one, "BF16"), (two, "BF16"), (three, pick(rng, ONE_BYTE))]}

    def _ceilings(self, p):
        c, L = cfg(p["model"]), p["context"]
        out = {}
        for name, prec in p["setups"]:
            a = card(name)
            fits = fit(a.capacity_bytes, weight_bytes(c, prec), kv_bytes_per_token(c), 1, L).fits
            out[(name, prec)] = (fits, _step(c, a, prec, L).memory_ceiling if fits else None)
        return out

    def holds(self, p):
        got = self._ceilings(p)
        fitting = sorted((v for f, v in got.values() if f), reverse=True)
        return {"the conversation fits the model": p["context"] <= mdl(p["model"]).context_length,
                "at least two fit": len(fitting) >= 2,
                "one is clearly fastest": len(fitting) >= 2 and fitting[0] > 1.05 * fitting[1]}

    def key(self, p):
        name, c, L = p["model"], cfg(p["model"]), p["context"]
        got = self._ceilings(p)
        cards_used = list(dict.fromkeys(n for n, _ in p["setups"]))
        precisions = sorted({pr for _, pr in p["setups"]} - {"BF16"})
        labels = {s: f"{an(s[0])} with {s[1]} weights" for s in got}
        fitting = {s: v for s, (f, v) in got.items() if f}
        best = max(fitting, key=fitting.get)
        u = usable_memory_fraction()
        K = kv_bytes_per_token(c)
        N, E, M = param_count(c), embedding_params(c), multiplied_params_per_token(c)
        tables = 1 if c.tie_word_embeddings else 2
        A = activation_bytes_per_token(c)
        lines = [calc("the conversation's cache", "L × K", f"{L:,} × {kib(K)}", gb(K * L, 4)),
                 f"Each set-up stores every weight, reads the {billions(M)} a token multiplies, its cache and its "
                 f"{mb(A, 4)} of activations. In BF16 a weight takes 2 bytes; in a one-byte format, 1 byte, but the "
                 f"vocabulary tables stay at 2."]
        answers = []
        for s, (f, v) in got.items():
            a = card(s[0])
            stored = weight_bytes(c, s[1])
            usable = u * a.capacity_bytes
            room = memory_left_for_cache_bytes(a.capacity_bytes, stored)
            d = _step(c, a, s[1], L)
            if s[1] == "BF16":
                lines.append(calc(f"stored, {labels[s]}", "2 bytes × N", f"2 × {billions(N)}", gb(stored, 4)))
            else:
                lines.append(calc(f"stored, {labels[s]}", f"1 byte × (N - {tables}E) + 2 bytes × {tables}E",
                                  f"1 × ({billions(N)} - {tables} × {billions(E)}) + 2 × {tables} × {billions(E)}",
                                  gb(stored, 4)))
            lines.append(calc(f"usable on {an(a.name)}", "u × C", f"{pct(u, 2)} × {mib(a.capacity_bytes)}", gb(usable, 4)))
            if stored >= usable:
                lines.append(f"Does {labels[s]} fit? No: the weights alone exceed the usable memory.")
            else:
                n = figures_for(usable, stored)
                lines.append(calc(f"room for the cache, {labels[s]}", "u C - stored", f"{gb(usable, n)} - {gb(stored, n)}",
                                  gb(room, 4)))
                lines.append(f"Does {labels[s]} fit? {'Yes' if f else 'No'}: the room "
                             f"{'holds' if f else 'is less than'} the conversation's {gb(K * L, 4)}.")
            if f:
                if s[1] == "BF16":
                    lines.append(calc(f"weights read, {labels[s]}", "2 bytes × M", f"2 × {billions(M)}",
                                      gb(d.weight_bytes, 4)))
                else:
                    lines.append(calc(f"weights read, {labels[s]}", "1 byte × (M - E) + 2 bytes × E",
                                      f"1 × ({billions(M)} - {billions(E)}) + 2 × {billions(E)}", gb(d.weight_bytes, 4)))
                lines.append(calc(f"memory ceiling, {labels[s]}", "BW / (W + L K + A)",
                                  f"{gbps(a.bandwidth_bytes_per_s)} / ({gb(d.weight_bytes, 4)} + {gb(K * L, 4)} + {mb(A, 4)})",
                                  rate(v, 4)))
            answers.append(self.choice(f"does {labels[s]} fit", yes_no(f)))
            if f:
                answers += [self.number(f"room for the cache, {labels[s]}", room, gb(room)),
                            self.number(f"memory ceiling, {labels[s]}", v, rate(v))]
        return Key(
            (f"You must decode {name} for one user, whose conversation has reached {L:,} tokens, on a single card. "
             f"Three set-ups are on offer: " + ", ".join(labels[s] for s in got) + ". Which fit, with weights and "
             f"caches allowed {pct(u, 2)} of the memory the device reports, and how much room, in GB, does each leave "
             f"for the cache? What is each one's memory ceiling at that length, and which is fastest?",
             f"The data you need: {name} stores {billions(param_count(c))} weights; its input embedding table and its "
             f"output head hold {billions(embedding_params(c))} of them each, and stay in BF16 when the rest goes to "
             f"{' or '.join(precisions)} (one byte a weight); a token multiplies {billions(multiplied_params_per_token(c))} "
             f"of the weights ({multiplied_note(c)}) and moves {mb(activation_bytes_per_token(c))} of "
             f"activations; its KV cache takes {kib(K)} per token, in BF16. "
             + " ".join(datasheet(card(n), math=False) for n in cards_used)),
            tuple(lines) + (f"Fastest: {labels[best]}, the highest ceiling of those that fit.",),
            tuple(answers) + (self.choice("the fastest set-up", labels[best]),))


@register
class IntensityOfDecode(Template):
    chapter, label = "02_decode", "decode-ex4"

    def draw(self, rng):
        small, big = pick_distinct(rng, dense_models(), 2)
        return {"model": small, "other": big, "card": pick(rng, cards())}

    def holds(self, p):
        c, a = cfg(p["model"]), card(p["card"])
        limit = decode_flops_per_token(c) / activation_bytes_per_token(c)
        R = balance_point_flop_per_byte(a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s)
        return {"the first model multiplies fewer weights":
                multiplied_params_per_token(c) < multiplied_params_per_token(cfg(p["other"])),
                "the limit is clearly above or below the ridge": abs(limit / R - 1) > 0.05}

    def key(self, p):
        c, o, a = cfg(p["model"]), cfg(p["other"]), card(p["card"])
        d, e = _step(c, a), _step(o, a)
        share, share_o = d.activation_bytes / d.bytes, e.activation_bytes / e.bytes
        F, A = decode_flops_per_token(c), activation_bytes_per_token(c)
        limit = F / A
        R = balance_point_flop_per_byte(a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s)
        N1, N2, A2 = multiplied_params_per_token(c), multiplied_params_per_token(o), activation_bytes_per_token(o)
        W1, W2 = d.weight_bytes, e.weight_bytes
        return Key(
            ("A dense model multiplies N weights for each token, each stored in b bytes, on a chip with bandwidth BW "
             "and math rate P. Leave the KV cache out (a conversation that has just begun).",
             "(a) Show that a single stream decodes at most BW/(Nb) tokens per second, and that its intensity "
             "2N/(Nb) does not depend on N.",
             f"(b) Now count the A bytes of activations each token moves. Show that the intensity falls short of its "
             f"weights-only value by the activations' share of the step's bytes, and say which models that share "
             f"hurts more. Put in {p['model']} in BF16, which multiplies {billions(multiplied_params_per_token(c))} "
             f"weights and moves {mb(activation_bytes_per_token(c), 4)} of activations per token, and {p['other']}, "
             f"which multiplies {billions(multiplied_params_per_token(o))} and moves "
             f"{mb(activation_bytes_per_token(o), 4)}: give each one's share, and the first one's intensity.",
             f"(c) Decode a batch of B sequences together. Show that the intensity is 2NB/(Nb + BA), and that no "
             f"batch takes it past 2N/A. What is that limit for {p['model']}, and do the activations alone keep a "
             f"large batch from reaching the ridge of {an(a.name)}, which does {sig(a.dense_bf16_flops_per_s / 1e12, 4)} "
             f"TFLOP/s of dense BF16 math on {sig(a.bandwidth_bytes_per_s / 1e9, 4)} GB/s?"),
            ("(a) A token reads the N b bytes of its weights once, so memory allows at most BW/(N b) tokens a "
             "second. It does 2N operations (a multiply and an add per weight) on those bytes: 2N/(N b) = 2/b FLOP "
             "per byte, whatever N.",
             "(b) With the activations a token moves N b + A bytes: 2N/(N b + A) = (2/b) × (1 - A/(N b + A)). The "
             "intensity falls short of 2/b by the share A/(N b + A). A grows about with the width, N b with its "
             "square times the depth, so the share is larger, and hurts more, in small models.",
             calc(f"N b, {p['model']}", "2 bytes × N", f"2 × {billions(N1)}", gb(W1, 4)),
             calc(f"share, {p['model']}", "A / (N b + A)", f"{mb(A, 4)} / ({gb(W1, 4)} + {mb(A, 4)})", pct(share, 4)),
             calc(f"N b, {p['other']}", "2 bytes × N", f"2 × {billions(N2)}", gb(W2, 4)),
             calc(f"share, {p['other']}", "A / (N b + A)", f"{mb(A2, 4)} / ({gb(W2, 4)} + {mb(A2, 4)})",
                  pct(share_o, 4)),
             calc(f"intensity, {p['model']}", "2N / (N b + A)", f"2 × {billions(N1)} / ({gb(W1, 4)} + {mb(A, 4)})",
                  flop_per_byte(d.intensity, 4)),
             "(c) B tokens share the weights: 2NB operations on N b + B A bytes, 2NB/(N b + BA), which rises with B "
             "toward 2N/A and never passes it.",
             calc("2N/A", "", f"2 × {billions(N1)} / {mb(A, 4)}", flop_per_byte(limit, 4)),
             calc(f"the ridge of {an(a.name)}", "P / BW", f"{tflops(a.dense_bf16_flops_per_s)} / "
                  f"{gbps(a.bandwidth_bytes_per_s)}", flop_per_byte(R, 4)),
             f"Do the activations alone keep a large batch below the ridge? {yes_no(limit <= R).capitalize()}: 2N/A is "
             f"{'above' if limit > R else 'below'} the ridge."),
            (self.number(f"activations' share, {p['model']}", share, pct(share)),
             self.number(f"activations' share, {p['other']}", share_o, pct(share_o)),
             self.number(f"intensity with the activations, {p['model']}", d.intensity, flop_per_byte(d.intensity, 4)),
             self.number("the limit 2N/A", limit, flop_per_byte(limit)),
             self.choice("do the activations alone keep a large batch below the ridge", yes_no(limit <= R))))


@register
class CeilingAndTime(Template):
    chapter, label = "02_decode", "decode-ex7"

    def draw(self, rng):
        return {"model": pick(rng, dense_models()), "card": pick(rng, cards())}

    def holds(self, p):
        c, a = cfg(p["model"]), card(p["card"])
        return {"the weights fit": fit(a.capacity_bytes, weight_bytes(c)).fits}

    def key(self, p):
        name, c, a = p["model"], cfg(p["model"]), card(p["card"])
        d = _step(c, a)
        return Key(
            (f"{name} multiplies {billions(multiplied_params_per_token(c), 3)} weights for each token "
             f"({multiplied_note(c)}), and a token moves about {mb(activation_bytes_per_token(c))} of activations "
             f"besides. Decode it in BF16 for one user on {an(a.name)}, which moves {gbps(a.bandwidth_bytes_per_s)}. "
             f"What is the single-stream memory ceiling, and the time per token?",),
            (f"Bytes per token: 2 × {billions(multiplied_params_per_token(c))} + {mb(d.activation_bytes, 4)} = "
             f"{gb(d.bytes, 4)}.",
             f"Ceiling: {gbps(a.bandwidth_bytes_per_s)} / {gb(d.bytes, 4)} = {rate(d.memory_ceiling, 4)}; time per "
             f"token {ms(1 / d.memory_ceiling, 4)}."),
            (self.number("memory ceiling", d.memory_ceiling, rate(d.memory_ceiling)),
             self.number("time per token", 1 / d.memory_ceiling, ms(1 / d.memory_ceiling))))


@register
class FourBitGain(Template):
    chapter, label = "02_decode", "decode-ex8"

    def draw(self, rng):
        untied = [n for n in dense_models() if not cfg(n).tie_word_embeddings]
        return {"models": sorted(pick_distinct(rng, untied, 3), key=lambda n: multiplied_params_per_token(cfg(n))),
                "card": pick(rng, cards())}

    def holds(self, p):
        shares = [embedding_params(cfg(n)) / multiplied_params_per_token(cfg(n)) for n in p["models"]]
        return {"the head shares differ clearly": all(b > 1.1 * a for a, b in zip(sorted(shares), sorted(shares)[1:])),
                "the smallest model fits the card": fit(card(p["card"]).capacity_bytes, weight_bytes(cfg(p["models"][0]))).fits}

    def key(self, p):
        names, a = p["models"], card(p["card"])
        b16, b4 = bytes_per_element("BF16"), bytes_per_element("INT4")
        gains, shares = {}, {}
        for n in names:
            c = cfg(n)
            shares[n] = embedding_params(c) / multiplied_params_per_token(c)
            gains[n] = weight_bytes_read_per_step(c, "BF16") / weight_bytes_read_per_step(c, "INT4")
        best = max(gains, key=gains.get)
        first = cfg(names[0])
        ratio = _step(first, a, "INT4").memory_ceiling / _step(first, a).memory_ceiling
        w16, w4 = weight_bytes_read_per_step(first, "BF16"), weight_bytes_read_per_step(first, "INT4")
        A = activation_bytes_per_token(first)
        return Key(
            (f"A dense model multiplies N weights per token. H of them are its output head, which a 4-bit checkpoint "
             f"keeps in BF16; it stores the other matrices at b₄ bytes a weight, group scales included "
             f"({sig(b4 * 8, 3)} bits, so b₄ = {sig(b4, 3)}). Leave the activations and the norm vectors out.",
             "(a) With b₁₆ = 2 bytes a weight in BF16, show that the 4-bit checkpoint raises the single-stream ceiling "
             "over BF16 by the factor b₁₆ / (b₄ + (b₁₆ - b₄) h), where h = H/N is the head's share of the weights a "
             "token multiplies, and that no model gets more than b₁₆/b₄.",
             "(b) Evaluate the factor for " + ", ".join(f"{n} (h = {pct(shares[n])})" for n in names)
             + ". Which model gains most, and why? What is the most any model gets?",
             f"(c) On {an(a.name)}, with the activations counted ({mb(activation_bytes_per_token(first), 4)} per token "
             f"for {names[0]}), what is the ratio of {names[0]}'s memory ceilings with INT4 and with BF16 weights? A "
             f"step reads {gb(weight_bytes_read_per_step(first, 'BF16'), 4)} of BF16 weights or "
             f"{gb(weight_bytes_read_per_step(first, 'INT4'), 4)} of INT4 ones."),
            ("(a) BF16 reads b₁₆ N bytes; the 4-bit checkpoint b₄ (N - H) + b₁₆ H = N (b₄ + (b₁₆ - b₄) h). The ceiling "
             "is BW over the bytes, so the factor is b₁₆ / (b₄ + (b₁₆ - b₄) h). It falls as h grows, and is largest, "
             "b₁₆/b₄, at h = 0.",)
            + tuple(calc(f"factor, {n}", "b₁₆ / (b₄ + (b₁₆ - b₄) h)",
                         f"2 / ({sig(b4, 4)} + (2 - {sig(b4, 4)}) × {pct(shares[n], 4)})", times(gains[n], 4),
                         "(b)" if i == 0 else "") for i, n in enumerate(names))
            + (calc("the most any model gets", "b₁₆ / b₄", f"2 / {sig(b4, 4)}", times(b16 / b4, 4)),
               f"{best} gains most: its head is the smallest share of its weights (h = {pct(shares[best], 4)}).",
               calc(f"ratio of the ceilings, {names[0]}", "(W₁₆ + A) / (W₄ + A)",
                    f"({gb(w16, 4)} + {mb(A, 4)}) / ({gb(w4, 4)} + {mb(A, 4)})", times(ratio, 4), "(c)"),
               "The activations' bytes do not shrink with the weights, so the ratio falls a little short of the "
               "factor."),
            tuple(self.number(f"the factor, {n}", gains[n], times(gains[n])) for n in names)
            + (self.number("the most any model gets", b16 / b4, times(b16 / b4)),
               self.choice("gains most", best),
               self.number(f"(c) INT4 over BF16 ceiling, {names[0]}", ratio, times(ratio))))
