"""The index card as one panel (chapter 11): both decode ceilings, the rate a good compiled engine
is expected to reach with its 80% interval, and a measured rate (tokens/s); where a decode step's
time goes (ms), the all-reduces on several GPUs among it; and the card's verdict and levers as text."""
from __future__ import annotations

from collections.abc import Sequence

from inferlimits.data.hardware import MATH_PRECISIONS, accelerator
from inferlimits.arithmetic.indexcard import INTERVAL_SHARE, interval_text, read_card, summary_lines
from inferlimits.figures.interactive import Control, doubling_stops, panel as _panel
from inferlimits.arithmetic.parallel import TENSOR_PARALLEL_DEGREES
from inferlimits.arithmetic.precision import runnable_math
from inferlimits.figures import PALETTE, base_layout

TOKENS_RANGE = (0.1, 1e7)             # tokens/s, fixed axis
MS_RANGE = (1e-3, 1e5)                # ms per decode step, fixed axis
PRECISIONS = ("BF16", "FP8", "INT4")
WEIGHT_PRECISIONS = ("BF16", "FP8", "INT8", "INT4", "NVFP4", "MXFP4")
BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)   # the powers of two the text names
CONTEXTS = doubling_stops(128, 131_072)   # tokens, four stops a doubling
PROMPTS = doubling_stops(16, 32_768)      # tokens
MEASURED = ("none", 10, 29, 100, 300, 1_000, 3_000, 10_000, 30_000, 100_000)
#: the top panel's rows: the ceilings, the expected rate with its interval, the measurement
RATE_ROWS = ("memory ceiling", "math ceiling", f"expected ({INTERVAL_SHARE:.0%})", "measured")
#: the middle panel's bars: where a decode step's time goes, and the measured step
STEP_PARTS = ("reading the weights", "reading the caches", "moving the activations", "math", "all-reduces",
              "measured step")


def _or_none(x: float) -> float | None:
    return float(f"{x:.4g}") if x > 0 else None


def spec(accelerator_name: str, model_name: str, weight_precision: str, kv_precision: str, batch: float,
         context_tokens: float, prompt_tokens: float, measured: object, math_precision: str = "BF16",
         gpus: int = 1) -> dict:
    """The card for one setup, drawn: ceilings, the expected rate and its interval, and the
    measurement; time per step; verdict and levers."""
    title = f"Index card: {model_name} on the {accelerator_name}" + (f" × {gpus}" if gpus > 1 else "")
    math_precision, problem = runnable_math(accelerator(accelerator_name), weight_precision, math_precision)
    if problem:  # a pair the part cannot run: the card with BF16 math, and why
        title += f" ({problem}: math in BF16)"
    rate = 0.0 if measured == "none" else float(measured)
    # whole sequences and tokens, whatever a live slider passes
    card = read_card(accelerator_name, model_name, weight_precision, kv_precision, max(1, round(batch)),
                     round(context_tokens), max(1, round(prompt_tokens)), rate, math_precision=math_precision,
                     gpus=gpus)
    ms = 1e3
    if card.fits:
        lower = "memory" if card.memory_ceiling <= card.math_ceiling else "math"
        rates = [card.memory_ceiling, card.math_ceiling, rate]
        binds = " ← binds" + (f"; {card.ceiling:,.0f} with the all-reduces" if card.gpus > 1 else "")
        labels = [f"{card.memory_ceiling:,.0f}" + (binds if lower == "memory" else ""),
                  f"{card.math_ceiling:,.0f}" + (binds if lower == "math" else ""),
                  f"{rate:,.0f} ({card.share_of_ceiling:.0%}; {card.position} the interval)" if rate else "none given"]
        # the bytes in three bars, as the verdict names the largest of them (indexcard.memory_verdict)
        step_ms = [card.weights_time_s * ms, card.cache_time_s * ms, card.activation_time_s * ms,
                   card.math_time_s * ms, card.communication_time_s * ms, card.batch / rate * ms if rate else 0.0]
    else:  # no rate for a setup that cannot run
        lower = None
        rates, step_ms = [0.0, 0.0, rate], [0.0] * len(STEP_PARTS)
        labels = ["does not fit", "does not fit", f"{rate:,.0f} (not judged)" if rate else "none given"]
    # what a good compiled engine is expected to reach: low, expected, high (indexcard.expected_rate)
    p = card.expected
    expected = [p.low, p.expected, p.high] if p else [None, None, None]
    data = [
        dict(type="bar", orientation="h", x=[_or_none(r) for r in rates],
             y=[RATE_ROWS[0], RATE_ROWS[1], RATE_ROWS[3]], text=labels, textposition="outside",
             marker=dict(color=["#1f4e79", "#2e8b57", "#c0392b"]), name="tokens/s", xaxis="x", yaxis="y",
             hovertemplate="%{y}: %{x:,.4g} tokens/s<extra></extra>", cliponaxis=False),
        dict(type="scatter", x=[_or_none(x) for x in expected] if p else expected, y=[RATE_ROWS[2]] * 3,
             mode="lines+markers+text", xaxis="x", yaxis="y",
             line=dict(color=PALETTE[5], width=6),
             marker=dict(symbol=["line-ns-open", "diamond", "line-ns-open"], size=[16, 12, 16], color=PALETTE[5]),
             text=["", "", interval_text(p) if p else ""],
             textposition="middle right", cliponaxis=False, name="expected",
             # the same for every state, so drawn once per trace, not once per slider stop
             hovertext=[f"low end of the {INTERVAL_SHARE:.0%} interval", "expected of a good compiled engine",
                        f"high end of the {INTERVAL_SHARE:.0%} interval"],
             hovertemplate="%{hovertext}: %{x:,.4g} tokens/s<extra></extra>"),
        dict(type="bar", orientation="h", x=[_or_none(t) for t in step_ms],
             y=list(STEP_PARTS),
             text=[f"{t:,.3g} ms" if t else "–" for t in step_ms], textposition="outside",
             marker=dict(color=["#1f4e79", "#7d3c98", PALETTE[6], "#2e8b57", PALETTE[3], "#c0392b"]),
             name="ms per step",
             xaxis="x2", yaxis="y2", hovertemplate="%{y}: %{x:,.4g} ms<extra></extra>", cliponaxis=False),
        dict(type="scatter", x=[0], y=[1], mode="text", text=["<br>".join(summary_lines(card))],
             textposition="bottom right", textfont=dict(size=13), xaxis="x3", yaxis="y3", hoverinfo="skip",
             name="verdict", cliponaxis=False),
    ]
    layout = base_layout(title, "aggregate decode tokens per second", "", x_log=True, x_range=TOKENS_RANGE)
    # three stacked panels: ceilings (top), time per step (middle), the card's answer as text (bottom)
    layout["xaxis"].update(domain=[0.2, 0.9], anchor="y")
    layout["yaxis"] = dict(domain=[0.78, 1.0], type="category", categoryorder="array", categoryarray=list(RATE_ROWS),
                           autorange="reversed", anchor="x")
    axis2 = base_layout("", "time per decode step (ms)", "", x_log=True, x_range=MS_RANGE)["xaxis"]
    layout["xaxis2"] = {**axis2, "domain": [0.2, 0.9], "anchor": "y2"}
    layout["yaxis2"] = dict(domain=[0.47, 0.68], type="category", autorange="reversed", anchor="x2")
    layout["xaxis3"] = dict(domain=[0.0, 1.0], range=[0, 1], visible=False, anchor="y3")
    layout["yaxis3"] = dict(domain=[0.0, 0.35], range=[0, 1], visible=False, anchor="x3")
    layout["height"] = 900
    layout["margin"] = dict(l=20, r=20, t=70, b=40)
    return {"data": data, "layout": layout}


def panel(names: Sequence[str], model_names: Sequence[str], accelerator_name: str = "B200 (HGX)",
          model_name: str = "Llama-3.1-8B", weight_precision: str = "BF16", kv_precision: str = "BF16",
          batch: float = 1, context_tokens: float = 8192, prompt_tokens: float = 2048, measured: object = "none",
          math_precision: str = "BF16", gpus: int = 1, div_id: str = "fig-index-card"):
    """Every input live with a kernel; without one, an accelerator dropdown and a batch slider."""
    controls = [Control("accelerator_name", "accelerator", list(names)),
                Control("model_name", "model", list(model_names)),
                Control("weight_precision", "weights", WEIGHT_PRECISIONS),
                Control("math_precision", "math", MATH_PRECISIONS),
                Control("kv_precision", "KV cache", PRECISIONS),
                Control("batch", "batch (B)", BATCHES, kind="slider"),
                Control("context_tokens", "context (L)", CONTEXTS, kind="slider"),
                Control("prompt_tokens", "prompt (S)", PROMPTS, kind="slider"),
                Control("gpus", "GPUs (tensor parallel)", TENSOR_PARALLEL_DEGREES),
                Control("measured", "measured tokens/s", MEASURED)]
    values = dict(accelerator_name=accelerator_name, model_name=model_name, weight_precision=weight_precision,
                  kv_precision=kv_precision, batch=batch, context_tokens=context_tokens, prompt_tokens=prompt_tokens,
                  measured=measured, math_precision=math_precision, gpus=gpus)
    return _panel(spec, values, controls, div_id, static_dropdown="accelerator_name", static_slider="batch")
