"""Serving economics: what batching buys (aggregate tokens per second), what it costs each user
(their own tokens per second), and what a token costs at a price per GPU-hour.

Notation as in ``generation``: B batch, W weight bytes a step reads, K cache bytes per token per
sequence, L tokens in each cache, A activation bytes per token, BW bandwidth (bytes/s), P peak math
rate (FLOP/s), F FLOPs per token.
Prices are read from ``data/prices.toml``: assumed, illustrative figures, not quotes.
"""
from __future__ import annotations

from dataclasses import dataclass

from inferlimits.data import datafiles
from inferlimits.arithmetic.generation import decode_bytes_per_step, decode_step_time_s
from inferlimits.data.hardware import accelerator
from inferlimits.data.units import positive

SECONDS_PER_HOUR = 3600
TOKENS_PER_MILLION = 1_000_000


def decode_step_time_no_overlap_s(peak_flop_per_s: float, bandwidth_bytes_per_s: float, weight_bytes: float,
                                  flops_per_token: float, batch: float = 1, kv_bytes_per_token: float = 0.0,
                                  context_tokens: float = 0.0, activation_bytes_per_token: float = 0.0) -> float:
    """A decode step when math and memory traffic do not overlap at all (a pessimistic bound):
    B x F / P + (W + B x (K x L + A)) / BW. The roofline's max(...) is the optimistic one; real
    kernels lie between."""
    B = positive("batch", batch)
    math_s = B * positive("flops_per_token", flops_per_token) / positive("peak_flop_per_s", peak_flop_per_s)
    moved = decode_bytes_per_step(weight_bytes, B, kv_bytes_per_token, context_tokens, activation_bytes_per_token)
    return math_s + moved / positive("bandwidth_bytes_per_s", bandwidth_bytes_per_s)


def per_user_tokens_per_s(peak_flop_per_s: float, bandwidth_bytes_per_s: float, weight_bytes: float,
                          flops_per_token: float, batch: float = 1, kv_bytes_per_token: float = 0.0,
                          context_tokens: float = 0.0, activation_bytes_per_token: float = 0.0,
                          overlap: bool = True) -> float:
    """Each sequence's own speed: one token per decode step, 1 / T_step, with T_step the roofline's
    max(B x F / P, (W + B x (K x L + A)) / BW) (``overlap``) or the sum of the two (no overlap)."""
    step = decode_step_time_s if overlap else decode_step_time_no_overlap_s
    return 1.0 / step(peak_flop_per_s, bandwidth_bytes_per_s, weight_bytes, flops_per_token, batch,
                      kv_bytes_per_token, context_tokens, activation_bytes_per_token)


def aggregate_tokens_per_s(peak_flop_per_s: float, bandwidth_bytes_per_s: float, weight_bytes: float,
                           flops_per_token: float, batch: float = 1, kv_bytes_per_token: float = 0.0,
                           context_tokens: float = 0.0, activation_bytes_per_token: float = 0.0,
                           overlap: bool = True) -> float:
    """Tokens per second of the whole batch: B / T_step, B times each user's speed. With overlap it
    is the lower of the memory ceiling B x BW / (W + B x (K x L + A)) and the math ceiling P / F."""
    return positive("batch", batch) * per_user_tokens_per_s(
        peak_flop_per_s, bandwidth_bytes_per_s, weight_bytes, flops_per_token, batch,
        kv_bytes_per_token, context_tokens, activation_bytes_per_token, overlap)


def cost_per_million_tokens_usd(usd_per_gpu_hour: float, tokens_per_s: float) -> float:
    """What a million generated tokens cost on a GPU rented by the hour and kept busy:
    price per hour x 10^6 / (3,600 x tokens per second)."""
    return (positive("usd_per_gpu_hour", usd_per_gpu_hour) * TOKENS_PER_MILLION
            / (SECONDS_PER_HOUR * positive("tokens_per_s", tokens_per_s)))


@dataclass(frozen=True)
class GpuHourPrice:
    """An assumed on-demand price for one accelerator, with what it is and where such prices are seen."""

    accelerator: str
    usd_per_gpu_hour: float
    what: str
    seen: str


def gpu_hour_prices() -> dict[str, GpuHourPrice]:
    """Every assumed price in ``data/prices.toml``, keyed by accelerator name (read on each call)."""
    table = datafiles.load("prices.toml")["prices"]
    out = {}
    for name, row in table.items():
        accelerator(name)  # a price must belong to a known accelerator
        out[name] = GpuHourPrice(name, positive("usd_per_gpu_hour", row["usd_per_gpu_hour"]), row["what"], row["seen"])
    return out


def gpu_hour_price(accelerator_name: str) -> GpuHourPrice:
    """The assumed price for ``accelerator_name``, or a ValueError listing the priced accelerators."""
    return datafiles.lookup(gpu_hour_prices(), "accelerator_name", accelerator_name)
