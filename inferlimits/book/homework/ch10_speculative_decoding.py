"""Chapter 10, speculative decoding and the path of a request: several tokens per read of the weights."""
from __future__ import annotations

from functools import lru_cache

from inferlimits.arithmetic.generation import decode_point, weight_bytes_read_per_step
from inferlimits.arithmetic.kvcache import usable_memory_fraction
from inferlimits.arithmetic.parallel import network_bytes_per_s, send_time_s, tensor_parallel_fit
from inferlimits.arithmetic.serving import READING_TOKENS_PER_S, mixed_step_s
from inferlimits.arithmetic.speculative import expected_tokens_per_step, speculative_on
from inferlimits.data.models import kv_bytes_per_token, weight_bytes
from inferlimits.book.homework import Key, Template, pick, register, sig, whole
from inferlimits.book.homework.common import (an, card, cards, cards_with, cfg, fp8_or_bf16, gb, gbps, linked_cards,
                                              mb, mdl, ms, pct, rate, tflops, times)

DRAFT = "Llama-3.2-1B"
#: targets that share the draft's tokenizer (the Llama 3 family)
TARGETS = ("Llama-3.1-8B", "Llama-3.1-70B")


@register
class SpeedupEstimate(Template):
    chapter, label = "10_speculative_decoding", "serving-at-scale-ex2"

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
        estimate = E / (1 + k * c_ratio)
        t, d = cfg(p["target"]), cfg(DRAFT)
        return Key(
            ("Show that at one sequence, while decode is memory-bound, speculative decoding's speed-up is close to "
             "E[tokens] / (1 + k c), with c the draft's step time over the target's and E[tokens] = 1 + a + ... + a^k.",
             f"Compute it for {p['target']} in {pr} (weights, cache and math) on {an(a.name)} with {DRAFT} as the "
             f"draft, a = {acc} and k = {k}, at a context of {L:,} tokens: give c, E[tokens] and the estimate. The data "
             f"you need: a plain step of the target reads {gb(weight_bytes_read_per_step(t, pr), 4)} of weights and "
             f"{mb(kv_bytes_per_token(t, pr) * L, 4)} of cache; one of the draft reads "
             f"{gb(weight_bytes_read_per_step(d, pr), 4)} (its tied embedding, which is also its output head, counted "
             f"once) and {mb(kv_bytes_per_token(d, pr) * L, 4)} of cache; while both are memory-bound, c is the ratio "
             f"of their bytes, activations included. The {a.name} moves {gbps(a.bandwidth_bytes_per_s)}."),
            ("Memory-bound, verifying k + 1 tokens reads what one plain step reads, so it takes about one step; the "
             "draft adds k steps of c each: speed-up ≈ E[tokens] / (1 + k c).",
             f"c = {ms(s.draft_s / k, 4)} / {ms(s.plain_s, 4)} = {sig(c_ratio, 4)}; E[tokens] = {sig(E, 4)}; estimate "
             f"{sig(estimate, 4)}; the full count (the verification's larger activations and math) gives "
             f"{sig(s.speedup, 4)}."),
            (self.number("c", c_ratio, sig(c_ratio)),
             self.number("E[tokens]", E, sig(E)),
             self.number("the estimated speed-up", estimate, times(estimate))))


@register
class MovingTheCache(Template):
    chapter, label = "10_speculative_decoding", "speculative-ex2"

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
        cache, nvlink, cards_time, one_card, prefill = self._numbers(p)
        return Key(
            (f"A service disaggregates {name} in FP8, with an FP8 cache, on {a.name} cards: {T} of them in tensor "
             f"parallelism read prompts, and others decode. A prompt of {S:,} tokens arrives. How many bytes of cache "
             f"does it leave? How long does sending them take over {a.link.kind} at "
             f"{gbps(a.link.bytes_per_s)}? And over network cards of {gbps(network_bytes_per_s())} each way, if each "
             f"prefill GPU sends its own share over its own card, or if a single card carried it all? Compare the "
             f"network time with the prefill of the prompt itself, at the ceiling.",
             f"The data you need: {name} has {c.num_hidden_layers} layers and {c.num_key_value_heads} KV heads, each "
             f"keeping a key and a value of {c.head_dim_qk} numbers per token, one byte per number in FP8. The "
             f"prefill on {T} GPUs takes {ms(prefill, 4)} at the ceiling."),
            (f"Per token: 2 × {c.num_hidden_layers} × {c.num_key_value_heads} × {c.head_dim_qk} × 1 byte = "
             f"{whole(kv_bytes_per_token(c, 'FP8'))} bytes; the prompt leaves {mb(cache, 4)}.",
             f"{a.link.kind}: {mb(cache, 4)} / {gbps(a.link.bytes_per_s)} = {ms(nvlink, 4)}; {T} cards at once: "
             f"{ms(cards_time, 4)}; one card: {ms(one_card, 4)}.",
             f"Against the prefill's {ms(prefill, 4)}: {pct(cards_time / prefill)} with {T} cards."),
            (self.number("cache the prompt leaves", cache, mb(cache)),
             self.number(f"over {a.link.kind}", nvlink, ms(nvlink)),
             self.number(f"over {T} network cards", cards_time, ms(cards_time)),
             self.number("over a single network card", one_card, ms(one_card)),
             self.number(f"the {T} cards' time as a share of the prefill", cards_time / prefill, pct(cards_time / prefill))))


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

    def draw(self, rng):
        return {"target": pick(rng, TARGETS), "card": pick(rng, cards_with("FP8")), "context": pick(rng, (1024, 2048, 4096)),
                "acceptance": pick(rng, (0.6, 0.7, 0.8)), "draft_tokens": pick(rng, (3, 4, 5)),
                "strict": pick(rng, (50, 60, 80, 100, 120, 150)), "low": pick(rng, (0.3, 0.4, 0.5))}

    def _rounds(self, p, acceptance=None):
        acc = p["acceptance"] if acceptance is None else acceptance
        return _rounds(p["card"], p["target"], acc, p["draft_tokens"], p["context"])

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
        low = self._rounds(p, p["low"])
        return {"fits up to a batch of 8 or more": bool(fits) and fits == list(POWERS[:len(fits)]) and top >= 8,
                "plain decoding meets the strict line at some batch": plain_B is not None,
                "speculation meets it too": spec_B is not None,
                "the strict line, not memory, limits plain decoding": plain_B is not None and top is not None and plain_B < top,
                "speculation wins at the strict line": spec_B is not None and plain_B is not None
                and r[spec_B].aggregate > plain_B * plain_user[plain_B],
                "every batch meets the lax line": all(min(plain_user[B], r[B].per_user) >= READING_TOKENS_PER_S for B in fits),
                "the gain at the largest batch is not a tie": top is not None and abs(r[top].speedup - 1) > 0.04
                and abs(low[top].speedup - 1) > 0.04}

    def key(self, p):
        a, L, k, acc, strict, low_a = card(p["card"]), p["context"], p["draft_tokens"], p["acceptance"], p["strict"], p["low"]
        r, fits, top, plain_user, plain_B, spec_B = self._lines(p)
        low = self._rounds(p, low_a)[top]
        plain_all = plain_B * plain_user[plain_B]
        t, d = cfg(p["target"]), cfg(DRAFT)
        return Key(
            (f"{p['target']} in FP8 (weights, cache and math) on one {a.name}, contexts of {L:,} tokens, batches among "
             f"the powers of two up to {POWERS[-1]}. One service must give each user at least {strict} tokens/s; "
             f"another only {READING_TOKENS_PER_S}. For each, choose plain decoding or speculative decoding with the "
             f"{DRAFT} draft (a = {acc}, k = {k}) to make the most tokens per GPU. Which batch, how many tokens/s, and "
             f"what limits the batch? Then decide the second service again at a = {low_a}.",
             f"The data you need: use the package's ceilings (inferlimits.arithmetic.speculative.speculative_on), or "
             f"count them: the target reads {gb(weight_bytes_read_per_step(t, 'FP8'), 4)} of weights and holds "
             f"{gb(weight_bytes(t, 'FP8'), 4)}, the draft {gb(weight_bytes_read_per_step(d, 'FP8'), 4)} and "
             f"{gb(weight_bytes(d, 'FP8'), 4)}; their FP8 caches take {sig(kv_bytes_per_token(t, 'FP8') / 1024, 4)} "
             f"and {sig(kv_bytes_per_token(d, 'FP8') / 1024, 4)} KiB per token. The {a.name} does "
             f"{tflops(a.math_flops_per_s('FP8'))} of FP8 math, moves {gbps(a.bandwidth_bytes_per_s)} and can use "
             f"{gb(usable_memory_fraction() * a.capacity_bytes, 4)}."),
            (f"Strict line ({strict} tokens/s): plain decoding allows {plain_B} sequences at {rate(plain_user[plain_B], 4)} "
             f"each, {rate(plain_all, 4)} in all; speculation keeps {spec_B} at {rate(r[spec_B].per_user, 4)}, "
             f"{rate(r[spec_B].aggregate, 4)} in all: the users' speed limits the batch.",
             f"Lax line: every batch meets it; memory limits the batch to {top}. Plain {rate(top * plain_user[top], 4)}, "
             f"speculation {rate(r[top].aggregate, 4)} ({times(r[top].speedup, 4)}).",
             f"At a = {low_a}: speculation gives {times(low.speedup, 4)} the plain rate at {top}."),
            (self.number("strict line: plain decoding's batch", plain_B, whole(plain_B)),
             self.number("strict line: plain decoding, tokens/s per GPU", plain_all, rate(plain_all)),
             self.number("strict line: speculation's batch", spec_B, whole(spec_B)),
             self.number("strict line: speculation, tokens/s per GPU", r[spec_B].aggregate, rate(r[spec_B].aggregate)),
             self.choice("strict line: the choice", "speculate"),
             self.number("lax line: the largest batch that fits", top, whole(top)),
             self.number("lax line: plain decoding, tokens/s per GPU", top * plain_user[top], rate(top * plain_user[top])),
             self.number("lax line: speculation, tokens/s per GPU", r[top].aggregate, rate(r[top].aggregate)),
             self.choice("lax line: the choice", "speculate" if r[top].speedup > 1 else "decode plainly"),
             self.number(f"lax line at a = {low_a}: speculation over plain", low.speedup, times(low.speedup)),
             self.choice(f"lax line at a = {low_a}: the choice", "speculate" if low.speedup > 1 else "decode plainly")))
