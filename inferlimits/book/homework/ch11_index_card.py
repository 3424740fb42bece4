"""Chapter 11, the index card: fit first, two ceilings, the wall, and what to try."""
from __future__ import annotations

from functools import lru_cache

from inferlimits.arithmetic.activations import activation_bytes_per_token
from inferlimits.arithmetic.generation import MEMORY_BOUND, attention_flops_per_token, regime
from inferlimits.arithmetic.indexcard import (ACTIVATIONS_BOUND, CACHE_BOUND, WEIGHTS_BOUND, WORTH_IT, read_card)
from inferlimits.arithmetic.parallel import TENSOR_PARALLEL_DEGREES, collective_latency_s, tensor_parallel_fit
from inferlimits.data.models import multiplied_params_per_token, param_count
from inferlimits.book.homework import Key, Template, calc, pick, register, sig
from inferlimits.book.homework.common import (multiplied_note, an, billions, card, cards, cards_with, cfg, datasheet, dense_models, gb, gbps,
                                         kib, mb, mdl, mib, ms, pct, rate, tflops, times, us)

DOMINANT = {WEIGHTS_BOUND: "the weights", CACHE_BOUND: "the caches", ACTIVATIONS_BOUND: "the activations"}
CONTEXTS = (1024, 2048, 4096, 8192)


def _card(p, **changes):
    args = {"weight_precision": "BF16", "kv_precision": "BF16", "batch": p["batch"], "context_tokens": p["context"]}
    args.update(changes)
    return _read(p["card"], p["model"], tuple(sorted(args.items())))


@lru_cache(maxsize=4096)
def _read(card_name: str, model_name: str, args: tuple):
    """``read_card``, remembered: a template reads the same card in its conditions and its key."""
    return read_card(card_name, model_name, **dict(args))


def _model_lines(name, c) -> str:
    return (f"{name} has {c.num_hidden_layers} layers, each with {c.num_attention_heads} query heads and "
            f"{c.num_key_value_heads} key-value heads of width {c.head_dim_qk}; memory holds "
            f"{billions(param_count(c))} weights, of which a token multiplies {billions(multiplied_params_per_token(c))} "
            f"({multiplied_note(c)}); a decode step's kernels move {mb(activation_bytes_per_token(c), 4)} of "
            f"activations per token.")


@register
class FillTheCard(Template):
    chapter, label = "11_index_card", "index-card-ex1"
    tolerance = 0.03

    def draw(self, rng):
        return {"model": pick(rng, dense_models()), "card": pick(rng, cards()), "batch": pick(rng, (2, 4, 8, 16, 32)),
                "context": pick(rng, CONTEXTS)}

    def holds(self, p):
        q = _card(p)
        clear = q.fits and q.math_ceiling > 1.04 * q.memory_ceiling and abs(
            max(q.weight_bytes, q.cache_bytes, q.activation_bytes)
            / sorted((q.weight_bytes, q.cache_bytes, q.activation_bytes))[1] - 1) > 0.04
        return {"it fits": q.fits, "memory-bound": q.fits and q.decode_wall == MEMORY_BOUND,
                "the wall and the largest bytes are clear": clear,
                "the context fits the model": p["context"] <= mdl(p["model"]).context_length}

    def key(self, p):
        name, c, a, B, L = p["model"], cfg(p["model"]), card(p["card"]), p["batch"], p["context"]
        q = _card(p)
        attention = attention_flops_per_token(c, L)
        return Key(
            (f"Fill in the card by hand for {name} in BF16 on {an(a.name)}, with a batch of {B} sequences of {L:,} "
             f"tokens each. Does it fit? How much memory do the weights and caches need? What are the two ceilings, "
             f"which wall binds, and which bytes dominate?",
             "The data you need: " + _model_lines(name, c) + " " + datasheet(a) + f" Weights and caches may use "
             f"{pct(q.memory.usable_bytes / q.capacity_bytes, 2)} of its memory."),
            (f"K = 2 n_layers n_kv d × 2 bytes = 2 × {c.num_hidden_layers} × {c.num_key_value_heads} × "
             f"{c.head_dim_qk} × 2 bytes = {kib(q.kv_bytes_per_token)}.",
             f"Caches: B L K = {B} × {L:,} × {kib(q.kv_bytes_per_token)} = {gb(q.cache_bytes, 4)}.",
             f"Stored weights: {billions(param_count(c))} × 2 bytes = {gb(q.stored_weight_bytes, 4)}.",
             f"Weights and caches: {gb(q.stored_weight_bytes, 4)} + {gb(q.cache_bytes, 4)} = "
             f"{gb(q.memory.needed_bytes, 4)}.",
             f"Usable: {pct(q.memory.usable_bytes / q.capacity_bytes, 2)} × {mib(q.capacity_bytes)} = "
             f"{gb(q.memory.usable_bytes, 4)}: it fits.",
             f"Weights a step reads: {billions(multiplied_params_per_token(c))} × 2 bytes = {gb(q.weight_bytes, 4)}.",
             f"Memory ceiling: B × BW / (W + caches + B A) = {B} × {gbps(a.bandwidth_bytes_per_s)} / "
             f"({gb(q.weight_bytes, 4)} + {gb(q.cache_bytes, 4)} + {B} × {mb(q.activation_bytes / B, 4)}) = "
             f"{rate(q.memory_ceiling, 4)}.",
             f"Attention per token: 2 × {c.num_hidden_layers} × {c.num_attention_heads} × 2 × {c.head_dim_qk} × "
             f"{L:,} = {sig(attention / 1e9, 4)} GFLOP.",
             f"A token: 2N + attention = 2 × {billions(multiplied_params_per_token(c))} + {sig(attention / 1e9, 4)} "
             f"GFLOP = {sig(q.flops_per_token / 1e9, 4)} GFLOP.",
             f"Math ceiling: P / F = {tflops(a.dense_bf16_flops_per_s)} / {sig(q.flops_per_token / 1e9, 4)} GFLOP = "
             f"{rate(q.math_ceiling, 4)}. Memory-bound; {DOMINANT[q.verdict]} dominate."),
            (self.choice("does it fit", "yes"),
             self.number("weights and caches", q.memory.needed_bytes, gb(q.memory.needed_bytes)),
             self.number("memory ceiling", q.memory_ceiling, rate(q.memory_ceiling)),
             self.number("math ceiling", q.math_ceiling, rate(q.math_ceiling)),
             self.choice("the wall", MEMORY_BOUND),
             self.choice("the bytes that dominate", DOMINANT[q.verdict])))


@register
class MeasuredRate(Template):
    chapter, label = "11_index_card", "index-card-ex2"
    tolerance = 0.03

    def draw(self, rng):
        return {"model": pick(rng, dense_models()), "card": pick(rng, cards()), "batch": pick(rng, (4, 8, 16, 32)),
                "context": pick(rng, CONTEXTS), "share": pick(rng, (0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9))}

    def _measured(self, p) -> float:
        return float(sig(p["share"] * _card(p).ceiling, 2).replace(",", ""))

    def holds(self, p):
        q = _card(p)
        doubled, lighter = _card(p, batch=2 * p["batch"]), _card(p, weight_precision="FP8")
        if not (q.fits and doubled.fits and lighter.fits):
            return {"it fits, doubled too": False}
        r = self._measured(p)
        return {"it fits, doubled too": True, "the weights dominate": q.verdict == WEIGHTS_BOUND,
                "the doubled batch stays memory-bound": doubled.decode_wall == MEMORY_BOUND,
                "the measurement is memory-bound": regime(r, q.memory_ceiling, q.math_ceiling) == MEMORY_BOUND,
                "the two levers differ clearly": abs(doubled.ceiling / lighter.ceiling - 1) > 0.04,
                "so do each user's speeds": abs(lighter.ceiling / p["batch"] / (doubled.ceiling / (2 * p["batch"])) - 1) > 0.04,
                "the context fits the model": p["context"] <= mdl(p["model"]).context_length}

    def key(self, p):
        name, a, B, L = p["model"], card(p["card"]), p["batch"], p["context"]
        q = _card(p)
        r = self._measured(p)
        doubled, lighter = _card(p, batch=2 * B), _card(p, weight_precision="FP8")
        g2, g8 = doubled.ceiling / q.ceiling, lighter.ceiling / q.ceiling
        u0, u2, u8 = q.ceiling / B, doubled.ceiling / (2 * B), lighter.ceiling / B
        return Key(
            (f"A service runs {name} in BF16 on {an(a.name)} with {B} sequences of {L:,} tokens and measures "
             f"{sig(r, 2)} tokens per second in all. Is it memory-bound, compute-bound or far below both ceilings (below "
             f"half of the lower one)? The team can either switch to FP8 weights (the embedding table and the output "
             f"head stay in BF16) or double the batch. Which raises the aggregate ceiling more, and which would you "
             f"choose if each user's own speed matters?",
             f"The data you need: a step reads {gb(q.weight_bytes, 4)} of BF16 weights or {gb(lighter.weight_bytes, 4)} "
             f"with FP8 weights, {gb(q.cache_bytes, 4)} of caches and {gb(q.activation_bytes, 4)} of activations; a "
             f"token does {sig(q.flops_per_token / 1e9, 4)} GFLOP. " + datasheet(a, memory=False)),
            self._working(p, q, doubled, lighter, r, (g2, g8, u0, u2, u8)),
            (self.number("memory ceiling", q.memory_ceiling, rate(q.memory_ceiling)),
             self.number("share of the ceiling", r / q.ceiling, pct(r / q.ceiling)),
             self.choice("the regime", MEMORY_BOUND),
             self.number("twice the batch, aggregate", g2, times(g2)),
             self.number("FP8 weights, aggregate", g8, times(g8)),
             self.number("each user, twice the batch", u2, rate(u2)),
             self.number("each user, FP8 weights", u8, rate(u8)),
             self.choice("raises the aggregate more", "twice the batch" if g2 > g8 else "FP8 weights"),
             self.choice("if each user's speed matters", "FP8 weights" if u8 > u2 else "twice the batch")))


    @staticmethod
    def _working(p, q, doubled, lighter, r, gains):
        a, B = card(p["card"]), p["batch"]
        g2, g8, u0, u2, u8 = gains
        BW, P, F = a.bandwidth_bytes_per_s, q.math_flop_per_s, q.flops_per_token
        seq = f"{gb(q.cache_bytes, 4)} + {gb(q.activation_bytes, 4)}"

        def ceiling(name, b: str, W, extra, x):
            return calc(name, "min(B × BW / (W + caches + activations), P / F)",
                        f"min({b} × {gbps(BW)} / ({gb(W, 4)} + {extra}), {tflops(P)} / {sig(F / 1e9, 4)} GFLOP)",
                        rate(x.ceiling, 4))
        return (calc("memory ceiling", "B × BW / (W + caches + activations)", f"{B} × {gbps(BW)} / ({gb(q.weight_bytes, 4)} "
                     f"+ {seq})", rate(q.memory_ceiling, 4)),
                calc("math ceiling", "P / F", f"{tflops(P)} / {sig(F / 1e9, 4)} GFLOP", rate(q.math_ceiling, 4)),
                calc("share of the ceiling", "measured / the lower ceiling", f"{sig(r, 2)} tokens/s / {rate(q.ceiling, 4)}",
                     pct(r / q.ceiling, 4)),
                f"The regime: {MEMORY_BOUND}. The lower ceiling is memory's, and the rate reaches more than half of it.",
                ceiling("twice the batch: ceiling", f"2 × {B}", q.weight_bytes, f"2 × ({seq})", doubled),
                calc("twice the batch, aggregate", "", f"{rate(doubled.ceiling, 4)} / {rate(q.ceiling, 4)}", times(g2, 4)),
                ceiling("FP8 weights: ceiling", str(B), lighter.weight_bytes, seq, lighter),
                calc("FP8 weights, aggregate", "", f"{rate(lighter.ceiling, 4)} / {rate(q.ceiling, 4)}", times(g8, 4)),
                calc("each user now", "ceiling / B", f"{rate(q.ceiling, 4)} / {B}", rate(u0, 4)),
                calc("each user, twice the batch", "ceiling / 2B", f"{rate(doubled.ceiling, 4)} / (2 × {B})", rate(u2, 4)),
                calc("each user, FP8 weights", "ceiling / B", f"{rate(lighter.ceiling, 4)} / {B}", rate(u8, 4)),
                f"Raises the aggregate more: {'twice the batch' if g2 > g8 else 'FP8 weights'}. If each user's speed "
                f"matters: {'FP8 weights' if u8 > u2 else 'twice the batch'}, since doubling the batch shares each "
                f"step among more users.")


def _per_gpu(x, batch: int, context: int, BW: float) -> tuple[float, float]:
    """K_T and A_T: the cache per token and the activations per token one GPU of a tensor-parallel
    group moves (its KV heads, and its share of the activations that split), from its card's read
    times at the bandwidth ``BW``."""
    return x.cache_time_s * BW / (batch * context), x.activation_time_s * BW / batch


def _links(a) -> str:
    """A card's link among 2, 4 and 8 GPUs, as a question gives it: one figure where a switch gives
    every group the same, else one for each group size."""
    among = [a.link.bytes_per_s_among(T) for T in (2, 4, 8)]
    if len(set(among)) == 1:
        return f"its link carries {gbps(among[0])} each way"
    return f"its links carry {gbps(among[0])}, {gbps(among[1])} and {gbps(among[2])} each way among 2, 4 and 8 GPUs"


@register
class MoreGpus(Template):
    chapter, label = "11_index_card", "index-card-ex4"
    tolerance = 0.03

    def draw(self, rng):
        big = [n for n in dense_models() if param_count(cfg(n)) > 25e9]
        return {"model": pick(rng, big), "card": pick(rng, tuple(n for n in cards_with("FP8") if card(n).link.kind != "PCIe")),
                "batch": pick(rng, (4, 8, 16)), "context": pick(rng, (2048, 4096, 8192))}

    def _team(self, p):
        return {T: _card(p, weight_precision="FP8", math_precision="FP8", gpus=T) for T in TENSOR_PARALLEL_DEGREES}

    def holds(self, p):
        c, a, B, L = cfg(p["model"]), card(p["card"]), p["batch"], p["context"]
        one, two = (tensor_parallel_fit(a, c, T, B, L, "FP8", "BF16").fits for T in (1, 2))
        if one or not two:   # the cheap test first: most draws stop here
            return {"does not fit on one GPU": not one, "fits on two": two}
        team = self._team(p)
        return {"does not fit on one GPU": not team[1].fits, "fits on two": team[2].fits,
                "memory-bound on two to eight": all(team[T].fits and team[T].decode_wall == MEMORY_BOUND for T in (2, 4, 8)),
                "the context fits the model": p["context"] <= mdl(p["model"]).context_length}

    def key(self, p):
        name, c, a, B, L = p["model"], cfg(p["model"]), card(p["card"]), p["batch"], p["context"]
        team = self._team(p)
        one, eight = team[1], team[8]
        share = eight.communication_time_s / eight.step_time_s
        per = {T: _per_gpu(team[T], B, L, a.bandwidth_bytes_per_s) for T in (2, 4, 8)}
        return Key(
            (f"A team serves {name} with FP8 weights and FP8 math on {a.name} cards, {B} sequences of {L:,} tokens at a "
             f"time, its cache in BF16. Does it fit on one GPU? Work the card for 2, 4 and 8 GPUs in tensor "
             f"parallelism: what does each user get, how much of the eight-GPU step do the all-reduces take, and what "
             f"happens to the tokens each GPU produces?",
             f"The data you need: {a.name}: {gb(a.capacity_bytes, 4)} reported, {pct(one.memory.usable_bytes / a.capacity_bytes, 2)} "
             f"usable, {gbps(a.bandwidth_bytes_per_s)}; {_links(a)}, at {us(collective_latency_s(a.link.kind, 8))} per "
             f"collective. {name} holds {gb(one.stored_weight_bytes, 4)} in FP8 and a step reads "
             f"{gb(one.weight_bytes, 4)}; its cache takes {kib(one.kv_bytes_per_token)} per token in BF16 "
             f"({c.num_key_value_heads} KV heads, split among the GPUs: "
             f"{kib(per[2][0])}, {kib(per[4][0])} and {kib(per[8][0])} per GPU on 2, 4 and 8); it has a hidden size "
             f"of {c.hidden_size:,}, {c.num_hidden_layers} layers and a vocabulary of {c.vocab_size:,}, its "
             f"activations BF16 ({mb(activation_bytes_per_token(c), 4)} per token on one GPU; {mb(per[2][1], 4)}, "
             f"{mb(per[4][1], 4)} and {mb(per[8][1], 4)} on each GPU of 2, 4 and 8). On 2 to 8 GPUs each GPU's reads "
             f"take longer than its math."),
            self._working(p, team, share),
            (self.choice("does it fit on one GPU", "no"),
             self.number("what one GPU would need", one.memory.needed_bytes, gb(one.memory.needed_bytes)))
            + tuple(self.number(f"each user on {T}", team[T].ceiling / B, rate(team[T].ceiling / B)) for T in (2, 4, 8))
            + (self.number("the all-reduces' share of the eight-GPU step", share, pct(share)),
               self.number("tokens per GPU on two", team[2].ceiling / 2, rate(team[2].ceiling / 2)),
               self.number("tokens per GPU on eight", eight.ceiling / 8, rate(eight.ceiling / 8))))


    @staticmethod
    def _working(p, team, share):
        c, a, B, L = cfg(p["model"]), card(p["card"]), p["batch"], p["context"]
        one, BW, n = team[1], a.bandwidth_bytes_per_s, c.num_hidden_layers
        lines = [calc("what one GPU would need", "W_s + B K L", f"{gb(one.stored_weight_bytes, 4)} + {B} × "
                      f"{kib(one.kv_bytes_per_token)} × {L:,}", gb(one.memory.needed_bytes, 4)),
                 calc("usable on one GPU", "u × C", f"{pct(one.memory.usable_bytes / a.capacity_bytes, 2)} × "
                      f"{gb(a.capacity_bytes, 4)}", gb(one.memory.usable_bytes, 4)),
                 "Does it fit on one GPU? No: it needs more than the usable memory.",
                 "On T GPUs each reads its T-th of the weights, its share of the caches (its KV heads) and of the "
                 "activations; then 2n + 1 all-reduces of the batch's hidden vectors (B × h numbers of 2 bytes, "
                 "2(T - 1)/T of them sent) and one gather of the logits (B × V, (T - 1)/T sent), each costing α plus "
                 "its bytes over the link. Step = read + all-reduces (the reads outlast the math); B tokens a step."]
        for T in (2, 4, 8):
            x = team[T]
            link, alpha = a.link.bytes_per_s_among(T), collective_latency_s(a.link.kind, T)
            read = x.weights_time_s + x.cache_time_s + x.activation_time_s
            K_T, A_T = _per_gpu(x, B, L, BW)
            lines += [calc(f"{T} GPUs: read", "(W/T + B K_T L + B A_T) / BW",
                           f"({gb(one.weight_bytes, 4)} / {T} + {B} × {kib(K_T)} × {L:,} + {B} × {mb(A_T, 4)}) / "
                           f"{gbps(BW)}", ms(read, 4)),
                      calc(f"{T} GPUs: all-reduces", "(2n + 1)(α + 2(T - 1)/T × 2Bh / link) + α + (T - 1)/T × 2BV / link",
                           f"(2 × {n} + 1) × ({us(alpha)} + 2 × ({T} - 1) / {T} × 2 × {B} × {c.hidden_size:,} / "
                           f"{gbps(link)}) + {us(alpha)} + ({T} - 1) / {T} × 2 × {B} × {c.vocab_size:,} / {gbps(link)}",
                           ms(x.communication_time_s, 4)),
                      calc(f"{T} GPUs: step", "read + all-reduces",
                           f"{ms(read, 4)} + {ms(x.communication_time_s, 4)}", ms(x.step_time_s, 4)),
                      calc(f"each user on {T}", "1 / step", f"1 / {ms(x.step_time_s, 4)}", rate(x.ceiling / B, 4)),
                      calc(f"tokens per GPU on {T}", "B / step / T", f"{B} / {ms(x.step_time_s, 4)} / {T}",
                           rate(x.ceiling / T, 4))]
        lines += [calc("the all-reduces' share of the eight-GPU step", "all-reduces / step",
                       f"{ms(team[8].communication_time_s, 4)} / {ms(team[8].step_time_s, 4)}", pct(share, 4)),
                  "Each user gets faster with more GPUs, but each GPU makes fewer tokens: the all-reduces do not "
                  "shrink as the reads do."]
        return tuple(lines)


@register
class DoubleOrQuantize(Template):
    chapter, label = "11_index_card", "index-card-ex5"
    tolerance = 0.03

    def draw(self, rng):
        return {"model": pick(rng, dense_models()), "card": pick(rng, cards()), "batch": pick(rng, (4, 8, 16, 32, 64)),
                "context": pick(rng, CONTEXTS)}

    def _cards(self, p):
        return {w: _card(p, weight_precision=w) for w in ("BF16", "FP8", "INT4")} | {"doubled": _card(p, batch=2 * p["batch"])}

    def holds(self, p):
        cs = self._cards(p)
        if not all(x.fits for x in cs.values()):
            return {"every card fits": False}
        s = cs["BF16"]
        return {"every card fits": True,
                "the levers differ clearly": all(abs(cs["doubled"].ceiling / cs[w].ceiling - 1) > 0.04 for w in ("FP8", "INT4")),
                "every card memory-bound": all(x.fits and x.decode_wall == MEMORY_BOUND for x in cs.values()),
                "the context fits the model": p["context"] <= mdl(p["model"]).context_length}

    def key(self, p):
        name, a, B, L = p["model"], card(p["card"]), p["batch"], p["context"]
        cs = self._cards(p)
        s = cs["BF16"]
        r = (s.cache_bytes + s.activation_bytes) / s.weight_bytes
        g2 = cs["doubled"].ceiling / s.ceiling
        g8, g4 = cs["FP8"].ceiling / s.ceiling, cs["INT4"].ceiling / s.ceiling
        limit = (2 - WORTH_IT) / (2 * WORTH_IT - 2)
        seq = f"{gb(s.cache_bytes, 4)} + {gb(s.activation_bytes, 4)}"
        return Key(
            ("On one GPU, while memory binds, the card's ceiling is R(B) = B · BW / (W + B c), where c = K L + A is what "
             "one sequence adds to a step's bytes. Take a dense model, and assume that the doubled batch fits and stays "
             "memory-bound.",
             f"1. Write the card's price of doubling the batch, R(2B)/R(B), in terms of r = B c / W alone, and find the r "
             f"beyond which it falls short of the card's threshold of {WORTH_IT}×.",
             "2. Quantizing the weights replaces W by W' and leaves c as it is. Show that doubling the batch raises the "
             "aggregate ceiling more than quantizing the weights exactly when 2W' > W, whatever the caches weigh. Say "
             "why this holds for the card's lever, which moves the weights one format lighter and so halves the bytes "
             "of each weight it quantizes, on every checkpoint that keeps its output head in BF16, and whether it still "
             "holds for a jump from BF16 straight to INT4.",
             f"3. Check both results on {name} in BF16 on {an(a.name)} with {B} sequences of {L:,} tokens: its step "
             f"reads {gb(s.weight_bytes, 4)} of weights, {gb(cs['FP8'].weight_bytes, 4)} with FP8 weights and "
             f"{gb(cs['INT4'].weight_bytes, 4)} with INT4 weights, beside {gb(s.cache_bytes, 4)} of caches and "
             f"{gb(s.activation_bytes, 4)} of activations. Give r, the price of doubling, and what FP8 and INT4 weights "
             f"buy."),
            ("1. R(2B)/R(B) = 2 (W + Bc)/(W + 2Bc); divide by W: (2 + 2r)/(1 + 2r). It falls as r grows, and equals "
             "g where 2 + 2r = g (1 + 2r), at r = (2 - g)/(2g - 2).",
             calc("the r at the threshold", "(2 - g)/(2g - 2)", f"(2 - {WORTH_IT}) / (2 × {WORTH_IT} - 2)", sig(limit, 4)),
             "2. Doubling gives 2 (W + Bc)/(W + 2Bc); quantizing (W + Bc)/(W' + Bc). Doubling wins when "
             "2 (W' + Bc) > W + 2Bc, that is 2W' > W: the caches cancel. One format lighter halves the quantized "
             "weights and keeps the head, so 2W' > W always; INT4 quarters them (and a little more, with its "
             "scales), so 2W' can fall below W.",
             calc("r", "(caches + activations) / W", f"({gb(s.cache_bytes, 4)} + {gb(s.activation_bytes, 4)}) / "
                  f"{gb(s.weight_bytes, 4)}", sig(r, 4), "3."),
             calc("the price of doubling", "(2 + 2r)/(1 + 2r)", f"(2 + 2 × {sig(r, 4)}) / (1 + 2 × {sig(r, 4)})",
                  times(g2, 4)),
             calc("FP8 weights buy", "(W + Bc)/(W' + Bc)", f"({gb(s.weight_bytes, 4)} + {seq}) / "
                  f"({gb(cs['FP8'].weight_bytes, 4)} + {seq})", times(g8, 4)),
             calc("INT4 weights buy", "(W + Bc)/(W' + Bc)", f"({gb(s.weight_bytes, 4)} + {seq}) / "
                  f"({gb(cs['INT4'].weight_bytes, 4)} + {seq})", times(g4, 4)),
             calc("2W', FP8", "", f"2 × {gb(cs['FP8'].weight_bytes, 4)}", gb(2 * cs['FP8'].weight_bytes, 4)),
             calc("2W', INT4", "", f"2 × {gb(cs['INT4'].weight_bytes, 4)}", gb(2 * cs['INT4'].weight_bytes, 4)),
             f"Against W = {gb(s.weight_bytes, 4)}: more, doubling or FP8 weights? "
             f"{'doubling' if g2 > g8 else 'FP8 weights'}. More, doubling or INT4 weights? "
             f"{'doubling' if g2 > g4 else 'INT4 weights'}."),
            (self.number("the r at the threshold", limit, sig(limit)),
             self.number("r", r, sig(r)),
             self.number("the price of doubling", g2, times(g2)),
             self.number("FP8 weights buy", g8, times(g8)),
             self.number("INT4 weights buy", g4, times(g4)),
             self.choice("more: doubling or FP8 weights", "doubling" if g2 > g8 else "FP8 weights"),
             self.choice("more: doubling or INT4 weights", "doubling" if g2 > g4 else "INT4 weights")))


@register
class FirstLines(Template):
    chapter, label = "11_index_card", "index-card-ex7"
    tolerance = 0.03

    def draw(self, rng):
        return {"model": pick(rng, dense_models()), "card": pick(rng, cards()), "batch": pick(rng, (2, 3, 4, 5, 6, 8, 12, 16)),
                "context": pick(rng, CONTEXTS)}

    def holds(self, p):
        q = _card(p)
        return {"the context fits the model": p["context"] <= mdl(p["model"]).context_length,
                "it fits, clearly": q.fits and q.memory.needed_bytes < 0.96 * q.memory.usable_bytes}

    def key(self, p):
        name, c, a, B, L = p["model"], cfg(p["model"]), card(p["card"]), p["batch"], p["context"]
        q = _card(p)
        u = q.memory.usable_bytes / q.capacity_bytes
        return Key(
            (f"Fill in the card's first lines for {name} in BF16 on {an(a.name)}, with {B} sequences of {L:,} tokens. "
             f"The card reports {gb(q.capacity_bytes)} of memory, {pct(u, 2)} of it usable, and moves "
             f"{gbps(a.bandwidth_bytes_per_s)}. The model stores {gb(q.stored_weight_bytes)} of weights and a step "
             f"reads {gb(q.weight_bytes)} of them; each token of context adds {kib(q.kv_bytes_per_token)} of cache, "
             f"and each sequence moves {mb(q.activation_bytes / B)} of activations. Does the setup fit, and what is "
             f"its memory ceiling?",),
            (f"Fit: W_s + B L K = {gb(q.stored_weight_bytes, 4)} + {B} × {L:,} × {kib(q.kv_bytes_per_token)} = "
             f"{gb(q.memory.needed_bytes, 4)}.",
             f"Usable: {pct(u, 2)} × {gb(q.capacity_bytes, 4)} = {gb(q.memory.usable_bytes, 4)}: it fits.",
             f"Ceiling: B × BW / (W + B L K + B A) = {B} × {gbps(a.bandwidth_bytes_per_s)} / ({gb(q.weight_bytes, 4)} + "
             f"{B} × {L:,} × {kib(q.kv_bytes_per_token)} + {B} × {mb(q.activation_bytes / B, 4)}) = "
             f"{rate(q.memory_ceiling, 4)}."),
            (self.choice("does it fit", "yes"),
             self.number("weights and caches", q.memory.needed_bytes, gb(q.memory.needed_bytes)),
             self.number("memory ceiling", q.memory_ceiling, rate(q.memory_ceiling))))
