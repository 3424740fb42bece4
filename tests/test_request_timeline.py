"""Chapter 3's request timeline draws what the arithmetic computes: its TTFT mark is the prefill's
time (``prefill_point``), its TPOT mark the mean of the decode steps (``decode_point`` at batch 1,
one cached token more each step), and its time axis is the same at every control value."""
from __future__ import annotations

import pytest

from inferlimits.arithmetic.generation import decode_point, prefill_point, request_timeline
from inferlimits.data.hardware import accelerator
from inferlimits.data.models import model
from inferlimits.figures import prefill

NAMES = ["H100 SXM", "H200 SXM", "B200 (HGX)", "MI300X"]   # what chapter 3 passes
LLAMA = model("Llama-3.1-8B").config


def _trace(spec: dict, name: str) -> dict:
    return next(t for t in spec["data"] if t["name"] == name)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("prompt", [min(prefill.TIMELINE_PROMPTS), 2048, max(prefill.TIMELINE_PROMPTS)])
def test_the_marks_are_the_arithmetics_ttft_and_tpot(name, prompt):
    a = accelerator(name)
    P, BW = a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s
    spec = prefill.timeline_spec(NAMES, name, "Llama-3.1-8B", "BF16", prompt)
    ttft_ms = prefill_point(LLAMA, P, BW, prompt).time_s * 1e3
    steps_s = [1 / decode_point(LLAMA, P, BW, 1, prompt + j).ceiling for j in range(prefill.OUTPUT_TOKENS - 1)]
    tpot_ms = sum(steps_s) / len(steps_s) * 1e3

    ttft = _trace(spec, "time to first token (TTFT)")
    assert ttft["x"] == [0.0, pytest.approx(ttft_ms, rel=1e-12)]
    assert ttft["text"][0] == f"time to first token {ttft_ms:,.1f} ms"
    tpot = _trace(spec, "time per output token (TPOT)")
    assert f"time per output token {tpot_ms:,.2f} ms" in tpot["text"]
    assert tpot["x"][0] == pytest.approx(ttft_ms, rel=1e-12)
    end_ms = ttft_ms + sum(steps_s) * 1e3
    assert tpot["x"][1] == pytest.approx(end_ms, abs=1e-3)

    blocks = [t for t in spec["data"] if t["type"] == "bar"]
    assert blocks[0]["x"] == [pytest.approx(ttft_ms, abs=1e-3)]
    assert blocks[1]["x"] == [pytest.approx(s * 1e3, abs=1e-3) for s in steps_s]
    assert steps_s == sorted(steps_s) and steps_s[-1] > steps_s[0], "each step reads one more token of cache"
    ticks = _trace(spec, "a new token appears")["x"]
    assert len(ticks) == prefill.OUTPUT_TOKENS and ticks[0] == pytest.approx(ttft_ms, abs=1e-3)


def test_the_time_axis_is_fixed_and_holds_every_request():
    ranges, ends = set(), []
    for name in NAMES:
        for precision in prefill.PRECISIONS:
            for prompt in prefill.TIMELINE_PROMPTS:
                spec = prefill.timeline_spec(NAMES, name, "Llama-3.1-8B", precision, prompt)
                ranges.add(tuple(spec["layout"]["xaxis"]["range"]))
                ends.append(_trace(spec, "time per output token (TPOT)")["x"][1])
    assert len(ranges) == 1
    (lo, hi), = ranges
    assert lo == 0 and max(ends) <= hi < max(ends) + prefill.TIME_STEP_MS


def test_request_timeline_adds_up():
    a = accelerator("H100 SXM")
    r = request_timeline(LLAMA, a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s, 4096, 8)
    assert r.output_tokens == 8 and len(r.token_times_s) == 8
    assert r.token_times_s[-1] == pytest.approx(r.end_to_end_s)
    assert r.time_per_output_token_s == pytest.approx((r.end_to_end_s - r.time_to_first_token_s) / 7)
    # while memory binds, each step is longer than the one before by one token of cache over the bandwidth
    from inferlimits.data.models import kv_bytes_per_token
    grow = kv_bytes_per_token(LLAMA) / a.bandwidth_bytes_per_s
    assert r.decode_steps_s[1] - r.decode_steps_s[0] == pytest.approx(grow, rel=1e-6)
    with pytest.raises(ValueError, match="output_tokens"):
        request_timeline(LLAMA, a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s, 4096, 1)
    with pytest.raises(ValueError, match="output_tokens"):
        request_timeline(LLAMA, a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s, LLAMA.max_position_embeddings, 2)
