"""Chapter 10, speculative decoding and the path of a request: several tokens per read of the weights."""
from __future__ import annotations

from functools import lru_cache

from inferlimits.arithmetic.generation import decode_point, weight_bytes_read_per_step
from inferlimits.arithmetic.kvcache import usable_memory_fraction
from inferlimits.arithmetic.precision import decode_on
from inferlimits.arithmetic.parallel import network_bytes_per_s, send_time_s, tensor_parallel_fit
from inferlimits.arithmetic.serving import READING_TOKENS_PER_S, mixed_step_s
from inferlimits.arithmetic.speculative import estimated_speedup, expected_tokens_per_step, speculative_on
from inferlimits.data.models import kv_bytes_per_token, weight_bytes
from inferlimits.book.homework import Key, Template, calc, pick, register, sig, whole
from inferlimits.book.homework.common import (an, card, cards, cards_with, cfg, fp8_or_bf16, gb, gbps, kib, linked_cards,
                                              mb, mdl, ms, pct, rate, tflops, times, us)

DRAFT = "Llama-3.2-1B"
#: targets that share the draft's tokenizer (the Llama 3 family)
TARGETS = ("Llama-3.1-8B", "Llama-3.1-70B")


@register
class SpeedupEstimate(Template):
    chapter, label = "10_speculative_decoding", "serving-at-scale-ex2"
    tolerance = 0.03

    def draw(self, rng):
        return {"target": pick(rng, TARGETS), "card": pick(rng, cards()), "acceptance": pick(rng, (0.6, 0.7, 0.8, 0.9)),
                "draft_tokens": pick(rng, (2, 3, 4, 5, 6)), "context": pick(rng, (512, 1024, 2048, 4096))}

    def _step(self, p):
        a = card(p["card"])
        pr = fp8_or_bf16(a)
        return speculative_on(a, cfg(p["target"]), cfg(DRAFT), 1, p["acceptance"], p["draft_tokens"], p["context"],
                              pr, pr, pr)

    def holds(self, p):
        a, s = card(p["card"]), self._step(p)
        pr = fp8_or_bf16(a)
        plain = decode_point(cfg(p["target"]), a.math_flops_per_s(pr), a.bandwidth_bytes_per_s, 1, p["context"], pr, pr)
        return {"both models fit": s.fits, "memory-bound at one sequence": plain.wall == "memory-bound",
                "speculation pays": s.speedup > 1}

    def key(self, p):
        a, s = card(p["card"]), self._step(p)
        pr = fp8_or_bf16(a)
        k, acc, L = p["draft_tokens"], p["acceptance"], p["context"]
        c_ratio = s.draft_s / k / s.plain_s
        E = expected_tokens_per_step(acc, k)
        estimate = estimated_speedup(acc, k, c_ratio)
        t, d = cfg(p["target"]), cfg(DRAFT)
        BW = a.bandwidth_bytes_per_s
        pt, pd = decode_on(a, t, 1, L, pr, pr, pr), decode_on(a, d, 1, L, pr, pr, pr)
        return Key(
            ("Show that at one sequence, while decode is memory-bound, speculative decoding's speed-up is close to "
             "E[tokens] / (1 + k c), with c the draft's step time over the target's and E[tokens] = 1 + a + ... + a^k.",
             f"Compute it for {p['target']} in {pr} (weights, cache and math) on {an(a.name)} with {DRAFT} as the "
             f"draft, a = {acc} and k = {k}, at a context of {L:,} tokens: give c, E[tokens] and the estimate. The data "
             f"you need: a plain step of the target reads {gb(weight_bytes_read_per_step(t, pr), 4)} of weights and "
             f"{mb(kv_bytes_per_token(t, pr) * L, 4)} of cache; one of the draft reads "
             f"{gb(weight_bytes_read_per_step(d, pr), 4)} (its tied embedding, which is also its output head, counted "
             f"once) and {mb(kv_bytes_per_token(d, pr) * L, 4)} of cache; a token moves "
             f"{mb(decode_on(a, t, 1, L, pr, pr, pr).activation_bytes, 4)} of activations through the target and "
             f"{mb(decode_on(a, d, 1, L, pr, pr, pr).activation_bytes, 4)} through the draft. While both are "
             f"memory-bound, c is the ratio of their bytes, activations included. The {a.name} moves "
             f"{gbps(a.bandwidth_bytes_per_s)}."),
            ("A round drafts k tokens, k steps of the draft, then the target checks the k + 1 positions in one pass "
             "and keeps E[tokens] of them on average: token i survives with probability a^i. Memory-bound, the check "
             "reads the weights and the cache once, what one plain step reads, so it takes about one plain step, "
             "t; the draft adds k steps of c t. The round makes E[tokens] in (1 + k c) t against one token in t: "
             "speed-up ≈ E[tokens] / (1 + k c).",
             calc("a plain step of the target", "(W + K L + A) / BW", f"({gb(pt.weight_bytes, 4)} + "
                  f"{mb(pt.cache_bytes, 4)} + {mb(pt.activation_bytes, 4)}) / {gbps(BW)}", ms(s.plain_s, 4)),
             calc("a step of the draft", "(W + K L + A) / BW", f"({gb(pd.weight_bytes, 4)} + {mb(pd.cache_bytes, 4)} + "
                  f"{mb(pd.activation_bytes, 4)}) / {gbps(BW)}", ms(s.draft_s / k, 4)),
             calc("c", "draft step / target step", f"{ms(s.draft_s / k, 4)} / {ms(s.plain_s, 4)}", sig(c_ratio, 4)),
             calc("E[tokens]", "1 + a + ... + a^k", " + ".join(["1", str(acc)] + [f"{acc}^{i}" for i in range(2, k + 1)]),
                  sig(E, 4)),
             calc("the estimated speed-up", "E[tokens] / (1 + k c)", f"{sig(E, 4)} / (1 + {k} × {sig(c_ratio, 4)})",
                  times(estimate, 4)),
             f"The full count (the check's larger activations and math) gives {times(s.speedup, 4)}."),
            (self.number("c", c_ratio, sig(c_ratio)),
             self.number("E[tokens]", E, sig(E)),
             self.number("the estimated speed-up", estimate, times(estimate))))


@register
class MovingTheCache(Template):
    chapter, label = "10_speculative_decoding", "speculative-ex2"
    tolerance = 0.03

    def draw(self, rng):
        big = ("Llama-3.1-70B", "Llama-2-70B", "DeepSeek-LLM-67B", "Qwen2.5-32B", "Qwen3-32B", "Llama-3.1-8B")
        return {"model": pick(rng, big), "card": pick(rng, tuple(n for n in linked_cards() if card(n).supports("FP8") and card(n).link.kind == "NVLink")),
                "prompt": pick(rng, (2048, 4096, 8192, 16384)), "gpus": pick(rng, (2, 4, 8))}

    def _numbers(self, p):
        c, a, S, T = cfg(p["model"]), card(p["card"]), p["prompt"], p["gpus"]
        cache = kv_bytes_per_token(c, "FP8") * S
        nvlink = send_time_s(cache, a.link.bytes_per_s, 0.0)
        cards_time = send_time_s(cache / T, network_bytes_per_s(), 0.0)
        one_card = send_time_s(cache, network_bytes_per_s(), 0.0)
        prefill = mixed_step_s(a, c, 0, S, S, S, None, T, "FP8", "FP8", "FP8")
        return cache, nvlink, cards_time, one_card, prefill

    def holds(self, p):
        c, a, S, T = cfg(p["model"]), card(p["card"]), p["prompt"], p["gpus"]
        return {"the prompt fits the model": S <= mdl(p["model"]).context_length,
                "the prefill GPUs hold it": tensor_parallel_fit(a, c, T, 1, S, "FP8", "FP8").fits}

    def key(self, p):
        name, c, a, S, T = p["model"], cfg(p["model"]), card(p["card"]), p["prompt"], p["gpus"]
        cache, nvlink, cards_time, _, prefill = self._numbers(p)
        n = c.num_hidden_layers
        return Key(
            (f"A service disaggregates {name} in FP8, with an FP8 cache, on {a.name} cards: {T} of them in tensor "
             f"parallelism read prompts, and {T} others decode. A prompt of {S:,} tokens arrives. The model has {n} "
             f"layers of {c.num_key_value_heads} KV heads, each key and value {c.head_dim_qk} numbers of one byte. How "
             f"many bytes of cache does the prompt leave? How long does sending them take over {a.link.kind} at "
             f"{gbps(a.link.bytes_per_s)}, if one GPU sent it all? And over network cards of {gbps(network_bytes_per_s())} each way, if each "
             f"prefill GPU sends its own share over its own card? Compare both times with the prefill of the prompt "
             f"itself, which takes {ms(prefill, 4)} on the {T} prefill GPUs at the ceiling. How long does one layer's "
             f"share of the cache take to send over the {T} cards, and one layer's share of the prefill?",),
            (f"Per token: 2 × {n} × {c.num_key_value_heads} × {c.head_dim_qk} × 1 byte = "
             f"{whole(kv_bytes_per_token(c, 'FP8'))} bytes.",
             f"The prompt's cache: {whole(kv_bytes_per_token(c, 'FP8'))} bytes × {p['prompt']:,} = {mb(cache, 4)}.",
             f"{a.link.kind}: {mb(cache, 4)} / {gbps(a.link.bytes_per_s)} = {ms(nvlink, 4)}, {pct(nvlink / prefill)} of "
             f"the prefill; {T} cards at once: {mb(cache / T, 4)} each, {ms(cards_time, 4)}, "
             f"{pct(cards_time / prefill)} of it.",
             f"Per layer: {us(cards_time / n, 4)} to send against {ms(prefill / n, 4)} of prefill: a layer's cache "
             f"can leave while the next layers are computed."),
            (self.number("cache the prompt leaves", cache, mb(cache)),
             self.number(f"over {a.link.kind}", nvlink, ms(nvlink)),
             self.number(f"over {T} network cards", cards_time, ms(cards_time)),
             self.number(f"{a.link.kind} time as a share of the prefill", nvlink / prefill, pct(nvlink / prefill)),
             self.number(f"the {T} cards' time as a share of the prefill", cards_time / prefill, pct(cards_time / prefill)),
             self.number(f"one layer's share over the {T} cards", cards_time / n, us(cards_time / n)),
             self.number("one layer's share of the prefill", prefill / n, ms(prefill / n))))


POWERS = (1, 2, 4, 8, 16, 32, 64, 128, 256)


@lru_cache(maxsize=1024)
def _rounds(card_name: str, target: str, acceptance: float, draft_tokens: int, context: int) -> dict:
    """A round of speculative decoding at each batch of ``POWERS``, FP8 throughout (remembered: the
    template's conditions and its key read the same rounds)."""
    a, t, d = card(card_name), cfg(target), cfg(DRAFT)
    return {B: speculative_on(a, t, d, B, acceptance, draft_tokens, context, "FP8", "FP8", "FP8") for B in POWERS}


@register
class SpeculateOrBatch(Template):
    chapter, label = "10_speculative_decoding", "speculative-ex3"
    tolerance, counts_exact = 0.03, True

    def draw(self, rng):
        return {"target": pick(rng, TARGETS), "card": pick(rng, cards_with("FP8")), "context": pick(rng, (1024, 2048, 4096)),
                "acceptance": pick(rng, (0.6, 0.7, 0.8)), "draft_tokens": pick(rng, (3, 4, 5, 6)),
                "strict": pick(rng, (50, 60, 80, 100, 120, 150)), "short": pick(rng, (1, 2))}

    def _rounds(self, p, draft_tokens=None):
        k = p["draft_tokens"] if draft_tokens is None else draft_tokens
        return _rounds(p["card"], p["target"], p["acceptance"], k, p["context"])

    def _lines(self, p):
        r = self._rounds(p)
        fits = [B for B in POWERS if r[B].fits]
        top = max(fits) if fits else None
        plain_user = {B: 1 / r[B].plain_s for B in fits}
        plain_B = max((B for B in fits if plain_user[B] >= p["strict"]), default=None)
        spec_B = max((B for B in fits if r[B].per_user >= p["strict"]), default=None)
        return r, fits, top, plain_user, plain_B, spec_B

    def holds(self, p):
        r, fits, top, plain_user, plain_B, spec_B = self._lines(p)
        short = self._rounds(p, p["short"])
        return {"fits up to a batch of 8 or more": bool(fits) and fits == list(POWERS[:len(fits)]) and top >= 8,
                "the short draft fits the same batches": bool(fits) and all(short[B].fits for B in fits),
                "plain decoding memory-bound at every such batch": all(
                    decode_on(card(p["card"]), cfg(p["target"]), B, p["context"], "FP8", "FP8", "FP8").wall
                    == "memory-bound" for B in fits),
                "plain decoding meets the strict line at some batch": plain_B is not None,
                "speculation meets it too": spec_B is not None,
                "the strict line, not memory, limits plain decoding": plain_B is not None and top is not None and plain_B < top,
                "speculation wins at the strict line": spec_B is not None and plain_B is not None
                and r[spec_B].aggregate > plain_B * plain_user[plain_B],
                "every batch meets the lax line": all(min(plain_user[B], r[B].per_user, short[B].per_user)
                                                      >= READING_TOKENS_PER_S for B in fits),
                "the gains at the largest batch are not ties": top is not None and abs(r[top].speedup - 1) > 0.04
                and abs(short[top].speedup - 1) > 0.04}

    def key(self, p):
        a, L, k, acc, strict, k2 = card(p["card"]), p["context"], p["draft_tokens"], p["acceptance"], p["strict"], p["short"]
        r, fits, top, plain_user, plain_B, spec_B = self._lines(p)
        short = self._rounds(p, k2)[top]
        plain_all = plain_B * plain_user[plain_B]
        limit = "the users' speed" if spec_B < top else "memory"
        t, d = cfg(p["target"]), cfg(DRAFT)

        def choice(x):
            return "speculate" if x.speedup > 1 else "decode plainly"

        return Key(
            (f"{p['target']} in FP8 (weights, cache and math) on one {a.name}, contexts of {L:,} tokens, batches among "
             f"the powers of two up to {POWERS[-1]}. One service must give each user at least {strict} tokens/s; "
             f"another only {READING_TOKENS_PER_S}. For each, choose plain decoding or speculative decoding with the "
             f"{DRAFT} draft (a = {acc}, k = {k}) to make the most tokens per GPU. Which batch, how many tokens/s per "
             f"user and per GPU, and what limits the batch? Then decide the second service again with a draft of "
             f"k = {k2}.",
             f"The data you need: use the package's ceilings (inferlimits.arithmetic.speculative.speculative_on), or "
             f"count them: the target reads {gb(weight_bytes_read_per_step(t, 'FP8'), 4)} of weights and holds "
             f"{gb(weight_bytes(t, 'FP8'), 4)}, the draft {gb(weight_bytes_read_per_step(d, 'FP8'), 4)} and "
             f"{gb(weight_bytes(d, 'FP8'), 4)}; their FP8 caches take {kib(kv_bytes_per_token(t, 'FP8'))} "
             f"and {kib(kv_bytes_per_token(d, 'FP8'))} per token. The {a.name} does "
             f"{tflops(a.math_flops_per_s('FP8'))} of FP8 math, moves {gbps(a.bandwidth_bytes_per_s)} and can use "
             f"{gb(usable_memory_fraction() * a.capacity_bytes, 4)}."),
            self._working(p, r, fits, top, plain_user, plain_B, spec_B, short, limit, choice),
            (self.count("strict line: plain decoding's batch", plain_B, whole(plain_B)),
             self.number("strict line: plain decoding, tokens/s per user", plain_user[plain_B], rate(plain_user[plain_B])),
             self.number("strict line: plain decoding, tokens/s per GPU", plain_all, rate(plain_all)),
             self.count("strict line: speculation's batch", spec_B, whole(spec_B)),
             self.number("strict line: speculation, tokens/s per user", r[spec_B].per_user, rate(r[spec_B].per_user)),
             self.number("strict line: speculation, tokens/s per GPU", r[spec_B].aggregate, rate(r[spec_B].aggregate)),
             self.choice("strict line: the choice", "speculate"),
             self.choice("strict line: what limits the batch", limit),
             self.count("lax line: the largest batch that fits", top, whole(top)),
             self.number("lax line: plain decoding, tokens/s per GPU", top * plain_user[top], rate(top * plain_user[top])),
             self.number("lax line: speculation, tokens/s per GPU", r[top].aggregate, rate(r[top].aggregate)),
             self.choice("lax line: the choice", choice(r[top])),
             self.choice("lax line: what limits the batch", "memory"),
             self.number(f"lax line with k = {k2}: speculation, tokens/s per GPU", short.aggregate, rate(short.aggregate)),
             self.choice(f"lax line with k = {k2}: the choice", choice(short))))


    def _working(self, p, r, fits, top, plain_user, plain_B, spec_B, short, limit, choice):
        a, L, k, acc, strict, k2 = card(p["card"]), p["context"], p["draft_tokens"], p["acceptance"], p["strict"], p["short"]
        t, d = cfg(p["target"]), cfg(DRAFT)
        E = expected_tokens_per_step(acc, k)
        usable = usable_memory_fraction() * a.capacity_bytes
        W = weight_bytes(t, "FP8") + weight_bytes(d, "FP8")
        Ks = kv_bytes_per_token(t, "FP8") + kv_bytes_per_token(d, "FP8")

        def plain(B, tag):
            return (f"From speculative_on at {B}: t_plain = {ms(r[B].plain_s, 4)}.",
                    calc(f"{tag}plain decoding at {B}: each user", "1 / t_plain", f"1 / {ms(r[B].plain_s, 4)}",
                         rate(plain_user[B], 4)))

        def spec(x, kk, tag):
            return (f"From speculative_on at {round(x.batch)}, k = {kk}: t_draft = {ms(x.draft_s / kk, 4)}, "
                    f"t_verify = {ms(x.verify_s, 4)}.",
                    calc(f"{tag}speculation at {round(x.batch)}, k = {kk}: each user", "E[tokens] / (k t_draft + t_verify)",
                         f"{sig(x.tokens_per_step, 4)} / ({kk} × {ms(x.draft_s / kk, 4)} + {ms(x.verify_s, 4)})",
                         rate(x.per_user, 4)))

        lines = ["From speculative_on, at each batch B: t_plain, a plain step of the target; t_draft, a step of the "
                 "draft; t_verify, the target checking k + 1 tokens per sequence in one pass. A round makes E[tokens] "
                 "per user in k t_draft + t_verify; the GPU makes B times what each user gets.",
                 calc("E[tokens]", "1 + a + ... + a^k", " + ".join(["1", str(acc)] + [f"{acc}^{i}" for i in range(2, k + 1)]),
                      sig(E, 4)),
                 *plain(plain_B, "strict line: ")]
        nxt = plain_B * 2
        if nxt in fits:
            lines += [*plain(nxt, ""), f"Below {strict} tokens/s: plain decoding keeps at most {plain_B} sequences."]
        lines += [calc("strict line: plain decoding, per GPU", "B × each user", f"{plain_B} × {rate(plain_user[plain_B], 4)}",
                       rate(plain_B * plain_user[plain_B], 4)),
                  *spec(r[spec_B], k, "strict line: ")]
        if spec_B * 2 in fits:
            lines += [*spec(r[spec_B * 2], k, ""), f"Below {strict} tokens/s: speculation keeps at most {spec_B} sequences."]
        lines += [calc("strict line: speculation, per GPU", "B × each user", f"{spec_B} × {rate(r[spec_B].per_user, 4)}",
                       rate(r[spec_B].aggregate, 4)),
                  f"Strict line: speculate, it makes more per GPU; {limit} limits the batch."]
        if top * 2 in POWERS:
            need = W + top * 2 * Ks * (L + k)
            lines.append(calc(f"lax line: memory for {top * 2} sequences", "W_t + W_d + B (K_t + K_d)(L + k)",
                              f"({gb(weight_bytes(t, 'FP8'), 4)} + {gb(weight_bytes(d, 'FP8'), 4)}) + {top * 2} × "
                              f"({kib(kv_bytes_per_token(t, 'FP8'))} + {kib(kv_bytes_per_token(d, 'FP8'))}) × "
                              f"({L:,} + {k})", gb(need, 4)))
        lines += [f"Lax line: every batch meets {READING_TOKENS_PER_S} tokens/s; memory limits the batch to {top} "
                  f"(usable: {gb(usable, 4)}).",
                  *plain(top, "lax line: "),
                  calc("lax line: plain decoding, per GPU", "B × each user", f"{top} × {rate(plain_user[top], 4)}",
                       rate(top * plain_user[top], 4)),
                  *spec(r[top], k, "lax line: "),
                  calc("lax line: speculation, per GPU", "B × each user", f"{top} × {rate(r[top].per_user, 4)}",
                       rate(r[top].aggregate, 4)),
                  f"Lax line: {choice(r[top])} ({times(r[top].speedup, 4)} the plain rate).",
                  calc(f"E[tokens] with k = {k2}", "1 + a + ... + a^k",
                       " + ".join(["1", str(acc)] + [f"{acc}^{i}" for i in range(2, k2 + 1)]),
                       sig(expected_tokens_per_step(acc, k2), 4)),
                  *spec(short, k2, f"k = {k2}: "),
                  calc(f"lax line with k = {k2}: speculation, per GPU", "B × each user",
                       f"{top} × {rate(short.per_user, 4)}", rate(short.aggregate, 4)),
                  f"With k = {k2}: {choice(short)} ({times(short.speedup, 4)} the plain rate)."]
        return tuple(lines)


@register
class RoundAndSpeedup(Template):
    chapter, label = "10_speculative_decoding", "speculative-ex4"
    tolerance = 0.03

    def draw(self, rng):
        return {"draft_tokens": pick(rng, (2, 3, 4, 5, 6)), "acceptance": pick(rng, (0.5, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9)),
                "cost": pick(rng, (0.01, 0.02, 0.03, 0.04, 0.05, 0.08, 0.1))}

    def holds(self, p):
        return {"speculation pays": estimated_speedup(p["acceptance"], p["draft_tokens"], p["cost"]) > 1.05}

    def key(self, p):
        k, acc, c = p["draft_tokens"], p["acceptance"], p["cost"]
        E = expected_tokens_per_step(acc, k)
        S = estimated_speedup(acc, k, c)
        return Key(
            (f"A draft of k = {k} tokens is accepted with a = {acc} at each position, and each draft step costs {c} of "
             f"a target step. Verification takes about one plain step. How many tokens does a round yield on average, "
             f"and what speed-up does that give at one sequence?",),
            (f"E[tokens] = 1 + a + ... + a^k = (1 - a^(k+1)) / (1 - a) = {sig(E, 4)}.",
             f"A round takes 1 + k c = 1 + {k} × {c} = {sig(1 + k * c, 4)} plain steps: speed-up {sig(E, 4)} / "
             f"{sig(1 + k * c, 4)} = {sig(S, 4)}."),
            (self.number("tokens per round", E, sig(E)),
             self.number("the speed-up", S, times(S))))


#: the longest draft the search for the best one considers
LONGEST_DRAFT = 64


def best_draft(acceptance: float, cost: float) -> int:
    """The draft length k that maximises ``estimated_speedup`` at one sequence (the first, if two tie)."""
    return max(range(1, LONGEST_DRAFT + 1), key=lambda k: estimated_speedup(acceptance, k, cost))


@register
class HowLongADraft(Template):
    chapter, label = "10_speculative_decoding", "speculative-ex5"
    tolerance, counts_exact = 0.03, True
    LENGTHS = (1, 2, 4, 8)

    def draw(self, rng):
        return {"target": pick(rng, TARGETS), "card": pick(rng, cards_with("FP8")), "context": pick(rng, (1024, 2048, 4096)),
                "acceptance": pick(rng, (0.6, 0.7, 0.8)), "batch": pick(rng, (64, 128, 256))}

    def _cost(self, p) -> float:
        """c for the pair at one sequence, as the question states it (three figures)."""
        one = speculative_on(card(p["card"]), cfg(p["target"]), cfg(DRAFT), 1, p["acceptance"], 1, p["context"],
                             "FP8", "FP8", "FP8")
        return float(sig(one.draft_s / one.plain_s, 3).replace(",", ""))

    def _at_batch(self, p) -> dict:
        a, t = card(p["card"]), cfg(p["target"])
        return {k: speculative_on(a, t, cfg(DRAFT), p["batch"], p["acceptance"], k, p["context"], "FP8", "FP8", "FP8")
                for k in self.LENGTHS}

    def holds(self, p):
        c = self._cost(p)
        k1 = best_draft(p["acceptance"], c)
        got = self._at_batch(p)
        ups = sorted((x.speedup for x in got.values()), reverse=True)
        winner = max(got, key=lambda k: got[k].speedup)
        return {"every draft length fits the batch": all(x.fits for x in got.values()),
                "the best length at one sequence is within the search": k1 < LONGEST_DRAFT,
                "one length clearly wins at the batch": ups[0] > 1.03 * ups[1],
                "the batch's winner is shorter than the best at one sequence": winner < k1}

    def key(self, p):
        a, L, acc, B = card(p["card"]), p["context"], p["acceptance"], p["batch"]
        c = self._cost(p)
        k1 = best_draft(acc, c)
        S1 = estimated_speedup(acc, k1, c)
        got = self._at_batch(p)
        winner = max(got, key=lambda k: got[k].speedup)
        return Key(
            ("How long should a draft be? Use the estimate S(k) = E_k[tokens] / (1 + k c) at one sequence.",
             "(a) Show that lengthening the draft from k to k + 1 raises S exactly while a^(k+1) (1 + k c) > c E_k[tokens].",
             f"(b) For {p['target']} in FP8 on {an(a.name)} with the {DRAFT} draft, a = {acc} and c = {c}: find the "
             f"best k and its speed-up.",
             f"(c) With the package's full count (inferlimits.arithmetic.speculative.speculative_on: FP8 weights, "
             f"cache and math, contexts of {L:,} tokens), what speed-ups do drafts of "
             + ", ".join(str(k) for k in self.LENGTHS[:-1]) + f" and {self.LENGTHS[-1]} tokens give at {B} sequences? "
             "Which length wins there, and why is it shorter than at one sequence?"),
            ("(a) One more token adds a^(k+1) to the expected tokens and c to the round: S(k + 1) > S(k) exactly when "
             "(E_k + a^(k+1)) / (1 + k c + c) > E_k / (1 + k c), that is (E_k + a^(k+1))(1 + k c) > E_k (1 + k c + c), "
             "a^(k+1)(1 + k c) > c E_k. Its left side falls geometrically with k, its right side grows: the first k "
             "where it fails is the best.",)
            + self._condition(acc, c, k1)
            + (calc(f"E_{k1}", "1 + a + ... + a^k", " + ".join(["1", str(acc)] + [f"{acc}^{i}" for i in range(2, k1 + 1)]),
                    sig(expected_tokens_per_step(acc, k1), 4)),
               calc(f"its speed-up, k = {k1}", "E_k / (1 + k c)", f"{sig(expected_tokens_per_step(acc, k1), 4)} / (1 + {k1} × {c})",
                    times(S1, 4)),
               f"(c) At {B} sequences, from speculative_on: t_plain = {ms(got[1].plain_s, 4)}, a draft step "
               f"{ms(got[1].draft_s, 4)}, and t_verify = "
               + ", ".join(ms(x.verify_s, 4) for x in got.values()) + " for k = "
               + ", ".join(str(k) for k in got) + "; speed-up = E_k × t_plain / (k t_draft + t_verify).")
            + tuple(calc(f"E_k at k = {k}", "1 + a + ... + a^k",
                         " + ".join(["1", str(acc)] + [f"{acc}^{i}" for i in range(2, k + 1)]) if k > 1 else f"1 + {acc}",
                         sig(expected_tokens_per_step(acc, k), 4)) for k in got if k != k1)
            + tuple(calc(f"speed-up at {B} sequences, k = {k}", "", f"{sig(x.tokens_per_step, 4)} × {ms(x.plain_s, 4)} / "
                         f"({k} × {ms(x.draft_s / k, 4)} + {ms(x.verify_s, 4)})", times(x.speedup, 4))
                    for k, x in got.items())
            + (f"k = {winner} wins. At {B} sequences the check is compute-bound: every drafted token costs math for "
               "every sequence, accepted or not, so long drafts cost more than they bring.",),
            (self.count("the best draft length at one sequence", k1, str(k1)),
             self.number("its speed-up", S1, times(S1)))
            + tuple(self.number(f"speed-up at {B} sequences, k = {k}", x.speedup, times(x.speedup)) for k, x in got.items())
            + (self.choice(f"the winning length at {B} sequences", str(winner)),))

    @staticmethod
    def _condition(acc: float, c: float, k1: int) -> tuple:
        """The condition of (a) at the last length where it holds and at the best, where it fails."""
        out = []
        for k in (k1 - 1, k1):
            if k < 1:
                continue
            E = expected_tokens_per_step(acc, k)
            out += [calc(f"a^(k+1)(1 + k c) at k = {k}", "", f"{acc}^{k + 1} × (1 + {k} × {c})",
                         sig(acc ** (k + 1) * (1 + k * c), 4), "(b)" if not out else ""),
                    calc(f"E_k at k = {k}", "1 + a + ... + a^k",
                         " + ".join(["1", str(acc)] + [f"{acc}^{i}" for i in range(2, k + 1)]), sig(E, 4)),
                    calc(f"c E_k at k = {k}", "", f"{c} × {sig(E, 4)}", sig(c * E, 4)),
                    f"At k = {k} the condition {'holds: one more token pays' if k < k1 else 'fails: the best draft has'}"
                    + (f" {k1} tokens." if k == k1 else ".")]
        return tuple(out)
