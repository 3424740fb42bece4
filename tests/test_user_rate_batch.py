"""The largest batch a memory-bound step can hold while each user keeps a given speed
(``kvcache.largest_batch_at_user_rate``), used by the exercises of chapter 7."""
from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inferlimits.arithmetic import kvcache
from inferlimits.arithmetic.generation import memory_ceiling_tokens_per_s


def test_the_batch_is_the_last_whole_one_at_the_rate():
    # BW 8 TB/s, W 70 GB, 0.7 GB per sequence: at 50 tokens/s the step may move 160 GB
    B = kvcache.largest_batch_at_user_rate(8e12, 70e9, 0.7e9, 50)
    assert B == math.floor((160e9 - 70e9) / 0.7e9) == 128
    assert 8e12 / (70e9 + B * 0.7e9) >= 50 > 8e12 / (70e9 + (B + 1) * 0.7e9)


def test_no_batch_when_the_weights_alone_are_too_slow():
    assert kvcache.largest_batch_at_user_rate(1e12, 100e9, 1e9, 50) == 0


@settings(max_examples=200, deadline=None)
@given(st.floats(1e11, 1e13), st.floats(1e9, 1e12), st.floats(1e6, 1e10), st.floats(1.0, 500.0))
def test_it_agrees_with_the_memory_ceiling(bw, w, s, r):
    B = kvcache.largest_batch_at_user_rate(bw, w, s, r)
    if B >= 1:
        assert memory_ceiling_tokens_per_s(bw, w, B, s, 1.0) / B >= r * (1 - 1e-9)
    assert memory_ceiling_tokens_per_s(bw, w, B + 1, s, 1.0) / (B + 1) < r * (1 + 1e-9)


@pytest.mark.parametrize("name, args", [("bandwidth_bytes_per_s", (0, 1e9, 1e6, 10)), ("weight_bytes", (1e12, -1, 1e6, 10)),
                                        ("sequence_bytes", (1e12, 1e9, 0, 10)), ("user_tokens_per_s", (1e12, 1e9, 1e6, 0))])
def test_bad_input_names_its_parameter(name, args):
    with pytest.raises(ValueError, match=name):
        kvcache.largest_batch_at_user_rate(*args)
