"""Tables generated from the data files, as Markdown, so no figure is ever typed twice."""
from __future__ import annotations

import re

from collections.abc import Sequence

from IPython.display import Markdown

from inferlimits.data.hardware import MATH_PRECISIONS, accelerator, accelerators
from inferlimits.data.models import (active_param_count, embedding_params, kv_bytes_per_token, models,
                                     multiplied_params_per_token, param_count)
from inferlimits.arithmetic.roofline import balance_point_flop_per_byte
from inferlimits.data.units import GB, GIB, KIB, bytes_per_element


def _table(header: Sequence[str], rows: list[Sequence[object]], align: str | None = None) -> Markdown:
    align = align or "l" + "r" * (len(header) - 1)
    marks = {"l": ":--", "r": "--:", "c": ":-:"}
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(marks[a] for a in align) + "|"]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return Markdown("\n".join(lines))


def _cell(value: object) -> str:
    """A table cell's text, its own "|" escaped so that it cannot split the row (a source's quote
    may hold one)."""
    return re.sub(r"(?<!\\)\|", r"\\|", str(value))


def _g(x: float, digits: int = 0) -> str:
    return f"{x:,.{digits}f}"


def balance_points(names: Sequence[str], low: float, high: float) -> Markdown:
    """Dense BF16 math, bandwidth and their ratio for each accelerator, marking which lie in the
    band [low, high] FLOP per byte."""
    rows = []
    for n in names:
        a = accelerator(n)
        ridge = balance_point_flop_per_byte(a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s)
        where = "inside" if low <= ridge <= high else ("above" if ridge > high else "below")
        rows.append([n, a.year, _g(a.dense_bf16_tflops, 1 if a.dense_bf16_tflops % 1 else 0),
                     f"{a.bandwidth_tb_s:.3g}", _g(ridge), where])
    return _table(["accelerator", "year", "dense BF16 TFLOP/s", "bandwidth TB/s",
                   "balance point (FLOP/byte)", f"vs. {low:g}–{high:g}"], rows, "lrrrrc")


def accelerator_figures(figures: str = "compute") -> Markdown:
    """Every accelerator's figures with units spelled out. ``figures="compute"``: dense and sparse
    BF16 math, the measured matmul rate and the bandwidth. ``figures="narrow"``: the dense and
    sparse rates at FP8, INT8, FP6 and FP4, or "none". ``figures="memory"``: the capacity as
    marketed, as the device reports it (MiB), the bytes the book computes with in GiB and GB, the
    reported figure as a share of the marketed one read as GiB, and the usable share of it."""
    from inferlimits.arithmetic.kvcache import usable_memory_fraction

    if figures == "compute":
        rows = []
        for a in accelerators().values():
            measured = _g(a.measured_matmul_flops_per_s / 1e12) if a.measured_matmul_flops_per_s else "–"
            rows.append([a.name, a.vendor, a.year, _g(a.dense_bf16_tflops, 1), _g(a.sparse_bf16_flops_per_s / 1e12, 1),
                         measured, _g(a.bandwidth_bytes_per_s / GB)])
        return _table(["accelerator", "vendor", "year", "dense BF16 TFLOP/s", "sparse (not used)",
                       "measured matmul TFLOP/s", "bandwidth GB/s"], rows, "lllrrrr")
    if figures == "narrow":
        rows = []
        for a in accelerators().values():
            cells = []
            for p in MATH_PRECISIONS[1:]:
                r = a.math_rate(p)
                sparse = f" / {r.sparse_flops_per_s / 1e12:,g}" if r.sparse_flops_per_s else " / –"
                cells.append(f"{r.dense_flops_per_s / 1e12:,g}{sparse}" if r.supported else "none")
            rows.append([a.name, *cells])
        return _table(["accelerator", *[f"{p} dense / sparse (T{'OP' if p == 'INT8' else 'FLOP'}/s)"
                                        for p in MATH_PRECISIONS[1:]]], rows, "lrrrr")
    if figures != "memory":
        raise ValueError(f"figures must be 'compute', 'narrow' or 'memory'; got {figures!r}")
    u = usable_memory_fraction()
    rows = []
    for a in accelerators().values():
        reported = _g(a.reported_capacity_mib) if a.capacity_reported else "none found: read as GB"
        share = (f"{a.capacity_bytes / (a.capacity_marketed_gb * GIB):.1%}" if a.capacity_reported else "–")
        rows.append([a.name, f"{a.capacity_marketed_gb:g} GB", reported, _g(a.capacity_bytes / GIB, 1),
                     _g(a.capacity_bytes / GB, 1), share, _g(u * a.capacity_bytes / GB, 1)])
    return _table(["accelerator", "as marketed", "reported (MiB)", "GiB", "GB",
                   "reported ÷ marketed read as GiB", f"usable at {u:.0%} (GB)"], rows, "lrrrrrr")


def accelerator_sources() -> Markdown:
    """Where every accelerator's figures come from: the datasheet, the reported capacity (or why
    none is used), the measured matmul rate, and the notes."""
    rows = [[a.name, a.source + (f"; measured matmul: {a.measured_source}" if a.measured_source else ""),
             a.capacity_source, a.notes] for a in accelerators().values()]
    return _table(["accelerator", "datasheet source", "capacity as the device reports it", "notes"], rows, "llll")


def math_rate_sources() -> Markdown:
    """Where every narrower rate is printed, or why a part has no such mode."""
    rows = [[a.name, p, a.math_rate(p).source] for a in accelerators().values() for p in MATH_PRECISIONS[1:]]
    return _table(["accelerator", "math", "source, or why the part has none"], rows, "lll")


def model_configs(sources: bool = False) -> Markdown:
    """The config.json fields each model's arithmetic uses, with the context its publisher supports
    beside ``max_position_embeddings`` (the range its rotary position embedding is set up for,
    which can be larger).
    ``sources=True``: where each model's config, supported context and published count come from."""
    if sources:
        rows = [[m.name, m.source, m.context_length_source, m.published_params_source] for m in models().values()]
        return _table(["model", "config", "supported context", "published parameter count"], rows, "llll")
    rows = []
    for m in models().values():
        c = m.config
        attention = (f"MLA, latent {c.kv_lora_rank} + RoPE {c.qk_rope_head_dim}" if c.uses_mla
                     else f"{c.num_attention_heads} / {c.num_key_value_heads} heads of {c.head_dim_qk}")
        dense_layers = sum(not c.layer_is_moe(i) for i in range(c.num_hidden_layers))
        if not c.is_moe:
            experts, ffn = "dense", _g(c.intermediate_size)
        else:
            shared = f" + {c.shared_experts} shared" if c.shared_experts else ""
            experts = (f"{c.routed_experts} routed{shared} of width {_g(c.expert_width)}, "
                       f"{c.num_experts_per_tok} per token")
            ffn = ("– (the expert width)" if c.moe_intermediate_size is None else _g(c.intermediate_size)
                   if dense_layers else f"{_g(c.intermediate_size)} (no dense layer)")
        window = (f"sliding window {c.sliding_window:,}" + (f" in {c.windowed_layers} of {c.num_hidden_layers} layers"
                                                            if c.windowed_layers < c.num_hidden_layers else "")
                  if c.sliding_window else "")
        extras = [x for x in ("QKV bias" if c.qkv_bias else "", "attention biases" if c.attention_bias else "",
                              "query and key norms" if c.qk_norm else "", "attention sinks" if c.attention_sinks else "",
                              "router and expert biases" if c.expert_bias else "",
                              "tied embeddings" if c.tie_word_embeddings else "", window) if x]
        rows.append([m.name, c.num_hidden_layers, _g(c.hidden_size), ffn, _g(c.vocab_size),
                     attention, experts, _g(m.context_length), _g(c.max_position_embeddings),
                     ", ".join(extras) or "–"])
    return _table(["model", "layers", "hidden", "FFN", "vocab", "attention (query / KV heads)", "MLP",
                   "context supported (tokens)", "max_position_embeddings", "other"], rows, "lrrrrllrrl")


def model_derived(kv_precision: str = "BF16") -> Markdown:
    """Parameter counts derived from the configs, beside the published counts; N, the weights one
    token multiplies (all active weights but the input embedding table), and what follows from it:
    F = 2N per token, and the BF16 weight bytes memory holds and a batch-1 decode step reads; and
    the KV bytes per token."""
    from inferlimits.arithmetic.generation import weight_bytes_read_per_step
    from inferlimits.data.models import multiplied_params_per_token, weight_bytes

    rows = []
    for m in models().values():
        c = m.config
        n = multiplied_params_per_token(c)
        published = _g(m.published_params) if m.published_params_exact else f"{m.published_params / 1e9:g} billion"
        active_published = (f"{m.published_active_params / 1e9:g} billion" if m.published_active_params else "–")
        rows.append([m.name, _g(param_count(c)), published, _g(n), active_published, f"{2 * n / 1e9:,.2f}",
                     f"{weight_bytes(c, 'BF16') / GB:,.2f}", f"{weight_bytes_read_per_step(c, 'BF16') / GB:,.2f}",
                     f"{kv_bytes_per_token(c, kv_precision) / KIB:,.1f}"])
    return _table(["model", "parameters (derived)", "published", "N: weights a token multiplies", "published active",
                   "2N: weight-product GFLOP per generated token", "weights held, BF16 (GB)", "weights read per step, BF16, batch 1 (GB)",
                   f"KV per token, {kv_precision} (KiB)"], rows)


def kv_bytes_derivation(kv_precision: str = "BF16") -> Markdown:
    """Each model's KV bytes per token written out factor by factor from its config."""
    b = bytes_per_element(kv_precision)
    rows = []
    for m in models().values():
        c = m.config
        if c.uses_mla:
            terms = (f"{c.num_hidden_layers} layers × ({c.kv_lora_rank} latent + {c.qk_rope_head_dim} RoPE key) "
                     f"× {b:g} bytes")
        else:
            terms = (f"2 (K and V) × {c.num_hidden_layers} layers × {c.num_key_value_heads} KV heads × "
                     f"{c.head_dim_qk} dims × {b:g} bytes")
        k = kv_bytes_per_token(c, kv_precision)
        rows.append([m.name, terms, f"{_g(k)} B = {k / KIB:,.1f} KiB"])
    return _table(["model", f"K per token ({kv_precision})", "result"], rows, "llr")


# ---- batching and the KV cache (chapters 4 and 5) ---------------------------------------------

def gpu_hour_prices(model_name: str) -> Markdown:
    """The assumed price per GPU-hour of each priced accelerator, and what a million tokens of
    ``model_name`` (BF16 weights, no context: weights and activations) cost on it with one user and
    at the batch where the math ceiling starts to bind."""
    from inferlimits.arithmetic.economics import cost_per_million_tokens_usd, gpu_hour_prices as prices
    from inferlimits.arithmetic.generation import decode_knee_batch, decode_point
    from inferlimits.data.models import model

    c = model(model_name).config
    rows = []
    for name, price in prices().items():
        a = accelerator(name)
        p, bw = a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s
        knee = decode_knee_batch(c, p, bw)
        one, full = decode_point(c, p, bw, 1).ceiling, decode_point(c, p, bw, knee).ceiling
        rows.append([name, f"{price.usd_per_gpu_hour:.2f}", _g(one), f"{cost_per_million_tokens_usd(price.usd_per_gpu_hour, one):.2f}",
                     _g(knee), _g(full), f"{cost_per_million_tokens_usd(price.usd_per_gpu_hour, full):.4f}"])
    return _table(["accelerator", "USD per GPU-hour (assumed)", "one user: tokens/s", "USD per million tokens",
                   "batch where math binds", "tokens/s there", "USD per million tokens"], rows, "lrrrrrr")


def sequences_that_fit(pairs: Sequence[tuple[str, str]], contexts: Sequence[int], kv_precision: str = "BF16",
                       usable_fraction: float | None = None, part: str = "all") -> Markdown:
    """For each (model, accelerator) pair: capacity in GB and GiB, the usable part, the weights, the
    budget left for the caches (GB and GiB kept apart), and how many whole sequences of each context
    length fit in it (a sliding window caps what each sequence keeps; contexts longer than the
    model supports are marked). ``part`` picks the columns: "all" of them, only the "memory"
    (each GiB figure in brackets beside its GB one), or only the "sequences" that fit."""
    from inferlimits.arithmetic.kvcache import max_sequences, memory_left_for_cache_bytes, usable_memory_fraction
    from inferlimits.data.models import cached_tokens, model, weight_bytes

    if part not in ("all", "memory", "sequences"):
        raise ValueError(f"part must be 'all', 'memory' or 'sequences'; got {part!r}")
    share = usable_memory_fraction() if usable_fraction is None else usable_fraction
    rows = []
    for model_name, accelerator_name in pairs:
        m, a = model(model_name), accelerator(accelerator_name)
        c = m.config
        w, k = weight_bytes(c), kv_bytes_per_token(c, kv_precision)
        left = memory_left_for_cache_bytes(a.capacity_bytes, w, share)
        fits = [("longer than it supports" if L > m.context_length
                 else _g(max_sequences(a.capacity_bytes, w, k, cached_tokens(c, L), share)) if left
                 else "weights do not fit") for L in contexts]
        if part == "memory":
            rows.append([model_name, accelerator_name, f"{a.capacity_marketed_gb:g} GB",
                         f"{_g(a.capacity_bytes / GB, 1)} ({_g(a.capacity_bytes / GIB, 1)})", _g(w / GB, 1),
                         f"{_g(left / GB, 1)} ({_g(left / GIB, 1)})"])
        elif part == "sequences":
            rows.append([model_name, accelerator_name, *fits])
        else:
            rows.append([model_name, accelerator_name, f"{a.capacity_marketed_gb:g} GB",
                         _g(a.capacity_bytes / GB, 1), _g(a.capacity_bytes / GIB, 1), _g(w / GB, 1),
                         _g(left / GB, 1), _g(left / GIB, 1), *fits])
    if part == "memory":
        return _table(["model", "accelerator", "capacity as marketed", "reported, GB (GiB)", "weights, GB",
                       f"left for caches ({share:.0%} usable), GB (GiB)"], rows, "llrrrr")
    if part == "sequences":
        return _table(["model", "accelerator", *[f"conversations of {L:,} tokens" for L in contexts]], rows,
                      "ll" + "r" * len(contexts))
    return _table(["model", "accelerator", "capacity as marketed", "reported GB", "reported GiB", "weights GB",
                   f"left for caches ({share:.0%} usable) GB", "left for caches GiB",
                   *[f"sequences at {L:,} tokens" for L in contexts]], rows, "llrrrrrr" + "r" * len(contexts))


def ceiling_by_context(model_name: str, accelerator_name: str, contexts: Sequence[int], batches: Sequence[int],
                       kv_precision: str = "BF16") -> Markdown:
    """The decode ceiling at several context lengths, in tokens/s: the cache of one sequence, the batch where the
    caches weigh as much as the weights a step reads, the large-batch limit BW / (K x L + A), the
    ceiling (the lower of memory and math) at each batch, "does not fit" where the weights and
    caches exceed the usable memory, and the batch where math would start to bind."""
    import math

    from inferlimits.arithmetic.generation import decode_knee_batch, decode_point, weight_bytes_read_per_step
    from inferlimits.arithmetic.kvcache import batch_where_cache_equals_weights, cache_limited_tokens_per_s, fit
    from inferlimits.arithmetic.activations import activation_bytes_per_token
    from inferlimits.data.models import cached_tokens, model, weight_bytes

    c, a = model(model_name).config, accelerator(accelerator_name)
    p, bw = a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s
    w, stored, k = weight_bytes_read_per_step(c), weight_bytes(c), kv_bytes_per_token(c, kv_precision)
    act = activation_bytes_per_token(c)
    rows = []
    for L in contexts:
        kept = cached_tokens(c, L)
        even = _g(batch_where_cache_equals_weights(w, k, kept), 1) if kept else "never"
        limit = _g(cache_limited_tokens_per_s(bw, k, kept, act))
        knee = decode_knee_batch(c, p, bw, L, kv_precision=kv_precision)
        cells = [_g(decode_point(c, p, bw, b, L, kv_precision=kv_precision).ceiling)
                 if fit(a.capacity_bytes, stored, k, b, kept).fits else "does not fit" for b in batches]
        rows.append([_g(L), f"{k * kept / GB:,.2f} ({k * kept / GIB:,.2f})", even, limit, *cells,
                     "never" if math.isinf(knee) else _g(knee)])
    return _table(["context L (tokens)", "one cache, GB (GiB)", "B where caches = weights",
                   "limit BW / (KL + A), tokens/s", *[f"ceiling at B = {b:,}, tokens/s" for b in batches],
                   "B where math binds"], rows, "r" * (5 + len(batches)))


# ---- decode and prefill (chapters 2 and 3) ----------------------------------------------------

def decode_ceilings(model_name: str, names: Sequence[str], precisions: Sequence[str] = ("BF16", "FP8", "INT4")) -> Markdown:
    """Batch-1 decode ceilings of ``model_name`` on each accelerator, no context, in tokens/s: the memory ceiling
    BW / (W + A) at each weight precision ("does not fit" where the stored weights exceed the usable
    memory), the math ceiling P / F, and the largest share of peak math decode can use at the
    first precision."""
    from inferlimits.arithmetic.generation import decode_point
    from inferlimits.arithmetic.kvcache import fit
    from inferlimits.data.models import model, weight_bytes

    c = model(model_name).config
    rows = []
    for n in names:
        a = accelerator(n)
        p, bw = a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s
        cells = [_g(decode_point(c, p, bw, weight_precision=q).memory_ceiling)
                 if fit(a.capacity_bytes, weight_bytes(c, q)).fits else "does not fit" for q in precisions]
        first = decode_point(c, p, bw, weight_precision=precisions[0])
        rows.append([n, f"{a.bandwidth_tb_s:.3g}", *cells, _g(first.math_ceiling),
                     f"{first.memory_ceiling / first.math_ceiling:.2%}"])
    return _table(["accelerator", "TB/s", *[f"memory ceiling, {p} weights (tokens/s)" for p in precisions],
                   "math ceiling (tokens/s)", f"share of peak math ({precisions[0]})"], rows)


def moe_batching(model_name: str, batches: Sequence[int], weight_precision: str = "BF16") -> Markdown:
    """What a decode step of a mixture-of-experts model reads as the batch grows (no context): the
    distinct routed experts its tokens touch per MoE layer (uniform routing), the weight bytes the
    step reads, those bytes per token, and the step's intensity. No accelerator and no rate: only
    the model's own arithmetic, which holds however the experts are spread over GPUs."""
    from inferlimits.arithmetic.activations import activation_bytes_per_token
    from inferlimits.arithmetic.generation import (decode_flops_per_token, decode_intensity_flop_per_byte,
                                                   expected_experts_touched, weight_bytes_read_per_step)
    from inferlimits.data.models import model

    c = model(model_name).config
    if not c.is_moe:
        raise ValueError(f"model_name must be a mixture-of-experts model; got {model_name!r}")
    f, act = decode_flops_per_token(c), activation_bytes_per_token(c)
    rows = []
    for b in batches:
        w = weight_bytes_read_per_step(c, weight_precision, b)
        touched = expected_experts_touched(c.routed_experts, c.num_experts_per_tok, b)
        rows.append([_g(b), f"{touched:,.1f} of {c.routed_experts}", _g(w / GB, 1), _g(w / b / GB, 2),
                     _g(decode_intensity_flop_per_byte(w, f, b, activation_bytes_per_token=act), 1)])
    return _table(["batch B", "routed experts touched per layer", f"weights read per step, GB ({weight_precision})",
                   "weights per token, GB", "intensity (FLOP/byte)"], rows)


def prefill_crossovers(model_name: str, names: Sequence[str],
                       precisions: Sequence[str] = ("BF16", "FP8", "INT4"), kv_precision: str = "BF16") -> Markdown:
    """The prompt length at which prefill of ``model_name`` turns compute-bound on each
    accelerator, at each weight precision (math at the dense BF16 rate, activations counted),
    beside the balance point."""
    from inferlimits.arithmetic.generation import prefill_crossover_tokens
    from inferlimits.data.models import model

    c = model(model_name).config
    rows = []
    for n in names:
        a = accelerator(n)
        p, bw = a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s
        rows.append([n, _g(balance_point_flop_per_byte(p, bw)),
                     *[_g(prefill_crossover_tokens(c, p, bw, q, kv_precision)) for q in precisions]])
    return _table(["accelerator", "balance point (FLOP/byte)",
                   *[f"compute-bound from (tokens), {q} weights" for q in precisions]], rows)


def phase_comparison(model_name: str, accelerator_name: str, prompt_tokens: int, weight_precision: str = "BF16",
                     lighter_precision: str = "FP8", kv_precision: str = "BF16") -> Markdown:
    """Prefill of a ``prompt_tokens`` prompt beside one decode step after it (batch 1), each row
    computed: FLOPs, bytes (weights, cache, activations), intensity, which wall binds, the ideal
    time, and that time with twice the math, twice the bandwidth, or lighter weights; the last row
    names the lever that helps."""
    from inferlimits.arithmetic.generation import decode_point, prefill_point
    from inferlimits.data.models import model
    from inferlimits.arithmetic.roofline import bound

    c, a = model(model_name).config, accelerator(accelerator_name)
    p, bw = a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s
    S = prompt_tokens

    def prefill(peak, bandwidth, precision):
        return prefill_point(c, peak, bandwidth, S, precision, kv_precision)

    def decode(peak, bandwidth, precision):
        return decode_point(c, peak, bandwidth, 1, S, precision, kv_precision)

    steps = {"prefill": (prefill, lambda x: x.time_s), "decode": (decode, lambda x: 1 / x.ceiling)}
    now = {name: make(p, bw, weight_precision) for name, (make, _) in steps.items()}
    ms = lambda t: f"{t * 1e3:,.2f} ms"  # noqa: E731
    flops = {"prefill": now["prefill"].flops, "decode": now["decode"].flops_per_token}
    rows = [["what it does", f"reads the {S:,}-token prompt in one pass",
             f"generates one token after it (batch 1, {S:,} tokens of cache)"],
            ["each weight product", f"matrix × matrix ({S:,} rows)", "matrix × vector"],
            ["FLOPs", *[f"{f / 1e12:,.1f} trillion" if f >= 1e12 else f"{f / 1e9:,.1f} billion" for f in flops.values()]],
            ["bytes moved: weights, cache, activations",
             *[f"{x.weight_bytes / GB:,.2f} + {x.cache_bytes / GB:,.2f} + {x.activation_bytes / GB:,.2f} = "
               f"{x.bytes / GB:,.2f} GB" for x in now.values()]],
            ["intensity (FLOP/byte)", *[_g(x.intensity, 2 if x.intensity < 10 else 0) for x in now.values()]],
            [f"vs. the balance point, {_g(balance_point_flop_per_byte(p, bw))}",
             *[bound(x.intensity, p, bw) for x in now.values()]],
            ["ideal time (the metric it sets)", f"{ms(now['prefill'].time_s)} (time to first token)",
             f"{ms(1 / now['decode'].ceiling)} (time per output token)"]]
    levers = {"twice the peak math": (2 * p, bw, weight_precision),
              "twice the bandwidth": (p, 2 * bw, weight_precision),
              f"{lighter_precision} weights instead of {weight_precision} (math unchanged)": (p, bw, lighter_precision)}
    best = {}
    for label, args in levers.items():
        cells = []
        for name, (make, time_of) in steps.items():
            base, t = time_of(now[name]), time_of(make(*args))
            cells.append(f"{ms(t)} ({base / t:.2f}× faster)" if base / t >= 1.005 else f"{ms(t)} (no faster)")
            if base / t > best.get(name, ("", 0.0))[1]:
                best[name] = (label, base / t)
        rows.append([f"with {label}", *cells])
    rows.append(["the lever that helps most", *[best[name][0] for name in steps]])
    return _table(["", f"prefill of {model_name}, {weight_precision} weights, on the {accelerator_name}",
                   "decode"], rows, "lrr")


# ---- the worked example (chapter 12) ------------------------------------------------------------

def worked_example_claims(shares: bool = False, points: bool = True, readings: bool = False) -> Markdown:
    """Every numeric claim of the worked example beside its recomputation and the verdict, generated
    from ``data/worked_example_claims.toml`` and the package (``worked_example.judge``); the reason
    in one short clause (``Verdict.brief``; the full reason is ``Verdict.why``). With ``shares``, a
    column after the recomputed value names the usable share of memory it rests on (the plan's 95%,
    the one share every claim is judged at: ``worked_example.usable_share``), or "–" where none
    enters. With ``points=False`` the first column (the numbered paragraph of the plan a claim comes
    from) is left out. With ``readings``, a claim in words shows the number it is read as, e.g.
    "(read as 100%)"."""
    from inferlimits.checks.worked_example import shown, usable_share, verdicts
    from inferlimits.data.units import MIB

    binary = {"GB": (GIB, "GiB"), "MB": (MIB, "MiB")}
    rows = []
    for v in verdicts():
        cl, r = v.claim, v.recomputed
        what = cl.what + (f", {cl.context_tokens:,} tokens" if cl.context_tokens else "")
        if cl.route_bandwidth_share and v.judged == "assumed":   # judged at the share its times imply
            what += f", at {cl.route_bandwidth_share:.0%} of the bandwidth"
        value = shown(v)
        if v.judged == "named":   # a vendor's figure: the bytes in the binary unit it counts, and the name
            size, unit = binary[cl.unit]
            value = f"{r.right[0] / size:,.4g} {unit} ({r.named_as})"
        share = []
        if shares:
            u = usable_share(v)   # the plan's own share, or None where no share enters
            share = [f"the plan's {u:.0%}" if u is not None else "–"]
        said = f"{what}: “{cl.wording}”" + (f" (read as {cl.stated[0]}{cl.unit})" if readings and cl.read_as else "")
        point = ["opening" if cl.point == 0 else cl.point] if points else []
        rows.append([*point, said, value, *share, f"**{v.kind}**", v.brief])
    return _table([*(["point"] if points else []), "the plan says", "recomputed", *(["usable share"] if shares else []),
                   "verdict", "why"], rows, ("l" if points else "") + "lr" + ("l" if shares else "") + "ll")


def worked_example_memory(what: bool = False) -> Markdown:
    """The worked example's reference table: the memory of the card and what the model stores in it
    and reads from it, in GB and in GiB, beside the plan's own figure for the same quantity, every
    usable share the plan's own (the one the claims are judged at, ``Setting.judged_usable``). Rows:
    the capacity the card reports; the usable memory; the stored BF16 weights; the room it leaves
    for KV caches; the BF16 cache of one sequence at the plan's shortest context; and what one
    sequence's decode step reads with no context and at the longest context whose cache fits
    (``worked_example.longest_context``).
    With ``what``, a column after the first says in a few words what each row is, for a reader who
    meets the table before the sections that derive its rows."""
    from inferlimits.arithmetic.kvcache import kv_cache_bytes
    from inferlimits.checks.worked_example import Setting, claim, claims, example_model_name, longest_context

    s = Setting()
    cap, name = s.a.capacity_bytes, example_model_name()
    shortest = min((c for c in claims().values() if c.recompute == "kv_sequence"), key=lambda c: c.context_tokens)
    longest = longest_context(s)
    lines = [(f"{s.a.name}: capacity the card reports", cap, 1, "gpu_memory", "all of the card's memory"),
             (f"usable, the plan's {s.judged_usable:.0%}", s.judged_usable * cap, 1, "usable",
              "what weights and caches may fill, at the plan's setting"),
             (f"{name}: weights stored, BF16", s.w, 1, "plan_weights", "every parameter, two bytes each"),
             (f"room for KV caches, the plan's {s.judged_usable:.0%}", s.judged_left, 1, "remaining",
              "usable memory less the weights: what caches may fill"),
             (f"KV cache of one {shortest.context_tokens:,}-token sequence, BF16",
              kv_cache_bytes(s.k, 1, shortest.context_tokens), 3, shortest.id,
              "the keys and values one sequence keeps"),
             ("read by one decode step: one sequence, no context", s.point().bytes, 1, "latency_bytes",
              "the weights a token multiplies, and its activations"),
             (f"read by one decode step: one sequence, {longest:,} tokens (the longest that fits at "
              f"{s.judged_usable:.0%})", s.point(context_tokens=longest).bytes, 1, None,
              "the same, plus the longest cache that fits")]
    rows = [[label, *([meaning] if what else []), _g(x / GB, digits), _g(x / GIB, digits),
             f"“{claim(key).wording}”" if key else "–"] for label, x, digits, key, meaning in lines]
    return _table(["", *(["what it is"] if what else []), "GB (10⁹ bytes)", "GiB (2³⁰ bytes)", "the plan"], rows,
                  "l" + ("l" if what else "") + "rrr")


def worked_example_cache_sizes() -> Markdown:
    """The worked example's cache sizes: for each context at which the plan sizes one sequence's KV
    cache, the plain BF16 cache (the config's cache per token times the context), that cache times
    the plan's factor (the top of its range), both in GB to three digits, and the plan's own figure."""
    from inferlimits.checks.worked_example import Setting, claims

    s = Setting()
    rows = [[_g(cl.context_tokens), f"{s.k * cl.context_tokens / GB:.3g}", f"{s.factor * s.k * cl.context_tokens / GB:.3g}",
             f"“{cl.wording}”"] for cl in claims().values() if cl.recompute == "kv_sequence"]
    return _table(["context (tokens)", "plain cache, BF16 (GB)", f"plain × {s.factor:g} (GB)", "the plan"], rows, "rrrr")


def worked_example_numbers_to_keep(part: str) -> Markdown:
    """The numbers to keep from one half of the worked example's section on time: each claim of the
    plan in its own words beside the value the verdict rule judged (``worked_example.shown``) and
    the verdict. ``part`` is "token" (the least time of one token: the bytes it reads, its time and
    the ceiling, one sequence with no context) or "step" (the step sentence: the bytes one
    sequence's step reads and their time at the share of the bandwidth the plan's times imply,
    from no context to the longest context one sequence can keep, and the math of one token over
    the same contexts)."""
    from inferlimits.checks.worked_example import Setting, claim, judge, longest_context, shown

    if part == "token":
        lines = [("latency_bytes", "bytes a token reads, one sequence, no context"),
                 ("latency", "least time per token, one sequence, no context"),
                 ("decode_rate", "most tokens per second, one sequence")]
    elif part == "step":
        longest = longest_context(Setting())
        share = claim("step_time").route_bandwidth_share
        lines = [("streamed", f"bytes one sequence's step reads, no context to {longest:,} tokens"),
                 ("step_time", f"time of that step at {share:.0%} of the bandwidth"),
                 ("compute", "math time per token, the same contexts")]
    else:
        raise ValueError(f"part must be 'token' or 'step'; got {part!r}")
    rows = []
    for key, label in lines:
        v = judge(key)
        rows.append([label, f"“{v.claim.wording}”", shown(v), f"**{v.kind}**"])
    return _table(["number to keep", "the plan says", "recomputed", "verdict"], rows, "llrl")


def worked_example_sequences(kv_cases: Sequence[tuple[str, str, float]],
                             usable_fraction: float | None = None) -> Markdown:
    """How many whole sequences fit in the memory left at each context the plan names, for each
    cache accounting (label, KV precision, factor on the cache), beside the plan's count; the BF16
    cache of one sequence to three digits, as in ``worked_example_cache_sizes``; the usable
    share is the plan's 95%, the one the claims are judged at (``Setting.judged_usable``), unless
    ``usable_fraction`` is given."""
    from inferlimits.arithmetic.kvcache import max_sequences
    from inferlimits.checks.worked_example import Setting, claims

    s = Setting()
    u = s.judged_usable if usable_fraction is None else usable_fraction
    rows = []
    for cl in (c for c in claims().values() if c.recompute == "kv_sequence"):
        L = cl.context_tokens
        counted = next((c for c in claims().values() if c.recompute == "sequences" and c.context_tokens == L), None)
        fits = [_g(max_sequences(s.a.capacity_bytes, s.w, factor * kv_bytes_per_token(s.c, precision), L, u))
                for _, precision, factor in kv_cases]
        rows.append([_g(L), f"{s.k * L / GB:.3g}", *fits, f"“{counted.wording}”" if counted else "–"])
    return _table(["context (tokens)", "cache per sequence, BF16 (GB)", *[label for label, _, _ in kv_cases],
                   "the plan"], rows, "r" * (3 + len(kv_cases)))


def on_chip_caches(model_name: str, weight_precision: str = "BF16",
                   accelerator_names: Sequence[str] | None = None) -> Markdown:
    """Every accelerator whose row gives its last-level on-chip cache (or only those named in
    ``accelerator_names``, in that order), in both units, and how many times the weights a
    decode step of ``model_name`` reads exceed it."""
    from inferlimits.arithmetic.generation import weight_bytes_read_per_step
    from inferlimits.data.models import model
    from inferlimits.data.units import MB, MIB

    w = weight_bytes_read_per_step(model(model_name).config, weight_precision)
    chosen = accelerators() if accelerator_names is None else {n: accelerator(n) for n in accelerator_names}
    rows = [[a.name, a.last_level_cache_name, a.last_level_cache_marketed, _g(a.last_level_cache_bytes / MB, 1),
             _g(a.last_level_cache_bytes / MIB, 1), _g(w / a.last_level_cache_bytes), a.last_level_cache_source]
            for a in chosen.values() if a.last_level_cache_bytes]
    return _table(["accelerator", "cache", "as marketed (real unit)", "MB", "MiB",
                   f"{model_name} {weight_precision} weights read per step ÷ cache", "source"], rows, "lllrrrl")


# ---- the overhead regime and the index card (chapters 6 and 7) --------------------------------

def eager_kernel_counts(model_name: str) -> Markdown:
    """The assumed kernels of one eager decode step of ``model_name`` (``data/overhead.toml``): each
    part of a decoder layer, the layer's total, the layers, the kernels outside them, the step's total."""
    from inferlimits.data.models import model
    from inferlimits.arithmetic.overhead import eager_launches_per_step, launch_assumptions

    a, c = launch_assumptions(), model(model_name).config
    rows = [[g.part.replace("_", " "), g.count, g.what] for g in a.per_layer]
    rows += [["**one layer**", f"**{a.kernels_per_layer}**", "the sum of the parts above"],
             [f"× {c.num_hidden_layers} layers", _g(c.num_hidden_layers * a.kernels_per_layer),
              f"{model_name} has {c.num_hidden_layers} decoder layers (num_hidden_layers in its config)"],
             ["outside the layers", a.outside_layers, a.outside_what],
             ["**one decode step**", f"**{_g(eager_launches_per_step(c))}**", "kernel launches per generated token at batch 1"]]
    return _table(["part", "kernels (assumed)", "what they are"], rows, "lrl")


def index_card(card) -> Markdown:
    """The printed index card: each step of the procedure, its formula, and its value for ``card``
    (an ``indexcard.Card``)."""
    from inferlimits.arithmetic.indexcard import card_rows

    return _table(["step", "formula", f"{card.model_name} on the {card.accelerator_name}"],
                  [list(r) for r in card_rows(card)], "lll")


def card_cases(cases) -> Markdown:
    """Cards side by side: for each (label, card) its setup, both ceilings (or "does not fit"), the
    verdicts on decode and on the prompt (its wall, then its crossover), and the levers that help."""
    from inferlimits.arithmetic.indexcard import prompt_does_not_fit

    rows = []
    for label, card in cases:
        setup = (f"{card.model_name}, {card.accelerator_name}" + (f" × {card.gpus}" if card.gpus > 1 else "")
                 + f", {card.weight_precision} weights, batch {card.batch:,g}, "
                 f"context {card.context_tokens:,g}, prompt {card.prompt_tokens:,g}"
                 + (f", measured {card.measured_tokens_per_s:,g} tokens/s" if card.measured_tokens_per_s else ""))
        prefill = (f"{card.prefill_wall}; crossover at {card.prefill_crossover_tokens:,.0f} tokens" if card.prefill_wall
                   else prompt_does_not_fit(card))
        rates = (f"memory {_g(card.memory_ceiling)}, math {_g(card.math_ceiling)}; rate {_g(card.ceiling)}"
                 if card.fits else "does not fit")
        rows.append([f"**{label}**: {setup}", rates, f"decode: {card.verdict}; prefill: {prefill}",
                     ", ".join(card.helping()) or "–"])
    return _table(["case and setup", "tokens/s: both ceilings; the rate, all-reduces counted", "verdicts",
                   "levers for decode that help"], rows, "llll")


METRIC_UNITS = {"tokens_per_s": "tokens/s", "tokens_per_s_per_user": "tokens/s per user",
                "ms_per_output_token": "ms per token", "ms_to_first_token": "ms to the first token",
                "ms_end_to_end": "ms for the request"}


def _rate(x: float) -> str:
    return f"{x:,.0f}" if x >= 100 else f"{x:,.3g}"


def measured_against_ceilings(comparisons: Sequence) -> Markdown:
    """Each published measurement beside the book's ceiling under its conditions (``measured.compare``),
    numbered; an asterisk marks a row whose conditions are unclear."""
    rows = []
    for i, c in enumerate(comparisons, 1):
        m = c.measurement
        devices = f"{m.gpus} × {m.accelerator}" if m.gpus > 1 else m.accelerator
        if m.power_limit_w:
            devices += f" at {m.power_limit_w:g} W"
        weights = m.weight_precision + (f" (groups of {m.group_size})" if m.group_size else "")
        batch = "not stated" if m.batch is None else f"{m.batch:,}"
        lengths = " / ".join("–" if t is None else f"{t:,}" for t in (m.input_tokens, m.output_tokens))
        rows.append([f"{i}{'' if m.clear else '*'}", m.model, devices, f"{weights} / {m.math_precision}", batch,
                     lengths, f"{m.value:,} {METRIC_UNITS[m.metric]}", f"{_rate(c.measured)} ({c.kind})",
                     f"{_rate(c.ceiling)} ({c.wall.split('-')[0]})", f"{c.share:.0%}", c.regime])
    return _table(["#", "model", "hardware", "weights / math", "batch", "prompt / output", "published",
                   "as a rate, tokens/s (of)", "ceiling, tokens/s (set by)", "share", "the book's rule says"], rows,
                  "rllllrrrrrl")


def bytes_cross_check(comparisons: Sequence) -> Markdown:
    """The bytes per step a source's own bandwidth figure implies, beside the bytes the book counts."""
    from inferlimits.arithmetic.measured import implied_bytes_per_step

    rows = []
    for c in comparisons:
        implied = implied_bytes_per_step(c.measurement)
        if implied is not None:
            m = c.measurement
            rows.append([m.model, m.weight_precision + (f" (groups of {m.group_size})" if m.group_size else ""),
                         f"{m.reported_bandwidth_gb_s:,} GB/s", f"{m.value:,} tokens/s", f"{implied / GB:,.2f}",
                         f"{c.weight_bytes / GB:,.2f}", f"{implied / c.weight_bytes - 1:+.1%}"])
    return _table(["model", "weights", "bandwidth the source reports", "its rate", "bytes per token it implies (GB)",
                   "weights a step reads, the book (GB)", "difference"], rows, "llrrrrr")


def measurement_sources(comparisons: Sequence) -> Markdown:
    """Where each measurement is published, and what was read there."""
    rows = [[f"{i}{'' if c.measurement.clear else '*'}", c.measurement.framework, c.measurement.source,
             c.measurement.quote.replace("|", "/"), c.measurement.setup.replace("|", "/")]
            for i, c in enumerate(comparisons, 1)]
    return _table(["#", "what ran it", "source", "what the source says", "conditions, and what is unclear"], rows,
                  "rllll")


def processors() -> Markdown:
    """The processors that are not datacenter accelerators, with the figures the comparison uses."""
    from inferlimits.data.hardware import processors as all_processors

    rows = [[p.name, p.vendor, p.year, p.kind, f"{p.dense_bf16_tflops:g}", p.peak_precision,
             _g(p.bandwidth_bytes_per_s / GB, 1), _g(p.capacity_marketed_gb), p.capacity_source, p.source]
            for p in all_processors().values()]
    return _table(["processor", "vendor", "year", "what it is", "math TFLOP/s", "which math", "bandwidth GB/s",
                   "memory GB", "memory note", "sources"], rows, "llrlrlrrll")


def share_bands(comparisons: Sequence, edges: Sequence[float]) -> Markdown:
    """How many measurements reach each band of shares of their ceilings (below the first edge,
    between two edges, above the last), by the regime the book's rule names."""
    bounds = [0.0, *edges, float("inf")]
    regimes = sorted({c.regime for c in comparisons})
    rows = []
    for lo, hi in zip(bounds, bounds[1:]):
        inside = [c for c in comparisons if lo <= c.share < hi]
        label = f"below {edges[0]:.0%}" if lo == 0 else (f"{lo:.0%} or more" if hi == float("inf") else f"{lo:.0%} to {hi:.0%}")
        rows.append([label, *(sum(c.regime == r for c in inside) for r in regimes), len(inside)])
    return _table(["share of the ceiling", *regimes, "all"], rows)


# ---- low precision and mixtures of experts (chapters 7 and 8) -----------------------------------

def storage_formats() -> Markdown:
    """Every storage format of ``data/formats.toml``: bits per number and per shared scale, the
    block that shares it, what a weight costs in bits and bytes, and which tensor-core precision
    multiplies the format as it is stored; a format with no rate of its own is widened first, to 16
    bits, or also to 8 where the book's rule lets it feed FP8 math (``product_math``: INT4 in W4A8)."""
    from inferlimits.arithmetic.precision import product_math
    from inferlimits.data.units import formats

    def widened(name: str) -> str:
        return "16 or 8 bits" if product_math(name, "FP8") == "FP8" else "16 bits"

    rows = []
    for f in formats().values():
        block = f"{f.block} share {f.scale_bits:g} bits" if f.block else "–"
        native = (f"no rate: converted to {widened(f.name)} first" if f.math == "none"
                  else "the 16-bit rate" if f.math == "BF16" else f"the {f.math} rate")
        rows.append([f.name, f"{f.element_bits:g}", block, f"{f.bits_per_element:.3g}", f"{f.bytes_per_element:.3g}", native])
    return _table(["format", "bits per number", "block scale", "bits per weight", "bytes per weight",
                   "multiplied, as stored, at"], rows, "lrlrrl")


def math_rates(names: Sequence[str], precisions: Sequence[str] = MATH_PRECISIONS) -> Markdown:
    """Each accelerator's memory bandwidth in TB/s, and its dense rate at each math precision in
    TFLOP/s (TOPS for INT8), with the balance point at that precision in brackets; "–" where the
    part has no such mode."""
    from inferlimits.arithmetic.precision import ridge_flop_per_byte

    rows = []
    for n in names:
        a = accelerator(n)
        rows.append([n, f"{a.bandwidth_bytes_per_s / 1e12:g}",
                     *[f"{a.math_flops_per_s(p) / 1e12:,g} ({_g(ridge_flop_per_byte(a, p))})" if a.supports(p) else "–"
                       for p in precisions]])
    return _table(["accelerator", "bandwidth (TB/s)", *[f"{p} (ridge)" for p in precisions]], rows,
                  "lr" + "r" * len(precisions))


def precision_schemes(model_name: str, accelerator_name: str, schemes: Sequence[tuple[str, str]],
                      prompt_tokens: int) -> Markdown:
    """One row per pair of weight format and math precision for ``model_name`` on
    ``accelerator_name``, no context: the bytes memory holds and a step reads, the single-stream
    ceiling, the effective math rate and the ridge it sets, the decode knee counted three ways (the
    weights alone; the whole step under one max(); the products and attention with the
    elementwise kernels counted apart), the prefill crossover, and the ideal time to first token
    of a ``prompt_tokens`` prompt. "does not fit" where the weights exceed the usable memory."""
    import math

    from inferlimits.arithmetic.kvcache import fit
    from inferlimits.data.models import model, weight_bytes
    from inferlimits.arithmetic.precision import (crossover_on, decode_math_rate, decode_on, knee_in_order_on, knee_on,
                                                  knee_weights_only_on, prefill_on, scheme_problem)

    def batch(knee: float) -> str:
        return _g(knee) if math.isfinite(knee) else "never"

    c, a = model(model_name).config, accelerator(accelerator_name)
    rows = []
    for wp, mp in schemes:
        problem = scheme_problem(a, wp, mp)
        stored = weight_bytes(c, wp)
        if problem or not fit(a.capacity_bytes, stored).fits:
            rows.append([f"{wp} weights, {mp} math", _g(stored / GB, 1), problem or "does not fit", *["–"] * 8])
            continue
        one = decode_on(a, c, 1, 0, wp, "BF16", mp)
        rate = decode_math_rate(a, c, wp, mp)
        rows.append([f"{wp} weights, {mp} math", _g(stored / GB, 1), _g(one.weight_bytes / GB, 2), _g(one.ceiling),
                     _g(rate / 1e12), _g(rate / a.bandwidth_bytes_per_s), batch(knee_weights_only_on(a, c, wp, mp)),
                     batch(knee_on(a, c, 0, wp, "BF16", mp)), batch(knee_in_order_on(a, c, 0, wp, "BF16", mp)),
                     _g(crossover_on(a, c, wp, "BF16", mp)),
                     f"{prefill_on(a, c, prompt_tokens, wp, 'BF16', mp).time_s * 1e3:,.1f}"])
    return _table(["weights and math", "held (GB)", "read per step (GB)", "one user: tokens/s",
                   "math rate (TFLOP/s)", "ridge (FLOP/byte)", "knee, weights alone (B)", "knee, whole step (B)",
                   "knee, kernels in order (B)", "prefill compute-bound from (tokens)",
                   f"first token of {prompt_tokens:,} (ms)"], rows, "lrrrrrrrrrr")


#: the column groups of ``moe_models``, by position among its eleven columns: each a table of six or fewer
MOE_MODEL_PARTS = {
    "weights": (0, 1, 2, 3, 9),    # model, weights, a token multiplies, experts, KV per token
    "bytes": (0, 5, 6, 7, 8, 10),  # model, published format, held, one token reads, held ÷ read, GPUs to hold it
    "experts": (0, 3, 4),          # model, experts, batch touching half of them
}


def moe_models(accelerator_name: str, part: str | None = None, names: Sequence[str] | None = None) -> Markdown:
    """Every mixture-of-experts model: total and active weights (derived; active counted as the
    weights a token multiplies), experts, the bytes its published format holds and one token's
    step reads, their ratio, the KV bytes per token, and how many ``accelerator_name`` hold it.

    ``part`` (optional) keeps only one group of columns (``MOE_MODEL_PARTS``): "weights" (the
    weights and what a token multiplies, the experts, the cache per token), "bytes" (the published
    format's bytes held and read, their ratio, the accelerators that hold it) or "experts" (the
    batch that touches half the experts). Without it, all eleven columns, as before.

    ``names`` (optional) keeps only those models, in the data's order, so that a page's table does
    not grow when the data gains a model; each must be a mixture of experts in the book's data.
    Without it, every one."""
    if part is not None and part not in MOE_MODEL_PARTS:
        raise ValueError(f"part must be one of {sorted(MOE_MODEL_PARTS)} or None; got {part!r}")
    from inferlimits.figures.moe import smallest_group
    from inferlimits.arithmetic.generation import half_experts_batch, weight_bytes_read_per_step
    from inferlimits.data.models import models, weight_bytes

    every = {n: m for n, m in models().items() if m.config.is_moe}
    if names is not None:
        if isinstance(names, str) or not names or any(n not in every for n in names):
            raise ValueError(f"names must list mixtures of experts of the book's data ({', '.join(every)}); "
                             f"got {names!r}")
    rows = []
    for m in every.values():
        c = m.config
        if names is not None and m.name not in names:
            continue
        fmt = m.published_format
        stored, one = weight_bytes(c, fmt), weight_bytes_read_per_step(c, fmt, 1)
        shared = f" + {c.shared_experts}" if c.shared_experts else ""
        g = smallest_group(accelerator_name, m.name, fmt)
        rows.append([m.name, f"{param_count(c) / 1e9:,.1f}", f"{multiplied_params_per_token(c) / 1e9:,.2f}",
                     f"{c.routed_experts}{shared} ({c.num_experts_per_tok} per token)", _g(half_experts_batch(c)),
                     fmt, _g(stored / GB, 1), _g(one / GB, 2), _g(stored / one, 1),
                     _kv_long(c), _g(g) if g else "more than 64"])
    header = ["model", "weights (billion)", "a token multiplies (billion)", "routed (+ shared) experts",
              "batch touching half of them", "published format", "held (GB)", "one token's step reads (GB)",
              "held ÷ read", "KV per token of a long context, BF16 (KiB)",
              f"{accelerator_name}s to hold it (a power of two)"]
    align = "lrrlrlrrrrr"
    if part is None:
        return _table(header, rows, align)
    keep = MOE_MODEL_PARTS[part]
    return _table([header[i] for i in keep], [[r[i] for i in keep] for r in rows], "".join(align[i] for i in keep))


def _kv_long(c) -> str:
    """The cache bytes each further token of a long context adds, in KiB: K over every layer, or
    only over the layers without a sliding window (which stop growing at the window)."""
    full = c.num_hidden_layers - c.windowed_layers
    k = kv_bytes_per_token(c) * full / c.num_hidden_layers
    window = f" (+ {c.windowed_layers} layers of at most {c.sliding_window:,} tokens)" if c.windowed_layers else ""
    return f"{k / KIB:,.1f}{window}"


def _latencies(kind: str) -> str:
    """The book's small all-reduce over a link kind, in µs, by GPU count where it depends on it."""
    from inferlimits.arithmetic.parallel import TENSOR_PARALLEL_DEGREES, collective_latency_s

    by_count = {T: _g(collective_latency_s(kind, T) * 1e6) for T in TENSOR_PARALLEL_DEGREES[1:]}
    if len(set(by_count.values())) == 1:
        return by_count[TENSOR_PARALLEL_DEGREES[1]]
    return ", ".join(f"{v} on {T}" for T, v in by_count.items())


def links(sources: bool = False) -> Markdown:
    """Every accelerator's link to the other GPUs of its server: its kind, the vendor's figure as
    printed, what one GPU sends one way (the figure the book computes with), per peer where each
    link goes to one other GPU, and the book's latency of a small all-reduce over it; with
    ``sources``, where each is read and its conditions."""
    if sources:
        rows = [[a.name, a.link.source, a.link.note or "–"] for a in accelerators().values()]
        return _table(["accelerator", "link figure read at", "conditions"], rows, "lll")
    rows = [[a.name, a.link.kind, a.link.printed, _g(a.link.bytes_per_s / GB, 1 if (a.link.bytes_per_s / GB) % 1 else 0),
             _g(a.link.peer_bytes_per_s / GB, 1 if (a.link.peer_bytes_per_s / GB) % 1 else 0)
             if a.link.peer_bytes_per_s else "–", _latencies(a.link.kind)]
            for a in accelerators().values()]
    return _table(["accelerator", "link", "as the vendor prints it", "one GPU sends, one way (GB/s)",
                   "to one other GPU (GB/s)", "small all-reduce (µs, assumed)"], rows, "lllrrr")


def measured_all_reduces() -> Markdown:
    """The published all-reduces of ``data/collectives.toml`` beside the link each ran over: the
    small-message time against the book's latency, the bus bandwidth against the link."""
    from inferlimits.data import datafiles
    from inferlimits.arithmetic.parallel import collective_latency_s

    rows = []
    for r in datafiles.load("collectives.toml")["allreduce"]:
        link = accelerator(r["system"]).link
        small = f"{r['small_us']:g} at {r['small_bytes']:,} B" if "small_us" in r else "–"
        busbw = f"{r['busbw_gb_s']:g}" if "busbw_gb_s" in r else "–"
        share = f"{r['busbw_gb_s'] * GB / link.bytes_per_s_among(r['gpus']):.0%}" if "busbw_gb_s" in r else "–"
        rows.append([f"{r['gpus']} × {r['system']}", r["algorithm"], small,
                     _g(collective_latency_s(link.kind, r["gpus"]) * 1e6), busbw,
                     _g(link.bytes_per_s_among(r["gpus"]) / GB, 1), share])
    return _table(["GPUs", "how", "small all-reduce (µs)", "book's latency (µs)", "bus bandwidth, large messages (GB/s)",
                   "link one way (GB/s)", "bus ÷ link"], rows, "llrrrrr")


# ---- where the activation traffic comes from (chapter 3) ----------------------------------------

def activation_handoffs(model_name: str, phase: str = "prefill", activation_precision: str = "BF16") -> Markdown:
    """Where A, the activation bytes per token, comes from: every kernel of one layer of
    ``model_name`` in ``phase`` with the numbers it reads and writes per token (for a model without
    MLA also as widths: h hidden size, q all query heads, kv all key (or value) heads, i the MLP's
    inner width, v vocabulary) and its bytes; one layer's sum times the layers alike, plus the
    kernels outside the layers, is ``activation_bytes_per_token``:

        A = (numbers read + numbers written, over every kernel) x bytes per activation.

    A kernel a layer runs k times (an MoE layer's routed experts) has one row, "(× k)". The cache
    write's output goes to the KV cache, counted in K, so its "writes" cell says so beside its 0."""
    from inferlimits.arithmetic.activations import layer_kernels, outer_kernels
    from inferlimits.data.models import model

    c = model(model_name).config
    b = bytes_per_element(activation_precision, "activation_precision")
    outer = outer_kernels(c, phase)  # raises ValueError on an unknown phase
    # what each kernel reads and writes, as (coefficient, width) terms; a width is shown only where
    # its value is the kernel's own count, so a layout these do not describe shows plain numbers
    terms_of = {
        "norm before attention": (((2, "h"),), ((2, "h"),)),
        "QKV projection": (((1, "h"),), ((1, "q"), (2, "kv"))),
        "query and key norms": (((1, "q"), (1, "kv")), ((1, "q"), (1, "kv"))),
        "rotary embedding": (((1, "q"), (1, "kv")), ((1, "q"), (1, "kv"))),
        "cache write": (((2, "kv"),), ()),
        "attention": (((1, "q"), (2, "kv")) if phase == "prefill" else ((1, "q"),), ((1, "q"),)),
        "output projection": (((1, "q"),), ((1, "h"),)),
        "norm before MLP": (((2, "h"),), ((2, "h"),)),
        "MLP gate and up": (((1, "h"),), ((2, "i"),)),
        "MLP SiLU and multiply": (((2, "i"),), ((1, "i"),)),
        "MLP down": (((1, "i"),), ((1, "h"),)),
        "embedding lookup": (((1, "h"),), ((1, "h"),)),
        "final norm": (((1, "h"),), ((1, "h"),)),
        "output head": (((1, "h"),), ((1, "v"),)),
        "sampling": (((1, "v"),), ()),
    }
    widths = None if c.uses_mla else {
        "h": c.hidden_size, "q": c.num_attention_heads * c.head_dim_qk,
        "kv": (c.num_key_value_heads or 0) * c.head_dim_qk, "i": c.intermediate_size, "v": c.vocab_size}

    def amount(n: int, name: str, side: int) -> str:
        terms = terms_of.get(name, ((), ()))[side]
        if name == "cache write" and side == 1 and n == 0:
            return "0 (to the cache: K)"  # what it copies into the cache is counted in K, not A
        if widths is None or not terms or sum(k * widths[w] for k, w in terms) != n:
            return _g(n)
        return " + ".join(f"{k if k > 1 else ''}{w}" for k, w in terms) + f" = {_g(n)}"

    def shown_bytes(x: float) -> str:
        return _g(x) if x == int(x) else _g(x, 1)

    def rows_of(kernels) -> tuple[list[list[str]], int]:
        merged: dict = {}  # each kernel, in order of first appearance -> how often the layer runs it
        for k in kernels:
            merged[k] = merged.get(k, 0) + 1
        rows = [[k.name + (f" (× {n})" if n > 1 else ""), k.kind, amount(k.reads, k.name, 0),
                 amount(k.writes, k.name, 1), shown_bytes(n * k.numbers * b)] for k, n in merged.items()]
        return rows, sum(k.numbers for k in kernels)

    layers: dict[tuple, int] = {}  # each distinct layer -> how many layers are like it
    for layer in range(c.num_hidden_layers):
        kernels = tuple(layer_kernels(c, layer, phase))
        layers[kernels] = layers.get(kernels, 0) + 1
    rows, total = [], 0
    for kernels, count in layers.items():
        kind = ("an MoE" if any(k.name == "router" for k in kernels) else "a dense") if len(layers) > 1 else "one"
        layer_rows, numbers = rows_of(kernels)
        rows += layer_rows
        rows.append([f"**{kind} layer**", "", "", "", f"**{shown_bytes(numbers * b)}**"])
        rows.append([f"**× {count} layers**", "", "", "", f"**{shown_bytes(count * numbers * b)}**"])
        total += count * numbers
    outer_rows, numbers = rows_of(outer)
    rows += outer_rows
    total += numbers
    rows.append([f"**A, per {phase} token**", "", "", "",
                 f"**{shown_bytes(total * b)} B = {total * b / 1e6:,.1f} MB**"])
    return _table(["kernel", "kind", "reads (numbers per token)", "writes (numbers per token)",
                   f"bytes per token: (reads + writes) × {b:g} ({activation_precision})"], rows, "llrrr")
