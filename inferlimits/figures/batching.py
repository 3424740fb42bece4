"""Figures of batching (chapter 4): aggregate and per-user tokens/s against batch, the decode
point climbing the roofline as the batch grows, and the cost of a million tokens against batch.
No context: a step reads the weights and moves each sequence's activations; every sequence's KV
cache is left out here (chapter 5 adds it). With ``activations=False`` the throughput and roofline
figures count the weights alone, the first story chapter 4 tells (there the knee is R x W / F)."""
from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from inferlimits.arithmetic.activations import activation_bytes_per_token
from inferlimits.arithmetic.economics import aggregate_tokens_per_s, cost_per_million_tokens_usd, per_user_tokens_per_s
from inferlimits.arithmetic.generation import (decode_flops_per_token, decode_intensity_flop_per_byte,
                                               decode_knee_batch, math_ceiling_tokens_per_s,
                                               memory_ceiling_tokens_per_s, weight_bytes_read_per_step)
from inferlimits.data.hardware import accelerator
from inferlimits.figures.interactive import Control, doubling_stops, panel as _panel, step_stops
from inferlimits.arithmetic.kvcache import batch_where_math_binds, fit
from inferlimits.data.models import model, weight_bytes
from inferlimits.arithmetic.roofline import attainable_flop_per_s
from inferlimits.data.units import TERA
from inferlimits.figures import ACCENT, FAINT, INK, PALETTE, base_layout
from inferlimits.figures.roofline import INTENSITY_RANGE, TFLOPS_RANGE, roof

BATCH_RANGE = (1, 1024)
TOKENS_RANGE = (10.0, 1e6)           # tokens/s, fixed y axis
COST_RANGE = (0.001, 100.0)          # USD per million tokens, fixed y axis
BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)   # static slider stops
PRICES = (1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0, 8.0)  # USD per GPU-hour, static slider stops
CURVE = [round(2 ** (i / 4), 3) for i in range(41)]  # 1 to 1024, four points per doubling


def legend_below_slider(layout: dict, height: int = 760) -> dict:
    """Move a figure's legend below the static slider (which sits under the x axis) and make room."""
    layout["legend"] = dict(orientation="h", x=0, y=-0.42, yanchor="top")
    layout["margin"] = {**layout.get("margin", {}), "b": 210}
    layout["height"] = height
    return layout


def rounded(values, digits: int = 4) -> list:
    """Values rounded to ``digits`` significant figures (None kept), so that the precomputed states
    of a static figure stay small on the page; no figure shows more precision than that."""
    return [None if v is None else float(f"{v:.{digits}g}") for v in values]


def _setup(model_name: str, accelerator_name: str, activations: bool = True):
    """Peak, bandwidth, weights a step reads, FLOPs and activation bytes per token (a dense model:
    W does not grow with the batch; A = 0 when ``activations`` is False, the weights alone), and
    whether the weights fit in the usable memory."""
    c = model(model_name).config
    a = accelerator(accelerator_name)
    if c.is_moe:
        raise ValueError(f"model_name must be a dense model for the batching figures; got {model_name!r}")
    fits = fit(a.capacity_bytes, weight_bytes(c)).fits
    return (a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s, weight_bytes_read_per_step(c),
            decode_flops_per_token(c), activation_bytes_per_token(c) if activations else 0.0, fits)


def _or_gone(values, fits: bool) -> list:
    """Values rounded for the page, or nothing at all where the weights do not fit."""
    return rounded(values) if fits else [None] * len(values)


def throughput_spec(model_name: str, accelerator_name: str, batch: float, activations: bool = True,
                    thin_no_overlap: bool = False) -> dict:
    """Aggregate and per-user decode tokens/s against batch, with the roofline's overlap (max of
    math and memory time) and without it (their sum); markers at ``batch``. With ``activations``
    False the step moves the weights alone (A = 0) and the knee, B = R x W / F, is marked.

    The curves without overlap are dashed, like the memory ceiling; with ``thin_no_overlap`` they
    are thin and solid instead (at full colour: a pale line would fall below the 3:1 contrast the
    site holds every line to), so that each line style means one thing (dashed: the memory
    ceiling; dotted: the math ceiling and the knee; dash-dot: the measured math)."""
    p, bw, w, f, act, fits = _setup(model_name, accelerator_name, activations)
    b = max(1, round(batch))

    def rate(fn, overlap, x):
        return fn(p, bw, w, f, x, activation_bytes_per_token=act, overlap=overlap)

    mem = _or_gone([memory_ceiling_tokens_per_s(bw, w, x, activation_bytes_per_token=act) for x in CURVE], fits)
    mth = math_ceiling_tokens_per_s(p, f)
    best = accelerator(accelerator_name).measured_matmul_flops_per_s
    measured = math_ceiling_tokens_per_s(best, f) if best else None
    agg, one = rate(aggregate_tokens_per_s, True, b), rate(per_user_tokens_per_s, True, b)
    hover = "batch %{x:.0f} → %{y:,.0f} tokens/s<extra>%{fullData.name}</extra>"
    no_overlap = (dict(line_width=1, opacity=None, dash=None) if thin_no_overlap
                  else dict(line_width=2, opacity=None, dash="dash"))

    def no_overlap_trace(color, y: list, name: str) -> dict:
        line = dict(color=color, width=no_overlap["line_width"])
        if no_overlap["dash"]:
            line["dash"] = no_overlap["dash"]
        trace = dict(type="scatter", x=CURVE, y=y, mode="lines", line=line, name=name, hovertemplate=hover)
        if no_overlap["opacity"] is not None:
            trace["opacity"] = no_overlap["opacity"]
        return trace

    data = [
        dict(type="scatter", x=CURVE, y=mem, mode="lines", line=dict(color=FAINT, width=2, dash="dash"),
             name="memory ceiling, no context (B × BW / (W + B·A))" if activations else
             "memory ceiling, weights only (B × BW / W)", hovertemplate=hover),
        dict(type="scatter", x=list(BATCH_RANGE), y=_or_gone([mth, mth], fits), mode="lines",
             line=dict(color=FAINT, width=2, dash="dot"), name="math ceiling (P / F)", hovertemplate=hover),
        dict(type="scatter", x=list(BATCH_RANGE), y=_or_gone([measured, measured], fits and measured is not None),
             mode="lines", line=dict(color=PALETTE[5], width=1, dash="dashdot"),
             name="math at the best measured matrix multiply" if measured else "no measured matrix multiply",
             hovertemplate=hover),
        dict(type="scatter", x=CURVE, y=_or_gone([rate(aggregate_tokens_per_s, True, x) for x in CURVE], fits),
             mode="lines", line=dict(color=ACCENT, width=3), name="aggregate, math and memory overlapped",
             hovertemplate=hover),
        no_overlap_trace(ACCENT, y=_or_gone([rate(aggregate_tokens_per_s, False, x) for x in CURVE], fits),
                         name="aggregate, no overlap"),
        dict(type="scatter", x=CURVE, y=_or_gone([rate(per_user_tokens_per_s, True, x) for x in CURVE], fits),
             mode="lines", line=dict(color=INK, width=3), name="each user, overlapped", hovertemplate=hover),
        no_overlap_trace(INK, y=_or_gone([rate(per_user_tokens_per_s, False, x) for x in CURVE], fits),
                         name="each user, no overlap"),
        dict(type="scatter", x=[b, b] if fits else [BATCH_RANGE[0] * 1.2, None], y=[agg, one] if fits else
             [TOKENS_RANGE[1] / 3, None], mode="markers+text" if fits else "text",
             marker=dict(size=12, color=[ACCENT, INK]),
             text=[f"batch {b:,}: {agg:,.0f} tokens/s in all", f"{one:,.0f} tokens/s each"] if fits else
             ["the weights do not fit in this accelerator's memory", ""],
             textposition=["top left", "top right"] if fits else ["middle right", "middle right"],
             name="chosen batch", hoverinfo="skip"),
    ]
    if not activations:
        knee = batch_where_math_binds(p, bw, w, f, 0.0, 0.0, 0.0)
        data.append(dict(type="scatter", x=[knee, knee] if fits else [None, None],
                         y=[TOKENS_RANGE[0], mth] if fits else [None, None], mode="lines+markers+text",
                         line=dict(color="black", width=1, dash="dot"), marker=dict(size=[0, 12], color="black"),
                         text=["", f"knee: batch {knee:,.0f}"], textposition=["top right", "top left"],
                         name="knee (R × W / F)", hoverinfo="skip"))
    layout = base_layout(f"{model_name} on the {accelerator_name}, "
                         + ("no context" if activations else "weights only, no context"),
                         "batch (sequences decoded together)", "tokens per second", x_log=True, y_log=True,
                         x_range=BATCH_RANGE, y_range=TOKENS_RANGE, legend=True)
    return {"data": data, "layout": legend_below_slider(layout)}


def roofline_spec(model_name: str, accelerator_name: str, batch: float, activations: bool = True) -> dict:
    """The accelerator's roof with the decode step of ``batch`` sequences on it (no context), and
    the points of every power-of-two batch faintly; the weights alone when ``activations`` is False."""
    p, bw, w, f, act, fits = _setup(model_name, accelerator_name, activations)
    b = max(1, round(batch))
    x, y, ridge = roof(accelerator_name)

    def point(n):
        if not fits:
            return None, None
        i = decode_intensity_flop_per_byte(w, f, n, activation_bytes_per_token=act)
        return i, attainable_flop_per_s(i, p, bw) / TERA

    trail = [point(n) for n in BATCHES]
    i, at = point(b)
    data = [
        dict(type="scatter", x=x, y=y, mode="lines", line=dict(color=ACCENT, width=3), name=accelerator_name,
             hovertemplate="%{x:.3g} FLOP/byte → %{y:.4g} TFLOP/s<extra></extra>"),
        dict(type="scatter", x=[ridge, ridge], y=[TFLOPS_RANGE[0], y[1]], mode="lines+text",
             line=dict(color=ACCENT, width=1, dash="dot"),
             # weights only, the batch-256 point sits at the ridge's top: label the ridge at its foot
             text=["", f"ridge {ridge:.0f}"] if activations else [f"ridge {ridge:.0f}", ""],
             textposition="top left" if activations else "top right", hoverinfo="skip", name="ridge"),
        dict(type="scatter", x=[t[0] for t in trail], y=[t[1] for t in trail], mode="markers+text",
             marker=dict(size=7, color=FAINT), text=[f"{n:,}" for n in BATCHES], textposition="top left",
             textfont=dict(color="#888888", size=11), name="batches 1 to 1,024", hoverinfo="skip"),
        dict(type="scatter", x=[i], y=[at], mode="markers+text", marker=dict(size=14, color=INK),
             textposition="top left", name="decode step",
             text=[f"batch {b:,}: {i:,.0f} FLOP/byte,<br>{at * TERA / p:.1%} of peak math" if fits else ""],
             hovertemplate="%{x:.3g} FLOP/byte → %{y:.4g} TFLOP/s<extra></extra>"),
    ]
    layout = base_layout(f"{model_name} decode on the {accelerator_name} roofline, "
                         + ("no context" if activations else "weights only, no context"),
                         "arithmetic intensity (FLOP per byte moved)", "attainable math rate (dense BF16 TFLOP/s)",
                         x_log=True, y_log=True, x_range=INTENSITY_RANGE, y_range=TFLOPS_RANGE)
    return {"data": data, "layout": layout}


def cost_spec(model_name: str, accelerator_name: str, usd_per_gpu_hour: float) -> dict:
    """USD per million generated tokens against batch at a price per GPU-hour (the roofline's
    overlapped bound); markers at batch 1 and where math starts to bind."""
    p, bw, w, f, act, fits = _setup(model_name, accelerator_name)

    def cost(x):
        return cost_per_million_tokens_usd(usd_per_gpu_hour, aggregate_tokens_per_s(
            p, bw, w, f, x, activation_bytes_per_token=act))

    knee = decode_knee_batch(model(model_name).config, p, bw)
    hover = "batch %{x:.0f} → USD %{y:.4g} per million tokens<extra>%{fullData.name}</extra>"
    data = [
        dict(type="scatter", x=CURVE, y=_or_gone([cost(x) for x in CURVE], fits), mode="lines",
             line=dict(color=PALETTE[2], width=3), name="cost per million tokens", hovertemplate=hover),
        dict(type="scatter", x=[1, knee] if fits else [None, None], y=[cost(1), cost(knee)] if fits else [None, None],
             mode="markers+text", marker=dict(size=12, color=INK), textposition=["top right", "bottom left"],
             name="marks", text=[f"one user at USD {usd_per_gpu_hour:.2f}/h: USD {cost(1):.2f}",
                                 f"batch {knee:,.0f}: USD {cost(knee):.4f}"], hoverinfo="skip"),
    ]
    layout = base_layout(f"Token cost, {model_name} on the {accelerator_name}, no context", "batch (sequences decoded together)", "USD per million generated tokens",
                         x_log=True, y_log=True, x_range=BATCH_RANGE, y_range=COST_RANGE, legend=False)
    return {"data": data, "layout": layout}


BATCH_SLIDER = Control("batch", "batch", BATCHES, kind="slider", stops=doubling_stops(min(BATCHES), max(BATCHES)))
PRICE_SLIDER = Control("usd_per_gpu_hour", "USD per GPU-hour", PRICES, kind="slider",
                       stops=step_stops(min(PRICES), max(PRICES), 0.1))


def _panel_over(spec, slider: Control, value: float, models: Sequence[str], accelerators: Sequence[str],
                model_name: str, accelerator_name: str, div_id: str):
    """Accelerator dropdown and ``slider`` (both modes), model dropdown (with a kernel)."""
    controls = [Control("accelerator_name", "accelerator", list(accelerators)),
                Control("model_name", "model", list(models)), slider]
    values = dict(model_name=model_name, accelerator_name=accelerator_name, **{slider.name: value})
    return _panel(spec, values, controls, div_id, static_dropdown="accelerator_name", static_slider=slider.name)


def throughput_panel(models: Sequence[str], accelerators: Sequence[str], model_name: str, accelerator_name: str,
                     batch: float, div_id: str = "fig-batch-throughput", activations: bool = True,
                     thin_no_overlap: bool = False):
    """``throughput_spec`` with an accelerator dropdown and a batch slider (model dropdown with a kernel)."""
    spec = (throughput_spec if activations and not thin_no_overlap
            else partial(throughput_spec, activations=activations, thin_no_overlap=thin_no_overlap))
    return _panel_over(spec, BATCH_SLIDER, batch, models, accelerators, model_name, accelerator_name, div_id)


def roofline_panel(models: Sequence[str], accelerators: Sequence[str], model_name: str, accelerator_name: str,
                   batch: float, div_id: str = "fig-batch-roofline", activations: bool = True):
    """``roofline_spec`` with an accelerator dropdown and a batch slider (model dropdown with a kernel)."""
    spec = roofline_spec if activations else partial(roofline_spec, activations=False)
    return _panel_over(spec, BATCH_SLIDER, batch, models, accelerators, model_name, accelerator_name, div_id)


def cost_panel(models: Sequence[str], accelerators: Sequence[str], model_name: str, accelerator_name: str,
               usd_per_gpu_hour: float, div_id: str = "fig-batch-cost"):
    """``cost_spec`` with an accelerator dropdown and a price slider (model dropdown with a kernel)."""
    return _panel_over(cost_spec, PRICE_SLIDER, usd_per_gpu_hour, models, accelerators, model_name,
                       accelerator_name, div_id)
