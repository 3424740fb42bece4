"""Unit and property tests of the book's arithmetic: roofline, decode and prefill ceilings, KV
cache, model-derived figures and units.

Notation as in the book: B batch, W weight bytes, K KV-cache bytes per token per sequence,
L cached tokens per sequence, BW bandwidth (bytes/s), P peak math (FLOP/s), F FLOPs per token.
"""
from __future__ import annotations

import math

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from inferlimits.arithmetic import generation as gen
from inferlimits.arithmetic import kvcache, roofline
from inferlimits.data import units
from inferlimits.data.hardware import accelerator
from inferlimits.data.models import (active_param_count, cached_tokens, embedding_params, kv_bytes_per_token, model,
                                     models, multiplied_params_per_token, param_count, stored_weights,
                                     vocabulary_params, weight_bytes)


# ---- strategies over physically plausible ranges ------------------------------------------------

bandwidths = st.floats(1e9, 1e14)          # 1 GB/s .. 100 TB/s
peaks = st.floats(1e12, 1e17)              # 1 TFLOP/s .. 100 PFLOP/s
weights = st.floats(1e6, 1e13)             # 1 MB .. 10 TB
kv_per_token = st.floats(1e3, 1e7)         # 1 kB .. 10 MB per token
kv_or_zero = st.one_of(st.just(0.0), kv_per_token)
contexts = st.floats(1.0, 1e6)
context_or_zero = st.one_of(st.just(0.0), contexts)
batches = st.floats(1.0, 1e5)
flops_per_token = st.floats(1e6, 1e13)
efficiencies = st.floats(0.01, 1.0)
intensities = st.floats(1e-3, 1e5)

MODEL_NAMES = list(models())
DENSE_MODELS = [n for n in MODEL_NAMES if not model(n).config.is_moe]


def _close(a: float, b: float, rel: float = 1e-9) -> bool:
    return a == pytest.approx(b, rel=rel)


# ==== decode: memory ceiling ======================================================================

@given(bw=bandwidths, w=weights, k=kv_or_zero)
def test_memory_ceiling_batch1_context0_is_bandwidth_over_weights(bw, w, k):
    assert _close(gen.memory_ceiling_tokens_per_s(bw, w, batch=1, kv_bytes_per_token=k, context_tokens=0), bw / w)


@given(bw=bandwidths, w=weights, L=context_or_zero)
def test_memory_ceiling_without_cache_is_bandwidth_over_weights(bw, w, L):
    assert _close(gen.memory_ceiling_tokens_per_s(bw, w, batch=1, kv_bytes_per_token=0, context_tokens=L), bw / w)


def test_memory_ceiling_defaults_are_batch1_no_cache():
    assert gen.memory_ceiling_tokens_per_s(8e12, 16e9) == pytest.approx(500.0)


@given(bw=bandwidths, w=weights, k=kv_or_zero, L=context_or_zero, b1=batches, b2=batches)
def test_memory_ceiling_non_decreasing_in_batch(bw, w, k, L, b1, b2):
    lo, hi = sorted((b1, b2))
    small = gen.memory_ceiling_tokens_per_s(bw, w, lo, k, L)
    large = gen.memory_ceiling_tokens_per_s(bw, w, hi, k, L)
    assert small <= large * (1 + 1e-12)


@given(bw=bandwidths, w=weights, k=kv_or_zero, L=context_or_zero, b=batches)
def test_memory_ceiling_never_above_weights_only_ceiling(bw, w, k, L, b):
    assert gen.memory_ceiling_tokens_per_s(bw, w, b, k, L) <= b * bw / w * (1 + 1e-12)


@given(bw=bandwidths, w=weights, k=kv_per_token, L=contexts)
def test_memory_ceiling_approaches_bandwidth_over_cache_as_batch_grows(bw, w, k, L):
    limit = bw / (k * L)
    # A batch whose caches outweigh the weights 10^5 times: within 1e-5 of the cache-only limit.
    b = max(1.0, 1e5 * w / (k * L))
    rate = gen.memory_ceiling_tokens_per_s(bw, w, b, k, L)
    assert rate == pytest.approx(limit, rel=2e-5)
    assert rate <= limit * (1 + 1e-12)  # approached from below, never passed


def test_memory_ceiling_large_batch_limit_concrete():
    bw, w, k, L = 8e12, 16e9, 131_072, 8192
    rates = [gen.memory_ceiling_tokens_per_s(bw, w, b, k, L) for b in (1, 10, 100, 1e4, 1e7)]
    assert rates == sorted(rates)
    assert rates[-1] == pytest.approx(bw / (k * L), rel=1e-4)


@given(bw=bandwidths, w=weights, k=kv_per_token, b=batches, L1=context_or_zero, L2=context_or_zero)
def test_memory_ceiling_decreasing_in_context(bw, w, k, b, L1, L2):
    short, long_ = sorted((L1, L2))
    at_short = gen.memory_ceiling_tokens_per_s(bw, w, b, k, short)
    at_long = gen.memory_ceiling_tokens_per_s(bw, w, b, k, long_)
    assert at_long <= at_short * (1 + 1e-12)
    if b * k * (long_ - short) > 1e-6 * w:  # the extra cache is not lost in rounding
        assert at_long < at_short


@given(bw=bandwidths, w=weights, k=kv_or_zero, L=context_or_zero, b=batches, e=efficiencies)
def test_memory_ceiling_scales_linearly_with_efficiency(bw, w, k, L, b, e):
    full = gen.memory_ceiling_tokens_per_s(bw, w, b, k, L, efficiency=1.0)
    assert _close(gen.memory_ceiling_tokens_per_s(bw, w, b, k, L, efficiency=e), e * full)


# ==== decode: math ceiling and the step ==========================================================

@given(p=peaks, f=flops_per_token)
def test_math_ceiling_is_peak_over_flops(p, f):
    assert _close(gen.math_ceiling_tokens_per_s(p, f), p / f)


def test_math_ceiling_takes_no_batch():
    import inspect

    assert "batch" not in inspect.signature(gen.math_ceiling_tokens_per_s).parameters


@given(p=peaks, bw=bandwidths, w=weights, f=flops_per_token, b1=batches, b2=batches)
def test_compute_bound_throughput_is_the_same_math_ceiling_at_every_batch(p, bw, w, f, b1, b2):
    # With no cache, B / step time is min(B x BW / W, P / F): once compute-bound, the rate is P / F
    # whatever the batch.
    ceiling = gen.math_ceiling_tokens_per_s(p, f)
    for b in (b1, b2):
        rate = b / gen.decode_step_time_s(p, bw, w, f, batch=b)
        assert rate <= ceiling * (1 + 1e-9)
        if b * bw / w >= ceiling:
            assert _close(rate, ceiling)


@given(p=peaks, bw=bandwidths, w=weights, f=flops_per_token, b=batches, k=kv_or_zero, L=context_or_zero)
def test_decode_step_time_is_max_of_math_and_memory_time(p, bw, w, f, b, k, L):
    t = gen.decode_step_time_s(p, bw, w, f, batch=b, kv_bytes_per_token=k, context_tokens=L)
    assert _close(t, max(b * f / p, (w + b * k * L) / bw))


@given(p=peaks, bw=bandwidths, w=weights, f=flops_per_token, b=batches, k=kv_or_zero, L=context_or_zero)
def test_batch_over_step_time_is_the_lower_ceiling(p, bw, w, f, b, k, L):
    t = gen.decode_step_time_s(p, bw, w, f, batch=b, kv_bytes_per_token=k, context_tokens=L)
    mem = gen.memory_ceiling_tokens_per_s(bw, w, b, k, L)
    mth = gen.math_ceiling_tokens_per_s(p, f)
    assert _close(b / t, min(mem, mth))


@given(w=weights, k=kv_or_zero, L=context_or_zero, b=batches)
def test_decode_bytes_per_step_is_weights_plus_every_cache(w, k, L, b):
    assert _close(gen.decode_bytes_per_step(w, b, k, L), w + b * k * L)


@given(p=peaks, bw=bandwidths, w=weights, f=flops_per_token, b=batches, k=kv_or_zero, L=context_or_zero)
def test_decode_intensity_decides_the_bound(p, bw, w, f, b, k, L):
    i = gen.decode_intensity_flop_per_byte(w, f, b, k, L)
    assert _close(i, b * f / (w + b * k * L))
    ridge = roofline.balance_point_flop_per_byte(p, bw)
    assume(abs(i / ridge - 1) > 1e-6)  # away from the tie, where rounding may pick either side
    mem = gen.memory_ceiling_tokens_per_s(bw, w, b, k, L)
    mth = gen.math_ceiling_tokens_per_s(p, f)
    expected = roofline.MEMORY_BOUND if mem < mth else roofline.COMPUTE_BOUND
    assert roofline.bound(i, p, bw) == expected


# ==== roofline ===================================================================================

@given(i=intensities, p=peaks, bw=bandwidths)
def test_attainable_is_min_of_peak_and_intensity_times_bandwidth(i, p, bw):
    a = roofline.attainable_flop_per_s(i, p, bw)
    assert a == min(p, i * bw)
    assert a <= p


@given(p=peaks, bw=bandwidths)
def test_attainable_is_continuous_at_the_ridge(p, bw):
    ridge = roofline.balance_point_flop_per_byte(p, bw)
    at = roofline.attainable_flop_per_s(ridge, p, bw)
    assert _close(at, p)
    for eps in (1e-6, 1e-9):
        below = roofline.attainable_flop_per_s(ridge * (1 - eps), p, bw)
        above = roofline.attainable_flop_per_s(ridge * (1 + eps), p, bw)
        assert below == pytest.approx(at, rel=2 * eps)
        assert above == pytest.approx(at, rel=2 * eps)


@given(i1=intensities, i2=intensities, p=peaks, bw=bandwidths)
def test_attainable_is_monotone_in_intensity(i1, i2, p, bw):
    lo, hi = sorted((i1, i2))
    assert roofline.attainable_flop_per_s(lo, p, bw) <= roofline.attainable_flop_per_s(hi, p, bw)


@given(p=peaks, bw=bandwidths)
def test_balance_point_is_peak_over_bandwidth(p, bw):
    assert _close(roofline.balance_point_flop_per_byte(p, bw), p / bw)


@given(p=peaks, bw=bandwidths)
def test_bound_switches_exactly_at_the_balance_point(p, bw):
    ridge = roofline.balance_point_flop_per_byte(p, bw)
    assert roofline.bound(ridge, p, bw) == roofline.COMPUTE_BOUND
    assert roofline.bound(math.nextafter(ridge, math.inf), p, bw) == roofline.COMPUTE_BOUND
    assert roofline.bound(math.nextafter(ridge, 0.0), p, bw) == roofline.MEMORY_BOUND


@given(i=intensities, p=peaks, bw=bandwidths)
def test_bound_agrees_with_which_roof_is_attained(i, p, bw):
    b = roofline.bound(i, p, bw)
    if b == roofline.COMPUTE_BOUND:
        assert roofline.attainable_flop_per_s(i, p, bw) == p
    else:
        assert roofline.attainable_flop_per_s(i, p, bw) == pytest.approx(i * bw)
        assert i * bw < p * (1 + 1e-12)


def test_balance_point_of_b200():
    b200 = accelerator("B200 (HGX)")
    ridge = roofline.balance_point_flop_per_byte(b200.dense_bf16_flops_per_s, b200.bandwidth_bytes_per_s)
    assert ridge == pytest.approx(2.25e15 / 8e12)  # about 281 FLOP per byte


@pytest.mark.parametrize("n", [1024, 4096, 8192, 16384])
def test_matrix_vector_product_intensity_is_about_one_at_bf16(n):
    bpe = units.bytes_per_element("BF16")
    i = roofline.arithmetic_intensity_flop_per_byte(roofline.matmul_flops(1, n, n),
                                                    roofline.matmul_bytes(1, n, n, bpe))
    assert i == pytest.approx(1.0, rel=3e-3)
    assert i < 1.0  # the vector reads and writes only add bytes


@given(n=st.integers(1, 100_000))
def test_square_matmul_intensity_is_n_over_3_at_bf16(n):
    i = roofline.arithmetic_intensity_flop_per_byte(roofline.matmul_flops(n, n, n),
                                                    roofline.matmul_bytes(n, n, n, 2.0))
    assert _close(i, n / 3)


@given(m=st.integers(1, 10_000), k=st.integers(1, 10_000), n=st.integers(1, 10_000),
       bpe=st.sampled_from(sorted({f.bytes_per_element for f in units.formats().values()})))
def test_matmul_flops_and_bytes(m, k, n, bpe):
    assert roofline.matmul_flops(m, k, n) == 2 * m * k * n
    assert _close(roofline.matmul_bytes(m, k, n, bpe), (m * k + k * n + m * n) * bpe)


@given(f=st.floats(0.0, 1e18), m=st.floats(0.0, 1e15), p=peaks, bw=bandwidths)
def test_step_time_is_max_of_math_and_memory_time(f, m, p, bw):
    assume(f > 0 or m > 0)
    assert _close(roofline.step_time_s(f, m, p, bw), max(f / p, m / bw))


def test_step_time_of_an_empty_step_is_an_error():
    with pytest.raises(ValueError, match="flops"):
        roofline.step_time_s(0, 0, 1e15, 1e12)


# ==== KV cache ===================================================================================

@given(k=kv_per_token, b=batches, L=context_or_zero, factor=st.floats(1.0, 1e3))
def test_kv_cache_bytes_is_linear_in_batch(k, b, L, factor):
    assert _close(kvcache.kv_cache_bytes(k, b * factor, L), factor * kvcache.kv_cache_bytes(k, b, L))


@given(k=kv_per_token, b=batches, L1=context_or_zero, L2=context_or_zero)
def test_kv_cache_bytes_is_additive_in_context(k, b, L1, L2):
    assert _close(kvcache.kv_cache_bytes(k, b, L1 + L2),
                  kvcache.kv_cache_bytes(k, b, L1) + kvcache.kv_cache_bytes(k, b, L2))
    assert _close(kvcache.kv_cache_bytes(k, b, L1), b * k * L1)


def test_kv_cache_of_llama_8b_at_128k_context():
    k = kv_bytes_per_token(model("Llama-3.1-8B").config)
    assert kvcache.kv_cache_bytes(k, 1, 131_072) == 16 * units.GIB  # 128 Ki tokens x 128 KiB


@given(cap=st.integers(10**9, 10**12), w=st.integers(10**6, 10**12),
       k=st.integers(10**3, 10**6), L=st.integers(1, 10**6))
def test_max_sequences_is_the_floor_that_fits(cap, w, k, L):
    n = kvcache.max_sequences(cap, w, k, L, usable_fraction=1.0)
    assert isinstance(n, int)
    left = max(0, cap - w)  # exact integer arithmetic to check against
    assert n >= 0
    assert n * k * L <= left  # n sequences fit
    assert (n + 1) * k * L > left  # one more does not


@given(cap=st.floats(1e9, 1e12), w=st.floats(1e6, 1e12), k=kv_per_token, L=contexts, u=st.floats(0.5, 1.0))
def test_max_sequences_respects_usable_fraction(cap, w, k, L, u):
    n = kvcache.max_sequences(cap, w, k, L, usable_fraction=u)
    left = kvcache.memory_left_for_cache_bytes(cap, w, u)
    assert n == math.floor(left / (k * L))
    assert n * k * L <= left * (1 + 1e-12)
    assert (n + 1) * k * L > left * (1 - 1e-12)


@given(cap=st.floats(1e9, 1e12), extra=st.floats(1.0, 1e12), u=st.floats(0.5, 1.0))
def test_memory_left_is_zero_when_weights_do_not_fit(cap, extra, u):
    assert kvcache.memory_left_for_cache_bytes(cap, cap * u + extra, u) == 0.0
    assert kvcache.max_sequences(cap, cap * u + extra, 1e5, 1e3, u) == 0


@given(cap=st.floats(1e9, 1e12), w=st.floats(1e6, 1e12), u=st.floats(0.5, 1.0))
def test_memory_left_is_usable_capacity_minus_weights(cap, w, u):
    assert _close(kvcache.memory_left_for_cache_bytes(cap, w, u), max(0.0, cap * u - w))


@given(w=weights, k=kv_per_token, L=contexts)
def test_batch_where_cache_equals_weights(w, k, L):
    b = kvcache.batch_where_cache_equals_weights(w, k, L)
    assert _close(b * k * L, w)
    assert _close(kvcache.kv_cache_bytes(k, b, L), w)


def test_max_sequences_llama_70b_on_b200_is_small():
    c = model("Llama-3.1-70B").config
    b200 = accelerator("B200 (HGX)")
    n = kvcache.max_sequences(b200.capacity_bytes, weight_bytes(c), kv_bytes_per_token(c), 32_768)
    left = kvcache.usable_memory_fraction() * b200.capacity_bytes - weight_bytes(c)
    per = kv_bytes_per_token(c) * 32_768
    assert n == int(left // per)
    assert n * per <= left < (n + 1) * per


# ==== prefill and decode FLOPs ===================================================================

@given(name=st.sampled_from(MODEL_NAMES), S=st.floats(1.0, 1e6))
def test_prefill_flops_grow_faster_than_linearly(name, S):
    c = model(name).config
    once = 2 * embedding_params(c)  # the output head, multiplied for the last position only
    assert gen.prefill_flops(c, 2 * S) - once > 2 * (gen.prefill_flops(c, S) - once)


@given(name=st.sampled_from([n for n in MODEL_NAMES if not model(n).config.sliding_window]), S=st.floats(1.0, 1e6))
def test_prefill_flops_formula(name, S):
    c = model(name).config
    attention = c.num_hidden_layers * c.num_attention_heads * (c.head_dim_qk + c.head_dim_v) * S * (S + 1)
    head = embedding_params(c)  # the output head: only the last prompt position needs logits
    assert _close(gen.prefill_flops(c, S), 2 * (multiplied_params_per_token(c) - head) * S + 2 * head + attention)


@pytest.mark.parametrize("name", DENSE_MODELS)
@pytest.mark.parametrize("S", [128, 512, 1024, 2048])
def test_prefill_intensity_of_the_weights_at_bf16_is_about_the_prompt_length(name, S):
    # Dense models only: each weight of the layers (2 bytes at BF16) is read once and does 2 FLOPs
    # per prompt token, so the weights' share of the intensity is about S, a little less because
    # the output head is read in full but multiplied once; the cache and the activations come on
    # top and pull the intensity below it.
    c = model(name).config
    w = gen.weight_bytes_read_per_step(c, "BF16", S)
    i = roofline.arithmetic_intensity_flop_per_byte(gen.prefill_flops(c, S), w + S * kv_bytes_per_token(c, "BF16"))
    layers_share = 1 - embedding_params(c) / multiplied_params_per_token(c)
    assert i == pytest.approx(S * layers_share, rel=0.05)
    point = gen.prefill_point(c, 1e15, 1e12, S)
    assert point.intensity < i


@given(name=st.sampled_from(DENSE_MODELS), S=st.floats(1.0, 1e6))
def test_activations_pull_prefill_intensity_below_the_weights_only_one_and_more_so_for_long_prompts(name, S):
    c = model(name).config
    w, k = gen.weight_bytes_read_per_step(c), kv_bytes_per_token(c)
    a = gen.activation_bytes_per_token(c, "prefill")

    def ratio(prompt):
        with_ = gen.prefill_intensity_flop_per_byte(c, prompt, w, k, a)
        without = gen.prefill_intensity_flop_per_byte(c, prompt, w, k, 0.0)
        return with_ / without

    assert ratio(S) < 1
    assert ratio(2 * S) < ratio(S)  # the gap grows with the prompt


@given(name=st.sampled_from(DENSE_MODELS), S=st.floats(1.0, 1e6))
def test_prefill_intensity_levels_off_at_the_work_per_byte_of_a_token(name, S):
    # (2N S + a S (S+1)) / (W + S (K + A)) stays below (2N + a (S+1)) / (K + A), its large-S form
    c = model(name).config
    w, k = gen.weight_bytes_read_per_step(c), kv_bytes_per_token(c)
    a = gen.activation_bytes_per_token(c, "prefill")
    per_token = gen.prefill_flops(c, S) / S
    assert gen.prefill_intensity_flop_per_byte(c, S, w, k, a) < per_token / (k + a)


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_decode_flops_per_token_without_context_is_twice_the_multiplied_weights(name):
    c = model(name).config
    assert gen.decode_flops_per_token(c, 0) == 2 * multiplied_params_per_token(c)
    assert gen.decode_flops_per_token(c) == 2 * multiplied_params_per_token(c)
    # the input embedding is a lookup, not a product: untied, it is left out of the math
    untied = 0 if c.tie_word_embeddings else embedding_params(c)
    assert multiplied_params_per_token(c) == active_param_count(c) - untied


@given(name=st.sampled_from([n for n in MODEL_NAMES if not model(n).config.uses_mla]), L=context_or_zero)
def test_decode_flops_per_token_adds_attention_over_the_cache(name, L):
    c = model(name).config
    attention = 2 * c.num_hidden_layers * c.num_attention_heads * (c.head_dim_qk + c.head_dim_v) * cached_tokens(c, L)
    assert _close(gen.decode_flops_per_token(c, L), 2 * multiplied_params_per_token(c) + attention)
    assert _close(gen.attention_flops_per_token(c, L), attention)


@given(name=st.sampled_from([n for n in MODEL_NAMES if model(n).config.uses_mla]), L=contexts)
def test_mla_decodes_in_the_absorbed_form(name, L):
    # every head scores and weights the cached latent: heads x (2 x kv_lora_rank + rope dim)
    # multiply-adds per layer per cached token
    c = model(name).config
    absorbed = 2 * c.num_hidden_layers * c.num_attention_heads * (2 * c.kv_lora_rank + c.qk_rope_head_dim) * L
    expanded = 2 * c.num_hidden_layers * c.num_attention_heads * (c.head_dim_qk + c.head_dim_v) * L
    assert _close(gen.attention_flops_per_token(c, L), absorbed)
    assert absorbed / expanded == pytest.approx(3.4, abs=0.01)
    # prefill keeps the expanded form
    assert _close(gen.prefill_attention_flops(c, L), expanded / 2 * (L + 1))


@given(name=st.sampled_from(DENSE_MODELS), S=st.floats(1.0, 1e5), acc=st.sampled_from(["H100 SXM", "B200 (HGX)", "L4"]))
def test_time_to_first_token_is_max_of_prefill_math_and_memory(name, S, acc):
    c = model(name).config
    a = accelerator(acc)
    w, k = weight_bytes(c), kv_bytes_per_token(c)
    act = gen.activation_bytes_per_token(c, "prefill")
    p, bw = a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s
    t = gen.time_to_first_token_s(c, S, p, bw, w, k, act)
    assert _close(t, max(gen.prefill_flops(c, S) / p, (w + S * (k + act)) / bw))


# ==== regime =====================================================================================

def test_regime_memory_bound_near_a_lower_memory_ceiling():
    assert gen.regime(450, memory_ceiling=500, math_ceiling=140_000) == roofline.MEMORY_BOUND
    assert gen.regime(500, memory_ceiling=500, math_ceiling=140_000) == roofline.MEMORY_BOUND


def test_regime_compute_bound_near_a_lower_math_ceiling():
    assert gen.regime(9_000, memory_ceiling=50_000, math_ceiling=10_000) == roofline.COMPUTE_BOUND
    assert gen.regime(10_000, memory_ceiling=50_000, math_ceiling=10_000) == roofline.COMPUTE_BOUND


def test_regime_far_below_both_is_overhead_bound():
    assert gen.regime(29, memory_ceiling=498, math_ceiling=140_000) == gen.OVERHEAD_BOUND
    assert gen.regime(100, memory_ceiling=50_000, math_ceiling=10_000) == gen.OVERHEAD_BOUND


def test_regime_above_the_lower_ceiling_is_an_error():
    with pytest.raises(ValueError, match="measured_tokens_per_s"):
        gen.regime(600, memory_ceiling=500, math_ceiling=140_000)
    with pytest.raises(ValueError, match="measured_tokens_per_s"):
        gen.regime(11_000, memory_ceiling=50_000, math_ceiling=10_000)


@given(mem=st.floats(1.0, 1e6), mth=st.floats(1.0, 1e6), frac=st.floats(0.0, 1.0), near=st.floats(0.05, 1.0))
def test_regime_threshold_is_near_times_the_lower_ceiling(mem, mth, frac, near):
    ceiling = min(mem, mth)
    x = ceiling * frac
    assume(x > 0 and abs(frac - near) > 1e-9)
    got = gen.regime(x, mem, mth, near=near)
    if frac < near:
        assert got == gen.OVERHEAD_BOUND
    else:
        assert got == (roofline.MEMORY_BOUND if mem <= mth else roofline.COMPUTE_BOUND)


def test_regime_of_the_books_eager_measurement():
    # 29 tokens/s from an eager FP16 Llama-3.1-8B on a B200: far below the ~498 tokens/s ceiling.
    c = model("Llama-3.1-8B").config
    b200 = accelerator("B200 (HGX)")
    mem = gen.memory_ceiling_tokens_per_s(b200.bandwidth_bytes_per_s, weight_bytes(c, "FP16"))
    mth = gen.math_ceiling_tokens_per_s(b200.dense_bf16_flops_per_s, gen.decode_flops_per_token(c))
    assert gen.regime(29, mem, mth) == gen.OVERHEAD_BOUND


# ==== models: the book's worked values ===========================================================

def test_llama_8b_on_b200_memory_ceiling_is_about_530():
    # 8 TB/s over the 15.01 GB a token reads (all weights but the embedding table) and 11 MB of
    # activations; the round count of all 16.06 GB stored would give 498
    c = model("Llama-3.1-8B").config
    b200 = accelerator("B200 (HGX)")
    point = gen.decode_point(c, b200.dense_bf16_flops_per_s, b200.bandwidth_bytes_per_s)
    assert point.memory_ceiling == pytest.approx(532, rel=0.005)
    stored = gen.memory_ceiling_tokens_per_s(b200.bandwidth_bytes_per_s, weight_bytes(c, "BF16"))
    assert stored == pytest.approx(498, rel=0.01)


def test_llama_8b_on_b200_math_ceiling_is_about_150_000():
    c = model("Llama-3.1-8B").config
    b200 = accelerator("B200 (HGX)")
    rate = gen.math_ceiling_tokens_per_s(b200.dense_bf16_flops_per_s, gen.decode_flops_per_token(c, 0))
    assert rate == pytest.approx(150_000, rel=0.01)


KV_BYTES_BF16 = {
    "Llama-3.1-8B": 131_072,
    "Llama-3.1-70B": 327_680,
    "Qwen2.5-7B": 57_344,
    "Qwen2.5-32B": 262_144,
    "DeepSeek-V2": 69_120,
    "DeepSeek-V3": 70_272,
}


@pytest.mark.parametrize("name,expected", KV_BYTES_BF16.items())
def test_kv_bytes_per_token(name, expected):
    c = model(name).config
    assert kv_bytes_per_token(c, "BF16") == expected
    assert kv_bytes_per_token(c) == expected  # BF16 is the default
    assert kv_bytes_per_token(c, "FP8") == expected / 2


@pytest.mark.parametrize("name", [n for n in MODEL_NAMES if model(n).published_params_exact])
def test_derived_param_count_matches_an_exact_published_count(name):
    m = model(name)
    assert param_count(m.config) == m.published_params


@pytest.mark.parametrize("name", [n for n in MODEL_NAMES if not model(n).published_params_exact])
def test_derived_param_count_is_near_a_rounded_published_count(name):
    m = model(name)
    assert param_count(m.config) == pytest.approx(m.published_params, rel=0.01)
    if m.published_active_params is not None:  # an MoE model; a dense one states no separate active count
        assert active_param_count(m.config) == pytest.approx(m.published_active_params, rel=0.03)
        assert active_param_count(m.config) < param_count(m.config)


@pytest.mark.parametrize("name", DENSE_MODELS)
def test_dense_models_pass_every_weight_per_token(name):
    c = model(name).config
    assert active_param_count(c) == param_count(c)


def test_mistral_cache_caps_at_its_sliding_window():
    c = model("Mistral-7B-v0.1").config
    assert c.sliding_window == 4096
    assert cached_tokens(c, 0) == 0
    assert cached_tokens(c, 1000) == 1000
    assert cached_tokens(c, 4096) == 4096
    assert cached_tokens(c, 4097) == 4096
    assert cached_tokens(c, 100_000) == 4096
    # ...and so does the attention math over the cache
    assert gen.decode_flops_per_token(c, 100_000) == gen.decode_flops_per_token(c, 4096)


@given(name=st.sampled_from([n for n in MODEL_NAMES if not model(n).config.sliding_window]), L=context_or_zero)
def test_models_without_a_window_cache_every_token(name, L):
    assert cached_tokens(model(name).config, L) == L


@given(name=st.sampled_from(MODEL_NAMES), prec=st.sampled_from(list(units.formats())))
def test_weight_bytes_is_params_times_bytes_per_element_with_the_vocabulary_kept_in_bf16(name, prec):
    c = model(name).config
    b = units.bytes_per_element(prec)
    if b >= 2 or units.storage_format(prec).whole_model:  # llama.cpp's formats quantize every weight
        assert weight_bytes(c, prec) == param_count(c) * b
    else:  # quantized: the embedding table, the output head, the router and the vectors stay in BF16
        w = stored_weights(c)
        kept = w.vocabulary + w.router + w.vectors
        assert w.vocabulary == vocabulary_params(c) and w.total == param_count(c)
        assert w.vectors < 0.01 * param_count(c)  # norms and biases are a sliver of any model
        assert weight_bytes(c, prec) == pytest.approx((param_count(c) - kept) * b + kept * 2, rel=1e-12)
        assert param_count(c) * b < weight_bytes(c, prec) < param_count(c) * 2


# ==== units ======================================================================================

def test_decimal_and_binary_prefixes():
    assert units.GB == 10**9
    assert units.GIB == 2**30
    assert units.GIB / units.GB == pytest.approx(1.073741824)
    assert units.GIB == 1024 * units.MIB == 1024**2 * units.KIB
    assert units.TB == 1000 * units.GB == units.TERA


def test_capacity_is_what_the_device_reports():
    a100 = accelerator("A100 80GB SXM")
    assert a100.capacity_reported and a100.reported_capacity_mib == 81_920
    assert a100.capacity_bytes == 80 * units.GIB
    assert a100.capacity_bytes / units.GB == pytest.approx(85.9, rel=1e-3)
    h100 = accelerator("H100 SXM")
    assert h100.capacity_bytes == 81_559 * units.MIB  # a little under 80 GiB, about 85.5 GB
    assert 80 * units.GB < h100.capacity_bytes < 80 * units.GIB
    assert accelerator("H200 SXM").capacity_bytes == 143_771 * units.MIB
    assert accelerator("B200 (HGX)").capacity_bytes == 183_359 * units.MIB


def test_a_part_without_a_reported_figure_reads_the_marketed_gb_cautiously():
    gb200 = accelerator("B200 (GB200)")
    assert not gb200.capacity_reported
    assert gb200.capacity_bytes == gb200.capacity_marketed_gb * units.GB
    assert "cautious" in gb200.capacity_source


def test_every_reported_hbm_capacity_lies_between_the_marketed_gb_and_its_gib():
    # the marketed "GB" of HBM is GiB-sized: what the device reports is more than the decimal
    # reading and at most the binary one (GDDR parts with ECC on report less)
    from inferlimits.data.hardware import accelerators
    for a in accelerators().values():
        if a.capacity_reported and a.datacenter:
            assert a.capacity_marketed_gb * units.GB < a.capacity_bytes <= a.capacity_marketed_gb * units.GIB


@pytest.mark.parametrize("precision,expected", [("BF16", 2.0), ("FP16", 2.0), ("FP8", 1.0),
                                                ("INT8", 1.0), ("INT4", (4 + 20 / 128) / 8), ("FP32", 4.0)])
def test_bytes_per_element(precision, expected):
    assert units.bytes_per_element(precision) == expected


def test_no_narrow_format_is_counted_without_its_scales():
    # a format narrower than 8 bits cannot hold a tensor's range alone: real checkpoints store a
    # scale per block or group (INT4's GPTQ/AWQ groups: an FP16 scale and a 4-bit zero point per
    # 128 weights), and the book counts those bytes wherever it counts the format's
    for f in units.formats().values():
        if f.element_bits < 8:
            assert f.block and f.scale_bits > 0, f.name
            assert f.bytes_per_element > f.element_bits / 8, f.name
    assert units.storage_format("INT4").block == 128


def test_int4_weights_read_include_their_group_scales():
    # the case the scales decide: Qwen2.5-32B in INT4 on an RTX 4090, 4 sequences of 4,096
    # tokens, fits on bare 4-bit weights (about 23.0 of 23.2 GB) and not with GPTQ/AWQ's scales
    from inferlimits.arithmetic.indexcard import DOES_NOT_FIT, read_card
    from inferlimits.data.models import model
    card = read_card("RTX 4090", "Qwen2.5-32B", "INT4", "BF16", batch=4, context_tokens=4096)
    assert card.verdict == DOES_NOT_FIT
    from inferlimits.data.models import stored_weights
    scales = stored_weights(model("Qwen2.5-32B").config).matrices * 20 / 128 / 8
    m = card.memory
    assert m.needed_bytes - scales <= m.usable_bytes < m.needed_bytes


@pytest.mark.parametrize("bad", ["FP7", "bf16", "", "INT3", None, 16])
def test_unknown_precision_raises_naming_precision(bad):
    with pytest.raises(ValueError, match="precision"):
        units.bytes_per_element(bad)


def test_unknown_precision_in_model_helpers_raises_naming_precision():
    c = model("Llama-3.1-8B").config
    with pytest.raises(ValueError, match="precision"):
        kv_bytes_per_token(c, "FP7")
    with pytest.raises(ValueError, match="precision"):
        weight_bytes(c, "FP7")
