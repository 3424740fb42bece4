"""The roofline model: two speeds, their ratio, and the time of a step.

A step that does F FLOPs and moves M bytes on a chip with peak math rate P (FLOP/s) and memory
bandwidth BW (bytes/s) takes at least max(F / P, M / BW) seconds. Its arithmetic intensity is
I = F / M (FLOP per byte); the chip's balance point, or ridge, is P / BW.
"""
from __future__ import annotations

import math

from inferlimits.data.units import non_negative, positive

MEMORY_BOUND = "memory-bound"
COMPUTE_BOUND = "compute-bound"


def balance_point_flop_per_byte(peak_flop_per_s: float, bandwidth_bytes_per_s: float) -> float:
    """The ridge of the roofline: P / BW, the FLOPs a workload must do per byte it moves to keep
    the math units busy."""
    return positive("peak_flop_per_s", peak_flop_per_s) / positive("bandwidth_bytes_per_s", bandwidth_bytes_per_s)


def arithmetic_intensity_flop_per_byte(flops: float, bytes_moved: float) -> float:
    """I = F / M, FLOPs done per byte moved."""
    return positive("flops", flops) / positive("bytes_moved", bytes_moved)


def matmul_flops(m: float, k: float, n: float) -> float:
    """Multiplying an m x k matrix by a k x n matrix: 2 x m x k x n FLOPs (a multiply and an add
    per term)."""
    return 2.0 * positive("m", m) * positive("k", k) * positive("n", n)


def matmul_bytes(m: float, k: float, n: float, bytes_per_element: float) -> float:
    """Bytes a matrix product moves when each operand is read once and the result written once:
    (m x k + k x n + m x n) x bytes per element."""
    m, k, n = positive("m", m), positive("k", k), positive("n", n)
    return (m * k + k * n + m * n) * positive("bytes_per_element", bytes_per_element)


def square_matmul_side_at_ridge(balance_flop_per_byte: float, bytes_per_element: float) -> int:
    """Smallest side n of a square product (m = k = n) that is compute-bound: its intensity
    2n^3 / (3n^2 x b) = 2n / (3b) reaches the balance point when n >= 3b x balance / 2."""
    need = 1.5 * positive("bytes_per_element", bytes_per_element) * positive("balance_flop_per_byte", balance_flop_per_byte)
    n = math.ceil(need)
    return n if arithmetic_intensity_flop_per_byte(matmul_flops(n, n, n), matmul_bytes(n, n, n, bytes_per_element)) >= balance_flop_per_byte else n + 1


def attainable_flop_per_s(intensity_flop_per_byte: float, peak_flop_per_s: float,
                          bandwidth_bytes_per_s: float) -> float:
    """The roof: min(P, I x BW), the fastest math rate a workload of intensity I can reach."""
    i = positive("intensity_flop_per_byte", intensity_flop_per_byte)
    p = positive("peak_flop_per_s", peak_flop_per_s)
    bw = positive("bandwidth_bytes_per_s", bandwidth_bytes_per_s)
    return min(p, i * bw)


def no_overlap_flop_per_s(intensity_flop_per_byte: float, peak_flop_per_s: float,
                          bandwidth_bytes_per_s: float) -> float:
    """The math rate of a workload of intensity I whose math and memory traffic take turns instead of overlapping:
    I FLOP per byte over ``step_time_no_overlap_s`` of one byte, 1 / (1 / P + 1 / (I x BW)); never below half
    the roof."""
    i = positive("intensity_flop_per_byte", intensity_flop_per_byte)
    return i / step_time_no_overlap_s(i, 1.0, peak_flop_per_s, bandwidth_bytes_per_s)


def step_time_s(flops: float, bytes_moved: float, peak_flop_per_s: float,
                bandwidth_bytes_per_s: float) -> float:
    """Lower bound on a step's time: max(F / P, M / BW), the larger of math time and memory time."""
    f = non_negative("flops", flops)
    m = non_negative("bytes_moved", bytes_moved)
    if f == 0 and m == 0:
        raise ValueError("flops and bytes_moved are both zero: the step does nothing")
    return max(f / positive("peak_flop_per_s", peak_flop_per_s),
               m / positive("bandwidth_bytes_per_s", bandwidth_bytes_per_s))


def step_time_no_overlap_s(flops: float, bytes_moved: float, peak_flop_per_s: float,
                           bandwidth_bytes_per_s: float) -> float:
    """A step's time when math and memory take turns instead of overlapping: F / P + M / BW. It is
    ``step_time_s`` times one plus the smaller of I / R and R / I, so never more than twice it."""
    f = non_negative("flops", flops)
    m = non_negative("bytes_moved", bytes_moved)
    if f == 0 and m == 0:
        raise ValueError("flops and bytes_moved are both zero: the step does nothing")
    return (f / positive("peak_flop_per_s", peak_flop_per_s)
            + m / positive("bandwidth_bytes_per_s", bandwidth_bytes_per_s))


def bound(intensity_flop_per_byte: float, peak_flop_per_s: float, bandwidth_bytes_per_s: float) -> str:
    """Which wall a workload of intensity I meets first: memory-bound below the ridge,
    compute-bound at or above it."""
    ridge = balance_point_flop_per_byte(peak_flop_per_s, bandwidth_bytes_per_s)
    return COMPUTE_BOUND if positive("intensity_flop_per_byte", intensity_flop_per_byte) >= ridge else MEMORY_BOUND
