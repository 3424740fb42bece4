"""Every control opens on the value its chapter states, and keeps it when a browser sends the
control's state back; every value an exercise asks the reader to set is one of the control's stops.

A slider whose default falls between two of its stops is snapped by the browser, which sends the
snapped value back, and the figure redraws with a number the text does not state. The panels
therefore move between listed stops (``interactive.Control``), and these tests build every panel
as its chapter does (the chapter's code cells, run in this process) and read each control."""
from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import pytest

import nbrun
from inferlimits.figures import interactive
from inferlimits.book import ROOT, measures_this_machine, notebooks
from inferlimits.figures import machine as machinefig

CHAPTERS = {nb.stem: nb for nb in notebooks()}
#: the chapters with panels that can be built here (chapter 13's measure this machine: see below)
BUILT = [name for name, nb in CHAPTERS.items()
         if "panel(" in nb.read_text(encoding="utf-8") and not measures_this_machine(nb)]

#: the values the exercises and their answers ask the reader to set: chapter -> [(control, value,
#: the words that ask for it)]. The words must be in the chapter's exercises, and the value must be
#: a stop of that control (with a kernel, and on the hosted page when the control is the page's slider).
NAMED = {
    "primer": [("context_tokens", 32_768, "At 32,768 tokens: the"), ("model_name", "Llama-3.1-70B", "choose Llama-3.1-70B")],
    "01_two_speeds": [("intensity_flop_per_byte", 100, "100 gives"), ("intensity_flop_per_byte", 150, "150 already")],
    "02_decode": [("efficiency", 0.5, "at 0.5 the H200"), ("efficiency", 0.6, "0.6 above"),
                  ("weight_precision", "INT4", "choose INT4")],
    "03_prefill": [("prompt_tokens", 16_384, "from 16,384 to"), ("prompt_tokens", 32_768, "to 32,768 tokens"),
                   ("prompt_length", 128, "up from 128 tokens"), ("accelerator_name", "H200 SXM", "again for the H200 SXM"),
                   ("prompt_length", 16_384, "(a) At 16,384 tokens"), ("prompt_length", 8192, "(b) At 8,192 tokens on")],
    "04_batching": [("batch", 128, "at a batch of 128")],
    "05_kv_cache": [("batch", 8, "with 8 conversations"), ("batch", 32, "and with 32"),
                    ("batch", 128, "stops at 128 and 256"), ("batch", 256, "At 256 each conversation"),
                    ("model_name", "Qwen2.5-32B", "choose Qwen2.5-32B")],
    "06_overhead": [("microseconds_per_launch", 10, "At 10 µs per launch"),
                    ("microseconds_per_launch", 3, "slider to 3 µs"), ("microseconds_per_launch", 2, "at 2 µs"),
                    ("kernels_per_layer", 43, "assumed 43 kernels"), ("kernels_per_layer", 11, "11 whole kernels")],
    "07_low_precision": [("batch", 1, "powers of two from 1 to"), ("batch", 65_536, "to 65,536. Read"),
                         ("batch", 256, "smallest at 256 sequences"), ("batch", 1024, "From the stop at 1,024")],
    "08_moe": [("batch", 1, "powers of two from 1 to"), ("batch", 65_536, "to 65,536. At which"),
               ("batch", 8, "At 8, where"), ("batch", 64, "at 64 sequences and at 128"),
               ("batch", 128, "and at 128 alike"), ("batch", 2048, "From 2,048 the"),
               ("model_name", "gpt-oss-120b", "choose gpt-oss-120b")],
    "10_speculative_decoding": [("batch", 256, "256 sequences give"), ("batch", 512, "and 512, which still")],
    "11_index_card": [("context_tokens", 8192, "with 8,192 tokens of context"),
                      ("context_tokens", 4096, "context to 4,096 tokens"),
                      ("batch", 16, "weights at a batch of 16"), ("batch", 32, "the caches at 32"),
                      ("batch", 256, "without a rate is 256"), ("batch", 512, "without a rate is 512"),
                      ("batch", 64, "stops at 32 and 64"), ("batch", 1024, "rate to 1,024"),
                      ("kv_precision", "FP8", "KV cache to FP8")],
    "12_worked_example": [("context_tokens", 16_384, "set the context to 16,384"),
                          ("usable_fraction", 0.92, "on the slider, from 0.92"),
                          ("batch", 16, "set the batch to 16"), ("bandwidth_share", "70%", "At 70% of the bandwidth")],
    "13_measure": [("side", 1024, "a side of 1,024"), ("array_mib", 4, "an array of 4 MiB"),
                   ("context_tokens", 0, "from 0 to 1,024"), ("context_tokens", 1024, "to 1,024 tokens")],
}
#: chapter 13's controls, from the figure module: its panels measure this machine on construction
MACHINE_STOPS = {"side": machinefig.PRODUCT_SIDES, "array_mib": machinefig.ARRAY_MIB,
                 "context_tokens": machinefig.CONTEXTS}


@cache
def panels(chapter: str) -> tuple[interactive.Panel, ...]:
    """Every panel the chapter builds, in order, from its own code cells."""
    made = []

    class Recorded(interactive.Panel):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(self)

    original, interactive.Panel = interactive.Panel, Recorded
    try:
        ns = {"__name__": "__chapter__"}
        for cell in nbrun.load_cells(CHAPTERS[chapter]):
            nbrun.run_cell(cell["source"], ns)
    finally:
        interactive.Panel = original
    return tuple(made)


def exercise_text(chapter: str) -> str:
    """The chapter's exercises and their answers: the Markdown from its first exercise on."""
    nb = json.loads(CHAPTERS[chapter].read_text(encoding="utf-8"))
    text = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    start = text.find("```{exercise}")
    assert start >= 0, f"{chapter} has no exercises"
    return text[start:]


def _static_labels(fig) -> dict[str, str]:
    """The labels the hosted page's dropdown and slider show when it opens."""
    shown = {}
    for menu in fig.layout.updatemenus:
        shown["dropdown"] = menu.buttons[menu.active].label
    for slider in fig.layout.sliders:
        shown["slider"] = slider.steps[slider.active].label
    return shown


@pytest.mark.parametrize("chapter", BUILT)
def test_every_control_opens_on_the_value_the_chapter_states(chapter):
    built = panels(chapter)
    assert built, f"{chapter} builds no panel"
    for panel in built:
        for control, widget in zip(panel.specs, panel.controls, strict=True):
            stated = panel.values[control.name]
            assert widget.value == stated, (chapter, control.name)
            # the browser sends back the index of the stop it shows; the value must survive that
            state = widget.get_state()
            widget.set_state({"index": state["index"]})
            assert widget.value == stated and widget.get_state()["index"] == state["index"], (chapter, control.name)
            shown = widget._options_labels[widget.index]  # what the browser's readout shows
            assert shown == interactive._label(stated), (chapter, control.name, shown)
            if control.kind == "slider":
                assert isinstance(widget, interactive.W.SelectionSlider), (chapter, control.name)
        # the hosted page's own dropdown and slider open on the same values
        shown = _static_labels(panel.static)
        assert set(shown) == set(panel.static_controls), chapter
        for role, control in panel.static_controls.items():
            assert shown[role] == control.label_of(control.value_in(panel.values)), (chapter, control.name, shown[role])


@pytest.mark.parametrize("chapter", sorted(NAMED))
def test_every_value_an_exercise_names_is_a_stop(chapter):
    text = exercise_text(chapter)
    if chapter in BUILT:
        controls = [(c, p) for p in panels(chapter) for c in p.specs]
    else:  # chapter 13: its slider stops, as the figure module lists them
        controls = [(interactive.Control(name, name, stops, kind="slider"), None) for name, stops in MACHINE_STOPS.items()]
    for name, value, words in NAMED[chapter]:
        assert words in text, f"{chapter}: the exercises no longer say {words!r}: update NAMED"
        assert interactive._label(value) in words, (chapter, words, value)
        mine = [(c, p) for c, p in controls if c.name == name]
        assert mine, f"{chapter} has no control {name!r}"
        for control, panel in mine:
            assert value in control.live, f"{chapter}: {name}={value} is not a live stop"
            if panel is not None and name in [c.name for c in panel.static_controls.values()]:
                assert value in control.options, f"{chapter}: {name}={value} is not a stop on the hosted page"


def test_a_default_between_two_stops_is_refused_with_the_controls_name():
    control = interactive.Control("context_tokens", "context (L)", interactive.doubling_stops(128, 131_072), kind="slider")
    assert 8192 in control.live and 8076 not in control.live
    control.widget(8192)
    with pytest.raises(ValueError, match="context_tokens=8076"):
        control.widget(8076)


def test_stops_are_whole_where_they_count_and_hit_the_round_values():
    quarter = interactive.doubling_stops(1, 1024)
    assert all(isinstance(b, int) for b in quarter) and {1, 2, 3, 64, 128, 1024} <= set(quarter)
    assert len(quarter) == len(set(quarter)) and list(quarter) == sorted(quarter)
    assert interactive.step_stops(0.3, 1.0, 0.05) == tuple(round(0.3 + 0.05 * i, 2) for i in range(15))
    assert {0.5, 1, 1.2, 100, 150, 5000} <= set(interactive.preferred_stops(0.5, 5000, (150,)))
    for bad in (lambda: interactive.doubling_stops(0, 8), lambda: interactive.step_stops(1, 0, 0.1),
                lambda: interactive.preferred_stops(-1, 10)):
        with pytest.raises(ValueError):
            bad()
