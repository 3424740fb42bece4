"""The decode knee as a range (chapter 8): from the weights alone, every hand-off between kernels
kept on chip, up to every hand-off through HBM in BF16; counted under one max() and with the
kernels in order. ``precision.knee_in_order_weights_only_on`` and ``figures.moe.knee_ranges``."""
from __future__ import annotations

import math

import pytest

from inferlimits.arithmetic import precision as pr
from inferlimits.arithmetic.activations import activation_bytes_by_part
from inferlimits.data.hardware import accelerator
from inferlimits.data.models import model, models, routed_expert_params
from inferlimits.data.units import bytes_per_element
from inferlimits.figures import moe as moefig

DENSE = [n for n, m in models().items() if not m.config.is_moe]
MOE = [n for n, m in models().items() if m.config.is_moe]
SCHEMES = [("BF16", "BF16"), ("FP8", "FP8"), ("FP8", "BF16"), ("NVFP4", "FP4")]


@pytest.mark.parametrize("name", MOE)
def test_the_routed_experts_weights_alone_turn_at_r_b_over_2_rows_each(name):
    # each expert's product is compute-bound once its rows B k / E reach R b / 2; the dense products,
    # whose rows are the whole batch, get there first, so the experts set the knee in order
    a, c = accelerator("B200 (HGX)"), model(name).config
    rows = pr.ridge_flop_per_byte(a) * bytes_per_element("BF16") / 2
    expected = rows * c.routed_experts / c.num_experts_per_tok
    assert pr.knee_in_order_weights_only_on(a, c) == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize("name", DENSE[:4] + MOE)
@pytest.mark.parametrize("scheme", SCHEMES)
def test_each_range_runs_from_the_weights_alone_up_to_every_hand_off(name, scheme):
    a, c = accelerator("B200 (HGX)"), model(name).config
    wp, mp = scheme
    assert pr.knee_weights_only_on(a, c, wp, mp) < pr.knee_on(a, c, 0, wp, "BF16", mp)
    low, high = pr.knee_in_order_weights_only_on(a, c, wp, mp), pr.knee_in_order_on(a, c, 0, wp, "BF16", mp)
    assert low < high
    # the weights alone are what a step's products must hide in order at the least, so the knee of
    # the weights under one max() (any part's spare math hides any part's bytes) comes no later
    assert pr.knee_weights_only_on(a, c, wp, mp) <= low * (1 + 1e-9)
    # just past the low end every kind of product does more math than it takes to read its own
    # weights; just before it, some kind does less
    act = activation_bytes_by_part(c)

    def spare(B):
        step = pr.decode_in_order_on(a, c, B, 0, wp, "BF16", mp)
        return [m - (b - B * act[p] / a.bandwidth_bytes_per_s) for p, m, b in step.parts
                if p in ("product", "routed expert")]

    assert all(x >= 0 for x in spare(low * 1.001)) and any(x < 0 for x in spare(low / 1.001))


@pytest.mark.parametrize("name", DENSE[:4])
def test_for_a_dense_model_the_low_end_in_order_is_the_ridge_times_the_weights_per_flop(name):
    # one kind of product, every token its row: B F / P >= W / BW at B = (P / BW)(W / F) for the
    # products alone (the output head included, in BF16 like the rest here)
    a, c = accelerator("H100 SXM"), model(name).config
    step = pr.decode_in_order_on(a, c, 1.0)
    (math_s, memory_s), = [(m, b) for p, m, b in step.parts if p == "product"]
    weights_s = memory_s - activation_bytes_by_part(c)["product"] / a.bandwidth_bytes_per_s
    assert pr.knee_in_order_weights_only_on(a, c) == pytest.approx(weights_s / math_s, rel=1e-6)


def test_the_weights_alone_knee_in_order_rejects_a_scheme_that_cannot_run():
    a, c = accelerator("B200 (HGX)"), model("DeepSeek-V3").config
    with pytest.raises(ValueError):
        pr.knee_in_order_weights_only_on(a, c, "BF16", "FP4")


@pytest.mark.parametrize("x, text", [(281.25, "280"), (5145.7, "5,100"), (7958.96, "8,000"), (10354.2, "10,000"),
                                     (13921.7, "14,000"), (99.6, "100"), (1.0, "1"), (math.inf, "never")])
def test_two_figures(x, text):
    assert moefig.two_figures(x) == text


@pytest.mark.parametrize("x", [0, -3.0, math.nan, -math.inf])
def test_two_figures_rejects_what_is_not_a_batch(x):
    with pytest.raises(ValueError, match="x"):
        moefig.two_figures(x)


def test_the_knee_table_has_one_row_per_scheme_with_both_ranges():
    rows = [("DeepSeek-V3", "FP8", "FP8", "W8A8"), ("Qwen3-30B-A3B", "FP8", "FP8", "W8A8")]
    text = moefig.knee_ranges("B200 (HGX)", rows).data
    lines = text.splitlines()
    assert len(lines) == 2 + len(rows)
    a, c = accelerator("B200 (HGX)"), model("DeepSeek-V3").config
    low, high = pr.knee_weights_only_on(a, c, "FP8", "FP8"), pr.knee_on(a, c, 0, "FP8", "BF16", "FP8")
    assert f"{moefig.two_figures(low)} – {moefig.two_figures(high)}" in lines[2]
    # Qwen3-30B-A3B with FP8 math: its activations keep every step memory-bound under one max()
    assert "– never" in lines[3] and lines[3].rstrip(" |").endswith("–")


def test_the_knee_table_refuses_a_scheme_the_part_cannot_run():
    with pytest.raises(ValueError, match="rows"):
        moefig.knee_ranges("H100 SXM", [("gpt-oss-120b", "MXFP4 experts", "FP4", "W4A4")])


def test_one_expert_of_deepseek_v3_is_three_matrices():
    # the rows argument above counts b bytes per weight of routed_expert_params
    c = model("DeepSeek-V3").config
    assert routed_expert_params(c) == 3 * c.hidden_size * c.expert_width


def test_the_knee_table_is_weight_format_by_math_format_by_whole_step_and_kernels_in_order():
    text = moefig.knee_ranges("B200 (HGX)", [("gpt-oss-120b", "MXFP4 experts", "FP8", "W4A8"),
                                             ("DeepSeek-V3", "BF16", "BF16", "")]).data
    header, _, w4a8, bf16 = text.splitlines()
    columns = [c.strip() for c in header.strip("| ").split(" | ")]
    assert len(columns) <= 6
    assert any(c.startswith("knee, whole step") for c in columns)
    assert any(c.startswith("knee, kernels in order") for c in columns)
    assert "| MXFP4 experts × FP8 (W4A8) |" in w4a8 and "| BF16 × BF16 |" in bf16
