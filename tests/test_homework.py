"""``make homework SEED=N``: each session's assigned homework, its compute, derive and decide
exercises with numbers of their own for each seed (``inferlimits.book.homework``), and
``make homework ROSTER=... SALT=...``, a seed for each student of a class.

The keys are checked for many seeds: each draw meets its template's conditions, each answer is a
finite number (or a choice) with the tolerance its question states, no answer is printed in its
question, and where the arithmetic is short the answers are computed again here, from the data
and the formulas the chapters teach, without the package's functions. Every derive and decide key
shows its working: lines that put the numbers into each formula, which this file evaluates again
from the numbers they write, and which reach every answer; and every number a key's working puts in
is in the problem the student sees, the result of an earlier line, or a named constant of the
book's formulas ("Every number you need is in the problem"). Then: seeds are stable and differ, the
variants are many, a bad SEED is refused by name, each session's sheet holds exactly the homework
the plan assigns it and no exercise done in class, the pages are written whole (sheets without
answers, keys with them, nothing fetched from another site, and, where Debian's chromium is
installed, PDFs), an exercise set as the book writes it comes in the key with the book's own
solution and graded numbers, and a roster gives each student numbers of their own, stable across
runs, with one keys CSV that matches the keys (the book's solutions' numbers included), and clears
what an earlier roster run left.
"""
from __future__ import annotations

import csv
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
from inferlimits.book import ROOT, course
from inferlimits.book.course import exercises
from inferlimits.data.hardware import accelerator
from inferlimits.data.models import model, multiplied_params_per_token, param_count
from inferlimits.data.units import GB, GIB
from inferlimits.book.homework import (KINDS, Answer, Calc, book_exercises, calc, distinct_variants, exercise_number,
                                       exercise_of, numbered_chapters, numerals, rng_for, seed_value, stated_tolerance,
                                       templates, tolerance_line, variant, variants, without_template)
from inferlimits.book.homework import render, roster
from inferlimits.checks import UNITS

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


# ---- the working of a key ---------------------------------------------------------------------------------------

#: the units a key's working writes after its numbers, and what each scales the number by (a bare
#: count word, "tokens", scales by one); every other word in the numbers put in is refused
WORKING_UNITS = {**{u: x for u, x in UNITS.items() if u and u not in ("x", "B")},
                 "tokens/s": 1.0, "tokens": 1.0, "FLOP per byte": 1.0, "FLOP": 1.0, "FLOPs": 1.0, "GFLOP": 1e9,
                 "TFLOP": 1e12, "million FLOPs": 1e6, "bytes": 1.0, "byte": 1.0, "conversations": 1.0}
_UNIT_WORDS = sorted((u for u in WORKING_UNITS if u not in ("%", "×")), key=len, reverse=True)
_TOKEN = re.compile(
    r"\s*(?:(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?P<attached>%|×(?! ))?"
    r"(?: (?P<unit>" + "|".join(re.escape(u) for u in _UNIT_WORDS) + r")(?![A-Za-z]))?"
    r"|(?P<usd>USD)(?= )|(?P<fn>max|min|floor|sqrt)\(|(?P<op>[-+×/()^,]))")
_FUNCTIONS = {"max": max, "min": min, "floor": math.floor, "sqrt": math.sqrt}


def evaluate(text: str) -> float:
    """The value of what a working line writes: numbers with their units, the operators + - × / ^,
    parentheses, and max, min, floor and sqrt. A symbol left in place of a number, or any other
    word, is refused: the numbers put in must all be there."""
    out, pos, text = [], 0, text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise ValueError(f"cannot read {text[pos:]!r} in {text!r}")
        pos = m.end()
        if m.group("num"):
            unit = m.group("attached") or m.group("unit") or ""
            out.append(repr(float(m.group("num").replace(",", "")) * (WORKING_UNITS[unit] if unit else 1.0)))
        elif m.group("fn"):
            out.append(f"{m.group('fn')}(")
        elif m.group("op"):
            out.append({"×": "*", "^": "**"}.get(m.group("op"), m.group("op")))
    return float(eval(" ".join(out), {"__builtins__": {}}, _FUNCTIONS))   # only numbers, operators and _FUNCTIONS


def test_the_working_evaluator_reads_what_the_keys_write():
    assert evaluate("(864.0 GB/s / 60 - 2.472 GB) / 0.2718 GB") == pytest.approx((864e9 / 60 - 2.472e9) / 0.2718e9)
    assert evaluate("max(275.4 GFLOP / 756.0 TFLOP/s, 335.7 MB / 2,000 GB/s)") == pytest.approx(275.4e9 / 756e12)
    assert evaluate("floor((90% × 81,920 MiB - 16.06 GB) / (128.0 KiB × 16,384))") == math.floor(
        (0.9 * 81920 * 2 ** 20 - 16.06e9) / (128 * 1024 * 16384))
    assert evaluate("USD 1.500 × 1,000,000 / (3,600 × 135.7 tokens/s)") == pytest.approx(1.5e6 / (3600 * 135.7))
    assert evaluate("1.46×") == 1.46 and evaluate("0.7^3") == pytest.approx(0.343)
    for bad in ("BW / 2", "2 × N", "import os", "__import__('os')"):
        with pytest.raises(ValueError):
            evaluate(bad)


def test_a_line_of_working_keeps_its_parts():
    line = calc("B_s", "(BW/s - W)/(KL + A)", "(864.0 GB/s / 60 - 2.472 GB) / 0.2718 GB", "43.88", "(c)")
    assert isinstance(line, Calc) and isinstance(line, str)
    assert line == "(c) B_s = (BW/s - W)/(KL + A) = (864.0 GB/s / 60 - 2.472 GB) / 0.2718 GB = 43.88."
    assert (line.name, line.formula, line.put_in, line.result, line.part) == (
        "B_s", "(BW/s - W)/(KL + A)", "(864.0 GB/s / 60 - 2.472 GB) / 0.2718 GB", "43.88", "(c)")
    assert calc("KL + A", "", "8,192 × 32.00 KiB + 3.384 MB", "0.2718 GB") == "KL + A = 8,192 × 32.00 KiB + 3.384 MB = 0.2718 GB."
    with pytest.raises(ValueError, match="calc"):
        calc("x", "y", "", "1")


#: lines of working, with numbers, that every derive and decide key shows at least
MIN_WORKING = 3


def _kind(v) -> str:
    return v.title.split(" · ")[0].split(":")[0]


def _agrees(line: Calc) -> bool:
    """Whether the numbers a line puts in give its result: within 1% (each number it writes is
    rounded to four figures), and within one where it takes a floor of rounded numbers."""
    put, result = evaluate(line.put_in), evaluate(line.result)
    if "floor(" in line.put_in:
        return abs(put - result) <= 1
    return math.isclose(put, result, rel_tol=0.01, abs_tol=1e-12)


def test_every_derive_and_decide_key_shows_its_working(keys):
    """The formula, the numbers put in and each intermediate value, for every derive and decide
    key of seeds 1 to 50: at least MIN_WORKING lines that compute, each of which gives its result
    again from the numbers it writes; every numeric answer is the result of one of them (a count
    graded exactly may instead be stated in the working), every choice is stated in the working,
    and the key's table gives the range a grader accepts."""
    checked = set()
    for (tid, s), v in keys.items():
        if _kind(v) not in ("derive", "decide"):
            continue
        checked.add(tid)
        lines = [w for w in v.key.working if isinstance(w, Calc)]
        assert len(lines) >= MIN_WORKING, (tid, s, v.key.working)
        for w in lines:
            assert _agrees(w), (tid, s, str(w), evaluate(w.put_in))
        results = [evaluate(w.result) for w in lines]
        text = " ".join(v.key.working)
        for a in v.key.answers:
            if not a.numeric:
                assert str(a.value).lower() in text.lower(), (tid, s, a.name, a.value)
            elif not (a.tolerance == 0 and numerals(a.shown) <= numerals(text)):
                assert any(math.isclose(a.value, r, rel_tol=1e-3) for r in results), (tid, s, a.name, a.shown)
            if a.numeric and a.tolerance:
                lo, hi = a.bounds
                assert lo < a.value < hi and a.range_shown.startswith(f"±{a.tolerance * 100:g}%")
    derive_and_decide = {tid for tid, t in templates().items() if _kind(variant(t, 1)) in ("derive", "decide")}
    assert checked == derive_and_decide and len(checked) >= 25


def _results(v) -> dict[str, float]:
    """A key's lines of working, by what each computes, as the numbers they state."""
    return {w.name: evaluate(w.result) for w in v.key.working if isinstance(w, Calc)}


def _near(stated: float, expected: float) -> bool:
    return math.isclose(stated, expected, rel_tol=1e-3)


# intermediate values of the working computed again from the data and the chapters' formulas, without the
# package's functions, for a few templates
def _work_two_speeds_6(v):
    a, d, m1, m2 = _card(v), v.params["side"], v.params["few"], v.params["many"]
    P, BW = a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s
    F1, F2 = 2 * m1 * d * d, 2 * m2 * d * d
    M1, M2 = (2 * m1 * d + d * d) * 2, (2 * m2 * d + d * d) * 2
    got = _results(v)
    return (_near(got["F₁"], F1) and _near(got["M₁"], M1) and _near(got["F₂"], F2) and _near(got["M₂"], M2)
            and _near(got["T₁"], max((F1 + F2) / P, (M1 + M2) / BW))
            and _near(got["T₂"], max(F1 / P, M1 / BW) + max(F2 / P, M2 / BW)))


def _work_kv_5(v):
    c = _cfg(v.params["model"])
    K = 2 * c.num_hidden_layers * c.num_key_value_heads * c.head_dim_qk * 2
    got = _results(v)
    return _near(got["K in BF16"], K) and _near(got["K in FP8"], K / 2) and _near(got["L_="], weight_bytes_read_per_step(c) / K)


def _work_kv_8(v):
    c, a, L, s = _cfg(v.params["model"]), _card(v), v.params["context"], v.params["promise"]
    K = 2 * c.num_hidden_layers * c.num_key_value_heads * c.head_dim_qk * 2
    own = K * L + activation_bytes_per_token(c)
    W, BW = weight_bytes_read_per_step(c), a.bandwidth_bytes_per_s
    got = _results(v)
    return _near(got["KL + A"], own) and _near(got["B_s"], (BW / s - W) / own)


def _work_decode_4(v):
    c, o, a = _cfg(v.params["model"]), _cfg(v.params["other"]), _card(v)
    N, A = multiplied_params_per_token(c), activation_bytes_per_token(c)
    got = _results(v)
    return (_near(got[f"N b, {v.params['model']}"], 2 * N) and _near(got[f"share, {v.params['model']}"], A / (2 * N + A))
            and _near(got["2N/A"], 2 * N / A)
            and _near(got[f"the ridge of {'an' if a.name[0] in 'AEFHILMNORSX' else 'a'} {a.name}"],
                      a.dense_bf16_flops_per_s / a.bandwidth_bytes_per_s))


def _work_worked_5(v):
    c, a = _cfg(v.params["model"]), _card(v)
    C, W = a.capacity_bytes, 2 * param_count(c)
    got = _results(v)
    return (_near(got["ε"], (GIB - GB) / GIB) and _near(got["the room"], USABLE * C - W)
            and _near(got["the multiplier"], USABLE * C / (USABLE * C - W)))


WORKING_AGAIN = {"two-speeds-ex6": _work_two_speeds_6, "kv-cache-ex5": _work_kv_5, "kv-cache-ex8": _work_kv_8,
                 "decode-ex4": _work_decode_4, "worked-example-ex5": _work_worked_5}


def test_working_computed_again_for_a_few_templates(keys):
    for (tid, s), v in keys.items():
        if tid in WORKING_AGAIN:
            assert WORKING_AGAIN[tid](v), (tid, s, v.params, [str(w) for w in v.key.working])


# ---- every number the working puts in is given ------------------------------------------------------------------

#: the numbers of the book's formulas that a key's working may put in although no problem states them, each with
#: its reason; every other number put in comes from the problem text the student sees, or is the result of an
#: earlier line of the working
CONSTANTS = {
    "1": "one: a single sequence or token, the 1 of 1 - x, 1 / t, 1 + k c, and the first term of 1 + a + ... + a^k",
    "2": "two: FLOPs per multiply-add (2 per weight), a key and a value per layer, bytes per BF16 number, halving",
    "1000000": "a million: costs are quoted per million tokens",
    "3600": "seconds in an hour: prices are per GPU-hour",
    "1000000000": "bytes in a GB (10^9), as the chapters define it",
    "1073741824": "bytes in a GiB (2^30), as the chapters define it",
}

_PUT_IN = re.compile(
    r"(?<![\w.^])(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?P<attached>%|×(?! ))?"
    r"(?: (?P<unit>" + "|".join(re.escape(u) for u in _UNIT_WORDS) + r")(?![A-Za-z]))?")
#: a package function a problem names: a line of working that names it reads its numbers off it
_PACKAGE_FUNCTION = re.compile(r"inferlimits\.arithmetic\.\w+\.(\w+)")


def _numbers_in(text: str) -> list[tuple[str, float, float]]:
    """The numbers ``text`` writes, each as (its digits, its value as written, the scale of its unit); a
    number written as an exponent (the k of a^k) is left out: it indexes a term of the formula."""
    out = []
    for m in _PUT_IN.finditer(text):
        digits = m.group("num").replace(",", "")
        unit = m.group("attached") or m.group("unit") or ""
        out.append((digits, float(digits), WORKING_UNITS.get(unit, 1.0)))
    return out


def _decimals(digits: str) -> int:
    return len(digits.partition(".")[2])


def _given(number: tuple[str, float, float], known: list[tuple[str, float, float]]) -> bool:
    """Whether ``number``, as a line puts it in, is one of ``known``: the same number in the same scale,
    written to more figures (0.5195 where the problem writes 0.520), or the same quantity in another unit
    (8,000 GB/s where it writes 8 TB/s)."""
    digits, value, scale = number
    for k_digits, k_value, k_scale in known:
        if scale == k_scale and abs(value - k_value) <= 0.5001 * 10 ** -_decimals(k_digits):
            return True
        if scale != 1 and k_scale != 1 and math.isclose(value * scale, k_value * k_scale, rel_tol=2e-3):
            return True
    return False


def _put_in_segments(line: str) -> list[tuple[str, str]]:
    """The (numbers put in, result) pairs of a line of working that is not a ``calc``: each part of an
    'a = b = c' chain (the first after its label, "usable: ...") that is arithmetic on numbers alone, and
    the part after it."""
    parts = line.rstrip(".").split(" = ")
    parts[0] = parts[0].rpartition(": ")[2]
    out = []
    for put, result in zip(parts[:-1], parts[1:]):
        if not re.search(r"[-+×/^(]", put):
            continue
        try:
            evaluate(put)
        except (ValueError, SyntaxError):
            continue
        out.append((put, result))
    return out


def unstated_numbers(v) -> list[tuple[str, str]]:
    """The numbers a key's working puts in that the student's problem does not give: for each ``calc``
    line its numbers put in, for any other line the numbers of each 'a = numbers = result' part, each
    checked against the problem text (its tolerance line included), the results of the lines before it
    (a calc's result, or the result of such a part), the numbers the line's own name states (the case
    it works, "at k = 10"), the numbers of a line that reads them off a package function the problem
    names, and CONSTANTS."""
    known = _numbers_in(" ".join(v.question))
    functions = set(_PACKAGE_FUNCTION.findall(" ".join(v.question)))
    missing = []
    for w in v.key.working:
        if isinstance(w, Calc):
            pairs, own = [(w.put_in, w.result)], _numbers_in(w.name)
        else:
            pairs, own = _put_in_segments(w), []
        for put, result in pairs:
            for number in _numbers_in(put):
                if number[0] not in CONSTANTS and not _given(number, known + own):
                    missing.append((number[0], str(w)))
            known += _numbers_in(result)[:1]
        if not isinstance(w, Calc) and any(re.search(rf"\b{f}\b", w) for f in functions):
            known += _numbers_in(w)
    return missing


def test_the_unstated_number_check_finds_what_a_problem_leaves_out():
    from inferlimits.book.homework import Key, Variant

    def v(question, *working):
        return Variant("t", "00_x", "compute · basic", "", 1, {}, {}, Key((question,), working, ()))

    given = v("A step reads 25.84 GB at 8 TB/s; b = 0.520.",
              calc("t", "W / BW", "25.84 GB / 8,000 GB/s", "3.230 ms"), calc("x", "", "2 × 0.5195", "1.039"),
              calc("y", "", "3.230 ms × 1,000,000 / 3,600", "0.8972 s"), "E = 1 + a^4 = 1 + 0.5^4 = 1.063.")
    assert unstated_numbers(given) == [("0.5", "E = 1 + a^4 = 1 + 0.5^4 = 1.063.")]
    left_out = v("With as many as fit: a step of 8 reads 25.84 GB.",
                 calc("W at 39", "W_1 + n (D - k) w_e", "6.076 GB + 48 × (127.9 - 8) × 9.437 MB", "55.76 GB"),
                 calc("rate at 39", "", "39 × 3,350 GB/s / 55.76 GB", "2,343 tokens/s"),
                 "usable: 90% × 81,559 MiB = 76.97 GB.")
    assert {n for n, _ in unstated_numbers(left_out)} == {"6.076", "48", "127.9", "9.437", "3350", "90", "81559"}


def test_every_number_the_working_puts_in_is_in_the_problem(keys):
    """The sheet promises "Every number you need is in the problem": for every template and seeds 1 to
    50, each number a key's working puts into a formula is in the problem the student sees, the result
    of an earlier line, or one of CONSTANTS."""
    bad = {}
    for (tid, s), v in keys.items():
        for number, line in unstated_numbers(v):
            bad.setdefault(tid, (s, number, line))
    assert not bad, bad


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


# ---- the sessions' sheets -----------------------------------------------------------------------------------------

def test_each_session_sheet_holds_the_homework_the_plan_assigns():
    """A session's sheet varies each assigned exercise (``course.homework_exercises``) that has a
    template, lists the others to be set from the book, in the plan's order, and holds no exercise
    that any session does in class."""
    in_class = {e.label for s in course.SESSIONS for e in course.in_class_exercises(s)}
    ts = templates()
    sheets = render.session_sheets(2)
    assert [sh.number for sh in sheets] == list(range(1, len(course.SESSIONS) + 1))
    for sh, session in zip(sheets, course.SESSIONS):
        assigned = course.homework_exercises(session)
        assert [v.template for v in sh.variants] == [e.label for e in assigned if e.label in ts], sh.number
        assert [e.label for e in sh.from_book] == [e.label for e in assigned if e.label not in ts], sh.number
        assert not {v.template for v in sh.variants} & in_class, sh.number
        assert all(v.seed == 2 for v in sh.variants)
        if hasattr(course, "homework_minutes"):   # the plan's estimate of the sheet's time, as the plan sizes it
            assert sh.total_minutes == course.homework_minutes(session), sh.number
    assert sum(len(sh.variants) for sh in sheets) >= len(course.SESSIONS), "the sheets vary some homework"
    with pytest.raises(ValueError, match="number"):
        render.session_sheet(len(course.SESSIONS) + 1, 2)


EXTERNAL = re.compile(r"https?://|//[a-z0-9.-]+\.[a-z]{2,}|<script|<link|@import|url\(", re.I)


def _sections(page: str) -> dict[str, str]:
    return dict(re.findall(r'<section class="exercise" id="([^"]+)">(.*?)</section>', page, re.S))


def _question_text(section: str) -> str:
    """What a problem asks, as a reader sees it: its paragraphs, less the line that names the
    exercise it varies."""
    paragraphs = re.findall(r'<p( class="[^"]*")?>(.*?)</p>', section, re.S)
    return html.unescape(" ".join(text for cls, text in paragraphs if "varies" not in cls))


def _check_pair(sheet: str, key: str, sh) -> None:
    """A session's student sheet and key: the same problems, no answer on the sheet, every answer
    and its working in the key, the assigned exercises without a variant named on both."""
    sheet_sections, key_sections = _sections(sheet), _sections(key)
    assert list(sheet_sections) == list(key_sections) == [v.template for v in sh.variants]
    for v in sh.variants:
        text = _question_text(sheet_sections[v.template])
        for a in v.key.answers:   # no answer in the student's sheet, every answer in the key
            if a.numeric:
                assert not numerals(a.shown) & numerals(text), (sh.number, v.template, a.shown)
            assert html.escape(a.shown) in key_sections[v.template], (sh.number, v.template, a.shown)
            assert html.escape(a.range_shown) in key_sections[v.template]
        for w in v.key.working:
            assert html.escape(w) in key_sections[v.template]
        assert v.tolerance_line in text
    for e in sh.from_book:
        for page in (sheet, key):
            assert f"Exercise {exercise_number(e)} ({html.escape(e.title)})" in page, (sh.number, e.label)
        _check_book_key(e, sheet, key)
    assert ("from-the-book" in sheet) == bool(sh.from_book)
    assert "Working" not in sheet and "Answers" not in sheet
    assert not sh.variants or ("Working" in key and "Answers" in key)


def _book_item(page: str, e) -> str:
    m = re.search(rf'<li id="book-{re.escape(e.label)}">(.*?)</li>\s*(?=<li id="book-|</ul></section>)', page, re.S)
    assert m, e.label
    return m.group(1)


def _check_book_key(e, sheet: str, key: str) -> None:
    """An exercise set as the book writes it: the key shows its solution, in plain text and math, and
    each number the solution grades with its range; the student's sheet shows neither."""
    solution = render.book_solution(e)
    mine, theirs = _book_item(key, e), _book_item(sheet, e)
    assert "The book's solution" in mine and "The book's solution" not in theirs, e.label
    shown = html.unescape(re.sub(r"<[^>]+>", " ", mine))
    assert "$" not in shown and "\\" not in shown and "{" not in shown, e.label
    if solution:   # the solution's own words, its first sentence at least (roles and math aside)
        first = re.split(r"(?<=[.:;])\s", re.sub(r"\$[^$]*\$|\{[\w:-]+\}`[^`]*`|`[^`]*`|\*", "", solution))[0]
        words = [w for w in re.findall(r"[A-Za-z]{4,}", first)][:6]
        assert all(w in shown for w in words), (e.label, words)
    for a in render.book_answers(e):
        assert html.escape(a.shown) in mine and html.escape(a.range_shown) in mine, (e.label, a.stated)
        assert html.escape(a.range_shown) not in theirs


def test_a_book_answer_reads_as_the_solution_states_it():
    a = render.BookAnswer("the knee", "to about 190 conversations", 0.02)
    assert (a.number, a.unit, a.shown) == (190.0, "", "about 190")
    assert a.bounds == pytest.approx((186.2, 193.8)) and a.range_shown == "±2%: 186.2 to 193.8"
    b = render.BookAnswer("share", "TB/s: 18% of", 0.03)
    assert (b.number, b.unit, b.shown, b.range_shown) == (18.0, "%", "18%", "±3%: 17.46 to 18.54%")
    c = render.BookAnswer("bandwidth", "average 0.60 TB/s", 0.0)
    assert (c.shown, c.range_shown, c.bounds) == ("0.60 TB/s", "exact", (0.6, 0.6))
    assert render.BookAnswer("weights", "with 268,435,456 weights", 0.0).shown == "268,435,456"


def test_a_solutions_math_and_roles_read_as_plain_text():
    assert render.plain_tex(r"B^\ast(L) \;=\; \frac{R \cdot W}{F + 2aL - R (A + K L)}") == \
        "B^*(L) = (R · W)/(F + 2aL - R (A + K L))"
    assert render.plain_tex(r"L_\text{max} \le 2\,t_\text{comm}\,\text{BW}") == "L_max ≤ 2\u2009t_comm\u2009BW"
    assert render.plain_tex(r"\dfrac{\eta}{2} \approx 10{,}000\%") == "η/2 ≈ 10,000%"
    page = render.solution_html("(a) See {doc}`04_batching` and {numref}`decode-ex1`: $a^{k+1} \\ge 1$.\n\n"
                                "$$\nx = \\frac{1}{2}\n$$\n\n| a | b |\n|:--|--:|\n| 1 | **2** |\n\n- one\n- two `code`")
    assert "chapter 4 (" in page and "Exercise 2.1" in page and '<span class="math">a^(k+1) ≥ 1</span>' in page
    assert '<p class="math">x = 1/2</p>' in page and "<td><strong>2</strong></td>" in page
    assert "<ul><li>one</li><li>two <code>code</code></li></ul>" in page and "$" not in page and "\\" not in page


def test_every_solution_of_the_book_renders_as_plain_text():
    """Any exercise may be set from the book: every solution of every chapter renders with no LaTeX,
    MyST role or dollar sign left, and every number it grades reads as the solution states it."""
    from inferlimits.checks import parse_stated

    for path in sorted((ROOT / "chapters").glob("*.ipynb")):
        for e in exercises(path):
            text = render.book_solution(e)
            if text:
                page = html.unescape(re.sub(r"<[^>]+>", " ", render.solution_html(text)))
                assert not re.search(r"[$\\{}]|`", page), (e.label, re.findall(r".{20}[$\\{}`].{20}", page)[:3])
            for a in render.book_answers(e):
                assert parse_stated(a.shown).value == parse_stated(a.stated).value and a.part, (e.label, a)
                assert 0 <= a.tolerance < 0.5


def test_session_sheets_keys_and_index_are_written_whole(tmp_path):
    folder = render.write(5, tmp_path, pdf=False)
    assert folder == tmp_path / "seed-5"
    sheets = render.session_sheets(5)
    for sh in sheets:
        sheet = (folder / render.STUDENT / f"{sh.name}.html").read_text(encoding="utf-8")
        key = (folder / render.KEY / f"{sh.name}.html").read_text(encoding="utf-8")
        assert f"Session {sh.number} · {html.escape(sh.topic)}" in sheet and "seed 5" in sheet
        _check_pair(sheet, key, sh)
    assert sorted(p.name for p in (folder / render.STUDENT).iterdir()) == sorted(f"{sh.name}.html" for sh in sheets)
    index = (folder / "index.html").read_text(encoding="utf-8")
    assert all(f"{render.STUDENT}/{sh.name}.html" in index and f"{render.KEY}/{sh.name}.html" in index for sh in sheets)
    assert not (folder / render.PRACTICE).exists()
    for page in folder.rglob("*.html"):   # self-contained: nothing from another site
        assert not EXTERNAL.search(page.read_text(encoding="utf-8")), page


def test_practice_sheets_vary_every_template_of_a_chapter(tmp_path):
    folder = render.write(6, tmp_path, pdf=False, sessions=[2], practice=True)
    assert [p.name for p in (folder / render.STUDENT).iterdir()] == ["session-02.html"]
    for stem in sorted({t.chapter for t in templates().values()}):
        mine = variants(6, [stem])
        sheet = (folder / render.PRACTICE / render.STUDENT / f"{stem}.html").read_text(encoding="utf-8")
        key = (folder / render.PRACTICE / render.KEY / f"{stem}.html").read_text(encoding="utf-8")
        assert list(_sections(sheet)) == list(_sections(key)) == [v.template for v in mine]
        assert "Working" not in sheet and "Working" in key
    assert f"{render.PRACTICE}/{render.STUDENT}/02_decode.html" in (folder / "index.html").read_text(encoding="utf-8")


@needs_chromium
def test_a_session_prints_to_pdf(tmp_path):
    from pypdf import PdfReader

    number = next(sh.number for sh in render.session_sheets(4) if sh.variants)
    folder = render.write(4, tmp_path, pdf=True, sessions=[number])
    sh = render.session_sheet(number, 4)
    for sub in (render.STUDENT, render.KEY):
        pdf = folder / sub / f"{sh.name}.pdf"
        assert pdf.read_bytes()[:5] == b"%PDF-"
        text = " ".join(page.extract_text() for page in PdfReader(pdf).pages)
        assert "Tolerance:" in text and f"Session {number}" in text
        if sub == render.STUDENT:
            assert "Working" not in text
        else:
            assert "Working" in text and all(a.shown.split()[0] in text for v in sh.variants for a in v.key.answers
                                             if a.numeric)


# ---- a class roster --------------------------------------------------------------------------------------------

SALT = "spring-term-salt"


def _roster(tmp_path, rows="S001,Ana Lopez\nS002,Bo Chen\ns-003,\n", header="student_id,name"):
    path = tmp_path / "roster.csv"
    path.write_text(f"{header}\n{rows}", encoding="utf-8")
    return path


def test_a_students_seed_is_a_salted_hash_of_their_id():
    import hashlib

    seed = roster.roster_seed("S001", SALT)
    assert seed == int.from_bytes(hashlib.sha256(f"{SALT}\nS001".encode()).digest()[:6], "big")
    assert seed == roster.roster_seed("S001", SALT) and seed_value(seed) == seed
    assert roster.roster_seed("S002", SALT) != seed and roster.roster_seed("S001", SALT + "!") != seed
    for bad in ("", "  "):
        with pytest.raises(ValueError, match="SALT"):
            roster.roster_seed("S001", bad)


def test_a_roster_is_read_and_refused_by_name(tmp_path):
    students = roster.read_roster(_roster(tmp_path))
    assert [(s.student_id, s.name) for s in students] == [("S001", "Ana Lopez"), ("S002", "Bo Chen"), ("s-003", "")]
    assert [s.student_id for s in roster.read_roster(_roster(tmp_path, "S9\n\nS8\n", "student_id"))] == ["S9", "S8"]
    bom = tmp_path / "bom.csv"   # a spreadsheet's byte-order mark, and a column the sheets ignore
    bom.write_bytes("\ufeffname,student_id,group\nAna,A1,x\n".encode("utf-8"))
    assert roster.read_roster(bom) == [roster.Student("A1", "Ana")]
    for rows, header, why in (("S1\n", "id", "student_id"), ("S1\nS1\n", "student_id", "twice"),
                              ("../x\n", "student_id", "letters"), ("", "student_id", "no student")):
        with pytest.raises(ValueError, match="ROSTER") as e:
            roster.read_roster(_roster(tmp_path, rows, header))
        assert why in str(e.value)
    with pytest.raises(ValueError, match="ROSTER"):
        roster.read_roster(tmp_path / "none.csv")


def _keys_csv(keys_dir) -> list[dict]:
    with (keys_dir / roster.KEYS_CSV).open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def test_a_roster_gives_each_student_numbers_of_their_own(tmp_path):
    """Three students: each gets sheets under roster/<student_id>/ with numbers of their own and no
    seed printed, the same on a second run; the keys CSV holds every answer of every sheet, in the
    unit its key shows, with the range a grader accepts."""
    students = roster.read_roster(_roster(tmp_path))
    sheets_dir, keys_dir = roster.write_roster(students, SALT, tmp_path / "out", pdf=False)
    assert (sheets_dir, keys_dir) == (tmp_path / "out" / roster.SHEETS, tmp_path / "out" / roster.KEYS)
    seeds = roster.seeds(students, SALT)
    questions = {}
    for s in students:
        folder = sheets_dir / s.student_id
        got = sorted(p.name for p in folder.iterdir())
        assert got == [f"{sh.name}.html" for sh in render.session_sheets(seeds[s.student_id])]
        for sh in render.session_sheets(seeds[s.student_id]):
            sheet = (folder / f"{sh.name}.html").read_text(encoding="utf-8")
            key = (keys_dir / s.student_id / f"{sh.name}.html").read_text(encoding="utf-8")
            assert html.escape(s.shown) in sheet and str(sh.seed) not in sheet, "a sheet names its student, not the seed"
            assert f"seed {sh.seed}" in key
            _check_pair(sheet, key, sh)
            questions[(s.student_id, sh.number)] = [v.question for v in sh.variants]
    for n in range(1, len(course.SESSIONS) + 1):   # different numbers for each student
        asked = [questions[(s.student_id, n)] for s in students]
        if asked[0]:
            assert len({json.dumps(q) for q in asked}) == len(students), n
    assert not any(keys_dir.name in str(p) for p in sheets_dir.rglob("*")), "no key among the students' sheets"
    rows = _keys_csv(keys_dir)
    assert rows and list(rows[0]) == list(roster.COLUMNS)
    expected, book = [], []
    for s in students:
        for sh in render.session_sheets(seeds[s.student_id]):
            for v in sh.variants:
                for a in v.key.answers:
                    expected.append((s.student_id, str(sh.number), v.number, a))
            book += [(s.student_id, str(sh.number), exercise_number(e), a) for e in sh.from_book
                     for a in render.book_answers(e)]
    variant_rows = [r for r in rows if (r["student_id"], r["session"], r["exercise"], r["part"]) not in
                    {(sid, n, x, a.part) for sid, n, x, a in book}]
    assert len(variant_rows) == len(expected) and len(rows) == len(expected) + len(book)
    _check_book_rows([r for r in rows if r not in variant_rows], book)
    for row, (sid, session, exercise, a) in zip(variant_rows, expected):
        assert (row["student_id"], row["session"], row["exercise"], row["part"]) == (sid, session, exercise, a.name)
        if not a.numeric:
            assert (row["answer"], row["unit"], row["low"], row["high"]) == (a.value, "", "", "")
            continue
        scale, unit = a.unit
        assert row["unit"] == unit and unit in a.shown
        answer, low, high = (float(row[k]) * scale for k in ("answer", "low", "high"))
        assert math.isclose(answer, a.value, rel_tol=1e-5)
        assert math.isclose(low, a.bounds[0], rel_tol=1e-5) and math.isclose(high, a.bounds[1], rel_tol=1e-5)
        if a.tolerance:   # what a grader takes: inside the range, not beyond it
            assert a.accepts(low * (1 + 1e-5)) and a.accepts(high * (1 - 1e-5)) and not a.accepts(high * 1.01)
        else:
            assert row["answer"] == row["low"] == row["high"]
    index = (keys_dir / "index.html").read_text(encoding="utf-8")
    assert all(s.student_id in index and str(seeds[s.student_id]) in index for s in students)
    first = {p.relative_to(tmp_path / "out"): p.read_bytes() for p in (tmp_path / "out").rglob("*") if p.is_file()}
    roster.write_roster(students, SALT, tmp_path / "out", pdf=False)   # stable across runs
    assert {p.relative_to(tmp_path / "out"): p.read_bytes() for p in (tmp_path / "out").rglob("*") if p.is_file()} == first


def _check_book_rows(rows: list[dict], book: list) -> None:
    """The keys CSV's rows for the exercises set from the book: each number the solution grades, as it
    states it, in its unit, with the range the exercise's tolerance gives."""
    assert len(rows) == len(book)
    for row, (sid, session, exercise, a) in zip(rows, book):
        assert (row["student_id"], row["session"], row["exercise"], row["part"]) == (sid, session, exercise, a.part)
        assert float(row["answer"]) == pytest.approx(a.number) and row["unit"] == a.unit
        assert float(row["low"]) == pytest.approx(a.number * (1 - a.tolerance), rel=1e-5)
        assert float(row["high"]) == pytest.approx(a.number * (1 + a.tolerance), rel=1e-5)


def test_every_assigned_exercise_set_from_the_book_has_a_key_in_the_csv(tmp_path):
    """Every graded item has a key: each exercise a sheet sets from the book has, in the keys CSV, a row
    for every number its solution's answer() calls grade, with their tolerance."""
    from inferlimits.book import student

    sheets_dir, keys_dir = roster.write_roster([roster.Student("A1")], SALT, tmp_path, pdf=False)
    rows = _keys_csv(keys_dir)
    sheets = render.session_sheets(roster.roster_seed("A1", SALT))
    assert any(sh.from_book for sh in sheets), "the plan sets some exercises from the book"
    for sh in sheets:
        for e in sh.from_book:
            calls = [a for a in student.answers(ROOT / "chapters" / f"{e.chapter}.ipynb") if a.label == e.label]
            mine = [r for r in rows if r["session"] == str(sh.number) and r["exercise"] == exercise_number(e)]
            assert len(mine) == len(calls), (sh.number, e.label)
            for r, call in zip(mine, calls):
                assert float(r["high"]) == pytest.approx(float(r["answer"]) * (1 + call.tolerance), rel=1e-5)


def test_a_roster_run_clears_what_an_earlier_run_left(tmp_path):
    """A second run, with another roster, leaves no sheet or key of a student it does not list, and
    touches nothing under the output folder but roster/ and roster-keys/."""
    out = tmp_path / "out"
    roster.write_roster([roster.Student("OLD1"), roster.Student("OLD2")], SALT, out, pdf=False, sessions=[2])
    (out / roster.SHEETS / "stray.html").write_text("x", encoding="utf-8")
    other = out / "seed-1" / "key" / "session-02.html"   # a seed's sheets beside the roster's
    other.parent.mkdir(parents=True)
    other.write_text("keep", encoding="utf-8")
    sheets_dir, keys_dir = roster.write_roster([roster.Student("NEW1")], SALT, out, pdf=False, sessions=[2])
    assert sorted(p.name for p in sheets_dir.iterdir()) == ["NEW1"]
    assert sorted(p.name for p in keys_dir.iterdir()) == sorted(["NEW1", roster.KEYS_CSV, "index.html"])
    assert {r["student_id"] for r in _keys_csv(keys_dir)} <= {"NEW1"}
    assert other.read_text(encoding="utf-8") == "keep"
    with pytest.raises(ValueError, match="SALT"):   # a refused run clears nothing
        roster.write_roster([roster.Student("X")], "", out, pdf=False)
    assert (sheets_dir / "NEW1").is_dir()


def test_the_command_writes_a_roster_and_asks_for_a_salt(tmp_path, capsys):
    path = _roster(tmp_path, "S1\nS2\n", "student_id")
    assert render.main(["--roster", str(path), "--salt", SALT, "--no-pdf", "--out", str(tmp_path / "o")]) == 0
    assert (tmp_path / "o" / roster.KEYS / roster.KEYS_CSV).exists() and (tmp_path / "o" / roster.SHEETS / "S2").is_dir()
    with pytest.raises(SystemExit) as stop:
        render.main(["--roster", str(path), "--no-pdf", "--out", str(tmp_path / "p")])
    assert stop.value.code != 0 and "SALT" in capsys.readouterr().err


def test_a_book_answers_part_drops_the_exercises_own_prefix():
    """keys.csv names a graded number by what it is, not by the check's internal label."""
    from inferlimits.book.homework.render import _part
    assert _part("ex5 share of BW") == "share of BW" and _part("ex12, answer") == "answer"
    assert _part("Q12.2: one sequence's cache") == "Q12.2: one sequence's cache" and _part("ex4") == "ex4"
