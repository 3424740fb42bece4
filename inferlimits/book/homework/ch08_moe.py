"""Chapter 8, mixtures of experts: a step reads the experts its batch touches."""
from __future__ import annotations

import math

from inferlimits.arithmetic.activations import activation_bytes_per_token
from inferlimits.arithmetic.economics import cost_per_million_tokens_usd, gpu_hour_prices
from inferlimits.arithmetic.generation import (attention_flops_per_token, decode_flops_per_token, decode_knee_batch,
                                               experts_touched_per_layer, weight_bytes_read_per_step)
from inferlimits.arithmetic.kvcache import (batch_where_math_binds, max_sequences, memory_left_for_cache_bytes,
                                            usable_memory_fraction)
from inferlimits.arithmetic.parallel import moe_layers
from inferlimits.arithmetic.precision import decode_on, knee_weights_only_on, ridge_flop_per_byte
from inferlimits.arithmetic.roofline import COMPUTE_BOUND, MEMORY_BOUND
from inferlimits.data.models import kv_bytes_per_token, routed_expert_params, weight_bytes
from inferlimits.data.units import bytes_per_element
from inferlimits.book.homework import Key, Template, calc, pick, register, sig, whole
from inferlimits.book.homework.common import (an, card, cards, cfg, flop_per_byte, gb, gbps, kib, mb, mdl, mib,
                                              millions, moe_models, pct, rate, tflops, times, tokens, usd)


def _expert_bytes(c) -> float:
    return routed_expert_params(c) * bytes_per_element("BF16")


def _every_expert_bytes(c) -> float:
    """W_all: the BF16 weight bytes a step reads once its batch touches every routed expert, one
    token's bytes plus the experts it did not pick, W_1 + n_moe (E - k) w_e."""
    return weight_bytes_read_per_step(c) + moe_layers(c) * (c.routed_experts - c.num_experts_per_tok) * _expert_bytes(c)


@register
class ExpertsTouched(Template):
    chapter, label = "08_moe", "moe-ex1"
    tolerance = 0.03

    def draw(self, rng):
        return {"model": pick(rng, moe_models()), "batch": pick(rng, (2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64))}

    def holds(self, p):
        c, B = cfg(p["model"]), p["batch"]
        D = experts_touched_per_layer(c, B)
        return {"far from every expert": D < 0.9 * c.routed_experts, "more than one token's picks": D > c.num_experts_per_tok}

    def key(self, p):
        name, c, B = p["model"], cfg(p["model"]), p["batch"]
        D = experts_touched_per_layer(c, B)
        one = weight_bytes_read_per_step(c)
        per = weight_bytes_read_per_step(c, "BF16", B) / B
        E, k, n = c.routed_experts, c.num_experts_per_tok, moe_layers(c)
        return Key(
            (f"Under uniform routing, how many of {name}'s {E} routed experts per MoE layer does a batch of {B} touch on "
             f"average, each token picking {k}? How many bytes of weights does its step read per token in BF16, "
             f"against the {gb(one, 4)} that one token alone reads? ({n} of its layers are MoE layers, and each routed "
             f"expert is {mb(_expert_bytes(c), 4)} in BF16.)",),
            (f"D(B) = E (1 - (1 - k/E)^B) = {E} × (1 - (1 - {k}/{E})^{B}) = {sig(D, 4)} experts per layer.",
             f"W(B) = W_1 + n_moe (D - k) w_e = {gb(one, 4)} + {n} × ({sig(D, 4)} - {k}) × {mb(_expert_bytes(c), 4)} = "
             f"{gb(weight_bytes_read_per_step(c, 'BF16', B), 4)}; per token {gb(per, 4)}."),
            (self.number("experts touched per layer", D, sig(D)),
             self.number("weights read per token", per, gb(per))))


@register
class MoeKnee(Template):
    chapter, label = "08_moe", "moe-ex2"
    tolerance = 0.03

    def draw(self, rng):
        return {"model": pick(rng, moe_models()), "card": pick(rng, cards())}

    def _knees(self, p):
        """The twin's and the MoE model's knees, weights alone and with every hand-off; the MoE model's
        with every expert read, W_all, as the derivation has it (``holds`` checks that the package's
        knees, which count the experts touched at the knee's batch, read every expert)."""
        c, a = cfg(p["model"]), card(p["card"])
        P, BW = a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s
        one, every = weight_bytes_read_per_step(c), _every_expert_bytes(c)
        F, K, A = decode_flops_per_token(c), kv_bytes_per_token(c), activation_bytes_per_token(c)
        return (batch_where_math_binds(P, BW, one, F, K, 0.0, 0.0), batch_where_math_binds(P, BW, every, F, K, 0.0, 0.0),
                batch_where_math_binds(P, BW, one, F, K, 0.0, A), batch_where_math_binds(P, BW, every, F, K, 0.0, A))

    def _package_knees(self, p):
        c, a = cfg(p["model"]), card(p["card"])
        return knee_weights_only_on(a, c), decode_knee_batch(c, a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s)

    def holds(self, p):
        c = cfg(p["model"])
        knees = self._knees(p)
        package = self._package_knees(p)
        return {"every knee is finite": all(math.isfinite(k) for k in knees + package),
                "every expert read at both MoE knees":
                    all(math.isfinite(k) and round(experts_touched_per_layer(c, k)) == c.routed_experts for k in package),
                "the package's knees agree with W_all's (within 1%)":
                    all(math.isfinite(k) and abs(k / x - 1) < 0.01 for k, x in zip(package, knees[1::2]))}

    def key(self, p):
        name, c, a = p["model"], cfg(p["model"]), card(p["card"])
        twin_low, moe_low, twin, moe = self._knees(p)
        one = weight_bytes_read_per_step(c)
        every = every_low = _every_expert_bytes(c)
        E, k, n, w_e = c.routed_experts, c.num_experts_per_tok, moe_layers(c), _expert_bytes(c)
        P, BW = a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s
        R, F, A = P / BW, decode_flops_per_token(c), activation_bytes_per_token(c)
        return Key(
            ("Show that once a batch reads every expert, the knee of an MoE model is its dense twin's knee (a dense "
             "model that reads one token's weights, with the same math and activations) times the ratio of the bytes "
             "a step then reads to the bytes one token reads.",
             f"Check it for {name} in BF16 on {an(a.name)} ({tflops(a.dense_bf16_flops_per_s)}, "
             f"{gbps(a.bandwidth_bytes_per_s)}), with no context: give the twin's knee and the MoE knee counting the "
             f"weights alone (activations kept on chip) and counting every hand-off through memory. What ratio do "
             f"the knees give at each end of the range, and what ratio do the bytes? The data you need: one token reads "
             f"{gb(one, 4)} of weights, does {sig(decode_flops_per_token(c) / 1e9, 4)} GFLOP and moves "
             f"{mb(activation_bytes_per_token(c), 4)} of activations; {n} of its layers are MoE layers, each with "
             f"{E} routed experts of {mb(w_e, 4)} in BF16, {k} picked per token."),
            ("The knee is where a step's math time meets its memory time: B F / P = (W + B A) / BW, so "
             "B* = R W / (F - R A), with R = P / BW (A = 0 when the activations stay on chip). The twin reads W = W_1 "
             "at every batch. The MoE model reads more experts as the batch grows; once the batch reads every expert "
             "it reads W = W_all. F, A and R are shared, so the knees' ratio is W_all / W_1 whatever A is.",
             calc("R", "P / BW", f"{tflops(P)} / {gbps(BW)}", flop_per_byte(R, 4)),
             calc("W_all, every expert read", "W_1 + n_moe (E - k) w_e", f"{gb(one, 4)} + {n} × ({E} - {k}) × {mb(w_e, 4)}",
                  gb(every, 4)),
             calc("twin's knee, weights alone", "R W_1 / F", f"{flop_per_byte(R, 4)} × {gb(one, 4)} / {_gflop(F)}",
                  sig(twin_low, 4)),
             calc("MoE knee, weights alone", "R W_all / F", f"{flop_per_byte(R, 4)} × {gb(every_low, 4)} / {_gflop(F)}",
                  sig(moe_low, 4)),
             calc("twin's knee, every hand-off", "R W_1 / (F - R A)",
                  f"{flop_per_byte(R, 4)} × {gb(one, 4)} / ({_gflop(F)} - {flop_per_byte(R, 4)} × {mb(A, 4)})", sig(twin, 4)),
             calc("MoE knee, every hand-off", "R W_all / (F - R A)",
                  f"{flop_per_byte(R, 4)} × {gb(every, 4)} / ({_gflop(F)} - {flop_per_byte(R, 4)} × {mb(A, 4)})", sig(moe, 4)),
             calc("ratio of the knees, weights alone", "", f"{sig(moe_low, 4)} / {sig(twin_low, 4)}",
                  times(moe_low / twin_low, 4)),
             calc("ratio of the knees, every hand-off", "", f"{sig(moe, 4)} / {sig(twin, 4)}", times(moe / twin, 4)),
             calc("ratio of the bytes", "W_all / W_1", f"{gb(every, 4)} / {gb(one, 4)}", times(every / one, 4))),
            (self.number("twin's knee, weights alone", twin_low, sig(twin_low)),
             self.number("MoE knee, weights alone", moe_low, sig(moe_low)),
             self.number("twin's knee, every hand-off", twin, sig(twin)),
             self.number("MoE knee, every hand-off", moe, sig(moe)),
             self.number("ratio of the knees, weights alone", moe_low / twin_low, times(moe_low / twin_low)),
             self.number("ratio of the knees, every hand-off", moe / twin, times(moe / twin)),
             self.number("ratio of the bytes", every / one, times(every / one))))


#: an MoE model and dense models of about its quality class to set it against
PAIRS = {"Qwen3-30B-A3B": ("Qwen3-32B", "Qwen2.5-32B"), "Mixtral-8x7B": ("Llama-2-70B", "Llama-3.1-70B", "Qwen2.5-32B")}


@register
class MoeOrDense(Template):
    chapter, label = "08_moe", "moe-ex3"
    tolerance, counts_exact = 0.03, True

    def draw(self, rng):
        moe = pick(rng, tuple(PAIRS))
        return {"moe": moe, "dense": pick(rng, PAIRS[moe]), "card": pick(rng, tuple(gpu_hour_prices())),
                "context": pick(rng, (2048, 4096, 8192, 16384)), "batch": pick(rng, (8, 16, 24, 32))}

    def _fits(self, p):
        a, L = card(p["card"]), p["context"]
        return {n: max_sequences(a.capacity_bytes, weight_bytes(cfg(n)), kv_bytes_per_token(cfg(n)), L)
                for n in (p["moe"], p["dense"])}

    def holds(self, p):
        room = self._fits(p)
        a, L = card(p["card"]), p["context"]
        steady = all(len({math.floor(memory_left_for_cache_bytes(a.capacity_bytes, weight_bytes(cfg(n))) * f
                                     / (kv_bytes_per_token(cfg(n)) * L)) for f in (0.997, 1, 1.003)}) == 1 for n in room)
        return {"both hold the batch": min(room.values()) >= p["batch"],
                "no count at the edge of a whole number (they are graded exactly)": steady,
                "the MoE model holds more": room[p["moe"]] > room[p["dense"]],
                "the MoE model costs less, each filled (its advantage, as the sheet says)": min(room.values()) >= 1 and
                    self._cost(p, p["moe"], room[p["moe"]]) < self._cost(p, p["dense"], room[p["dense"]]),
                "the context fits both models": all(p["context"] <= mdl(n).context_length for n in room),
                "both memory-bound (as the sheet says), at the batch and filled": all(
                    decode_on(card(p["card"]), cfg(n), b, p["context"]).wall == MEMORY_BOUND
                    for n in room for b in (p["batch"], max(room[n], 1)))}

    def _cost(self, p, name, batch):
        a = card(p["card"])
        return cost_per_million_tokens_usd(gpu_hour_prices()[p["card"]].usd_per_gpu_hour,
                                           decode_on(a, cfg(name), batch, p["context"]).ceiling)

    def key(self, p):
        moe, dense, a, L, B = p["moe"], p["dense"], card(p["card"]), p["context"], p["batch"]
        room = self._fits(p)
        price = gpu_hour_prices()[p["card"]].usd_per_gpu_hour
        cm, cd = self._cost(p, moe, B), self._cost(p, dense, B)
        full = self._cost(p, moe, room[moe])
        full_dense = self._cost(p, dense, room[dense])
        pts = {n: decode_on(a, cfg(n), B, L) for n in (moe, dense)}
        cm_ = cfg(moe)
        return Key(
            (f"Suppose that for your task {moe} and {dense} answer equally well, and your users hold conversations of "
             f"{L:,} tokens. You serve one of them on {an(a.name)} at the assumed {usd(price)} an hour, with BF16 weights "
             f"and cache. How many such conversations fit beside each model's weights? What does a million generated "
             f"tokens cost with {B} of them decoding together, and with as many as fit? Why does the MoE model's "
             f"advantage grow with the context?",
             f"The data you need: the {a.name} reports {mib(a.capacity_bytes)} of memory, of which "
             f"{pct(usable_memory_fraction(), 2)} can hold weights and caches, and moves {gbps(a.bandwidth_bytes_per_s)}. "
             f"{moe} holds {gb(weight_bytes(cm_), 4)} of weights; one token's step reads {gb(weight_bytes_read_per_step(cm_), 4)} "
             f"of them, and each of its {moe_layers(cm_)} MoE layers has {cm_.routed_experts} routed experts of "
             f"{mb(_expert_bytes(cm_), 4)}, {cm_.num_experts_per_tok} per token. {dense} holds and reads "
             f"{gb(weight_bytes(cfg(dense)), 4)} and {gb(pts[dense].weight_bytes, 4)}. Their caches take "
             f"{kib(kv_bytes_per_token(cfg(moe)))} and {kib(kv_bytes_per_token(cfg(dense)))} per token, and a token "
             f"moves {mb(activation_bytes_per_token(cfg(moe)), 4)} and {mb(activation_bytes_per_token(cfg(dense)), 4)} "
             f"of activations. Both are memory-bound here."),
            self._working(p, room, price, {moe: (cm, full), dense: (cd, full_dense)}),
            (self.count(f"conversations that fit, {moe}", room[moe], whole(room[moe])),
             self.count(f"conversations that fit, {dense}", room[dense], whole(room[dense])),
             self.number(f"cost per million at {B}, {moe}", cm, usd(cm)),
             self.number(f"cost per million at {B}, {dense}", cd, usd(cd)),
             self.number(f"cost per million, {moe} filled", full, usd(full)),
             self.number(f"cost per million, {dense} filled", full_dense, usd(full_dense))))


    def _working(self, p, room, price, costs):
        a, L, B = card(p["card"]), p["context"], p["batch"]
        BW, P, u = a.bandwidth_bytes_per_s, a.dense_bf16_flops_per_s, usable_memory_fraction()
        usable = u * a.capacity_bytes
        lines = [calc("usable", "u × C", f"{pct(u, 2)} × {mib(a.capacity_bytes)}", gb(usable, 4)),
                 "Conversations that fit: floor((u C - W_s) / (K L)). A memory-bound step of B makes "
                 "B × BW / (W + B(K L + A)) tokens a second, with W the weights the step reads. A dense step reads "
                 "every weight; an MoE step reads W_1 + n_moe (D - k) w_e, since its B tokens touch "
                 "D = E (1 - (1 - k/E)^B) of the E experts of each MoE layer, on average, under uniform routing. "
                 "A million tokens cost the price per hour × 1,000,000 / (3,600 × that rate)."]
        for n in (p["moe"], p["dense"]):
            c = cfg(n)
            K, A = kv_bytes_per_token(c), activation_bytes_per_token(c)
            lines.append(calc(f"conversations that fit, {n}", "", f"floor(({gb(usable, 4)} - {gb(weight_bytes(c), 4)}) / "
                              f"({kib(K)} × {L:,}))", whole(room[n])))
            for b, cost in ((B, costs[n][0]), (room[n], costs[n][1])):
                pt = decode_on(a, c, b, L)
                if c.is_moe:
                    E, k, D = c.routed_experts, c.num_experts_per_tok, experts_touched_per_layer(c, b)
                    lines += [calc(f"experts touched per layer, {n} at {b}", "D = E (1 - (1 - k/E)^B)",
                                   f"{E} × (1 - (1 - {k} / {E})^{b})", sig(D, 4)),
                              calc(f"weights read, {n} at {b}", "W_1 + n_moe (D - k) w_e",
                                   f"{gb(weight_bytes_read_per_step(c), 4)} + {moe_layers(c)} × ({sig(D, 4)} - {k}) × "
                                   f"{mb(_expert_bytes(c), 4)}", gb(pt.weight_bytes, 4))]
                lines += [calc(f"rate of {n} at {b}", "B × BW / (W + B(K L + A))", f"{b} × {gbps(BW)} / ("
                               f"{gb(pt.weight_bytes, 4)} + {b} × ({kib(K)} × {L:,} + {mb(A, 4)}))", rate(pt.ceiling, 4)),
                          calc(f"cost per million, {n} at {b}", "", f"{usd(price, 4)} × 1,000,000 / (3,600 × "
                               f"{rate(pt.ceiling, 4)})", usd(cost, 4))]
        lines.append("The caches weigh more at long contexts, and the MoE model's cache per token is smaller, so more "
                     "conversations share each read of its weights: its advantage comes from its attention, not from "
                     "its experts.")
        return tuple(lines)


def _gflop(x: float) -> str:
    return f"{sig(x / 1e9, 4)} GFLOP"


def _mla_models() -> tuple[str, ...]:
    return tuple(n for n in moe_models() if cfg(n).uses_mla)


@register
class AbsorbedAttention(Template):
    chapter, label = "08_moe", "moe-ex6"
    tolerance = 0.03

    def draw(self, rng):
        return {"model": pick(rng, _mla_models()), "card": pick(rng, cards()), "cache": pick(rng, ("FP8", "BF16"))}

    def holds(self, p):
        c = cfg(p["model"])
        a = card(p["card"])
        intensity = attention_flops_per_token(c, 1) / kv_bytes_per_token(c, p["cache"])
        return {"absorbed MLA": c.uses_mla and c.kv_lora_rank is not None,
                "clearly on one side of the ridge": abs(intensity / ridge_flop_per_byte(a) - 1) > 0.04}

    def key(self, p):
        name, c, a, prec = p["model"], cfg(p["model"]), card(p["card"]), p["cache"]
        per = attention_flops_per_token(c, 1)
        F = decode_flops_per_token(c)
        L = F / per
        intensity = per / kv_bytes_per_token(c, prec)
        R = ridge_flop_per_byte(a)
        verdict = COMPUTE_BOUND if intensity >= R else MEMORY_BOUND
        width = 2 * c.kv_lora_rank + c.qk_rope_head_dim
        return Key(
            (f"{name} uses MLA, with {c.num_hidden_layers} layers and {c.num_attention_heads} heads. Count its absorbed "
             f"attention as the chapter counts {'it' if name == 'DeepSeek-V3' else 'DeepSeek-V3' + chr(39) + 's'}, per "
             f"head, per layer and per cached token. How many FLOPs "
             f"does one new token spend on each cached token? At what context does that attention cost as much as "
             f"the math of all its weight products per token? What is the attention's intensity with {an(prec)} cache, "
             f"and is the attention kernel then memory-bound or compute-bound on {an(a.name)}, its math in BF16?",
             f"The data you need: {c.num_hidden_layers} layers, {c.num_attention_heads} heads, each scoring and "
             f"weighting the cached latent of {c.kv_lora_rank} numbers plus {c.qk_rope_head_dim} positional ones "
             f"(2 × {c.kv_lora_rank} + {c.qk_rope_head_dim} = {width:,} multiply-adds per head and cached token); the "
             f"weight products cost {sig(F / 1e9, 4)} GFLOP per token; the cache keeps "
             f"{c.kv_lora_rank + c.qk_rope_head_dim} numbers per layer and token. The {a.name} does "
             f"{tflops(a.dense_bf16_flops_per_s)} of dense BF16 math and moves {gbps(a.bandwidth_bytes_per_s)}."),
            (f"Per cached token: 2 × {c.num_hidden_layers} × {c.num_attention_heads} × {width:,} = {millions(per)} FLOPs.",
             f"Equal at {sig(F / 1e9, 4)} GFLOP / {millions(per)} = {tokens(L)} of context.",
             f"Cache per token: {c.num_hidden_layers} × {c.kv_lora_rank + c.qk_rope_head_dim} × "
             f"{bytes_per_element(prec):g} bytes = {kib(kv_bytes_per_token(c, prec))}.",
             f"Intensity: {millions(per)} / {kib(kv_bytes_per_token(c, prec))} = {flop_per_byte(intensity, 4)}, "
             f"against a BF16 ridge of {flop_per_byte(R, 4)}: {verdict}."),
            (self.number("FLOPs per cached token", per, f"{millions(per)} FLOPs"),
             self.number("context where attention equals the weight products", L, tokens(L)),
             self.number("intensity per byte of cache", intensity, flop_per_byte(intensity)),
             self.choice("the attention kernel", verdict)))
