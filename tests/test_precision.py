"""The precision the math runs in, apart from the precision the weights are stored in: the rules
for which product runs at which rate, the effective rate of a step, and the invariant chapter 7
teaches: halving the width of the math together with the width of the weights doubles the ridge
and leaves the decode knee where it was; quantizing the weights alone moves the knee."""
from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from inferlimits.arithmetic import generation as gen
from inferlimits.arithmetic import precision as pr
from inferlimits.data.hardware import accelerator, accelerators
from inferlimits.arithmetic.kvcache import batch_where_math_binds
from inferlimits.data.models import component_formats, model, models, multiplied_weights, weight_bytes
from inferlimits.arithmetic.roofline import balance_point_flop_per_byte
from inferlimits.data.units import formats

DENSE = [n for n, m in models().items() if not m.config.is_moe]
MOE = [n for n, m in models().items() if m.config.is_moe]
FP8_PARTS = [n for n, a in accelerators().items() if a.supports("FP8")]
FP4_PARTS = [n for n, a in accelerators().items() if a.supports("FP4")]

peaks = st.floats(1e12, 1e17)
bandwidths = st.floats(1e9, 1e14)
weights = st.floats(1e6, 1e13)
flops = st.floats(1e6, 1e13)


# ==== the invariant, as formulas ===================================================================

@given(p=peaks, bw=bandwidths, w=weights, f=flops, k=st.sampled_from([2, 4]))
def test_narrower_math_and_weights_double_the_ridge_and_keep_the_knee(p, bw, w, f, k):
    # ridge P / BW scales with the math rate; knee P W / (BW F) is unchanged when P x k and W / k
    assert balance_point_flop_per_byte(k * p, bw) == pytest.approx(k * balance_point_flop_per_byte(p, bw), rel=1e-12)
    knee = batch_where_math_binds(p, bw, w, f, 0, 0, 0)
    assert batch_where_math_binds(k * p, bw, w / k, f, 0, 0, 0) == pytest.approx(knee, rel=1e-12)
    # quantizing the weights alone (math rate unchanged) moves the knee down by the same factor
    assert batch_where_math_binds(p, bw, w / k, f, 0, 0, 0) == pytest.approx(knee / k, rel=1e-12)


@given(p=peaks, bw=bandwidths, w=weights, f=flops, a=st.floats(1e3, 1e8))
def test_bytes_that_do_not_shrink_raise_the_knee_when_the_math_speeds_up(p, bw, w, f, a):
    # activations kept in 16 bits while the math doubles: P x A doubles, the knee rises (or memory
    # binds at every batch)
    before = batch_where_math_binds(p, bw, w, f, 0, 0, a)
    after = batch_where_math_binds(2 * p, bw, w / 2, f, 0, 0, a)
    assert after >= before * (1 - 1e-12) or math.isinf(after)


# ==== the invariant, for every model on every part with the narrower mode ==============================

_knee_of_the_weights = pr.knee_weights_only_on


@pytest.mark.parametrize("name", DENSE)
@pytest.mark.parametrize("scheme", [("BF16", "BF16"), ("FP8", "FP8"), ("INT4", "BF16"), ("NVFP4", "FP4")])
def test_the_knee_of_the_weights_is_the_ridge_times_the_weights_bytes_per_flop(name, scheme):
    # for a dense model W does not depend on the batch: B* = (P / BW) (W / F), the closed form
    a, c = accelerator("B200 (HGX)"), model(name).config
    p = pr.decode_math_rate(a, c, *scheme)
    w, f = gen.weight_bytes_read_per_step(c, scheme[0]), gen.decode_flops_per_token(c)
    assert pr.knee_weights_only_on(a, c, *scheme) == pytest.approx(p / a.bandwidth_bytes_per_s * w / f, rel=1e-9)
    # the sequences' own bytes only push it later
    assert pr.knee_weights_only_on(a, c, *scheme) < pr.knee_on(a, c, 0, scheme[0], "BF16", scheme[1])


#: a tied output head as large as a fifth of the model (Llama-3.2-1B's) stays in 16 bits and moves the knee
@pytest.mark.parametrize("name", [n for n in DENSE if not model(n).config.tie_word_embeddings] + MOE)
@pytest.mark.parametrize("part", ["H100 SXM", "B200 (HGX)", "MI300X"])
def test_fp8_weights_with_fp8_math_keep_the_knee_of_bf16(name, part):
    a, c = accelerator(part), model(name).config
    assert a.math_flops_per_s("FP8") == pytest.approx(2 * a.math_flops_per_s("BF16"), rel=1e-3)
    bf16 = _knee_of_the_weights(a, c, "BF16", "BF16")
    fp8 = _knee_of_the_weights(a, c, "FP8", "FP8")
    if not c.is_moe:
        # the output head, router and vectors stay in 16 bits for bytes and math alike, so they do
        # not move it; only the datasheets' rounding (1,979 against 2 x 989.4) does
        assert fp8 == pytest.approx(bf16, rel=2e-3)
    else:
        # an MoE step reads many more experts than one token multiplies, so the parts kept in 16
        # bits weigh more in a token's math than in the step's bytes: the math speeds up by less
        # than 2 while the bytes at the knee nearly halve, and the knee moves down a little, never
        # below the rate's gain over 2
        gain = pr.decode_math_rate(a, c, "FP8", "FP8") / a.dense_bf16_flops_per_s
        assert bf16 * gain / 2 <= fp8 <= bf16 * (1 + 2e-3)
    assert pr.ridge_flop_per_byte(a, "FP8") == pytest.approx(2 * pr.ridge_flop_per_byte(a, "BF16"), rel=1e-3)
    # weight-only FP8 (math in BF16) moves the knee down, by the ratio of the bytes
    weight_only = _knee_of_the_weights(a, c, "FP8", "BF16")
    assert weight_only < 0.6 * bf16
    if not c.is_moe:
        ratio = gen.weight_bytes_read_per_step(c, "FP8") / gen.weight_bytes_read_per_step(c, "BF16")
        assert weight_only == pytest.approx(bf16 * ratio, rel=1e-9)


@pytest.mark.parametrize("name", DENSE)
@pytest.mark.parametrize("fmt", ["NVFP4", "MXFP4"])
def test_fp4_block_scales_are_bytes_no_math_pays_for(name, fmt):
    # 4-bit numbers with a shared scale per block: FP4 math is 4 x BF16 on a B200, the bytes are
    # 4.5 or 4.25 bits, so the knee rises by the scales' share of the quantized matrices' bytes
    a, c = accelerator("B200 (HGX)"), model(name).config
    assert a.math_flops_per_s("FP4") == 4 * a.math_flops_per_s("BF16")
    bf16 = _knee_of_the_weights(a, c, "BF16", "BF16")
    fp4 = _knee_of_the_weights(a, c, fmt, "FP4")
    scale = formats()[fmt].bits_per_element / 4
    assert bf16 < fp4 < bf16 * scale * (1 + 1e-9)


# ==== which product runs at which rate ====================================================================

@pytest.mark.parametrize("fmt,math_precision,runs_at", [
    ("FP8", "FP8", "FP8"), ("NVFP4", "FP4", "FP4"), ("MXFP4", "FP4", "FP4"), ("MXFP6", "FP6", "FP6"),
    ("INT8", "INT8", "INT8"),
    ("INT4", "FP8", "FP8"), ("NVFP4", "FP8", "FP8"), ("INT4", "INT8", "INT8"),   # narrower, widened in the kernel
    ("INT4", "BF16", "BF16"), ("FP8", "BF16", "BF16"), ("Q4_0", "BF16", "BF16"),  # weight-only
    ("BF16", "FP8", "BF16"), ("INT8", "FP8", "BF16"), ("FP8", "FP4", "BF16"), ("INT4", "FP4", "BF16"),
])
def test_a_product_runs_at_the_math_precision_only_if_its_weights_feed_it(fmt, math_precision, runs_at):
    assert pr.product_math(fmt, math_precision) == runs_at


@pytest.mark.parametrize("weights,math_precision", [("BF16", "FP8"), ("INT8", "FP8"), ("FP8", "FP4"), ("FP8", "INT8")])
def test_math_narrower_than_the_weights_is_refused_by_name(weights, math_precision):
    with pytest.raises(ValueError, match=r"\bmath_precision\b"):
        pr.check_scheme(weights, math_precision)
    assert pr.scheme_error(weights, math_precision)


def test_a_part_without_the_mode_is_refused_by_name():
    a100, c = accelerator("A100 80GB SXM"), model("Llama-3.1-8B").config
    assert pr.scheme_problem(a100, "FP8", "FP8") == "the A100 80GB SXM has no FP8 tensor cores"
    with pytest.raises(ValueError, match=r"\bmath_precision\b"):
        pr.decode_on(a100, c, weight_precision="FP8", math_precision="FP8")
    assert pr.scheme_problem(a100, "INT8", "INT8") is None  # Ampere multiplies INT8


def test_gpt_oss_runs_its_experts_at_fp4_and_its_attention_and_head_at_bf16():
    c = model("gpt-oss-120b").config
    fmt = component_formats("MXFP4 experts")
    assert fmt["experts"] == "MXFP4" and fmt["matrices"] == fmt["vocabulary"] == "BF16"
    parts = pr.product_flops_by_precision(c, "MXFP4 experts", "FP4")
    w = multiplied_weights(c)
    assert parts["FP4"] == pytest.approx(2 * w.experts)
    assert parts["BF16"] == pytest.approx(2 * (w.matrices + w.vocabulary + w.router + w.vectors))
    assert pr.scheme_error("MXFP4 experts", "FP4") is None
    # the checkpoint's bytes: BF16 everywhere but the experts' 4.25-bit matrices
    assert weight_bytes(c, "MXFP4 experts") == 65_248_815_744


# ==== the effective rate ========================================================================

@pytest.mark.parametrize("part", list(accelerators()))
@pytest.mark.parametrize("name", ["Llama-3.1-8B", "DeepSeek-V3", "gpt-oss-120b"])
def test_sixteen_bit_math_everywhere_is_the_bf16_rate_exactly(part, name):
    a, c = accelerator(part), model(name).config
    for wp in ("BF16", "FP8", "INT4", "MXFP4 experts"):
        assert pr.decode_math_rate(a, c, wp, "BF16", 8192) == pytest.approx(a.dense_bf16_flops_per_s, rel=1e-12)
        assert pr.prefill_math_rate(a, c, 2048, wp, "BF16") == pytest.approx(a.dense_bf16_flops_per_s, rel=1e-12)


@pytest.mark.parametrize("part", FP4_PARTS)
@given(L=st.floats(0, 1e6), name=st.sampled_from(DENSE + MOE))
def test_the_effective_rate_lies_between_the_parts_rates_and_falls_as_16_bit_attention_grows(part, L, name):
    a, c = accelerator(part), model(name).config
    wp = "MXFP4 experts" if name.startswith("gpt-oss") else "NVFP4" if part.startswith("B") else "MXFP4"
    p0 = pr.decode_math_rate(a, c, wp, "FP4", 0)
    pL = pr.decode_math_rate(a, c, wp, "FP4", L)
    assert a.dense_bf16_flops_per_s * (1 - 1e-12) <= pL <= p0 <= a.math_flops_per_s("FP4") * (1 + 1e-12)


@pytest.mark.parametrize("part", FP8_PARTS)
def test_fp8_math_speeds_up_long_prefill_less_than_short_attention_stays_16_bit(part):
    a, c = accelerator(part), model("Llama-3.1-8B").config
    short = pr.prefill_on(a, c, 1024, "BF16").time_s / pr.prefill_on(a, c, 1024, "FP8", math_precision="FP8").time_s
    long_ = pr.prefill_on(a, c, 131072, "BF16").time_s / pr.prefill_on(a, c, 131072, "FP8", math_precision="FP8").time_s
    ratio = a.math_flops_per_s("FP8") / a.dense_bf16_flops_per_s
    assert 1 < long_ < short <= ratio * (1 + 1e-9)


@pytest.mark.parametrize("name", DENSE + MOE)
def test_the_prefill_crossover_with_narrow_math_is_where_math_and_memory_times_meet(name):
    a, c = accelerator("B200 (HGX)"), model(name).config
    S = pr.crossover_on(a, c, "FP8", math_precision="FP8")
    assert math.isfinite(S)
    point = pr.prefill_on(a, c, S, "FP8", math_precision="FP8")
    p = pr.prefill_math_rate(a, c, S, "FP8", "FP8")
    assert point.flops / p == pytest.approx(point.bytes / a.bandwidth_bytes_per_s, rel=1e-5)
    # and with BF16 everywhere it is the closed form of generation, exactly
    assert pr.crossover_on(a, c) == gen.prefill_crossover_tokens(c, a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s)


# ==== the kernels counted one kind after another =====================================================

SCHEMES = [("BF16", "BF16"), ("FP8", "FP8"), ("INT4", "BF16"), ("NVFP4", "FP4"), ("INT4", "FP8")]


@given(name=st.sampled_from(DENSE + MOE), B=st.floats(1, 1e5), L=st.floats(0, 1e5), scheme=st.sampled_from(SCHEMES),
       part=st.sampled_from(FP4_PARTS))
def test_in_order_the_step_is_never_faster_and_never_slower_than_all_its_times_together(name, B, L, scheme, part):
    a, c = accelerator(part), model(name).config
    whole = pr.decode_on(a, c, B, L, scheme[0], "BF16", scheme[1])
    ordered = pr.decode_in_order_on(a, c, B, L, scheme[0], "BF16", scheme[1])
    whole_time = B / whole.ceiling
    assert ordered.time_s >= whole_time * (1 - 1e-12)
    assert ordered.time_s <= (ordered.math_s + ordered.memory_s + ordered.elementwise_s) * (1 + 1e-12)
    # the same bytes and the same FLOPs, split into parts
    assert (ordered.memory_s + ordered.elementwise_s) * a.bandwidth_bytes_per_s == pytest.approx(whole.bytes, rel=1e-9)
    assert ordered.math_s * whole.math_ceiling == pytest.approx(B, rel=1e-9)
    assert {p for p, _, _ in ordered.parts} == {"product", "attention", "elementwise"} | ({"routed expert"} if c.is_moe else set())
    if all(m <= b for _, m, b in ordered.parts):  # every part waits on memory: the two counts agree
        assert ordered.time_s == pytest.approx(whole_time, rel=1e-9)


def test_an_moe_models_experts_cannot_borrow_the_dense_products_spare_math():
    # DeepSeek-V3 on a B200's rates: under one max() the whole step turns compute-bound at about
    # 7,960; its routed experts, each with about B k / E rows, only later (about 10,350)
    a, c = accelerator("B200 (HGX)"), model("DeepSeek-V3").config
    whole, ordered = pr.knee_on(a, c), pr.knee_in_order_on(a, c)
    assert ordered > whole
    at = pr.decode_in_order_on(a, c, whole)
    routed = next((m, b) for p, m, b in at.parts if p == "routed expert")
    assert routed[0] < routed[1]  # the experts still wait on memory at the whole-step knee
    rows = ordered * c.num_experts_per_tok / c.routed_experts
    assert rows > pr.ridge_flop_per_byte(a) * 2 / 2  # past the R b / 2 of the weights alone


@pytest.mark.parametrize("name", DENSE)
@pytest.mark.parametrize("scheme", SCHEMES)
def test_in_order_the_products_turn_compute_bound_no_later_than_the_whole_step(name, scheme):
    a, c = accelerator("B300 (HGX)"), model(name).config
    ordered = pr.knee_in_order_on(a, c, 0, scheme[0], "BF16", scheme[1])
    assert pr.knee_weights_only_on(a, c, *scheme) <= ordered * (1 + 1e-9)
    assert ordered <= pr.knee_on(a, c, 0, scheme[0], "BF16", scheme[1]) * (1 + 1e-9)
    at = pr.decode_in_order_on(a, c, ordered * 1.01, 0, scheme[0], "BF16", scheme[1])
    below = pr.decode_in_order_on(a, c, ordered / 1.01, 0, scheme[0], "BF16", scheme[1])
    assert at.wall == "compute-bound" and below.wall == "memory-bound"


@pytest.mark.parametrize("name", DENSE)
@pytest.mark.parametrize("scheme", [("FP8", "FP8"), ("NVFP4", "FP4")])
def test_narrow_math_gains_less_in_order_because_the_elementwise_kernels_do_not_speed_up(name, scheme):
    # far past every knee the whole step gains the ratio of the effective rates; in order, the
    # elementwise kernels' time, the same in both, dilutes it
    a, c = accelerator("B200 (HGX)"), model(name).config
    B = 1e6
    rates = pr.decode_math_rate(a, c, *scheme) / pr.decode_math_rate(a, c)
    whole = pr.decode_on(a, c, B, 0, scheme[0], "BF16", scheme[1]).ceiling / pr.decode_on(a, c, B).ceiling
    ordered = (pr.decode_in_order_on(a, c, B, 0, scheme[0], "BF16", scheme[1]).ceiling
               / pr.decode_in_order_on(a, c, B).ceiling)
    assert whole == pytest.approx(rates, rel=1e-9)
    assert 1 < ordered < rates
