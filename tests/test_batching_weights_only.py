"""Chapter 4's first story counts the weights alone: its throughput and roofline figures take
``activations=False``. Drawn that way, the memory ceiling is B x BW / W, the knee sits at
R x W / F (the balance point, for BF16 weights), and a step's intensity is its batch; the default
figures, which count the activations, are left as they were."""
from __future__ import annotations

import pytest

from inferlimits.arithmetic.generation import decode_flops_per_token, weight_bytes_read_per_step
from inferlimits.data.hardware import accelerator
from inferlimits.data.models import model
from inferlimits.figures import batching
from inferlimits.figures.batching import CURVE, rounded

MODEL, CHIP = "Llama-3.1-8B", "B200 (HGX)"


def _trace(spec: dict, name_start: str) -> dict:
    return next(t for t in spec["data"] if t["name"].startswith(name_start))


def test_weights_only_memory_ceiling_is_batch_times_bandwidth_over_weights():
    a, c = accelerator(CHIP), model(MODEL).config
    spec = batching.throughput_spec(MODEL, CHIP, 64, activations=False)
    w = weight_bytes_read_per_step(c)
    assert _trace(spec, "memory ceiling")["y"] == rounded([b * a.bandwidth_bytes_per_s / w for b in CURVE])


def test_weights_only_throughput_marks_the_knee_at_the_balance_point_for_bf16():
    a, c = accelerator(CHIP), model(MODEL).config
    spec = batching.throughput_spec(MODEL, CHIP, 64, activations=False)
    knee = _trace(spec, "knee")
    balance = a.dense_bf16_flops_per_s / a.bandwidth_bytes_per_s
    ratio = weight_bytes_read_per_step(c) / decode_flops_per_token(c)
    assert knee["x"][0] == pytest.approx(balance * ratio)
    assert ratio == pytest.approx(1.0)   # BF16: 2 bytes and 2 FLOPs per weight
    assert knee["y"][1] == pytest.approx(a.dense_bf16_flops_per_s / decode_flops_per_token(c))


def test_the_default_figures_count_the_activations_and_mark_no_knee():
    spec = batching.throughput_spec(MODEL, CHIP, 64)
    assert not any(t["name"].startswith("knee") for t in spec["data"])
    assert "weights only" not in spec["layout"]["title"]["text"]
    weights_only = batching.throughput_spec(MODEL, CHIP, 64, activations=False)
    assert _trace(spec, "memory ceiling")["y"][-1] < _trace(weights_only, "memory ceiling")["y"][-1]


@pytest.mark.parametrize("batch", [1, 64, 256, 1024])
def test_weights_only_roofline_puts_a_bf16_step_at_an_intensity_equal_to_its_batch(batch):
    spec = batching.roofline_spec(MODEL, CHIP, batch, activations=False)
    step = _trace(spec, "decode step")
    assert step["x"][0] == pytest.approx(batch)
    with_activations = batching.roofline_spec(MODEL, CHIP, batch)
    assert _trace(with_activations, "decode step")["x"][0] < batch


@pytest.mark.parametrize("panel", [batching.throughput_panel, batching.roofline_panel])
def test_weights_only_panels_build_for_every_accelerator_the_chapter_offers(panel):
    chips = ["A100 80GB SXM", "H100 SXM", "H200 SXM", "B200 (HGX)", "MI300X", "MI325X"]
    p = panel([MODEL, "Qwen2.5-32B"], chips, MODEL, CHIP, 64, div_id="fig-test", activations=False)
    assert len(p.static.data) > 0
    p.values["model_name"] = "Qwen2.5-32B"
    assert p.spec(**p.values)["layout"]["title"]["text"].startswith("Qwen2.5-32B")


def test_thin_no_overlap_gives_each_line_style_one_meaning():
    """Chapter 4 draws the curves without overlap thin and solid, at full colour (the site's 3:1
    contrast), so that dashed means the
    memory ceiling alone; by default they stay dashed, as other callers draw them."""
    spec = batching.throughput_spec(MODEL, CHIP, 64, activations=False, thin_no_overlap=True)
    dashed = [t["name"] for t in spec["data"] if t.get("line", {}).get("dash") == "dash"]
    assert dashed == [_trace(spec, "memory ceiling")["name"]]
    for who in ("aggregate", "each user"):
        thin, thick = _trace(spec, f"{who}, no overlap"), _trace(spec, f"{who}, ")
        assert "dash" not in thin["line"] and "opacity" not in thin and thin["line"]["width"] < thick["line"]["width"]
        assert thin["line"]["color"] == thick["line"]["color"]
    default = batching.throughput_spec(MODEL, CHIP, 64, activations=False)
    assert _trace(default, "aggregate, no overlap")["line"]["dash"] == "dash"
    assert "opacity" not in _trace(default, "each user, no overlap")
