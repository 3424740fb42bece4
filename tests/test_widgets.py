"""Kernel-side control panels: every control at its extremes and in the middle redraws the
figure in place (same FigureWidget, new data) and never raises. Each chapter's panels are listed
in PANELS with the arguments its chapter uses."""
from __future__ import annotations

from pathlib import Path

import ipywidgets as W
import pytest

from inferlimits.data import hardware
from inferlimits.figures import batching, decode, prefill, roofline
from inferlimits.figures import kvcache as kvfig
from inferlimits.figures import indexcard as cardfig
from inferlimits.figures import overhead as overheadfig
from inferlimits.figures import worked_example as workedfig
from inferlimits.figures import machine as machinefig
from inferlimits.figures import moe as moefig
from inferlimits.figures import precision as precisionfig
from inferlimits.figures import primer as primerfig
from inferlimits.figures import serving as servingfig
from inferlimits.data.models import models

NAMES = list(hardware.accelerators())
# the accelerators and models chapters 2 and 3 draw
DECODE_NAMES = ["A100 80GB SXM", "H100 SXM", "H200 SXM", "B200 (HGX)", "MI300X", "L40S", "RTX 4090"]
DENSE_MODELS = ["Llama-3.1-8B", "Qwen2.5-7B", "Llama-3.1-70B", "Qwen2.5-32B", "Mistral-7B-v0.1"]
# the accelerators and models chapters 4 and 5 draw
BATCH_NAMES = ["A100 80GB SXM", "H100 SXM", "H200 SXM", "B200 (HGX)", "MI300X", "MI325X"]
BATCH_MODELS = ["Llama-3.1-8B", "Qwen2.5-7B", "Mistral-7B-v0.1", "Qwen2.5-32B"]
PRICED = ["B200 (HGX)", "H200 SXM", "H100 SXM", "A100 80GB SXM"]  # prices.toml order
KV_NAMES = BATCH_NAMES + ["L40S"]
KV_MODELS = BATCH_MODELS + ["Llama-3.1-70B"]

PANELS = {
    # the primer (its defaults are the ones it draws)
    "primer-decoder": lambda: primerfig.diagram_panel(div_id="fig-test"),
    "primer-bytes": lambda: primerfig.bytes_panel(div_id="fig-test"),
    "roofline": lambda: roofline.panel(NAMES, "B200 (HGX)", 1.0, div_id="fig-test"),
    "balance-by-year": lambda: roofline.balance_by_year_panel([n for n in NAMES if hardware.accelerator(n).datacenter],
                                                              div_id="fig-test"),
    "decode-ceiling": lambda: decode.ceiling_panel(DECODE_NAMES, DENSE_MODELS, "BF16", 1.0, div_id="fig-test"),
    "decode-roofline": lambda: decode.roofline_panel(NAMES, "B200 (HGX)", DENSE_MODELS, "Llama-3.1-8B", 1.0,
                                                     div_id="fig-test"),
    "prefill": lambda: prefill.panel(DECODE_NAMES, "B200 (HGX)", DENSE_MODELS[:4], "Llama-3.1-8B", "BF16", 2048,
                                     div_id="fig-test"),
    "request-timeline": lambda: prefill.timeline_panel(["H100 SXM", "H200 SXM", "B200 (HGX)", "MI300X"], "H100 SXM",
                                                       "Llama-3.1-8B", "BF16", 2048, div_id="fig-test"),
    # chapters 4 and 5 (the lists the chapters pass)
    "batch-throughput": lambda: batching.throughput_panel(BATCH_MODELS, BATCH_NAMES, "Llama-3.1-8B", "B200 (HGX)", 64,
                                                          div_id="fig-test"),
    "batch-roofline": lambda: batching.roofline_panel(BATCH_MODELS, BATCH_NAMES, "Llama-3.1-8B", "B200 (HGX)", 64,
                                                      div_id="fig-test"),
    "batch-cost": lambda: batching.cost_panel(BATCH_MODELS, PRICED, "Llama-3.1-8B", "B200 (HGX)", 5.0, div_id="fig-test"),
    "kv-ceiling": lambda: kvfig.ceiling_panel(KV_MODELS, KV_NAMES, "Llama-3.1-8B", "B200 (HGX)", 64, div_id="fig-test"),
    "kv-memory": lambda: kvfig.memory_panel(KV_MODELS, KV_NAMES, "Llama-3.1-8B", "B200 (HGX)", 16, div_id="fig-test"),
    # chapters 6 and 10 (the lists the chapters pass)
    "third-wall": lambda: overheadfig.third_wall_panel(DECODE_NAMES, "B200 (HGX)", DENSE_MODELS, "Llama-3.1-8B", 10.0,
                                                       div_id="fig-test"),
    "index-card": lambda: cardfig.panel(DECODE_NAMES, DENSE_MODELS + ["Qwen3-30B-A3B", "gpt-oss-120b"],
                                        div_id="fig-test"),
    # chapters 7 and 8 (low precision, mixtures of experts)
    "precision": lambda: precisionfig.panel(NAMES, DENSE_MODELS, "B200 (HGX)", "Llama-3.1-8B", "FP8", "FP8", batch=64,
                                            div_id="fig-test"),
    "moe": lambda: moefig.panel([n for n, m in models().items() if m.config.is_moe], NAMES, "DeepSeek-V3",
                                "H200 SXM", batch=64, div_id="fig-test"),
    # chapter 9 (several GPUs, speculative decoding, the serving frontier)
    "tensor-parallel": lambda: servingfig.tp_panel(list(models()), NAMES, "Llama-3.1-70B", "H100 SXM", "BF16", 4, 1, 0,
                                                   div_id="fig-test"),
    "speculative": lambda: servingfig.speculative_panel(DENSE_MODELS, NAMES, "Llama-3.1-70B", "H100 SXM", "FP8", 0.7, 4,
                                                        2048, div_id="fig-test"),
    "frontier": lambda: servingfig.frontier_panel(list(models()), NAMES, "Llama-3.1-8B", "H100 SXM", "FP8", 1, 1024, 256,
                                                  64, div_id="fig-test"),
    # chapter 12
    "worked-capacity": lambda: workedfig.capacity_panel(workedfig.CACHE_LABELS[0], 2048, 0.95, div_id="fig-test"),
    "worked-step": lambda: workedfig.step_panel("100%", 1, div_id="fig-test"),
    # chapter 13 (each change measures this machine again)
    "machine-roofline": lambda: machinefig.roofline_panel(256, 2048, div_id="fig-test"),
    "machine-products": lambda: machinefig.products_panel(8192, 256, div_id="fig-test"),
    "machine-decode": lambda: machinefig.decode_panel(128, 64, div_id="fig-test"),
    "machine-decode-long": lambda: machinefig.decode_panel(1024, 64, div_id="fig-test"),
}


#: panels that measure this machine again on every change: exercised in-process above, too slow
#: to repeat in the kernel test
MEASURING = {name for name in PANELS if name.startswith("machine-")}


def _snapshot(fig):
    return [tuple(repr(t[k]) for k in ("visible", "x", "y", "text")) for t in fig.data] + [repr(fig.layout.title.text)]


def _positions(control):
    """Every option of a dropdown; a slider's first, middle and last stop, then the first again."""
    values = list(control._options_values)
    if isinstance(control, W.Dropdown):
        return values
    return [values[0], values[len(values) // 2], values[-1], values[0]]


def exercise(name: str) -> int:
    """Move every control of panel ``name`` to each end and the middle; return the moves made."""
    panel = PANELS[name]()
    fig = panel.figure
    moves = 0
    for control in panel.controls:
        for value in _positions(control):
            if control.value == value:
                continue
            before = _snapshot(fig)
            control.value = value
            assert panel.figure is fig, "the figure must be updated, not replaced"
            assert _snapshot(fig) != before, f"{control.description}={value} did not change the figure"
            moves += 1
    return moves


@pytest.mark.parametrize("name", PANELS)
def test_every_control_position_redraws_in_place(name):
    assert exercise(name) >= 2


def test_the_same_runs_inside_a_jupyter_kernel(tmp_path):
    """With a real kernel the widgets open comms and the FigureWidget syncs its state."""
    import nbformat
    from nbclient import NotebookClient

    here = Path(__file__).resolve().parent
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(
        f"import sys; sys.path.insert(0, {str(here)!r})\n"
        "import test_widgets as t\n"
        "print({name: t.exercise(name) for name in t.PANELS if name not in t.MEASURING})")]
    NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    printed = nb.cells[0].outputs[0]["text"]
    assert all(f"'{name}'" in printed for name in PANELS if name not in MEASURING), printed


@pytest.mark.parametrize("name", PANELS)
def test_panels_carry_the_static_figure_for_pages_without_a_kernel(name):
    bundle = PANELS[name]()._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert 'id="fig-test"' in bundle["text/html"] and "Plotly.newPlot" in bundle["text/html"]
    assert "<script src=" not in bundle["text/html"], "plotly.js is served once by the site, not per figure"


def test_the_balance_points_by_year_are_each_part_at_its_year_and_ridge():
    datacenter = [n for n in NAMES if hardware.accelerator(n).datacenter]
    for precision in hardware.MATH_PRECISIONS:
        spec = roofline.balance_by_year_spec(datacenter, precision)
        drawn = {(name, x, y) for t in spec["data"] for name, x, y in zip(t["text"], t["x"], t["y"])}
        parts = [hardware.accelerator(n) for n in datacenter]
        expected = {(a.name, a.year, a.math_flops_per_s(precision) / a.bandwidth_bytes_per_s)
                    for a in parts if a.supports(precision)}
        assert drawn == expected, precision
        lacking = sum(not a.supports(precision) for a in parts)
        assert (f"{lacking} of {len(parts)} parts have no {precision} mode" in spec["layout"]["title"]["text"]) == (lacking > 0)
        assert [t["name"] for t in spec["data"]] == ["AMD", "NVIDIA"]   # the same traces whatever the precision
    with pytest.raises(ValueError, match="names"):
        roofline.balance_by_year_spec([])
