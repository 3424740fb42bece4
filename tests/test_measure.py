"""The small numpy decoder computes what a Llama-shaped decoder computes, and the measuring code
returns rates in the units it names. Timings themselves are not asserted here: they belong to
the machine, and the chapter checks only relations that hold on any machine."""
from __future__ import annotations

import math
import os
import time
from dataclasses import replace

import numpy as np
import pytest

from inferlimits.machine import measure, tinyllm
from inferlimits.arithmetic.activations import activation_bytes_per_token
from inferlimits.checks import CheckFailed
from inferlimits.arithmetic.generation import decode_flops_per_token
from inferlimits.data.models import Config, kv_bytes_per_token, param_count, weight_bytes

TINY = Config(hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=8,
              num_key_value_heads=2, head_dim=16, vocab_size=101, tie_word_embeddings=True)
UNTIED = Config(hidden_size=48, intermediate_size=80, num_hidden_layers=3, num_attention_heads=6,
                num_key_value_heads=3, head_dim=8, vocab_size=37, tie_word_embeddings=False)


@pytest.fixture(autouse=True)
def quick_samples(monkeypatch):
    """Samples of a few milliseconds and no pauses: the tests time tiny arrays and check units and
    bookkeeping, not speeds (``test_a_sample_lasts_at_least_the_least_length`` checks the length)."""
    monkeypatch.setattr(measure, "MIN_SAMPLE_S", 0.002)
    monkeypatch.setattr(measure, "SETTLE_S", 0.0)


@pytest.fixture(scope="module")
def tiny():
    return tinyllm.random_weights(TINY, seed=1)


def _tokens(c, batch, length, seed=0):
    return np.random.default_rng(seed).integers(0, c.vocab_size, (batch, length))


def _bullet(words: str, label: str) -> str:
    """The bullet of ``words`` labelled ``label``, shown or folded."""
    found = [line for line in words.split("\n") if line.startswith(f"- **{label}:**")]
    assert len(found) == 1, (label, words)
    return found[0]


def _shown(words: str) -> list[str]:
    """The labels of the bullets ``words`` shows, then of those it folds into the evidence (``_folded``)."""
    from inferlimits.figures.machine import EVIDENCE
    shown, _, folded = words.partition(f"```{{admonition}} {EVIDENCE}\n:class: dropdown\n")
    assert not folded or folded.endswith("\n```"), words
    return [[line.split(":**")[0][4:] for line in part.split("\n") if line.startswith("- **")] for part in (shown, folded)]


# ---- the book's formulas apply to it ----------------------------------------------------------

@pytest.mark.parametrize("c", [TINY, UNTIED, tinyllm.TINY_LLAMA], ids=["tiny", "untied", "chapter"])
def test_parameter_count_equals_the_books_formula(c):
    if c is tinyllm.TINY_LLAMA:  # count from shapes, without making half a gigabyte of numbers
        h, hd, inter = c.hidden_size, c.head_dim, c.intermediate_size
        per_layer = (h * c.num_attention_heads * hd * 2 + 2 * h * c.num_key_value_heads * hd
                     + 3 * h * inter + 2 * h)
        counted = c.num_hidden_layers * per_layer + c.vocab_size * h + h
    else:
        counted = tinyllm.random_weights(c).param_count
    assert counted == param_count(c)


def test_weight_and_cache_bytes_match_the_arrays(tiny):
    assert tiny.nbytes == weight_bytes(TINY, "FP32")
    cache = tinyllm.KVCache(TINY, batch=3, max_tokens=10)
    assert cache.nbytes == 3 * 10 * kv_bytes_per_token(TINY, "FP32")


def test_the_chapters_decoder_is_llama_shaped_and_larger_than_caches():
    c = tinyllm.TINY_LLAMA
    assert c.num_attention_heads * c.head_dim == c.hidden_size
    assert c.num_attention_heads // c.num_key_value_heads == 4
    assert weight_bytes(c, "FP32") > 256 * 2**20
    assert decode_flops_per_token(c) == 2 * param_count(c)


# ---- shapes and pieces -------------------------------------------------------------------------

def test_shapes(tiny):
    cache = tinyllm.KVCache(TINY, batch=4, max_tokens=12)
    logits = tinyllm.forward(tiny, _tokens(TINY, 3, 5), cache, 0)
    assert logits.shape == (3, TINY.vocab_size) and logits.dtype == np.float32
    nxt = tinyllm.decode_step(tiny, np.zeros(3, int), cache, 5)
    assert nxt.shape == (3,)
    assert tinyllm.generate(tiny, _tokens(TINY, 2, 4), 6).shape == (2, 6)
    assert np.isfinite(logits).all()


def test_rms_norm():
    x = np.random.default_rng(0).standard_normal((5, 32)).astype(np.float32)
    w = np.linspace(0.5, 2, 32, dtype=np.float32)
    y = tinyllm.rms_norm(x, w)
    expected = x / np.sqrt((x.astype(np.float64) ** 2).mean(axis=-1, keepdims=True) + tinyllm.RMS_EPS) * w
    np.testing.assert_allclose(y, expected, rtol=1e-5)
    np.testing.assert_allclose(np.sqrt((tinyllm.rms_norm(x, np.ones(32, np.float32)) ** 2).mean(-1)), 1, rtol=1e-4)
    np.testing.assert_allclose(tinyllm.rms_norm(7 * x, w), y, rtol=1e-4)  # scale-free


def test_rope_keeps_lengths_and_depends_only_on_relative_position():
    rng = np.random.default_rng(0)
    q, k = rng.standard_normal((2, 16)).astype(np.float32)
    rq = lambda p: tinyllm.rope(q[None], np.array([p]))[0]  # noqa: E731
    rk = lambda p: tinyllm.rope(k[None], np.array([p]))[0]  # noqa: E731
    np.testing.assert_allclose(np.linalg.norm(rq(9)), np.linalg.norm(q), rtol=1e-5)
    np.testing.assert_allclose(rq(10) @ rk(7), rq(3) @ rk(0), rtol=1e-4)
    np.testing.assert_array_equal(rq(0), q)


def test_layers_hold_the_nine_llama_matrices(tiny):
    layer = tiny.layers[0]
    h, hd, inter = TINY.hidden_size, TINY.head_dim, TINY.intermediate_size
    shapes = {k: v.shape for k, v in layer.parts().items()}
    assert shapes == dict(attn_norm=(h,), wq=(h, 8 * hd), wk=(h, 2 * hd), wv=(h, 2 * hd), wo=(8 * hd, h),
                          mlp_norm=(h,), w_gate=(h, inter), w_up=(h, inter), w_down=(inter, h))
    again = tinyllm.Layer.from_parts(**layer.parts())
    assert all(np.array_equal(a, b) for a, b in zip(again.arrays(), layer.arrays()))


def test_gated_mlp_is_down_of_silu_gate_times_up(tiny):
    layer = tiny.layers[0]
    x = np.random.default_rng(0).standard_normal((2, TINY.hidden_size)).astype(np.float32)
    gate, up = x @ layer.w_gate, x @ layer.w_up
    expected = (gate / (1 + np.exp(-gate)) * up) @ layer.w_down
    np.testing.assert_allclose(tinyllm.gated_mlp(x, layer), expected, rtol=1e-4, atol=1e-5)


def test_query_heads_share_key_value_heads_in_consecutive_groups():
    assert tinyllm.query_head_groups(TINY) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert tinyllm.query_head_groups(UNTIED) == [[0, 1], [2, 3], [4, 5]]


def test_grouped_query_attention_equals_multi_head_attention_with_repeated_kv_heads(tiny):
    """GQA is MHA whose key and value heads come in identical groups: repeating each KV head's
    weights for its query heads gives a multi-head model with the same outputs."""
    g = TINY.num_attention_heads // TINY.num_key_value_heads
    hd = TINY.head_dim
    mha_config = Config(**{**TINY.__dict__, "num_key_value_heads": TINY.num_attention_heads})

    def repeat(w):
        heads = w.reshape(w.shape[0], TINY.num_key_value_heads, hd)
        return np.repeat(heads, g, axis=1).reshape(w.shape[0], -1)

    layers = tuple(tinyllm.Layer.from_parts(**{**layer.parts(), "wk": repeat(layer.wk), "wv": repeat(layer.wv)})
                   for layer in tiny.layers)
    mha = tinyllm.Weights(mha_config, tiny.embed, layers, tiny.final_norm)
    tokens = _tokens(TINY, 2, 6)
    expected = tinyllm.reference_logits(tiny, tokens)
    np.testing.assert_allclose(tinyllm.reference_logits(mha, tokens), expected, rtol=1e-4, atol=1e-4)
    cache = tinyllm.KVCache(mha_config, 2, 6)
    np.testing.assert_allclose(tinyllm.forward(mha, tokens, cache, 0), expected, rtol=1e-4, atol=1e-4)


def test_swapping_kv_heads_changes_the_output(tiny):
    """The grouping matters: giving query heads the wrong KV head changes the logits."""
    hd = TINY.head_dim
    swapped = tuple(tinyllm.Layer.from_parts(**{**layer.parts(),
                                                "wk": np.concatenate([layer.wk[:, hd:], layer.wk[:, :hd]], axis=1)})
                    for layer in tiny.layers)
    other = tinyllm.Weights(TINY, tiny.embed, swapped, tiny.final_norm)
    tokens = _tokens(TINY, 1, 5)
    assert not np.allclose(tinyllm.reference_logits(other, tokens), tinyllm.reference_logits(tiny, tokens))


# ---- the KV cache gives the same answers as recomputing --------------------------------------

@pytest.mark.parametrize("c", [TINY, UNTIED], ids=["tied", "untied"])
def test_kv_cache_gives_the_same_next_token_logits_as_recomputing(c):
    w = tinyllm.random_weights(c, seed=2)
    tokens = _tokens(c, 3, 9, seed=3)
    cache = tinyllm.KVCache(c, 3, 9)
    tinyllm.forward(w, tokens[:, :4], cache, 0)           # a prompt of 4 tokens
    tinyllm.forward(w, tokens[:, 4:6], cache, 4)          # two more at once
    for t in range(6, 9):                                 # then one token per step
        got = tinyllm.forward(w, tokens[:, t:t + 1], cache, t)
        expected = tinyllm.reference_logits(w, tokens[:, :t + 1])
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_attention_is_softmax_of_scaled_scores_times_values():
    rng = np.random.default_rng(0)
    q = rng.standard_normal((6, 4, 16)).astype(np.float32)
    k = rng.standard_normal((6, 9, 16)).astype(np.float32)
    v = rng.standard_normal((6, 9, 16)).astype(np.float32)
    got = tinyllm.attend(q, k, v, 0.25)
    for r in range(6):
        s = q[r].astype(np.float64) @ k[r].T.astype(np.float64) * 0.25
        p = np.exp(s - s.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        np.testing.assert_allclose(got[r], p @ v[r], rtol=1e-4, atol=1e-5)


def test_greedy_generation_continues_from_the_cache(tiny):
    prompt = _tokens(TINY, 2, 5)
    out = tinyllm.generate(tiny, prompt, 4)
    seq = prompt
    for i in range(4):
        nxt = np.argmax(tinyllm.reference_logits(tiny, seq), axis=-1)
        np.testing.assert_array_equal(out[:, i], nxt)
        seq = np.concatenate([seq, nxt[:, None]], axis=1)


def test_cache_fill_and_bad_positions(tiny):
    cache = tinyllm.KVCache(TINY, 2, 8)
    cache.fill(5)
    assert np.isfinite(cache.k[0][:, :, :5]).all() and np.abs(cache.v[1][:, :, :5]).max() > 0
    with pytest.raises(ValueError, match="cache holds"):
        tinyllm.forward(tiny, _tokens(TINY, 3, 1), cache, 0)
    with pytest.raises(ValueError, match="cache holds"):
        tinyllm.forward(tiny, _tokens(TINY, 2, 2), cache, 7)
    with pytest.raises(ValueError, match="tokens"):
        cache.fill(9)


def test_configs_the_decoder_cannot_run_are_refused():
    with pytest.raises(ValueError, match="multiple"):
        tinyllm.random_weights(Config(**{**TINY.__dict__, "num_key_value_heads": 3}))
    with pytest.raises(ValueError, match="bias"):
        tinyllm.random_weights(Config(**{**TINY.__dict__, "attention_bias": True}))


# ---- the measuring code -------------------------------------------------------------------------

def test_measurements_have_the_units_they_name():
    bw = measure.read_bandwidth_bytes_per_s(array_bytes=4 * 2**20, repeats=3)
    assert len(bw.values) == 3 and bw.low <= bw.median <= bw.high
    assert 1e6 < bw.median < 1e13  # bytes/s (not GB/s): more than 1 MB/s even on a busy machine, less than 10 TB/s
    mv = measure.matvec_read_bytes_per_s(array_bytes=4 * 2**20, repeats=3)
    assert len(mv.values) == 3 and 1e6 < mv.median < 1e13
    mm = measure.matmul_flop_per_s(side=128, repeats=3)
    assert 1e6 < mm.median < 1e15
    points = measure.product_sweep(256, 128, (1, 4), rounds=2)
    assert [p.batch for p in points] == [1, 4] and len(points) == 2
    assert len(points.read.values) == 2 and points.read_bytes_per_s > 0
    assert points.points[1].intensity_flop_per_byte > points.points[0].intensity_flop_per_byte
    p = points.points[0]
    assert p.flops == 2 * 256 * 128 and p.bytes_moved == 4 * (256 + 256 * 128 + 128)
    np.testing.assert_allclose(p.bandwidth_bytes_per_s * p.intensity_flop_per_byte, p.flop_per_s)


def test_decode_sweep_measures_every_batch_at_every_context():
    points = measure.decode_sweep(TINY, (1, 2, 4), contexts=(16, 40), steps=2, rounds=2)
    assert [(p.context_tokens, p.batch) for p in points] == [(16, 1), (16, 2), (16, 4), (40, 1), (40, 2), (40, 4)]
    assert all(p.tokens_per_s > 0 and len(p.rate.values) == 2 for p in points)
    short = measure.at_context(points, 16)
    # the tiny decoder ties its embeddings, so a step reads every stored weight; then the caches and
    # the float32 activations of each sequence
    act = activation_bytes_per_token(TINY, "decode", "FP32")
    assert short[2].bytes_per_step == pytest.approx(
        weight_bytes(TINY, "FP32") + 4 * (16 * kv_bytes_per_token(TINY, "FP32") + act), rel=1e-12)
    assert measure.point_at(short, 2) is short[1]
    with pytest.raises(ValueError, match="batch 8"):
        measure.point_at(short, 8)
    with pytest.raises(ValueError, match="context_tokens 17"):
        measure.at_context(points, 17)


def test_the_same_settings_give_the_same_measurement_back():
    """The chapter's cells and its figures pass the same settings in different ways; they must
    all get the one measurement the chapter made."""
    a = measure.decode_sweep(TINY, (1, 2), (16,), 1, 2)
    assert measure.decode_sweep(TINY, batches=(1, 2), contexts=(16,), rounds=2) is a
    assert measure.decode_sweep(c=TINY, batches=[1, 2], contexts=(16,), steps=1, rounds=2) is a
    p = measure.product_sweep(64, 32, (1, 2), 2)
    assert measure.product_sweep(64, 32, batches=(1, 2), rounds=2) is p
    assert measure.this_bandwidth(4 * 2**20) is measure.this_bandwidth(array_bytes=4.0 * 2**20)


def test_paired_ratio_compares_round_by_round():
    a = measure.Samples((10.0, 2.0, 30.0))   # round 2 was slow for both
    b = measure.Samples((5.0, 1.0, 10.0))
    assert measure.paired_ratio(a, b) == 2.0
    with pytest.raises(ValueError, match="same rounds"):
        measure.paired_ratio(a, measure.Samples((1.0,)))


def test_relation_prints_a_stable_line_and_fails_loudly(capsys):
    measure.relation("loop against one call", 123.456, at_least=10)
    measure.relation("long against short", 0.5, below=1)
    assert capsys.readouterr().out == ("✓ loop against one call (on this machine: at least 10)\n"
                                         "✓ long against short (on this machine: below 1)\n")
    with pytest.raises(CheckFailed, match=r"loop against one call: not so on this machine \(measured 9.9; at least 10 needed\)"):
        measure.relation("loop against one call", 9.9, at_least=10)
    with pytest.raises(CheckFailed, match="below 1 needed"):
        measure.relation("long against short", 1.0, below=1)
    for bad in (dict(), dict(at_least=1, below=2)):
        with pytest.raises(ValueError, match="exactly one"):
            measure.relation("x", 1.0, **bad)
    for bad in (dict(at_least=0), dict(below=-1), dict(at_least=float("nan"))):
        with pytest.raises(ValueError, match="at_least|below"):
            measure.relation("x", 1.0, **bad)
    with pytest.raises(ValueError, match="measured"):
        measure.relation("x", float("nan"), at_least=1)
    with pytest.raises(ValueError, match="claim"):
        measure.relation(" ", 1.0, at_least=1)
    # in a cell whose outputs nbval does not compare, the line also says what this machine measured
    measure.relation("loop against one call", 123.456, at_least=10, show_measured=True)
    again = iter([5.4])
    measure.relation("busy, then quiet", measure.Ratio(2.0, lambda: next(again)), at_least=4, show_measured=True)
    assert capsys.readouterr().out == ("✓ loop against one call (on this machine: 123; at least 10 needed)\n"
                                         "✓ busy, then quiet (on this machine: 2, then 5.4; at least 4 needed)\n")
    # a measured ratio is named as the ratio it is, so that no reader takes it for a quantity of its own
    measure.relation("this machine's balance point lies below the B200's", 0.0142, below=1, show_measured=True,
                     as_ratio="ratio to the B200's")
    assert capsys.readouterr().out == ("✓ this machine's balance point lies below the B200's (on this machine, ratio "
                                         "to the B200's: 0.0142; below 1 needed)\n")


def test_a_relation_that_fails_is_measured_again_before_it_is_called_false(capsys):
    """A busy spell spoils the first measurement; measuring again head to head settles it."""
    again = iter([0.8, 5.0])
    measure.relation("busy, then quiet", measure.Ratio(2.0, lambda: next(again)), at_least=4)
    assert capsys.readouterr().out == "✓ busy, then quiet (on this machine: at least 4)\n"
    calls = []
    never = measure.Ratio(2.0, lambda: calls.append(1) or 3.0)
    with pytest.raises(CheckFailed, match=r"measured 2, then 3, then 3; at least 4 needed"):
        measure.relation("never so", never, at_least=4)
    assert len(calls) == measure.RETRIES
    calls.clear()
    measure.relation("so at once", measure.Ratio(5.0, lambda: calls.append(1) or 0.0), at_least=4)
    assert not calls, "a relation that holds is not measured again"


def test_ratios_measure_the_two_settings_again_head_to_head():
    sweep = measure.product_sweep(256, 128, (1, 4), rounds=2)
    gain = measure.product_ratio(sweep, 4, over=1)
    share = measure.product_ratio(sweep, 1)
    assert gain.value == measure.paired_ratio(measure.point_at(sweep, 4).rate, measure.point_at(sweep, 1).rate)
    assert gain.again() > 0 and share.value > 0 and share.again() > 0
    assert measure.product_sweep(256, 128, (1, 4), rounds=2) is sweep, "measuring again leaves the remembered sweep"
    runs = measure.decode_sweep(TINY, (1, 2), contexts=(16, 40), steps=1, rounds=2)
    longer = measure.decode_ratio(runs, (2, 40), (2, 16))
    assert longer.value == measure.paired_ratio(runs[3].rate, runs[1].rate)
    assert longer.again() > 0
    with pytest.raises(ValueError, match="batch 8"):
        measure.decode_ratio(runs, (8, 40), (2, 16))


def test_machine_and_powers_of_two():
    assert measure.powers_of_two(256) == (1, 2, 4, 8, 16, 32, 64, 128, 256)
    assert measure.powers_of_two(1) == (1,)
    with pytest.raises(ValueError, match="power of two"):
        measure.powers_of_two(6)
    plain, matvec = measure.Samples((2e10, 1e10, 3e10)), measure.Samples((1.5e10,))
    m = measure.Machine("cpu", 2, "2026-01-01", plain, matvec, measure.Samples((1e11, 1.5e11, 0.5e11)), 2**28, 2048)
    assert m.bandwidth is plain and m.bandwidth_from == "the plain read"
    # the roof is the fastest repeat of each speed, the most the machine was seen to deliver
    assert m.bandwidth_bytes_per_s == 3e10 and m.peak_flop_per_s == 1.5e11 and m.balance_point_flop_per_byte == 5
    assert m.spreads == {"plain read": 3, "matrix-vector read": 1, "matrix product": 3}
    table = m._repr_markdown_()
    assert "cpu (2 cores), 2026-01-01" in table
    assert "| plain read, 268 MB array, 3 repeats | 30.0 GB/s | 20.0 GB/s | 10.0 GB/s | 3.00× |" in table
    assert "- **Roof bandwidth:** 30.0 GB/s, the fastest sample of the plain read." in table
    assert "- **Roof math rate:** 150.0 GFLOP/s, the fastest sample of the product, in the first repeats." in table
    assert "- **Balance point:** 5.0 FLOP per byte, the roof's math rate over the roof's bandwidth." in table
    faster = measure.Machine("cpu", 2, "2026-01-01", matvec, plain, measure.Samples((1e11,)), 2**28, 2048)
    assert faster.bandwidth is plain and faster.bandwidth_from == "the matrix-vector read", "the faster read sets the roof"
    # the faster read is the one with the fastest repeat, even where its median is the lower
    steady, spiky = measure.Samples((2.0e10, 2.0e10, 2.1e10)), measure.Samples((1.0e10, 1.2e10, 2.6e10))
    spikier = measure.Machine("cpu", 2, "2026-01-01", steady, spiky, measure.Samples((1e11,)), 2**28, 2048)
    assert spikier.bandwidth is spiky and spikier.bandwidth_bytes_per_s == 2.6e10
    assert measure.Samples((4.0, 1.0, 2.0)).spread == 4 and measure.Samples((3.0,)).spread == 1
    assert measure.processor_name()
    # the load average before measuring, said beside the measurements, and a busy machine named as such
    assert "Load before measuring" not in table and not m.busy
    loaded = measure.Machine("cpu", 2, "2026-01-01", plain, matvec, measure.Samples((1e11,)), 2**28, 2048, load=10.4)
    assert loaded.busy and not measure.Machine("cpu", 2, "2026-01-01", plain, matvec, measure.Samples((1e11,)),
                                               2**28, 2048, load=1.0).busy
    assert ("- **Load before measuring:** 10.4, the system's 1-minute load average: a decaying average of the "
            "programs running or waiting to run (Linux also counts those waiting on the disk). An idle machine shows "
            "near 0. Above 1, other programs kept more than half of its 2 cores busy.") in loaded._repr_markdown_()
    # a load just past the busy line never prints as the line itself
    at = [replace(loaded, load=x).load_text for x in (1.04, 0.98, 1.0, 1.0004)]
    assert at == ["1.04", "1.0", "1.0", "1.0004"]
    first = measure.load_before_measuring()
    assert (first is None or first >= 0) and measure.load_before_measuring() is first, "one load for the session"


@pytest.mark.parametrize("call", [
    lambda: measure.read_bandwidth_bytes_per_s(array_bytes=0),
    lambda: measure.read_bandwidth_bytes_per_s(array_bytes=float("nan")),
    lambda: measure.matmul_flop_per_s(side=10.5),
    lambda: measure.matvec_read_bytes_per_s(array_bytes=-4),
    lambda: measure.matvec_read_bytes_per_s(array_bytes=2**20, repeats=0),
    lambda: measure.matmul_flop_per_s(side=1024, repeats=-1),
    lambda: measure.product_sweep(64, 64, (0,)),
    lambda: measure.decode_sweep(TINY, (1,), contexts=(-1,)),
    lambda: measure.decode_sweep(TINY, (1,), contexts=()),
    lambda: measure.powers_of_two(0),
])
def test_bad_sizes_are_refused(call):
    with pytest.raises(ValueError):
        call()


def _caches(root, cpu, *caches):
    for i, (level, size, shared) in enumerate(caches):
        d = root / f"cpu{cpu}" / "cache" / f"index{i}"
        d.mkdir(parents=True)
        (d / "level").write_text(f"{level}\n")
        (d / "size").write_text(size + "\n")
        (d / "shared_cpu_list").write_text(shared + "\n")


def test_last_level_cache_is_the_largest_the_system_reports(tmp_path):
    _caches(tmp_path, 0, (1, "48K", "0"), (2, "2048K", "0"), (3, "491520K", "0-1"), (1, "64K", "0"))
    _caches(tmp_path, 1, (1, "48K", "1"), (2, "2048K", "1"), (3, "491520K", "0-1"), (1, "64K", "1"))
    assert measure.last_level_cache_bytes(str(tmp_path)) == 480 * 2**20   # one L3, shared by both cores
    assert measure.last_level_cache_bytes(str(tmp_path / "absent")) is None


def test_last_level_cache_sums_the_caches_of_every_core_complex(tmp_path):
    # an EPYC with several core complexes reports 32 MiB of L3 per complex: an array must outgrow them all
    for cpu in range(4):
        _caches(tmp_path, cpu, (2, "1024K", str(cpu)), (3, "32768K", "0-1" if cpu < 2 else "2-3"))
    assert measure.last_level_cache_bytes(str(tmp_path)) == 64 * 2**20
    m = measure.Machine("cpu", 2, "2026-01-01", measure.Samples((1e10,)), measure.Samples((2e10,)),
                        measure.Samples((1e11,)), 2**28, 2048, last_level_cache=480 * 2**20)
    assert "503 MB of last-level cache in all" in m._repr_markdown_() and "only 0.53× that" in m._repr_markdown_()
    assert "less than the 4× needed" in m._repr_markdown_()


# ---- the bandwidth array outgrows the cache ---------------------------------------------------

def test_the_bandwidth_array_is_at_least_four_times_the_cache_this_machine_reports():
    """The chapter's honest bandwidth: an array at least 4 times the largest cache this machine
    reports (or the cache assumed where it reports none), so that no cache holds more than a
    quarter of it; and the chapter measures with that array."""
    assert measure.CACHE_MULTIPLE >= 4
    cache = measure.last_level_cache_bytes()
    array = measure.bandwidth_array_bytes()
    assert array >= measure.CACHE_MULTIPLE * (cache or measure.UNREPORTED_CACHE_BYTES), (
        f"the bandwidth array ({array / 2**20:,.0f} MiB) is less than {measure.CACHE_MULTIPLE}× the cache this "
        f"machine reports ({(cache or 0) / 2**20:,.0f} MiB): its memory ({measure.physical_memory_bytes()!r} bytes) "
        "capped it")
    assert array >= measure.MIN_ARRAY_BYTES and array % 2**20 == 0
    from inferlimits.book import ROOT
    import nbformat
    nb = nbformat.read(ROOT / "chapters" / "13_measure.ipynb", as_version=4)
    sources = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert "measure.this_machine(measure.bandwidth_array_bytes()" in sources


def test_the_bandwidth_array_for_made_up_machines():
    MiB, GiB = 2**20, 2**30
    size = measure.bandwidth_array_bytes_for
    assert size(300 * MiB, 24 * GiB) == 1200 * MiB        # the machine that once read 0.85× its cache
    assert size(32 * MiB, 24 * GiB) == 256 * MiB          # never less than the chapter's weight matrix
    assert size(None, 24 * GiB) == size(None, None) == 1 * GiB  # no cache reported: 4 × 256 MiB
    assert size(300 * MiB + 1, None) == 1201 * MiB        # whole MiB, rounded up: still at least 4×
    assert size(300 * MiB, 2 * GiB) == 512 * MiB         # a quarter of the memory, at most
    for cache, memory in [(1, 2**40), (96 * MiB, 8 * GiB), (480 * MiB, 64 * GiB), (None, 16 * GiB)]:
        assert size(cache, memory) >= measure.CACHE_MULTIPLE * (cache or measure.UNREPORTED_CACHE_BYTES)
    for bad in [dict(cache_bytes=-1, memory_bytes=None), dict(cache_bytes=0.5, memory_bytes=None),
                dict(cache_bytes=None, memory_bytes=0), dict(cache_bytes=None, memory_bytes=2**20)]:
        with pytest.raises(ValueError, match="cache_bytes|memory_bytes"):
            size(**bad)


def test_a_capped_or_unreported_cache_is_said_beside_the_measurement():
    MiB, GiB = 2**20, 2**30
    s = measure.Samples((1e10,))
    capped = measure.Machine("cpu", 2, "2026-01-01", s, s, s, 512 * MiB, 2048,
                             last_level_cache=300 * MiB, memory=2 * GiB)
    assert capped.array_over_cache == pytest.approx(512 / 300)
    assert "only 1.7×" in capped.cache_note and "capped at 25% of this machine's memory, 2.1 GB" in capped.cache_note
    ample = measure.Machine("cpu", 2, "2026-01-01", s, s, s, 1200 * MiB, 2048,
                            last_level_cache=300 * MiB, memory=24 * GiB)
    assert ample.cache_note == "The array is 4× that (4× needed)."
    unreported = measure.Machine("cpu", 2, "2026-01-01", s, s, s, 1 * GiB, 2048)
    assert unreported.array_over_cache is None
    assert ("- **Caches:** none reported. The array assumes one of 268 MB, and is 4× that."
            in unreported._repr_markdown_())
    assert measure.physical_memory_bytes() is None or measure.physical_memory_bytes() > 2**20


def test_the_roofline_slider_offers_the_chapters_array():
    from inferlimits.figures import machine as figures
    stops = figures.array_stops(1200)
    assert 1200 in stops and 4 in stops and 512 in stops and 1024 in stops and stops == tuple(sorted(stops))
    assert figures.array_stops(256) == figures.ARRAY_MIB


# ---- words written from the measurements -----------------------------------------------------

def test_change_words():
    from inferlimits.figures.machine import change_word
    assert [change_word(r) for r in (0.1, 0.97, 1.03, 1.3, 1.85, 2.0, 2.15, 2.4, 7.0)] == [
        "fell", "held level", "held level", "rose less than double", "doubled", "doubled", "doubled",
        "more than doubled", "more than doubled"]
    for bad in (0, -1, float("nan")):
        with pytest.raises(ValueError, match="ratio"):
            change_word(bad)


def test_pace_words():
    from inferlimits.figures.machine import pace_word
    assert [pace_word(r, 2.0) for r in (1.0, 1.79, 1.8, 2.2, 2.21)] == [
        "falling behind it", "falling behind it", "keeping pace with it", "keeping pace with it", "outpacing it"]
    assert pace_word(1.0, 1.0) == "keeping pace with it" and pace_word(1.4, 1.0) == "outpacing it"
    for bad in (dict(measured=0, yardstick=1), dict(measured=1, yardstick=float("nan"))):
        with pytest.raises(ValueError, match="measured|yardstick"):
            pace_word(**bad)


def test_doubling_words_set_each_region_against_its_own_yardstick():
    from inferlimits.figures.machine import doubling_words
    batches = [1, 2, 4, 8, 16, 32]
    roofs = [min(30.0, 5.0 * b) for b in batches]         # ridge between 4 and 8 vectors
    # a quiet, memory-bound-then-compute-bound run that follows its roof: ×4 below the ridge, flat past it
    follows = doubling_words(batches, [0.9 * r for r in roofs], roofs)
    assert follows == (
        "- **Below the ridge, 1 to 4 vectors:** The roof rises 4×. The measured math rate rose 4×: it kept pace with "
        "the roof.\n"
        "- **Across the ridge, 4 to 8 vectors:** The roof rises 1.5×. The measured math rate rose 1.5×: it kept pace "
        "with the roof.\n"
        "- **Past the ridge, 8 to 32 vectors:** The roof is flat. The measured math rate held level: it kept pace "
        "with the roof.")
    # the noisy stored run the student quoted: a dip at 2 vectors, then climbs past the ridge
    rates = [8.4, 1.3, 2.4, 3.7, 5.1, 13.1, 18.2, 20.5, 44.6]
    intensities = [0.5, 1.0, 2.0, 3.99, 7.97, 15.88, 31.51, 62.06, 120.47]
    noisy = doubling_words([2**i for i in range(9)], rates, [min(29.3, 9.7 * x) for x in intensities])
    assert noisy.splitlines() == [
        "- **Below the ridge, 1 to 4 vectors:** The roof rises 4×. The measured math rate fell by 71%, while the roof "
        "rose.",
        "- **Across the ridge, 4 to 8 vectors:** The roof rises 1.5×. The measured math rate rose 1.5×: it kept pace "
        "with the roof.",
        "- **Past the ridge, 8 to 256 vectors:** The roof is flat. The measured math rate rose 12×: it rose faster "
        "than the roof."]
    for line in noisy.splitlines():
        assert line.count(". ") + line.count(": ") <= 3, "short sentences, one number each"
    # an overhead-bound run falls behind a rising roof
    behind = doubling_words([1, 2, 4], [1.0, 1.2, 1.3], [1.0, 2.0, 4.0], what="sequences", rate="throughput")
    assert behind == ("- **Below the ridge, 1 to 4 sequences:** The roof rises 4×. The measured throughput rose 1.3×: "
                      "it rose less than the roof.")
    fell = doubling_words([1, 2, 4], [4.0, 3.0, 2.0], [1.0, 1.0, 1.0])
    assert fell.endswith("The roof is flat. The measured math rate fell by 50%, while the roof stayed flat.")
    mixed = doubling_words([1, 2, 4, 8], [1.0, 2.0, 2.4, 2.0], [1.0, 2.0, 2.0, 2.0])
    assert mixed.endswith("The roof is flat. The measured math rate held level: it kept pace with the roof.")
    with pytest.raises(ValueError, match="double"):
        doubling_words([1, 3], [1, 2], [1, 2])
    with pytest.raises(ValueError, match="one length"):
        doubling_words([1, 2], [1], [1, 2])
    with pytest.raises(ValueError, match="rate"):
        doubling_words([1, 2], [1, 0], [1, 2])


def test_drop_words_name_the_doublings_at_which_the_rate_fell():
    from inferlimits.figures.machine import drop_words
    assert drop_words([1, 2, 4, 8], [8.4, 1.3, 2.4, 1.0]) == "The rate dropped from 1 to 2 and from 4 to 8 vectors."
    assert drop_words([1, 2, 4], [1.0, 2.0, 4.0]) == ""
    assert drop_words([1, 2, 4], [10, 10.2, 9.0], "sequences", "They", level=True) == (
        "They dropped from 2 to 4 and held level from 1 to 2 sequences.")


def test_above_roof_words_name_the_points_that_beat_the_fastest_repeats():
    from inferlimits.figures.machine import above_roof_words
    assert above_roof_words([128, 256], [1.05, 1.2], [1, 2, 128, 256]) == (
        "128 to 256 vectors ran at 105% to 120% of the roof. They beat the roof: they ran in a quieter spell than the "
        "fastest sample of this run's roof.")
    assert above_roof_words([1, 256], [1.2, 1.2], [1, 2, 256]).startswith("1 and 256 vectors ran at 120% of the roof.")
    assert above_roof_words([1], [1.18], [1, 2]).startswith("1 vector ran at 118% of the roof. It beat")
    with pytest.raises(ValueError, match="share"):
        above_roof_words([1], [0.9], [1, 2])
    # a cache is a reason only where it could hold the difference (``cached``), and a more efficient product only
    # past the ridge, where the math sets the pace
    assert "cache" not in above_roof_words([1], [1.5], [1, 2])
    assert above_roof_words([1], [1.05], [1, 2], cached=[True]).endswith(
        "it ran in a quieter spell than the fastest sample of this run's roof, or it read some of its bytes from a "
        "cache.")
    assert above_roof_words([128, 256], [1.9, 1.94], [1, 128, 256], past=[True, True]).endswith(
        "They beat the roof: they ran in a quieter spell than the fastest sample of this run's roof, or they ran their "
        "own products more efficiently than the roof's square one.")
    # a roof lifted to the reference run's speeds is named as such
    assert above_roof_words([1], [1.1], [1, 2], source="the reference run").endswith(
        "It beat the roof: it ran in a quieter spell than the reference run's fastest sample.")
    # under a table whose first line has given the reason, the words only name the points
    assert above_roof_words([1, 256], [1.73, 1.27], [1, 2, 256], why=False) == (
        "1 and 256 vectors ran at 127% to 173% of the roof.")
    for bad in (dict(past=[True]), dict(cached=[True])):
        with pytest.raises(ValueError, match="past|cached"):
            above_roof_words([1, 256], [1.5, 1.94], [1, 128, 256], **bad)


def test_the_products_table_reads_the_weights_only_below_the_ridge():
    s = measure.Samples
    m = measure.Machine("cpu", 2, "2026-01-01", s((1e10, 2e10)), s((1e10,)), s((4e10, 2e10)), 2**28, 2048)
    assert m.balance_point_flop_per_byte == 2     # 40 GFLOP/s over 20 GB/s
    points = tuple(measure.ProductPoint(b, 8192, 8192, s((r,))) for b, r in ((1, 9e9), (2, 1.5e10), (4, 2.5e10), (8, 3e10), (16, 3.5e10), (32, 5e10)))
    sweep = measure.ProductSweep(points, s((1.8e10,)))
    table = measure.products_table(sweep, m).data
    assert ("| vectors | FLOP per byte | GFLOP/s | share of the roof | spread of rounds "
            "| weights read at (below the ridge) |") in table
    assert "| 1 | 0.50 | 9.0 | 90% | 1.00× | 18.0 GB/s |" in table     # below the ridge: a memory benchmark
    assert "| 8 | 3.99 | 30.0 | 75% | 1.00× |  |" in table             # past the ridge: the math sets the pace
    assert "| 32 | 15.88 | 50.0 | 125% | 1.00× |  |" in table          # above the roof, and named so in the words
    assert "| plain read of the same matrix, same rounds | | | | 1.00× | 18.0 GB/s |" in table
    # a share above 100% is announced in the table's first line, before the reader meets it; the words say why
    assert table.startswith("Measured on cpu (2 cores), 2026-01-01; one round each. Each share above 100% beat the "
                            "roof; the words under the table say why.\n\n| vectors |")
    below_roof = measure.ProductSweep(points[:3], s((1.8e10,)))
    assert measure.products_table(below_roof, m).data.startswith("Measured on cpu (2 cores), 2026-01-01; one round "
                                                                  "each:\n\n")
    from inferlimits.figures.machine import products_words
    words = products_words(sweep, m).data
    # the lesson and a point above the roof show; the rest is the evidence, one click away
    assert _shown(words) == [["The lesson", "Above the roof"], ["This sweep", "The plain read"]]
    assert _bullet(words, "This sweep") == "- **This sweep:** Quiet: all 7 rows varied at most 1.00× from slowest to fastest."
    # the point above the roof is named first, right under the table, with the reason its rounds show: past the
    # ridge the flat roof does not depend on bytes, and its typical round beat the roof's typical sample (50
    # against 30 GFLOP/s), so the roof's own square product ran less efficiently than this wide one
    assert _bullet(words, "Above the roof") == ("- **Above the roof:** 32 vectors ran at 125% of the roof. Past the ridge the roof is flat and "
                        "does not depend on bytes, so reading fewer bytes cannot lift a point above it. It beat the "
                        "roof in its median round too. The roof's own 2,048 × 2,048 product ran less efficiently than "
                        "this wider product, so the flat roof under-estimates what numpy reaches here.")
    assert "no cache can lift" not in words
    # the plain read beside the 1-vector product's read of the same matrix in the same rounds
    assert ("- **The plain read:** Its fastest round read 18.0 GB/s, 100% of what the 1-vector product read from the "
            "same matrix in the same rounds (18.0 GB/s). The two ways of reading agree.") in words
    # from 1 vector to 16 (past the routine switch) the rate rose 3.9× against the roof's 4×; from 16 to 32 it
    # changed 1.4×: the shape
    assert _bullet(words, "The lesson") == ("- **The lesson:** This run shows the climb-then-level shape. The climb, from 1 vector to 16: "
                          "the rate rose 3.9×, above the bar of 2×, half of the roof's 4.0×. The level part, past the ridge, from 16 "
                          "vectors to 32: the rate changed only 1.4×, within 1.5× "
                          "either way. The widest batch reached 125% of the flat roof.")
    # a roof lifted to the reference run's speeds is said in the table's first line
    lifted = measure.Machine("cpu", 2, "2026-01-01", s((1e10, 2e10)), s((1e10,)), s((4e10, 2e10)), 2**28, 2048,
                             reference_roof=(3e10, 6e10))
    assert measure.products_table(sweep, lifted).data.startswith(
        "Measured on cpu (2 cores), 2026-01-01; one round each; the roof from the reference run's speeds, since a "
        "measured point beat this run's:")


def test_products_words_give_the_reasons_the_rounds_and_the_control_show():
    """A sweep with a dip at 2 to 4 vectors and a rise past the ridge, with its control, in one clean round, in
    two rounds the second slowed evenly, and on a machine that was busy before measuring."""
    from inferlimits.figures.machine import products_words
    s = measure.Samples
    m = measure.Machine("cpu", 2, "2026-01-01", s((1e10, 2e10)), s((1e10,)), s((4e10, 2e10)), 2**28, 2048)
    rates = ((1, 9e9), (2, 5e9), (4, 8e9), (8, 2.5e10), (16, 2e10), (32, 3e10), (64, 4.4e10))
    points = tuple(measure.ProductPoint(b, 8192, 8192, s((r,))) for b, r in rates)
    sweep = measure.ProductSweep(points, s((1.8e10,)), one_at_a_time=s((9e9,)))
    assert ("| control: the same 2 vectors, one matrix-vector product each | | 9.0 | | 1.00× | |"
            in measure.products_table(sweep, m).data)
    lesson = _bullet(products_words(sweep, m).data, "The lesson")
    # the dip is left out of the rules, so it does not fail the shape; the control settles its cause
    assert lesson == (
        "- **The lesson:** This run shows the climb, but not the level part of the climb-then-level shape. The climb, "
        "from 1 vector to 16: the rate rose 2.2×, above the bar of 2×, half of the roof's 4.0×. The level part, past the ridge, from 16 vectors to 64: the rate "
        "rose 2.2×, more than 1.5× either way. The rise held in "
        "every round, so it is not noise. A likely cause, which this sweep does not test: reading and math that take "
        "turns, and the library's tiling, whose cost per weight shrinks as the batch grows. "
        "At 2 to 4 vectors the rate dipped below one vector's, as the rules "
        "allow. The control shows why: the same 2 vectors, multiplied one at a time, ran faster in every round, 1.8× in the median round. "
        "The routine numpy switches to, not the machine, made the dip. The widest batch reached 110% of the flat "
        "roof.")
    # a second round slowed three times over, evenly: every ratio within a round holds, but the ends were noisy
    even = measure.ProductSweep(tuple(measure.ProductPoint(p.batch, p.rows, p.cols, s((p.flop_per_s, p.flop_per_s / 3)))
                                      for p in points), s((1.8e10, 0.6e10)), one_at_a_time=s((9e9, 3e9)))
    words = products_words(even, m).data
    assert ("The rise held in every round, which points past noise. A likely cause, which this sweep does not test: "
            "reading and math that take turns, and the library's tiling, whose cost per weight shrinks as the batch "
            "grows. But the rounds of 16 and 64 vectors "
            "varied up to 3.00×, so part of it may be noise.") in words
    assert ("The control points to the routine numpy switches to: the same 2 vectors, multiplied one at a time, ran "
            "faster in every round, 1.8× in the median round. But these rounds varied more than 1.25×, so the size of the gap is in doubt.") in words
    # 64 vectors beat the roof only in their fastest round (median 29 against the roof's 30 GFLOP/s)
    assert "It beat the roof only in its fastest round: it ran in a quieter spell than the roof's fastest sample." \
        in words
    # quiet rounds on a machine that other programs kept busy: a steady load is not ruled out, so it may be noise
    busy = _bullet(products_words(sweep, replace(m, load=3.0)).data, "The lesson")
    assert ("The rise held in every round, but other programs may have slowed every round alike (see how this run "
            "was judged, in \"Can you trust this run?\"), so it may still be noise.") in busy
    assert "On a quiet machine, the roofline expects" in busy and "The control points to the routine" in busy
    # a control that was not faster in every round settles nothing; the words count its rounds, beside the table's
    # fastest round, so that a control faster in the table but not in every round does not read as a contradiction
    slower = measure.ProductSweep(points, s((1.8e10,)), one_at_a_time=s((4e9,)))
    assert ("The control does not settle why: the same 2 vectors, multiplied one at a time, were faster in none of the "
            "1 rounds, compared round by round (the table gives each one's fastest round).") in products_words(slower, m).data
    two = tuple(measure.ProductPoint(b, 8192, 8192, s((r, r))) for b, r in rates)
    split = measure.ProductSweep(two, s((1.8e10, 1.8e10)), one_at_a_time=s((9e9, 4e9)))
    assert ("were faster in only 1 of the 2 rounds, compared round by round (the table gives each one's fastest "
            "round).") in products_words(split, m).data
    # without a control, the routine is only a guess
    assert "numpy may switch routine there; this sweep does not test that." in products_words(
        measure.ProductSweep(points, s((1.8e10,))), m).data


def test_noise_words_call_a_sweep_quiet_only_when_every_spread_is():
    from inferlimits.figures.machine import QUIET_SPREAD, noise_words
    assert noise_words([1.0, 1.1, 1.2]) == "quiet: all 3 rows varied at most 1.20× from slowest to fastest."
    assert noise_words([1.0, QUIET_SPREAD]).startswith("quiet:"), "at most 1.25× is quiet"
    # the stored run the student quoted: the median spread was 1.2×, but 5 of the 10 rows spread more than 1.25×
    stored = [1.6, 1.0, 3.0, 2.9, 1.2, 1.3, 1.1, 1.1, 1.0, 1.5]
    assert noise_words(stored) == ("noisy: 5 of its 10 rows varied more than 1.25× from slowest to fastest, up to "
                                   "3.00×; the other 5 varied at most 1.25×.")
    assert noise_words([2.0, 9.6], "batches") == ("noisy: all 2 batches varied more than 1.25× from slowest to fastest, "
                                                  "up to 9.60×.")
    # two decimals, so that a spread can be set beside the bar: 1.26× is noisy, 1.24× quiet
    assert noise_words([1.24]).endswith("at most 1.24× from slowest to fastest.")
    assert noise_words([1.26]).startswith("noisy:") and "up to 1.26×" in noise_words([1.26])
    assert measure.spread_text(14.2) == "14×" and measure.spread_text(1.0) == "1.00×"
    # a wait just past its line never prints as the line itself
    assert (measure._wait_text(0.052), measure._wait_text(0.05), measure._wait_text(0.01)) == ("0.052", "0.05", "0.01")
    # a noisy spread never prints as the quiet bar itself; a quiet one keeps two decimals
    assert (measure.spread_text(1.2504), measure.spread_text(1.253), measure.spread_text(1.2496)) == (
        "1.2504×", "1.253×", "1.25×")
    for bad in ([], [0.0], [float("nan")]):
        with pytest.raises(ValueError, match="spreads"):
            noise_words(bad)


def test_plain_read_words_follow_the_numbers():
    from inferlimits.figures.machine import plain_read_words
    GBs = 1e9
    # beside the 1-vector product's read of the same matrix, in the same rounds: the way of reading, not the spell
    assert plain_read_words(8.0 * GBs, 10.0 * GBs) == (
        "its fastest round read 8.0 GB/s, 80% of what the 1-vector product read from the same matrix in the same "
        "rounds (10.0 GB/s). Here numpy's plain sum reads slower than the BLAS library's product. The roof takes the "
        "fastest read of the whole run.")
    assert plain_read_words(10.2 * GBs, 10.0 * GBs).endswith("(10.0 GB/s). The two ways of reading agree.")
    assert "Here numpy's plain sum read faster than the BLAS library's product." in plain_read_words(14 * GBs, 10 * GBs)
    assert "spell" not in plain_read_words(8.0 * GBs, 10.0 * GBs)
    # without a 1-vector product, only the read
    assert plain_read_words(8.0 * GBs) == "its fastest round read 8.0 GB/s."
    with pytest.raises(ValueError, match="read"):
        plain_read_words(0, 1)
    with pytest.raises(ValueError, match="vector"):
        plain_read_words(1, 0)


def _fake_machine(monkeypatch, **sweeps):
    """A made-up machine (20 GB/s, 40 GFLOP/s: balance point 2) and made-up sweeps, in place of
    measuring, so that a figure's spec can be read without timing anything."""
    s = measure.Samples
    m = measure.Machine("cpu", 2, "2026-01-01", s((2e10, 1e10)), s((1e10,)), s((4e10, 2e10)), 2**28, 2048)
    monkeypatch.setattr(measure, "this_machine", lambda *a, **k: m)
    from inferlimits.figures import machine as figures
    monkeypatch.setattr(figures, "_JUDGED", {})  # no machine judged by an earlier test in this process
    for name, value in sweeps.items():
        monkeypatch.setattr(measure, name, lambda *a, value=value, **k: value)
    return m


def test_each_sweep_figure_shows_the_model_computed_not_measured(monkeypatch):
    """The products figure and the decode figure each carry the book's formula at every measured
    setting, from this machine's measured roof: named as the model, computed and not measured, with
    no promise of what a machine shows (the stored run's own verdicts may say it did not)."""
    from inferlimits.figures import machine as figures
    s = measure.Samples
    points = tuple(measure.ProductPoint(b, 1024, 1024, s((r,))) for b, r in ((1, 9e9), (2, 1.5e10), (4, 2.5e10),
                                                                              (8, 3e10), (16, 3.5e10)))
    m = _fake_machine(monkeypatch, product_sweep=measure.ProductSweep(points, s((1.8e10,))))
    spec = figures.products_spec(1024, 16)
    assert spec["layout"]["title"]["text"].startswith("A 1,024 × 1,024 weight matrix")
    assert figures.products_spec(8192, 16)["layout"]["title"]["text"].startswith("An 8,192 × 8,192 weight matrix")
    (model,) = [t for t in spec["data"] if t.get("name", "").startswith("the model")]
    assert model["name"] == figures.MODEL_NAME.format(formula="min(P, I·BW)")
    assert model["name"] == "the model, computed, not measured: min(P, I·BW)" and "quiet" not in model["name"]
    assert model["x"] == [p.intensity_flop_per_byte for p in points]
    assert model["y"] == pytest.approx([min(40.0, 20.0 * p.intensity_flop_per_byte) for p in points])
    assert model["text"][-1] == "model" and model["marker"]["symbol"] == "circle-open"
    # the climb-then-level shape: doubling below the ridge, flat past it
    assert model["y"][1] == pytest.approx(2 * model["y"][0], rel=0.01) and model["y"][-1] == model["y"][-2] == 40.0
    c = tinyllm.TINY_LLAMA
    runs = tuple(measure.DecodePoint(c, b, 128, s((10.0 * b,))) for b in (1, 2, 4, 8))
    _fake_machine(monkeypatch, decode_sweep=runs)
    spec = figures.decode_spec(128, 8, (128,), 8)
    (model,) = [t for t in spec["data"] if t.get("name", "").startswith("the model")]
    assert model["name"] == "the model, computed, not measured: the lower ceiling, min(memory, math)"
    assert model["x"] == [1, 2, 4, 8]
    assert model["y"] == pytest.approx([min(measure.decode_ceilings_tokens_per_s(m, b, 128)) for b in (1, 2, 4, 8)])
    measured = [t for t in spec["data"] if t.get("name") == "measured"]
    assert measured and measured[0]["y"] != model["y"], "the model is drawn beside the measurements, not as them"


def test_product_lesson_words_say_whether_this_run_shows_the_climb_then_level_shape():
    from inferlimits.figures.machine import CLIMB_SHARE, LEVEL_FACTOR, SWITCH, product_lesson_words
    assert (CLIMB_SHARE, LEVEL_FACTOR, SWITCH) == (0.5, 1.5, (2, 8)), "the rules the chapter states"
    # the noisy stored run the student quoted: a dip at 2 to 8 vectors, and still doubling at the widest batch
    rates = [8.4, 1.3, 2.4, 3.7, 5.1, 13.1, 18.2, 20.5, 44.6]
    intensities = [0.5, 1.0, 2.0, 3.99, 7.97, 15.88, 31.51, 62.06, 120.47]
    batches, roofs = [2**i for i in range(9)], [min(29.3, 9.7 * x) for x in intensities]
    # the rules skip the switch: from 1 vector to 16 the rate fell (0.61×) while the roof rose 6×; without the
    # rounds themselves, each failure is put down to noise because the spread (2×) is noisy
    from inferlimits.figures.machine import _factors
    assert _factors(4.97, 5.02) == ("4.97×", "5.02×") and _factors(5.7, 5.1) == ("5.7×", "5.1×")
    assert _factors(16.0, 16.0) == ("16×", "16×")
    assert product_lesson_words(batches, rates, roofs, 2.0) == (
        "this run does not clearly show the climb-then-level shape. The climb, from 1 vector to 16: the rate did not rise "
        "(0.61×), while the roof rose 6×. The rounds were noisy, so other programs may have caused it. The level part, "
        "past the ridge, from 16 vectors to 256: the rate rose 8.7×, "
        "more than 1.5× either way. The rounds were noisy, so other programs may have caused it. At 2 to 8 vectors "
        "the rate dipped below one vector's, as the rules allow. numpy may switch routine there; this sweep does not "
        "test that. The widest batch reached 152% of the flat roof. On a quiet machine, the roofline expects the rate "
        "to climb along the slanted roof to the ridge, then level off under the flat roof, as the model's circles do. "
        "numpy may still dip at a few vectors, where it switches routine.")
    # a quiet run that follows its roof shows the shape, and says how high it reached
    follows = [0.9 * r for r in roofs]
    assert product_lesson_words(batches, follows, roofs, 1.1) == (
        "this run shows the climb-then-level shape. The climb, from 1 vector to 16: the rate rose 6×, above the bar of 3×, half of "
        "the roof's 6.0×. The level part, past the ridge, from 16 vectors to 256: the rate changed only 1×, within 1.5× "
        "either way. The widest batch reached 90% of the flat "
        "roof.")
    assert product_lesson_words(batches, [0.3 * r for r in roofs], roofs, 1.1).endswith(
        "The widest batch reached 30% of the flat roof.")
    assert product_lesson_words(batches, follows, roofs, 2.0).endswith(
        "The rounds were noisy, so the heights may still move.")
    # a dip at the switch that recovers by 16 vectors does not fail the shape: the rules leave those batches out
    dipped = [follows[0], follows[0] / 4, follows[0] / 2, follows[0] / 1.5] + follows[4:]
    assert product_lesson_words(batches, dipped, roofs, 1.1).startswith("this run shows the climb-then-level shape.")
    assert "At 2 to 8 vectors the rate dipped below one vector's, as the rules allow." in product_lesson_words(
        batches, dipped, roofs, 1.1)
    # quiet rounds that agree on a run that was not steady: a steady load is not ruled out
    late = [2.8, 0.7, 1.4, 3.0, 6.1, 7.8, 14.5, 17.1, 25.2]
    tenth = [min(24.3, 10.8 * x) for x in intensities]
    assert ("The rounds agreed, so it is not noise. A likely cause, which this sweep does not test: reading and math "
            "that take turns, and the library's tiling, whose cost per weight shrinks as the batch grows.") in \
        product_lesson_words(batches, late, tenth, 1.2)
    assert ("The rounds agreed, but other programs may have slowed every round alike (see how this run was judged, "
            "in \"Can you trust this run?\"), so it may still be noise.") in product_lesson_words(
        batches, late, tenth, 1.2, steady=False)
    # a sweep that stops below the ridge cannot show the level part, one that starts past it not the climb
    assert "Its widest batch, 4 vectors, lies below the ridge, so it cannot show the level part." in product_lesson_words(
        batches[:3], follows[:3], roofs[:3], 1.1)
    assert product_lesson_words(batches[4:], follows[4:], roofs[4:], 1.1).startswith(
        "this run does not show the climb-then-level shape. Its smallest batch, 16 vectors, lies at or past the ridge, "
        "so it cannot show the climb.")
    with pytest.raises(ValueError, match="one length"):
        product_lesson_words([1, 2], [1.0], [1.0, 2.0], 1.0)
    with pytest.raises(ValueError, match="spread"):
        product_lesson_words([1, 2], [1.0, 2.0], [1.0, 2.0], 0)
    with pytest.raises(ValueError, match="rounds"):
        product_lesson_words([1, 2], [1.0, 2.0], [1.0, 2.0], 1.0, rounds=[(1.0, 1.0), (2.0,)])


#: a made-up product sweep on a roof that doubles from 1 to 8 vectors (8x) and is flat from 8 to 32
_BATCHES, _ROOFS = [1, 2, 4, 8, 16, 32], [1.0, 2.0, 4.0, 8.0, 8.0, 8.0]


def _lesson(rounds, steady=True):
    """product_lesson_words for a sweep given round by round (each batch's rate in each round)."""
    from inferlimits.figures.machine import product_lesson_words
    rates = [max(r) for r in rounds]
    spread = max(max(r) / min(r) for r in rounds)
    return product_lesson_words(_BATCHES, rates, _ROOFS, spread, rounds=rounds, steady=steady)


def test_product_lesson_words_put_a_failure_down_to_noise_only_where_a_round_disagrees():
    """Each reason the lesson can give, decided from made-up rounds (two rounds; quiet ends differ by 5%)."""
    # from 1 vector to 16 the rate rose only 2× in every round, quiet at both ends: not noise, the library likely
    short = _lesson([(1.0, 0.95), (0.8, 0.8), (1.2, 1.2), (2.0, 1.9), (2.0, 1.9), (2.0, 1.9)])
    assert ("The climb, from 1 vector to 16: the rate rose only 2×, below the bar of 4×, half of the roof's 8.0×. The shortfall held in every "
            "round, so it is not noise. A likely cause, which this sweep does not test: numpy's general routine, which "
            "takes over from 2 vectors, may stream the weights less well than its matrix-vector routine.") in short
    assert "may be noise" not in short and "may have caused it" not in short
    assert short.endswith("of the flat roof."), "no noise: the cause the rounds name ends the lesson, with no promise"
    # the same rounds on a run that was not steady: a steady load slows every round alike, so it may be noise
    unsteady = _lesson([(1.0, 0.95), (0.8, 0.8), (1.2, 1.2), (2.0, 1.9), (2.0, 1.9), (2.0, 1.9)], steady=False)
    assert ("The shortfall held in every round, but other programs may have slowed every round alike (see how this "
            "run was judged, in \"Can you trust this run?\"), so it may still be noise.") in unsteady
    assert "On a quiet machine, the roofline expects the rate to climb" in unsteady
    # the same shortfall in every round, but the rounds of 16 vectors 2× apart: it points past noise, in part
    loaded = _lesson([(1.0, 0.95), (0.8, 0.8), (1.2, 1.2), (2.0, 1.9), (2.0, 1.0), (2.0, 1.9)])
    assert ("The shortfall held in every round, which points past noise. A likely cause, which this sweep does not "
            "test: numpy's general routine, which takes over from 2 vectors, may stream the weights less well than its "
            "matrix-vector routine. But the rounds of 16 vectors varied up to 2.00×, so part of it may be noise.") \
        in loaded
    assert "On a quiet machine, the roofline expects the rate to climb" in loaded
    # the shortfall in the fastest rounds only: a second round rose 6×, so it may be noise
    mixed = _lesson([(1.0, 0.5), (0.8, 1.0), (1.2, 1.5), (2.0, 3.0), (2.0, 3.0), (2.0, 3.0)])
    assert ("The climb, from 1 vector to 16: the rate rose only 3×, below the bar of 4×, half of the roof's 8.0×. The shortfall did not "
            "hold in every round: it lies within the rounds' variation, so this sweep cannot confirm it.") in mixed
    assert "On a quiet machine, the roofline expects the rate to climb" in mixed
    # past the ridge (16 to 32 vectors) the rate rose 2× in every round, quiet at both ends: numpy's efficiency
    rise = _lesson([(1.0, 1.0), (2.0, 2.0), (4.0, 4.0), (4.0, 4.0), (4.0, 4.2), (8.0, 8.4)])
    assert rise.startswith("this run shows the climb, but not the level part of the climb-then-level shape. The climb, "
                           "from 1 vector to 16: the rate rose 4.2×, above the bar of 4×, half of the roof's 8.0×. The level part, past the ridge, from 16 vectors "
                           "to 32: the rate rose 2×, more than 1.5× either way. The "
                           "rise held in every round, so it is not noise. A likely cause, which this sweep does not "
                           "test: reading and math that take turns, and the library's tiling, whose cost per weight "
                           "shrinks as the batch grows. The widest batch "
                           "reached 105% of the flat roof.")
    # a rise that only the fastest rounds show: the second round rose 1.05×, so it may be noise
    # a climb that missed its bar in the fastest rounds only, beside a level part that surely failed: the verdict leads
    # with the sure failure and calls the climb undecided
    undecided = _lesson([(1.0, 0.9), (0.8, 0.8), (1.2, 1.2), (2.0, 2.0), (3.9, 3.9), (7.8, 7.8)])
    assert undecided.startswith("this run does not show the level part of the climb-then-level shape, and its climb is "
                                "undecided: it missed its bar within noise. The climb, from 1 vector to 16: the rate "
                                "rose only 3.9×, below the bar of 4×")
    lucky = _lesson([(1.0, 1.0), (2.0, 2.0), (4.0, 4.0), (4.0, 4.0), (4.0, 4.1), (8.0, 4.2)])
    assert ("The level part, past the ridge, from 16 vectors to 32: the rate rose 2×, more than 1.5× either way. The rise "
            "did not hold in every round: it lies within the rounds' variation, so this sweep cannot confirm it.") in lucky
    assert "On a quiet machine, the roofline expects the rate to climb" in lucky
    # a fall past the ridge in every round, quiet at both ends: the library likely ran the widest batches less well
    fall = _lesson([(1.0, 1.0), (2.0, 2.0), (4.0, 4.0), (6.0, 6.0), (6.0, 6.0), (3.0, 3.0)])
    assert ("The level part, past the ridge, from 16 vectors to 32: the rate fell by 50%, more than 1.5× either way. The fall held in every round, so it is not "
            "noise. A likely cause, which this sweep does not test: the library may run the widest batches less "
            "efficiently.") in fall
    # a run that shows the shape gives no reason at all
    shows = _lesson([(1.0, 1.0), (2.0, 2.0), (4.0, 4.0), (7.0, 7.0), (7.2, 7.2), (7.4, 7.4)])
    assert shows.startswith("this run shows the climb-then-level shape.") and "noise" not in shows


@pytest.mark.parametrize("climb, past, shows", [
    (4.0, 1.0, True),     # rose half the roof's 8×: enough
    (3.9, 1.0, False),    # less than half
    (4.0, 1.49, True),    # past the ridge, within 1.5×
    (4.0, 1.5, False),    # 1.5× is not within 1.5×
    (4.0, 1 / 1.49, True),  # a fall within 1.5×
    (4.0, 1 / 1.5, False),  # a fall of 1.5×
])
def test_the_climb_then_level_rules_at_their_edges(climb, past, shows):
    """The roof rises 8× from 1 vector to 8 and is flat from 8 to 32; the rules run from 1 vector to the first
    batch past the routine switch, 16, and past the ridge from 16 to 32. The dip at 2 vectors does not count."""
    from inferlimits.figures.machine import product_lesson_words
    batches = [1, 2, 4, 8, 16, 32]
    roofs = [1.0, 2.0, 4.0, 8.0, 8.0, 8.0]
    rates = [1.0, 0.5, 2.5, 3.0, climb, climb * past]
    said = product_lesson_words(batches, rates, roofs, 1.0)
    expected = ("this run shows the climb-then-level shape" if shows else
                "this run shows the climb, but not the level part" if climb >= 4.0 else "this run does not show")
    assert said.startswith(expected), said


def test_regime_words_say_where_each_batch_sat_by_the_books_rule():
    from inferlimits.arithmetic.generation import OVERHEAD_BOUND, regime
    from inferlimits.figures.machine import NEAR, regime_words
    # NEAR is the book's rule, as generation.regime applies it
    assert regime(NEAR * 0.999, 1, 2) == OVERHEAD_BOUND and regime(NEAR, 1, 2) != OVERHEAD_BOUND
    batches = [1, 2, 4, 8, 16, 32, 64]
    memory, math_ = [28, 55, 109, 212, 400, 718, 1193], [502] * 7
    # the stored run the review quoted: every point at 4% to 14% of its ceiling
    busy = regime_words(batches, [3.6, 2.7, 5.1, 10.5, 14.0, 42.0, 68.7], memory, math_)
    assert busy == ("Every batch reached less than half of its lower ceiling (4% to 14%). By the book's rule, that is "
                    "far below both ceilings: overhead-bound by elimination, since neither memory nor math set the pace.")
    # a quiet run: memory-bound at small batches, compute-bound at large ones
    quiet = regime_words(batches, [25, 50, 100, 190, 380, 450, 480], memory, math_)
    assert quiet == ("Batches 1 to 16 reached at least half of their lower ceiling, the memory ceiling (89% to 95%). "
                     "By the book's rule, those are memory-bound. Batches 32 to 64 reached at least half of their "
                     "lower ceiling, the math ceiling (90% to 96%). By the book's rule, those are compute-bound.")
    # mixed, with a point above its ceiling
    mixed = regime_words(batches, [30, 10, 20, 190, 380, 450, 480], memory, math_)
    assert mixed.startswith("Batch 1 measured above its lower ceiling (107%). It beat the memory ceiling: it ran in a "
                            "quieter spell than the fastest sample of this run's roof.")
    assert "cache" not in mixed, "a cache is named only where it could hold the difference"
    assert "Batches 2 to 4 reached less than half of their lower ceiling (18% to 18%)" not in mixed
    assert "Batches 2 to 4 reached less than half of their lower ceiling (18%). By the book's rule, those are" in mixed
    assert "Batches 1, 8 and 64 measured above their lower ceiling (102% to 108%). They beat" in regime_words(
        batches, [30, 10, 20, 230, 380, 450, 510], memory, math_)
    # above the math ceiling, past the knee: a quieter spell, or products that ran more efficiently than the roof's
    # square one
    assert regime_words(batches, [25, 50, 100, 190, 380, 450, 540], memory, math_).endswith(
        "Batch 64 measured above its lower ceiling (108%). It beat the math ceiling: it ran in a quieter spell than the "
        "fastest sample of this run's roof, or it ran its own products more efficiently than the roof's square one.")
    # the stored run an earlier student quoted: batch 32 at 96% of its ceiling, its rounds 9.6× apart. Noise only
    # slows a rate, so a noisy point at or above half is still placed, and the words say why
    noisy = regime_words(batches, [25, 50, 100, 190, 380, 480, 480], memory, math_, [1.0, 2.8, 1.2, 1.2, 1.1, 9.6, 1.4])
    assert noisy == ("Batches 1 to 16 reached at least half of their lower ceiling, the memory ceiling (89% to 95%). "
                     "By the book's rule, those are memory-bound. The rounds of batch 2 varied more than 1.25×, but "
                     "noise only slows a rate: a quiet run would place it at least as high. Batches 32 to 64 reached at "
                     "least half of their lower ceiling, the math ceiling (96%). By the book's rule, those are "
                     "compute-bound. Their rounds varied more than 1.25×, but noise only slows a rate: a quiet run would "
                     "place them at least as high.")
    assert "too noisy" not in noisy
    # a noisy point below half is not placed where its spread could have lifted it to half: noise alone could have
    # held it there; a quiet one below half is
    low = regime_words(batches, [25, 10, 20, 190, 380, 450, 480], memory, math_, [1.0, 3.0, 1.1, 1.0, 1.0, 1.0, 1.0])
    assert ("Batch 2 reached less than half of its lower ceiling (18%), but its share times the spread of its rounds "
            "(3.00×) reaches at least half (55%): noise alone could have held it there, so it is not placed.") in low
    # one whose spread could not lift it to half is placed: noise alone could not have held it there
    placed = regime_words(batches, [25, 10, 20, 190, 380, 450, 480], memory, math_, [1.0, 1.3, 1.1, 1.0, 1.0, 1.0, 1.0])
    assert "too noisy" not in placed and "Batches 2 to 4 reached less than half of their lower ceiling (18%)" in placed
    # the test is the share times the spread, whether or not the spread is over the quiet bar: a quiet point near half
    # could still have been lifted to it
    from inferlimits.figures.machine import TOO_NOISY, regime_kinds
    assert regime_kinds([0.45], [1.0], [2.0], [1.2]) == [TOO_NOISY]
    assert regime_kinds([0.45], [1.0], [2.0], [1.05]) == [OVERHEAD_BOUND]
    assert "Batch 4 reached less than half of its lower ceiling (18%). By the book's rule, that is far below both" in low
    assert regime_words(batches[:2], [5, 6], memory[:2], math_[:2], [3.0, 5.0]) == (
        "Every batch reached less than half of its lower ceiling (11% to 18%), but their shares times the spreads of the "
        "rounds (3.00× to 5.00×) reach at least half (54% to 55%): noise alone could have held them there, so they are "
        "not placed.")
    # a noisy point above its ceiling is named as such; one exactly at the quiet rule is quiet
    assert regime_words([1], [30], [28], [502], [1.3]).startswith("Batch 1 measured above its lower ceiling (107%).")
    assert regime_words([1], [20], [28], [502], [1.25]) == (
        "Batch 1 reached at least half of its lower ceiling, the memory ceiling (71%). By the book's rule, that is "
        "memory-bound.")
    assert regime_words([1], [20], [28], [502], [1.3]).endswith(
        "Its rounds varied more than 1.25×, but noise only slows a rate: a quiet run would place it at least as high.")
    with pytest.raises(ValueError, match="one length"):
        regime_words([1, 2], [1.0], [2.0], [3.0])
    with pytest.raises(ValueError, match="cached"):
        regime_words([1, 2], [1.0, 1.0], [2.0, 2.0], [3.0, 3.0], cached=[True])
    with pytest.raises(ValueError, match="spreads"):
        regime_words([1, 2], [1.0, 1.0], [2.0, 2.0], [3.0, 3.0], [1.0])
    with pytest.raises(ValueError, match="measured"):
        regime_words([1], [0.0], [2.0], [3.0])


def test_share_words_compare_with_the_eager_run_as_measured():
    from inferlimits.figures.machine import share_words
    eager = 0.0545
    above = share_words(3.6, 27.9, 502, eager)            # 13% of the ceiling: 2.4 times the eager run's
    assert above == ("This machine's share is 2.4 times the eager run's: higher, as the reasoning above expects. "
                     "This share is below half of the ceiling: far below both ceilings, by the book's rule.")
    below = share_words(1.5, 51.5, 400, eager)            # 3%
    assert below.startswith("This machine's share is only 0.53 times the eager run's. The reasoning above expects it "
                            "higher: costs other than reading memory took a larger part of each step.")
    assert "about the eager run's" in share_words(0.0545 * 30, 30, 400, eager)
    assert "This share is at least half of the ceiling: memory-bound" in share_words(20, 30, 400, eager)
    assert "above 100%" in share_words(33, 30, 400, eager, spread=2.0)
    # noise only slows a rate: a noisy share below half is not placed, one at or above half is
    assert share_words(3.6, 27.9, 502, eager, spread=2.0).endswith(
        "This share is below half of the ceiling, but its rounds varied 2.00×, more than 1.25×: noise alone could have "
        "held it there, so it is not placed.")
    assert share_words(20, 30, 400, eager, spread=1.3).endswith(
        "This share is at least half of the ceiling: memory-bound, by the book's rule. Its rounds varied 1.30×, but "
        "noise only slows a rate: a quiet run would place it at least as high.")
    # a share above 100% is never set beside the eager run's, nor one of a ceiling that may be too low
    assert share_words(33, 30, 400, eager) == (
        "The share is above 100%, so it is not set beside the eager run's. It beat the ceiling: it ran in a quieter "
        "spell than the fastest sample of this run's roof.")
    assert share_words(33, 30, 400, eager, cache=True).endswith("or it read some of its bytes from a cache.")
    assert "times the eager run's" not in share_words(33, 30, 400, eager)
    low = share_words(20, 30, 400, eager, spread=1.3, clean=False)
    assert low == ("This run's ceiling may be too low (see how this run was judged, in \"Can you trust this run?\"), so its "
                   "share may be too high to compare with the eager run's. This share is at least half of the ceiling: memory-bound, "
                   "by the book's rule. Its rounds varied 1.30×, and its ceiling may be too low, so a quiet run may "
                   "differ.")
    assert "noise only slows a rate" not in low
    # below half with quiet rounds on a run that was not steady: not placed either
    assert share_words(3.6, 27.9, 502, eager, steady=False).endswith(
        "This share is below half of the ceiling. Its rounds agreed, but other programs may have slowed every round "
        "alike, so it is not placed.")
    assert share_words(3.6, 27.9, 502, eager, spread=1.2) == above
    with pytest.raises(ValueError, match="eager_share"):
        share_words(1, 2, 3, 0)


# ---- the whole run in one line, the crossing, the rise, the two contexts ---------------------------

def test_verdict_words_for_made_up_runs():
    from inferlimits.arithmetic.generation import OVERHEAD_BOUND
    from inferlimits.arithmetic.roofline import COMPUTE_BOUND, MEMORY_BOUND
    from inferlimits.figures.machine import ABOVE, QUIET_SPREAD, TOO_NOISY, verdict_words
    noisy = {"repeats of the plain read": 2.9, "repeats of the matrix-vector read": 1.6,
             "repeats of the matrix product": 3.4}
    quiet = {"repeats of the plain read": 1.04, "repeats of the matrix-vector read": 1.1,
             "rounds of a typical setting of the decode sweep": 1.02}
    # noisy speeds, and a decoder held below half in rounds that agreed: the shares below half are not noise
    busy = verdict_words(noisy, [OVERHEAD_BOUND] * 14)
    assert busy == (
        "**This run, in short**\n\n"
        "- **Quiet or noisy:** Noisy: all 3 measurements varied more than 1.25× from slowest to fastest. The repeats "
        "of the matrix product varied most, 3.40×.\n"
        "- **The decoder:** All 14 decode measurements reached less than half of the lower ceiling (overhead-bound).\n"
        "- **What to read:** The relations, and the shares below half too: their rounds varied too little to lift them "
        "to half, so the decoder's own costs, not noise, held them there. Another run may move the other heights by as much as their spread.")
    # quiet and bound by the ceilings: the heights mean something too
    good = verdict_words(quiet, [MEMORY_BOUND] * 3 + [COMPUTE_BOUND] * 4 + [ABOVE])
    assert "- **Quiet or noisy:** Quiet: all 3 measurements varied at most 1.10× from slowest to fastest." in good
    assert ("- **The decoder:** Of its 8 decode measurements, 3 reached at least half of the lower ceiling, the memory "
            "ceiling (memory-bound), 4 reached at least half of the lower ceiling, the math ceiling (compute-bound) and "
            "1 measured above the lower ceiling.") in good
    assert good.endswith("- **What to read:** The relations and the heights. Both describe this machine.")
    # 12 of 14 far below, said with the counts, not as "partly"; only the 2 not placed are put down to noise
    counted = verdict_words(noisy, [OVERHEAD_BOUND] * 12 + [TOO_NOISY] * 2)
    assert ("- **The decoder:** Of its 14 decode measurements, 12 reached less than half of the lower ceiling "
            "(overhead-bound) and 2 were not placed (below half, where noise alone could have held them).") \
        in counted
    assert "artly" not in counted
    assert counted.endswith(
        "- **What to read:** The relations, and the heights only where the rounds were quiet. The 2 measurements not "
        "placed may sit higher on another run. The 12 below half are different: their rounds varied too little "
        "to lift them to half, so the decoder's own costs, not noise, held them there. On a quiet machine, expect smaller spreads.")
    # no promise of the model's shape after a verdict that the decoder's own costs, not noise, held points below half;
    # only where noise may explain every point below half
    assert verdict_words(noisy, [MEMORY_BOUND] * 12 + [TOO_NOISY] * 2).endswith(
        "On a quiet machine, expect smaller spreads, and points that follow the shape of the model's circles.")
    assert "The one below half is different: its rounds varied too little to lift it to half, so the decoder's own costs, not noise, held it there." \
        in verdict_words(noisy, [OVERHEAD_BOUND] + [TOO_NOISY] * 3)
    assert "The one measurement not placed may sit higher" in verdict_words(noisy, [OVERHEAD_BOUND] * 13 + [TOO_NOISY])
    assert "Its one decode measurement was not placed" in verdict_words(noisy, [TOO_NOISY])
    # noisy but bound; quiet but overhead-bound, in part
    assert verdict_words(noisy, [MEMORY_BOUND] * 7).endswith(
        "The relations first. Another run may move the heights by as much as the spread.")
    partly = verdict_words(quiet, [OVERHEAD_BOUND] * 5 + [MEMORY_BOUND] * 9)
    assert ("Of its 14 decode measurements, 9 reached at least half of the lower ceiling, the memory ceiling "
            "(memory-bound) and 5 reached less than half of the lower ceiling (overhead-bound).") in partly
    assert "where the decoder fell below half, its own costs, not noise, set its heights" in partly
    assert "Quiet:" in verdict_words({"x": QUIET_SPREAD}, [MEMORY_BOUND]) and "Noisy:" in verdict_words(
        {"x": QUIET_SPREAD * 1.01}, [MEMORY_BOUND])
    # steady repeats on a machine that other programs kept busy throughout: still not a quiet run
    steady_but_busy = verdict_words(quiet, [OVERHEAD_BOUND] * 14, busy=True)
    assert "- **Quiet or noisy:** Noisy: other programs kept the cores busy, though all 3 measurements varied at " \
           "most 1.10×." in steady_but_busy
    assert "The relations, and the shares below half too" in steady_but_busy
    # quiet means every spread, as the chapter defines it: one noisy measurement among many makes the run noisy,
    # with no third word ("mostly quiet") that the chapter never defines
    many = {f"rounds of batch {b}": 1.05 for b in range(20)} | {"rounds of batch 32": 1.3}
    assert "Noisy: 1 of its 21 measurements varied more than 1.25× from slowest to fastest. The rounds of batch " \
           "32 varied most, 1.30×." in verdict_words(many, [MEMORY_BOUND])
    assert "Quiet:" not in verdict_words(many, [MEMORY_BOUND]) and "ostly" not in verdict_words(many, [MEMORY_BOUND])
    # waits for a core above the chapter's threshold are said in the summary; at or below it, nothing is
    waited = verdict_words(many, [MEMORY_BOUND], waited=0.4)
    assert ("- **Waiting for a core:** In the fastest sample of one of the run's measurements, the sweeps' points "
            "among them (not only the roof's rows), this process's threads, together, waited up to 0.40 s for a core "
            "per second, above 0.05 s: other threads, most likely other programs', pushed them off their "
            "cores.\n") in waited
    assert "Waiting for a core" not in verdict_words(many, [MEMORY_BOUND], waited=measure.WAIT_SHARE)
    assert "waited up to 0.052 s for a core per second, above 0.05 s" in verdict_words(many, [MEMORY_BOUND], waited=0.052)
    # half or more noisy is noisy; a busy machine is noisy however few spreads were
    half = {f"rounds of batch {b}": 1.05 if b % 2 else 1.5 for b in range(4)}
    assert "Noisy: 2 of its 4 measurements varied more than 1.25×" in verdict_words(half, [MEMORY_BOUND])
    assert "Noisy: 1 of its 21 measurements" in verdict_words(many, [MEMORY_BOUND], busy=True)
    assert "Other programs also kept the cores busy before measuring." in verdict_words(many, [MEMORY_BOUND], busy=True)
    # the decoder set beside the reference run, where the chapter asks for it
    beside = verdict_words(quiet, [MEMORY_BOUND], reference="this run's rates as shares of the reference's: x 90%.")
    assert ("- **The decoder against the reference run:** This run's rates as shares of the reference's: x 90%.\n"
            "- **What to read:**") in beside
    for bad in (dict(spreads={}, kinds=[MEMORY_BOUND]), dict(spreads=quiet, kinds=[]),
                dict(spreads={"x": 0}, kinds=[MEMORY_BOUND]), dict(spreads=quiet, kinds=["partly"])):
        with pytest.raises(ValueError, match="spreads|kinds"):
            verdict_words(**bad)


def test_run_verdict_reads_the_spread_of_the_repeats_and_the_regimes_of_the_decode_points():
    from inferlimits.figures.machine import run_spreads, run_verdict
    s = measure.Samples
    c = tinyllm.TINY_LLAMA
    quiet = measure.Machine("cpu", 2, "2026-01-01", s((1.0e10, 1.05e10)), s((1e10,)), s((3e10, 3.1e10)), 2**28, 2048)
    memory, math_ = measure.decode_ceilings_tokens_per_s(quiet, 1, 128, c)
    near = [measure.DecodePoint(c, 1, 128, s((0.9 * min(memory, math_),) * 3))]
    far = [measure.DecodePoint(c, 1, 128, s((0.1 * min(memory, math_),) * 3))]
    assert run_verdict(quiet, near).data.endswith("The relations and the heights. Both describe this machine.")
    # a decode sweep's steps timed beside their weight products alone: those products' rounds count too
    split = measure.StepSplit(c, 1, 128, tinyllm.weight_shapes(c), near[0].rate, s((1.0, 2.0)))
    with_split = run_verdict(quiet, measure.DecodeSweep(tuple(near), splits=(split,))).data
    assert "The rounds of batch 1's weight products alone, in the decode sweep varied most, 2.00×." in with_split
    # the first thing a measurement tests of a ceiling: no point above it
    assert ("- **Under the ceilings:** Every one of the 1 measured points sat at or below its ceiling; the highest "
            "reached 90% of it. The ceilings held as upper bounds.") in run_verdict(quiet, near).data
    from inferlimits.figures.machine import bounds_words
    assert bounds_words([0.5, 1.2, 1.05]) == ("2 of the 3 measured points sat above their ceiling, up to 120% of it: "
                                              "the words under each table say why.")
    with pytest.raises(ValueError, match="shares"):
        bounds_words([])
    assert bounds_words([0.5, 0.9], "the point that set it").startswith(
        "every one of the 2 measured points sat at or below its ceiling (the point that set it aside); the highest "
        "reached 90% of it.")
    busy_quiet = measure.Machine("cpu", 2, "2026-01-01", s((1.0e10, 1.05e10)), s((1e10,)), s((3e10, 3.1e10)), 2**28,
                                 2048, load=3.0)
    assert "Noisy: other programs kept the cores busy" in run_verdict(busy_quiet, near).data
    assert "Its one decode measurement reached less than half of the lower ceiling (overhead-bound)." in run_verdict(
        quiet, far).data
    noisy = measure.Machine("cpu", 2, "2026-01-01", s((0.4e10, 1.0e10)), s((1e10,)), s((3e10,)), 2**28, 2048)
    assert "The repeats of the plain read varied most, 2.50×." in run_verdict(noisy, far).data
    # quiet speeds, but sweeps measured in a busy spell: every setting's rounds speak too, and none is placed
    busy = [measure.DecodePoint(c, b, 128, s((x / 100, 2 * x, 3 * x))) for b, x in ((1, 0.1), (2, 0.2), (4, 0.3))]
    words = run_verdict(quiet, busy).data
    assert ("Noisy: 3 of its 6 measurements varied more than 1.25× from slowest to fastest. The rounds of batch 1 at "
            "128 tokens in the decode sweep varied most, 300×.") in words
    assert "All 3 decode measurements were not placed" in words
    sweep = measure.ProductSweep(tuple(measure.ProductPoint(b, 64, 64, s(r)) for b, r in
                                       ((1, (1.0, 1.0, 1.0)), (2, (1.0, 1.1, 9.0)), (4, (1.0, 1.2, 1.0)))), s((1.0,)))
    spreads = run_spreads(quiet, near, sweep)
    # one hiccup counts: the chapter calls a run quiet only when every spread is at most 1.25×
    assert spreads["rounds of 2 vectors in the product sweep"] == 9.0
    assert set(spreads) == {"repeats of the plain read", "repeats of the matrix-vector read",
                            "repeats of the matrix product", "rounds of 1 vector in the product sweep",
                            "rounds of 2 vectors in the product sweep", "rounds of 4 vectors in the product sweep",
                            "rounds of the product sweep's plain read", "rounds of batch 1 at 128 tokens in the decode sweep"}
    assert "Noisy: 1 of its 8 measurements varied more than 1.25×" in run_verdict(quiet, near, sweep).data
    # beside the reference run kept in the book's data, where the chapter asks for it: a made-up machine is another
    # machine than the reference's, so the shares compare two machines
    from inferlimits.machine import reference
    ref = reference.reference_run()
    beside = run_verdict(quiet, near, sweep, reference=True).data
    assert f"- **The decoder against the reference run:** This run's rates as shares of the reference's: the decoder at batch 1 " \
           f"{near[0].tokens_per_s / ref.single_stream_tokens_per_s:.0%}." in beside
    assert f"The reference ran on another machine, {ref.label}, so these shares compare the two machines" in beside
    assert "against the reference run" not in run_verdict(quiet, near, sweep).data


def test_crossing_words():
    from inferlimits.figures.machine import crossing_words
    assert crossing_words(6.4, 6.0, 64) == (
        "the ceilings cross at a batch of about 6.4. The short rule, balance point × W/F, gives 6.0. Past the knee, "
        "math is the lower ceiling.")
    assert crossing_words(95.2, 40.0, 64) == (
        "the ceilings cross at a batch of about 95. The short rule, balance point × W/F, gives 40. That lies past the "
        "largest batch measured, so memory is the lower ceiling at every batch here.")
    assert crossing_words(math.inf, 40.0, 64) == "the ceilings never cross. Memory is the lower ceiling at every batch."
    assert "Math is the lower ceiling at every batch" in crossing_words(0.5, 0.5, 64)
    with pytest.raises(ValueError, match="crossing"):
        crossing_words(float("nan"), 1.0, 64)


def test_rise_words():
    from inferlimits.figures.machine import rise_words
    batches = [1, 2, 4, 8, 16, 32, 64]
    # the zigzag the student quoted, rising 5.4× in all
    zigzag = rise_words(batches, [12.9, 5.6, 15.6, 6.6, 31.7, 54.0, 70.2])
    assert zigzag == ("From 1 to 64 sequences, tokens per second rose 5.4×. They dropped from 1 to 2 and from 4 to 8 "
                      "sequences.")
    steady = rise_words(batches, [10, 19, 37, 70, 120, 160, 170])
    assert steady == "From 1 to 64 sequences, tokens per second rose 17×. They rose at every doubling."
    level = rise_words([1, 2, 4], [10, 10.2, 9.0])
    assert level == ("From 1 to 4 sequences, tokens per second fell by 10%. They dropped from 2 to 4 and held level "
                     "from 1 to 2 sequences.")
    with pytest.raises(ValueError, match="one length"):
        rise_words([1], [1.0])


def test_decode_words_give_the_crossing_the_rise_and_the_regimes():
    from inferlimits.arithmetic.generation import decode_knee_batch
    from inferlimits.figures.machine import decode_words
    s = measure.Samples
    c = tinyllm.TINY_LLAMA
    m = measure.Machine("cpu", 2, "2026-01-01", s((1.0e10,)), s((1e10,)), s((3e10,)), 2**28, 2048)
    points = [measure.DecodePoint(c, b, 128, s((r,))) for b, r in ((1, 12.9), (2, 5.6), (4, 15.6), (8, 6.6))]
    words = decode_words(points, m).data
    # the verdict shows; the lesson, and one short line per regime the batches sat in, labelled by it, are folded
    assert _shown(words) == [["In short"], ["The lesson", "This sweep", "The knee", "The rise", "Far below both"]]
    # the verdict leads, in one line: every batch's regime and its share of the lower ceiling
    assert _bullet(words, "In short") == "- **In short:** Batches 1 to 8 overhead-bound (4% to 42%)."
    from inferlimits.arithmetic.generation import OVERHEAD_BOUND
    from inferlimits.arithmetic.roofline import COMPUTE_BOUND, MEMORY_BOUND
    from inferlimits.figures.machine import TOO_NOISY, verdict_line
    kinds = [MEMORY_BOUND] + [OVERHEAD_BOUND] * 4 + [TOO_NOISY, COMPUTE_BOUND]
    assert verdict_line([1, 2, 4, 8, 16, 32, 64], kinds, [0.74, 0.33, 0.4, 0.45, 0.47, 0.3, 0.56]) == (
        "Batch 1 memory-bound (74%); batches 2 to 16 overhead-bound (33% to 47%); batch 32 not placed (30%); "
        "batch 64 compute-bound (56%).")
    with pytest.raises(ValueError, match="shares"):
        verdict_line([1, 2], kinds[:2], [0.5])
    # batches 2 to 8 sat further below their ceiling than batch 1: a fixed cost per step cannot explain that
    assert _bullet(words, "The lesson") == ("- **The lesson:** This run does not show the memory-to-math knee: all 4 batches were "
                         "overhead-bound. Their rounds varied too little to lift them to half, so noise did not hold them below half. Costs the formula "
                         "leaves out set the pace. Batches 2 to 8 sat further below their ceiling than batch 1 (42%), "
                         "which a fixed cost per step cannot do. Likely causes grow with the batch: numpy's routines "
                         "for small products, and attention's loop over each sequence and head, which grows with the "
                         "context too. The chapter times the weight products alone only at the short context.")
    assert _bullet(decode_words(points, m, split_test=True).data, "The lesson").endswith(
        "cannot do. The table after the figure tests what held them, at two of these batches.")
    lesson = _bullet(words, "The lesson")
    assert "quiet machine" not in lesson and "circles" not in lesson, "no promise the rounds contradict"
    crossing = decode_knee_batch(c, 3e10, 1e10, 128, "FP32", "FP32", "FP32")
    assert f"The ceilings cross at a batch of about {crossing:.1f}. The short rule, balance point × W/F, gives 6.0." in words
    assert "They dropped from 1 to 2 and from 4 to 8 sequences." in words
    assert "far below both ceilings" in words
    assert _bullet(words, "This sweep") == "- **This sweep:** Quiet: all 4 batches varied at most 1.00× from slowest to fastest."
    # the same points measured in a busy spell: what a quiet machine would show instead
    busy = [measure.DecodePoint(c, p.batch, 128, s((p.tokens_per_s, p.tokens_per_s / 20))) for p in points]
    items = decode_words(busy, m).data
    assert _bullet(items, "This sweep") == ("- **This sweep:** Noisy: all 4 batches varied more than 1.25× from slowest to fastest, up to "
                        "20×.")
    # noisy points below half are not placed by the book's rule
    assert _bullet(items, "Not placed").startswith("- **Not placed:** Every batch reached less than half of its lower ceiling "
                               "(4% to 42%), but their shares times the spreads of the rounds (20×) reach at least half:")
    assert _bullet(items, "The lesson").startswith("- **The lesson:** This run does not show the memory-to-math knee: all 4 batches "
                                "were not placed. Their rounds were noisy: other programs may have held them "
                                "below half. On a quiet machine, the formula expects the rate to rise near the memory "
                                "ceiling")
    # quiet rounds on a machine that other programs kept busy: a steady load is not ruled out, so none is placed
    loaded = decode_words(points, replace(m, load=3.0)).data
    assert _bullet(loaded, "The ceilings") == ("- **The ceilings:** They use this run's roof, which other programs may have lowered: the "
                         "shares may be too high.")
    assert _bullet(loaded, "Not placed") == ("- **Not placed:** Every batch reached less than half of its lower ceiling (4% to "
                         "42%). This run was not steady (see \"Can you trust this run?\"), so other programs may "
                         "have slowed every round alike: they are not placed.")
    assert _bullet(loaded, "The lesson").startswith("- **The lesson:** This run does not show the memory-to-math knee: all 4 batches were "
                                 "not placed. Their rounds agreed, but other programs may have slowed every "
                                 "round alike and held them below half.")
    # a run whose ceilings may be too low says so before the regimes
    judged = replace(m, judgement=measure.Judgement(measure.ROOF_UNKNOWN, clean_ceiling=False))
    assert _bullet(decode_words(points, judged).data, "The ceilings") == (
        "- **The ceilings:** They use this run's roof, which other programs may have lowered: the shares may be too "
        "high.")


def test_knee_lesson_words():
    from inferlimits.arithmetic.generation import OVERHEAD_BOUND
    from inferlimits.arithmetic.roofline import COMPUTE_BOUND, MEMORY_BOUND
    from inferlimits.figures.machine import TOO_NOISY, knee_lesson_words
    batches = [1, 2, 4, 8, 16, 32, 64]
    near = [MEMORY_BOUND] * 3 + [COMPUTE_BOUND] * 4
    assert knee_lesson_words(batches, near, 6.1) == (
        "this run shows the memory-to-math knee. Every batch reached at least half of its lower ceiling: the memory "
        "ceiling below the knee, the math ceiling past it.")
    # batches below half whose rounds agreed (regime_kinds calls them overhead-bound): not noise, costs the formula
    # leaves out
    partly = knee_lesson_words(batches, [MEMORY_BOUND] + [OVERHEAD_BOUND] * 2 + [COMPUTE_BOUND] * 4, 6.1)
    # its two ends on either side of the knee lead the verdict, and are not said twice
    assert partly == (
        "this run shows the memory-to-math knee only by its two ends, one on each side of it (batch 1 memory-bound, "
        "batch 64 compute-bound): "
        "2 of its 7 batches were overhead-bound. Their rounds varied too little to lift them to half, so noise did not hold them below half. Costs the "
        "formula leaves out set the pace. Likely ones are numpy's slower routine at a few sequences (see the product "
        "sweep's control) and Python's loop over numpy's calls.")
    assert "other programs" not in partly and "circles" not in partly
    # with each batch's share of its ceiling: middle batches further below it than batch 1 rule out a fixed cost per
    # step, which weighs less as the batch grows; the words send the reader to the test that finds the cause
    kinds = [MEMORY_BOUND] + [OVERHEAD_BOUND] * 5 + [COMPUTE_BOUND]
    deeper = knee_lesson_words(batches, kinds, 8.7, shares=[0.58, 0.25, 0.25, 0.28, 0.39, 0.48, 0.58])
    assert ("Costs the formula leaves out set the pace. Batches 2 to 32 sat further below their ceiling than batch 1 "
            "(58%), which a fixed cost per step cannot do. Likely causes grow with the batch: numpy's routines for "
            "small products, and attention's loop over each sequence and head") in deeper
    tested = knee_lesson_words(batches, kinds, 8.7, shares=[0.58, 0.25, 0.25, 0.28, 0.39, 0.48, 0.58], split_test=True)
    assert "cannot do. The table after the figure tests what held them, at two of these batches." in tested
    assert "Likely" not in tested
    # middle batches no further below their ceiling than batch 1: a fixed cost per step is not ruled out
    level = knee_lesson_words(batches, [OVERHEAD_BOUND] * 6 + [COMPUTE_BOUND], 8.7,
                              shares=[0.3, 0.31, 0.33, 0.35, 0.4, 0.45, 0.6])
    assert "Python's loop over numpy's calls" in level and "further below" not in level
    with pytest.raises(ValueError, match="one share per batch"):
        knee_lesson_words(batches, kinds, 8.7, shares=[0.5])
    # batches below half whose rounds were noisy (not placed): other programs may have held them there
    noisy = knee_lesson_words(batches, [MEMORY_BOUND] + [TOO_NOISY] * 6, 9.5)
    assert noisy == (
        "this run does not show the memory-to-math knee: 6 of its 7 batches were not placed. Their rounds were "
        "noisy: other programs may have held them below half. On a quiet machine, the formula expects the rate to rise "
        "near the memory ceiling up to the knee, then level off under the math ceiling, as the model's circles do.")
    assert knee_lesson_words(batches, near[:6] + [TOO_NOISY], 6.1).startswith(
        "this run does not show the memory-to-math knee: 1 of its 7 batches was not placed. Its rounds were "
        "noisy: other programs may have held it below half.")
    # the long-context sweep the student read, noisy in one batch only: 5 overhead-bound with quiet rounds, 1 too noisy
    both = knee_lesson_words(batches, [MEMORY_BOUND] + [OVERHEAD_BOUND] + [TOO_NOISY] + [OVERHEAD_BOUND] * 4, 18.0)
    assert both.startswith("this run does not show the memory-to-math knee: 5 of its 7 batches were overhead-bound and 1 "
                           "was not placed. The overhead-bound batches' rounds varied too little to lift "
                           "them to half, so noise did not hold them below half.")
    assert "The batch not placed may owe its place below half to other programs." in both
    # the overhead-bound batches' rounds agreed, so a quiet machine is not promised the shape: the words say what
    # the data show instead, the one end that reached half of its ceiling
    assert "quiet machine" not in both and "circles" not in both
    assert both.endswith("Only its smallest batch, 1, reached half of its ceiling: memory-bound, below the knee.")
    assert "The batches not placed may owe their place below half" in knee_lesson_words(
        batches, [MEMORY_BOUND] + [OVERHEAD_BOUND] + [TOO_NOISY] * 2 + [OVERHEAD_BOUND] * 3, 18.0)
    assert "The overhead-bound batch's rounds varied too little to lift it to half, so noise did not hold it below half." in knee_lesson_words(
        batches, [MEMORY_BOUND] + [OVERHEAD_BOUND] + [TOO_NOISY] * 5, 18.0)
    assert knee_lesson_words(batches, near, 95.0) == (
        "this sweep cannot show the memory-to-math knee: the knee lies past the largest batch measured.")
    assert "past the largest" in knee_lesson_words(batches, near, math.inf)
    assert "below the smallest" in knee_lesson_words(batches, near, 0.5)
    with pytest.raises(ValueError, match="one length"):
        knee_lesson_words(batches, near[:3], 6.1)


def test_ends_words_say_which_ends_of_a_sweep_still_show_the_knee():
    """Where the middle batches fell below half, the ends may still sit near their ceilings on either side of the
    knee: the words say which, and only on the side of the knee where each lies."""
    from inferlimits.arithmetic.generation import OVERHEAD_BOUND
    from inferlimits.arithmetic.roofline import COMPUTE_BOUND, MEMORY_BOUND
    from inferlimits.figures.machine import TOO_NOISY, ends_words
    batches = [1, 2, 4, 8, 16, 32, 64]
    # the short-context sweep of the stored run: batch 1 memory-bound, 2 to 16 below half, 32 noisy, 64 compute-bound
    stored = [MEMORY_BOUND] + [OVERHEAD_BOUND] * 4 + [TOO_NOISY, COMPUTE_BOUND]
    assert ends_words(batches, stored, 8.4) == ("Its two ends still lie on either side of the knee: batch 1 was "
                                                "memory-bound and batch 64 compute-bound.")
    # the long-context sweep: only batch 1
    assert ends_words(batches, [MEMORY_BOUND] + [OVERHEAD_BOUND] * 6, 9.8) == (
        "Only its smallest batch, 1, reached half of its ceiling: memory-bound, below the knee.")
    assert ends_words(batches, [OVERHEAD_BOUND] * 6 + [COMPUTE_BOUND], 9.8) == (
        "Only its largest batch, 64, reached half of its ceiling: compute-bound, past the knee.")
    assert ends_words(batches, [OVERHEAD_BOUND] * 7, 9.8) == ""
    assert ends_words(batches, [MEMORY_BOUND] * 6 + [COMPUTE_BOUND], 95.0).startswith("Only its smallest"), \
        "a largest batch below the knee is not on its math side"
    with pytest.raises(ValueError, match="one length"):
        ends_words(batches, [MEMORY_BOUND], 8.0)


def test_context_words_set_the_measured_fall_beside_the_formulas():
    from inferlimits.figures.machine import context_words
    # the stored run the student quoted: the math ceiling binds at both contexts and falls 12%, the rate 47%
    words = context_words(64, (128, 1024), 37.3 / 70.2, (1269, 519), (178, 157))
    assert words == ("At a batch of 64, going from 128 to 1,024 tokens of context lowers the formula's lower ceiling "
                     "by 12%. Math is the lower ceiling at both. Compared round by round, the measured rate fell by "
                     "47%. That is further than the ceiling fell. A cost the formula leaves out grew with the context.")
    assert context_words(64, (128, 1024), 37.3 / 70.2, (1269, 519), (178, 157), spread=2.0).endswith(
        "grew with the context. The rounds were noisy, so part of this gap may be noise.")
    # the same run, its rates far below both ceilings (70.2 of 178 tokens/s): the ceiling's fall bounds nothing
    assert context_words(64, (128, 1024), 37.3 / 70.2, (1269, 519), (178, 157), far=(True, True)).endswith(
        "That is further than the ceiling fell. The rate sat below half of its ceiling at both contexts, so how far the "
        "ceiling fell says nothing of how far the rate could fall. A cost the formula leaves out grew with the context.")
    assert "below half of its ceiling at the long context, so" in context_words(
        64, (128, 1024), 37.3 / 70.2, (1269, 519), (178, 157), far=(False, True))
    # a machine that follows the formula, and one whose memory ceiling binds at the long context only
    assert context_words(64, (128, 1024), 151 / 170, (1269, 519), (178, 157), spread=2.0).endswith(
        "fell by 11%. That is about as far as the ceiling fell.")
    switch = context_words(64, (128, 1024), 290 / 300, (1269, 340), (400, 357))
    assert "The lower ceiling is math at the short context and memory at the long one." in switch
    assert switch.endswith("That is less far than the ceiling fell. The rate sat further below its ceiling "
                           "at the short context.")
    # a noisy run whose rate did not fall at all
    # the tables' fastest rounds, where they print another fall, are given beside the paired one
    assert ("fell by 45%; the tables' fastest rounds, which need not come from the same round, give 50%. That" in
            context_words(64, (128, 1024), 0.55, (1269, 519), (178, 157), fastest_ratio=0.5))
    assert "fastest rounds" not in context_words(64, (128, 1024), 0.55, (1269, 519), (178, 157), fastest_ratio=0.551)
    rose = context_words(8, (128, 1024), 1.1, (50, 40), (90, 80))
    assert "Compared round by round, the measured rate did not fall (1.1×). That goes against the ceiling" in rose
    with pytest.raises(ValueError, match="measured_ratio"):
        context_words(64, (128, 1024), 0.0, (1, 1), (1, 1))


def test_context_change_compares_the_largest_batch_measured_at_both_contexts_round_by_round():
    from inferlimits.figures.machine import context_change
    s = measure.Samples
    c = tinyllm.TINY_LLAMA
    m = measure.Machine("cpu", 2, "2026-01-01", s((1.0e10,)), s((1e10,)), s((3e10,)), 2**28, 2048)
    short = [measure.DecodePoint(c, b, 128, s(r)) for b, r in ((1, (10.0, 2.0, 10.0)), (2, (12.0, 12.0, 12.0)))]
    long = [measure.DecodePoint(c, b, 1024, s(r)) for b, r in ((1, (9.0, 1.8, 9.0)), (2, (6.0, 6.0, 6.0)),
                                                                 (4, (7.0, 7.0, 7.0)))]
    assert context_change(short, long, m).data.startswith("At a batch of 2, going from 128 to 1,024 tokens")
    # round 2 was slow for both contexts alike: round by round, the fall is 10% in every round
    assert "the measured rate fell by 10%" in context_change(short, long, m, batch=1).data
    with pytest.raises(ValueError, match="share"):
        context_change(short, [measure.DecodePoint(c, 8, 1024, s((1.0,)))], m)


# ---- each reason the words can give, decided from made-up measurements --------------------------

def test_regime_kinds_place_a_noisy_point_only_where_noise_cannot_have_put_it():
    """Noise only slows a rate: a noisy point at or above half of its ceiling is placed (a quiet run would
    place it at least as high), a noisy point below half is not (noise alone could have held it there)."""
    from inferlimits.arithmetic.generation import OVERHEAD_BOUND
    from inferlimits.arithmetic.roofline import COMPUTE_BOUND, MEMORY_BOUND
    from inferlimits.figures.machine import ABOVE, TOO_NOISY, regime_kinds
    measured, memory, math_ = [80, 20, 80, 20, 120], [100, 100, 300, 100, 100], [200, 200, 100, 200, 200]
    assert regime_kinds(measured, memory, math_) == [MEMORY_BOUND, OVERHEAD_BOUND, COMPUTE_BOUND, OVERHEAD_BOUND, ABOVE]
    assert regime_kinds(measured, memory, math_, [3.0, 3.0, 3.0, 1.2, 3.0]) == [
        MEMORY_BOUND, TOO_NOISY, COMPUTE_BOUND, OVERHEAD_BOUND, ABOVE]
    with pytest.raises(ValueError, match="spreads"):
        regime_kinds(measured, memory, math_, [1.0])


def test_noise_words_call_a_sweep_noisy_however_few_of_its_spreads_are_noisy():
    """The chapter defines quiet (every spread at most 1.25×) and noisy, no third word: a sweep with one noisy
    batch in seven is noisy, and the words say how few were."""
    from inferlimits.figures.machine import noise_words
    # the long-context sweep the student read: 1 of 7 batches noisy
    assert noise_words([1.1, 1.2, 1.5, 1.2, 1.2, 1.2, 1.1], "batches") == (
        "noisy: 1 of its 7 batches varied more than 1.25× from slowest to fastest, 1.50×; the other 6 varied at most "
        "1.25×.")
    assert noise_words([1.1, 1.3, 1.9, 1.0, 1.0, 1.0, 1.0], "batches") == (
        "noisy: 2 of its 7 batches varied more than 1.25× from slowest to fastest, up to 1.90×; the other 5 varied at "
        "most 1.25×.")
    assert noise_words([1.3, 1.1]) == ("noisy: 1 of its 2 rows varied more than 1.25× from slowest to fastest, 1.30×; "
                                       "the other varied at most 1.25×.")
    assert noise_words([1.1, 1.3, 1.9, 1.4]).startswith("noisy: 3 of its 4 rows"), "half or more is noisy"
    assert noise_words([1.3, 1.0]).startswith("noisy: 1 of its 2 rows")


def test_crossing_words_say_why_the_knee_moves_from_the_short_rule():
    from inferlimits.figures.machine import crossing_words
    # the long-context sweep the student read: 18 against the rule's 12; each sequence adds 13.6 MB to a step
    assert crossing_words(17.9, 11.8, 64, 13.59e6) == (
        "the ceilings cross at a batch of about 18. The short rule, balance point × W/F, gives 12. The knee lies above "
        "the rule, which leaves out the 13.6 MB of KV cache and activations each sequence adds to a step. With them, the "
        "memory ceiling climbs more slowly and meets the math ceiling later. Past the knee, math is the lower ceiling.")
    # within 10% of the rule, no reason is needed; without the bytes, none is given
    assert "leaves out" not in crossing_words(12.9, 11.8, 64, 2.6e6)
    assert "leaves out" not in crossing_words(17.9, 11.8, 64)
    # below the rule: attention's work (a larger F) lowered the math ceiling more than the bytes raised the knee
    assert ("The knee lies below the rule, which leaves out attention's work: at this context each token costs more "
            "operations, which lowers the math ceiling.") in crossing_words(9.0, 11.8, 64, 1e6)
    with pytest.raises(ValueError, match="per_sequence_bytes"):
        crossing_words(17.9, 11.8, 64, 0.0)


def test_decode_words_give_the_reason_the_long_context_knee_moves():
    from inferlimits.figures.machine import decode_words
    s = measure.Samples
    c = tinyllm.TINY_LLAMA
    m = measure.Machine("cpu", 2, "2026-01-01", s((24.9e9,)), s((1e10,)), s((148e9,)), 2**28, 2048)
    points = [measure.DecodePoint(c, b, 1024, s((10.0 * b,))) for b in (1, 2, 4, 8, 16, 32, 64)]
    knee = _bullet(decode_words(points, m).data, "The knee")
    assert knee.startswith("- **The knee:** The ceilings cross at a batch of about 18. The short rule, balance point "
                           "× W/F, gives 12. The knee lies above the rule, which leaves out the 13.6 MB of KV cache")


def test_above_roof_words_give_the_reason_the_rounds_show():
    from inferlimits.figures.machine import above_roof_words
    every = [1, 2, 4, 8, 16, 32, 64, 128, 256]
    # past the ridge, the median round beat the median of the roof's product: the roof's own product under-estimates
    shape = above_roof_words([128, 256], [1.07, 1.12], every, past=[True, True], typical=[True, True], roof_side=2048)
    assert shape == ("128 to 256 vectors ran at 107% to 112% of the roof. Past the ridge the roof is flat and does not "
                     "depend on bytes, so reading fewer bytes cannot lift a point above it. They beat the roof in their "
                     "median round too. The roof's own 2,048 × 2,048 product ran less efficiently than these wider "
                     "products, so the flat roof under-estimates what numpy reaches here.")
    assert "cache can" not in shape and "quieter spell" not in shape
    # only the fastest round beat it: a quieter spell
    spell = above_roof_words([256], [1.05], every, past=[True], typical=[False], roof_side=2048)
    assert spell.endswith("so reading fewer bytes cannot lift a point above it. It beat the roof only in its fastest "
                          "round: it ran in a quieter spell than the roof's fastest sample.")
    # below the ridge: a quieter spell, and bytes from a cache only where a cache could hold the difference
    below = above_roof_words([1], [1.14], every, past=[False], typical=[False], roof_side=2048)
    assert below == ("1 vector ran at 114% of the roof. It lies below the ridge, where only a quieter spell can lift a "
                     "point above the roof.")
    cached = above_roof_words([1], [1.04], every, past=[False], typical=[False], roof_side=2048, cached=[True])
    assert cached == ("1 vector ran at 104% of the roof. It lies below the ridge, where a quieter spell, or bytes found "
                      "in a cache, can lift a point above the roof.")
    mixed = above_roof_words([1, 16, 32, 256], [1.14, 1.07, 1.51, 1.14], every, past=[False, True, True, True],
                             typical=[False, False, True, True], roof_side=2048)
    assert ("32 and 256 vectors beat the roof in their median round too. The roof's own 2,048 × 2,048 product ran less "
            "efficiently than these wider products") in mixed
    assert "16 vectors beat the roof only in their fastest round: they ran in a quieter spell" in mixed
    assert "1 vector lies below the ridge" in mixed
    assert above_roof_words([256], [1.05], every, past=[True], typical=[False], roof_side=2048,
                            source="the reference run").endswith("a quieter spell than the reference run's fastest sample.")
    with pytest.raises(ValueError, match="typical"):
        above_roof_words([1], [1.1], every, typical=[True, False])


def test_cache_lift_is_what_a_cache_could_hold_of_a_step():
    from inferlimits.figures.machine import cache_lift
    MB = 1e6
    # the chapter's machine: 33.6 MB of cache against the 268 MB matrix, at most 12.5% above the roof
    assert cache_lift(33.6 * MB, 268 * MB) == pytest.approx(0.125, rel=1e-2)
    # a decode step may keep its activations in the caches too
    assert cache_lift(33.6 * MB, 488 * MB, 64.5 * MB) == pytest.approx((33.6 + 64.5) / 488)
    assert cache_lift(None, 268 * MB) == 0 and cache_lift(1e12, 1.0) == 1
    with pytest.raises(ValueError, match="step_bytes"):
        cache_lift(1.0, 0.0)


def test_context_words_put_the_gap_down_to_noise_only_where_a_round_disagrees():
    from inferlimits.figures.machine import context_words
    args = (64, (128, 1024), 0.52, (1269, 519), (178, 157))
    assert context_words(*args, spread=1.5, per_round=[0.50, 0.52, 0.55]).endswith(
        "A cost the formula leaves out grew with the context. The gap held in every round, so it is not noise.")
    assert context_words(*args, spread=1.5, per_round=[0.50, 0.52, 0.95]).endswith(
        "The gap did not hold in every round, so part of it may be noise.")
    # a rate that fell less far than the ceiling, in every round
    less = context_words(64, (128, 1024), 0.97, (1269, 340), (400, 357), per_round=[0.96, 0.97, 0.99])
    assert less.endswith("The rate sat further below its ceiling at the short context. The gap held in every round, so "
                         "it is not noise.")
    with pytest.raises(ValueError, match="per_round"):
        context_words(*args, per_round=[0.5, 0.0])


# ---- the reference run kept in the book's data ------------------------------------------------------

REFERENCE_ROW = dict(processor="cpu", cores=2, date="2026-01-01", numpy="2.0", load_before=0.1, measurements=27,
                     noisy_measurements=0, widest_spread=1.2, bandwidth_gb_per_s=30.0, math_gflop_per_s=150.0,
                     control_gflop_per_s=20.0, product_gflop_per_s={1: 14.0, 2: 12.0, 16: 60.0, 256: 140.0},
                     short_context_tokens_per_s={1: 80.0, 2: 50.0, 64: 600.0},
                     long_context_tokens_per_s={1: 70.0, 2: 40.0, 64: 300.0},
                     split_products_tokens_per_s={1: 90.0, 2: 62.5})


def test_the_reference_run_is_data_with_its_machine_date_and_quiet():
    from inferlimits.figures.machine import QUIET_SPREAD
    from inferlimits.figures import reference as shown
    from inferlimits.machine import reference
    ref = reference.reference_run()
    assert ref.cores >= 1 and len(ref.date) == 10 and ref.date[4] == "-" and ref.processor
    assert 0 <= ref.noisy_measurements <= ref.measurements and ref.widest_spread >= 1
    assert ref.quiet == (ref.noisy_measurements == 0)
    assert (ref.widest_spread <= QUIET_SPREAD) == ref.quiet or ref.widest_spread <= QUIET_SPREAD + 0.05, \
        "a reference called quiet spread at most the chapter's bar"
    table = reference.reference_table(ref).data
    assert table.startswith(f"**Reference run:** {ref.label} (numpy {ref.numpy}, float32), kept in the book's data")
    # what makes two machines the same kind, where the file keeps it, and the runs it was chosen from
    quality = reference.quality_words(ref).data
    if ref.blas:
        assert f"numpy's BLAS {ref.blas}" in quality
    if ref.last_level_cache_bytes:
        # in decimal MB, as the machine's own table gives its caches
        assert f"{ref.last_level_cache_bytes / 1e6:,.1f} MB of last-level cache" in quality
    if ref.runs_compared:
        assert (f"by bandwidth, of {ref.runs_compared} runs made back to back, whose bandwidths ranged from "
                f"{ref.bandwidth_lowest_gb_per_s:,.1f} to {ref.bandwidth_highest_gb_per_s:,.1f} GB/s") in quality
    median = f" (median {ref.bandwidth_median_gb_per_s:,.1f})" if ref.bandwidth_median_gb_per_s else ""
    assert f"| bandwidth (fastest read) | {ref.bandwidth_gb_per_s:,.1f} GB/s{median} |" in table
    assert f"| balance point | {ref.math_gflop_per_s / ref.bandwidth_gb_per_s:,.1f} FLOP per byte |" in table
    # every number the data file keeps is shown (the chapter's output is compared, so each one is checked)
    assert f"{ref.widest_spread:,.2f}×" in quality and f"Load before measuring {ref.load_before:.1f}" in quality
    assert f"of its {ref.measurements} measurements" in quality and f"({ref.cores} cores)" in table
    products = shown.products_view(ref).data
    assert all(f"| {b:,} |" in products and f"| {x:,.1f} |" in products for b, x in ref.product_gflop_per_s.items())
    assert f"| {ref.control_gflop_per_s:,.1f} |" in products
    for context in (reference.SHORT_CONTEXT, reference.LONG_CONTEXT):
        decode = shown.decode_view(context, ref).data
        assert all(f"| {x:,.1f} |" in decode for x in ref.tokens_per_s(context).values())
    split = shown.split_view(ref).data
    for r in shown.split_rows(ref):   # the stored rate and part, to the digit the file keeps
        assert f"| {r.batch:,} | {measure._percent(r.step_share)} | {ref.split_products_tokens_per_s[r.batch]:,.1f} " \
               f"| {measure._percent(r.products_share)} | {r.products_part:.1%} |" in split


def test_the_reference_views_set_each_rate_beside_the_books_formulas():
    """Each row of the reference's tables is its stored rate over the roof or ceiling the book's formulas draw from
    the reference's own two speeds, and the decode rows are placed by the book's rule."""
    from inferlimits.arithmetic.generation import OVERHEAD_BOUND, decode_point
    from inferlimits.arithmetic.roofline import COMPUTE_BOUND, MEMORY_BOUND
    from inferlimits.figures import reference as shown
    from inferlimits.machine import reference
    ref = reference.ReferenceRun(**REFERENCE_ROW)
    bw, p = 30e9, 150e9
    rows = {r.batch: r for r in shown.product_rows(ref)}
    one = rows[1]
    assert one.intensity_flop_per_byte == pytest.approx(2 * 8192**2 / ((2 * 8192 + 8192**2) * 4))
    assert one.roof_gflop_per_s == pytest.approx(one.intensity_flop_per_byte * bw / 1e9)   # the slanted roof
    # reading and math in turn: their times add, so the rate is below the roof and never below half of it
    for r in rows.values():
        i = r.intensity_flop_per_byte
        assert 1e9 * r.no_overlap_gflop_per_s == pytest.approx(1 / (1 / p + 1 / (i * bw)))
        assert r.roof_gflop_per_s / 2 <= r.no_overlap_gflop_per_s < r.roof_gflop_per_s
    assert rows[256].roof_gflop_per_s == 150.0 and rows[256].share == pytest.approx(140 / 150)   # the flat one
    decode = {r.batch: r for r in shown.decode_rows(128, ref)}
    for b, r in decode.items():
        q = decode_point(tinyllm.TINY_LLAMA, p, bw, b, 128, "FP32", "FP32", "FP32")
        assert (r.memory_ceiling, r.math_ceiling) == (pytest.approx(q.memory_ceiling), pytest.approx(q.math_ceiling))
        assert r.share == pytest.approx(r.tokens_per_s / q.ceiling)
    assert decode[1].kind == MEMORY_BOUND and decode[2].kind == OVERHEAD_BOUND and decode[64].kind == COMPUTE_BOUND
    table = shown.decode_view(128, ref).data
    assert "| memory-bound |" in table and "| overhead-bound |" in table and "| compute-bound |" in table
    # the split: the products' share of their roof is their roof time over their measured time
    split = {r.batch: r for r in shown.split_rows(ref)}
    roof_s = measure.products_roof_s(tinyllm.weight_shapes(tinyllm.TINY_LLAMA), 2, bw, p)
    # their part of the step's time: the step's fastest rate over theirs (t_products / t_step)
    assert split[2].products_share == pytest.approx(roof_s * 62.5 / 2) and split[2].products_part == 50.0 / 62.5
    assert split[2].step_share == decode[2].share < 0.5
    expected = "products" if 0.8 * (1 - split[2].products_share) > 1 - 0.8 else "rest"
    assert split[2].held_by == expected and split[1].held_by is None   # batch 1 reached at least half
    assert "| not below half |" in shown.split_view(ref).data
    with pytest.raises(ValueError, match="context_tokens"):
        ref.tokens_per_s(512)


def test_the_reference_table_says_how_quiet_the_reference_was():
    from inferlimits.machine import reference
    row = REFERENCE_ROW
    quiet = reference.quality_words(reference.ReferenceRun(**row)).data
    assert "Load before measuring 0.1; quiet: all 27 of its measurements varied at most 1.20× from slowest to fastest." \
        in quiet
    noisy = reference.quality_words(reference.ReferenceRun(**{**row, "noisy_measurements": 3, "widest_spread": 2.6})).data
    assert "24 of its 27 measurements varied at most 1.25×; the widest spread was 2.60×." in noisy
    # the machine's identity and the roof's medians, where the file keeps them
    kept = reference.reference_table(reference.ReferenceRun(**{
        **row, "features": "avx2 fma", "last_level_cache_bytes": 33554432, "blas": "scipy-openblas 0.3.31", "blas_threads": 2,
        "bandwidth_median_gb_per_s": 28.5, "math_median_gflop_per_s": 140.2})).data
    assert ("**Reference run:** cpu (2 cores), 2026-01-01; AVX2 and FMA vector units, 33.6 MB of last-level cache, numpy's "
            "BLAS scipy-openblas 0.3.31, 2 threads. Load before measuring 0.1;") in reference.quality_words(
        reference.ReferenceRun(**{**row, "features": "avx2 fma", "last_level_cache_bytes": 33554432,
                                  "blas": "scipy-openblas 0.3.31", "blas_threads": 2})).data
    chosen = reference.quality_words(reference.ReferenceRun(**{**row, "runs_compared": 5, "bandwidth_lowest_gb_per_s": 25.0,
                                                               "bandwidth_highest_gb_per_s": 33.0})).data
    assert chosen.endswith("It is the middle one, by bandwidth, of 5 runs made back to back, whose bandwidths ranged from 25.0 "
                           "to 33.0 GB/s.")
    assert "| bandwidth (fastest read) | 30.0 GB/s (median 28.5) |" in kept
    assert "| math rate (2,048 × 2,048 product) | 150.0 GFLOP/s (median 140.2) |" in kept


def test_a_run_summed_up_is_the_data_file_it_prints(tmp_path, monkeypatch):
    """``python -m inferlimits.machine.reference`` writes what ``reference_run`` reads back."""
    from inferlimits.data import datafiles
    from inferlimits.figures.machine import run_spreads
    from inferlimits.machine import reference
    s = measure.Samples
    c = tinyllm.TINY_LLAMA
    m = measure.Machine("AMD EPYC", 2, "2026-01-02", s((3.0e10, 2.9e10)), s((3.6e10, 3.5e10)), s((1.8e11, 1.7e11)),
                        2**28, 2048, load=0.04)
    products = measure.ProductSweep(tuple(measure.ProductPoint(b, 8192, 8192, s((1e9 * b, 0.9e9 * b)))
                                          for b in (1, 256)), s((2e10, 2e10)), one_at_a_time=s((1.5e9, 1.4e9)))
    points = tuple(measure.DecodePoint(c, b, L, s((r, r))) for b, L, r in
                   ((1, 128, 80.04), (64, 128, 650.0), (1, 1024, 70.0), (64, 1024, 320.26)))
    splits = (measure.StepSplit(c, 1, 128, tinyllm.weight_shapes(c), points[0].rate, s((100.0, 90.0))),)
    runs = measure.DecodeSweep(points, splits=splits)
    row = reference.summary(m, products, runs, run_spreads(m, runs, products))
    assert row["measurements"] == 3 + 2 + 1 + 1 + 4 + 1 and row["noisy_measurements"] == 0 and row["widest_spread"] == 1.11
    assert row["bandwidth_gb_per_s"] == 36.0 and row["math_gflop_per_s"] == 180.0 and row["load_before"] == 0.0
    assert row["product_gflop_per_s"] == {1: 1.0, 256: 256.0} and row["control_gflop_per_s"] == 1.5
    assert row["long_context_tokens_per_s"] == {1: 70.0, 64: 320.3}
    assert row["split_products_tokens_per_s"] == {1: 100.0} and "split_products_part" not in row
    # the medians beside the fastest samples; no identity for a machine that reports none
    assert row["bandwidth_median_gb_per_s"] == 35.5 and row["math_median_gflop_per_s"] == 175.0
    assert "features" not in row and "blas" not in row
    text = reference.to_toml(row)
    monkeypatch.setattr(datafiles, "read", lambda name: text if name == "machine_reference.toml" else name)
    datafiles.clear_caches()
    try:
        back = reference.reference_run()
    finally:
        monkeypatch.undo()
        datafiles.clear_caches()
    assert back == reference.ReferenceRun(**row) and back.label == "AMD EPYC (2 cores), 2026-01-02"
    # a sweep without the batches the chapter states is refused, by name
    for table, line in (("long_context_tokens_per_s", "64 = 320.3\n"), ("product_gflop_per_s", "256 = 256.0\n")):
        head, tail = text.split(f"\n[reference.{table}]\n")
        short = f"{head}\n[reference.{table}]\n" + tail.replace(line, "", 1)
        monkeypatch.setattr(datafiles, "read", lambda name, short=short: short)
        datafiles.clear_caches()
        try:
            with pytest.raises(ValueError, match=table):
                reference.reference_run()
        finally:
            monkeypatch.undo()
            datafiles.clear_caches()
    bad = text.replace("noisy_measurements = 0", "noisy_measurements = 13")
    monkeypatch.setattr(datafiles, "read", lambda name: bad)
    datafiles.clear_caches()
    try:
        with pytest.raises(ValueError, match="noisy_measurements"):
            reference.reference_run()
    finally:
        monkeypatch.undo()
        datafiles.clear_caches()


def test_reference_words_say_what_a_gap_from_the_reference_means():
    from inferlimits.figures.machine import reference_words
    label, date = "AMD EPYC (2 cores), 2026-12-05", "2026-12-05"
    assert reference_words({"bandwidth": 0.95, "math rate": 1.02}, True, label, date) == (
        "this run's rates as shares of the reference's: bandwidth 95% and math rate 102%. The reference ran on the same "
        "kind of machine, on 2026-12-05; each kept up with it.")
    # a speed well above the reference's is said to be this machine's, this time (its ceilings sit higher)
    assert reference_words({"bandwidth": 1.31, "math rate": 1.02}, True, label, date).endswith(
        "each kept up with it. Its bandwidth ran 31% faster than the reference's, by the fastest samples of both: a "
        "virtual machine shares its memory with other machines, whose demand moves.")
    assert "faster than" not in reference_words({"bandwidth": 1.1, "math rate": 1.1}, True, label, date)
    assert reference_words({"bandwidth": 0.68, "math rate": 0.79}, True, label, date).endswith(
        "on 2026-12-05; a share below 90% means that other programs slowed this run, or that this machine ran slower "
        "this time.")
    assert reference_words({"bandwidth": 3.1}, False, label, date).endswith(
        "The reference ran on another machine, AMD EPYC (2 cores), 2026-12-05, so these shares compare the two "
        "machines, not this run's noise.")
    with pytest.raises(ValueError, match="ratios"):
        reference_words({}, True, label, date)


def test_against_reference_sets_the_roof_beside_the_reference_runs():
    from inferlimits.figures.machine import against_reference, decode_against_reference
    from inferlimits.machine import reference
    ref = reference.reference_run()
    s = measure.Samples
    same = _like_reference(ref, "2026-12-06", s((ref.bandwidth_gb_per_s * 0.5e9,)), s((ref.math_gflop_per_s * 1e9,)))
    words = against_reference(same).data
    assert words.startswith("- **Against the reference run:** This run's rates as shares of the reference's: "
                            "bandwidth 50% and math rate 100%.")
    assert "means that other programs slowed this run, or that this machine ran slower this time" in words
    # a share that rounds to the bar is printed so that its side of it shows
    from inferlimits.figures.machine import _kept
    assert (_kept(0.8997), _kept(0.9), _kept(0.96), _kept(0.904)) == ("89.97%", "90%", "96%", "90%")
    c = tinyllm.TINY_LLAMA
    runs = [measure.DecodePoint(c, 1, 128, s((ref.single_stream_tokens_per_s,))),
            measure.DecodePoint(c, 64, 1024, s((ref.batch_64_long_tokens_per_s * 0.95,)))]
    assert decode_against_reference(same, runs) == (
        f"this run's rates as shares of the reference's: the decoder at batch 1 100% and at batch 64 and the long "
        f"context 95%. The reference ran on the same kind of machine, on {ref.date}; each kept up with it.")
    assert decode_against_reference(same, [measure.DecodePoint(c, 2, 128, s((1.0,)))]) == ""


def test_a_decode_table_announces_a_share_above_its_ceiling_and_leaves_the_reason_to_the_words():
    s = measure.Samples
    c = tinyllm.TINY_LLAMA
    m = measure.Machine("cpu", 2, "2026-01-01", s((1.0e10,)), s((1e10,)), s((3e10,)), 2**28, 2048)
    memory, math_ = measure.decode_ceilings_tokens_per_s(m, 1, 128, c)
    above = [measure.DecodePoint(c, 1, 128, s((1.004 * min(memory, math_),)))]
    table = measure.decode_table(above, m).data
    assert table.startswith("Measured on cpu (2 cores), 2026-01-01, 128 tokens of context; one round each. Each share "
                            "above 100% beat the ceiling; the words under the table say why.")
    assert "| 100.4% |" in table, "a share just above 100% is not printed as 100%"
    assert measure.decode_table([measure.DecodePoint(c, 1, 128, s((0.5 * memory,)))], m).data.endswith("| 50% | 1.00× |")
    assert ("| batch | measured tokens/s | memory ceiling, tokens/s | math ceiling, tokens/s | share of the lower ceiling "
            "| spread of rounds |") in table, "each ceiling's column names its unit"
    lifted = replace(m, reference_roof=(2e10, 6e10))
    assert measure.decode_table(above, lifted).data.startswith(
        "Measured on cpu (2 cores), 2026-01-01, 128 tokens of context; one round each; the ceilings from the reference "
        "run's speeds, since a measured point beat this run's:")


# ---- samples, rounds and the roof timed again in them --------------------------------------------

def test_a_sample_lasts_at_least_the_least_length(monkeypatch):
    """A sample repeats its call until it lasts MIN_SAMPLE_S (from the warm-up's time, then the fastest call
    seen), and its rate is the work of one call over the seconds per call."""
    assert measure.calls_for(0.02, 0.1) == 5 and measure.calls_for(0.3, 0.1) == 1 and measure.calls_for(0.0, 0.1) == 1
    monkeypatch.setattr(measure, "MIN_SAMPLE_S", 0.05)
    calls = []

    def step():
        calls.append(1)
        time.sleep(0.01)

    sampler = measure._Sampler(step, work=2.0)
    assert len(calls) == 1, "one warm-up call, not counted"
    sampler.sample()
    assert 3 <= len(calls) - 1 <= 6, "about 0.05 s of calls of 0.01 s"
    (rate,) = sampler.samples.values
    assert 2.0 / 0.02 < rate < 2.0 / 0.009
    assert measure.MIN_SAMPLE_S == 0.05 and measure.DECODE_STEPS == 1
    with pytest.raises(ValueError, match="seconds_per_call"):
        measure.calls_for(-1.0)


def test_samples_add_up_and_say_how_long_their_threads_waited():
    s = measure.Samples
    both = s((1.0, 2.0), (0.0, 0.01)) + s((3.0,), (0.2,))
    assert both.values == (1.0, 2.0, 3.0) and both.fastest_waited == 0.2 and both.spread == 3
    assert (s((1.0,)) + s((2.0,), (0.0,))).waited is None and s((1.0,)).fastest_waited is None
    assert s((1.0, 2.0), (0.0, None)).fastest_waited is None and s((2.0, 1.0), (0.0, None)).fastest_waited == 0.0
    assert s((3.0, 1.0), (0.01, 0.5)).fastest_waited == 0.01, "the wait of the sample the tables show, not the longest"
    waited = measure._waiting_s()
    assert waited is None or waited >= 0
    seconds, share = measure._timed(lambda: None, 3)
    assert seconds >= 0 and (share is None or share >= 0)


def test_rounds_visit_their_settings_in_a_shuffled_order_that_repeats():
    items = list(range(9))
    orders = [measure._shuffled(items, r) for r in range(3)]
    assert all(sorted(o) == items for o in orders) and len({tuple(o) for o in orders}) > 1
    assert measure._shuffled(items, 1) == orders[1], "the same round visits them in the same order on every run"


def test_sweeps_time_the_roof_again_in_their_rounds():
    roof = (4 * 2**20, 128)
    products = measure.product_sweep(256, 128, (1, 2, 4), rounds=2, roof=roof)
    assert products.roof == roof and len(products.roof_read.values) == len(products.roof_matmul.values) == 2
    assert products.control_batch == 2 and len(products.one_at_a_time.values) == 2
    assert len(products.roof_read.waited) == 2
    runs = measure.decode_sweep(TINY, (1, 2), (16,), rounds=2, roof=roof)
    assert isinstance(runs, measure.DecodeSweep) and len(runs) == 2 and runs[1].batch == 2
    assert len(runs.roof_read.values) == 2 and runs.roof == roof
    s = measure.Samples
    m = measure.Machine("cpu", 2, "2026-01-01", s((1e9,)), s((1e9,)), s((1e9,)), roof[0], roof[1])
    both = measure.with_rounds(m, products, runs)
    assert len(both.rounds_read.values) == len(both.rounds_matmul.values) == 4
    assert both.bandwidth_bytes_per_s == max(1e9, both.rounds_read.high)
    table = both._repr_markdown_()
    assert "| plain read, in the sweeps' 4 rounds |" in table and "| matrix product, in the sweeps' 4 rounds |" in table
    # a sweep measured with another roof's settings, or none, adds nothing
    other = measure.product_sweep(256, 128, (1, 2), rounds=2)
    assert other.roof is None and other.roof_read is None
    assert measure.with_rounds(m, other).rounds_read is None
    assert measure.with_rounds(replace(m, array_bytes=8 * 2**20), products).rounds_read is None
    assert measure.roof_settings(roof[0], roof[1]) == roof
    with pytest.raises(ValueError, match="roof"):
        measure.product_sweep(256, 128, (1,), rounds=1, roof=(0, 128))
    # a product sweep's 1-vector product of a matrix at least the roof's array is a read too, and may set the roof
    one = measure.ProductPoint(1, 2048, 1024, s((1e9, 2e9), (0.0, 0.01)))   # 8 MiB of weights
    big = measure.ProductSweep((one,), s((1e9,)), None, s((1e9,)), s((1e9,)), roof)
    read = measure.with_rounds(m, big)
    assert read.rounds_vector.values == (1e9 / one.intensity_flop_per_byte, 2e9 / one.intensity_flop_per_byte)
    assert read.bandwidth_bytes_per_s == read.rounds_vector.high > 3.9e9
    assert read.bandwidth_from == "the 1-vector product in the product sweep" and read.rounds_vector.fastest_waited == 0.01
    assert "| 1-vector product of the product sweep, read as bytes, its 2 rounds | 4.0 GB/s |" in read._repr_markdown_()
    # the first table pools each way of measuring in one row: its first repeats and its samples in the rounds
    speeds, samples = read.table("speeds"), read.table("samples")
    assert ("| matrix-vector read, 4.2 MB matrix | 4.0 GB/s | 2.0 GB/s "
            "| 1.0 GB/s |\n") in speeds and "spread" not in speeds.split("\n\n")[1], "pooled rows show no spread"
    assert "| plain read, 4.2 MB array | 1.0 GB/s |" in speeds
    assert "| 1-vector product" not in speeds and "| plain read, in the sweeps' " in samples
    # the bullet names the pooled row that holds the sample, and nothing the reader has not met yet
    assert ("- **Roof bandwidth:** 4.0 GB/s, the fastest sample of the matrix-vector read row, from the product "
            "sweep's 1-vector product (the trust table at the end splits the row).") in speeds
    assert "- **Roof bandwidth:**" not in samples
    assert "| matrix-vector read, 4.2 MB matrix |" in both.table("speeds")
    with pytest.raises(ValueError, match="part"):
        read.table("rows")
    # in the product table, the 1-vector product that set the roof sits on it by construction, and says so
    fast = replace(read, matmul=s((1e12,)))  # the 1-vector product below the ridge, on the slanted roof
    assert "| 1 | 0.50 | 2.0 | 100% (set the roof) |" in measure.products_table(big, fast).data
    assert "(set the roof)" not in measure.products_table(big, replace(fast, rounds_vector=None)).data
    small = measure.ProductSweep((measure.ProductPoint(1, 256, 128, s((1e9,))),), s((1e9,)), None, s((1e9,)),
                                 s((1e9,)), roof)
    assert measure.with_rounds(m, small).rounds_vector is None, "a matrix a cache could hold is not a read of memory"


def test_the_roof_is_the_fastest_sample_of_all_and_the_reference_lifts_a_low_one():
    s = measure.Samples
    m = measure.Machine("cpu", 2, "2026-01-01", s((2e10, 1.9e10)), s((1.5e10,)), s((1e11, 0.9e11)), 2**28, 2048,
                        rounds_read=s((2.5e10, 2e10)), rounds_matmul=s((0.8e11,)))
    assert m.bandwidth_bytes_per_s == 2.5e10 and m.bandwidth_from == "the plain read in the sweeps' rounds"
    assert m.peak_flop_per_s == 1e11 and m.peak_from == "the first repeats"
    assert "samples of the plain read in the sweeps' rounds" in measure.run_spreads(m, [])
    assert m.roof_source == "this run"
    lifted = replace(m, reference_roof=(3e10, 0.5e11))
    assert lifted.bandwidth_bytes_per_s == 3e10 and lifted.peak_flop_per_s == 1e11, "each speed, the faster"
    assert lifted.roof_source == "the reference run for the bandwidth"
    assert replace(m, reference_roof=(3e10, 2e11)).roof_source == "the reference run"
    assert replace(m, reference_roof=(1e10, 0.5e11)).roof_source == "this run"
    table = replace(m, reference_roof=(3e10, 2e11))._repr_markdown_()
    assert ("- **Roof bandwidth:** 30.0 GB/s, the reference run's. This run's fastest read, 25.0 GB/s, was too low "
            "(see below).") in table
    assert ("- **Roof math rate:** 200.0 GFLOP/s, the reference run's. This run's fastest product, 100.0 GFLOP/s, was "
            "too low (see below).") in table
    # the balance point says whose speeds it divides
    assert ("- **Balance point:** 6.7 FLOP per byte, the roof's math rate over the roof's bandwidth, both the reference "
            "run's.") in table
    assert ("the roof's math rate over the roof's bandwidth, the bandwidth the reference run's."
            in lifted._repr_markdown_())
    # the waits for a core, where the system reports them, and what they say of a run not judged
    waited = replace(m, read=s((2e10,), (0.3,)), matvec_read=s((1.5e10,), (0.0,)), matmul=s((1e11,), (0.0,)),
                     rounds_read=s((2.5e10,), (0.01,)), rounds_matmul=s((0.8e11,), (0.0,)))
    assert waited.waited == 0.3 and not waited.steady and not waited.clean_ceiling
    assert ("- **Waiting for a core:** in the fastest sample of each row, this process's threads, together, waited "
            "up to 0.30 s for a core per second. Above 0.05 s, other threads, most likely other programs', pushed them off their "
            "cores.") in waited._repr_markdown_()
    # only the fastest sample's wait counts: a slower sample that waited longer is not the one the table shows
    assert replace(waited, read=s((1e10, 2e10), (0.3, 0.0))).waited == 0.01
    calm = replace(waited, read=s((2e10,), (0.0,)))
    assert calm.waited == 0.01 and calm.steady and calm.clean_ceiling
    assert m.waited is None and m.steady and not replace(m, load=3.0).steady, "without waits, the load decides"
    assert "numpy's BLAS library" not in m._repr_markdown_()
    assert ("- **numpy's BLAS library:** OpenBLAS 0.3 (Zen kernels), running 2 threads."
            in replace(m, blas="OpenBLAS 0.3 (Zen kernels)", blas_threads=2)._repr_markdown_())


def test_this_machine_names_its_cores_its_library_and_its_features():
    assert 1 <= measure.cores() <= (os.cpu_count() or 1)
    name, threads = measure.blas()
    assert name and (threads is None or threads >= 1)
    assert measure.processor_features("flags\t\t: fpu sse avx2 fma avx512f\n") == ("avx512f", "avx2", "fma")
    assert measure.processor_features("Features\t: fp asimd evtstrm\n") == ("asimd",)
    assert measure.processor_features("model name : x\n") == ()


def _like_reference(ref, date, read, matmul, **kw):
    """A made-up machine of the same kind as the reference run ``ref``: its name, cores, features, cache and BLAS."""
    return measure.Machine(ref.processor, ref.cores, date, read, read, matmul, 2**28, 2048,
                           last_level_cache=ref.last_level_cache_bytes, blas=ref.blas, blas_threads=ref.blas_threads,
                           features=tuple((ref.features or "").split()), **kw)


def _reference(**kw):
    from inferlimits.machine import reference
    row = dict(processor="AMD EPYC", cores=2, date="2026-01-01", numpy="2.0", load_before=0.1, measurements=27,
               noisy_measurements=0, widest_spread=1.2, bandwidth_gb_per_s=30.0, math_gflop_per_s=150.0,
               control_gflop_per_s=20.0, product_gflop_per_s={1: 14.0, 256: 140.0},
               short_context_tokens_per_s={1: 80.0, 64: 600.0}, long_context_tokens_per_s={1: 70.0, 64: 300.0},
               split_products_tokens_per_s={}, features="avx2 fma", last_level_cache_bytes=2**25,
               blas="scipy-openblas 0.3.31", blas_threads=2)
    return reference.ReferenceRun(**{**row, **kw})


def _decoder_at(ref, share, waited=None):
    """The decoder at the reference's three settings, at ``share`` of its rates."""
    c = tinyllm.TINY_LLAMA
    s = measure.Samples
    w = None if waited is None else (waited,)
    return [measure.DecodePoint(c, 1, 128, s((share * ref.single_stream_tokens_per_s,), w)),
            measure.DecodePoint(c, 64, 128, s((share * ref.batch_64_tokens_per_s,), w)),
            measure.DecodePoint(c, 64, 1024, s((share * ref.batch_64_long_tokens_per_s,), w))]


def test_same_machine_compares_more_than_the_processor_name():
    from inferlimits.figures.machine import _same_machine
    ref = _reference()
    s = measure.Samples
    m = _like_reference(ref, "2026-01-02", s((3e10,)), s((1.5e11,)))
    assert _same_machine(m, ref)
    assert not _same_machine(replace(m, blas="OpenBLAS 0.3.20"), ref)
    assert not _same_machine(replace(m, features=("avx512f", "avx2", "fma")), ref)
    assert not _same_machine(replace(m, last_level_cache=2**28), ref)
    assert not _same_machine(replace(m, cores=4), ref)
    # a reference that predates the identity fields compares what it keeps
    bare = _reference(features=None, last_level_cache_bytes=None, blas=None)
    assert _same_machine(replace(m, blas="anything", features=()), bare)


def test_judge_sets_the_roof_beside_the_reference_and_says_what_the_ceilings_use():
    from inferlimits.figures import machine as figures
    ref = _reference()
    s = measure.Samples
    # kept up: the roof's own speeds, clean and steady
    clean = figures.judge(_like_reference(ref, "2026-01-02", s((2.9e10,)), s((1.45e11,))), None,
                          _decoder_at(ref, 0.97), ref)
    j = clean.judgement
    assert j.state == measure.ROOF_CLEAN and j.steady and j.clean_ceiling and clean.reference_roof is None
    assert j.roof_shares == pytest.approx((29 / 30, 145 / 150)) and min(j.decoder_shares) == pytest.approx(0.97)
    assert figures.roof_words(clean) == ("this run's roof kept up with the reference run's (bandwidth 97% and math "
                                         "rate 97% of the reference run's). Its ceilings can be trusted.")
    assert figures.ceiling_words(clean) == "they use this run's own roof."
    assert figures._machine(clean.array_bytes, clean.matmul_side) is clean, "the figures draw the judged roof"
    # the roof kept up but the decoder did not: its ceilings hold, its shares are low, and noise is not ruled out
    behind = figures.judge(_like_reference(ref, "2026-01-02", s((2.9e10,)), s((1.45e11,))), None,
                           _decoder_at(ref, 0.3), ref)
    assert behind.judgement.state == measure.ROOF_CLEAN and behind.judgement.clean_ceiling
    assert not behind.judgement.steady
    assert figures.roof_words(behind).endswith(
        "Its ceilings can be trusted. But the decoder fell below 90% of the reference run's rate at batch 1 (30%), at "
        "batch 64 (30%) and at batch 64 and the long context (30%): other programs, "
        "or this machine running slower this time, slowed its steps, so its shares of the ceilings are lower than a "
        "quiet run's.")
    # the stored run the expert read: a roof of 65% and 29%, and decode points that beat the ceilings it gives:
    # the data show both speeds too low, so the ceilings use the reference's, and the words name the points
    low = figures.judge(_like_reference(ref, "2026-01-02", s((19.5e9, 10e9)), s((43.5e9, 40e9))), None,
                        _decoder_at(ref, 0.97), ref)
    j = low.judgement
    assert j.state == measure.ROOF_LOW and j.clean_ceiling and j.steady, "the decoder kept up: no steady load slowed it"
    assert not low.products_steady, "no product sweep to vouch for, no waits reported, and a roof that fell short"
    assert low.reference_roof == (30e9, 150e9) and low.bandwidth_bytes_per_s == 30e9 and low.peak_flop_per_s == 150e9
    assert low.roof_source == "the reference run"
    assert j.beaten_by("bandwidth") == "batch 1 at 128 tokens of context ran at 130% of the memory ceiling it gives"
    assert j.beaten_by("math rate") == "batch 64 at 128 tokens of context ran at 220% of the math ceiling it gives"
    assert figures.roof_words(low) == (
        "this run's bandwidth and math rate fell below 90% of the reference run's (bandwidth 65% and math rate 29% of "
        "the reference run's). Measured points then beat ceilings drawn from both: batch 1 at 128 tokens of context ran "
        "at 130% of the memory ceiling it gives, and batch 64 at 128 tokens of context ran at 220% of the math ceiling "
        "it gives. No program runs faster than its machine allows, so this run's bandwidth and math rate were too low. "
        "The ceilings use the reference run's bandwidth (30.0 GB/s) and math rate (150.0 GFLOP/s) instead.")
    assert figures.ceiling_words(low) == ("they use the reference run's bandwidth and math rate, since a measured point "
                                          "beat this run's own: batch 1 at 128 tokens of context ran at 130% of the "
                                          "memory ceiling it gives.")
    assert ("- **Roof bandwidth:** 30.0 GB/s, the reference run's. This run's fastest read, 19.5 GB/s, 65% of it, was "
            "too low: batch 1 at 128 tokens of context ran at 130% of the memory ceiling it gives (see below).") \
        in low._repr_markdown_()
    # a bandwidth below 90% of the reference's that no point beat (the decoder at 92% of the reference's stays under
    # the ceilings this run's own roof gives): the ceilings keep this run's roof, and say it is below the reference's
    # and what that may mean; whether other programs may have held it down, the roof's waits for a core say
    below = figures.judge(_like_reference(ref, "2026-01-02", s((26e9, 22e9), (0.31, 0.0)), s((151e9,), (0.0,))), None,
                          _decoder_at(ref, 0.92), ref)
    j = below.judgement
    assert j.state == measure.ROOF_BELOW and j.beaten == () and below.reference_roof is None
    assert below.bandwidth_bytes_per_s == 26e9 and below.roof_source == "this run"
    assert j.steady and not j.clean_ceiling, "the decoder kept up, but the read that set the roof waited for a core"
    assert figures.roof_words(below) == (
        "this run's bandwidth fell below 90% of the reference run's (bandwidth 87% and math rate 101% of the reference "
        "run's), but no measured point beat a ceiling drawn from it, so the ceilings keep this run's own roof. A roof "
        "below the reference's means a busy machine, or a machine slower this time than the reference's was. The sample "
        "that set it waited 0.31 s for a core per second of it, so other programs may have held it down. If they did, "
        "its ceilings are too low and the shares too high.")
    assert figures.ceiling_words(below) == (
        "they use this run's own roof, though its bandwidth is 87% of the reference run's: no measured point beat it. "
        "Other programs may have held it down: the shares may then be too high.")
    assert ("- **Roof bandwidth:** 26.0 GB/s, the fastest sample of the plain read. That is 87% of the reference run's "
            "(see below).") in below._repr_markdown_()
    assert measure.decode_table(_decoder_at(ref, 0.92), below).data.startswith(
        "Measured on AMD EPYC (2 cores), 2026-01-02, 128 tokens of context; one round each:")
    calm_below = figures.judge(_like_reference(ref, "2026-01-02", s((26e9, 22e9), (0.01, 0.0)), s((151e9,), (0.0,))),
                               None, _decoder_at(ref, 0.92), ref)
    assert calm_below.judgement.state == measure.ROOF_BELOW and calm_below.judgement.clean_ceiling
    # the decoder kept up (92%): the memory was slow during the reads, not throughout, so the ceilings may sit low
    assert figures.roof_words(calm_below).endswith(
        "The sample that set it waited 0.01 s for a core per second of it, so no other program in this machine pushed "
        "it off its cores. Yet the decoder kept up with the reference run (92%): the memory was most likely slower during these "
        "reads than during its steps (a virtual machine shares its memory with the other machines on its host, and "
        "their demand moves). The ceilings may then sit a little low, and the shares a little high.")
    # the decoder fell behind too: the machine itself most likely delivered less this time
    calm_slow = figures.judge(_like_reference(ref, "2026-01-02", s((26e9, 22e9), (0.01, 0.0)), s((151e9,), (0.0,))),
                              None, _decoder_at(ref, 0.8, waited=0.0), ref)
    assert calm_slow.judgement.state == measure.ROOF_BELOW
    assert ("so no other program in this machine pushed it off its cores: the machine itself most likely delivered "
            "less this time") in figures.roof_words(calm_slow)
    # only the sample that set the speed counts: a slower sample that waited does not make the ceilings suspect
    slow_waited = figures.judge(_like_reference(ref, "2026-01-02", s((26e9, 22e9), (0.0, 0.4)), s((151e9,), (0.0,))),
                                None, _decoder_at(ref, 0.92), ref)
    assert slow_waited.judgement.state == measure.ROOF_BELOW and slow_waited.judgement.clean_ceiling
    assert figures.ceiling_words(calm_below) == ("they use this run's own roof, though its bandwidth is 87% of the "
                                                 "reference run's: no measured point beat it.")
    # the same decoder a little faster (102% of the reference's) beats the memory ceiling this run's roof gives: the
    # bandwidth alone is lifted, and the point named
    beaten = figures.judge(_like_reference(ref, "2026-01-02", s((26e9, 22e9)), s((151e9,))), None,
                           _decoder_at(ref, 1.02), ref)
    assert beaten.judgement.state == measure.ROOF_LOW and beaten.reference_roof == (30e9, 0.0)
    assert beaten.judgement.beaten_by("bandwidth").startswith("batch 1 at 128 tokens of context ran at 102% of the "
                                                             "memory ceiling")
    # a product below the ridge that beats the slanted roof counts too
    from inferlimits.machine import reference
    fast = measure.ProductSweep((measure.ProductPoint(1, reference.PRODUCT_SIDE, reference.PRODUCT_SIDE,
                                                      s((14e9,))),), s((2e10,)))
    by_product = figures.judge(_like_reference(ref, "2026-01-02", s((26e9, 22e9)), s((151e9,))), fast,
                               _decoder_at(ref, 0.92), ref)
    assert by_product.judgement.state == measure.ROOF_LOW
    assert by_product.judgement.beaten_by("bandwidth") == ("1 vector in the product sweep ran at 108% of the slanted "
                                                           "roof it gives")
    assert figures.reference_speeds(low) == "the reference run's bandwidth and math rate"
    assert figures.reference_speeds(replace(low, reference_roof=(30e9, 0.0))) == "the reference run's bandwidth"
    assert figures.reference_speeds(replace(low, reference_roof=None)) == ""
    words = figures.against_reference(low, ref).data
    assert "- **Against the reference run:** This run's rates as shares of the reference's: bandwidth 65% and math " \
           "rate 29%." in words and "- **What the ceilings use:** This run's bandwidth and math rate fell below 90% of" \
           in words
    # judged again, the same machine is not lifted twice, nor its rounds added twice
    assert figures.judge(low, None, _decoder_at(ref, 0.97), ref) == low
    # the same, with every sample's waits reported and short: a steady load is ruled out
    calm = figures.judge(_like_reference(ref, "2026-01-02", s((19.5e9,), (0.0,)), s((43.5e9,), (0.01,))), None,
                         _decoder_at(ref, 0.97, waited=0.02), ref)
    assert calm.judgement.state == measure.ROOF_LOW and calm.judgement.steady and calm.judgement.waited == 0.02
    # the roof and the decoder fell behind together: a slowed run, neither steady nor clean
    slowed = figures.judge(_like_reference(ref, "2026-01-02", s((15e9,)), s((70e9,))), None, _decoder_at(ref, 0.2), ref)
    j = slowed.judgement
    assert j.state == measure.ROOF_SLOWED and not j.steady and not j.clean_ceiling and slowed.reference_roof is None
    assert figures.roof_words(slowed) == (
        "this run's bandwidth and math rate fell below 90% of the reference run's (bandwidth 50% and math rate 47% of the "
        "reference run's), and so did the decoder (20%). Other programs slowed the whole run. Its ceilings and its points "
        "are those of a slowed machine: read the relations, not the heights.")
    assert figures.ceiling_words(slowed).startswith("they use this run's roof, which other programs slowed along with "
                                                    "the decoder")
    # the same fall where no sample the tables show waited for a core and the load was low: no program in this
    # machine slowed it, so the machine itself ran slower today; its roof stays, and its rounds can be read
    quiet = figures.judge(_like_reference(ref, "2026-01-02", s((15e9,), (0.0,)), s((70e9,), (0.01,)), load=0.2), None,
                          _decoder_at(ref, 0.2, waited=0.0), ref)
    j = quiet.judgement
    assert j.state == measure.ROOF_BELOW and j.steady and j.clean_ceiling and quiet.reference_roof is None
    assert "The decoder fell below 90% of the reference run's rate too at batch 1 (20%), at batch 64 (20%) and at batch 64 and the long context (20%), as it would on a slower or busier machine." in \
        figures.roof_words(quiet)
    assert figures.judge(replace(quiet, load=3.0), None, _decoder_at(ref, 0.2, waited=0.0), ref).judgement.state \
        == measure.ROOF_SLOWED, "a busy load puts the blame back on other programs"
    # another kind of machine: the reference cannot judge; the waits, or else the load, decide
    other = replace(_like_reference(ref, "2026-01-02", s((15e9,)), s((70e9,))), blas="Accelerate")
    unknown = figures.judge(other, None, _decoder_at(ref, 0.2), ref)
    j = unknown.judgement
    assert j.state == measure.ROOF_UNKNOWN and j.steady and j.clean_ceiling and j.roof_shares is None
    assert figures.roof_words(unknown) == ("they use this run's own roof. The reference ran on another kind of machine, so it cannot say whether "
                                           "other programs slowed this run.")
    busy = figures.judge(replace(other, load=3.0), None, _decoder_at(ref, 0.2), ref).judgement
    assert not busy.steady and not busy.clean_ceiling
    pushed = figures.judge(replace(other, read=s((15e9,), (0.4,)), matvec_read=s((15e9,), (0.0,)),
                                   matmul=s((70e9,), (0.0,))), None, _decoder_at(ref, 0.2, waited=0.0), ref)
    assert not pushed.judgement.steady and not pushed.judgement.clean_ceiling
    assert figures.roof_words(pushed).endswith("In the fastest sample of every measurement, the sweeps' points among "
                                               "them (not only the table's rows), this process's threads, "
                                               "together, waited up to 0.40 s for a core per second: other threads, "
                                               "most likely other programs', pushed them off their cores.")
    assert figures.roof_words(replace(other, judgement=None)) == ""


def test_the_run_says_what_its_measurements_are():
    from inferlimits.figures.machine import _inventory
    spreads = {"repeats of the plain read": 1.0, "samples of the matrix product in the sweeps' rounds": 1.0,
               "rounds of 1 vector in the product sweep": 1.0, "rounds of the control (2 vectors one at a time)": 1.0,
               "rounds of batch 1 at 128 tokens in the decode sweep": 1.0}
    assert _inventory(spreads) == " The 5 are the roof's 2, the product sweep's 2 and the decode sweep's 1."
    assert _inventory({"repeats of the plain read": 1.0}) == ""   # one place: nothing to list


def test_the_whole_run_says_where_its_ceilings_come_from_and_what_a_steady_load_hides():
    from inferlimits.arithmetic.generation import OVERHEAD_BOUND
    from inferlimits.figures.machine import TOO_NOISY, context_words, verdict_words
    quiet = {"repeats of the plain read": 1.04, "rounds of a typical setting of the decode sweep": 1.02}
    unsteady = verdict_words(quiet, [TOO_NOISY] * 3, steady=False,
                             ceilings="they use the reference run's roof speeds.")
    assert ("- **Quiet or noisy:** Quiet: all 2 measurements varied at most 1.04× from slowest to fastest. The 2 are "
            "the roof's 1 and the decode sweep's 1.\n"
            "- **The ceilings:** They use the reference run's roof speeds.\n"
            "- **The decoder:** All 3 decode measurements were not placed (below half, where noise alone could "
            "have held them).") in unsteady
    # on a run that was not steady, quiet rounds below half are not put down to the decoder's own costs
    assert "not noise" not in verdict_words(quiet, [OVERHEAD_BOUND] * 3, steady=False)
    # a gap between the contexts that held in every round is noise-free only on a steady run
    args = (64, (128, 1024), 0.52, (1269, 519), (178, 157))
    assert context_words(*args, per_round=[0.50, 0.52, 0.55], steady=False).endswith(
        "The gap held in every round, but other programs may have slowed every round alike, so part of it may still "
        "be noise.")
    assert context_words(*args, steady=False).endswith(
        "Other programs may have slowed the run, so part of this gap may be noise.")


def test_each_sweep_is_steady_by_its_own_rates_beside_the_reference():
    """The product sweep's widest batch and the decoder, each against the reference run's, say whether a steady
    load slowed that sweep; a roof that fell short while both kept up does not make their rounds suspect."""
    from inferlimits.figures import machine as figures
    from inferlimits.machine import reference
    ref = _reference()
    s = measure.Samples
    m = _like_reference(ref, "2026-01-02", s((26e9,)), s((140e9,)))   # the roof at 87% and 93%
    widest = lambda share: measure.ProductSweep(   # noqa: E731
        (measure.ProductPoint(reference.WIDEST_PRODUCT, reference.PRODUCT_SIDE, reference.PRODUCT_SIDE,
                              s((share * ref.widest_product_gflop_per_s * 1e9,))),), s((2e10,)))
    # the decoder at 102% of the reference's beats the memory ceiling this run's bandwidth gives
    both = figures.judge(m, widest(0.98), _decoder_at(ref, 1.02), ref)
    assert both.judgement.state == measure.ROOF_LOW and both.steady and both.products_steady
    # only the speed that fell short and was beaten is lifted: the math rate, at 93%, kept up and stays this run's
    assert both.reference_roof == (30e9, 0.0) and both.peak_flop_per_s == 140e9
    assert both.roof_source == "the reference run for the bandwidth"
    assert figures.roof_words(both).endswith("The ceilings use the reference run's bandwidth (30.0 GB/s) instead.")
    assert "- **Roof math rate:** 140.0 GFLOP/s, the fastest sample of the product, in the first repeats." \
        in both._repr_markdown_()
    assert figures.roof_words(both).startswith("this run's bandwidth fell below 90% of the reference run's (bandwidth "
                                               "87% and math rate 93% of the reference run's)")
    # at 96% of the reference's, the decoder stays under that ceiling: the roof is kept, below the reference's, and
    # both sweeps kept up, so their rounds are steady
    kept = figures.judge(m, widest(0.98), _decoder_at(ref, 0.96), ref)
    assert kept.judgement.state == measure.ROOF_BELOW and kept.steady and kept.products_steady
    assert kept.reference_roof is None and kept.roof_source == "this run"
    slow_products = figures.judge(m, widest(0.5), _decoder_at(ref, 0.96), ref)
    assert slow_products.steady and not slow_products.products_steady
    # without a judgement, or where it did not judge the sweeps apart, the product sweep follows ``steady``
    assert replace(m, judgement=measure.Judgement(measure.ROOF_UNKNOWN, steady=True)).products_steady


def test_weight_matrices_are_every_product_a_step_makes_with_its_weights():
    """The step split times a decode step's weight products alone: they must be the matrices ``forward``
    multiplies, every weight but the norms' (and an untied embedding's), and each product must take the width its matrix expects."""
    for c, seed in ((TINY, 1), (UNTIED, 2)):
        w = tinyllm.random_weights(c, seed)
        matrices = tinyllm.weight_matrices(w)
        assert tinyllm.weight_shapes(c) == tuple(m.shape for m in matrices)  # the shapes, from the config alone
        norms = c.hidden_size * (2 * c.num_hidden_layers + 1)
        copied = 0 if w.lm_head is None else w.embed.size  # an untied embedding is copied from, not multiplied
        assert sum(m.size for m in matrices) + norms + copied == param_count(c)
        assert len(matrices) == 4 * c.num_hidden_layers + 1
        inputs = {k: np.ones((3, k), np.float32) for k in {m.shape[0] for m in matrices}}
        tinyllm.weight_products(matrices, inputs)  # every width found: no KeyError
        with pytest.raises(KeyError):
            tinyllm.weight_products(matrices, {c.hidden_size: inputs[c.hidden_size]})


def test_step_split_sets_a_steps_weight_products_beside_the_whole_step():
    s = measure.Samples
    split = measure.StepSplit(TINY, 2, 8, ((4, 8),), step=s((1e5, 2e5)), products=s((1e6, 4e5)))
    # the products' part of a step's time: the median over rounds of step rate over products rate
    assert split.products_part == pytest.approx(np.median([0.1, 0.5]))
    # at the roof, 2 vectors times a 4 x 8 matrix move (2x4 + 4x8 + 2x8) x 4 bytes = 224 bytes and do 128 FLOPs:
    # 224 ns at 1 GB/s, against 2e-6 s measured for the batch's 2 tokens at 1e6 tokens/s
    assert split.products_roof_s(1e9, 1e9) == pytest.approx(224e-9)
    assert split.products_share(1e9, 1e9) == pytest.approx(0.112)
    assert split.products_roof_s(1e12, 1e9) == pytest.approx(128e-9)  # math binds at a fast memory
    with pytest.raises(ValueError, match="bandwidth_bytes_per_s"):
        split.products_share(0, 1e9)
    measured = measure.step_split(TINY, (1, 2), context_tokens=8, rounds=2)
    assert [x.batch for x in measured] == [1, 2]
    assert all(len(x.step.values) == len(x.products.values) == 2 and x.products_part > 0 for x in measured)
    assert measured[0].shapes == tuple(m.shape for m in tinyllm.weight_matrices(measure.decoder_weights(TINY)))
    assert measure.step_split(TINY, [1, 2], 8, 2) is measured
    # timed in a decode sweep's rounds: the step's samples are that sweep's own points, round for round
    sweep = measure.decode_sweep(TINY, (1, 2), (8,), rounds=2, split=(2,))
    assert [x.batch for x in sweep.splits] == [2]
    assert sweep.splits[0].step == measure.point_at(sweep.points, 2).rate
    assert len(sweep.splits[0].products.values) == 2
    assert measure.decode_sweep(TINY, (1, 2), (8,), rounds=2).splits == ()
    with pytest.raises(ValueError, match="split"):
        measure.decode_sweep(TINY, (1, 2), (8,), split=(4,))
    with pytest.raises(ValueError, match="batches"):
        measure.step_split(TINY, ())
    with pytest.raises(ValueError, match="context_tokens"):
        measure.step_split(TINY, (1,), -1)


def test_the_step_split_names_what_held_a_step_below_half():
    from inferlimits.figures.machine import split_cause_words, step_split_view
    slow = split_cause_words([2], [0.3], [0.8])
    assert slow.startswith("At batch 2, the weight products alone reached 30% of their roof and took 80% of the "
                           "step's time. So the products themselves")
    # batches with one cause share one sentence, named one by one (2 and 16 are not "2 to 16")
    both = split_cause_words([2, 16], [0.28, 0.44], [0.9, 0.79])
    assert both.startswith("At batches 2 and 16, the weight products alone reached 28% and 44% of their roof and "
                           "took 90% and 79% of the step's time. So") and both.count("So the products") == 1
    # the products did most where the time they took beyond their roof, part x (1 - share), exceeds the rest of the
    # step's, 1 - part: at 48% of their roof they must fill more than about two-thirds of the step (0.66 x 0.52 = 0.34,
    # the rest 0.34); at 58% of their roof and 84% of the step they still did (0.35 against 0.16)
    mixed = split_cause_words([2, 16, 32], [0.3, 0.7, 0.3], [0.3, 0.4, 0.8])
    assert mixed.startswith("At batches 2 and 16, the weight products alone reached 30% and 70% of their roof and took "
                            "30% and 40% of the step's time. So the rest of the step")
    assert "At batch 32, the weight products alone reached 30% of their roof and took 80% of the step's time. So the " \
           "products themselves" in mixed
    assert "So the products themselves" in split_cause_words([16], [0.48], [0.76])
    assert "So the rest of the step" in split_cause_words([16], [0.48], [0.6])
    assert "So the products themselves" in split_cause_words([1], [0.58], [0.84])
    assert "took 102% of" in split_cause_words([2], [0.3], [1.02])  # shown as measured: alone, a little slower
    with pytest.raises(ValueError, match="products_shares"):
        split_cause_words([2], [-1], [0.5])
    with pytest.raises(ValueError, match="one length"):
        split_cause_words([2, 4], [0.3], [0.5])
    s = measure.Samples
    c = tinyllm.TINY_LLAMA
    m = measure.Machine("cpu", 2, "2026-01-01", s((3e10,)), s((3e10,)), s((2e11,)), 2**28, 2048)
    memory, math_ = measure.decode_ceilings_tokens_per_s(m, 2, 128, c)
    points = [measure.DecodePoint(c, 1, 128, s((0.6 * min(measure.decode_ceilings_tokens_per_s(m, 1, 128, c)),))),
              measure.DecodePoint(c, 2, 128, s((0.25 * min(memory, math_),)))]
    shapes = tuple(m_.shape for m_ in tinyllm.weight_matrices(measure.decoder_weights(c)))
    # the step's share comes from the step's rounds (the decode table's), beside its products
    one = measure.StepSplit(c, 2, 128, shapes, s((0.25 * min(memory, math_),) * 2), s((120.0, 110.0)))
    view = step_split_view([one], m).data
    share = one.products_share(3e10, 2e11)
    assert f"| 2 | 25% | {share:.0%} | {one.products_part:.0%} | 1.09× |" in view
    assert split_cause_words([2], [share], [one.products_part]) in view
    fast = replace(one, step=s((0.9 * min(memory, math_),) * 2))
    assert "Every batch here reached at least half of its lower ceiling." in step_split_view([fast], m).data
    # a noisy batch above half is not a cause to name, but its row is less certain, and the words say so
    fast_shaky = replace(fast, step=s((0.9 * min(memory, math_), 0.5 * min(memory, math_))))
    assert "The rounds of batch 2 varied more than 1.25×, so its row is less certain." in step_split_view(
        [fast_shaky], m).data
    # noise is ruled out before a cause is named: noisy rounds, or a run that was not steady
    shaky = replace(one, products=s((120.0, 60.0)))
    assert ("At batch 2, noise could have made the difference (the rounds of its step or of its products varied "
            "more than 1.25×), so no cause is named.") in step_split_view([shaky], m).data
    busy = replace(m, load=5.0)
    assert "(the run was not steady), so no cause is named." in step_split_view([one], busy).data
    # a step whose rounds spread more than the bar, but too little to lift it to half, is judged as the decode table
    # judges it: noise could not have held it there, so its cause is named; one whose spread could, is not
    low = 0.25 * min(memory, math_)
    assert "did most to hold" in step_split_view([replace(one, step=s((low, low / 1.4)))], m).data
    assert "no cause is named" in step_split_view([replace(one, step=s((low, low / 3)))], m).data
    # a quiet batch above half is certain: its own spreads are what make a row less certain
    assert "less certain" not in step_split_view([fast], m).data
    with pytest.raises(ValueError, match="splits"):
        step_split_view([], m)


def test_the_decode_figure_names_the_lower_ceiling_once(monkeypatch):
    """The model's circles sit on the thick grey line of the lower ceiling: one curve, one legend entry."""
    from inferlimits.figures import machine as figures
    s = measure.Samples
    _fake_machine(monkeypatch, decode_sweep=tuple(measure.DecodePoint(tinyllm.TINY_LLAMA, b, 128, s((10.0 * b,)))
                                                  for b in (1, 2, 4, 8)))
    spec = figures.decode_spec(128, 8, (128,), 8)
    shown = [t["name"] for t in spec["data"] if t.get("showlegend", True)]
    assert sum("lower ceiling" in n for n in shown) == 1


def test_split_ratio_compares_the_products_share_of_their_roof_round_by_round():
    s = measure.Samples
    shapes = ((64, 64),)
    one = measure.StepSplit(TINY, 1, 8, shapes, s((1.0, 1.0)), s((100.0, 50.0)))
    two = measure.StepSplit(TINY, 2, 8, shapes, s((1.0, 1.0)), s((100.0, 100.0)))
    r = measure.split_ratio((one, two), 2, 1, 1e9, 1e12)
    per_token = (two.products_roof_s(1e9, 1e12) / 2) / one.products_roof_s(1e9, 1e12)
    assert r.value == pytest.approx(per_token * np.median([1.0, 2.0]))
    assert r.value == pytest.approx(two.products_share(1e9, 1e12) / one.products_share(1e9, 1e12) * 1.5)
    again = measure.split_ratio(measure.step_split(TINY, (1, 2), 8, 2), 2, 1, 1e9, 1e12).again()
    assert again > 0


def test_a_share_just_below_half_or_above_the_whole_shows_which_side_it_lies():
    from inferlimits.figures.machine import _share
    assert (_share(0.496), _share(0.5), _share(0.504), _share(0.47)) == ("49.6%", "50%", "50.4%", "47%")
    assert (_share(1.004), _share(1.0), _share(0.98)) == ("100.4%", "100%", "98%")
    assert measure._percent(0.496) == "49.6%" and measure._percent(0.4996) == "49.96%"
    assert (measure._percent(1.0004), measure._percent(0.9996), measure._percent(0.5004)) == ("100.04%", "99.96%", "50.04%")
