"""The tables of chapter 7 (``figures.precision``): six columns at most, and split without losing
or changing a figure of the one table they replace."""
from __future__ import annotations

import pytest

from inferlimits.data.hardware import accelerators
from inferlimits.figures import precision, tables

SCHEMES = [("BF16", "BF16"), ("FP8", "BF16"), ("INT4", "BF16"), ("FP8", "FP8"), ("INT4", "FP8"),
           ("NVFP4", "FP4"), ("MXFP4", "FP4")]


def _rows(markdown: str) -> list[list[str]]:
    lines = markdown.splitlines()
    return [[c.strip() for c in line.strip("|").split("|")] for line in lines if not line.startswith("|:")]


TABLES = [precision.MAIN_COLUMNS, precision.KNEE_COLUMNS, precision.REFINED_COLUMNS]


@pytest.mark.parametrize("columns", TABLES)
def test_each_table_of_pairs_has_six_columns_at_most(columns):
    header = _rows(precision.schemes_table("Llama-3.1-8B", "B200 (HGX)", SCHEMES, 8192, columns).data)[0]
    assert len(header) <= 6, header


def test_the_three_tables_hold_every_figure_of_the_one_they_replace():
    whole = _rows(tables.precision_schemes("Llama-3.1-8B", "B200 (HGX)", SCHEMES, 8192).data)
    parts = [_rows(precision.schemes_table("Llama-3.1-8B", "B200 (HGX)", SCHEMES, 8192, columns).data)
             for columns in TABLES]
    assert sorted(h for columns in TABLES for h in columns) == sorted(precision.SCHEME_COLUMNS)
    for i, w in enumerate(whole[1:], start=1):
        rows = [p[i] for p in parts]
        assert {r[0] for r in rows} == {w[0]}
        assert sorted(w[1:]) == sorted(c for r in rows for c in r[1:]), (w, rows)


def test_a_pair_the_part_cannot_run_says_why():
    rows = _rows(precision.schemes_table("Llama-3.1-8B", "H100 SXM", [("NVFP4", "FP4")], 8192).data)
    assert "FP4" in rows[1][1] and set(rows[1][2:]) == {"–"}
    rows = _rows(precision.schemes_table("Llama-3.1-70B", "H100 SXM", [("BF16", "BF16")], 8192).data)
    assert rows[1][1].startswith("does not fit")


def test_an_unknown_column_is_refused_by_name():
    with pytest.raises(ValueError, match="columns"):
        precision.schemes_table("Llama-3.1-8B", "B200 (HGX)", SCHEMES, 8192, ("tokens per watt",))


def test_every_generation_lists_parts_of_the_data_and_every_datacenter_part_has_one():
    named = {n for _, _, names in precision.GENERATIONS for n in names}
    assert named <= set(accelerators())
    assert {n for n, a in accelerators().items() if a.datacenter} <= named
    assert len(_rows(precision.generations().data)[0]) <= 6
