"""``figures.tables.moe_models``: its optional ``part`` splits the eleven-column table into tables
of six columns or fewer, and leaves the full table as it was."""
import pytest

from inferlimits.figures import tables


def _rows(text: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip("| ").split(" | ")] for line in text.splitlines() if not line.startswith("|:")]


def test_the_full_table_keeps_its_eleven_columns():
    header = _rows(tables.moe_models("H200 SXM").data)[0]
    assert len(header) == 11 and header[4] == "batch touching half of them"
    assert header[-1] == "H200 SXMs to hold it (a power of two)"


@pytest.mark.parametrize("part", sorted(tables.MOE_MODEL_PARTS))
def test_each_part_is_a_short_table_of_the_full_tables_cells(part):
    full = _rows(tables.moe_models("H200 SXM").data)
    some = _rows(tables.moe_models("H200 SXM", part=part).data)
    assert len(some[0]) <= 6 and some[0][0] == "model" and len(some) == len(full)
    for short, long in zip(some, full):
        assert short == [long[i] for i in tables.MOE_MODEL_PARTS[part]]


def test_the_parts_together_give_every_column():
    assert set().union(*tables.MOE_MODEL_PARTS.values()) == set(range(11))


def test_the_batch_touching_half_the_experts_waits_for_its_own_table():
    assert "batch touching half" not in tables.moe_models("H200 SXM", part="weights").data
    assert "batch touching half" not in tables.moe_models("H200 SXM", part="bytes").data


def test_an_unknown_part_is_refused():
    with pytest.raises(ValueError, match="part"):
        tables.moe_models("H200 SXM", part="cache")


def test_names_keep_only_those_models_in_the_datas_order():
    full = _rows(tables.moe_models("H200 SXM", part="weights").data)
    some = _rows(tables.moe_models("H200 SXM", part="weights", names=["gpt-oss-120b", "DeepSeek-V3"]).data)
    assert [r[0] for r in some[1:]] == ["DeepSeek-V3", "gpt-oss-120b"]
    assert all(r in full for r in some)


@pytest.mark.parametrize("names", [[], ["Llama-3.1-8B"], ["no such model"], "DeepSeek-V3"])
def test_names_that_are_not_mixtures_of_experts_are_refused(names):
    with pytest.raises(ValueError, match="names"):
        tables.moe_models("H200 SXM", names=names)
