"""The small numpy decoder computes what a Llama-shaped decoder computes, and the measuring code
returns rates in the units it names. Timings themselves are not asserted here: they belong to
the machine, and the chapter checks only relations that hold on any machine."""
from __future__ import annotations

import math

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


@pytest.fixture(scope="module")
def tiny():
    return tinyllm.random_weights(TINY, seed=1)


def _tokens(c, batch, length, seed=0):
    return np.random.default_rng(seed).integers(0, c.vocab_size, (batch, length))


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
    assert "| plain read, 268 MB array | 30.0 GB/s | 20.0 GB/s | 10.0 GB/s | 3× |" in table
    assert "- **Roof bandwidth:** 30.0 GB/s, the fastest repeat of the plain read." in table
    assert "- **Roof math rate:** 150.0 GFLOP/s, the fastest repeat of the product." in table
    assert "- **Balance point:** 5.0 FLOP per byte, the math rate over the bandwidth." in table
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
    assert ("- **Load before measuring:** 10.4, the system's 1-minute load average. An idle machine shows near 0. "
            "Above 1, other programs kept more than half of its 2 cores busy.") in loaded._repr_markdown_()
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
    assert above_roof_words([128, 256], [1.05, 1.2], [1, 2, 128, 256]).startswith(
        "128 to 256 vectors ran at 105% to 120% of the roof. They beat the roof, which came from the early repeats")
    assert above_roof_words([1, 256], [1.2, 1.2], [1, 2, 256]).startswith("1 and 256 vectors ran at 120% of the roof.")
    assert above_roof_words([1], [1.18], [1, 2]).startswith("1 vector ran at 118% of the roof. It beat")
    with pytest.raises(ValueError, match="share"):
        above_roof_words([1], [0.9], [1, 2])
    # a cache can lift a point below the ridge above its roof, never one past it, where the math sets the roof
    assert above_roof_words([1], [1.5], [1, 2]).endswith("it ran in a quieter spell, or read some bytes from a cache.")
    assert above_roof_words([128, 256], [1.9, 1.94], [1, 128, 256], past=[True, True]).endswith(
        "They beat the roof, which came from the early repeats: they ran in a quieter spell.")
    # under a table whose first line has given the reason, the words only name the points
    assert above_roof_words([1, 256], [1.73, 1.27], [1, 2, 256], why=False) == (
        "1 and 256 vectors ran at 127% to 173% of the roof.")
    assert above_roof_words([1, 256], [1.5, 1.94], [1, 128, 256], past=[False, True]).endswith(
        "they ran in a quieter spell, or, below the ridge, read some bytes from a cache.")
    with pytest.raises(ValueError, match="past"):
        above_roof_words([1, 256], [1.5, 1.94], [1, 128, 256], past=[True])


def test_the_products_table_reads_the_weights_only_below_the_ridge():
    s = measure.Samples
    m = measure.Machine("cpu", 2, "2026-01-01", s((1e10, 2e10)), s((1e10,)), s((4e10, 2e10)), 2**28, 2048)
    assert m.balance_point_flop_per_byte == 2     # 40 GFLOP/s over 20 GB/s
    points = tuple(measure.ProductPoint(b, 8192, 8192, s((r,))) for b, r in ((1, 9e9), (2, 1.5e10), (4, 2.5e10), (8, 3e10), (16, 3.5e10), (32, 5e10)))
    sweep = measure.ProductSweep(points, s((1.8e10,)))
    table = measure.products_table(sweep, m).data
    assert ("| vectors | FLOP per byte | GFLOP/s | share of the roof | spread of rounds "
            "| weights read at (below the ridge) |") in table
    assert "| 1 | 0.50 | 9.0 | 90% | 1× | 18.0 GB/s |" in table        # below the ridge: a memory benchmark
    assert "| 8 | 3.99 | 30.0 | 75% | 1× |  |" in table                # past the ridge: the math sets the pace
    assert "| 32 | 15.88 | 50.0 | 125% | 1× |  |" in table             # above the roof, and named so in the words
    assert "| plain read, same rounds | | | | 1× | 18.0 GB/s |" in table
    # a share above 100% is explained in the table's first line, before the reader meets it
    assert table.startswith("Measured on cpu (2 cores), 2026-01-01; one round each. Each share above 100% beat the "
                            "roof, which came from the early repeats: that round ran in a quieter spell, or, below the "
                            "ridge, read some bytes from a cache.\n\n| vectors |")
    below_roof = measure.ProductSweep(points[:3], s((1.8e10,)))
    assert measure.products_table(below_roof, m).data.startswith("Measured on cpu (2 cores), 2026-01-01; one round "
                                                                  "each:\n\n")
    from inferlimits.figures.machine import products_words
    words = products_words(sweep, m).data
    items = words.split("\n")
    assert items[0] == "- **This sweep:** Quiet: all 7 rows varied at most 1× from slowest to fastest."
    # the point above the roof is named first, right under the table, and the reason left to the table's first line
    assert items[1] == ("- **Above the roof:** 32 vectors ran at 125% of the roof. The table's first line says how a "
                        "point can.")
    # the plain read against the roof, from the numbers: 18.0 GB/s is 90% of a 20.0 GB/s roof
    assert ("- **The plain read:** Its fastest round read 18.0 GB/s, 90% of the roof's 20.0 GB/s. Its 1 round had "
            "fewer chances at a quiet spell than the roof's 2 repeats.") in words
    # the rate climbed with the roof (2.8× against 4×) but doubled again past the ridge: not the shape, said plainly
    assert words.endswith("- **The lesson:** This run does not show the climb-then-level shape. Below the ridge the "
                          "rate rose 2.8×, at least half of the roof's 4×. Past the ridge it rose 2×, more than 1.5× "
                          "either way. The widest batch reached 125% of the flat roof. The rounds agreed, so the "
                          "library, not noise, set this shape. The roofline allows the rate to climb along the slanted "
                          "roof to the ridge, then level off under the flat roof, as the model's circles do. numpy may "
                          "still dip at a few vectors, where it changes routine.")
    assert "On a quiet machine" not in words
    # the same sweep measured in a busy spell: said to be noisy, with what a quiet machine would show
    busy = measure.ProductSweep(tuple(measure.ProductPoint(p.batch, p.rows, p.cols, s((p.flop_per_s, p.flop_per_s / 3)))
                                      for p in points), s((1.8e10, 0.6e10)))
    words = products_words(busy, m).data
    assert words.startswith("- **This sweep:** Noisy: all 7 rows varied more than 1.25× from slowest to fastest, up to "
                            "3×.")
    assert "The rounds were noisy: other programs may have slowed the sweep. On a quiet machine" in words
    assert "fastest of 2 rounds" in measure.products_table(busy, m).data
    assert "| 1 | 0.50 | 9.0 | 90% | 3× | 18.0 GB/s |" in measure.products_table(busy, m).data, "the fastest round"


def test_noise_words_call_a_sweep_quiet_only_when_every_spread_is():
    from inferlimits.figures.machine import QUIET_SPREAD, noise_words
    assert noise_words([1.0, 1.1, 1.2]) == "quiet: all 3 rows varied at most 1.2× from slowest to fastest."
    assert noise_words([1.0, QUIET_SPREAD]).startswith("quiet:"), "at most 1.25× is quiet"
    # the stored run the student quoted: the median spread was 1.2×, but 5 of the 10 rows spread more than 1.25×
    stored = [1.6, 1.0, 3.0, 2.9, 1.2, 1.3, 1.1, 1.1, 1.0, 1.5]
    assert noise_words(stored) == "noisy: 5 of its 10 rows varied more than 1.25× from slowest to fastest, up to 3×."
    assert noise_words([2.0, 9.6], "batches") == ("noisy: all 2 batches varied more than 1.25× from slowest to fastest, "
                                                  "up to 9.6×.")
    for bad in ([], [0.0], [float("nan")]):
        with pytest.raises(ValueError, match="spreads"):
            noise_words(bad)


def test_plain_read_words_follow_the_numbers():
    from inferlimits.figures.machine import plain_read_words
    GBs = 1e9
    # the stored run: the sweep's plain read beat the roof that the early repeats drew
    assert plain_read_words(14.0 * GBs, 10.2 * GBs, 3, 7) == (
        "its fastest round read 14.0 GB/s, 137% of the roof's 10.2 GB/s. It ran in a quieter spell than the early "
        "repeats the roof came from.")
    assert plain_read_words(8.0 * GBs, 10.0 * GBs, 3, 7).endswith(
        "80% of the roof's 10.0 GB/s. Its 3 rounds had fewer chances at a quiet spell than the roof's 7 repeats.")
    assert plain_read_words(8.0 * GBs, 10.0 * GBs, 7, 7).endswith("It ran in a busier spell than the early repeats the "
                                                                   "roof came from.")
    assert plain_read_words(10.2 * GBs, 10.0 * GBs, 3, 7).endswith("That is about the roof.")
    with pytest.raises(ValueError, match="read"):
        plain_read_words(0, 1, 3, 7)


def _fake_machine(monkeypatch, **sweeps):
    """A made-up machine (20 GB/s, 40 GFLOP/s: balance point 2) and made-up sweeps, in place of
    measuring, so that a figure's spec can be read without timing anything."""
    s = measure.Samples
    m = measure.Machine("cpu", 2, "2026-01-01", s((2e10, 1e10)), s((1e10,)), s((4e10, 2e10)), 2**28, 2048)
    monkeypatch.setattr(measure, "this_machine", lambda *a, **k: m)
    for name, value in sweeps.items():
        monkeypatch.setattr(measure, name, lambda *a, value=value, **k: value)
    return m


def test_each_sweep_figure_shows_the_model_as_what_a_quiet_machine_shows(monkeypatch):
    """The products figure and the decode figure each carry the book's formula at every measured
    setting, from this machine's measured roof: named as the model, computed and not measured."""
    from inferlimits.figures import machine as figures
    s = measure.Samples
    points = tuple(measure.ProductPoint(b, 1024, 1024, s((r,))) for b, r in ((1, 9e9), (2, 1.5e10), (4, 2.5e10),
                                                                              (8, 3e10), (16, 3.5e10)))
    m = _fake_machine(monkeypatch, product_sweep=measure.ProductSweep(points, s((1.8e10,))))
    spec = figures.products_spec(1024, 16)
    (model,) = [t for t in spec["data"] if "quiet machine" in t.get("name", "")]
    assert model["name"] == "what a quiet machine shows: the model's min(P, I·BW) (computed, not measured)"
    assert model["x"] == [p.intensity_flop_per_byte for p in points]
    assert model["y"] == pytest.approx([min(40.0, 20.0 * p.intensity_flop_per_byte) for p in points])
    assert model["text"][-1] == "model" and model["marker"]["symbol"] == "circle-open"
    # the climb-then-level shape: doubling below the ridge, flat past it
    assert model["y"][1] == pytest.approx(2 * model["y"][0], rel=0.01) and model["y"][-1] == model["y"][-2] == 40.0
    c = tinyllm.TINY_LLAMA
    runs = tuple(measure.DecodePoint(c, b, 128, s((10.0 * b,))) for b in (1, 2, 4, 8))
    _fake_machine(monkeypatch, decode_sweep=runs)
    spec = figures.decode_spec(128, 8, (128,), 8)
    (model,) = [t for t in spec["data"] if "quiet machine" in t.get("name", "")]
    assert model["name"] == "what a quiet machine shows: the model's min(memory, math) (computed, not measured)"
    assert model["x"] == [1, 2, 4, 8]
    assert model["y"] == pytest.approx([min(measure.decode_ceilings_tokens_per_s(m, b, 128)) for b in (1, 2, 4, 8)])
    measured = [t for t in spec["data"] if t.get("name") == "measured"]
    assert measured and measured[0]["y"] != model["y"], "the model is drawn beside the measurements, not as them"


def test_product_lesson_words_say_whether_this_run_shows_the_climb_then_level_shape():
    from inferlimits.figures.machine import CLIMB_SHARE, LEVEL_FACTOR, product_lesson_words
    assert (CLIMB_SHARE, LEVEL_FACTOR) == (0.5, 1.5), "the rules the chapter states"
    # the noisy stored run the student quoted: a dip at 2 vectors, and still doubling at the widest batch
    rates = [8.4, 1.3, 2.4, 3.7, 5.1, 13.1, 18.2, 20.5, 44.6]
    intensities = [0.5, 1.0, 2.0, 3.99, 7.97, 15.88, 31.51, 62.06, 120.47]
    batches, roofs = [2**i for i in range(9)], [min(29.3, 9.7 * x) for x in intensities]
    assert product_lesson_words(batches, rates, roofs, 2.0) == (
        "this run does not show the climb-then-level shape. Below the ridge the rate did not rise (0.29×), while the "
        "roof rose 4×. Past the ridge it rose 12×, more than 1.5× either way. The widest batch reached 152% of the flat "
        "roof. The rounds were noisy: other programs may have slowed the sweep. On a quiet machine, the roofline "
        "expects the rate to climb along the slanted roof to the ridge, then level off under the flat roof, as the "
        "model's circles do. numpy may still dip at a few vectors, where it changes routine.")
    # a quiet run that follows its roof, and one that follows it at a third of its height: the shape is a shape
    follows = [0.9 * r for r in roofs]
    assert product_lesson_words(batches, follows, roofs, 1.1) == (
        "this run shows the climb-then-level shape. Below the ridge the rate rose 4×, at least half of the roof's 4×. "
        "Past the ridge it changed only 1×, within 1.5× either way. The widest batch reached 90% of the flat roof.")
    assert product_lesson_words(batches, [0.3 * r for r in roofs], roofs, 1.1).endswith(
        "The widest batch reached 30% of the flat roof.")
    assert product_lesson_words(batches, follows, roofs, 2.0).endswith(
        "The rounds were noisy, so the heights may still move.")
    # the run the student read as "shows the shape": a dip at 2 vectors, then most of the climb past the ridge.
    # Its bullets said it fell behind the roof below the ridge and outpaced it past it: so it does not show the shape
    late = [2.8, 0.7, 1.4, 3.0, 6.1, 7.8, 14.5, 17.1, 25.2]
    assert product_lesson_words(batches, late, [min(24.3, 10.8 * x) for x in intensities], 1.2).startswith(
        "this run does not show the climb-then-level shape. Below the ridge the rate did not rise (0.5×), while the "
        "roof rose 4×. Past the ridge it rose 8.4×, more than 1.5× either way. The widest batch reached 104% of the flat "
        "roof. The rounds agreed, so the library, not noise, set this shape. The roofline allows")
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


@pytest.mark.parametrize("climb, past, shows", [
    (4.0, 1.0, True),     # rose half the roof's 8×: enough
    (3.9, 1.0, False),    # less than half
    (4.0, 1.49, True),    # past the ridge, within 1.5×
    (4.0, 1.5, False),    # 1.5× is not within 1.5×
    (4.0, 1 / 1.49, True),  # a fall within 1.5×
    (4.0, 1 / 1.5, False),  # a fall of 1.5×
])
def test_the_climb_then_level_rules_at_their_edges(climb, past, shows):
    """Below the ridge the roof rises 8× (1 to 8 vectors); past it, 8 to 32 vectors, it is flat."""
    from inferlimits.figures.machine import product_lesson_words
    batches = [1, 2, 4, 8, 16, 32]
    roofs = [1.0, 2.0, 4.0, 8.0, 8.0, 8.0]
    rates = [1.0, 1.5, 2.5, climb, climb * past ** 0.5, climb * past]
    said = product_lesson_words(batches, rates, roofs, 1.0)
    assert said.startswith("this run shows" if shows else "this run does not show"), said


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
                    "far below both ceilings: overhead, not memory or math, set the pace.")
    # a quiet run: memory-bound at small batches, compute-bound at large ones
    quiet = regime_words(batches, [25, 50, 100, 190, 380, 450, 480], memory, math_)
    assert quiet == ("Batches 1 to 16 reached at least half of their lower ceiling, the memory ceiling (89% to 95%). "
                     "By the book's rule, those are memory-bound. Batches 32 to 64 reached at least half of their "
                     "lower ceiling, the math ceiling (90% to 96%). By the book's rule, those are compute-bound.")
    # mixed, with a point above its ceiling
    mixed = regime_words(batches, [30, 10, 20, 190, 380, 450, 480], memory, math_)
    assert mixed.startswith("Batch 1 measured above its lower ceiling (107%). It beat the ceiling, which came from the "
                            "early repeats: it ran in a quieter spell, or read some bytes from a cache.")
    assert "Batches 2 to 4 reached less than half of their lower ceiling (18% to 18%)" not in mixed
    assert "Batches 2 to 4 reached less than half of their lower ceiling (18%). By the book's rule, those are" in mixed
    assert "Batches 1, 8 and 64 measured above their lower ceiling (102% to 108%). They beat" in regime_words(
        batches, [30, 10, 20, 230, 380, 450, 510], memory, math_)
    # the stored run the student quoted: batch 32 at 96% of its ceiling, but its rounds varied 9.6×: not placed
    noisy = regime_words(batches, [25, 50, 100, 190, 380, 480, 480], memory, math_, [1.0, 2.8, 1.2, 1.2, 1.1, 9.6, 1.4])
    assert "compute-bound" not in noisy.split("Batches 2, 32 and 64")[1]
    assert ("Batches 2, 32 and 64 were too noisy to place: their rounds varied 1.4× to 9.6×, more than 1.25×. The "
            "book's rule is not applied to their shares (91% to 96%).") in noisy
    assert "Batches 1, 4, 8 and 16 reached at least half of their lower ceiling, the memory ceiling" in noisy
    # a noisy point above its ceiling is not placed either; one exactly at the quiet rule is
    assert regime_words([1], [30], [28], [502], [1.3]) == (
        "Batch 1 was too noisy to place: its rounds varied 1.3×, more than 1.25×. The book's rule is not applied to "
        "its share (107%).")
    assert regime_words([1], [20], [28], [502], [1.25]).startswith("Batch 1 reached at least half")
    assert regime_words(batches[:2], [20, 30], memory[:2], math_[:2], [2.0, 3.0]).startswith(
        "Every batch was too noisy to place: the rounds varied 2× to 3×")
    with pytest.raises(ValueError, match="one length"):
        regime_words([1, 2], [1.0], [2.0], [3.0])
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
    assert "above 100%" in share_words(33, 30, 400, eager)
    assert share_words(3.6, 27.9, 502, eager, spread=2.0).endswith(
        "Its rounds varied 2×, more than 1.25×: too noisy to place by the book's rule.")
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
    # the stored run the student read: noisy and overhead-bound
    busy = verdict_words(noisy, [OVERHEAD_BOUND] * 14)
    assert busy == (
        "**This run, in short**\n\n"
        "- **Quiet or noisy:** Noisy: all 3 measurements varied more than 1.25× from slowest to fastest. The repeats "
        "of the matrix product varied most, 3.4×.\n"
        "- **The decoder:** All 14 decode measurements reached less than half of the lower ceiling (overhead-bound).\n"
        "- **What to read:** The relations, not the heights. Other programs slowed this run, so its heights are likely "
        "too low and its sweeps may zigzag. On a quiet machine, expect smaller spreads, and points that follow the "
        "shape of the model's circles.")
    # quiet and bound by the ceilings: the heights mean something too
    good = verdict_words(quiet, [MEMORY_BOUND] * 3 + [COMPUTE_BOUND] * 4 + [ABOVE])
    assert "- **Quiet or noisy:** Quiet: all 3 measurements varied at most 1.1× from slowest to fastest." in good
    assert ("- **The decoder:** Of its 8 decode measurements, 3 reached at least half of the lower ceiling, the memory "
            "ceiling (memory-bound), 4 reached at least half of the lower ceiling, the math ceiling (compute-bound) and "
            "1 measured above the lower ceiling.") in good
    assert good.endswith("- **What to read:** The relations and the heights. Both describe this machine.")
    # the stored run the student read: 12 of 14 far below, said with the counts, not as "partly"
    counted = verdict_words(noisy, [OVERHEAD_BOUND] * 12 + [TOO_NOISY] * 2)
    assert ("- **The decoder:** Of its 14 decode measurements, 12 reached less than half of the lower ceiling "
            "(overhead-bound) and 2 were too noisy to place (rounds varied more than 1.25×).") in counted
    assert "artly" not in counted and "ostly" not in counted
    assert "1 was too noisy to place" in verdict_words(noisy, [OVERHEAD_BOUND] * 13 + [TOO_NOISY])
    assert "Its one decode measurement was too noisy to place" in verdict_words(noisy, [TOO_NOISY])
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
           "most 1.1×." in steady_but_busy
    assert "The relations, not the heights." in steady_but_busy
    # quiet means every spread, not a typical one: one noisy measurement among many makes the run noisy
    many = {f"rounds of batch {b}": 1.05 for b in range(20)} | {"rounds of batch 32": 1.3}
    assert "Noisy: 1 of its 21 measurements varied more than 1.25× from slowest to fastest. The rounds of batch 32 " \
           "varied most, 1.3×." in verdict_words(many, [MEMORY_BOUND])
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
    busy_quiet = measure.Machine("cpu", 2, "2026-01-01", s((1.0e10, 1.05e10)), s((1e10,)), s((3e10, 3.1e10)), 2**28,
                                 2048, load=3.0)
    assert "Noisy: other programs kept the cores busy" in run_verdict(busy_quiet, near).data
    assert "Its one decode measurement reached less than half of the lower ceiling (overhead-bound)." in run_verdict(
        quiet, far).data
    noisy = measure.Machine("cpu", 2, "2026-01-01", s((0.4e10, 1.0e10)), s((1e10,)), s((3e10,)), 2**28, 2048)
    assert "The repeats of the plain read varied most, 2.5×." in run_verdict(noisy, far).data
    # quiet speeds, but sweeps measured in a busy spell: every setting's rounds speak too, and none is placed
    busy = [measure.DecodePoint(c, b, 128, s((x, 2 * x, 3 * x))) for b, x in ((1, 0.1), (2, 0.2), (4, 0.3))]
    words = run_verdict(quiet, busy).data
    assert ("Noisy: 3 of its 6 measurements varied more than 1.25× from slowest to fastest. The rounds of batch 1 at "
            "128 tokens in the decode sweep varied most, 3×.") in words
    assert "All 3 decode measurements were too noisy to place" in words
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
    items = words.split("\n")
    assert [i.split(":**")[0] for i in items] == ["- **This sweep", "- **The knee", "- **The rise",
                                                   "- **Against the ceilings", "- **The lesson"]
    assert items[-1] == ("- **The lesson:** This run does not show the memory-to-math knee: all 4 batches were "
                         "overhead-bound. The rounds agreed, so this is not noise: Python's loop and numpy's calls set "
                         "the pace. The ceilings allow the rate to rise near the memory ceiling up to the knee, then "
                         "level off under the math ceiling, as the model's circles do.")
    crossing = decode_knee_batch(c, 3e10, 1e10, 128, "FP32", "FP32", "FP32")
    assert f"The ceilings cross at a batch of about {crossing:.1f}. The short rule, balance point × W/F, gives 6.0." in words
    assert "They dropped from 1 to 2 and from 4 to 8 sequences." in words
    assert "far below both ceilings" in words
    assert items[0] == "- **This sweep:** Quiet: all 4 batches varied at most 1× from slowest to fastest."
    # the same points measured in a busy spell: what a quiet machine would show instead
    busy = [measure.DecodePoint(c, p.batch, 128, s((p.tokens_per_s, p.tokens_per_s / 2))) for p in points]
    items = decode_words(busy, m).data.split("\n")
    assert items[0] == ("- **This sweep:** Noisy: all 4 batches varied more than 1.25× from slowest to fastest, up to "
                        "2×.")
    # noisy points are not placed by the book's rule
    assert items[3].startswith("- **Against the ceilings:** Every batch was too noisy to place: the rounds varied 2×")
    assert items[-1].startswith("- **The lesson:** This run does not show the memory-to-math knee: all 4 batches "
                                "were too noisy to place. The rounds were noisy: other programs may have slowed them. "
                                "On a quiet machine, the formula expects the rate to rise near the memory ceiling")


def test_knee_lesson_words():
    from inferlimits.arithmetic.generation import OVERHEAD_BOUND
    from inferlimits.arithmetic.roofline import COMPUTE_BOUND, MEMORY_BOUND
    from inferlimits.figures.machine import TOO_NOISY, knee_lesson_words
    batches = [1, 2, 4, 8, 16, 32, 64]
    near = [MEMORY_BOUND] * 3 + [COMPUTE_BOUND] * 4
    assert knee_lesson_words(batches, near, 6.1, 1.1) == (
        "this run shows the memory-to-math knee. Every batch reached at least half of its lower ceiling: the memory "
        "ceiling below the knee, the math ceiling past it.")
    partly = knee_lesson_words(batches, [MEMORY_BOUND] + [OVERHEAD_BOUND] * 2 + [COMPUTE_BOUND] * 4, 6.1, 2.0)
    assert partly.startswith("this run does not show the memory-to-math knee: 2 of its 7 batches were overhead-bound.")
    # the stored run: batch 32 reached 96% of its ceiling, but in rounds too noisy to place it
    noisy = knee_lesson_words(batches, [OVERHEAD_BOUND] + [TOO_NOISY] * 6, 9.5, 9.6)
    assert noisy.startswith("this run does not show the memory-to-math knee: 6 of its 7 batches were too noisy to "
                            "place and 1 was overhead-bound. The rounds were noisy")
    assert knee_lesson_words(batches, near[:6] + [TOO_NOISY], 6.1, 1.3).startswith(
        "this run does not show the memory-to-math knee: 1 of its 7 batches was too noisy to place.")
    assert knee_lesson_words(batches, near, 95.0, 1.1) == (
        "this sweep cannot show the memory-to-math knee: the knee lies past the largest batch measured.")
    assert "past the largest" in knee_lesson_words(batches, near, math.inf, 1.1)
    assert "below the smallest" in knee_lesson_words(batches, near, 0.5, 1.1)
    with pytest.raises(ValueError, match="one length"):
        knee_lesson_words(batches, near[:3], 6.1, 1.1)


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
        "That is further than the ceiling fell. The rate sat below half of its ceiling at both contexts, so the "
        "ceiling's fall did not bound the rate's. A cost the formula leaves out grew with the context.")
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
