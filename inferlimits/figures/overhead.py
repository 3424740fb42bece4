"""Figures of the overhead regime (chapter 6): the third ceiling B / (n x t) against launches per
step beside the memory and math ceilings, and this machine's measurement of dispatch cost."""
from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from inferlimits.figures.display import Figure
from inferlimits.arithmetic.generation import decode_point
from inferlimits.data.hardware import accelerator
from inferlimits.figures.interactive import Control, panel as _panel, preferred_stops
from inferlimits.arithmetic.kvcache import fit
from inferlimits.data.measurements import measurement
from inferlimits.data.models import model, weight_bytes
from inferlimits.arithmetic.overhead import (MICROSECOND, DispatchSweep, launch_assumptions, launch_budget_per_step,
                                             launches_per_step, overhead_ceiling_tokens_per_s)
from inferlimits.figures import ACCENT, FAINT, INK, PALETTE, base_layout

LAUNCH_RANGE = (1.0, 10_000.0)       # launches per step, fixed x axis
TOKENS_RANGE = (1.0, 1e6)            # tokens/s, fixed y axis
CURVE = [round(10 ** (i / 10), 3) for i in range(41)]   # 1 to 10,000 launches, ten points a decade
MICROSECONDS = (1, 2, 3, 5, 7, 10, 15, 20, 30, 50)     # static slider stops
KERNELS_PER_LAYER = tuple(range(1, 61))                # live slider stops
MEASURED = "b200_eager_llama8b"


def _g(values, digits: int = 4) -> list:
    return [None if v is None else float(f"{v:.{digits}g}") for v in values]


def third_wall_spec(accelerator_name: str, model_name: str, microseconds_per_launch: float,
                    kernels_per_layer: float) -> dict:
    """Batch-1 decode: memory ceiling BW / (W + A) and math ceiling P / F (flat lines), the overhead
    ceiling 1 / (n x t) against launches per step n, the lowest of the three, and markers for the
    eager count n = layers x kernels per layer + kernels outside the layers and for one graph launch.
    Where the weights do not fit in the usable memory, the memory and math ceilings are not drawn."""
    a, c = accelerator(accelerator_name), model(model_name).config
    point = decode_point(c, a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s)
    runs = fit(a.capacity_bytes, weight_bytes(c)).fits
    mem, mth = (point.memory_ceiling, point.math_ceiling) if runs else (1e30, 1e30)
    t = microseconds_per_launch * MICROSECOND
    overhead = [overhead_ceiling_tokens_per_s(n, t) for n in CURVE]
    eager = launches_per_step(c, kernels_per_layer, launch_assumptions().outside_layers)
    at_eager = min(mem, mth, overhead_ceiling_tokens_per_s(eager, t))
    at_graph = min(mem, mth, overhead_ceiling_tokens_per_s(1, t))
    budget = launch_budget_per_step(min(mem, mth), t)
    measured = measurement(MEASURED)
    hover = "%{x:,.0f} launches per step → %{y:,.0f} tokens/s<extra>%{fullData.name}</extra>"
    x0, x1 = LAUNCH_RANGE
    gone = [None, None]
    data = [
        dict(type="scatter", x=[x0, x1], y=[mem, mem] if runs else gone, mode="lines",
             line=dict(color=PALETTE[0], width=2, dash="dash"),
             name="memory ceiling (BW / (W + A))" if runs else "memory ceiling: the weights do not fit",
             hovertemplate=hover),
        dict(type="scatter", x=[x0, x1], y=[mth, mth] if runs else gone, mode="lines",
             line=dict(color=PALETTE[2], width=2, dash="dot"), name="math ceiling (P / F)", hovertemplate=hover),
        dict(type="scatter", x=CURVE, y=_g(overhead), mode="lines", line=dict(color=PALETTE[3], width=2, dash="dashdot"),
             name="overhead ceiling (1 / (n × t))", hovertemplate=hover),
        dict(type="scatter", x=CURVE, y=_g([min(mem, mth, o) for o in overhead]) if runs else [None] * len(CURVE),
             mode="lines", line=dict(color=ACCENT, width=4), name="attainable: the lowest of the three",
             hovertemplate=hover),
        dict(type="scatter", x=[x0, x1], y=[measured.tokens_per_s] * 2, mode="lines",
             line=dict(color=FAINT, width=2), name=f"measured: {measured.model} on the {measured.accelerator}, eager",
             hovertemplate=hover),
        dict(type="scatter", x=[budget, budget] if runs else gone, y=[TOKENS_RANGE[0], min(mem, mth)], mode="lines+text",
             line=dict(color=PALETTE[3], width=1, dash="dot"), text=["", f"launch budget {budget:,.0f}"],
             textposition="top left", name="launch budget", hoverinfo="skip"),
        dict(type="scatter", x=[eager, 1] if runs else gone, y=_g([at_eager, at_graph]), mode="markers+text",
             marker=dict(size=13, color=INK), textposition=["bottom left", "bottom right"],
             text=[f"eager: {eager:,.0f} launches → {at_eager:,.0f} tokens/s",
                   f"one graph launch (host only) → {at_graph:,.0f} tokens/s"],
             name="eager count and one graph launch", hovertemplate=hover),
    ]
    layout = base_layout(f"Three ceilings for {model_name} on the {accelerator_name}, batch 1",
                         "kernel launches per decode step (n)", "decode tokens per second",
                         x_log=True, y_log=True, x_range=LAUNCH_RANGE, y_range=TOKENS_RANGE, legend=True)
    # the static figure's slider sits under the x axis; the legend goes below it
    layout["legend"] = dict(orientation="h", y=-0.42, yanchor="top")
    layout["height"] = 760
    layout["margin"] = dict(l=70, r=20, t=60, b=200)
    return {"data": data, "layout": layout}


def third_wall_panel(names: Sequence[str], accelerator_name: str, model_names: Sequence[str], model_name: str,
                     microseconds_per_launch: float, div_id: str = "fig-third-wall"):
    """Accelerator, model, cost per launch and kernels per layer live; accelerator dropdown and
    cost-per-launch slider without a kernel (kernels per layer at the assumed eager count)."""
    kpl = launch_assumptions().kernels_per_layer
    # the assumed cost and count come from the data: each is a stop whatever the data say
    costs = tuple(sorted({*MICROSECONDS, microseconds_per_launch}))
    controls = [Control("accelerator_name", "accelerator", list(names)),
                Control("model_name", "model", list(model_names)),
                Control("microseconds_per_launch", "µs per launch (t)", costs, kind="slider",
                        stops=preferred_stops(min(costs), max(costs), costs)),
                Control("kernels_per_layer", "kernels per layer", tuple(sorted({*KERNELS_PER_LAYER, kpl})),
                        kind="slider")]
    values = dict(accelerator_name=accelerator_name, model_name=model_name,
                  microseconds_per_launch=microseconds_per_launch, kernels_per_layer=kpl)
    return _panel(third_wall_spec, values, controls, div_id, static_dropdown="accelerator_name",
                  static_slider="microseconds_per_launch")


def dispatch_figure(sweep: DispatchSweep, div_id: str = "fig-dispatch") -> Figure:
    """This machine's measurement: time for the whole product against elements per call, measured
    (markers), the fitted model calls x c + elements x e (line), and one call (flat line)."""
    per_call, per_element = sweep.fit()
    sizes = list(sweep.elements_per_call)
    fitted = [sweep.calls(k) * per_call + sweep.total_elements * per_element for k in sizes]
    ms = 1e3
    fig = go.Figure([
        go.Scatter(x=sizes, y=[s * ms for s in sweep.loop_seconds], mode="markers", marker=dict(size=11, color=ACCENT),
                   name="Python loop of numpy calls (measured)",
                   hovertemplate="%{x:,} elements per call → %{y:.3g} ms<extra></extra>"),
        go.Scatter(x=sizes, y=[f * ms for f in fitted], mode="lines", line=dict(color=INK, width=2),
                   name=f"fit: {per_call / MICROSECOND:.2g} µs per call + {per_element * 1e9:.2g} ns per element"),
        go.Scatter(x=[sizes[0], sweep.total_elements], y=[sweep.one_call_seconds * ms] * 2, mode="lines",
                   line=dict(color=PALETTE[2], width=2, dash="dash"), name="one call on the whole array (measured)"),
    ], layout=base_layout(f"This machine: the same {sweep.total_elements:,} products, in calls of different sizes",
                          "elements per numpy call", "time for all products (ms)", x_log=True, y_log=True, legend=True))
    return Figure(fig, div_id)
