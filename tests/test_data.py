"""The data files: every row sourced, units stated, and the derived parameter counts equal to
the published ones (exactly, or to the precision the publisher rounds to)."""
from __future__ import annotations

import pytest

from inferlimits.hardware import accelerators
from inferlimits.models import active_param_count, embedding_params, models, param_count


@pytest.mark.parametrize("a", accelerators().values(), ids=lambda a: a.name)
def test_accelerator_rows_have_sources_and_units(a):
    assert len(a.source.split()) >= 3 and a.notes
    # the capacity the device reports, with a public log of it, or the reason none is used
    assert len(a.capacity_source.split()) >= 8
    if a.capacity_reported:
        assert "smi" in a.capacity_source and a.reported_capacity_mib > 1000
    else:
        assert "cautious" in a.capacity_source
    assert (a.last_level_cache_bytes is None) == (a.last_level_cache_source is None)
    assert (a.dense_fp8_flops_per_s is None) == (a.dense_fp8_source is None)
    if a.dense_fp8_flops_per_s:
        assert a.fp8_math and a.dense_fp8_flops_per_s > a.dense_bf16_flops_per_s
    assert a.sparse_bf16_flops_per_s > a.dense_bf16_flops_per_s, "dense and sparse swapped?"
    assert (a.measured_matmul_flops_per_s is None) == (a.measured_source is None)
    if a.measured_matmul_flops_per_s:
        assert a.measured_matmul_flops_per_s < a.dense_bf16_flops_per_s


@pytest.mark.parametrize("m", models().values(), ids=lambda m: m.name)
def test_model_rows_have_sources(m):
    assert len(m.source.split()) >= 3 and len(m.published_params_source.split()) >= 3


@pytest.mark.parametrize("m", [m for m in models().values() if m.published_params_exact], ids=lambda m: m.name)
def test_derived_count_equals_the_exact_published_count(m):
    assert param_count(m.config) == m.published_params


@pytest.mark.parametrize("m", [m for m in models().values() if not m.published_params_exact], ids=lambda m: m.name)
def test_derived_counts_round_to_the_published_billions(m):
    c = m.config
    assert round(param_count(c) / 1e9) == round(m.published_params / 1e9)
    # "activated" counts leave out the input embedding table: a token reads one row of it (a dense
    # model with a rounded published size, such as DeepSeek-LLM-67B, states no separate active count)
    if m.published_active_params is not None:
        assert round((active_param_count(c) - embedding_params(c)) / 1e9) == round(m.published_active_params / 1e9)


def test_dense_models_have_no_separate_active_count():
    for m in models().values():
        if not m.config.is_moe:
            assert active_param_count(m.config) == param_count(m.config)


@pytest.mark.parametrize("m", models().values(), ids=lambda m: m.name)
def test_every_model_states_the_context_its_publisher_supports(m):
    assert m.context_length >= 2048 and len(m.context_length_source.split()) >= 5
    # the position table may be larger than the supported context, never smaller
    assert m.config.max_position_embeddings >= m.context_length
