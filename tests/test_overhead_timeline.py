"""Chapter 6's timeline and the batch below which the host is the wall: the kernels of an eager
step carry exactly the book's bytes and FLOPs, the timeline follows its two rules (a kernel starts
when its launch is done and the GPU is free; a graph is one launch), the figure draws what the
arithmetic computes, and B_o is where the overhead ceiling stops being the lowest."""
from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from inferlimits.arithmetic.generation import decode_point
from inferlimits.arithmetic.overhead import (OUTSIDE, binding_wall, eager_launches_per_step, eager_step_kernels,
                                             host_time_per_step_s, launch_assumptions, launch_timeline,
                                             overhead_bound_batch, overhead_ceiling_tokens_per_s)
from inferlimits.book.export import SLIDES
from inferlimits.data.hardware import accelerator
from inferlimits.data.measurements import measurement
from inferlimits.data.models import model
from inferlimits.figures import overhead_timeline as figure

EAGER = measurement("b200_eager_llama8b")
B200 = accelerator(EAGER.accelerator)
P, BW = B200.dense_bf16_flops_per_s, B200.bandwidth_bytes_per_s
LLAMA = model(EAGER.model).config
T = launch_assumptions().seconds_per_launch


# ---- the kernels of an eager step ----------------------------------------------------------------

@pytest.mark.parametrize("name", ["Llama-3.1-8B", "Qwen2.5-7B", "Mistral-7B-v0.1", "Qwen3-32B", "Llama-3.2-1B"])
@pytest.mark.parametrize("batch, context, precision", [(1, 0, "BF16"), (8, 8192, "BF16"), (64, 1000, "INT4")])
def test_the_kernels_carry_the_books_bytes_and_flops(name, batch, context, precision):
    c = model(name).config
    kernels = eager_step_kernels(c, batch, context, weight_precision=precision)
    step = decode_point(c, P, BW, batch, context, weight_precision=precision)
    assert len(kernels) == eager_launches_per_step(c)
    assert sum(k.bytes for k in kernels) == pytest.approx(step.bytes, rel=1e-12)
    assert sum(k.flops for k in kernels) == pytest.approx(step.flops, rel=1e-12)
    assert all(k.bytes > 0 and k.flops >= 0 for k in kernels)


def test_at_batch_1_every_kernel_is_memory_bound_and_the_step_is_the_memory_time():
    kernels = eager_step_kernels(LLAMA, weight_precision=EAGER.weight_precision)
    step = decode_point(LLAMA, P, BW, weight_precision=EAGER.weight_precision)
    assert all(k.bytes / BW >= k.flops / P for k in kernels)
    assert sum(k.seconds(P, BW) for k in kernels) == pytest.approx(step.bytes / BW, rel=1e-12)


def test_the_big_kernels_are_the_products_and_the_output_head():
    kernels = eager_step_kernels(LLAMA, weight_precision=EAGER.weight_precision)
    a = launch_assumptions()
    layer = kernels[1:1 + a.kernels_per_layer]
    mlp = LLAMA.hidden_size * LLAMA.intermediate_size * 2 / BW        # one FP16 MLP matrix read
    assert sorted(k.seconds(P, BW) for k in layer)[-3:] == pytest.approx([mlp] * 3, rel=1e-3)
    assert sum(k.seconds(P, BW) > 1e-6 for k in layer) == 7           # q, k, v, o, gate, up, down
    head = max(kernels, key=lambda k: k.bytes)
    assert head.part == OUTSIDE and head.bytes > 1e9                 # the output head, 1.05 GB


@pytest.mark.parametrize("name", ["Mixtral-8x7B", "DeepSeek-V3"])
def test_moe_and_mla_models_are_refused(name):
    with pytest.raises(ValueError, match="^c must"):
        eager_step_kernels(model(name).config)


# ---- the timeline's two rules ----------------------------------------------------------------------

@given(times=st.lists(st.floats(0, 1e-4), min_size=1, max_size=60), t=st.floats(1e-7, 1e-4))
def test_eager_and_graph_timelines_follow_their_rules(times, t):
    eager, graph = launch_timeline(times, t), launch_timeline(times, t, graph=True)
    n, busy = len(times), sum(times)
    assert len(eager.launches) == n and len(graph.launches) == 1
    assert eager.host_s == pytest.approx(n * t) and graph.host_s == t
    for (l0, l1), (k0, k1), k in zip(eager.launches, eager.kernels, times):
        assert k0 >= l1 - 1e-18 and k1 - k0 == pytest.approx(k, abs=1e-18)   # runs once its launch is done
    for (_, end), (start, _) in zip(eager.kernels, eager.kernels[1:]):
        assert start >= end - 1e-18                                          # one kernel at a time
    assert n * t - 1e-15 <= eager.step_s <= n * t + busy + 1e-15
    assert graph.step_s == pytest.approx(t + busy)                           # back to back after one launch
    assert eager.busy_s == pytest.approx(busy) == pytest.approx(graph.busy_s)
    assert 0 <= eager.idle_share <= 1


def test_bad_input_to_the_timeline_names_the_parameter():
    with pytest.raises(ValueError, match="kernel_seconds"):
        launch_timeline([], 1e-5)
    with pytest.raises(ValueError, match="kernel_seconds"):
        launch_timeline([1e-6, -1e-6], 1e-5)
    with pytest.raises(ValueError, match="kernel_seconds"):
        launch_timeline([float("nan")], 1e-5)
    with pytest.raises(ValueError, match="seconds_per_launch"):
        launch_timeline([1e-6], 0)
    with pytest.raises(ValueError, match="batch"):
        eager_step_kernels(LLAMA, 0)
    with pytest.raises(ValueError, match="context_tokens"):
        eager_step_kernels(LLAMA, 1, -1)


def test_the_chapters_step_host_bound_eager_memory_bound_as_a_graph():
    eager, graph = figure.step_timelines(EAGER.accelerator, EAGER.model, EAGER.weight_precision, T * 1e6)
    n = eager_launches_per_step(LLAMA)
    memory_s = decode_point(LLAMA, P, BW, weight_precision=EAGER.weight_precision).bytes / BW
    assert eager.host_s == pytest.approx(host_time_per_step_s(n, T))
    assert eager.step_s == pytest.approx(eager.host_s, rel=1e-3)     # the last kernel ends just after the last launch
    assert eager.busy_s == pytest.approx(memory_s, rel=1e-12)
    assert eager.idle_share > 0.8
    assert graph.step_s == pytest.approx(T + memory_s)


# ---- the batch below which the host is the wall ----------------------------------------------------

@pytest.mark.parametrize("context", [0, 1000, 8192, 32_768])
def test_below_b_o_the_host_binds_and_above_it_it_does_not(context):
    n = eager_launches_per_step(LLAMA)
    host = host_time_per_step_s(n, T)
    one = decode_point(LLAMA, P, BW, 1, context, weight_precision=EAGER.weight_precision)
    b_o = overhead_bound_batch(host, one.weight_bytes, one.bytes - one.weight_bytes, BW, one.flops_per_token, P)

    def wall(batch):
        step = decode_point(LLAMA, P, BW, batch, context, weight_precision=EAGER.weight_precision)
        return binding_wall(step.memory_ceiling, step.math_ceiling, overhead_ceiling_tokens_per_s(n, T, batch))

    assert wall(b_o * 0.999) == "overhead" and wall(b_o * 1.001) != "overhead"


def test_a_host_faster_than_the_weights_binds_at_no_batch():
    step = decode_point(LLAMA, P, BW, weight_precision=EAGER.weight_precision)
    graph_host = host_time_per_step_s(1, T)                          # one graph launch
    assert graph_host < step.weight_bytes / BW
    assert overhead_bound_batch(graph_host, step.weight_bytes, step.activation_bytes, BW, step.flops_per_token, P) == 0


@given(host=st.floats(1e-4, 1.0), s=st.floats(1e3, 1e10))
def test_b_o_is_the_smaller_of_the_memory_and_math_bounds(host, s):
    W, F = 15e9, 15e9
    b_o = overhead_bound_batch(host, W, s, BW, F, P)
    assert b_o == pytest.approx(max(0.0, min((host * BW - W) / s, host * P / F)))
    assert overhead_bound_batch(2 * host, W, s, BW, F, P) >= b_o    # a slower host binds over more batches


@pytest.mark.parametrize("bad", [0, -1, math.nan, math.inf])
def test_b_o_names_a_bad_parameter(bad):
    args = dict(host_seconds_per_step=0.014, weight_bytes=15e9, sequence_bytes=1e8, bandwidth_bytes_per_s=8e12,
                flops_per_token=15e9, peak_flop_per_s=2.25e15)
    for name in args:
        with pytest.raises(ValueError, match=name):
            overhead_bound_batch(**{**args, name: bad})


# ---- the figure ----------------------------------------------------------------------------------

TOL = 10 ** -figure.DIGITS      # ms: the figure rounds its times to this


def _spec():
    return figure.timeline_spec(EAGER.accelerator, EAGER.model, EAGER.weight_precision, T * 1e6)


def _trace(spec, start):
    return next(t for t in spec["data"] if t["name"].startswith(start))


def test_the_figure_draws_the_timelines():
    spec = _spec()
    eager, graph = figure.step_timelines(EAGER.accelerator, EAGER.model, EAGER.weight_precision, T * 1e6)
    ends = _trace(spec, "the step ends")
    assert ends["x"] == [pytest.approx(eager.step_s * 1e3, abs=TOL), pytest.approx(graph.step_s * 1e3, abs=TOL)]
    assert ends["text"] == [f"the step ends: {eager.step_s * 1e3:.1f} ms", f"the step ends: {graph.step_s * 1e3:.1f} ms"]
    host = _trace(spec, "eager: host, whole step")
    assert host["x"] == [0, pytest.approx(eager.host_s * 1e3, abs=TOL), None]
    assert f"{len(eager.kernels):,} launches" in host["name"]
    gpu = _trace(spec, "CUDA Graph: GPU, whole step")                   # one block, back to back
    assert gpu["x"] == [pytest.approx(T * 1e3), pytest.approx(graph.step_s * 1e3, abs=TOL), None]
    drawn = _trace(spec, "eager: GPU, whole step")["x"]
    runs = figure._merged(eager.kernels)                                 # the GPU's runs without a break
    shown = [e - s for s, e in runs if e - s >= figure.MIN_DRAWN_S]
    assert len(drawn) == 3 * len(shown)
    assert sum(b - a for a, b in zip(drawn[0::3], drawn[1::3])) == pytest.approx(sum(shown) * 1e3, abs=len(shown) * TOL)
    assert eager.busy_s - sum(shown) < 1e-3 * eager.busy_s              # what is too short to draw is a sliver
    edges = _trace(spec, "eager: host, close-up")["x"]                 # where each launch begins and ends
    assert edges == [pytest.approx(i * T * 1e3) for i in range(len(edges))]
    assert len(edges) == round(figure.close_up_s(T * 1e6) / T) + 1
    ticks = _trace(spec, "eager: a kernel too short")["x"]
    short = [s for s, e in eager.kernels if s < figure.close_up_s(T * 1e6) and e - s < figure.MIN_DRAWN_S]
    assert ticks == sorted({round(s * 1e3, figure.DIGITS) for s in short})


def test_the_figure_keeps_the_sites_conventions():
    spec = _spec()
    assert {t["type"] for t in spec["data"]} <= {"scatter", "bar"}     # the site's plotly bundle
    assert all(t.get("name") for t in spec["data"])                     # the site names each series
    L = spec["layout"]
    assert EAGER.model in L["title"]["text"] and "CUDA Graph" in L["title"]["text"]
    for axis in ("xaxis", "xaxis2", "yaxis", "yaxis2"):
        assert L[axis].get("range") and L[axis].get("fixedrange")
    assert L["xaxis"]["title"] and L["xaxis2"]["title"]
    assert L["yaxis"]["ticktext"] == ["eager: host", "eager: GPU", "CUDA Graph: host", "CUDA Graph: GPU"]


def test_the_figure_is_exported_from_chapter_6():
    slide = SLIDES["06_timeline"]
    assert (slide.chapter, slide.div_id) == ("06_overhead", "fig-overhead-timeline")
