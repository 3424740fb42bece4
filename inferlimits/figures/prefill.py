"""The prefill figures. The first: above, the prefill point walking along the roofline as the
prompt grows; below, the time to first token against prompt length, split into its math,
attention and memory parts, with the crossover prompt length and the length at which attention
takes a tenth of the math. The second: one request along a time axis, the prefill of its prompt as
one block and then its decode steps one after another, with the time to first token and the time
per output token marked."""
from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cache

from inferlimits.arithmetic.generation import (prefill_crossover_tokens, prefill_point, prompt_tokens_at_attention_share,
                                               request_timeline)
from inferlimits.data.hardware import accelerator
from inferlimits.figures.interactive import Control, panel as _panel
from inferlimits.arithmetic.kvcache import fit
from inferlimits.data.models import kv_bytes_per_token, model, weight_bytes
from inferlimits.arithmetic.roofline import attainable_flop_per_s, bound
from inferlimits.data.units import TERA
from inferlimits.figures import ACCENT, FAINT, INK, PALETTE, base_layout
from inferlimits.figures import roofline

PRECISIONS = ("BF16", "FP8", "INT4")
PROMPTS = tuple(2 ** k for k in range(4, 18))        # 16 .. 131,072 tokens: the slider's stops (both modes,
                                                      # so exercise 3's stops are the same with a kernel)
INTENSITY_RANGE = (1.0, 1e6)                          # FLOP per byte, left panel
TFLOPS_RANGE = (1.0, 5_000.0)                         # TFLOP/s, left panel
SECONDS_RANGE = (1e-4, 1e3)                           # time to first token, right panel
ATTENTION_SHARE = 0.1                                 # "attention starts to matter": a tenth of the FLOPs
CURVE = [16 * 2 ** (k / 3) for k in range(3 * 13 + 1)]  # 16 .. 131,072, three points per doubling


def _seconds(t: float) -> str:
    return f"{t * 1e3:,.1f} ms" if t < 1 else f"{t:,.2f} s"


def spec(names: Sequence[str], accelerator_name: str, model_name: str, weight_precision: str,
         prompt_tokens: float) -> dict:
    """Prefill of ``prompt_tokens`` on ``accelerator_name``: its point on the roofline, and the time
    to first token over the whole range of prompt lengths, each drawn only where the weights and
    the prompt's cache fit in the usable memory (and up to the model's supported context)."""
    a = accelerator(accelerator_name)
    m = model(model_name)
    c = m.config
    P, BW = a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s
    stored, K = weight_bytes(c, weight_precision), kv_bytes_per_token(c)
    crossover = prefill_crossover_tokens(c, P, BW, weight_precision)
    cross = crossover if math.isfinite(crossover) else None
    attention_from = prompt_tokens_at_attention_share(c, ATTENTION_SHARE)
    attention_from = attention_from if math.isfinite(attention_from) else None  # a window may keep it below

    def runs(S: float) -> bool:
        return S <= m.context_length and fit(a.capacity_bytes, stored, K, 1, S).fits

    def at(S: float):
        return prefill_point(c, P, BW, S, weight_precision) if runs(S) else None

    # left: the roofs, the path prefill walks as the prompt grows, and where this prompt sits
    fx, fy = [], []
    for n in names:
        x, y, _ = roofline.roof(n)
        fx += [INTENSITY_RANGE[0], x[1], INTENSITY_RANGE[1], None]
        fy += [INTENSITY_RANGE[0] * accelerator(n).bandwidth_bytes_per_s / TERA, y[1], y[1], None]
    _, ry, ridge = roofline.roof(accelerator_name)
    points = [at(s) for s in PROMPTS]
    path_x = [x.intensity if x else None for x in points]
    path_y = [attainable_flop_per_s(i, P, BW) / TERA if i else None for i in path_x]
    this = at(prompt_tokens)
    here = this.intensity if this else None
    reached = attainable_flop_per_s(here, P, BW) if this else None
    ttft = this.time_s if this else None
    why_not = "beyond the model's context" if prompt_tokens > m.context_length else "does not fit in memory"
    label = f"{bound(here, P, BW)}: {reached / P:.0%} of peak" if this else why_not
    left = [
        dict(type="scatter", x=fx, y=fy, mode="lines", line=dict(color=FAINT, width=1), hoverinfo="skip",
             name="other accelerators", showlegend=False),
        dict(type="scatter", x=[INTENSITY_RANGE[0], ridge, INTENSITY_RANGE[1]],
             y=[INTENSITY_RANGE[0] * BW / TERA, ry[1], ry[1]], mode="lines", line=dict(color=ACCENT, width=3),
             name=f"{accelerator_name} roof", showlegend=False),
        dict(type="scatter", x=path_x, y=path_y, mode="markers", marker=dict(size=6, color=FAINT),
             name="prompts of 16 to 131,072 tokens", showlegend=False,
             text=[f"{s:,} tokens" for s in PROMPTS], hovertemplate="%{text}: %{x:,.0f} FLOP/byte<extra></extra>"),
        dict(type="scatter", x=[here or ridge], y=[reached / TERA if this else TFLOPS_RANGE[0] * 3],
             mode="markers+text" if this else "text", marker=dict(size=14, color=INK),
             text=[label], textposition="bottom center", cliponaxis=False,
             name="this prompt",
             showlegend=False, hovertemplate="%{x:,.0f} FLOP/byte → %{y:,.0f} TFLOP/s<extra></extra>"),
    ]

    # right: time to first token and its parts
    curve = [at(s) for s in CURVE]
    ttft_curve = [x.time_s if x else None for x in curve]
    math_curve = [x.flops / P if x else None for x in curve]
    attention_curve = [x.attention_flops / P if x else None for x in curve]
    memory_curve = [x.bytes / BW if x else None for x in curve]
    right = [
        dict(type="scatter", x=CURVE, y=memory_curve, mode="lines", line=dict(color=PALETTE[0], width=2, dash="dash"),
             name="memory time (W + S·(K + A)) / BW", xaxis="x2", yaxis="y2"),
        dict(type="scatter", x=CURVE, y=math_curve, mode="lines", line=dict(color=PALETTE[2], width=2, dash="dash"),
             name="math time, prefill FLOPs / P", xaxis="x2", yaxis="y2"),
        dict(type="scatter", x=CURVE, y=attention_curve, mode="lines", line=dict(color=PALETTE[3], width=2, dash="dot"),
             name="of which attention (grows with S²)", xaxis="x2", yaxis="y2"),
        dict(type="scatter", x=CURVE, y=ttft_curve, mode="lines", line=dict(color=ACCENT, width=3),
             name="time to first token, the larger of the two", xaxis="x2", yaxis="y2"),
        dict(type="scatter", x=[cross, cross, None, attention_from, attention_from],
             y=[SECONDS_RANGE[0], SECONDS_RANGE[1] / 3, None, SECONDS_RANGE[0], SECONDS_RANGE[1] / 30],
             text=["", f"compute-bound from {crossover:,.0f}" if cross else "", "", "",
                   f"attention a tenth from {attention_from:,.0f}" if attention_from else ""],
             mode="lines+text", textposition="middle right", cliponaxis=False,
             line=dict(color="#566573", width=1, dash="dot"),
             hoverinfo="skip", name="guides", showlegend=False, xaxis="x2", yaxis="y2"),
        dict(type="scatter", x=[prompt_tokens], y=[ttft if this else SECONDS_RANGE[0] * 10],
             mode="markers+text" if this else "text", marker=dict(size=14, color=INK),
             text=[f"{prompt_tokens:,.0f} tokens: {_seconds(ttft)}" if this else
                   f"{prompt_tokens:,.0f} tokens: {why_not}"], textposition="top center", cliponaxis=False,
             name="this prompt", showlegend=False, xaxis="x2", yaxis="y2",
             hovertemplate="%{x:,.0f} tokens → %{y:.3g} s<extra></extra>"),
    ]

    layout = base_layout(f"Prefill of {model_name} ({weight_precision} weights) on the {accelerator_name}",
                         "arithmetic intensity (FLOP per byte)", "attainable TFLOP/s",
                         x_log=True, y_log=True, x_range=INTENSITY_RANGE, y_range=TFLOPS_RANGE, legend=True)
    # two panels, one above the other: the roofline on top, the time to first token below
    layout["height"] = 900
    layout["yaxis"]["domain"] = [0.63, 1.0]
    layout["xaxis2"] = dict(title="prompt length S (tokens)", type="log", dtick=1, anchor="y2", range=[0.9, 5.3])
    layout["yaxis2"] = dict(title="seconds (ideal)", type="log", dtick=1, anchor="x2", range=[-4, 3],
                            domain=[0.0, 0.4], exponentformat="power")
    layout["legend"] = dict(orientation="h", x=0.0, y=0.455, xanchor="left", yanchor="middle")
    layout["margin"] = dict(l=70, r=30, t=80, b=60)
    return {"data": left + right, "layout": layout}


def panel(names: Sequence[str], accelerator_name: str, model_names: Sequence[str], model_name: str,
          weight_precision: str = "BF16", prompt_tokens: float = 2048, div_id: str = "fig-prefill"):
    """Accelerator dropdown and prompt-length slider (and, with a kernel, model and weight-precision
    dropdowns) over the prefill figure."""
    controls = [Control("accelerator_name", "accelerator", list(names)),
                Control("model_name", "model", list(model_names)),
                Control("weight_precision", "weight precision", PRECISIONS),
                Control("prompt_tokens", "prompt tokens", PROMPTS, kind="slider")]
    values = dict(names=list(names), accelerator_name=accelerator_name, model_name=model_name,
                  weight_precision=weight_precision, prompt_tokens=prompt_tokens)
    return _panel(spec, values, controls, div_id, static_dropdown="accelerator_name", static_slider="prompt_tokens")


# ---- one request along a time axis ------------------------------------------------------------

TIMELINE_PROMPTS = tuple(2 ** k for k in range(7, 15))   # 128 .. 16,384 tokens: the timeline's slider
OUTPUT_TOKENS = 32                                        # the answer the timeline draws: 31 decode steps
TIME_STEP_MS = 50                                         # the time axis ends on a multiple of this
DIGITS = 3                                                # the drawn times, in ms, to a µs
_ROW = 1.6                                                # the blocks' height on the hidden y axis
_TTFT_Y, _TICKS_Y, _TPOT_Y = 1, -1, -2                    # where the marks sit, above and below the blocks


def _request(accelerator_name: str, model_name: str, weight_precision: str, prompt_length: float,
             output_tokens: int):
    """The request's timeline, or None where it does not fit: beyond the model's context, or the
    weights and the request's cache beyond the usable memory."""
    a, m = accelerator(accelerator_name), model(model_name)
    tokens = prompt_length + output_tokens - 1
    if tokens > m.context_length or not fit(a.capacity_bytes, weight_bytes(m.config, weight_precision),
                                            kv_bytes_per_token(m.config), 1, tokens).fits:
        return None
    return request_timeline(m.config, a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s, prompt_length,
                            output_tokens, weight_precision)


@cache
def timeline_range_ms(names: tuple[str, ...], model_name: str, output_tokens: int = OUTPUT_TOKENS) -> float:
    """The time axis's end, the same for every control value: the slowest request the figure can
    show (its longest prompt, on any of its accelerators, with any weight precision), rounded up."""
    ends = [r.end_to_end_s for n in names for p in PRECISIONS
            if (r := _request(n, model_name, p, max(TIMELINE_PROMPTS), output_tokens)) is not None]
    return TIME_STEP_MS * math.ceil(max(ends, default=TIME_STEP_MS / 1e3) * 1e3 / TIME_STEP_MS)


def timeline_spec(names: Sequence[str], accelerator_name: str, model_name: str, weight_precision: str,
                  prompt_length: float, output_tokens: int = OUTPUT_TOKENS) -> dict:
    """One request along a time axis (``generation.request_timeline``): the prefill of its prompt
    as one block, then its decode steps end to end, one thin block each, with the time to first
    token (TTFT) and the time per output token (TPOT) marked. Times in ms; the axis is the same
    for every control value (``timeline_range_ms``)."""
    end = timeline_range_ms(tuple(names), model_name, output_tokens)
    r = _request(accelerator_name, model_name, weight_precision, prompt_length, output_tokens)
    steps = output_tokens - 1
    prefill_x, step_x, ticks = [], [], []
    ttft_x, ttft_text, tpot_x, tpot_text = [0.0], ["does not fit in memory"], [], []
    if r is not None:
        ttft, tpot = r.time_to_first_token_s * 1e3, r.time_per_output_token_s * 1e3
        prefill_x = [round(ttft, DIGITS)]
        step_x = [round(t * 1e3, DIGITS) for t in r.decode_steps_s]
        ticks = [round(t * 1e3, DIGITS) for t in r.token_times_s]
        ttft_x, ttft_text = [0.0, ttft], [f"time to first token {_seconds(r.time_to_first_token_s)}", ""]
        label = f"time per output token {tpot:,.2f} ms"
        # the label runs right from the decode steps' start, or left from their end, whichever
        # keeps it inside the axis
        tpot_x, tpot_text = [ttft, ticks[-1]], ([label, ""] if ttft < end / 2 else ["", label])
    bar = dict(type="bar", orientation="h", width=_ROW, marker_line=dict(color="white", width=0.5))
    data = [
        dict(bar, x=prefill_x, y=[0] * len(prefill_x), marker_color=ACCENT, name="prefill, the prompt in one pass",
             hovertemplate="prefill: %{x:,.1f} ms<extra></extra>"),
        dict(bar, x=step_x, y=[0] * len(step_x),
             marker_color=[INK if j % 2 else PALETTE[6] for j in range(1, output_tokens)],
             name=f"{steps} decode steps, a token each",
             hovertemplate="decode step: %{x:.3f} ms<extra></extra>"),
        dict(type="scatter", x=ticks, y=[_TICKS_Y] * len(ticks),
             mode="markers", marker=dict(symbol="line-ns-open", size=9, color=INK, line=dict(width=1.5, color=INK)),
             hovertemplate="a token appears at %{x:,.1f} ms<extra></extra>",
             name="a new token appears"),
        dict(type="scatter", x=ttft_x, y=[_TTFT_Y] * len(ttft_x), mode="lines+markers+text", text=ttft_text,
             textposition=["top right", "top left"], cliponaxis=False, hoverinfo="skip",
             marker=dict(symbol="line-ns-open", size=12, color=ACCENT, line=dict(width=2, color=ACCENT)),
             line=dict(color=ACCENT, width=2), name="time to first token (TTFT)", showlegend=False),
        dict(type="scatter", x=tpot_x, y=[_TPOT_Y] * len(tpot_x), mode="lines+markers+text", text=tpot_text,
             textposition=["bottom right", "bottom left"], cliponaxis=False, hoverinfo="skip",
             marker=dict(symbol="line-ns-open", size=12, color=INK, line=dict(width=2, color=INK)),
             line=dict(color=INK, width=2), name="time per output token (TPOT)", showlegend=False),
    ]
    layout = base_layout(f"One request to {model_name} on the {accelerator_name}, alone: ideal times",
                         "time since its prefill began (ms)", "", x_range=(0.0, end),
                         y_range=(_TPOT_Y - 0.9, _TTFT_Y + 0.9), legend=True)
    layout.update(height=380, barmode="stack", margin=dict(l=30, r=30, t=80, b=60),
                  legend=dict(orientation="h", x=0.0, y=-0.3, xanchor="left", yanchor="top",
                              traceorder="normal"))
    layout["yaxis"].update(visible=False)
    layout["xaxis"].update(zeroline=False)
    return {"data": data, "layout": layout}


def timeline_panel(names: Sequence[str], accelerator_name: str, model_name: str, weight_precision: str = "BF16",
                   prompt_length: float = 2048, div_id: str = "fig-request-timeline"):
    """Accelerator dropdown and prompt-length slider (and, with a kernel, a weight-precision
    dropdown) over one request's timeline."""
    controls = [Control("accelerator_name", "accelerator", list(names)),
                Control("weight_precision", "weight precision", PRECISIONS),
                Control("prompt_length", "prompt tokens", TIMELINE_PROMPTS, kind="slider")]
    values = dict(names=list(names), accelerator_name=accelerator_name, model_name=model_name,
                  weight_precision=weight_precision, prompt_length=prompt_length)
    return _panel(timeline_spec, values, controls, div_id, static_dropdown="accelerator_name",
                  static_slider="prompt_length")
