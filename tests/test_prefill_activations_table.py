"""The table that derives A, the activation bytes per token, kernel by kernel
(inferlimits.figures.tables.activation_handoffs): its rows add up to activation_bytes_per_token."""
from __future__ import annotations

import re

import pytest

from inferlimits.arithmetic import activations as act
from inferlimits.data.models import model, models
from inferlimits.figures import tables


def _rows(markdown: str) -> list[list[str]]:
    lines = markdown.splitlines()[2:]  # below the header and its alignment row
    return [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in lines]


def _bytes(cell: str) -> float:
    return float(cell.strip("*").split(" B")[0].replace(",", ""))


@pytest.mark.parametrize("name", list(models()))
@pytest.mark.parametrize("phase", act.PHASES)
def test_the_rows_add_up_to_the_activation_bytes_per_token(name, phase):
    c = model(name).config
    rows = _rows(tables.activation_handoffs(name, phase).data)
    layer, layers, total = 0.0, 0, 0.0
    for row in rows[:-1]:
        label, sums = row[0], _bytes(row[-1])
        if label.endswith("layer**"):      # one layer's subtotal: its kernels' rows above
            assert sums == layer, (name, label)
        elif label.startswith("**×"):      # that layer times the layers alike
            count = int(re.search(r"× (\d+) layers", label)[1])
            assert sums == count * layer
            total, layer, layers = total + sums, 0.0, layers + count
        else:                              # a kernel, inside a layer or outside the layers
            layer += sums
    total += layer                         # the kernels outside the layers
    assert layers == c.num_hidden_layers
    assert total == _bytes(rows[-1][-1]) == act.activation_bytes_per_token(c, phase)


def test_llama_8b_prefill_table_derives_ten_point_eight_mb_from_the_widths():
    c = model("Llama-3.1-8B").config
    text = tables.activation_handoffs("Llama-3.1-8B", "prefill").data
    assert text.splitlines()[-1].endswith("= 10.8 MB** |")
    names = [row[0] for row in _rows(text)]
    assert [k.name for k in act.layer_kernels(c, 0, "prefill")] == names[:len(act.layer_kernels(c, 0, "prefill"))]
    # every width is written out for a grouped-query model: hidden, query, key-value and MLP widths
    for cell in ("2h = 8,192", "q + 2kv = 6,144", "2i = 28,672", "i = 14,336"):
        assert f"| {cell} |" in text
    # in prefill attention reads the prompt's keys and values; in decode they come from the cache
    assert "| attention | attention | q + 2kv = 6,144 | q = 4,096 |" in text
    decode = tables.activation_handoffs("Llama-3.1-8B", "decode").data
    assert "| attention | attention | q = 4,096 | q = 4,096 |" in decode
    # the last column is in bytes, and says how it comes from the numbers; the cache write's output is K
    assert text.splitlines()[0].endswith("| bytes per token: (reads + writes) × 2 (BF16) |")
    assert "| cache write | elementwise | 2kv = 2,048 | 0 (to the cache: K) | 4,096 |" in text


def test_a_layer_run_several_times_shares_a_row_and_mla_shows_plain_numbers():
    text = tables.activation_handoffs("DeepSeek-V3", "prefill").data
    c = model("DeepSeek-V3").config
    assert f"routed expert gate and up (× {c.num_experts_per_tok})" in text
    assert "**a dense layer**" in text and "**an MoE layer**" in text
    assert " = " not in "".join(line for line in text.splitlines()[2:-1])  # no widths: MLA's differ


def test_other_precisions_and_bad_input():
    c = model("Llama-3.1-8B").config
    rows = _rows(tables.activation_handoffs("Llama-3.1-8B", "prefill", "FP32").data)
    assert _bytes(rows[-1][-1]) == act.activation_bytes_per_token(c, "prefill", "FP32")
    with pytest.raises(ValueError, match="phase"):
        tables.activation_handoffs("Llama-3.1-8B", "training")
    with pytest.raises(ValueError, match="activation_precision"):
        tables.activation_handoffs("Llama-3.1-8B", "prefill", "BF17")
