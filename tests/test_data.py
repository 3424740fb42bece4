"""The data files: every row sourced, units stated, and the derived parameter counts equal to
the published ones (exactly, or to the precision the publisher rounds to)."""
from __future__ import annotations

import pytest

from inferlimits.data.hardware import MATH_PRECISIONS, accelerators
from inferlimits.data.models import active_param_count, embedding_params, models, multiplied_params_per_token, param_count


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
    assert a.sparse_bf16_flops_per_s > a.dense_bf16_flops_per_s, "dense and sparse swapped?"
    assert (a.measured_matmul_flops_per_s is None) == (a.measured_source is None)
    if a.measured_matmul_flops_per_s:
        assert a.measured_matmul_flops_per_s < a.dense_bf16_flops_per_s


@pytest.mark.parametrize("a", accelerators().values(), ids=lambda a: a.name)
def test_every_accelerator_states_every_math_precision_with_its_source(a):
    # a rate with its source, or the reason the part has no such mode: never a silent gap
    for p in MATH_PRECISIONS:
        r = a.math_rate(p)
        # BF16's source is the row's datasheet source; every narrower rate says where it is printed
        assert len(r.source.split()) >= (3 if p == "BF16" else 8), f"{a.name} {p}: too short a source: {r.source!r}"
        if not r.supported:
            assert r.sparse_flops_per_s is None
            continue
        # a narrower format never multiplies slower than a wider one of the same kind on one part,
        # and dense is never the sparse figure
        if r.sparse_flops_per_s is not None:
            assert r.sparse_flops_per_s > r.dense_flops_per_s, f"{a.name} {p}: dense and sparse swapped?"
    for wide, narrow in (("BF16", "FP8"), ("FP8", "FP6"), ("FP6", "FP4")):
        if a.supports(narrow):
            assert a.math_flops_per_s(narrow) >= a.math_flops_per_s(wide), f"{a.name}: {narrow} slower than {wide}"


@pytest.mark.parametrize("a", [a for a in accelerators().values() if a.datacenter], ids=lambda a: a.name)
def test_every_datacenter_part_has_a_sourced_fp8_rate_or_says_why_not(a):
    fp8 = a.math_rate("FP8")
    if a.supports("FP8"):
        assert fp8.dense_flops_per_s >= 2 * a.dense_bf16_flops_per_s * 0.999  # twice BF16 on every such part
    else:
        assert "no FP8" in fp8.source
    # FP4 where the generation has it: Blackwell and CDNA 4 parts, none before
    assert a.supports("FP4") == (a.year >= 2024 and a.vendor == "NVIDIA" and a.name.startswith("B")
                                 or a.name == "MI355X")


def test_math_precision_is_refused_by_name_where_a_part_has_none():
    a100 = accelerators()["A100 80GB SXM"]
    with pytest.raises(ValueError, match=r"math_precision FP8: the A100 80GB SXM has no FP8"):
        a100.math_flops_per_s("FP8")
    with pytest.raises(ValueError, match=r"math_precision must be one of"):
        a100.math_flops_per_s("FP3")


@pytest.mark.parametrize("m", models().values(), ids=lambda m: m.name)
def test_model_rows_have_sources(m):
    assert len(m.source.split()) >= 3 and len(m.published_params_source.split()) >= 3


@pytest.mark.parametrize("m", [m for m in models().values() if m.published_params_exact], ids=lambda m: m.name)
def test_derived_count_equals_the_exact_published_count(m):
    assert param_count(m.config) == m.published_params


@pytest.mark.parametrize("m", [m for m in models().values() if not m.published_params_exact], ids=lambda m: m.name)
def test_derived_counts_round_to_the_published_billions(m):
    assert round(param_count(m.config) / 1e9) == round(m.published_params / 1e9)


@pytest.mark.parametrize("m", [m for m in models().values() if m.published_active_params], ids=lambda m: m.name)
def test_derived_active_counts_agree_with_the_published_ones_to_the_digits_written(m):
    # publishers count "active" two ways: with the input embedding table (Mistral, Qwen) or without
    # it, the weights a token multiplies (DeepSeek, OpenAI); each row says which. The derived count
    # must agree to the last digit the publisher writes, rounded or cut off (Qwen's 3.35B is "3.3B")
    c = m.config
    derived = active_param_count(c) if m.published_active_includes_embedding else multiplied_params_per_token(c)
    written = f"{m.published_active_params / 1e9:g}"
    unit = 10.0 ** -(len(written.split(".")[1]) if "." in written else 0) * 1e9
    assert abs(derived - m.published_active_params) < unit, (derived, written)
    # and the other way of counting would not always agree
    assert m.config.is_moe and active_param_count(c) - multiplied_params_per_token(c) == embedding_params(c)


def test_at_least_five_mixture_of_experts_models_with_exact_or_published_counts():
    moe = [m for m in models().values() if m.config.is_moe]
    assert len(moe) >= 5
    assert sum(m.published_params_exact for m in moe) >= 5


@pytest.mark.parametrize("m", [m for m in models().values() if m.published_checkpoint_gib], ids=lambda m: m.name)
def test_stored_bytes_in_the_published_format_match_the_published_checkpoint(m):
    from inferlimits.data.models import weight_bytes
    from inferlimits.data.units import GIB
    # gpt-oss: MXFP4 experts (4.25 bits), everything else in BF16, to the 0.1 GiB the card writes
    assert round(weight_bytes(m.config, m.published_format) / GIB, 1) == m.published_checkpoint_gib


def test_dense_models_have_no_separate_active_count():
    for m in models().values():
        if not m.config.is_moe:
            assert active_param_count(m.config) == param_count(m.config)


@pytest.mark.parametrize("m", models().values(), ids=lambda m: m.name)
def test_every_model_states_the_context_its_publisher_supports(m):
    assert m.context_length >= 2048 and len(m.context_length_source.split()) >= 5
    # the position table may be larger than the supported context, never smaller
    assert m.config.max_position_embeddings >= m.context_length
