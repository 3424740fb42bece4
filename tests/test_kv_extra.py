"""Batching, the KV cache and serving economics (chapters 4 and 5): the limits of the memory
ceiling, where math starts to bind, what fits in memory, what a cache design saves, each user's
speed against the aggregate, and the cost of a million tokens."""
from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inferlimits.data import datafiles
from inferlimits.arithmetic import economics, kvcache
from inferlimits.figures import tables
from inferlimits.arithmetic.generation import (decode_flops_per_token, decode_knee_batch, decode_point,
                                               decode_step_time_s, math_ceiling_tokens_per_s,
                                               memory_ceiling_tokens_per_s, weight_bytes_read_per_step)
from inferlimits.data.hardware import accelerator, accelerators
from inferlimits.data.models import kv_bytes_per_token, model, param_count, weight_bytes
from inferlimits.arithmetic.roofline import balance_point_flop_per_byte
from inferlimits.data.units import GB, GIB, KIB

bandwidth = st.floats(1e11, 1e13)
peak = st.floats(1e13, 5e15)
weights = st.floats(1e9, 1e12)
kv = st.floats(1e3, 1e6)
context = st.floats(1.0, 2e5)
batch = st.floats(1.0, 4096.0)


def _close(a, b, rel=1e-9):
    return math.isclose(a, b, rel_tol=rel, abs_tol=0.0)


# ---- the memory ceiling's two limits ----------------------------------------------------------

activations = st.one_of(st.just(0.0), st.floats(1e5, 1e8))


@given(bandwidth, weights, kv, context, activations)
def test_memory_ceiling_approaches_the_large_batch_limit(bw, w, k, L, a):
    limit = kvcache.cache_limited_tokens_per_s(bw, k, L, a)
    huge = 1e9 * w / (k * L)
    assert memory_ceiling_tokens_per_s(bw, w, huge, k, L, activation_bytes_per_token=a) <= limit * (1 + 1e-12)
    assert _close(memory_ceiling_tokens_per_s(bw, w, huge, k, L, activation_bytes_per_token=a), limit, rel=1e-6)


@given(bandwidth, weights, kv, context, activations, batch)
def test_ceiling_over_its_limit_is_the_per_sequence_share_of_the_bytes(bw, w, k, L, a, b):
    share = kvcache.per_sequence_share_of_step_bytes(w, k, L, a, b)
    assert 0 < share < 1
    ceiling = memory_ceiling_tokens_per_s(bw, w, b, k, L, activation_bytes_per_token=a)
    assert _close(ceiling / kvcache.cache_limited_tokens_per_s(bw, k, L, a), share)


@given(weights, kv, context)
def test_half_the_limit_where_caches_equal_weights_and_nine_tenths_at_nine_times(w, k, L):
    even = kvcache.batch_where_cache_equals_weights(w, k, L)
    assert _close(kvcache.per_sequence_share_of_step_bytes(w, k, L, 0.0, even), 0.5)
    assert _close(kvcache.per_sequence_share_of_step_bytes(w, k, L, 0.0, 3 * even), 0.75)
    assert _close(kvcache.per_sequence_share_of_step_bytes(w, k, L, 0.0, 9 * even), 0.9)


def test_with_no_context_the_large_batch_limit_is_the_activations_and_nothing_at_all_is_an_error():
    assert _close(kvcache.cache_limited_tokens_per_s(8e12, 131_072, 0, 1.1e7), 8e12 / 1.1e7)
    with pytest.raises(ValueError, match=r"\bcontext_tokens\b"):
        kvcache.cache_limited_tokens_per_s(8e12, 131_072, 0, 0.0)


def test_cache_limit_scales_with_efficiency():
    assert _close(kvcache.cache_limited_tokens_per_s(8e12, 131_072, 8192, 1e7, efficiency=0.5),
                  0.5 * kvcache.cache_limited_tokens_per_s(8e12, 131_072, 8192, 1e7))


# ---- where math binds -------------------------------------------------------------------------

@given(peak, bandwidth, weights, st.floats(1e9, 1e12))
def test_weights_only_math_binds_at_balance_point_times_bytes_per_flop(p, bw, w, f):
    b = kvcache.batch_where_math_binds(p, bw, w, f, 0.0, 0.0, 0.0)
    assert _close(b, balance_point_flop_per_byte(p, bw) * w / f)
    assert _close(memory_ceiling_tokens_per_s(bw, w, b), math_ceiling_tokens_per_s(p, f))


@given(peak, bandwidth, weights, st.floats(1e9, 1e12), kv, context, activations)
def test_at_the_binding_batch_both_ceilings_meet_or_never(p, bw, w, f, k, L, a):
    b = kvcache.batch_where_math_binds(p, bw, w, f, k, L, a)
    if math.isinf(b):
        assert kvcache.cache_limited_tokens_per_s(bw, k, L, a) <= math_ceiling_tokens_per_s(p, f) * (1 + 1e-12)
    else:
        ceiling = memory_ceiling_tokens_per_s(bw, w, b, k, L, activation_bytes_per_token=a)
        assert _close(ceiling, math_ceiling_tokens_per_s(p, f), rel=1e-6)


@given(peak, bandwidth, weights, st.floats(1e9, 1e12), activations)
def test_activations_push_the_knee_to_a_larger_batch(p, bw, w, f, a):
    bare = kvcache.batch_where_math_binds(p, bw, w, f, 0.0, 0.0, 0.0)
    assert kvcache.batch_where_math_binds(p, bw, w, f, 0.0, 0.0, a) >= bare


def test_llama_8b_on_b200_math_binds_near_the_balance_point_and_never_at_8k():
    c, a = model("Llama-3.1-8B").config, accelerator("B200 (HGX)")
    p, bw = a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s
    w, f = weight_bytes_read_per_step(c), decode_flops_per_token(c)
    # weights only, the batch is the balance point itself (2 FLOPs per 2-byte weight) ...
    assert kvcache.batch_where_math_binds(p, bw, w, f, 0.0, 0.0, 0.0) == pytest.approx(281.25)
    # ... and the activations each sequence moves push it a quarter further out
    assert decode_knee_batch(c, p, bw) == pytest.approx(356, abs=1)
    assert math.isinf(decode_knee_batch(c, p, bw, 8192))


# ---- capacity -----------------------------------------------------------------------------------

@settings(max_examples=200)
@given(st.floats(2e10, 3e11), st.floats(1e9, 1e10), kv, st.integers(1, 512), st.floats(0.5, 1.0))
def test_max_context_is_the_longest_that_fits(cap, w, k, b, u):
    n = kvcache.max_context_tokens(cap, w, k, b, u)
    left = kvcache.memory_left_for_cache_bytes(cap, w, u)
    assert b * k * n <= left * (1 + 1e-12)
    assert b * k * (n + 1) > left * (1 - 1e-12)


def test_qwen_32b_on_a100_80gb_keeps_gib_and_gb_apart():
    q, a = model("Qwen2.5-32B").config, accelerator("A100 80GB SXM")
    assert a.capacity_bytes == 80 * GIB
    left = kvcache.memory_left_for_cache_bytes(a.capacity_bytes, weight_bytes(q), 0.95)
    assert round(left / GB, 1) == 16.1 and round(left / GIB, 1) == 15.0
    fits = [kvcache.max_sequences(a.capacity_bytes, weight_bytes(q), kv_bytes_per_token(q), L, 0.95)
            for L in (2048, 8192, 32768, 131072)]
    assert fits == [29, 7, 1, 0]


# ---- what shrinks the cache ---------------------------------------------------------------------

def test_llama_8b_cache_is_128_kib_and_an_8k_conversation_exactly_one_gib():
    k = kv_bytes_per_token(model("Llama-3.1-8B").config)
    assert k == 128 * KIB
    assert kvcache.kv_cache_bytes(k, 1, 8192) == GIB


def test_deepseek_67b_is_derived_from_its_config():
    c = model("DeepSeek-LLM-67B").config
    assert round(param_count(c) / 1e9) == 67
    assert kv_bytes_per_token(c) == 389_120


def test_mla_alone_cuts_82_percent_and_93_3_needs_about_six_bits():
    k67 = kv_bytes_per_token(model("DeepSeek-LLM-67B").config)
    kv2 = kv_bytes_per_token(model("DeepSeek-V2").config)
    assert kv2 == 69_120
    assert round(kvcache.kv_cache_reduction(k67, kv2), 3) == 0.822
    claimed, source = kvcache.published_kv_cache_reduction("DeepSeek-V2")
    assert claimed == pytest.approx(0.933) and "93.3%" in source
    bits = kvcache.bits_per_element_for_reduction(k67, kv2 / 2, claimed)
    assert round(bits) == 6


@given(kv, st.floats(0.01, 0.99), st.floats(1.0, 1e5))
def test_bits_for_a_reduction_round_trip(baseline, r, elements):
    bits = kvcache.bits_per_element_for_reduction(baseline, elements, r)
    assert _close(kvcache.kv_cache_reduction(baseline, bits / 8 * elements), r, rel=1e-6)


def test_a_complete_reduction_is_rejected():
    with pytest.raises(ValueError, match=r"\breduction\b"):
        kvcache.bits_per_element_for_reduction(389_120, 34_560, 1.0)


@pytest.mark.parametrize("name", ["Llama-3.1-8B", "DeepSeek-V3", "", None, 3])
def test_models_without_a_stated_reduction_raise_naming_the_parameter(name):
    with pytest.raises(ValueError, match=r"\bmodel_name\b"):
        kvcache.published_kv_cache_reduction(name)


# ---- each user against the aggregate --------------------------------------------------------------

@given(peak, bandwidth, weights, st.floats(1e9, 1e12), batch, st.floats(0, 1e6), st.floats(0, 1e5))
def test_aggregate_is_batch_times_each_user_and_overlap_is_at_most_twice_as_fast(p, bw, w, f, b, k, L):
    for overlap in (True, False):
        assert _close(economics.aggregate_tokens_per_s(p, bw, w, f, b, k, L, overlap=overlap),
                      b * economics.per_user_tokens_per_s(p, bw, w, f, b, k, L, overlap=overlap))
    fast = economics.per_user_tokens_per_s(p, bw, w, f, b, k, L)
    slow = economics.per_user_tokens_per_s(p, bw, w, f, b, k, L, overlap=False)
    assert slow <= fast * (1 + 1e-12) and fast <= 2 * slow * (1 + 1e-12)
    assert _close(1 / fast, decode_step_time_s(p, bw, w, f, b, k, L))


@given(peak, bandwidth, weights, st.floats(1e9, 1e12))
def test_overlapped_aggregate_is_the_lower_ceiling(p, bw, w, f):
    for b in (1, 7, 64, 1000):
        assert _close(economics.aggregate_tokens_per_s(p, bw, w, f, b),
                      min(memory_ceiling_tokens_per_s(bw, w, b), math_ceiling_tokens_per_s(p, f)))


def test_each_user_keeps_full_speed_below_the_knee_with_overlap():
    c, a = model("Llama-3.1-8B").config, accelerator("B200 (HGX)")
    p, bw, w, f = a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s, weight_bytes(c), decode_flops_per_token(c)
    one = economics.per_user_tokens_per_s(p, bw, w, f, 1)
    assert economics.per_user_tokens_per_s(p, bw, w, f, 200) == one
    assert economics.per_user_tokens_per_s(p, bw, w, f, 512) < one


# ---- cost -------------------------------------------------------------------------------------------

@given(st.floats(0.1, 100), st.floats(1.0, 1e6))
def test_cost_per_million_tokens_is_price_over_millions_per_hour(price, rate):
    assert _close(economics.cost_per_million_tokens_usd(price, rate), price / (rate * 3600 / 1e6))


def test_prices_are_assumed_sourced_and_belong_to_known_accelerators():
    raw = datafiles.load("prices.toml")["prices"]
    table = economics.gpu_hour_prices()
    assert list(table) == list(raw) and table
    for name, price in table.items():
        assert name in accelerators()
        assert "assumed" in price.what and len(price.seen.split()) >= 5
        assert 0 < price.usd_per_gpu_hour < 100


def test_unknown_priced_accelerator_raises_naming_the_parameter():
    with pytest.raises(ValueError, match=r"\baccelerator_name\b"):
        economics.gpu_hour_price("L4")


def test_b200_one_user_costs_about_the_knee_times_a_full_batch():
    c, a = model("Llama-3.1-8B").config, accelerator("B200 (HGX)")
    p, bw = a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s
    price = economics.gpu_hour_price("B200 (HGX)").usd_per_gpu_hour
    knee = decode_knee_batch(c, p, bw)
    one = economics.cost_per_million_tokens_usd(price, decode_point(c, p, bw, 1).ceiling)
    full = economics.cost_per_million_tokens_usd(price, decode_point(c, p, bw, knee).ceiling)
    # each sequence's activations make a full batch's step a little longer than the weight read
    assert knee * 0.75 < one / full < knee


# ---- generated tables ---------------------------------------------------------------------------------

def test_fit_table_marks_weights_that_do_not_fit_and_contexts_a_model_lacks():
    text = tables.sequences_that_fit([("Llama-3.1-70B", "H100 SXM"), ("Mistral-7B-v0.1", "H100 SXM")],
                                     [8192, 131072]).data
    assert "weights do not fit" in text and "longer than it supports" in text
    assert "80 GiB" not in text and "| 80 GB |" in text
    assert "| 85.5 |" in text  # the capacity the H100 reports, in GB


def test_fit_table_splits_into_memory_and_sequences_of_at_most_six_columns():
    pairs, contexts = [("Llama-3.1-70B", "H100 SXM"), ("Mistral-7B-v0.1", "H100 SXM")], [2048, 8192, 32768, 131072]
    memory = tables.sequences_that_fit(pairs, contexts, part="memory").data
    fits = tables.sequences_that_fit(pairs, contexts, part="sequences").data
    whole = tables.sequences_that_fit(pairs, contexts).data
    for text in (memory, fits):
        assert all(line.count("|") - 1 <= 6 for line in text.splitlines())
    assert "| 85.5 (79.6) |" in memory and "| 80 GB |" in memory  # reported GB, its GiB beside it; the marketed figure
    assert "weights do not fit" in fits and "longer than it supports" in fits and "GB" not in fits
    # the split loses nothing: every cell of the whole table is in one part or the other
    assert [r.split(" | ")[-4:] for r in whole.splitlines()[2:]] == [r.split(" | ")[-4:] for r in fits.splitlines()[2:]]
    with pytest.raises(ValueError, match=r"\bpart\b"):
        tables.sequences_that_fit(pairs, contexts, part="both")


def test_ceiling_table_says_never_where_math_cannot_bind_and_states_no_rate_that_does_not_fit():
    text = tables.ceiling_by_context("Llama-3.1-8B", "B200 (HGX)", [0, 8192, 131072], [1, 64, 256]).data
    rows = text.splitlines()[2:]
    assert rows[0].endswith("| 356 |") and rows[1].endswith("| never |")
    # 256 sequences of 8,192 tokens (275 GB of caches) and 64 of 131,072 do not fit a B200
    assert "| does not fit | never |" in rows[1]
    assert rows[2].count("does not fit") == 2


def test_price_table_lists_every_priced_accelerator():
    text = tables.gpu_hour_prices("Llama-3.1-8B").data
    assert all(name in text for name in economics.gpu_hour_prices())


def test_decode_table_marks_weights_that_do_not_fit_and_states_no_rate_for_them():
    text = tables.decode_ceilings("Llama-3.1-70B", ["H200 SXM", "B200 (HGX)", "L40S"]).data
    rows = {r.split(" | ")[0].strip("| "): r for r in text.splitlines()[2:]}
    # 141.1 GB of BF16 weights: over the 135.7 GB an H200 may fill, within a B200's 173 GB
    assert "| does not fit |" in rows["H200 SXM"] and "does not fit" not in rows["B200 (HGX)"]
    assert rows["L40S"].count("does not fit") == 2  # BF16 and FP8; INT4 fits


def test_moe_table_counts_the_experts_a_batch_touches_and_states_no_rate():
    text = tables.moe_batching("DeepSeek-V3", [1, 64, 4096]).data
    rows = text.splitlines()[2:]
    assert "| 8.0 of 256 |" in rows[0] and "| 256.0 of 256 |" in rows[2]
    assert "tokens/s" not in text
    with pytest.raises(ValueError, match=r"\bmodel_name\b"):
        tables.moe_batching("Llama-3.1-8B", [1])


def test_a_sequence_brings_its_cache_read_and_its_activations():
    # Llama-3.1-8B at 8,192 tokens: 128 KiB x 8,192 = 1 GiB of cache, plus its activations
    assert kvcache.sequence_bytes_per_step(131_072, 8192, 11.2e6) == 2**30 + 11.2e6
    assert kvcache.sequence_bytes_per_step(131_072, 0, 0) == 0
