"""Tests of the decode and prefill arithmetic added for chapters 2 and 3: the weight bytes a
token really reads, prefill's bytes and intensity, the prompt length at which prefill turns
compute-bound, and the prompt length at which attention's quadratic term takes a given share.

Notation as in the book: N active parameters, W weight bytes, K KV-cache bytes per token,
S prompt tokens, P peak math (FLOP/s), BW bandwidth (bytes/s), R = P / BW the balance point,
a = layers x heads x (d_qk + d_v) attention's FLOP coefficient.
"""
from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from inferlimits.arithmetic import activations as act
from inferlimits.arithmetic import generation as gen
from inferlimits.arithmetic import roofline
from inferlimits.data import units
from inferlimits.data.hardware import accelerator, accelerators
from inferlimits.arithmetic.activations import activation_bytes_per_token
from inferlimits.data.models import (active_param_count, embedding_params, kv_bytes_per_token, model, models,
                                     multiplied_params_per_token, param_count, weight_bytes)


MODEL_NAMES = list(models())
DENSE = [n for n in MODEL_NAMES if not model(n).config.is_moe]
MOE = [n for n in MODEL_NAMES if model(n).config.is_moe]
#: dense models whose output head is a matrix of its own (Llama-3.2-1B's reuses the embedding table)
UNTIED = [n for n in DENSE if not model(n).config.tie_word_embeddings]
PRECISIONS = list(units.formats())

peaks = st.floats(1e13, 1e16)
bandwidths = st.floats(1e11, 1e14)
prompts = st.floats(1.0, 1e6)
shares = st.floats(0.01, 0.99)


def _coefficient(c) -> float:
    return c.num_hidden_layers * c.num_attention_heads * (c.head_dim_qk + c.head_dim_v)


# ==== weight bytes a step reads ==================================================================

def test_a_tied_model_reads_its_table_once_as_the_head():
    """A tied model's embedding table is its output head: a step multiplies it once, so it reads
    every weight it stores."""
    tied = [n for n in DENSE if model(n).config.tie_word_embeddings]
    assert tied
    for name in tied:
        c = model(name).config
        assert gen.weight_bytes_read_per_step(c) == pytest.approx(weight_bytes(c), rel=1e-12)


@pytest.mark.parametrize("name", UNTIED)
@pytest.mark.parametrize("precision", PRECISIONS)
def test_dense_untied_model_reads_all_weights_but_the_embedding_table(name, precision):
    # a token copies its own row of the embedding table (counted with the activations); every other
    # weight is read once per step, whatever the batch
    c = model(name).config
    read = gen.weight_bytes_read_per_step(c, precision)
    b = units.bytes_per_element(precision)
    stored_table = embedding_params(c) * (b if units.storage_format(precision).whole_model else max(b, 2.0))
    assert read == pytest.approx(weight_bytes(c, precision) - stored_table, rel=1e-12)
    assert read == gen.weight_bytes_read_per_step(c, precision, tokens=4096)
    assert read < weight_bytes(c, precision)


def test_llama_8b_reads_about_seven_percent_less_than_it_stores():
    c = model("Llama-3.1-8B").config
    ratio = weight_bytes(c) / gen.weight_bytes_read_per_step(c)
    assert ratio == pytest.approx(param_count(c) / (param_count(c) - embedding_params(c)))
    assert 1.06 < ratio < 1.08


def test_tied_embeddings_are_read_in_full_as_the_output_head():
    c = dataclasses.replace(model("Llama-3.1-8B").config, tie_word_embeddings=True)
    assert gen.weight_bytes_read_per_step(c, "BF16") == pytest.approx(weight_bytes(c, "BF16"))
    assert gen.decode_flops_per_token(c) == 2 * active_param_count(c)


@pytest.mark.parametrize("precision", ["FP8", "INT8", "INT4", "NVFP4", "MXFP4"])
def test_quantized_weights_keep_the_output_head_and_the_norms_in_bf16(precision):
    c = model("Llama-3.1-8B").config
    head = embedding_params(c)
    norms = 2 * c.hidden_size * c.num_hidden_layers + c.hidden_size  # Llama has no biases
    b = units.bytes_per_element(precision)
    read = gen.weight_bytes_read_per_step(c, precision)
    assert read == pytest.approx((multiplied_params_per_token(c) - head - norms) * b + 2 * (head + norms))
    # so a format of b bytes buys less than 2 / b over BF16
    assert gen.weight_bytes_read_per_step(c, "BF16") / read < 2 / b


@pytest.mark.parametrize("name", MOE)
def test_a_mixture_of_experts_token_reads_only_its_experts(name):
    c = model(name).config
    read = gen.weight_bytes_read_per_step(c, "BF16")
    assert read == pytest.approx(2 * (active_param_count(c) - embedding_params(c)))
    assert read < weight_bytes(c, "BF16") / 3


@given(E=st.integers(2, 512), k=st.integers(1, 16), T=st.floats(1.0, 1e6))
def test_expected_experts_touched_lie_between_top_k_and_all(E, k, T):
    k = min(k, E)
    touched = gen.expected_experts_touched(E, k, T)
    assert k * (1 - 1e-9) <= touched <= E * (1 + 1e-12)
    assert touched <= min(E, k * T) * (1 + 1e-9)  # no more than the tokens' choices
    assert gen.expected_experts_touched(E, k, 2 * T) >= touched * (1 - 1e-12)  # grows with the tokens


def test_expected_experts_touched_limits():
    assert gen.expected_experts_touched(256, 8, 1) == pytest.approx(8)
    assert gen.expected_experts_touched(256, 8, 2) == pytest.approx(8 + 8 * (1 - 8 / 256))
    assert gen.expected_experts_touched(256, 8, 10_000) == pytest.approx(256)
    assert gen.expected_experts_touched(8, 8, 3) == 8
    with pytest.raises(ValueError, match=r"\bexperts_per_token\b"):
        gen.expected_experts_touched(8, 9, 3)


@pytest.mark.parametrize("name", MOE)
def test_a_batch_reads_the_experts_it_touches(name):
    c = model(name).config
    one = gen.weight_bytes_read_per_step(c, "FP8", 1)
    all_ = gen.weight_bytes_read_per_step(c, "FP8", 1e7)
    stored_without_table = weight_bytes(c, "FP8") - embedding_params(c) * 2
    assert one < gen.weight_bytes_read_per_step(c, "FP8", 8) < gen.weight_bytes_read_per_step(c, "FP8", 64) < all_
    assert all_ == pytest.approx(stored_without_table, rel=1e-6)  # every expert, once


def test_an_moe_model_stays_memory_bound_to_far_larger_batches_than_a_dense_one():
    b200 = accelerator("B200 (HGX)")
    p, bw = b200.dense_bf16_flops_per_s, b200.bandwidth_bytes_per_s
    dense = gen.decode_knee_batch(model("Llama-3.1-70B").config, p, bw)
    moe = gen.decode_knee_batch(model("DeepSeek-V3").config, p, bw)
    assert moe > 10 * dense
    point = gen.decode_point(model("DeepSeek-V3").config, p, bw, moe)
    assert point.memory_ceiling == pytest.approx(point.math_ceiling, rel=1e-6)


@pytest.mark.parametrize("bad", ["bf16", "FP4", "", None, 2])
def test_weight_bytes_read_rejects_unknown_precisions(bad):
    with pytest.raises(ValueError, match=r"\bweight_precision\b"):
        gen.weight_bytes_read_per_step(model("Llama-3.1-8B").config, bad)


# ==== prefill FLOPs split into the linear and the attention term ==================================

UNWINDOWED = [n for n in MODEL_NAMES if not model(n).config.sliding_window]


@given(name=st.sampled_from(UNWINDOWED), S=prompts)
def test_prefill_attention_flops_formula_and_sum(name, S):
    c = model(name).config
    attention = gen.prefill_attention_flops(c, S)
    assert attention == pytest.approx(_coefficient(c) * S * (S + 1), rel=1e-12)
    head = embedding_params(c)
    assert gen.prefill_flops(c, S) == pytest.approx(
        2 * (multiplied_params_per_token(c) - head) * S + 2 * head + attention, rel=1e-12)


@given(name=st.sampled_from(MODEL_NAMES), S=prompts)
def test_a_sliding_window_caps_each_windowed_layer_at_window_pairs_per_token(name, S):
    c = model(name).config
    W, windowed, full = c.sliding_window, c.windowed_layers, c.num_hidden_layers - c.windowed_layers
    per_layer = 2 * c.num_attention_heads * (c.head_dim_qk + c.head_dim_v)
    pairs = S * (S + 1) / 2
    capped = pairs if not W or S <= W else W * (W + 1) / 2 + (S - W) * W
    assert gen.prefill_attention_flops(c, S) == pytest.approx(per_layer * (full * pairs + windowed * capped), rel=1e-12)
    if W and S > W:
        assert gen.prefill_attention_flops(c, S) < _coefficient(c) * S * (S + 1)


@given(name=st.sampled_from(MODEL_NAMES), S1=prompts, S2=prompts)
def test_attention_share_grows_with_the_prompt(name, S1, S2):
    c = model(name).config
    short, long_ = sorted((S1, S2))
    assert 0 < gen.prefill_attention_share(c, short) <= gen.prefill_attention_share(c, long_) < 1


def test_attention_share_of_llama_8b_concrete():
    c = model("Llama-3.1-8B").config
    a, h = _coefficient(c), embedding_params(c)
    layers = 2 * (multiplied_params_per_token(c) - h)
    for S in (1, 2_000, 131_072):
        share = a * S * (S + 1) / (layers * S + 2 * h + a * S * (S + 1))
        assert gen.prefill_attention_share(c, S) == pytest.approx(share)
        assert share < a * (S + 1) / (layers + a * (S + 1))  # the head's 2H, once, lowers it a little


# ==== the prompt length at which attention reaches a share =========================================

@given(name=st.sampled_from(UNWINDOWED), f=shares)
def test_prompt_length_at_a_share_inverts_the_share(name, f):
    c = model(name).config
    try:
        S = gen.prompt_tokens_at_attention_share(c, f)
    except ValueError:
        assert f < gen.prefill_attention_share(c, 1) * (1 + 1e-9)
        return
    assert S >= 1
    assert gen.prefill_attention_share(c, S) == pytest.approx(f, rel=1e-9)


@given(name=st.sampled_from([n for n in DENSE if n in UNWINDOWED]), f1=st.floats(0.05, 0.95), f2=st.floats(0.05, 0.95))
def test_prompt_length_at_a_share_is_monotone(name, f1, f2):
    c = model(name).config
    lo, hi = sorted((f1, f2))
    assert gen.prompt_tokens_at_attention_share(c, lo) <= gen.prompt_tokens_at_attention_share(c, hi)


def test_half_of_llama_8b_prefill_is_attention_near_61k_tokens():
    c = model("Llama-3.1-8B").config
    S = gen.prompt_tokens_at_attention_share(c, 0.5)
    layers = 2 * (multiplied_params_per_token(c) - embedding_params(c))
    assert S == pytest.approx(layers / _coefficient(c) - 1, rel=1e-3)  # the long-prompt form
    assert 53_000 < S < 53_500


@pytest.mark.parametrize("name", [n for n, m in models().items() if m.config.windowed_layers])
@pytest.mark.parametrize("f", [0.05, 0.1, 0.3, 0.9])
def test_with_a_sliding_window_the_length_at_a_share_is_found_or_never_reached(name, f):
    # a windowed layer's attention grows only in proportion to the prompt past its window, so the
    # share levels off: reached at the S found, or never (inf) within any prompt
    c = model(name).config
    S = gen.prompt_tokens_at_attention_share(c, f)
    if math.isinf(S):
        assert gen.prefill_attention_share(c, 1e9) < f
    else:
        assert gen.prefill_attention_share(c, S) >= f > gen.prefill_attention_share(c, S * (1 - 1e-6))


@pytest.mark.parametrize("share", [1.0, 1e-9])
def test_prompt_length_at_share_rejects_unreachable_shares(share):
    with pytest.raises(ValueError, match=r"\bshare\b"):
        gen.prompt_tokens_at_attention_share(model("Llama-3.1-8B").config, share)


# ==== prefill bytes, intensity and the crossover =====================================================

@given(w=st.floats(1e6, 1e13), k=st.floats(1e3, 1e7), act=st.floats(0, 1e8), S=prompts)
def test_prefill_bytes_are_weights_plus_the_cache_written_plus_activations(w, k, act, S):
    assert gen.prefill_bytes_moved(w, k, S, act) == pytest.approx(w + S * (k + act), rel=1e-12)


@pytest.mark.parametrize("name", UNTIED)
@pytest.mark.parametrize("precision", ["BF16", "FP8", "INT4"])
def test_short_prompt_intensity_is_about_two_s_over_b(name, precision):
    c = model(name).config
    b = units.bytes_per_element(precision)
    S = 16
    w = gen.weight_bytes_read_per_step(c, precision)
    i = gen.prefill_intensity_flop_per_byte(c, S, w, kv_bytes_per_token(c), activation_bytes_per_token(c, "prefill"))
    # the BF16 output head makes quantized weights a little heavier than N x b
    assert 0.7 * 2 * S / b < i <= 2 * S / b


@given(name=st.sampled_from(DENSE), p=peaks, bw=bandwidths, precision=st.sampled_from(["BF16", "FP8", "INT4"]))
def test_crossover_is_where_math_time_equals_memory_time(name, p, bw, precision):
    c = model(name).config
    w, k = gen.weight_bytes_read_per_step(c, precision), kv_bytes_per_token(c)
    act = activation_bytes_per_token(c, "prefill")
    S = gen.prefill_crossover_tokens(c, p, bw, precision)
    if not math.isfinite(S):
        # only a sliding window can do this: its attention stops growing with the prompt, so the
        # intensity levels off, here below the ridge
        assert c.windowed_layers
        assert gen.prefill_point(c, p, bw, 1e8, precision).wall == roofline.MEMORY_BOUND
        return
    if not c.windowed_layers:  # the closed form agrees with the numerical crossing
        assert gen.prefill_crossover_prompt_tokens(c, p, bw, w, k, act) == pytest.approx(S, rel=1e-9)
    assert S > 0
    math_time = gen.prefill_flops(c, S) / p
    memory_time = gen.prefill_bytes_moved(w, k, S, act) / bw
    if S == 1.0 and math_time > memory_time:  # a ridge so low that one token already does more math per byte
        return
    assert math_time == pytest.approx(memory_time, rel=1e-7)
    assert gen.prefill_intensity_flop_per_byte(c, S, w, k, act) == pytest.approx(
        roofline.balance_point_flop_per_byte(p, bw), rel=1e-7)


@given(name=st.sampled_from(DENSE), p=peaks, bw=bandwidths, factor=st.floats(1.01, 100.0))
def test_prefill_is_memory_bound_below_the_crossover_and_compute_bound_above(name, p, bw, factor):
    c = model(name).config
    S = gen.prefill_crossover_tokens(c, p, bw)
    if not math.isfinite(S):  # a sliding window levels the intensity off below the ridge
        assert c.windowed_layers and gen.prefill_point(c, p, bw, 1e8).wall == roofline.MEMORY_BOUND
        return
    for s, expected in ((S / factor, roofline.MEMORY_BOUND), (S * factor, roofline.COMPUTE_BOUND)):
        if s < 1:
            continue
        assert gen.prefill_point(c, p, bw, s).wall == expected


@pytest.mark.parametrize("name", list(accelerators()))
@pytest.mark.parametrize("precision", ["BF16", "FP8", "INT4"])
def test_crossover_for_llama_8b_is_above_the_balance_point_times_b_over_two(name, precision):
    # without activations it would be about R x b / 2; the head (read in full, multiplied once) and
    # the activations, whose bytes grow with the prompt, push the crossover later:
    # S* ~ R W / (2 (N - H) - R (K + A))
    a = accelerator(name)
    c = model("Llama-3.1-8B").config
    p, bw = a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s
    ridge = roofline.balance_point_flop_per_byte(p, bw)
    w = gen.weight_bytes_read_per_step(c, precision)
    act = activation_bytes_per_token(c, "prefill")
    k = kv_bytes_per_token(c)
    S = gen.prefill_crossover_tokens(c, p, bw, precision)
    n2 = 2 * (multiplied_params_per_token(c) - embedding_params(c))
    assert S > ridge * w / n2 > ridge * units.bytes_per_element(precision) / 2
    assert S == pytest.approx(ridge * w / (n2 - ridge * (k + act)), rel=0.02)


@given(name=st.sampled_from(DENSE), p=peaks, bw=bandwidths)
def test_crossover_grows_with_the_balance_point(name, p, bw):
    c = model(name).config
    before, after = gen.prefill_crossover_tokens(c, p, bw), gen.prefill_crossover_tokens(c, 2 * p, bw)
    if math.isinf(before):  # a sliding window that never turns compute-bound stays so with a higher ridge
        assert c.windowed_layers and math.isinf(after)
        return
    # a ridge so low that the first token is already compute-bound gives one token, and so may twice
    assert before < after or before == after == 1.0


def test_crossover_stays_positive_when_the_bytes_per_token_outweigh_everything():
    # beta = 2N + a - R (K + A) is negative here: the formula must still give the positive root.
    c = model("Llama-3.1-8B").config
    for act in (0.0, 1e7):
        S = gen.prefill_crossover_prompt_tokens(c, 1e16, 1e11, 1e6, 1e7, act)
        assert S > 0
        assert gen.prefill_flops(c, S) / 1e16 == pytest.approx(gen.prefill_bytes_moved(1e6, 1e7, S, act) / 1e11,
                                                               rel=1e-7)


@pytest.mark.parametrize("name", MOE)
def test_an_moe_prefill_crosses_over_where_its_memory_and_math_times_meet(name):
    b200 = accelerator("B200 (HGX)")
    c = model(name).config
    p, bw = b200.dense_bf16_flops_per_s, b200.bandwidth_bytes_per_s
    S = gen.prefill_crossover_tokens(c, p, bw)
    point = gen.prefill_point(c, p, bw, S)
    assert point.flops / p == pytest.approx(point.bytes / bw, rel=1e-6)
    # later than a dense model that read only one token's weights: every prompt token brings experts
    one = gen.prefill_crossover_prompt_tokens(c, p, bw, gen.weight_bytes_read_per_step(c), kv_bytes_per_token(c),
                                              activation_bytes_per_token(c, "prefill"))
    assert S > 2 * one


@given(name=st.sampled_from(DENSE), S=prompts, p=peaks, bw=bandwidths)
def test_time_to_first_token_is_the_larger_of_math_and_memory_time(name, S, p, bw):
    c = model(name).config
    w, k = weight_bytes(c), kv_bytes_per_token(c)
    act = activation_bytes_per_token(c, "prefill")
    t = gen.time_to_first_token_s(c, S, p, bw, w, k, act)
    assert t == pytest.approx(max(gen.prefill_flops(c, S) / p, gen.prefill_bytes_moved(w, k, S, act) / bw),
                              rel=1e-12)
    assert gen.prefill_point(c, p, bw, S).time_s == pytest.approx(
        gen.time_to_first_token_s(c, S, p, bw, gen.weight_bytes_read_per_step(c), k, act), rel=1e-12)


def test_short_prompts_cost_about_one_weight_read():
    b200 = accelerator("B200 (HGX)")
    c = model("Llama-3.1-8B").config
    w = gen.weight_bytes_read_per_step(c)
    for S in (1, 16, 128):
        t = gen.prefill_point(c, b200.dense_bf16_flops_per_s, b200.bandwidth_bytes_per_s, S).time_s
        assert t == pytest.approx(w / b200.bandwidth_bytes_per_s, rel=0.2)


# One weight product on its own: where it turns compute-bound, and the intensity it levels off at.
_PRODUCTS = [k for k in act.layer_kernels(model("Llama-3.1-8B").config, 0, "prefill") if k.kind == act.PRODUCT]


@pytest.mark.parametrize("kernel", _PRODUCTS, ids=lambda k: k.name)
@pytest.mark.parametrize("R", [150.0, 281.25, 600.0])
@pytest.mark.parametrize("precision", ["BF16", "FP8", "INT4"])
def test_a_product_kernel_crosses_where_its_own_intensity_reaches_the_balance_point(kernel, R, precision):
    rows = gen.product_kernel_crossover_rows(kernel, R, precision)
    weights = kernel.reads * kernel.writes          # a dense product: inputs x outputs
    flops = 2 * weights * rows
    moved = weights * units.bytes_per_element(precision) + rows * kernel.numbers * 2  # BF16 activations
    assert flops / moved == pytest.approx(R)
    assert rows < gen.product_kernel_crossover_rows(kernel, 1.1 * R, precision)  # later on a higher ridge


def test_a_product_kernels_limit_is_its_weights_over_its_activation_numbers():
    # square 4,096 x 4,096 output projection: 2 x 4096^2 FLOP per row over 2 x 8,192 bytes per row
    out = next(k for k in _PRODUCTS if k.name == "output projection")
    assert (out.reads, out.writes) == (4096, 4096)
    assert gen.product_kernel_intensity_limit(out) == 2048
    assert all(gen.product_kernel_intensity_limit(k) > 2048 - 1 for k in _PRODUCTS)


def test_a_product_kernel_below_its_limit_never_crosses_and_other_kernels_are_refused():
    out = next(k for k in _PRODUCTS if k.name == "output projection")
    assert gen.product_kernel_crossover_rows(out, 2048) == math.inf
    norm = next(k for k in act.layer_kernels(model("Llama-3.1-8B").config, 0) if k.kind == act.ELEMENTWISE)
    with pytest.raises(ValueError, match=r"\bkernel\b"):
        gen.product_kernel_crossover_rows(norm, 281.25)
    with pytest.raises(ValueError, match=r"\bbalance_flop_per_byte\b"):
        gen.product_kernel_crossover_rows(out, 0)


# A pass of C new tokens after P cached ones (a chunk of a prompt, or the part of a prompt after a kept prefix).

def test_a_chunk_with_nothing_cached_is_a_one_pass_prefill():
    c = model("Llama-3.1-8B").config
    for S in (16, 512, 8192):
        assert gen.prefill_chunk_point(c, 2.25e15, 8e12, S) == gen.prefill_point(c, 2.25e15, 8e12, S)


@pytest.mark.parametrize("name", ["Llama-3.1-8B", "Mistral-7B-v0.1", "gpt-oss-20b"])
def test_the_chunks_of_a_prompt_do_its_attention_once_and_read_the_earlier_cache(name):
    c = model(name).config
    S, C = 16384, 4096
    chunks = [gen.prefill_chunk_point(c, 2.25e15, 8e12, C, P) for P in range(0, S, C)]
    # the chunks' attention pairs add up to the whole prompt's, whatever the window
    assert sum(p.attention_flops for p in chunks) == pytest.approx(gen.prefill_attention_flops(c, S))
    # each chunk reads the cache of the tokens before it (as a layer keeps them) and writes its own
    k = kv_bytes_per_token(c)
    for P, p in zip(range(0, S, C), chunks):
        assert p.cache_bytes == pytest.approx(k * (gen.cached_tokens(c, P) + C))


def test_the_cached_prefix_pays_for_its_bytes_once_the_new_tokens_are_many():
    """The prefix's cache read, K P, is covered by its own attention math, 2a P C FLOPs, once
    C >= R K / (2a): then the pass is compute-bound and a longer prefix only adds math."""
    c = model("Llama-3.1-8B").config
    P_flops, BW = 2.25e15, 8e12
    a = gen.prefill_attention_flops(c, 1) / 2
    bound = P_flops / BW * kv_bytes_per_token(c) / (2 * a)
    assert gen.prefill_chunk_point(c, P_flops, BW, 512, 32768).wall == roofline.COMPUTE_BOUND
    assert gen.prefill_chunk_point(c, P_flops, BW, int(bound) // 2, 32768).wall == roofline.MEMORY_BOUND
    short, long_ = (gen.prefill_chunk_point(c, P_flops, BW, 512, P) for P in (32768, 65536))
    assert long_.time_s > short.time_s and long_.flops - short.flops == pytest.approx(2 * a * 512 * 32768)
