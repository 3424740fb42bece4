"""Published measurements against the book's ceilings: every row complete and sourced, no measured
rate above its ceiling, every measured setup fitting in the memory it ran in, and the data covering
what the appendix "How close do real systems get?" draws its lessons from."""
from __future__ import annotations

import dataclasses
import re

import pytest

from inferlimits.data import datafiles
from inferlimits.data.hardware import device
from inferlimits.arithmetic.measured import (NEAR, PER_SEQUENCE, Comparison, bytes_per_weight, compare, comparisons,
                                             implied_bytes_per_step, math_rate)
from inferlimits.data.measurements import DECODE_METRICS, METRICS, kernel_measurements, measurements
from inferlimits.data.models import model
from inferlimits.data.units import formats

ROWS = measurements()
#: a URL, a repository (owner/name) with a file in it or a pull request, or the book's source document
WHERE = re.compile(r"https?://|\b[\w.-]+/[\w.-]+\b.*(\.\w+\b|pull request)|the book's main source")


def test_there_are_at_least_25_published_points():
    assert len(ROWS) >= 25


@pytest.mark.parametrize("key", ROWS)
def test_every_row_is_complete_and_sourced(key):
    m = ROWS[key]
    model(m.model), device(m.accelerator)  # both in the data
    assert m.weight_precision in formats() and m.metric in METRICS
    assert m.math_precision in ("BF16", "FP16", "FP8", "INT8", "FP4", "unstated")
    assert m.kv_precision in ("BF16", "FP16", "FP8", "unstated")
    assert m.gpus >= 1 and m.value > 0
    assert re.fullmatch(r"\d{4}-\d\d-\d\d|undated", m.date)
    assert WHERE.search(m.source), f"{key}: the source names no URL, repository path or document: {m.source}"
    assert len(m.quote) >= 10 and len(m.setup) >= 40
    if m.metric in PER_SEQUENCE and m.sequences is None:
        assert not m.clear, f"{key}: a per-sequence rate without its batch is not clear"
    if m.sequences is None and (m.input_tokens is None or m.output_tokens is None):
        assert not m.clear, f"{key}: a row without its batch or its lengths is not clear"


@pytest.mark.parametrize("key", ROWS)
def test_no_measured_rate_is_above_its_ceiling(key):
    """A point above the roof is a bug in the data or in the model, never tolerated."""
    c = compare(ROWS[key])
    assert 0 < c.measured <= c.ceiling, f"{key}: measured {c.measured:g} above the ceiling {c.ceiling:g} {c.unit}"


@pytest.mark.parametrize("key", ROWS)
def test_every_measured_setup_fits_in_the_memory_it_ran_in(key):
    assert compare(ROWS[key]).fits_whole is not False, f"{key} ran, but the book says it does not fit in all of memory"


def test_the_data_cover_what_the_appendix_discusses():
    cs = comparisons().values()

    def any_(pred) -> bool:
        return any(pred(c.measurement) for c in cs)

    batch1 = {c.measurement.accelerator for c in cs if c.measurement.batch == 1 and c.measurement.metric in DECODE_METRICS}
    assert {"A100 80GB SXM", "H100 SXM"} <= batch1
    assert any_(lambda m: m.accelerator == "MI300X" and m.batch == 1)
    assert any_(lambda m: m.weight_precision == "INT8") and any_(lambda m: m.weight_precision == "INT4")
    assert any_(lambda m: (m.batch or 0) >= 64)
    assert any_(lambda m: m.metric == "ms_to_first_token")
    assert {m.gpus for m in ROWS.values()} >= {2, 4, 8}
    assert any_(lambda m: "eager" in m.framework.lower()) and any_(lambda m: "compile" in m.framework.lower())
    assert any_(lambda m: "CPU" in device(m.accelerator).kind) and any_(lambda m: m.accelerator.startswith("Apple"))
    assert any_(lambda m: m.model == "Qwen2.5-32B" and m.accelerator == "A100 80GB SXM")  # the worked example


def test_the_book_counts_the_bytes_the_sources_report():
    """Where a source reports the bandwidth its run reached (gpt-fast: its model's bytes times its
    rate), the bytes per token it implies agree with the weights the book counts a step reading."""
    checked = 0
    for c in comparisons().values():
        implied = implied_bytes_per_step(c.measurement)
        if implied is not None:
            assert abs(implied / c.weight_bytes - 1) < 0.07, (c.measurement.key, implied, c.weight_bytes)
            checked += 1
    assert checked >= 5


def test_int4_groups_carry_their_scales():
    # a row's own groups (gpt-fast's: a 16-bit scale and zero point per 32) replace the format's
    # default (GPTQ/AWQ's 20 bits per 128), never add to them
    assert bytes_per_weight("INT4", 32) == 0.5 + 4 / 32
    assert bytes_per_weight("INT4") == (4 + 20 / 128) / 8


def test_the_rule_names_the_wall_within_a_factor_of_two():
    c = next(iter(comparisons().values()))
    near = dataclasses.replace(c, measured=c.ceiling * NEAR)
    far = dataclasses.replace(c, measured=c.ceiling * NEAR * 0.99)
    assert near.regime == c.wall and far.regime != c.wall
    assert isinstance(c, Comparison)


def test_an_unknown_metric_or_a_missing_fp8_rate_is_refused():
    m = next(iter(ROWS.values()))
    with pytest.raises(ValueError, match="metric"):
        compare(dataclasses.replace(m, metric="joules_per_token"))
    with pytest.raises(ValueError, match="math_precision FP8"):
        math_rate(device("A100 80GB SXM"), "FP8")


def test_a_row_without_a_source_is_refused(monkeypatch):
    read = datafiles.read
    broken = re.sub(r'^source = ".*"$', 'source = ""', read("measurements.toml"), count=1, flags=re.M)
    monkeypatch.setattr(datafiles, "read", lambda name: broken if name == "measurements.toml" else read(name))
    datafiles.clear_caches()
    try:
        with pytest.raises(ValueError, match="give source"):
            measurements()
    finally:
        monkeypatch.undo()
        datafiles.clear_caches()


# ---- single kernels (data/kernels.toml) ------------------------------------------------------

KERNELS = kernel_measurements()


@pytest.mark.parametrize("key", KERNELS)
def test_every_kernel_measurement_is_sourced_and_below_its_roof(key):
    k = KERNELS[key]
    assert WHERE.search(k.source) and len(k.quote) >= 40 and len(k.setup) >= 40
    if k.metric == "batch_range":
        assert 1 <= k.low < k.high
        return
    a = device(k.accelerator)
    if k.metric == "tflops":
        assert 0 < k.value * 1e12 <= a.dense_bf16_flops_per_s, f"{key}: above the part's BF16 peak"
    else:
        assert 0 < k.value * 1e9 <= a.bandwidth_bytes_per_s, f"{key}: above the part's bandwidth"


def test_flashmla_reaches_at_most_the_roof_at_the_intensity_the_book_computes():
    # the source's own ratio h_q (d_k + d_v) / d_k is the book's MLA decode intensity, per cached byte
    from inferlimits.arithmetic.generation import attention_flops_per_token
    from inferlimits.data.models import kv_bytes_per_token

    c, a = model("DeepSeek-V3").config, device("H100 SXM")
    intensity = attention_flops_per_token(c, 1) / kv_bytes_per_token(c)
    d_k, d_v = c.kv_lora_rank + c.qk_rope_head_dim, c.kv_lora_rank
    assert intensity == pytest.approx(c.num_attention_heads * (d_k + d_v) / d_k)
    roof = min(a.dense_bf16_flops_per_s, intensity * a.bandwidth_bytes_per_s)
    assert KERNELS["flashmla_compute"].value * 1e12 <= roof
