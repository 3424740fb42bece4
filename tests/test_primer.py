"""The primer's figures: the diagram's shapes come from the config, and the bytes of a decode
step split into parts that sum to what the arithmetic charges the step."""
from __future__ import annotations

import dataclasses
import math

import pytest

from inferlimits.arithmetic.generation import STEP_PARTS, decode_point, decode_step_bytes_by_part
from inferlimits.data.models import (_attention_weights, embedding_params, mlp_params_per_layer, model, param_count,
                                     stored_weights)
from inferlimits.figures import primer

B200 = dict(peak_flop_per_s=2.25e15, bandwidth_bytes_per_s=8e12)


@pytest.mark.parametrize("name", ["Llama-3.1-8B", "Qwen3-32B", "DeepSeek-V3", "gpt-oss-120b", "Mistral-7B-v0.1",
                                  "Llama-3.2-1B"])
@pytest.mark.parametrize("batch, context, precision", [(1, 0, "BF16"), (8, 8192, "FP8"), (64, 32_768, "INT4")])
def test_the_parts_of_a_decode_step_sum_to_its_bytes(name, batch, context, precision):
    c = model(name).config
    parts = decode_step_bytes_by_part(c, batch, context, precision)
    assert list(parts) == list(STEP_PARTS) and all(v >= 0 for v in parts.values())
    d = decode_point(c, batch=batch, context_tokens=context, weight_precision=precision, **B200)
    assert math.isclose(sum(parts.values()), d.bytes, rel_tol=1e-12)
    assert math.isclose(parts["KV cache"], d.cache_bytes, rel_tol=1e-12)
    assert math.isclose(parts["embedding rows"] + parts["other activations"], d.activation_bytes, rel_tol=1e-12)
    weights = sum(parts[p] for p in ("attention projections", "MLP", "norms and biases", "LM head"))
    assert math.isclose(weights, d.weight_bytes, rel_tol=1e-12)


def test_a_step_of_llama_reads_one_embedding_row_and_every_other_weight():
    c = model("Llama-3.1-8B").config
    parts = decode_step_bytes_by_part(c)
    assert parts["embedding rows"] == 2 * c.hidden_size * 2       # a row of BF16 read, and written out
    assert parts["attention projections"] == c.num_hidden_layers * _attention_weights(c).matrices * 2
    assert parts["LM head"] == embedding_params(c) * 2 and parts["KV cache"] == 0
    doubled = decode_step_bytes_by_part(c, batch=2, context_tokens=1000)
    assert doubled["MLP"] == parts["MLP"] and doubled["embedding rows"] == 2 * parts["embedding rows"]


def test_the_diagram_shapes_come_from_the_config():
    c = model("Llama-3.1-8B").config
    shapes = {m.key: (m.inputs, m.outputs) for m in primer.decoder_matrices(c)}
    assert shapes["q"] == (4096, 4096) and shapes["k"] == (4096, 1024) and shapes["down"] == (14_336, 4096)
    assert shapes["embedding"] == (128_256, 4096) and shapes["head"] == (4096, 128_256)
    wider = dataclasses.replace(c, hidden_size=5120, num_key_value_heads=4, intermediate_size=20_000)
    changed = {m.key: (m.inputs, m.outputs) for m in primer.decoder_matrices(wider)}
    assert changed["q"] == (5120, 32 * 128) and changed["k"] == (5120, 512) and changed["gate"] == (5120, 20_000)
    text = " ".join(primer.diagram_spec("Llama-3.1-8B")["data"][0]["text"])
    other = " ".join(primer.diagram_spec("Qwen3-32B")["data"][0]["text"])
    assert "4,096 × 4,096" in text and "4,096 × 4,096" not in other and "5,120 × 8,192" in other


@pytest.mark.parametrize("name", primer.MODELS + ("Llama-3.2-1B", "Mistral-7B-v0.1"))
def test_the_matrices_hold_every_weight_the_model_counts(name):
    c = model(name).config
    ms = primer.decoder_matrices(c)
    layer = sum(m.weights for m in ms if m.per_layer)
    assert layer == _attention_weights(c).matrices + mlp_params_per_layer(c, 0)
    tables = sum(m.weights for m in ms if not m.per_layer) - (embedding_params(c) if c.tie_word_embeddings else 0)
    assert c.num_hidden_layers * layer + tables + stored_weights(c).vectors == param_count(c)
    assert next(m for m in ms if m.key == "embedding").flops_per_token() == 0


def test_the_primer_refuses_what_it_does_not_draw():
    for name in ("DeepSeek-V3", "Mixtral-8x7B"):
        with pytest.raises(ValueError, match=r"\bc\b"):
            primer.decoder_matrices(model(name).config)


@pytest.mark.parametrize("name", primer.MODELS)
@pytest.mark.parametrize("context", primer.CONTEXTS)
def test_the_bytes_figure_draws_parts_that_sum_to_the_step(name, context):
    bars = primer.bytes_spec(name, context)["data"][0]
    assert bars["y"] == list(STEP_PARTS)
    d = decode_point(model(name).config, context_tokens=context, **B200)
    assert math.isclose(sum(x or 0 for x in bars["x"]), d.bytes, rel_tol=1e-12)
