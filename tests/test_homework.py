"""``make homework SEED=N``: every chapter's compute, derive and decide exercises with numbers of
their own for each seed (``inferlimits.book.homework``).

The keys are checked for many seeds: each draw meets its template's conditions, each answer is a
finite number (or a choice) with the tolerance its question states, no answer is printed in its
question, and where the arithmetic is short the answers are computed again here, from the data
and the formulas the chapters teach, without the package's functions. Then: seeds are stable and
differ, the variants are many, a bad SEED is refused by name, and the pages are written whole:
sheets without answers, keys with them, nothing fetched from another site, and (where Debian's
chromium is installed) PDFs.
"""
from __future__ import annotations

import html
import json
import math
import os
import re
import subprocess
import sys

import pytest

from browsers import needs_chromium
from inferlimits.arithmetic.activations import activation_bytes_per_token
from inferlimits.arithmetic.generation import (decode_knee_batch, new_tokens_where_prefix_pays, prefill_attention_flops,
                                               prefill_chunk_point, weight_bytes_read_per_step)
from inferlimits.arithmetic.kvcache import (batch_at_user_rate, largest_batch_at_user_rate,
                                            longest_context_where_math_binds, max_sequences, usable_fraction_needed)
from inferlimits.arithmetic.overhead import launch_assumptions, longest_gap_s
from inferlimits.arithmetic.parallel import data_parallel_on, tensor_parallel_on, tensor_parallel_tie_batch
from inferlimits.arithmetic.roofline import step_time_no_overlap_s, step_time_s
from inferlimits.arithmetic.speculative import estimated_speedup, expected_tokens_per_step
from inferlimits.book.course import exercises
from inferlimits.data.hardware import accelerator
from inferlimits.data.models import model, multiplied_params_per_token, param_count
from inferlimits.data.units import GB, GIB
from inferlimits.book.homework import (KINDS, Answer, book_exercises, distinct_variants, exercise_of, numbered_chapters,
                                       numerals, rng_for, seed_value, stated_tolerance, templates, tolerance_line,
                                       variant, variants, without_template)
from inferlimits.book.homework import render

SEEDS = range(1, 51)
TOLERANCE_LINE = re.compile(r"^Tolerance: (exact|\d+(\.\d+)?%( on each number(; exact on counts)?)?)\.$")
USABLE = 0.9   # the book's usable share, as data/serving.toml states it


@pytest.fixture(scope="module")
def keys():
    """Every template's variant for seeds 1 to 50."""
    return {(tid, s): variant(t, s) for tid, t in templates().items() for s in SEEDS}


# ---- the arithmetic the templates added ------------------------------------------------------------

def test_step_time_without_overlap_adds_the_two_times():
    P, BW = 2.25e15, 8e12
    assert step_time_no_overlap_s(1e12, 1e9, P, BW) == pytest.approx(1e12 / P + 1e9 / BW)
    for flops, moved in ((1e9, 1e9), (1e12, 1e9), (1e15, 1e6)):   # never more than twice the overlapped bound
        overlapped = step_time_s(flops, moved, P, BW)
        ratio = step_time_no_overlap_s(flops, moved, P, BW) / overlapped
        intensity, ridge = flops / moved, P / BW
        assert 1 <= ratio <= 2
        assert ratio == pytest.approx(1 + min(intensity / ridge, ridge / intensity))
    with pytest.raises(ValueError, match="flops"):
        step_time_no_overlap_s(0, 0, P, BW)


def test_longest_context_where_math_binds_is_where_the_knee_ends():
    c, a = model("Llama-3.1-8B").config, accelerator("B200 (HGX)")
    P, BW = a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s
    F, A, K = 2 * 7.504924672e9, activation_bytes_per_token(c), 131_072
    two_a = 2 * 2 * c.num_hidden_layers * c.num_attention_heads * c.head_dim_qk
    L_max = longest_context_where_math_binds(P, BW, F, two_a, K, A)
    R = P / BW
    assert L_max == pytest.approx((F - R * A) / (R * K - two_a))
    assert math.isfinite(decode_knee_batch(c, P, BW, math.floor(L_max)))
    assert decode_knee_batch(c, P, BW, math.ceil(L_max)) == math.inf
    assert longest_context_where_math_binds(P, BW, F, R * K, K, A) == math.inf   # the cache keeps pace
    assert longest_context_where_math_binds(P, BW, F, two_a, K, F / R) == 0.0    # activations alone bind


def test_longest_gap_is_what_the_target_leaves_per_kernel():
    assert longest_gap_s(1.88e-3, 1396, 9.48e-3) == pytest.approx((9.48e-3 - 1.88e-3) / 1396)
    assert longest_gap_s(1.88e-3, 1396, 1.88e-3 / 0.9) == pytest.approx(1.88e-3 / 9 / 1396)
    assert longest_gap_s(2e-3, 100, 1e-3) == 0.0


def test_new_tokens_where_a_cached_prefix_pays_for_its_bytes():
    c, a = model("Llama-3.1-8B").config, accelerator("B200 (HGX)")
    P, BW = a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s
    K, coeff = 2 * 2 * c.num_hidden_layers * c.num_key_value_heads * c.head_dim_qk, prefill_attention_flops(c, 1) / 2
    C = new_tokens_where_prefix_pays(P / BW, K, coeff)
    assert C == pytest.approx(P / BW * K / (2 * coeff))
    # past that many new tokens, each cached token's attention (2aC) pays for reading it (R K): the pass's
    # time grows no faster than its math as the prefix grows
    for new in (math.ceil(C), 4 * math.ceil(C)):
        x, y = (prefill_chunk_point(c, P, BW, new, prefix) for prefix in (8192, 16384))
        assert (y.flops - x.flops) / P >= (y.bytes - x.bytes) / BW
    x, y = (prefill_chunk_point(c, P, BW, math.floor(C / 2), prefix) for prefix in (8192, 16384))
    assert (y.flops - x.flops) / P < (y.bytes - x.bytes) / BW


def test_batch_at_a_users_rate_and_its_floor():
    BW, W, s = 8e12, 15.01e9, 1.085e9
    assert batch_at_user_rate(BW, W, s, 50) == pytest.approx((BW / 50 - W) / s)
    for r in (5, 20, 50, 400, 600):
        assert largest_batch_at_user_rate(BW, W, s, r) == max(0, math.floor(batch_at_user_rate(BW, W, s, r)))
    assert batch_at_user_rate(BW, W, s, 600) < 0   # the weights alone take longer than 1/600 s
    B = batch_at_user_rate(BW, W, s, 50)
    assert BW / (W + B * s) == pytest.approx(50)   # each user gets exactly the rate there


def test_the_usable_share_that_holds_weights_and_caches():
    C, W, caches = 85.9e9, 65.5e9, 1.07e9
    u = usable_fraction_needed(C, W, caches)
    assert u == pytest.approx((W + caches) / C)
    assert max_sequences(C, W, caches, 1, u * 1.0001) == 1 and max_sequences(C, W, caches, 1, u * 0.999) == 0
    assert usable_fraction_needed(C, 2 * C) > 1


def test_the_tie_between_a_tensor_parallel_group_and_replicas():
    a, c, L = accelerator("H100 SXM"), model("Llama-3.1-8B").config, 4096

    def split(B):
        return tensor_parallel_on(a, c, 8, B, L, "FP8", "FP8", "FP8")

    def copies(B):
        return data_parallel_on(a, c, 8, B, L, "FP8", "FP8", "FP8")

    W, BW = weight_bytes_read_per_step(c, "FP8"), a.bandwidth_bytes_per_s
    s = (copies(64).memory_s * BW - W) / 8           # a replica's bytes per sequence
    s_T = (split(64).memory_s * BW - W / 8) / 64      # a group GPU's bytes per sequence
    beta = split(2).communication_s - split(1).communication_s
    alpha = split(1).communication_s - beta           # the fixed cost of all the collectives together
    B_x = tensor_parallel_tie_batch(W, BW, 8, s, s_T, 1, alpha, beta)
    assert B_x == pytest.approx(((1 - 1 / 8) * W / BW - alpha) / ((s_T - s / 8) / BW + beta))
    assert split(B_x).aggregate == pytest.approx(copies(B_x).aggregate, rel=1e-9)
    assert split(0.9 * B_x).aggregate > copies(0.9 * B_x).aggregate
    assert split(1.1 * B_x).aggregate < copies(1.1 * B_x).aggregate
    assert tensor_parallel_tie_batch(W, BW, 8, s, s_T, 1, W / BW, beta) == 0.0        # the talk eats the saving
    assert tensor_parallel_tie_batch(W, BW, 8, 8 * s_T, s_T, 1, alpha, 0.0) == math.inf   # a sequence costs the group nothing more


def test_the_estimated_speedup_of_speculative_decoding():
    assert estimated_speedup(0.75, 3, 0.03) == pytest.approx((1 + 0.75 + 0.75 ** 2 + 0.75 ** 3) / 1.09)
    assert estimated_speedup(0.7, 0, 0.1) == 1.0
    assert estimated_speedup(1.0, 4, 0.0) == 5.0
    assert estimated_speedup(0.7, 4, 0.022) == pytest.approx(expected_tokens_per_step(0.7, 4) / (1 + 4 * 0.022))


# ---- the templates and the book ---------------------------------------------------------------------

def test_every_template_varies_a_compute_derive_or_decide_exercise_of_its_chapter():
    for tid, t in templates().items():
        v = variant(t, 1)
        assert v.number.startswith(f"{int(t.chapter[:2])}."), f"{tid}: no exercise {t.label} in {t.chapter}"
        assert v.title.split(" · ")[0].split(":")[0] in KINDS, (tid, v.title)


def test_every_compute_derive_and_decide_exercise_has_a_template():
    missing = [f"{e.chapter} {e.label}" for e in without_template()]
    assert not missing, (f"exercises without a homework template: {missing}; add one to "
                         "inferlimits/book/homework/ch<NN>_<chapter>.py")
    assert len(templates()) >= 40 and len(templates()) == len(book_exercises())


def test_project_sized_exercises_are_left_to_the_book():
    projects = [e for p in numbered_chapters() for e in exercises(p) if e.kind in KINDS and e.project]
    assert projects, "the chapters set project-sized exercises: the test should see some"
    assert not {e.label for e in projects} & set(templates())
    assert not {e.label for e in projects} & {e.label for e in book_exercises()}


def _chapter_tolerance(chapter: str) -> float:
    """The tolerance most of a chapter's exercises state: a template whose exercise states none uses it."""
    stated = [t for p in numbered_chapters() if p.stem == chapter for e in exercises(p)
              if (t := stated_tolerance(e.text)) is not None and t[0] > 0]
    return max({t[0] for t in stated}, key=[t[0] for t in stated].count)


def test_every_template_grades_as_its_exercise_states():
    """A template's tolerance is the one its exercise states in its last line (and its counts are graded
    exactly where the exercise says so); where the exercise states none, its chapter's."""
    for tid, t in templates().items():
        e = exercise_of(t)
        stated = stated_tolerance(e.text)
        if stated is None:
            assert t.tolerance == _chapter_tolerance(t.chapter) and not t.counts_exact, tid
        else:
            assert (t.tolerance, t.counts_exact) == stated, (tid, (t.tolerance, t.counts_exact), stated)
            line = variant(t, 1).tolerance_line
            assert line.startswith("Tolerance: exact") == (stated[0] == 0), (tid, line)
            assert ("exact on counts" in line) <= stated[1], (tid, line)


def test_the_tolerance_line_takes_the_chapters_forms():
    n, c, x = Answer("a", 1.0, "1.00", 0.02), Answer("n", 3.0, "3", 0.0), Answer("x", "yes", "yes")
    assert tolerance_line([n]) == "Tolerance: 2%."
    assert tolerance_line([n, n]) == "Tolerance: 2% on each number."
    assert tolerance_line([n, c, x]) == "Tolerance: 2% on each number; exact on counts."
    assert tolerance_line([c, x]) == tolerance_line([x]) == "Tolerance: exact."
    assert stated_tolerance("How many?\n\nTolerance: 2% on each number; exact on counts.") == (0.02, True)
    assert stated_tolerance("How fast?\nTolerance: 3%.") == (0.03, False)
    assert stated_tolerance("How many?\nTolerance: exact.") == (0.0, True)
    assert stated_tolerance("Tolerance: 2%.\nHow fast?") is None
    with pytest.raises(ValueError, match="answers"):
        tolerance_line([n, Answer("b", 1.0, "1.00", 0.03)])


# ---- the keys, for many seeds ----------------------------------------------------------------------------

def test_every_draw_meets_its_conditions_and_every_answer_is_whole(keys):
    for (tid, s), v in keys.items():
        assert v.conditions and all(v.conditions.values()), (tid, s, v.conditions)
        assert v.conditions == templates()[tid].holds(v.params), (tid, s)   # checked again, from the draw
        assert v.key.answers and v.key.working and v.key.question
        for a in v.key.answers:
            if a.numeric:
                assert math.isfinite(a.value) and a.value >= 0, (tid, s, a)
                assert numerals(a.shown), (tid, s, a)
                assert a.accepts(a.value) and not a.accepts(a.value * (1 + 3 * a.tolerance) + 1e-9)
            else:
                assert a.value and a.tolerance == 0, (tid, s, a)


def test_every_question_ends_with_its_tolerance(keys):
    for (tid, s), v in keys.items():
        line = v.question[-1]
        assert TOLERANCE_LINE.match(line), (tid, s, line)
        numbers = [a for a in v.key.answers if a.numeric]
        if numbers and max(a.tolerance for a in numbers) > 0:
            assert f"{max(a.tolerance for a in numbers) * 100:g}%" in line
        assert line == tolerance_line(v.key.answers)


def test_no_question_gives_its_answers_away(keys):
    for (tid, s), v in keys.items():
        asked = numerals(" ".join(v.question))
        for a in v.key.answers:
            if a.numeric:
                assert not numerals(a.shown) & asked, (tid, s, a.name, a.shown)


def _answers(v) -> dict[str, Answer]:
    return {a.name: a for a in v.key.answers}


def _close(a: Answer, expected: float, rel: float = 1e-6) -> bool:
    return math.isclose(a.value, expected, rel_tol=rel)


def _card(v):
    return accelerator(v.params["card"])


def _cfg(name: str):
    return model(name).config


# keys computed again from the data and the chapters' formulas, without the package's functions
def _two_speeds_1(v):
    a, I = _card(v), v.params["intensity"]
    P, BW = a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s
    got = _answers(v)
    return (got["memory-bound or compute-bound"].value == ("memory-bound" if I < P / BW else "compute-bound")
            and _close(got["attainable math rate"], min(P, I * BW)) and _close(got["share of the peak"], min(P, I * BW) / P))


def _two_speeds_2(v):
    x, y, I = accelerator(v.params["higher"]), accelerator(v.params["other"]), v.params["intensity"]
    rate = lambda a: min(a.dense_bf16_flops_per_s, I * a.bandwidth_bytes_per_s)  # noqa: E731
    return _close(_answers(v)["by what factor"], rate(y) / rate(x)) and _answers(v)["the faster card"].value == y.name


def _decode_1(v):
    c, a = _cfg(v.params["model"]), _card(v)
    read = 2 * multiplied_params_per_token(c) + activation_bytes_per_token(c)
    got = _answers(v)
    return (_close(got["memory ceiling"], a.bandwidth_bytes_per_s / read, 1e-3)
            and _close(got["time per token"], read / a.bandwidth_bytes_per_s, 1e-3)
            and _close(got["math ceiling"], a.dense_bf16_flops_per_s / (2 * multiplied_params_per_token(c)), 1e-3)
            and 2 * param_count(c) <= USABLE * a.capacity_bytes)


def _batching_1(v):
    c, a = _cfg(v.params["model"]), _card(v)
    P, BW = a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s
    W = F = 2 * multiplied_params_per_token(c)   # BF16: two bytes, and two operations, per weight
    A = activation_bytes_per_token(c)
    got = _answers(v)
    return (_close(got["single-conversation memory ceiling"], BW / (W + A), 1e-3)
            and _close(got["the batch where math binds"], P * W / (BW * F - P * A), 1e-3)
            and _close(got["the aggregate rate there"], P / F, 1e-3))


def _kv_1(v):
    c, a, L = _cfg(v.params["model"]), _card(v), v.params["context"]
    K = 2 * c.num_hidden_layers * c.num_key_value_heads * c.head_dim_qk * 1   # FP8: one byte a number
    W = weight_bytes_read_per_step(c)
    stored = 2 * param_count(c)
    got = _answers(v)
    return (_close(got["cache per token"], K) and _close(got["one conversation's cache"], K * L)
            and _close(got["the batch where caches equal the weights"], W / (K * L))
            and got["conversations that fit"].value == math.floor((USABLE * a.capacity_bytes - stored) / (K * L)))


def _kv_5(v):
    c = _cfg(v.params["model"])
    K = 2 * c.num_hidden_layers * c.num_key_value_heads * c.head_dim_qk * 2
    return (_close(_answers(v)["cache bytes per token, BF16"], K) and _close(_answers(v)["cache bytes per token, FP8"], K / 2)
            and _close(_answers(v)["L_= for one conversation"], weight_bytes_read_per_step(c) / K))


def _kv_7(v):
    c, a, L = _cfg(v.params["model"]), _card(v), v.params["context"]
    K = 2 * c.num_hidden_layers * c.num_key_value_heads * c.head_dim_qk * 2
    got = _answers(v)
    return (_close(got["one conversation's cache"], K * L)
            and got["conversations that fit"].value == math.floor((USABLE * a.capacity_bytes - 2 * param_count(c)) / (K * L)))


def _kv_8(v):
    c, a, L, r = _cfg(v.params["model"]), _card(v), v.params["context"], v.params["promise"]
    K = 2 * c.num_hidden_layers * c.num_key_value_heads * c.head_dim_qk * 2
    W, A, BW = weight_bytes_read_per_step(c), activation_bytes_per_token(c), _card(v).bandwidth_bytes_per_s
    B_s = (BW / r - W) / (K * L + A)
    B_m = math.floor((USABLE * a.capacity_bytes - 2 * param_count(c)) / (K * L))
    B = math.floor(B_s)
    got = _answers(v)
    return (_close(got["B_s"], B_s, 1e-6) and _close(got["the aggregate at the whole batch"], B * BW / (W + B * (K * L + A)), 1e-6)
            and _close(got["the promise at which the limits meet"], BW / (W + B_m * (K * L + A)), 1e-6)
            and got["the limit that binds"].value == ("the promise" if B_s < B_m else "the memory"))


def _overhead_1(v):
    got = _answers(v)
    budget = 1 / (got["memory ceiling"].value * v.params["launch_us"] * 1e-6)
    c = _cfg(v.params["model"])
    return (_close(got["launches a step can afford"], budget)
            and got["whole kernels per layer"].value
            == math.floor((budget - launch_assumptions().outside_layers) / c.num_hidden_layers))


def _moe_1(v):
    c, B = _cfg(v.params["model"]), v.params["batch"]
    E, k = c.routed_experts, c.num_experts_per_tok
    return _close(_answers(v)["experts touched per layer"], E * (1 - (1 - k / E) ** B))


def _moe_6(v):
    c = _cfg(v.params["model"])
    per = 2 * c.num_hidden_layers * c.num_attention_heads * (2 * c.kv_lora_rank + c.qk_rope_head_dim)
    cache = c.num_hidden_layers * (c.kv_lora_rank + c.qk_rope_head_dim) * (1 if v.params["cache"] == "FP8" else 2)
    got = _answers(v)
    return (_close(got["FLOPs per cached token"], per)
            and _close(got["context where attention equals the weight products"], 2 * multiplied_params_per_token(c) / per)
            and _close(got["intensity per byte of cache"], per / cache))


def _low_precision_1(v):
    (e1, g1, s1), (e2, g2, s2) = v.params["wide"], v.params["narrow"]
    got = list(_answers(v).values())
    return _close(got[0], e1 + s1 / g1) and _close(got[1], e2 + s2 / g2)


def _worked_1(v):
    c, a, L = _cfg(v.params["model"]), _card(v), v.params["context"]
    K = 2 * c.num_hidden_layers * c.num_key_value_heads * c.head_dim_qk * 1
    got = _answers(v)
    return (_close(got["one sequence's cache"], K * L) and got["whole sequences that fit"].tolerance == 0
            and got["whole sequences that fit"].value == math.floor((USABLE * a.capacity_bytes - 2 * param_count(c)) / (K * L)))


def _worked_5(v):
    c, a, L = _cfg(v.params["model"]), _card(v), v.params["context"]
    C, W = a.capacity_bytes, 2 * param_count(c)
    eps = (GIB - GB) / GIB
    one = 2 * c.num_hidden_layers * c.num_key_value_heads * c.head_dim_qk * 2 * L
    mult = USABLE * C / (USABLE * C - W)
    u_star = (W + one) / ((1 - eps) * C)
    got = _answers(v)
    return (_close(got["the multiplier uC/(uC - W)"], mult, 1e-9) and _close(got["the share the room is understated by"], eps * mult, 1e-9)
            and got["caches that fit"].value == math.floor((USABLE * C - W) / one)
            and got["caches that fit, misread"].value == math.floor((USABLE * (1 - eps) * C - W) / one)
            and _close(got["the usable share below which the misread room holds none"], u_star, 1e-9)
            and got["caches that really fit at that share"].value == math.floor((u_star * C - W) / one))


def _prefill_8(v):
    c, a = _cfg(v.params["model"]), _card(v)
    K = 2 * c.num_hidden_layers * c.num_key_value_heads * c.head_dim_qk * 2
    coeff = c.num_hidden_layers * c.num_attention_heads * (c.head_dim_qk + c.head_dim_v)
    return _close(_answers(v)["R K / (2a)"], a.dense_bf16_flops_per_s / a.bandwidth_bytes_per_s * K / (2 * coeff))


def _speculative_4(v):
    k, acc, c = v.params["draft_tokens"], v.params["acceptance"], v.params["cost"]
    E = sum(acc ** i for i in range(k + 1))
    return _close(_answers(v)["tokens per round"], E) and _close(_answers(v)["the speed-up"], E / (1 + k * c))


def _speculative_5(v):
    """The best length by the exercise's condition: longer pays while a^(k+1) (1 + k c) > c E_k."""
    acc = v.params["acceptance"]
    c = float(re.search(r"c = ([\d.]+):", " ".join(v.question)).group(1))
    E = lambda k: sum(acc ** i for i in range(k + 1))   # noqa: E731
    k = 1
    while acc ** (k + 1) * (1 + k * c) > c * E(k):
        k += 1
    got = _answers(v)
    return got["the best draft length at one sequence"].value == k and _close(got["its speed-up"], E(k) / (1 + k * c))


def _prefill_4(v):
    out = True
    for name in v.params["models"]:
        c = _cfg(name)
        per_layer = (multiplied_params_per_token(c) - c.vocab_size * c.hidden_size) / c.num_hidden_layers
        out &= _close(_answers(v)[f"S_eq, {name}"], per_layer / c.hidden_size - 1, 1e-3)
    return out


def _index_card_5(v):
    got = _answers(v)
    r = got["r"].value
    return _close(got["the price of doubling"], (2 + 2 * r) / (1 + 2 * r), 1e-9) and _close(got["the r at the threshold"], 4.5)


def _measure_2(v):
    from inferlimits.machine.tinyllm import TINY_LLAMA as c
    B, L = v.params["batch"], v.params["context"]
    W = 4 * param_count(c)   # float32: four bytes a weight
    K = 2 * c.num_hidden_layers * c.num_key_value_heads * c.head_dim_qk * 4
    A = activation_bytes_per_token(c, "decode", "FP32")
    step = W + B * (K * L + A)
    got = _answers(v)
    return (_close(got["gain from BF16 weights"], step / (step - W / 2), 1e-6)
            and _close(got["gain from a BF16 cache"], step / (step - B * K * L / 2), 1e-6))


AGAIN = {"two-speeds-ex1": _two_speeds_1, "two-speeds-ex2": _two_speeds_2, "decode-ex1": _decode_1,
         "batching-ex1": _batching_1, "kv-cache-ex1": _kv_1, "kv-cache-ex5": _kv_5, "kv-cache-ex7": _kv_7,
         "kv-cache-ex8": _kv_8, "overhead-ex1": _overhead_1, "moe-ex1": _moe_1, "moe-ex6": _moe_6,
         "low-precision-ex1": _low_precision_1, "worked-example-ex1": _worked_1, "worked-example-ex5": _worked_5,
         "prefill-ex4": _prefill_4, "prefill-ex8": _prefill_8, "index-card-ex5": _index_card_5, "measure-ex2": _measure_2,
         "speculative-ex4": _speculative_4, "speculative-ex5": _speculative_5}


def test_keys_computed_again_where_the_arithmetic_is_short(keys):
    assert set(AGAIN) <= set(templates())
    for (tid, s), v in keys.items():
        if tid in AGAIN:
            assert AGAIN[tid](v), (tid, s, v.params, [(a.name, a.shown) for a in v.key.answers])


# ---- seeds -----------------------------------------------------------------------------------------------------

def test_a_seed_gives_the_same_numbers_again_and_two_seeds_differ(keys):
    for tid, t in templates().items():
        assert variant(t, 7) == keys[(tid, 7)]
    one, two = variants(1), variants(2)
    chapters = {v.chapter for v in one}
    for stem in chapters:   # every chapter's sheet changes with the seed
        assert [v.question for v in one if v.chapter == stem] != [v.question for v in two if v.chapter == stem], stem
    differ = sum(a.question != b.question for a, b in zip(one, two))
    assert differ >= 0.8 * len(one)


def test_the_draws_do_not_depend_on_the_interpreter_run():
    """numpy's generator, seeded with the seed and a checksum of the template's id: the same in a
    process with another hash seed."""
    ids = ["decode-ex1", "moe-ex3", "speculative-ex3"]
    here = [variant(i, 11).params for i in ids]
    code = ("import json; from inferlimits.book.homework import variant; "
            f"print(json.dumps([variant(i, 11).params for i in {ids!r}]))")
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert json.loads(out.stdout) == json.loads(json.dumps(here))
    assert rng_for(3, "decode-ex1").integers(1 << 30) == rng_for(3, "decode-ex1").integers(1 << 30)


def test_at_least_120_distinct_variants_over_ten_seeds():
    """What "distinct" counts: for each template, the different questions (the text a student
    reads, numbers and all) that seeds 1 to 10 give; the sum over the templates."""
    count = distinct_variants(range(1, 11))
    assert count.total >= 120, count.by_template
    assert min(count.by_template.values()) >= 3, count.by_template


@pytest.mark.parametrize("bad", [-1, "-3", "abc", "1.5", 2.5, "", None, True, "1e3"])
def test_a_bad_seed_is_refused_by_name(bad):
    with pytest.raises(ValueError, match="SEED"):
        seed_value(bad)


def test_the_command_refuses_a_bad_seed(capsys):
    with pytest.raises(SystemExit) as stop:
        render.main(["--seed", "-2", "--no-pdf"])
    assert stop.value.code != 0
    assert "SEED" in capsys.readouterr().err


# ---- the pages -----------------------------------------------------------------------------------------------

EXTERNAL = re.compile(r"https?://|//[a-z0-9.-]+\.[a-z]{2,}|<script|<link|@import|url\(", re.I)


def _sections(page: str) -> dict[str, str]:
    return dict(re.findall(r'<section class="exercise" id="([^"]+)">(.*?)</section>', page, re.S))


def _question_text(section: str) -> str:
    """What a problem asks, as a reader sees it: its paragraphs, less the line that names the
    exercise it varies."""
    paragraphs = re.findall(r'<p( class="[^"]*")?>(.*?)</p>', section, re.S)
    return html.unescape(" ".join(text for cls, text in paragraphs if "varies" not in cls))


def test_sheets_keys_and_index_are_written_whole(tmp_path):
    folder = render.write(5, tmp_path, pdf=False)
    assert folder == tmp_path / "seed-5"
    vs = variants(5)
    stems = sorted({v.chapter for v in vs})
    for stem in stems:
        sheet = (folder / render.STUDENT / f"{stem}.html").read_text(encoding="utf-8")
        key = (folder / render.KEY / f"{stem}.html").read_text(encoding="utf-8")
        mine = [v for v in vs if v.chapter == stem]
        sheet_sections, key_sections = _sections(sheet), _sections(key)
        assert list(sheet_sections) == list(key_sections) == [v.template for v in mine]
        for v in mine:
            text = _question_text(sheet_sections[v.template])
            for a in v.key.answers:   # no answer in the student's sheet, every answer in the key
                if a.numeric:
                    assert not numerals(a.shown) & numerals(text), (stem, v.template, a.shown)
                assert html.escape(a.shown) in key_sections[v.template], (stem, v.template, a.shown)
            assert v.tolerance_line in text
        assert "Working" not in sheet and "Answers" not in sheet
        assert "Working" in key and "Answers" in key
    index = (folder / "index.html").read_text(encoding="utf-8")
    assert all(f"{render.STUDENT}/{stem}.html" in index and f"{render.KEY}/{stem}.html" in index for stem in stems)
    for page in folder.rglob("*.html"):   # self-contained: nothing from another site
        assert not EXTERNAL.search(page.read_text(encoding="utf-8")), page


@needs_chromium
def test_a_chapter_prints_to_pdf(tmp_path):
    from pypdf import PdfReader

    stem = "01_two_speeds"
    folder = render.write(4, tmp_path, pdf=True, chapters=[stem])
    mine = [v for v in variants(4, [stem])]
    for sub in (render.STUDENT, render.KEY):
        pdf = folder / sub / f"{stem}.pdf"
        assert pdf.read_bytes()[:5] == b"%PDF-"
        text = " ".join(page.extract_text() for page in PdfReader(pdf).pages)
        assert "Tolerance:" in text
        if sub == render.STUDENT:
            assert "Working" not in text
        else:
            assert "Working" in text and all(a.shown.split()[0] in text for v in mine for a in v.key.answers if a.numeric)
