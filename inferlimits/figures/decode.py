"""Decode figures: the tokens/s ceiling against model size (one line per accelerator, a weight
precision and a bandwidth efficiency), and the decode point on the roofline."""
from __future__ import annotations

from collections.abc import Sequence

from inferlimits.arithmetic.generation import decode_point
from inferlimits.data.hardware import accelerator
from inferlimits.figures.interactive import Control, panel as _panel, step_stops
from inferlimits.arithmetic.kvcache import fit
from inferlimits.data.models import model, param_count, weight_bytes
from inferlimits.arithmetic.roofline import attainable_flop_per_s, balance_point_flop_per_byte
from inferlimits.data.units import TERA
from inferlimits.figures import FAINT, INK, PALETTE, base_layout
from inferlimits.figures import roofline

PRECISIONS = ("BF16", "FP8", "INT4")
# the slider's stops rise from 0.3 on the left to 1, the datasheet bandwidth, on the right, where
# the figure opens; moving it left stands for less efficient kernels
EFFICIENCIES = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)   # static slider stops; live ones every 0.05
PARAMS_RANGE = (5.0, 120.0)          # billions of parameters, fixed x axis
TOKENS_RANGE = (3.0, 10_000.0)        # tokens/s, fixed y axis
EFFICIENCY_SLIDER = Control("efficiency", "share of peak bandwidth", EFFICIENCIES, kind="slider",
                            stops=step_stops(min(EFFICIENCIES), max(EFFICIENCIES), 0.05))


def _fits(accelerator_name: str, weights: float) -> bool:
    """Whether the stored weights fit in one accelerator's usable memory."""
    return fit(accelerator(accelerator_name).capacity_bytes, weights).fits


def ceiling_spec(names: Sequence[str], model_names: Sequence[str], weight_precision: str,
                 efficiency: float) -> dict:
    """Batch-1 decode ceilings, e x BW / (W + A), of each model on each accelerator, for the models
    whose weights fit in the accelerator's usable memory."""
    sized = sorted((param_count(model(m).config), m) for m in model_names)
    ordered = [m for _, m in sized]
    billions = {m: n / 1e9 for n, m in sized}
    stored = {m: weight_bytes(model(m).config, weight_precision) for m in ordered}
    data = []
    for i, n in enumerate(names):
        a = accelerator(n)
        fitting = [m for m in ordered if _fits(n, stored[m])]
        data.append(dict(type="scatter", x=[billions[m] for m in fitting], text=fitting,
                         y=[decode_point(model(m).config, a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s,
                                         weight_precision=weight_precision, efficiency=efficiency).memory_ceiling
                            for m in fitting],
                         mode="lines+markers", name=n,
                         line=dict(color=PALETTE[i % len(PALETTE)], width=2), marker=dict(size=8),
                         hovertemplate=f"{n}<br>%{{text}}: %{{y:,.0f}} tokens/s<extra></extra>"))
    gx, gy = [], []
    for m in ordered:
        gx += [billions[m], billions[m], None]
        gy += [TOKENS_RANGE[0], TOKENS_RANGE[1], None]
    data.append(dict(type="scatter", x=gx, y=gy, mode="lines", line=dict(color=FAINT, width=1, dash="dot"),
                     hoverinfo="skip", showlegend=False, name="models"))
    # model names near the top, staggered so that neighbours of similar size stay readable
    data.append(dict(type="scatter", x=[billions[m] for m in ordered],
                     y=[TOKENS_RANGE[1] / 1.4 / 1.6 ** (k % 3) for k in range(len(ordered))], text=ordered,
                     mode="text", textposition="middle right", textfont=dict(size=11, color="#566573"),
                     hoverinfo="skip", showlegend=False, name="model names"))
    data.append(dict(type="scatter", x=[PARAMS_RANGE[0] * 1.05], y=[TOKENS_RANGE[0] * 1.3], mode="text",
                     text=[f"{weight_precision} weights, {efficiency:.0%} of peak bandwidth"],
                     textposition="top right", hoverinfo="skip", showlegend=False, name="setting"))
    layout = base_layout("Single-stream decode ceiling: bandwidth ÷ bytes per step",
                         "parameters (billions)", "tokens/s, at most", x_log=True, y_log=True,
                         x_range=PARAMS_RANGE, y_range=TOKENS_RANGE, legend=True)
    layout["xaxis"].update(dtick=None, tickvals=[5, 7, 8, 10, 20, 30, 50, 70, 100])
    layout["legend"] = dict(orientation="v", x=1.02, y=0.5, xanchor="left", yanchor="middle")
    layout["margin"] = dict(l=70, r=20, t=60, b=60)
    return {"data": data, "layout": layout}


def ceiling_panel(names: Sequence[str], model_names: Sequence[str], weight_precision: str = "BF16",
                  efficiency: float = 1.0, div_id: str = "fig-decode-ceiling"):
    """Weight-precision dropdown and bandwidth-efficiency slider over the ceiling figure."""
    controls = [Control("weight_precision", "weight precision", PRECISIONS),
                EFFICIENCY_SLIDER]
    values = dict(names=list(names), model_names=list(model_names), weight_precision=weight_precision,
                  efficiency=efficiency)
    return _panel(ceiling_spec, values, controls, div_id, static_dropdown="weight_precision",
                  static_slider="efficiency")


def roofline_spec(names: Sequence[str], accelerator_name: str, model_name: str, efficiency: float) -> dict:
    """The roofline of ``accelerator_name`` with one decode point per weight precision: intensity
    F / (W + A) at batch 1, and the math rate it reaches at ``efficiency`` of peak bandwidth. A
    precision whose weights do not fit in the usable memory gets no point."""
    a = accelerator(accelerator_name)
    c = model(model_name).config
    ridge = balance_point_flop_per_byte(a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s)
    base = roofline.spec(names, accelerator_name, 1.0)
    # the grey roofs, this accelerator's BF16 roof and its ridge: the decode points are weight-only
    # formats, whose math runs at the BF16 rate
    keep = ("every accelerator, BF16", f"{accelerator_name}, BF16", "ridge")
    data = [t for t in base["data"] if t["name"] in keep]
    xs, ys, labels = [], [], []
    for p in PRECISIONS:
        if not _fits(accelerator_name, weight_bytes(c, p)):
            xs.append(None), ys.append(None), labels.append(f"{p}: does not fit")
            continue
        point = decode_point(c, a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s, weight_precision=p)
        i, f = point.intensity, point.flops_per_token
        rate = efficiency * attainable_flop_per_s(i, a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s)
        xs.append(i)
        ys.append(rate / TERA)
        labels.append(f"{p}: {rate / f:,.0f} tokens/s, {rate / a.dense_bf16_flops_per_s:.2%} of peak math")
    data.append(dict(type="scatter", x=xs, y=ys, text=labels, mode="markers+text", textposition="middle right",
                     marker=dict(size=12, color=INK, symbol=["circle", "square", "diamond"]), name="single-stream decode",
                     hovertemplate="%{x:.3g} FLOP/byte → %{y:.4g} TFLOP/s<extra></extra>"))
    data.append(dict(type="scatter", x=[ridge], y=[roofline.TFLOPS_RANGE[0] * 2],
                     text=[f"ridge: {ridge:.0f}× the BF16 intensity"], mode="text", textposition="top left",
                     hoverinfo="skip", name="distance to the ridge"))
    missing = [p for p, x in zip(PRECISIONS, xs) if x is None]
    data.append(dict(type="scatter", x=[roofline.INTENSITY_RANGE[0] * 1.5], y=[roofline.TFLOPS_RANGE[1] / 2],
                     text=[f"does not fit in memory: {', '.join(missing)} weights" if missing else ""],
                     mode="text", textposition="bottom right", hoverinfo="skip", name="what does not fit"))
    layout = dict(base["layout"])
    layout["title"] = dict(base["layout"]["title"], text=f"Decoding {model_name} on the {accelerator_name} roofline")
    return {"data": data, "layout": layout}


def roofline_panel(names: Sequence[str], accelerator_name: str, model_names: Sequence[str],
                   model_name: str, efficiency: float = 1.0, div_id: str = "fig-decode-roofline"):
    """Accelerator dropdown and efficiency slider (and, with a kernel, a model dropdown) over the
    decode points on the roofline."""
    controls = [Control("accelerator_name", "accelerator", list(names)),
                Control("model_name", "model", list(model_names)),
                EFFICIENCY_SLIDER]
    values = dict(names=list(names), accelerator_name=accelerator_name, model_name=model_name,
                  efficiency=efficiency)
    return _panel(roofline_spec, values, controls, div_id, static_dropdown="accelerator_name",
                  static_slider="efficiency")
