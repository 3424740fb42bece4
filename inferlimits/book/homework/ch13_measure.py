"""Chapter 13, measuring this machine: the small decoder's ceilings, by formula before any measurement."""
from __future__ import annotations

from inferlimits.arithmetic.activations import activation_bytes_per_token
from inferlimits.arithmetic.generation import attention_flops_per_token, decode_flops_per_token, decode_point, weight_bytes_read_per_step
from inferlimits.arithmetic.kvcache import batch_where_math_binds, cache_limited_tokens_per_s, sequence_bytes_per_step
from inferlimits.arithmetic.roofline import balance_point_flop_per_byte
from inferlimits.data.models import kv_bytes_per_token
from inferlimits.book.homework import Key, Template, calc, pick, register, sig
from inferlimits.book.homework.common import (millions, an, card, cards, flop_per_byte, gbps, mb, rate, tflops, times, us, yes_no)
from inferlimits.machine.measure import PRECISION
from inferlimits.machine.tinyllm import TINY_LLAMA

SMALL = TINY_LLAMA
WIDE, NARROW = PRECISION, "BF16"   # float32, as numpy computes, and BF16


def _point(a, batch=1, context=0.0, weights=WIDE, cache=WIDE, activations=WIDE):
    return decode_point(SMALL, a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s, batch, context, weights, cache,
                        activations)


def _kb(x: float) -> str:
    return f"{sig(x / 1e3, 4)} kB"


def _about() -> str:
    return (f"the chapter's small decoder ({SMALL.num_hidden_layers} layers of width {SMALL.hidden_size:,}): its "
            f"float32 weights are {mb(weight_bytes_read_per_step(SMALL, WIDE), 4)}, a token's step moves "
            f"{mb(activation_bytes_per_token(SMALL, 'decode', WIDE), 4)} of float32 activations, and each cached token "
            f"takes {sig(kv_bytes_per_token(SMALL, WIDE) / 1e3, 4)} kB in float32; all of these halve in BF16")


@register
class SmallCeiling(Template):
    chapter, label = "13_measure", "measure-ex1"

    def draw(self, rng):
        return {"card": pick(rng, cards()), "batch": pick(rng, (1, 2, 4, 8))}

    def holds(self, p):
        return {"memory-bound": _point(card(p["card"]), p["batch"]).wall == "memory-bound"}

    def key(self, p):
        a, B = card(p["card"]), p["batch"]
        wide, narrow = _point(a, B), _point(a, B, 0, NARROW, NARROW, NARROW)
        return Key(
            (f"Take {_about()}. What memory ceiling would it have at a batch of {B} with no context on "
             f"{an(a.name)}, with its {gbps(a.bandwidth_bytes_per_s)}? How long is a step? And with everything "
             f"stored in BF16?",),
            (f"float32: {B} × {gbps(a.bandwidth_bytes_per_s)} / ({mb(wide.weight_bytes, 4)} + {B} × "
             f"{mb(wide.activation_bytes / B, 4)}) = {rate(wide.memory_ceiling, 4)}; a step takes "
             f"{us(B / wide.memory_ceiling, 4)}.",
             f"BF16: {rate(narrow.memory_ceiling, 4)}."),
            (self.number("memory ceiling in float32", wide.memory_ceiling, rate(wide.memory_ceiling)),
             self.number("step time in float32", B / wide.memory_ceiling, us(B / wide.memory_ceiling)),
             self.number("memory ceiling in BF16", narrow.memory_ceiling, rate(narrow.memory_ceiling))))


@register
class HalveWhich(Template):
    chapter, label = "13_measure", "measure-ex2"

    def draw(self, rng):
        return {"context": pick(rng, (128, 256, 512, 1024, 2048, 4096)), "batch": pick(rng, (4, 8, 16, 32, 64, 128))}

    def _points(self, p):
        a = card("B200 (HGX)")   # the bandwidth cancels: any card gives the same ratios
        B, L = p["batch"], p["context"]
        return _point(a, B, L), _point(a, B, L, weights=NARROW), _point(a, B, L, cache=NARROW)

    def holds(self, p):
        now, w, k = self._points(p)
        return {"the two choices differ clearly": abs(w.memory_ceiling / k.memory_ceiling - 1) > 0.05}

    def key(self, p):
        B, L = p["batch"], p["context"]
        now, w, k = self._points(p)
        gw, gk = w.memory_ceiling / now.memory_ceiling, k.memory_ceiling / now.memory_ceiling
        K, A = kv_bytes_per_token(SMALL, WIDE), activation_bytes_per_token(SMALL, "decode", WIDE)
        return Key(
            (f"Take {_about()}. At a context of {L:,} tokens and a batch of {B}, you can halve one of two things: the "
             f"weight bytes (store the weights in BF16) or the KV-cache bytes (store the KV cache in BF16). Which "
             f"raises the memory ceiling more, and by what factor each? The bandwidth cancels, so you need no "
             f"measurement.",),
            ("The memory ceiling is B × BW over the step's bytes, so halving a part raises it by the bytes before over "
             "the bytes after: BW and B cancel.",
             calc("the step's bytes", "W + B (K L + A)", f"{mb(now.weight_bytes, 4)} + {B} × ({_kb(K)} × {L:,} + "
                  f"{mb(A, 4)})", mb(now.bytes, 4)),
             calc("B K L, the caches", "", f"{B} × {_kb(K)} × {L:,}", mb(now.cache_bytes, 4)),
             calc("B A, the activations", "", f"{B} × {mb(A, 4)}", mb(now.activation_bytes, 4)),
             calc("with BF16 weights", "W/2 + B (K L + A)", f"{mb(now.weight_bytes, 4)} / 2 + {mb(now.cache_bytes, 4)} + "
                  f"{mb(now.activation_bytes, 4)}", mb(w.bytes, 4)),
             calc("gain from BF16 weights", "", f"{mb(now.bytes, 4)} / {mb(w.bytes, 4)}", times(gw, 4)),
             calc("with a BF16 cache", "W + B (K L / 2 + A)", f"{mb(now.weight_bytes, 4)} + {mb(now.cache_bytes, 4)} / 2 + "
                  f"{mb(now.activation_bytes, 4)}", mb(k.bytes, 4)),
             calc("gain from a BF16 cache", "", f"{mb(now.bytes, 4)} / {mb(k.bytes, 4)}", times(gk, 4)),
             f"Raises the ceiling more: {'BF16 weights' if gw > gk else 'BF16 cache'}, which halves the larger part."),
            (self.number("the step's bytes", now.bytes, mb(now.bytes)),
             self.number("gain from BF16 weights", gw, times(gw)),
             self.number("gain from a BF16 cache", gk, times(gk)),
             self.choice("raises the ceiling more", "BF16 weights" if gw > gk else "BF16 cache")))


@register
class NoCrossing(Template):
    chapter, label = "13_measure", "measure-ex5"

    def draw(self, rng):
        return {"card": pick(rng, cards()), "context": pick(rng, (32, 64, 128, 256, 512, 1024))}

    def _values(self, p):
        a, L = card(p["card"]), p["context"]
        F = decode_flops_per_token(SMALL, L)
        own = {pr: sequence_bytes_per_step(kv_bytes_per_token(SMALL, pr), L, activation_bytes_per_token(SMALL, "decode", pr))
               for pr in (WIDE, NARROW)}
        limit = cache_limited_tokens_per_s(a.bandwidth_bytes_per_s, kv_bytes_per_token(SMALL, NARROW), L,
                                           activation_bytes_per_token(SMALL, "decode", NARROW))
        R = balance_point_flop_per_byte(a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s)
        return F, own, limit, R, _point(a, 1, L, NARROW, NARROW, NARROW).math_ceiling

    def holds(self, p):
        F, own, limit, R, math_ceiling = self._values(p)
        return {"the ridge is not within the tolerance of F/(KL + A)": abs(R / (F / own[NARROW]) - 1) > 0.04}

    def key(self, p):
        a, L = card(p["card"]), p["context"]
        F, own, limit, R, math_ceiling = self._values(p)
        never = R >= F / own[NARROW]
        return Key(
            ("At a context of L tokens the decoder's two ceilings are B · BW / (W + B (K L + A)) and P / F, where F is "
             "the work of one token at that context. Write R = P / BW for the balance point.",
             "1. Show that the two ceilings meet at B* = R W / (F - R (K L + A)), and that this is B ≈ R W/F when K L "
             "and A are small.",
             "2. Show that B* always lies above R W/F, and that there is no crossing at all, so that memory binds at "
             "every batch, once R ≥ F/(K L + A).",
             f"3. Take {_about()}. At a context of {L:,} tokens, where a token costs {sig(F / 1e6, 4)} million "
             f"operations in either precision, compute F/(K L + A) in float32 and in BF16. Is the small decoder in "
             f"BF16 memory-bound at every batch on {an(a.name)} ({tflops(a.dense_bf16_flops_per_s)}, "
             f"{gbps(a.bandwidth_bytes_per_s)})? Give the value its memory ceiling climbs towards, BW/(K L + A), and "
             f"its math ceiling."),
            ("1. The ceilings meet where B · BW / (W + B (K L + A)) = P / F, that is B · BW · F = P (W + B (K L + A)); "
             "divide by BW and gather the B terms: B (F - R (K L + A)) = R W, so B* = R W / (F - R (K L + A)). With "
             "K L and A small the denominator is about F: B* ≈ R W/F.",
             "2. The denominator falls short of F by R (K L + A) > 0, so B* > R W/F. Once R (K L + A) ≥ F, that is "
             "R ≥ F/(K L + A), no positive batch solves it: memory binds at every batch.",
             calc("K L + A in float32", "", f"{_kb(kv_bytes_per_token(SMALL, WIDE))} × {L:,} + "
                  f"{mb(activation_bytes_per_token(SMALL, 'decode', WIDE), 4)}", mb(own[WIDE], 4), "3."),
             calc("K L + A in BF16", "K L / 2 + A / 2", f"{_kb(kv_bytes_per_token(SMALL, WIDE))} × {L:,} / 2 + "
                  f"{mb(activation_bytes_per_token(SMALL, 'decode', WIDE), 4)} / 2", mb(own[NARROW], 4)),
             calc("F/(K L + A) in float32", "", f"{sig(F / 1e6, 4)} million FLOPs / {mb(own[WIDE], 4)}",
                  flop_per_byte(F / own[WIDE], 4)),
             calc("F/(K L + A) in BF16", "", f"{sig(F / 1e6, 4)} million FLOPs / {mb(own[NARROW], 4)}",
                  flop_per_byte(F / own[NARROW], 4)),
             calc("R", "P / BW", f"{tflops(a.dense_bf16_flops_per_s)} / {gbps(a.bandwidth_bytes_per_s)}",
                  flop_per_byte(R, 4)),
             f"Memory-bound at every batch in BF16? {yes_no(never).capitalize()}: R is "
             f"{'at or above' if never else 'below'} F/(K L + A) in BF16.",
             calc("the limit", "BW/(K L + A)", f"{gbps(a.bandwidth_bytes_per_s)} / {mb(own[NARROW], 4)}", rate(limit, 4)),
             calc("the math ceiling", "P / F", f"{tflops(a.dense_bf16_flops_per_s)} / {sig(F / 1e6, 4)} million FLOPs",
                  rate(math_ceiling, 4))),
            (self.number("F/(K L + A) in float32", F / own[WIDE], flop_per_byte(F / own[WIDE])),
             self.number("F/(K L + A) in BF16", F / own[NARROW], flop_per_byte(F / own[NARROW])),
             self.choice("memory-bound at every batch in BF16", yes_no(never)),
             self.number("the limit BW/(K L + A)", limit, rate(limit)),
             self.number("the math ceiling", math_ceiling, rate(math_ceiling))))


#: the bandwidth the knee questions put beside a balance point R (P = R x BW): the knee depends on R alone
ANY_BW = 100e9


def _knee(R: float, context: float, *, per_sequence: bool = True, work_at: float | None = None) -> float:
    """The small decoder's knee in float32 on a machine of balance point R, at ``context``: with or
    without the bytes each sequence adds, and with the work of a token at ``work_at`` (default:
    the same context)."""
    F = decode_flops_per_token(SMALL, context if work_at is None else work_at)
    K, A = kv_bytes_per_token(SMALL, WIDE), activation_bytes_per_token(SMALL, "decode", WIDE)
    return batch_where_math_binds(R * ANY_BW, ANY_BW, weight_bytes_read_per_step(SMALL, WIDE), F,
                                  K if per_sequence else 0.0, context, A if per_sequence else 0.0)


@register
class ExactKnee(Template):
    chapter, label = "13_measure", "measure-ex7"

    def draw(self, rng):
        return {"balance": pick(rng, (2, 3, 4, 5, 6, 8, 10)), "short": pick(rng, (64, 128, 256)),
                "long": pick(rng, (512, 1024, 2048))}

    def _own(self, L):
        return sequence_bytes_per_step(kv_bytes_per_token(SMALL, WIDE), L, activation_bytes_per_token(SMALL, "decode", WIDE))

    def holds(self, p):
        R, L = p["balance"], p["long"]
        limit = decode_flops_per_token(SMALL, L) / self._own(L)
        cache_intensity = attention_flops_per_token(SMALL, 1) / kv_bytes_per_token(SMALL, WIDE)
        return {"a knee at both contexts, clearly": R < 0.9 * limit,
                "the context moves the knee (R is not the cache's own intensity)": abs(R / cache_intensity - 1) > 0.1}

    def key(self, p):
        R, S, L = p["balance"], p["short"], p["long"]
        W = weight_bytes_read_per_step(SMALL, WIDE)
        F0, FS, FL = (decode_flops_per_token(SMALL, x) for x in (0, S, L))
        short, long_ = _knee(R, S), _knee(R, L)
        bytes_only, work_only = _knee(R, L, work_at=0), _knee(R, L, per_sequence=False)
        rule = _knee(R, 0, per_sequence=False)
        limit = FL / self._own(L)
        bytes_move = abs(bytes_only - rule) > abs(work_only - rule)
        mover = "the bytes each sequence adds" if bytes_move else "attention's extra work"
        way = "up" if (bytes_only if bytes_move else work_only) > rule else "down"
        return Key(
            (f"On a machine whose balance point R is {R} FLOP per byte, take the exact crossing of the chapter's two "
             f"ceilings, B* = R W / (F - R (K L + A)). For the small decoder in float32, W is {mb(W, 4)}, and F is "
             f"{millions(F0)} operations per token at zero context. At {S:,} tokens of context, K L + A is "
             f"{mb(self._own(S), 4)} and F is {millions(FS)}. At {L:,} tokens of context, K L + A is "
             f"{mb(self._own(L), 4)} and F is {millions(FL)}.",
             "1. Compute B* at both contexts, and the short rule R W / F with F at zero context.",
             "2. At the long context, the short rule leaves out two things: the bytes each sequence adds, and "
             "attention's extra work. Compute the knee with each alone: with the bytes but F at zero context, and with "
             "F at the long context but no bytes per sequence. Which one moves the knee more, and which way?",
             "3. Above what balance point would the small decoder have no knee at the long context?"),
            (f"1. B* = {sig(short, 4)} at {S:,} tokens and {sig(long_, 4)} at {L:,}; the short rule gives {sig(rule, 4)}.",
             f"2. Bytes alone: {sig(bytes_only, 4)} (the memory ceiling climbs more slowly, so it meets the math "
             f"ceiling later); work alone: {sig(work_only, 4)} (a larger F lowers the math ceiling): {mover} moves it "
             f"more, {way}.",
             f"3. No knee once R ≥ F/(K L + A) = {flop_per_byte(limit, 4)}."),
            (self.number(f"B* at {S:,} tokens", short, sig(short)),
             self.number(f"B* at {L:,} tokens", long_, sig(long_)),
             self.number("the short rule", rule, sig(rule)),
             self.number("the knee with the bytes alone", bytes_only, sig(bytes_only)),
             self.number("the knee with the work alone", work_only, sig(work_only)),
             self.choice("moves the knee more", mover),
             self.choice("which way", way),
             self.number("the balance point with no knee", limit, flop_per_byte(limit))))
