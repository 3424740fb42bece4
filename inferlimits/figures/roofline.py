"""The roofline figure: every accelerator's roof in grey, one in colour with its ridge, and a
marker where a workload of a given intensity lands."""
from __future__ import annotations

from collections.abc import Sequence

from ..hardware import accelerator
from ..interactive import Control, panel as _panel, preferred_stops
from ..roofline import attainable_flop_per_s, balance_point_flop_per_byte, bound
from ..units import TERA
from . import ACCENT, FAINT, INK, base_layout

INTENSITY_RANGE = (0.1, 10_000.0)   # FLOP per byte, fixed x axis
TFLOPS_RANGE = (0.02, 5_000.0)      # TFLOP/s, fixed y axis
INTENSITIES = (0.5, 1, 2, 5, 10, 20, 50, 100, 150, 200, 300, 500, 1000, 2000, 5000)   # static slider stops


def roof(name: str) -> tuple[list[float], list[float], float]:
    """The roof of one accelerator across the x range, in TFLOP/s, and its ridge."""
    a = accelerator(name)
    ridge = balance_point_flop_per_byte(a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s)
    x0, x1 = INTENSITY_RANGE
    peak = a.dense_bf16_flops_per_s / TERA
    return [x0, ridge, x1], [x0 * a.bandwidth_bytes_per_s / TERA, peak, peak], ridge


def spec(names: Sequence[str], accelerator_name: str, intensity_flop_per_byte: float) -> dict:
    """Roofs of ``names``, ``accelerator_name`` highlighted, a workload at the given intensity."""
    if accelerator_name not in names:
        raise ValueError(f"accelerator_name must be one of names; got {accelerator_name!r}")
    fx, fy = [], []
    for n in names:
        x, y, _ = roof(n)
        fx += x + [None]
        fy += y + [None]
    x, y, ridge = roof(accelerator_name)
    a = accelerator(accelerator_name)
    at = attainable_flop_per_s(intensity_flop_per_byte, a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s)
    wall = bound(intensity_flop_per_byte, a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s)
    data = [
        dict(type="scatter", x=fx, y=fy, mode="lines", line=dict(color=FAINT, width=1), hoverinfo="skip",
             name="other accelerators"),
        dict(type="scatter", x=x, y=y, mode="lines", line=dict(color=ACCENT, width=3), name=accelerator_name,
             hovertemplate="%{x:.3g} FLOP/byte → %{y:.4g} TFLOP/s<extra></extra>"),
        dict(type="scatter", x=[ridge, ridge], y=[TFLOPS_RANGE[0], y[1]], mode="lines+text",
             line=dict(color=ACCENT, width=1, dash="dot"), text=["", f"ridge {ridge:.0f}"],
             textposition="top left", hoverinfo="skip", name="ridge"),
        dict(type="scatter", x=[intensity_flop_per_byte], y=[at / TERA], mode="markers+text",
             marker=dict(size=14, color=INK), textposition="bottom right", name="workload",
             text=[f"{wall}: {at / a.dense_bf16_flops_per_s:.2%} of peak math"],
             hovertemplate="%{x:.3g} FLOP/byte → %{y:.4g} TFLOP/s<extra></extra>"),
    ]
    layout = base_layout(f"Roofline of the {accelerator_name}", "arithmetic intensity (FLOP per byte moved)",
                         "attainable math rate (dense BF16 TFLOP/s)", x_log=True, y_log=True,
                         x_range=INTENSITY_RANGE, y_range=TFLOPS_RANGE)
    return {"data": data, "layout": layout}


def panel(names: Sequence[str], accelerator_name: str, intensity_flop_per_byte: float,
          div_id: str = "fig-roofline"):
    """Accelerator dropdown and intensity slider over the roofline, live or static."""
    controls = [Control("accelerator_name", "accelerator", list(names)),
                Control("intensity_flop_per_byte", "intensity (FLOP/byte)", INTENSITIES, kind="slider",
                        stops=preferred_stops(min(INTENSITIES), max(INTENSITIES), INTENSITIES))]
    values = dict(names=list(names), accelerator_name=accelerator_name, intensity_flop_per_byte=intensity_flop_per_byte)
    return _panel(spec, values, controls, div_id, static_dropdown="accelerator_name",
                  static_slider="intensity_flop_per_byte")
