"""The expected-rate model (arithmetic/expected.py) and ``measured.predict``: its scores on runs each
fit never saw, its parameters, and its one public function. The scores are held here so that data
added later cannot silently worsen them (issue 30)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from inferlimits.arithmetic import expected as E
from inferlimits.arithmetic.measured import compare, fitted, predict
from inferlimits.data.measurements import measurements, run
from inferlimits.data.models import model

RUNS = list(measurements().values())


@pytest.fixture(scope="module")
def scores():
    return E.scores(fitted(), RUNS)


def test_the_cross_validated_median_error_is_within_20_percent(scores):
    assert scores["all"]["median error"] <= 0.20, scores["all"]


@pytest.mark.parametrize("category", E.CATEGORIES)
def test_every_category_with_ten_runs_is_within_25_percent(scores, category):
    s = scores.get(category)
    if s is None or s["runs"] < 10:
        pytest.skip(f"{category}: fewer than 10 runs")
    assert s["median error"] <= 0.25, (category, s)


def test_the_80_percent_interval_covers_75_to_85_percent_of_runs(scores):
    assert 0.75 <= scores["all"]["in the 80% interval"] <= 0.85, scores["all"]


def test_each_source_is_predicted_by_a_fit_that_never_saw_it():
    """Leaving a source out changes its predictions: the cross-validated values are not the
    in-sample ones, and refitting without one source reproduces them."""
    f = fitted()
    assert not np.allclose(f.log_cross, f.log_fitted)
    group = max(set(f.groups), key=f.groups.count)
    keep = [m for m, g in zip(RUNS, f.groups) if g != group]
    out = [i for i, g in enumerate(f.groups) if g == group]
    theta, _ = E.fit(E.Design([E.plan(m) for m in keep]), np.log([float(m.value) for m in keep]))
    again = E.Design([E.plan(RUNS[i]) for i in out]).log_values(theta)
    assert np.allclose(again, f.log_cross[out])


def test_the_data_cover_what_issue_30_asks():
    names = {m.accelerator for m in RUNS}
    for part in ("A100", "H100", "H200", "B200", "B300", "MI300X", "MI3", "Apple", "EPYC"):
        assert any(n.startswith(part) or part in n for n in names), part
    assert names & {"L40S", "RTX 4090"}
    assert len(RUNS) >= 120
    assert {"BF16", "FP8", "INT8", "INT4"} <= {m.weight_precision for m in RUNS}
    assert {"NVFP4", "MXFP4"} & {m.weight_precision for m in RUNS}
    assert sum(model(m.model).config.is_moe for m in RUNS) >= 25
    spec = [m for m in RUNS if m.speculative != "none"]
    assert len(spec) >= 10 and all(m.draft_tokens for m in spec)
    assert sum((m.sequences or 0) >= 16 for m in RUNS) >= 30
    assert sum(m.metric == "ms_to_first_token" for m in RUNS) >= 15
    assert sum(m.gpus > 1 and any((m.tp, m.ep, m.pp)) for m in RUNS) >= 10


def test_the_model_is_small_and_every_share_is_a_share():
    table = fitted().parameter_table()
    assert len(table) <= 15
    for p in table:
        assert p["value"] > 0 and p["low"] <= p["value"] <= p["high"], p
        if p["unit"] == "share":
            assert p["value"] < 1, p
        assert p["meaning"]


def test_speculative_runs_are_below_a_ceiling_that_counts_every_token_a_verify_pass_can_accept():
    for m in RUNS:
        if m.speculative != "none":
            c = compare(m)
            assert c.measured <= c.ceiling, m.key


def test_the_expected_rate_never_beats_the_ceiling():
    """Achievable shares below one, fixed costs and exchanges only add time: the expected rate of
    every run sits at or below its ceiling (at or above it, for a time)."""
    for m in RUNS:
        p = predict({**vars(m)})
        if p.metric.startswith("ms_"):
            assert p.expected >= p.ceiling * (1 - 1e-9), m.key
        else:
            assert p.expected <= p.ceiling * (1 + 1e-9), m.key


# ---- predict(row) ---------------------------------------------------------------------------

ROW = {"model": "Llama-3.1-8B", "accelerator": "H100 SXM", "gpus": 1, "weight_precision": "BF16",
       "math_precision": "BF16", "kv_precision": "BF16", "batch": 1, "input_tokens": 128, "output_tokens": 256,
       "metric": "tokens_per_s"}


def test_predict_gives_an_interval_around_the_expected_rate_below_the_ceiling():
    p = predict(ROW)
    assert p.low < p.expected < p.high < p.ceiling
    assert p.unit == "tokens/s"
    assert p.position(p.expected) == "inside" and p.position(p.low / 2) == "below"


def test_predict_answers_in_the_rows_own_metric():
    rate = predict(ROW).expected
    tpot = predict({**ROW, "metric": "ms_per_output_token"}).expected
    per_user = predict({**ROW, "metric": "tokens_per_s_per_user"}).expected
    assert math.isclose(per_user, rate) and math.isclose(tpot, 1e3 / rate)
    first = predict({**ROW, "metric": "ms_to_first_token", "input_tokens": 2000})
    assert first.unit == "ms to first token" and first.expected >= first.ceiling


def test_predict_grows_with_the_batch_and_falls_with_the_model():
    rates = [predict({**ROW, "batch": b}).expected for b in (1, 8, 64)]
    assert rates == sorted(rates)
    assert predict({**ROW, "model": "Llama-3.1-70B", "gpus": 2, "tp": 2}).expected < rates[0]


def test_predict_says_whether_the_setup_fits():
    assert predict(ROW).fits is True
    assert predict({**ROW, "model": "Llama-3.1-70B"}).fits is False  # 141 GB of weights on one 80 GB card


def test_predict_ignores_unknown_fields():
    assert predict({**ROW, "colour": "blue"}) == predict(ROW)


def test_speculation_raises_the_expected_rate_of_one_sequence():
    plain = predict({**ROW, "model": "Llama-2-70B", "weight_precision": "INT4", "kv_precision": "BF16"})
    spec = predict({**ROW, "model": "Llama-2-70B", "weight_precision": "INT4", "speculative": "draft",
                    "draft_model": "Llama-2-7B", "draft_tokens": 4, "acceptance": 0.8})
    assert spec.expected > plain.expected and spec.ceiling > plain.ceiling


@pytest.mark.parametrize("field, value", [("model", "GPT-9"), ("accelerator", "Z100"), ("metric", "joules"),
                                          ("batch", 0), ("batch", -3), ("gpus", 0), ("input_tokens", 1.5),
                                          ("speculative", "magic"), ("acceptance", 1.5), ("tp", 0),
                                          ("value", float("nan"))])
def test_bad_input_raises_a_value_error_naming_the_field(field, value):
    with pytest.raises(ValueError, match=field):
        predict({**ROW, field: value})


@pytest.mark.parametrize("field", ["model", "accelerator", "weight_precision", "metric"])
def test_a_missing_field_is_named(field):
    row = dict(ROW)
    del row[field]
    with pytest.raises(ValueError, match=field):
        predict(row)


def test_a_row_must_be_a_dict():
    with pytest.raises(ValueError, match="row"):
        run(["Llama-3.1-8B"])
