"""Activation traffic (inferlimits.arithmetic.activations): the kernels of a forward pass under the book's
fusion assumptions, and the bytes one token moves between them."""
from __future__ import annotations

import dataclasses

import pytest

from inferlimits.arithmetic import activations as act
from inferlimits.data.models import model, models


def _dense_layer_numbers(c, phase):
    """By hand, for a grouped-query layer: two fused add+norms (4h each), QKV product (h in,
    q + 2kv out), rotary in place (q + kv both ways), cache write (2kv in), attention (q in, plus
    2kv from the prompt in prefill; q out), output product (q in, h out), gate-up (h in, 2I out),
    SiLU-and-multiply (2I in, I out), down (I in, h out)."""
    h, q, kv, inner = (c.hidden_size, c.num_attention_heads * c.head_dim_qk,
                       c.num_key_value_heads * c.head_dim_qk, c.intermediate_size)
    attention_reads = q + (2 * kv if phase == "prefill" else 0)
    return (8 * h + (h + q + 2 * kv) + 2 * (q + kv) + 2 * kv + (attention_reads + q) + (q + h)
            + (h + 2 * inner) + 3 * inner + (inner + h))


@pytest.mark.parametrize("name", ["Llama-3.1-8B", "Llama-3.1-70B", "Qwen2.5-32B", "Mistral-7B-v0.1"])
@pytest.mark.parametrize("phase", act.PHASES)
def test_a_dense_token_moves_what_its_kernels_read_and_write(name, phase):
    c = model(name).config
    outer = 4 * c.hidden_size + ((c.hidden_size + c.vocab_size) + (c.vocab_size + 1) if phase == "decode" else 0)
    expected = c.num_hidden_layers * _dense_layer_numbers(c, phase) + outer
    assert act.activation_numbers_per_token(c, phase) == expected
    assert act.activation_bytes_per_token(c, phase) == 2 * expected
    assert act.activation_bytes_per_token(c, phase, "FP32") == 4 * expected


def test_llama_8b_moves_about_eleven_mb_per_decode_token():
    c = model("Llama-3.1-8B").config
    assert act.activation_bytes_per_token(c) == pytest.approx(11.17e6, rel=1e-3)
    # decode writes every token's logits; prefill reads the prompt's keys and values instead
    assert act.activation_bytes_per_token(c, "prefill") < act.activation_bytes_per_token(c, "decode")


@pytest.mark.parametrize("name", list(models()))
@pytest.mark.parametrize("phase", act.PHASES)
def test_the_kinds_partition_the_traffic(name, phase):
    c = model(name).config
    parts = sum(act.activation_numbers_per_token(c, phase, (k,)) for k in act.KINDS)
    assert parts == act.activation_numbers_per_token(c, phase) > 0
    every = [k for i in range(c.num_hidden_layers) for k in act.layer_kernels(c, i, phase)]
    assert all(k.kind in act.KINDS and k.reads >= 0 and k.writes >= 0 for k in every)


@pytest.mark.parametrize("name", ["DeepSeek-V2", "DeepSeek-V3"])
def test_mla_decodes_absorbed_and_prefills_expanded(name):
    c = model(name).config
    decode = {k.name for k in act.layer_kernels(c, 0, "decode")}
    prefill = {k.name for k in act.layer_kernels(c, 0, "prefill")}
    assert {"query absorption", "value up-projection"} <= decode and "key-value up-projection" not in decode
    assert "key-value up-projection" in prefill and "query absorption" not in prefill


@pytest.mark.parametrize("name", ["DeepSeek-V2", "DeepSeek-V3"])
def test_an_moe_layer_reads_the_token_once_per_expert(name):
    c = model(name).config
    layer = c.first_k_dense_replace  # the first MoE layer
    more = dataclasses.replace(c, num_experts_per_tok=c.num_experts_per_tok + 1)
    grown = (sum(k.numbers for k in act.layer_kernels(more, layer))
             - sum(k.numbers for k in act.layer_kernels(c, layer)))
    h, inner = c.hidden_size, c.moe_intermediate_size
    assert grown == (h + 2 * inner) + 3 * inner + (inner + h) + h  # one more expert, one more input to combine


@pytest.mark.parametrize("bad", ["train", "", None])
def test_unknown_phase_raises_naming_it(bad):
    with pytest.raises(ValueError, match=r"\bphase\b"):
        act.activation_bytes_per_token(model("Llama-3.1-8B").config, bad)


@pytest.mark.parametrize("bad", [(), ("matmul",), ("product", "copy")])
def test_unknown_kinds_raise_naming_them(bad):
    with pytest.raises(ValueError, match=r"\bkinds\b"):
        act.activation_bytes_per_token(model("Llama-3.1-8B").config, kinds=bad)
