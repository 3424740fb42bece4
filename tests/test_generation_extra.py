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

from inferlimits import generation as gen
from inferlimits import roofline, units
from inferlimits.hardware import accelerator, accelerators
from inferlimits.models import (
    active_param_count,
    embedding_params,
    kv_bytes_per_token,
    model,
    models,
    param_count,
    weight_bytes,
)


MODEL_NAMES = list(models())
DENSE = [n for n in MODEL_NAMES if not model(n).config.is_moe]
MOE = [n for n in MODEL_NAMES if model(n).config.is_moe]
PRECISIONS = list(units.BYTES_PER_ELEMENT)

peaks = st.floats(1e13, 1e16)
bandwidths = st.floats(1e11, 1e14)
prompts = st.floats(1.0, 1e6)
shares = st.floats(0.01, 0.99)


def _coefficient(c) -> float:
    return c.num_hidden_layers * c.num_attention_heads * (c.head_dim_qk + c.head_dim_v)


# ==== weight bytes one token reads ================================================================

@pytest.mark.parametrize("name", DENSE)
@pytest.mark.parametrize("precision", PRECISIONS)
def test_dense_untied_model_reads_all_weights_but_one_embedding_row(name, precision):
    c = model(name).config
    b = units.bytes_per_element(precision)
    read = gen.weight_bytes_read_per_token(c, precision)
    assert read == pytest.approx(weight_bytes(c, precision) - (c.vocab_size - 1) * c.hidden_size * b, rel=1e-12)
    assert read < weight_bytes(c, precision)


def test_llama_8b_reads_about_seven_percent_less_than_it_stores():
    c = model("Llama-3.1-8B").config
    ratio = weight_bytes(c) / gen.weight_bytes_read_per_token(c)
    assert ratio == pytest.approx(param_count(c) / (param_count(c) - embedding_params(c) + c.hidden_size))
    assert 1.06 < ratio < 1.08


def test_tied_embeddings_are_read_in_full_as_the_output_head():
    c = dataclasses.replace(model("Llama-3.1-8B").config, tie_word_embeddings=True)
    assert gen.weight_bytes_read_per_token(c, "BF16") == pytest.approx(weight_bytes(c, "BF16"))


@pytest.mark.parametrize("name", MOE)
def test_a_mixture_of_experts_token_reads_only_its_experts(name):
    c = model(name).config
    read = gen.weight_bytes_read_per_token(c, "FP8")
    assert read == pytest.approx(active_param_count(c) - embedding_params(c) + c.hidden_size)
    assert read < weight_bytes(c, "FP8") / 5


@pytest.mark.parametrize("bad", ["bf16", "FP4", "", None, 2])
def test_weight_bytes_read_rejects_unknown_precisions(bad):
    with pytest.raises(ValueError, match=r"\bweight_precision\b"):
        gen.weight_bytes_read_per_token(model("Llama-3.1-8B").config, bad)


# ==== prefill FLOPs split into the linear and the attention term ==================================

@given(name=st.sampled_from(MODEL_NAMES), S=prompts)
def test_prefill_attention_flops_formula_and_sum(name, S):
    c = model(name).config
    attention = gen.prefill_attention_flops(c, S)
    assert attention == pytest.approx(_coefficient(c) * S * (S + 1), rel=1e-12)
    assert gen.prefill_flops(c, S) == pytest.approx(2 * active_param_count(c) * S + attention, rel=1e-12)


@given(name=st.sampled_from(MODEL_NAMES), S1=prompts, S2=prompts)
def test_attention_share_grows_with_the_prompt(name, S1, S2):
    c = model(name).config
    short, long_ = sorted((S1, S2))
    assert 0 < gen.prefill_attention_share(c, short) <= gen.prefill_attention_share(c, long_) < 1


def test_attention_share_of_llama_8b_concrete():
    c = model("Llama-3.1-8B").config
    a, two_n = _coefficient(c), 2 * active_param_count(c)
    for S in (1, 2_000, 131_072):
        assert gen.prefill_attention_share(c, S) == pytest.approx(a * (S + 1) / (two_n + a * (S + 1)))


# ==== the prompt length at which attention reaches a share =========================================

@given(name=st.sampled_from(MODEL_NAMES), f=shares)
def test_prompt_length_at_a_share_inverts_the_share(name, f):
    c = model(name).config
    try:
        S = gen.prompt_tokens_at_attention_share(c, f)
    except ValueError:
        assert f < gen.prefill_attention_share(c, 1) * (1 + 1e-9)
        return
    assert S >= 1
    assert gen.prefill_attention_share(c, S) == pytest.approx(f, rel=1e-9)


@given(name=st.sampled_from(DENSE), f1=st.floats(0.05, 0.95), f2=st.floats(0.05, 0.95))
def test_prompt_length_at_a_share_is_monotone(name, f1, f2):
    c = model(name).config
    lo, hi = sorted((f1, f2))
    assert gen.prompt_tokens_at_attention_share(c, lo) <= gen.prompt_tokens_at_attention_share(c, hi)


def test_half_of_llama_8b_prefill_is_attention_near_61k_tokens():
    c = model("Llama-3.1-8B").config
    S = gen.prompt_tokens_at_attention_share(c, 0.5)
    assert S == pytest.approx(2 * active_param_count(c) / _coefficient(c) - 1)
    assert 61_000 < S < 61_500


@pytest.mark.parametrize("share", [1.0, 1e-9])
def test_prompt_length_at_share_rejects_unreachable_shares(share):
    with pytest.raises(ValueError, match=r"\bshare\b"):
        gen.prompt_tokens_at_attention_share(model("Llama-3.1-8B").config, share)


# ==== prefill bytes, intensity and the crossover =====================================================

@given(w=st.floats(1e6, 1e13), k=st.floats(1e3, 1e7), S=prompts)
def test_prefill_bytes_are_weights_plus_the_cache_written(w, k, S):
    assert gen.prefill_bytes_moved(w, k, S) == pytest.approx(w + S * k, rel=1e-12)


@pytest.mark.parametrize("name", DENSE)
@pytest.mark.parametrize("precision", ["BF16", "FP8", "INT4"])
def test_short_prompt_intensity_is_about_two_s_over_b(name, precision):
    c = model(name).config
    b = units.bytes_per_element(precision)
    S = 64
    i = gen.prefill_intensity_flop_per_byte(c, S, weight_bytes(c, precision), kv_bytes_per_token(c))
    assert i == pytest.approx(2 * S / b, rel=0.01)


@given(name=st.sampled_from(MODEL_NAMES), p=peaks, bw=bandwidths,
       precision=st.sampled_from(["BF16", "FP8", "INT4"]))
def test_crossover_is_where_math_time_equals_memory_time(name, p, bw, precision):
    c = model(name).config
    w, k = weight_bytes(c, precision), kv_bytes_per_token(c)
    S = gen.prefill_crossover_prompt_tokens(c, p, bw, w, k)
    assert S > 0 and math.isfinite(S)
    math_time = gen.prefill_flops(c, S) / p
    memory_time = gen.prefill_bytes_moved(w, k, S) / bw
    assert math_time == pytest.approx(memory_time, rel=1e-7)
    assert gen.prefill_intensity_flop_per_byte(c, S, w, k) == pytest.approx(
        roofline.balance_point_flop_per_byte(p, bw), rel=1e-7)


@given(name=st.sampled_from(DENSE), p=peaks, bw=bandwidths, factor=st.floats(1.01, 100.0))
def test_prefill_is_memory_bound_below_the_crossover_and_compute_bound_above(name, p, bw, factor):
    c = model(name).config
    w, k = weight_bytes(c), kv_bytes_per_token(c)
    S = gen.prefill_crossover_prompt_tokens(c, p, bw, w, k)
    for s, expected in ((S / factor, roofline.MEMORY_BOUND), (S * factor, roofline.COMPUTE_BOUND)):
        if s < 1:
            continue
        i = gen.prefill_intensity_flop_per_byte(c, s, w, k)
        assert roofline.bound(i, p, bw) == expected


@pytest.mark.parametrize("name", list(accelerators()))
@pytest.mark.parametrize("precision", ["BF16", "FP8", "INT4"])
def test_crossover_for_llama_8b_is_about_the_balance_point_times_b_over_two(name, precision):
    a = accelerator(name)
    c = model("Llama-3.1-8B").config
    ridge = roofline.balance_point_flop_per_byte(a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s)
    S = gen.prefill_crossover_prompt_tokens(c, a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s,
                                            weight_bytes(c, precision), kv_bytes_per_token(c))
    assert S == pytest.approx(ridge * units.bytes_per_element(precision) / 2, rel=0.01)


@given(name=st.sampled_from(DENSE), p=peaks, bw=bandwidths)
def test_crossover_grows_with_the_balance_point(name, p, bw):
    c = model(name).config
    w, k = weight_bytes(c), kv_bytes_per_token(c)
    assert (gen.prefill_crossover_prompt_tokens(c, p, bw, w, k)
            < gen.prefill_crossover_prompt_tokens(c, 2 * p, bw, w, k))


def test_crossover_stays_positive_when_the_cache_outweighs_everything():
    # beta = 2N + a - R K is negative here: the formula must still give the positive root.
    c = model("Llama-3.1-8B").config
    S = gen.prefill_crossover_prompt_tokens(c, 1e16, 1e11, 1e6, 1e7)
    assert S > 0
    assert gen.prefill_flops(c, S) / 1e16 == pytest.approx(gen.prefill_bytes_moved(1e6, 1e7, S) / 1e11, rel=1e-7)


@given(name=st.sampled_from(DENSE), S=prompts, p=peaks, bw=bandwidths)
def test_time_to_first_token_is_the_larger_of_math_and_memory_time(name, S, p, bw):
    c = model(name).config
    w, k = weight_bytes(c), kv_bytes_per_token(c)
    t = gen.time_to_first_token_s(c, S, p, bw, w, k)
    assert t == pytest.approx(max(gen.prefill_flops(c, S) / p, gen.prefill_bytes_moved(w, k, S) / bw), rel=1e-12)


def test_short_prompts_cost_about_one_weight_read():
    b200 = accelerator("B200 (HGX)")
    c = model("Llama-3.1-8B").config
    w, k = weight_bytes(c), kv_bytes_per_token(c)
    for S in (1, 16, 128):
        t = gen.time_to_first_token_s(c, S, b200.dense_bf16_flops_per_s, b200.bandwidth_bytes_per_s, w, k)
        assert t == pytest.approx(w / b200.bandwidth_bytes_per_s, rel=0.01)
