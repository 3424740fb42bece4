"""Chapters 6 and 7: the overhead ceiling and its assumptions, the dispatch measurement, and the
index card's verdicts on cases whose answers are known."""
from __future__ import annotations

import importlib
import importlib.util
import math
import re

import nbrun
import pytest
from hypothesis import given
from hypothesis import strategies as st

from inferlimits.data import datafiles
from inferlimits.book import ROOT
from inferlimits.arithmetic.generation import decode_flops_per_token, math_ceiling_tokens_per_s, memory_ceiling_tokens_per_s
from inferlimits.data.hardware import accelerator
from inferlimits.figures.indexcard import spec as card_spec
from inferlimits.arithmetic.indexcard import (ABOVE, ACTIVATIONS_BOUND, CACHE_BOUND, COMMUNICATION, DOES_NOT_FIT,
                                              INTERVAL_SHARE, MATH_BOUND, MEMORY_VERDICTS, OVERHEAD, POSITIONS, STEPS,
                                              WEIGHTS_BOUND, WORTH_IT, card_rows, card_run, expected_line,
                                              memory_verdict, read_card, summary_lines)
from inferlimits.arithmetic.measured import predict
from inferlimits.arithmetic.parallel import COMMUNICATION_BOUND, tensor_parallel_on
from inferlimits.data.measurements import measurement
from inferlimits.data.models import model, weight_bytes
from inferlimits.arithmetic.overhead import (binding_wall, dispatch_sweep, eager_launches_per_step, fit_call_overhead,
                                             host_time_per_step_s, launch_assumptions, launch_budget_per_step,
                                             launches_per_step, overhead_ceiling_tokens_per_s,
                                             seconds_per_launch_to_explain, serial_tokens_per_s)
from inferlimits.arithmetic.roofline import COMPUTE_BOUND, MEMORY_BOUND

LLAMA = model("Llama-3.1-8B").config
CHAPTERS = [ROOT / "chapters" / "06_overhead.ipynb", ROOT / "chapters" / "11_index_card.ipynb"]


# ---- the overhead ceiling ------------------------------------------------------------------------

def test_launch_count_is_derived_from_the_config_and_the_assumed_parts():
    a = launch_assumptions()
    assert a.kernels_per_layer == sum(g.count for g in a.per_layer)
    assert eager_launches_per_step(LLAMA) == LLAMA.num_hidden_layers * a.kernels_per_layer + a.outside_layers
    assert launches_per_step(LLAMA, 1, 0) == LLAMA.num_hidden_layers


def test_the_assumptions_say_what_they_are_and_where_such_figures_are_reported():
    a = launch_assumptions()
    assert a.reported_low_s <= a.seconds_per_launch <= a.reported_high_s
    assert "assumed" in a.launch_what and len(a.launch_seen.split()) >= 10
    assert all(len(g.what.split()) >= 3 for g in a.per_layer) and a.outside_what


@given(n=st.floats(1, 1e5), t=st.floats(1e-7, 1e-3), b=st.floats(1, 1024))
def test_ceiling_budget_and_explanation_are_one_formula(n, t, b):
    ceiling = overhead_ceiling_tokens_per_s(n, t, b)
    assert math.isclose(ceiling, b / host_time_per_step_s(n, t))
    assert math.isclose(launch_budget_per_step(ceiling, t, b), n)
    assert math.isclose(seconds_per_launch_to_explain(ceiling, n, b), t)
    assert overhead_ceiling_tokens_per_s(2 * n, t, b) < ceiling   # more launches, lower ceiling


@given(host=st.floats(1e-6, 1.0), device=st.floats(1e-6, 1.0))
def test_synchronised_steps_are_slower_than_either_part_alone(host, device):
    serial = serial_tokens_per_s(host, device)
    assert serial <= min(1 / host, 1 / device) and serial >= 0.5 * min(1 / host, 1 / device)


def test_binding_wall_names_the_lowest_ceiling():
    assert binding_wall(498, 140_000, 72) == "overhead"
    assert binding_wall(498, 140_000, 100_000) == "memory"
    assert binding_wall(300_000, 140_000, 1e6) == "math"


def test_the_chapters_running_example():
    """29 tokens/s on the B200 is about 6% of the memory ceiling; the eager launches alone cap it
    near 72 tokens/s at the assumed 10 µs; one graph launch per step puts memory back in charge."""
    m = measurement("b200_eager_llama8b")
    a = accelerator(m.accelerator)
    mem = memory_ceiling_tokens_per_s(a.bandwidth_bytes_per_s, weight_bytes(LLAMA, m.weight_precision))
    mth = math_ceiling_tokens_per_s(a.dense_bf16_flops_per_s, decode_flops_per_token(LLAMA))
    assert 0.05 < m.tokens_per_s / mem < 0.07
    t = launch_assumptions().seconds_per_launch
    eager = overhead_ceiling_tokens_per_s(eager_launches_per_step(LLAMA), t)
    assert m.tokens_per_s < eager < mem and binding_wall(mem, mth, eager) == "overhead"
    assert binding_wall(mem, mth, overhead_ceiling_tokens_per_s(1, t)) == "memory"


# ---- the dispatch measurement ------------------------------------------------------------------

def test_fit_recovers_known_costs():
    c, e = 1e-6, 5e-10
    calls = [4096, 1024, 64, 1]
    elements = [4096] * 4
    seconds = [n * c + x * e for n, x in zip(calls, elements)]
    got_c, got_e = fit_call_overhead(calls, elements, seconds)
    assert math.isclose(got_c, c, rel_tol=1e-6) and math.isclose(got_e, e, rel_tol=1e-6)


def test_fit_rejects_rows_of_different_lengths():
    with pytest.raises(ValueError, match="same length"):
        fit_call_overhead([1, 2], [3, 4, 5], [1e-6, 2e-6])


def test_a_small_sweep_measures_and_is_remembered():
    sweep = dispatch_sweep(256, (1, 16), repeats=1)
    assert sweep is dispatch_sweep(256, (1, 16), repeats=1)
    assert sweep.calls(16) == 16 and all(s > 0 for s in sweep.loop_seconds) and sweep.one_call_seconds > 0
    assert sweep.slowdown(1) > 1
    with pytest.raises(ValueError, match="divide"):
        dispatch_sweep(256, (3,), repeats=1)


# ---- the index card: cases with known answers ---------------------------------------------------

def test_memory_bound_decode():
    """One sequence of Llama-3.1-8B on an H100: the weight read paces decode; every memory lever helps."""
    card = read_card("H100 SXM", "Llama-3.1-8B", batch=1, context_tokens=1024)
    assert card.decode_wall == MEMORY_BOUND and card.verdict == WEIGHTS_BOUND
    helping = card.helping()
    assert any(h.startswith("quantize the weights") for h in helping)
    assert "batch twice as many sequences" in helping and "speculative decoding" in helping
    assert any(h.startswith("a GPU with more bandwidth") for h in helping)
    assert not any(h.startswith("quantize the KV cache") or h.startswith("profile") for h in helping)


def test_compute_bound_prefill():
    """An 8,192-token prompt on a B200 is far past the crossover, a little above the balance point
    (about 281) once the prompt's activations are counted."""
    card = read_card("B200 (HGX)", "Llama-3.1-8B", prompt_tokens=8192)
    assert card.prefill_wall == COMPUTE_BOUND and 281 < card.prefill_crossover_tokens < 400
    assert read_card("B200 (HGX)", "Llama-3.1-8B", prompt_tokens=64).prefill_wall == MEMORY_BOUND


def test_kv_dominated_long_context():
    """32 sequences of 32,768 tokens: the caches outweigh the weights; shrinking them is the lever,
    and neither lighter weights nor a bigger batch (which would not fit) helps."""
    card = read_card("B200 (HGX)", "Llama-3.1-8B", batch=32, context_tokens=32_768)
    assert card.verdict == CACHE_BOUND and card.cache_bytes > 5 * card.weight_bytes and card.fits
    helping = card.helping()
    assert "quantize the KV cache to FP8" in helping
    assert not any(h.startswith("quantize the weights") for h in helping)
    assert "batch twice as many sequences" not in helping


def test_overhead_bound_eager_baseline():
    """The eager 29 tokens/s on a B200 is far below both ceilings: profile first, buy nothing."""
    m = measurement("b200_eager_llama8b")
    card = read_card(m.accelerator, m.model, weight_precision=m.weight_precision, measured_tokens_per_s=m.tokens_per_s)
    assert card.verdict == OVERHEAD and 0.05 < card.share_of_ceiling < 0.06
    # profile first; batching still helps, because a host-bound step's cost is shared by the batch
    assert card.helping() == ["batch twice as many sequences", "profile the step (host time, kernels, waits)"]
    assert not any(h.startswith("quantize") or h.startswith("a GPU with more") for h in card.helping())


def test_compute_bound_decode_and_impossible_measurements():
    big = read_card("B200 (HGX)", "Llama-3.1-8B", batch=512)
    assert big.decode_wall == COMPUTE_BOUND and big.verdict == MATH_BOUND
    assert "speculative decoding" not in big.helping() and "batch twice as many sequences" not in big.helping()
    assert "FP8 math (FP8 weights)" in big.helping()
    lever = next(x for x in big.levers if x.name == "FP8 math (FP8 weights)")
    # not twice: the output head and attention stay in 16 bits, and the activations' bytes do not shrink
    assert 1.3 < lever.gain < 2
    a100 = read_card("A100 80GB SXM", "Llama-3.1-8B", batch=1024)
    assert a100.verdict == MATH_BOUND and not any(h.startswith(("FP8 math", "FP4 math")) for h in a100.helping())
    # already in FP8 on a part with FP4: the next lever is FP4 math with MXFP4 weights
    fp8 = read_card("B200 (HGX)", "Llama-3.1-8B", "FP8", batch=2048, math_precision="FP8")
    assert fp8.verdict == MATH_BOUND and "FP4 math (MXFP4 weights)" in fp8.helping()
    assert fp8.math_ceiling > 1.5 * big.math_ceiling
    near = read_card("B200 (HGX)", "Llama-3.1-8B", measured_tokens_per_s=450)
    assert near.verdict == WEIGHTS_BOUND
    wrong = read_card("B200 (HGX)", "Llama-3.1-8B", measured_tokens_per_s=600)
    assert wrong.verdict == ABOVE and wrong.helping() == []


@given(name=st.sampled_from(["A100 80GB SXM", "H100 SXM", "B200 (HGX)", "L40S", "RTX 4090"]),
       model_name=st.sampled_from(["Llama-3.1-8B", "Qwen2.5-32B", "Llama-3.1-70B", "Mistral-7B-v0.1", "DeepSeek-V3"]),
       wp=st.sampled_from(["BF16", "FP8", "INT4"]), kvp=st.sampled_from(["BF16", "FP8", "INT4"]),
       batch=st.floats(1, 1024), context=st.floats(0, 131_072), prompt=st.floats(1, 32_768),
       measured=st.sampled_from([0, 1, 29, 1e3, 1e5, 1e7]))
def test_the_card_answers_anywhere_the_panel_can_go(name, model_name, wp, kvp, batch, context, prompt, measured):
    card = read_card(name, model_name, wp, kvp, batch, context, prompt, measured)
    for mp in ("BF16", "FP8", "FP4"):  # the drawn card never fails, whatever pair of precisions is chosen
        drawn = card_spec(name, model_name, wp, kvp, batch, context, prompt, "none", mp)
        assert len(drawn["data"]) == 4
    assert card.verdict in (DOES_NOT_FIT, WEIGHTS_BOUND, CACHE_BOUND, ACTIVATIONS_BOUND, MATH_BOUND, OVERHEAD, ABOVE)
    _names_the_largest_part(card)
    assert len(card_rows(card)) == len(STEPS) and summary_lines(card)
    if card.fits:
        assert card.ceiling == min(card.memory_ceiling, card.math_ceiling) > 0
        p = card.expected
        assert 0 < p.low <= p.expected <= p.high <= p.ceiling == card.ceiling
        assert (card.position is None) == (not measured)
    else:
        _states_no_rate(card)


# ---- fit first: a setup that does not fit gets no rate ---------------------------------------------

RATE = re.compile(r"\d[\d,.]*\s*(tokens/s|tokens per second)|ceiling \d")


def _states_no_rate(card):
    """Nothing the card prints or draws gives a rate for a setup that cannot run."""
    assert card.verdict == DOES_NOT_FIT and card.ceiling is None and card.decode_wall is None
    assert card.memory_ceiling is None and card.math_ceiling is None and card.share_of_ceiling is None
    assert card.expected is None and card.position is None
    printed = " ".join(v for _, _, v in card_rows(card)) + " ".join(summary_lines(card))
    assert not RATE.search(printed), printed
    assert not any(line.startswith("expected") for line in summary_lines(card))
    drawn = card_spec(card.accelerator_name, card.model_name, card.weight_precision, card.kv_precision,
                      card.batch, card.context_tokens, card.prompt_tokens, "none")
    assert all(x is None for x in drawn["data"][0]["x"][:2])  # no ceiling bars
    assert drawn["data"][1]["x"] == [None, None, None]     # and no expected rate


# ---- the expected rate: a forecast beside the bound ---------------------------------------------

EXPECTED = re.compile(r"^expected [\d,.]+ tokens/s \(80%: [\d,.]+–[\d,.]+\), ceiling [\d,.]+$")
SETUPS = [  # one GPU memory-bound, batched, compute-bound, activation-bound, MoE, several GPUs, communication-bound
    dict(accelerator_name="B200 (HGX)", model_name="Llama-3.1-8B", context_tokens=8192),
    dict(accelerator_name="H100 SXM", model_name="Llama-3.1-8B", batch=16, context_tokens=2048),
    dict(accelerator_name="B200 (HGX)", model_name="Llama-3.1-8B", batch=512),
    dict(accelerator_name="B200 (HGX)", model_name="Llama-3.1-8B", weight_precision="MXFP4", batch=512,
         math_precision="FP4"),
    dict(accelerator_name="H200 SXM", model_name="Qwen3-30B-A3B", batch=64, context_tokens=8192),
    dict(accelerator_name="H100 SXM", model_name="Llama-3.1-70B", weight_precision="FP8", batch=8,
         context_tokens=4096, math_precision="FP8", gpus=4),
    dict(accelerator_name="B200 (HGX)", model_name="Llama-3.2-1B", context_tokens=1024, gpus=8),
    dict(accelerator_name="L40S", model_name="Llama-3.1-8B", kv_precision="INT4", batch=2, context_tokens=16_384),
]


@pytest.mark.parametrize("setup", SETUPS, ids=lambda s: f"{s['model_name']} on {s['accelerator_name']}")
def test_every_setup_that_fits_gets_an_expected_rate_inside_its_interval_and_below_the_ceiling(setup):
    card = read_card(**setup)
    assert card.fits
    p = card.expected
    assert 0 < p.low <= p.expected <= p.high <= p.ceiling == card.ceiling
    assert p.unit == "tokens/s" and p.metric == "tokens_per_s" and INTERVAL_SHARE == pytest.approx(0.8)
    # the forecast is measured.predict's for the card's run, capped by the card's ceiling: no run beats it
    raw = predict(card_run(card))
    assert (p.low, p.expected, p.high) == pytest.approx(tuple(min(x, card.ceiling) for x in (raw.low, raw.expected,
                                                                                            raw.high)))
    # printed on the card, in the summary and the full table, and drawn as low, expected, high
    line = expected_line(card)
    assert EXPECTED.match(line), line
    assert line in summary_lines(card)
    assert dict((r[0], r[2]) for r in card_rows(card))["expected in a good compiled engine"] == line
    drawn = card_spec(card.accelerator_name, card.model_name, card.weight_precision, card.kv_precision, card.batch,
                      card.context_tokens, card.prompt_tokens, "none", card.math_precision, card.gpus)
    assert drawn["data"][1]["x"] == pytest.approx([p.low, p.expected, p.high], rel=1e-3)


def test_the_card_runs_the_setup_it_describes():
    card = read_card("H100 SXM", "Llama-3.1-70B", "FP8", "FP8", batch=8, context_tokens=4096.4, math_precision="FP8",
                     gpus=4)
    assert card_run(card) == dict(model="Llama-3.1-70B", accelerator="H100 SXM", gpus=4, tp=4, weight_precision="FP8",
                                  math_precision="FP8", kv_precision="FP8", batch=8, input_tokens=4096, output_tokens=0,
                                  metric="tokens_per_s")


@pytest.mark.parametrize("rate, position", [(29, "below"), (1.2e3, "inside"), (1e5, "above")])
def test_the_card_says_where_a_measured_rate_falls_in_the_interval(rate, position):
    card = read_card("H100 SXM", "Llama-3.1-8B", batch=16, context_tokens=2048, measured_tokens_per_s=rate)
    p = card.expected
    assert card.position == position == p.position(rate)
    assert {"below": rate < p.low, "inside": p.low <= rate <= p.high, "above": rate > p.high}[position]
    lines = summary_lines(card)
    assert POSITIONS[position] in lines and POSITIONS[position].startswith(f"{position} the 80% interval")
    verdict_row = dict((r[0], r[2]) for r in card_rows(card))["verdict on a measurement"]
    assert verdict_row.endswith(f"; {position} the expected rate's 80% interval")
    drawn = card_spec("H100 SXM", "Llama-3.1-8B", "BF16", "BF16", 16, 2048, 1024, rate)
    assert f"{position} the interval" in drawn["data"][0]["text"][2]


def test_the_eager_baseline_falls_below_the_expected_interval_and_a_good_run_inside_it():
    m = measurement("b200_eager_llama8b")
    eager = read_card(m.accelerator, m.model, weight_precision=m.weight_precision, measured_tokens_per_s=m.tokens_per_s)
    assert eager.position == "below"
    service = read_card("H100 SXM", "Llama-3.1-8B", batch=16, context_tokens=2048, measured_tokens_per_s=1500)
    assert service.position == "inside"
    # a rate can be far below both ceilings by the rule at half and still inside the interval
    usual = read_card("H100 SXM", "Llama-3.1-8B", batch=16, context_tokens=2048, measured_tokens_per_s=1200)
    assert usual.verdict == OVERHEAD and usual.position == "inside"


@pytest.mark.parametrize("rate", [0, 29, 1e4])
def test_a_setup_that_does_not_fit_gets_no_expected_rate_and_no_position(rate):
    card = read_card("H100 SXM", "Llama-3.1-70B", batch=1, context_tokens=1024, measured_tokens_per_s=rate)
    _states_no_rate(card)
    assert expected_line(card) == "none: it does not fit"
    assert not any(pos in " ".join(summary_lines(card)) for pos in POSITIONS.values())


def test_a_mixture_of_experts_card_shows_how_many_experts_a_step_reads():
    card = read_card("B200 (HGX)", "gpt-oss-120b", "MXFP4 experts", batch=64, math_precision="FP4")
    assert card.fits and 4 < card.experts_touched < 128
    assert any(line.startswith("experts: a step of 64 touches") for line in summary_lines(card))
    assert read_card("B200 (HGX)", "Llama-3.1-8B").experts_touched is None


def test_llama_70b_in_bf16_on_one_h100_does_not_fit_and_says_so_first():
    card = read_card("H100 SXM", "Llama-3.1-70B", "BF16", batch=1, context_tokens=1024)
    _states_no_rate(card)
    assert summary_lines(card)[0].startswith(f"<b>{DOES_NOT_FIT}")
    assert card.memory.missing_bytes > 60e9  # 141 GB of weights against 77 GB usable
    helping = card.helping()
    assert "quantize the weights to FP8" in helping and "split the model over 2 GPUs" in helping
    assert "a smaller batch" not in helping  # the weights alone do not fit


def test_the_split_lever_names_the_fewest_gpus_that_hold_it_and_the_rate_they_reach():
    alone = read_card("H100 SXM", "Llama-3.1-70B", batch=1, context_tokens=1024)
    split = next(lever for lever in alone.levers if lever.name.startswith("split the model over"))
    assert split.name == "split the model over 2 GPUs" and split.helps
    two = read_card("H100 SXM", "Llama-3.1-70B", batch=1, context_tokens=1024, gpus=2)
    assert two.fits and f"{two.ceiling:,.0f} tokens/s" in split.why
    assert two.memory.weight_bytes == pytest.approx(alone.memory.weight_bytes / 2)


def test_on_one_gpu_the_card_has_no_communication_and_its_ceiling_is_the_lower_of_two():
    card = read_card("H100 SXM", "Llama-3.1-8B", batch=16, context_tokens=2048)
    assert card.gpus == 1 and card.communication_time_s == 0
    assert card.ceiling == min(card.memory_ceiling, card.math_ceiling)
    assert dict((r[0], r[2]) for r in card_rows(card))["all-reduces between the GPUs"] == "none: one GPU"


@pytest.mark.parametrize("gpus", [2, 4, 8])
def test_on_several_gpus_the_card_counts_the_all_reduces_in_its_rate(gpus):
    card = read_card("H100 SXM", "Llama-3.1-70B", "FP8", batch=8, context_tokens=4096, math_precision="FP8", gpus=gpus)
    step = tensor_parallel_on(accelerator("H100 SXM"), model("Llama-3.1-70B").config, gpus, 8, 4096, "FP8", "BF16",
                              "FP8")
    assert card.communication_time_s == pytest.approx(step.communication_s) and card.communication_time_s > 0
    assert card.ceiling == pytest.approx(step.aggregate) and card.ceiling < min(card.memory_ceiling, card.math_ceiling)
    assert card.memory_ceiling == pytest.approx(8 / step.memory_s)
    assert any(line.startswith(f"on {gpus} GPUs with their all-reduces") for line in summary_lines(card))


def test_a_small_model_on_many_gpus_is_communication_bound_and_the_card_says_fewer():
    card = read_card("B200 (HGX)", "Llama-3.2-1B", batch=1, context_tokens=1024, gpus=8)
    assert card.verdict == COMMUNICATION and card.decode_wall == COMMUNICATION_BOUND
    gains = {lever.name: lever.gain for lever in card.levers if lever.helps}
    assert gains["fewer GPUs (1)"] >= WORTH_IT
    one = read_card("B200 (HGX)", "Llama-3.2-1B", batch=1, context_tokens=1024)
    assert one.ceiling == pytest.approx(card.ceiling * gains["fewer GPUs (1)"])
    assert "tensor parallel over 8 GPUs" not in one.helping()


def test_speculative_decoding_is_priced_and_helps_only_where_math_is_idle():
    idle = read_card("H100 SXM", "Llama-3.1-8B", batch=1, context_tokens=1024)
    busy = read_card("B200 (HGX)", "Llama-3.1-8B", batch=512)
    gain = {lever.name: lever.gain for lever in idle.levers}["speculative decoding"]
    assert WORTH_IT <= gain < 5  # at most k + 1 = 5 tokens per step
    assert "speculative decoding" in idle.helping() and "speculative decoding" not in busy.helping()
    assert {lever.name: lever.gain for lever in busy.levers}["speculative decoding"] < 1


def test_more_gpus_are_a_lever_only_for_a_memory_bound_step_and_only_the_better_gpu_lever_is_marked():
    busy = read_card("B200 (HGX)", "Llama-3.1-8B", batch=512)
    assert busy.verdict == MATH_BOUND and "tensor parallel over 8 GPUs" not in busy.helping()
    assert {lever.name: lever.gain for lever in busy.levers}["tensor parallel over 8 GPUs"] > WORTH_IT
    small = read_card("B200 (HGX)", "Llama-3.2-1B", batch=1, context_tokens=1024, gpus=2)
    gpu_levers = [lever for lever in small.levers if "GPUs" in lever.name]
    assert [lever.name for lever in gpu_levers if lever.helps] == ["fewer GPUs (1)"]
    assert all(lever.gain >= WORTH_IT for lever in gpu_levers)  # both would raise the rate; the better is marked


def test_on_several_gpus_the_prefill_crossover_is_one_gpus_share_and_the_prompt_can_be_communication_bound():
    one = read_card("B200 (HGX)", "Llama-3.1-8B", prompt_tokens=8192)
    eight = read_card("B200 (HGX)", "Llama-3.1-8B", prompt_tokens=8192, gpus=8)
    assert eight.prefill_crossover_tokens > one.prefill_crossover_tokens
    assert one.prompt_communication_s == 0 and eight.prompt_communication_s > 0
    assert eight.prefill_wall == COMMUNICATION_BOUND and one.prefill_wall == COMPUTE_BOUND


@pytest.mark.parametrize("gpus", [0, 3, 16, 2.5, True])
def test_the_card_takes_one_servers_tensor_parallel_degrees(gpus):
    with pytest.raises(ValueError, match="gpus"):
        read_card("H100 SXM", "Llama-3.1-70B", gpus=gpus)


def test_a_batch_too_large_for_memory_gets_the_levers_that_make_it_fit():
    card = read_card("H100 SXM", "Llama-3.1-8B", batch=64, context_tokens=32_768)
    _states_no_rate(card)
    helping = card.helping()
    assert "a smaller batch" in helping and "a shorter context" in helping
    why = {lever.name: lever.why for lever in card.levers}
    assert why["a smaller batch"].startswith("at most ")


@given(name=st.sampled_from(["A100 80GB SXM", "H100 SXM", "B200 (HGX)", "L40S", "RTX 4090"]),
       model_name=st.sampled_from(["Llama-3.1-8B", "Qwen2.5-32B", "Llama-3.1-70B", "DeepSeek-V3"]),
       batch=st.integers(1, 1024), context=st.integers(0, 131_072))
def test_any_setup_beyond_memory_states_no_rate(name, model_name, batch, context):
    card = read_card(name, model_name, batch=batch, context_tokens=context)
    assert card.fits == card.memory.fits == (card.memory.needed_bytes <= card.memory.usable_bytes)
    if not card.fits:
        _states_no_rate(card)


# ---- the printed card states the formulas the package uses ---------------------------------------

@pytest.mark.parametrize("step", STEPS, ids=lambda s: s.what)
def test_each_step_of_the_card_names_a_function_whose_docstring_states_it(step):
    module, name = step.function.split(".")
    found = [m for m in (f"inferlimits.{layer}.{module}" for layer in ("data", "arithmetic"))
             if importlib.util.find_spec(m)]
    assert len(found) == 1, f"{step.function}: no single module {module} in the data or arithmetic"
    fn = getattr(importlib.import_module(found[0]), name)
    assert step.plain in " ".join(fn.__doc__.split()), f"{step.function} does not state {step.plain!r}"


# ---- every assumed value in overhead.toml is shown or checked by a chapter ----------------------

NUMBER_LINE = re.compile(r"^(?P<key>\w+) = (?P<value>[0-9][0-9_.]*)\s*$", re.M)


def _overhead_mutations():
    text = datafiles.read("overhead.toml")
    for m in NUMBER_LINE.finditer(text):
        yield pytest.param(m.end("value") - 1, id=f"overhead.toml:{text.count(chr(10), 0, m.start()) + 1}")


@pytest.mark.parametrize("position", list(_overhead_mutations()))
def test_every_assumed_value_is_used_and_checked(position, monkeypatch):
    original = datafiles.read
    text = original("overhead.toml")
    digit = text[position]
    mutated = text[:position] + ("8" if digit == "9" else str(int(digit) + 1)) + text[position + 1:]
    monkeypatch.setattr(datafiles, "read", lambda n: mutated if n == "overhead.toml" else original(n))
    launch_assumptions.cache_clear()
    try:
        found = next((d for p in CHAPTERS if p.exists() and (d := nbrun.divergence(nbrun.load_cells(p)))), None)
    finally:
        monkeypatch.undo()
        launch_assumptions.cache_clear()
    assert found, f"changing {text[:position].splitlines()[-1]!r}… in overhead.toml changes nothing chapters 6-7 show"


# ---- a memory-bound card names the wall it meets: the largest part of the bytes -----------------------

def _names_the_largest_part(card):
    if card.verdict not in MEMORY_VERDICTS.values():
        return
    parts = {WEIGHTS_BOUND: card.weights_time_s, CACHE_BOUND: card.cache_time_s,
             ACTIVATIONS_BOUND: card.activation_time_s}
    assert parts[card.verdict] == max(parts.values()), (card.verdict, parts)


def test_the_card_names_the_activations_when_they_are_most_of_the_bytes():
    # Llama-3.1-8B in MXFP4 with FP4 math at batch 512 on a B200, no context yet: the activations
    # between kernels are more of the step's bytes than the weights, so the wall is theirs
    card = read_card("B200 (HGX)", "Llama-3.1-8B", "MXFP4", "BF16", batch=512, math_precision="FP4")
    assert card.activation_bytes > card.weight_bytes > card.cache_bytes == 0
    assert card.verdict == ACTIVATIONS_BOUND
    _names_the_largest_part(card)


@given(w=st.floats(0, 1e12), k=st.floats(0, 1e12), a=st.floats(0, 1e12))
def test_memory_verdict_names_the_largest_part(w, k, a):
    verdict = memory_verdict(w, k, a)
    largest = max(w, k, a)
    assert {WEIGHTS_BOUND: w, CACHE_BOUND: k, ACTIVATIONS_BOUND: a}[verdict] == largest


@pytest.mark.parametrize("field", ["weight_bytes", "cache_bytes", "activation_bytes"])
def test_memory_verdict_rejects_negative_bytes(field):
    args = dict(weight_bytes=1.0, cache_bytes=1.0, activation_bytes=1.0)
    args[field] = -1.0
    with pytest.raises(ValueError, match=field):
        memory_verdict(**args)
