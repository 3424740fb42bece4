"""The figures of serving at scale (chapters 9 and 10): tensor parallelism against the GPU count, expert
parallelism narrow and wide (a table), the gain
of speculative decoding against the batch, and the frontier of each user's speed against the
fleet's throughput."""
from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cache

from IPython.display import Markdown

from inferlimits.data.hardware import accelerator
from inferlimits.figures.interactive import Control, doubling_stops, panel as _panel, step_stops
from inferlimits.data.measurements import measurements
from inferlimits.data.models import model
from inferlimits.arithmetic.parallel import (TENSOR_PARALLEL_DEGREES, expert_parallel_on, measured_exchanges_s,
                                             tensor_parallel_on)
from inferlimits.arithmetic.serving import READING_TOKENS_PER_S, STEP_TOKENS, serving_point
from inferlimits.arithmetic.speculative import EXAMPLE_ACCEPTANCE, EXAMPLE_DRAFT_TOKENS, speculative_on
from inferlimits.data.units import GB
from inferlimits.figures import ACCENT, FAINT, INK, PALETTE, base_layout
from inferlimits.figures.batching import rounded
from inferlimits.figures.tables import _table

# ---- tensor parallelism against the GPU count ----------------------------------------------------

GPUS = TENSOR_PARALLEL_DEGREES
TP_SETUPS = {("Llama-3.1-8B", "H100 SXM"): "Llama-3.1-8B on H100s",
             ("Llama-3.1-70B", "H100 SXM"): "Llama-3.1-70B on H100s",
             ("Llama-2-70B", "A100 80GB SXM"): "Llama-2-70B on A100s (measured)",
             ("Llama-2-7B", "A100 80GB SXM"): "Llama-2-7B on A100s (measured)",
             ("Llama-3.2-1B", "B200 (HGX)"): "Llama-3.2-1B on B200s",
             ("Llama-3.1-70B", "L40S"): "Llama-3.1-70B on L40S cards (PCIe)"}
USER_RANGE = (1.0, 3_000.0)
MS_RANGE = (0.001, 1_000.0)


def measured_tp(model_name: str, accelerator_name: str, precision: str) -> dict[int, float]:
    """Published single-stream decode rates of ``model_name`` on ``accelerator_name`` at one
    precision, by GPU count (tokens/s, the rows of ``data/measurements.toml`` at batch 1)."""
    return {m.gpus: m.decode_tokens_per_s(1) for m in measurements().values()
            if m.model == model_name and m.accelerator == accelerator_name and m.batch == 1
            and m.weight_precision == precision and m.metric == "tokens_per_s" and m.clear}


@cache
def _tp(model_name, accelerator_name, precision, batch, context_tokens):
    a, c = accelerator(accelerator_name), model(model_name).config
    math_p = precision if a.supports(precision) else "BF16"
    return tuple(tensor_parallel_on(a, c, T, batch, context_tokens, precision, "BF16", math_p) for T in GPUS)


def tp_spec(model_name: str, accelerator_name: str, precision: str, gpus: int, batch: float,
            context_tokens: float) -> dict:
    """Two panels against the GPU count T: each user's tokens/s (with published runs where the
    data has them), and one GPU's time per step by term (memory, math, communication)."""
    steps = _tp(model_name, accelerator_name, precision, batch, context_tokens)
    here = steps[GPUS.index(gpus)]
    ok = [s.fits for s in steps]
    keep = lambda vals: rounded([v if f else None for v, f in zip(vals, ok)])  # noqa: E731
    seen = measured_tp(model_name, accelerator_name, precision)
    label = (f"T = {gpus}: {here.weight_bytes_per_gpu / GB:,.1f} GB of weights per GPU, "
             f"{here.communication_s * 1e3:,.2f} ms communicating, {here.per_user:,.0f} tokens/s per user"
             if here.fits else f"T = {gpus}: does not fit ({here.weight_bytes_per_gpu / GB:,.0f} GB of weights per GPU)")
    x = list(GPUS)
    hover = "T = %{x}: %{y:,.4g}<extra>%{fullData.name}</extra>"
    data = [
        dict(type="scatter", x=x, y=keep([s.per_user for s in steps]), mode="lines+markers",
             line=dict(color=ACCENT, width=3), name="tokens/s per user (ceiling)", xaxis="x", yaxis="y",
             hovertemplate=hover),
        dict(type="scatter", x=sorted(seen), y=rounded([seen[t] for t in sorted(seen)]), mode="markers",
             marker=dict(color=INK, size=10, symbol="diamond"), name="published runs (gpt-fast)", xaxis="x",
             yaxis="y", hovertemplate=hover),
        dict(type="scatter", x=[gpus], y=rounded([here.per_user if here.fits else None]), mode="markers",
             marker=dict(color=INK, size=12), name="this GPU count", xaxis="x", yaxis="y", hoverinfo="skip"),
        dict(type="scatter", x=[GPUS[0]], y=[USER_RANGE[1] / 1.5], mode="text", text=[label], textposition="bottom right",
             name="at this GPU count", xaxis="x", yaxis="y", hoverinfo="skip", showlegend=False),
        dict(type="scatter", x=x, y=keep([s.memory_s * 1e3 for s in steps]), mode="lines+markers",
             line=dict(color=INK, width=3), name="memory: weights, caches, activations (ms)", xaxis="x2", yaxis="y2",
             hovertemplate=hover),
        dict(type="scatter", x=x, y=keep([s.math_s * 1e3 for s in steps]), mode="lines+markers",
             line=dict(color=PALETTE[2], width=2, dash="dot"), name="math (ms)", xaxis="x2", yaxis="y2",
             hovertemplate=hover),
        dict(type="scatter", x=x, y=keep([s.communication_s * 1e3 or None for s in steps]), mode="lines+markers",
             line=dict(color=ACCENT, width=2, dash="dash"), name="communication (ms)", xaxis="x2", yaxis="y2",
             hovertemplate=hover),
    ]
    title = (f"{model_name}, {precision} weights, on T × {accelerator_name} "
             f"(B = {batch:,.0f}, L = {context_tokens:,.0f})")
    layout = base_layout(title, "GPUs in tensor parallelism (T)", "", x_log=True, legend=True)
    axis = dict(layout["xaxis"], tickvals=x, ticktext=[str(t) for t in x], range=[-0.1, math.log10(GPUS[-1]) + 0.1])
    layout["xaxis"] = dict(axis, title=None, anchor="y", matches="x2", showticklabels=False)
    layout["xaxis2"] = dict(axis, anchor="y2")
    layout["yaxis"] = dict(title="tokens/s per user", type="log", dtick=1, domain=[0.55, 1.0], anchor="x",
                           range=[math.log10(v) for v in USER_RANGE])
    layout["yaxis2"] = dict(title="one GPU's step (ms)", type="log", dtick=1, domain=[0.0, 0.45], anchor="x2",
                            range=[math.log10(v) for v in MS_RANGE])
    layout["legend"] = dict(orientation="h", x=0, y=-0.15, yanchor="top")
    layout["height"] = 760
    layout["margin"] = dict(l=80, r=20, t=100, b=170)
    return {"data": data, "layout": layout}


def tp_panel(model_names, accelerator_names, model_name: str = "Llama-3.1-70B", accelerator_name: str = "H100 SXM",
             precision: str = "BF16", gpus: int = 4, batch: float = 1, context_tokens: float = 0,
             div_id: str = "fig-tensor-parallel"):
    """Model, accelerator and precision as dropdowns, GPU count, batch and context as sliders with
    a kernel; on a page without one, a dropdown over ``TP_SETUPS`` and the GPU-count slider."""
    controls = [Control("model_name", "model", list(model_names)),
                Control("accelerator_name", "accelerator", list(accelerator_names)),
                Control("precision", "weights and math", ("BF16", "FP8")),
                Control("gpus", "GPUs (T)", GPUS, kind="slider"),
                Control("batch", "batch (B)", (1, 8, 64, 256), kind="slider", stops=doubling_stops(1, 256, 1)),
                Control("context_tokens", "context (L)", (0, 4096), kind="slider",
                        stops=(0, *doubling_stops(1024, 32_768, 1)))]
    static = Control(("model_name", "accelerator_name"), "model and GPUs", list(TP_SETUPS), labels=TP_SETUPS)
    values = dict(model_name=model_name, accelerator_name=accelerator_name, precision=precision, gpus=gpus,
                  batch=batch, context_tokens=context_tokens)
    return _panel(tp_spec, values, controls, div_id, static_dropdown=static, static_slider="gpus")


# ---- expert parallelism, narrow and wide (chapter 9) ----------------------------------------------

def expert_layouts(model_name: str, accelerator_name: str, widths: Sequence[int], sequences_per_gpu: int,
                   context_tokens: float, weight_precision: str = "FP8", kv_precision: str = "BF16",
                   math_precision: str = "FP8") -> Markdown:
    """Expert parallelism of ``model_name`` over each GPU count in ``widths``, with the same
    sequences on each GPU (``parallel.expert_parallel_on``): what each GPU holds and reads, then the
    exchanges and each user's tokens/s at the book's exchange times (``parallel.exchange_time_s``)
    and at DeepEP's measured ones (``parallel.measured_exchanges_s``, the mean of dispatch and
    combine for both of a layer's exchanges; "–" where the data has no measurement)."""
    a, c = accelerator(accelerator_name), model(model_name).config
    rows = []
    for G in widths:
        def on(exchange_s=None, G=G):
            return expert_parallel_on(a, c, G, sequences_per_gpu * G, context_tokens, weight_precision,
                                      kv_precision, math_precision, exchange_s=exchange_s)
        book = on()
        try:
            seen = on(sum(measured_exchanges_s(G)) / 2)
            measured = [f"{seen.communication_s * 1e3:,.1f}", f"{seen.per_user:,.1f}"]
        except ValueError:
            measured = ["–", "–"]
        rows.append([G, f"{book.weight_bytes_per_gpu / GB:,.1f}", f"{book.memory_s * 1e3:,.2f}",
                     f"{book.communication_s * 1e3:,.2f}", f"{book.per_user:,.1f}", *measured])
    return _table(["GPUs", "weights per GPU (GB)", "memory (ms)", "exchanges, book's times (ms)",
                   "per user, book's times (tokens/s)", "exchanges, DeepEP's times (ms)",
                   "per user, DeepEP's times (tokens/s)"], rows, "rrrrrrr")


# ---- speculative decoding against the batch ------------------------------------------------------

SPEC_BATCHES = doubling_stops(1, 1024, 2)
ACCEPTANCES = step_stops(0.5, 0.9, 0.1)
DRAFT_LENGTHS = (1, 2, 4, 8)
SPEEDUP_RANGE = (0.0, 5.0)
DRAFT = "Llama-3.2-1B"


@cache
def _gains(model_name, accelerator_name, precision, acceptance, draft_tokens, context_tokens):
    a, c, d = accelerator(accelerator_name), model(model_name).config, model(DRAFT).config
    mp = precision if a.supports(precision) else "BF16"
    def run(draft):
        steps = [speculative_on(a, c, draft, B, acceptance, draft_tokens, context_tokens, precision, precision, mp)
                 for B in SPEC_BATCHES]
        return tuple(s.speedup if s.fits else None for s in steps)

    return run(d), run(None)


def speculative_spec(model_name: str, accelerator_name: str, precision: str, acceptance: float, draft_tokens: int,
                     context_tokens: float) -> dict:
    """The speed-up of speculative decoding over plain decoding against the batch, with the book's
    draft model and with a draft that costs nothing, and the line of no gain; each curve stops where
    the models and the caches no longer fit."""
    drafted, free = _gains(model_name, accelerator_name, precision, acceptance, draft_tokens, context_tokens)
    fitting = [(B, g) for B, g in zip(SPEC_BATCHES, drafted) if g is not None]
    even = next((B for B, g in fitting if g < 1), None)
    hover = "B = %{x:,.0f}: %{y:.3g}×<extra>%{fullData.name}</extra>"
    if not fitting:
        note = f"a = {acceptance:g}, k = {draft_tokens}: the two models do not fit in memory"
    else:
        note = (f"a = {acceptance:g}, k = {draft_tokens}: {fitting[0][1]:.2f}× at B = 1; "
                + (f"a loss from B = {even:,}" if even else f"a gain at every batch that fits (to {fitting[-1][0]:,})"))
    data = [
        dict(type="scatter", x=list(SPEC_BATCHES), y=rounded(drafted), mode="lines", line=dict(color=ACCENT, width=3),
             name=f"draft: {DRAFT}", hovertemplate=hover),
        dict(type="scatter", x=list(SPEC_BATCHES), y=rounded(free), mode="lines", line=dict(color=INK, width=2, dash="dash"),
             name="a draft that costs nothing", hovertemplate=hover),
        dict(type="scatter", x=[SPEC_BATCHES[0], SPEC_BATCHES[-1]], y=[1, 1], mode="lines",
             line=dict(color=FAINT, width=1), name="no gain", hoverinfo="skip"),
        dict(type="scatter", x=[SPEC_BATCHES[0]], y=rounded([drafted[0]]), mode="markers",
             marker=dict(color=ACCENT, size=11), name="at one sequence", hoverinfo="skip"),
        dict(type="scatter", x=[SPEC_BATCHES[0]], y=[SPEEDUP_RANGE[1] * 0.95], mode="text", text=[note],
             textposition="bottom right", name="what the curves say", hoverinfo="skip", showlegend=False),
    ]
    layout = base_layout(f"Speculative decoding of {model_name} ({precision}) on the {accelerator_name}",
                         "batch B (sequences decoded together)", "speed-up over plain decoding (×)",
                         x_log=True, x_range=(SPEC_BATCHES[0], SPEC_BATCHES[-1]), y_range=SPEEDUP_RANGE, legend=True)
    layout["margin"] = dict(l=70, r=20, t=100, b=120)
    return {"data": data, "layout": layout}


def speculative_panel(model_names, accelerator_names, model_name: str = "Llama-3.1-70B",
                      accelerator_name: str = "H100 SXM", precision: str = "FP8", acceptance: float = EXAMPLE_ACCEPTANCE,
                      draft_tokens: int = EXAMPLE_DRAFT_TOKENS, context_tokens: float = 2048, div_id: str = "fig-speculative"):
    """Acceptance and draft length as sliders (with a kernel, also model, accelerator, precision
    and context); on a page without one, the draft length as a dropdown and the acceptance slider."""
    controls = [Control("model_name", "model", list(model_names)),
                Control("accelerator_name", "accelerator", list(accelerator_names)),
                Control("precision", "weights and math", ("BF16", "FP8")),
                Control("acceptance", "acceptance (a)", ACCEPTANCES, kind="slider", stops=step_stops(0.0, 1.0, 0.05)),
                Control("draft_tokens", "draft tokens (k)", DRAFT_LENGTHS, kind="slider", stops=tuple(range(1, 9))),
                Control("context_tokens", "context (L)", (2048,), kind="slider", stops=doubling_stops(1024, 32_768, 1))]
    values = dict(model_name=model_name, accelerator_name=accelerator_name, precision=precision,
                  acceptance=acceptance, draft_tokens=draft_tokens, context_tokens=context_tokens)
    dropdown = Control("draft_tokens", "draft tokens (k)", DRAFT_LENGTHS)
    return _panel(speculative_spec, values, controls, div_id, static_dropdown=dropdown, static_slider="acceptance")


# ---- the serving frontier ------------------------------------------------------------------------

FRONTIER_BATCHES = doubling_stops(1, 1024, 2)
FRONTIER_SETUPS = {("Llama-3.1-8B", "FP8", 1): "Llama-3.1-8B, FP8, one H100",
                   ("Llama-3.1-70B", "FP8", 4): "Llama-3.1-70B, FP8, 4 H100s",
                   ("Llama-3.1-70B", "BF16", 8): "Llama-3.1-70B, BF16, 8 H100s",
                   ("Qwen3-30B-A3B", "FP8", 1): "Qwen3-30B-A3B, FP8, one H100"}
PER_GPU_RANGE = (10.0, 1e5)
PER_USER_RANGE = (1.0, 1_000.0)


@cache
def _frontier(model_name, accelerator_name, precision, gpus, prompt_tokens, output_tokens):
    a, c = accelerator(accelerator_name), model(model_name).config
    mp = precision if a.supports(precision) else "BF16"
    return tuple(serving_point(a, c, B, prompt_tokens, output_tokens, gpus, STEP_TOKENS, precision, precision, mp)
                 for B in FRONTIER_BATCHES)


def frontier_spec(model_name: str, accelerator_name: str, precision: str, gpus: int, prompt_tokens: float,
                  output_tokens: float, batch: float) -> dict:
    """Each user's tokens/s against the tokens/s of one GPU of the fleet, one point per batch, with
    the reading-speed line and the time to first token of the chosen batch. A batch that does not
    fit, or whose arriving prompts overflow the step's token budget, has no point."""
    points = _frontier(model_name, accelerator_name, precision, gpus, prompt_tokens, output_tokens)
    ok = [p.steady for p in points]
    here = points[FRONTIER_BATCHES.index(batch)]
    fastest = max((p for p in points if p.steady and p.per_user >= READING_TOKENS_PER_S), key=lambda p: p.per_gpu,
                  default=None)
    label = (f"B = {batch:,}: {here.per_user:,.0f} tokens/s each, {here.per_gpu:,.0f} per GPU, "
             f"first token after {here.first_token_s * 1e3:,.0f} ms" if here.steady
             else f"B = {batch:,}: does not fit" if not here.fits
             else f"B = {batch:,}: the prompts arriving per step overflow its token budget")
    target = (f"{READING_TOKENS_PER_S} tokens/s per user"
              + (f"; above it, at most B = {fastest.batch:,.0f} and {fastest.per_gpu:,.0f} per GPU" if fastest else ""))
    hover = "%{customdata}<extra></extra>"
    data = [
        dict(type="scatter", x=rounded([p.per_gpu if f else None for p, f in zip(points, ok)]),
             y=rounded([p.per_user if f else None for p, f in zip(points, ok)]), mode="lines+markers",
             line=dict(color=ACCENT, width=3), name="one point per batch",
             customdata=[f"B = {p.batch:,.0f}: {p.per_user:,.0f} tokens/s each, {p.per_gpu:,.0f} per GPU, "
                         f"first token {p.first_token_s * 1e3:,.0f} ms" for p in points], hovertemplate=hover),
        dict(type="scatter", x=list(PER_GPU_RANGE), y=[READING_TOKENS_PER_S] * 2, mode="lines+text",
             line=dict(color=FAINT, width=1, dash="dot"), text=["", target], textposition="bottom left",
             name=f"a target: {READING_TOKENS_PER_S} tokens/s each", hoverinfo="skip"),
        dict(type="scatter", x=rounded([here.per_gpu if here.steady else None]),
             y=rounded([here.per_user if here.steady else None]), mode="markers+text", marker=dict(color=INK, size=12),
             text=[label], textposition="top right" if batch < 64 else "top left", name="this batch", hoverinfo="skip"),
    ]
    where = f"{gpus} × {accelerator_name}" if gpus > 1 else f"one {accelerator_name}"
    title = (f"{model_name} ({precision}) on {where}: prompts of {prompt_tokens:,.0f}, "
             f"answers of {output_tokens:,.0f} tokens")
    layout = base_layout(title, "tokens/s per GPU (the fleet's throughput)", "tokens/s per user",
                         x_log=True, y_log=True, x_range=PER_GPU_RANGE, y_range=PER_USER_RANGE, legend=True)
    layout["margin"] = dict(l=70, r=20, t=100, b=120)
    return {"data": data, "layout": layout}


def frontier_panel(model_names, accelerator_names, model_name: str = "Llama-3.1-8B", accelerator_name: str = "H100 SXM",
                   precision: str = "FP8", gpus: int = 1, prompt_tokens: float = 1024, output_tokens: float = 256,
                   batch: float = 64, div_id: str = "fig-frontier"):
    """Every choice live with a kernel; on a page without one, a dropdown over ``FRONTIER_SETUPS``
    and the batch slider."""
    controls = [Control("model_name", "model", list(model_names)),
                Control("accelerator_name", "accelerator", list(accelerator_names)),
                Control("precision", "weights and math", ("BF16", "FP8")),
                Control("gpus", "GPUs (T)", GPUS),
                Control("prompt_tokens", "prompt (S)", (1024,), kind="slider", stops=doubling_stops(128, 16_384, 1)),
                Control("output_tokens", "answer (n)", (256,), kind="slider", stops=doubling_stops(64, 4096, 1)),
                Control("batch", "batch (B)", FRONTIER_BATCHES, kind="slider")]
    static = Control(("model_name", "precision", "gpus"), "setup", list(FRONTIER_SETUPS), labels=FRONTIER_SETUPS)
    values = dict(model_name=model_name, accelerator_name=accelerator_name, precision=precision, gpus=gpus,
                  prompt_tokens=prompt_tokens, output_tokens=output_tokens, batch=batch)
    return _panel(frontier_spec, values, controls, div_id, static_dropdown=static, static_slider="batch")


# ---- the ways of spreading one model, with each user's time per token (chapter 9) -----------------

SPREADS = ("tensor", "pipeline", "data", "expert", "expert, DeepEP's times")


def spreads(model_name: str, accelerator_name: str, gpus: int, batch: int, context_tokens: float,
            schemes: Sequence[str] = ("tensor", "pipeline", "data"), weight_precision: str = "FP8",
            kv_precision: str = "FP8", math_precision: str = "FP8") -> Markdown:
    """The same model, GPUs, batch and context under each way of spreading it in ``schemes`` (from
    ``SPREADS``; "expert, DeepEP's times" charges each exchange the mean of DeepEP's measured
    dispatch and combine, ``parallel.measured_exchanges_s``): what each GPU holds, its memory and
    math terms, the collectives of one step (tensor: 2 n + 1 all-reduces and one gather; pipeline:
    one send per stage; expert: two exchanges per MoE layer, 2 n_moe; data: none) and their time,
    then the time between two tokens of one sequence (a pipeline's stages take turns: ``rounds``
    stage steps), each user's tokens/s and all users' together, or "does not fit"."""
    from inferlimits.arithmetic.parallel import (all_reduces_per_step, data_parallel_on, moe_layers,
                                                 pipeline_on)

    a, c = accelerator(accelerator_name), model(model_name).config
    precisions = dict(weight_precision=weight_precision, kv_precision=kv_precision, math_precision=math_precision)
    names = {"tensor": "tensor", "pipeline": "pipeline", "data": "data (replicas)", "expert": "expert, book's times",
             "expert, DeepEP's times": "expert, DeepEP's times"}
    rows = []
    for scheme in schemes:
        if scheme not in SPREADS:
            raise ValueError(f"schemes: {scheme!r} is not one of {SPREADS}")
        if scheme == "tensor":
            s, talks = tensor_parallel_on(a, c, gpus, batch, context_tokens, **precisions), all_reduces_per_step(c) + 1
        elif scheme == "pipeline":
            s, talks = pipeline_on(a, c, gpus, batch, context_tokens, **precisions), 1 if gpus > 1 else 0
        elif scheme == "data":
            s, talks = data_parallel_on(a, c, gpus, batch, context_tokens, **precisions), 0
        else:
            exchange = sum(measured_exchanges_s(gpus)) / 2 if scheme != "expert" else None
            s = expert_parallel_on(a, c, gpus, batch, context_tokens, **precisions, exchange_s=exchange)
            talks = 2 * moe_layers(c) if gpus > 1 else 0
        held = f"{s.weight_bytes_per_gpu / GB:,.1f} + {s.cache_bytes_per_gpu / GB:,.1f}"
        if not s.fits:
            rows.append([names[scheme], held, "does not fit", "", f"{talks:,}", "", "", "", ""])
            continue
        rows.append([names[scheme], held, f"{s.memory_s * 1e3:,.2f}", f"{s.math_s * 1e3:,.2f}", f"{talks:,}",
                     f"{s.communication_s * 1e3:,.2f}", f"{s.token_interval_s * 1e3:,.1f}", f"{s.per_user:,.1f}",
                     f"{s.aggregate:,.0f}"])
    return _table(["spread by", "each GPU holds: weights + caches (GB)", "memory (ms)", "math (ms)",
                   "collectives per step", "communication (ms)", "time per token (ms)", "tokens/s per user",
                   "tokens/s, all users"], rows, "lrrrrrrrr")
