"""The decks: for each session of the course (``course.SESSIONS``, read when the decks are built),
a 16:9 reveal.js deck and its PDF, in ``_build/slides/``.

    python -m inferlimits.book.slides                    # every session (make slides)
    python -m inferlimits.book.slides --out DIR --no-pdf --session 2

Each deck is a notebook first, ``session-NN.ipynb``, with reveal.js slide metadata on its cells, so
that an instructor can open it in JupyterLab and change it. nbconvert's reveal.js exporter (its
own ``reveal`` template, with the few blocks that load scripts from CDNs replaced) turns it into
``session-NN.html``; Chromium prints that in reveal.js's print view into ``session-NN.pdf``, one
16:9 page a slide. A deck holds, in order:

- a title slide: the session's number, topic, reading (and take-home reading) and lab; the
  session's notes for the instructor are its speaker notes (press S); then its timed agenda;
- the figures its agenda reads together and each chapter's others, in their 16:9 exports
  (``export.WIDE``, committed in ``figures/16x9/``), and each chapter's key equations, copied
  from the chapter (``CONTENTS`` names them) without the punctuation its sentence ends them with;
- one worked example, numbered steps whose numbers the package computes while the deck is built
  (``EXAMPLES``);
- the session's in-class exercises (``course.in_class_exercises``), in the order its agenda
  takes them: each one's text on its slide, and its answer (the chapter's solution) in the slide's
  speaker notes; then its homework: the student's own seeded sheet (``make homework``), with the
  exercises it is drawn from (``course.homework_exercises``); then the exercises set with its
  take-home reading, as optional practice;
- the session's questions of the quiz bank (``course.quiz_questions``), one a slide, each one's
  key in the slide's speaker notes.

The speaker notes (press S in the HTML deck) are the instructor's: the PDF prints the slides
only, so it holds no answer and no key. The decks are instructor material, never published with
the book: ``_build/slides/`` is in neither edition (the Pages workflow publishes ``_build/html``).

Nothing is fetched from a network: reveal.js is the npm package ``make setup`` installs (copied
next to the decks), every formula is drawn into SVG while the deck is built (MathJax, as
``mathsvg`` draws the book's), and the figures are files beside the deck. A slide whose text is
longer than the slide is set smaller until it fits (down to ``MIN_FONT_PX``); printing says which
slide still does not fit.
"""
from __future__ import annotations

import argparse
import html
import math
import re
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from inferlimits.arithmetic.activations import activation_bytes_per_token
from inferlimits.arithmetic.generation import (decode_flops_per_token, decode_knee_batch, decode_point,
                                               experts_touched_per_layer, prefill_crossover_tokens, prefill_flops,
                                               weight_bytes_read_per_step)
from inferlimits.arithmetic.indexcard import read_card
from inferlimits.arithmetic.kvcache import batch_where_cache_equals_weights, fit, max_sequences, usable_memory_fraction
from inferlimits.arithmetic.overhead import eager_launches_per_step, launch_assumptions, overhead_ceiling_tokens_per_s
from inferlimits.arithmetic.parallel import tensor_parallel_on, tensor_parallel_read_bytes
from inferlimits.arithmetic.precision import decode_on, knee_on
from inferlimits.arithmetic.roofline import attainable_flop_per_s, balance_point_flop_per_byte
from inferlimits.arithmetic.speculative import expected_tokens_per_step
from inferlimits.book import ROOT
from inferlimits.book import course, export
from inferlimits.data.hardware import accelerator
from inferlimits.data.models import kv_bytes_per_token, model, weight_bytes
from inferlimits.data.units import bytes_per_element

OUT = ROOT / "_build" / "slides"
NPM = ROOT / ".venv" / "npm" / "node_modules"
REVEAL = NPM / "reveal.js"
MATHJAX = NPM / "mathjax" / "es5"

#: the slide, in CSS px: 16:9
SIZE = (1280, 720)
FONT_PX = 30        # the text of a slide
MIN_FONT_PX = 16    # the least a long slide's text is set in
#: what of the npm package reveal.js the decks load (copied into the decks' folder)
REVEAL_FILES = ("LICENSE", "dist/reveal.css", "dist/reveal.js", "dist/theme/white.css",
                "dist/theme/fonts/source-sans-pro", "plugin/notes/notes.js")
REVEAL_DIR = "reveal.js"     # its folder beside the decks
FIGURES_DIR = "figures"      # the 16:9 exports' folder beside the decks


# ---- what each chapter brings ------------------------------------------------------------------

@dataclass(frozen=True)
class Equation:
    tex: str        # the whole display equation, as the chapter writes it
    says: str       # one line above it (Markdown, with $...$ math)


@dataclass(frozen=True)
class Contribution:
    """What one chapter brings to its session's deck (``CONTENTS``)."""
    chapter: str
    figures: tuple[str, ...] = ()
    equations: tuple[Equation, ...] = ()
    example: str = ""


#: What each chapter brings to the deck of its session. A deck shows, chapter by chapter in the
#: session's order, the chapter's figures and equations; the first of its chapters that names an
#: example gives the deck's worked example. ``figures``: names of the 16:9 exports
#: (``export.WIDE``, files in ``figures/16x9/``), after those the session's agenda reads together;
#: ``equations``: each a piece of one display equation ($$ ... $$) of the chapter, which the deck
#: copies whole from the chapter (so that a slide never drifts from its chapter), and one line
#: that the slide shows above it; ``example``: a worked example of ``EXAMPLES``. A chapter that is
#: not listed brings nothing; a session whose chapters bring no figure, no equation or no example
#: has no deck (the build says which).
CONTENTS: dict[str, dict] = {
    "primer": {
        "figures": ("primer_decoder",),
        "equations": (
            (r"K \cdot L \;=\; 2 n_\text{layers}",
             "The KV cache of one conversation of $L$ tokens: keys and values, in every layer, for every "
             "key-value head."),
        ),
    },
    "01_two_speeds": {
        "figures": ("01_roofline",),
        "equations": (
            (r"R \;=\; \frac{P}{BW}",
             "A chip's balance point: its math rate $P$ over its bandwidth $BW$."),
            (r"I \;=\; \frac{F}{M}",
             "A piece of work's arithmetic intensity: its operations $F$ over the bytes $M$ it moves."),
            (r"\frac{F}{t} \;\le\; \min",
             "The roofline: the work reaches at most the lower of the two roofs."),
        ),
        "example": "balance_point",
    },
    "02_decode": {
        "figures": ("02_decode_ceiling", "02_decode_roofline"),
        "equations": (
            (r"F \;\approx\; 2N",
             "One token of a dense model: two operations per weight it multiplies, and every weight read once."),
            (r"\text{memory ceiling} \;=\; \frac{BW}{W}",
             "The two ceilings on a single stream."),
            (r"\text{tokens/s} \;\le\; \frac{e \cdot BW}{W + K \cdot L + A}",
             r"With the cache $K \cdot L$, the activations $A$ and the share $e$ of the bandwidth a step reaches."),
        ),
        "example": "decode_ceiling",
    },
    "03_prefill": {
        "figures": ("03_prefill", "03_request_timeline"),
        "equations": (
            (r"F \;\approx\; 2(N - H)\,S \;+\; 2H, \qquad M",
             "A prompt of $S$ tokens in one pass: its operations ($N$ weights a token multiplies; the output "
             "head's $H$ for the last token only), its bytes and its intensity."),
            (r"S^{*} \;=\; \frac{R \, W}",
             "Where prefill turns compute-bound (attention's own work left out)."),
            (r"\text{TTFT}(S) \;\approx\;",
             "The time to first token of a lone prompt; $a S^2$ is attention's work."),
        ),
        "example": "prefill_crossover",
    },
    "04_batching": {
        "figures": ("04_batch_throughput",),
        "equations": (
            (r"t(B) \;=\; \max",
             "A step of $B$ sequences reads the weights once and does $B$ tokens' math."),
            (r"B^\ast \;=\; R \cdot \frac{W}{F}.",
             "The knee: the batch at which the math starts to bind (weights only)."),
            (r"B^\ast \;=\; \frac{R \cdot W}{F - R \cdot A}",
             "The knee with each sequence's activations counted."),
        ),
        "example": "batch_knee",
    },
    "05_kv_cache": {
        "figures": ("05_kv_memory",),
        "equations": (
            (r"K \;=\; 2 n_\text{layers}\, n_{kv}",
             "The cache one token adds to a sequence."),
            (r"W + B \cdot (K \cdot L + A) \quad",
             "What a step of $B$ sequences of $L$ tokens reads."),
            (r"B_{=} \;=\; \frac{W}{K \cdot L}",
             "The batch at which the caches weigh as much as the weights."),
        ),
        "example": "cache_fit",
    },
    "06_overhead": {
        "figures": ("06_third_wall", "06_timeline"),
        "equations": (
            (r"\text{tokens/s} \;\le\; \frac{B}{n \cdot t}",
             "The third ceiling: $n$ launches of $t$ seconds each before a step can end."),
            (r"B \;<\; B_o",
             "The host is the wall below the batch $B_o$."),
        ),
        "example": "launch_overhead",
    },
    "13_measure": {
        "figures": ("13_reference_products", "13_reference_decode", "13_machine_roofline", "13_machine_products",
                    "13_machine_decode"),
    },
    "07_low_precision": {
        "figures": ("07_precision",),
        "equations": (
            (r"B^*_W \;=\; \frac{P}{BW} \cdot \frac{W}{F}",
             "The knee, weights only: fewer bytes per weight move it left, faster math moves it right."),
            (r"P \;=\; \frac{F}{\sum_i F_i / P_i}",
             "The rate of a step whose parts run at different precisions."),
        ),
        "example": "fp8_weights",
    },
    "08_moe": {
        "figures": ("08_moe",),
        "equations": (
            (r"D(B) \;=\; E \left[",
             "Experts a batch of $B$ tokens touches per layer, each token picking $k$ of $E$ (uniform routing)."),
            (r"W(B) \;=\; W_1 + n_\text{moe}",
             "The weights a step then reads."),
        ),
        "example": "experts_touched",
    },
    "09_serving_at_scale": {
        "figures": ("09_tensor_parallel",),
        "equations": (
            (r"t_\text{all-reduce} \;=\; \alpha",
             "An all-reduce of an $M$-byte message over $T$ GPUs (ring)."),
            (r"t_\text{step} \;=\; \max\!\left(\frac{B F}{T P}",
             "One GPU's step in tensor parallelism: its share of the math or of the bytes, then the communication."),
        ),
        "example": "tensor_parallel",
    },
    "10_speculative_decoding": {
        "figures": ("10_speculative", "10_frontier"),
        "equations": (
            (r"\mathbb{E}[\text{tokens per round}]",
             "Tokens one round of speculative decoding yields, each draft token accepted with chance $a$."),
        ),
        "example": "draft_rounds",
    },
    "11_index_card": {
        "figures": ("11_index_card",),
        "equations": (
            (r"t_\text{math} = \frac{B\,F}{T\,P}",
             "The card's two times for one GPU's step."),
            (r"\text{rate} = \frac{B}{\max",
             "The card's ceiling, with the all-reduces' time $C$."),
        ),
        "example": "index_card",
    },
    "12_worked_example": {
        "figures": ("12_worked_capacity", "12_worked_step"),
    },
}


_DISPLAY = re.compile(r"\$\$(.*?)\$\$", re.S)


def _squeeze(s: str) -> str:
    return " ".join(s.split())


#: what ends a display equation as a sentence of its chapter ends: a comma, a period or a semicolon
#: (not a TeX space such as ``\,``), alone or as the last character of a closing ``\text{...}``
_END_PUNCTUATION = re.compile(r"(?<!\\)[,.;]$")
_END_TEXT_PUNCTUATION = re.compile(r"(\\text\{[^{}]*?)\s*[,.;]\}$")
#: what may stand between an equation and that punctuation: TeX spaces
_END_SPACE = re.compile(r"(?:\\[,;:! ]|\\q?quad|~)$")
#: a closing environment (``\end{aligned}``), whose last line the punctuation ends
_END_ENVIRONMENT = re.compile(r"\s*(\\end\{[A-Za-z*]+\})$")


def bare_equation(tex: str) -> str:
    r"""A display equation without the punctuation that ends it in its chapter's sentence (``, .
    ;``, also inside a closing ``\text{...}`` or before a closing ``\end{...}``), and without the
    TeX spaces left before it: a slide shows the equation, not the sentence."""
    s = tex.strip()
    env = _END_ENVIRONMENT.search(s)
    if env:
        return f"{bare_equation(s[:env.start()])}\n{env.group(1)}"
    while True:
        t = _END_PUNCTUATION.sub("", s).rstrip()
        t = _END_TEXT_PUNCTUATION.sub(r"\1}", t).rstrip()
        t = _END_SPACE.sub("", t).rstrip()
        if t.endswith("\\") and (len(t) - len(t.rstrip("\\"))) % 2:   # "\ " (a space) cut to "\"
            t = t[:-1].rstrip()
        if t == s:
            return s
        s = t


def _display_equations(stem: str, root: Path) -> list[str]:
    """A chapter's display equations as it writes them."""
    return [m.group(1).strip() for m in _DISPLAY.finditer(course.markdown(course.chapter_path(stem, root)))]


def display_equations(stem: str, root: Path = ROOT) -> list[str]:
    """The display equations (``$$ ... $$``) of a chapter's Markdown, in order, each without the
    punctuation its sentence ends it with (``bare_equation``)."""
    return [bare_equation(e) for e in _display_equations(stem, root)]


def equation(stem: str, find: str, root: Path = ROOT) -> str:
    """The one display equation of chapter ``stem`` that holds ``find`` (spaces aside), as
    ``display_equations`` gives it; a ValueError when none or several do."""
    found = [bare_equation(e) for e in _display_equations(stem, root) if _squeeze(find) in _squeeze(e)]
    if len(found) != 1:
        raise ValueError(f"find: {len(found)} display equations of {stem} hold {find!r} (slides.CONTENTS); "
                         "name one equation")
    return found[0]


def contributions(root: Path = ROOT) -> dict[str, Contribution]:
    """chapter -> what it brings (``CONTENTS``); every figure must be a 16:9 export, every
    equation found in its chapter and every example one of ``EXAMPLES``."""
    out = {}
    for stem, row in CONTENTS.items():
        unknown = set(row) - {"figures", "equations", "example"}
        if unknown:
            raise ValueError(f"CONTENTS[{stem!r}]: unknown keys {sorted(unknown)}")
        for name in row.get("figures", ()):
            if name not in export.WIDE:
                raise ValueError(f"CONTENTS[{stem!r}]: figure {name!r} is not a 16:9 export (export.WIDE)")
        example = row.get("example", "")
        if example and example not in EXAMPLES:
            raise ValueError(f"CONTENTS[{stem!r}]: example {example!r} is not one of EXAMPLES")
        eqs = tuple(Equation(equation(stem, find, root), says) for find, says in row.get("equations", ()))
        out[stem] = Contribution(stem, tuple(row.get("figures", ())), eqs, example)
    return out


# ---- worked examples ---------------------------------------------------------------------------

def fmt(x: float, digits: int = 3, trim: bool = False) -> str:
    """``x`` as a slide writes it: whole numbers from ``10 ** (digits - 1)`` up, with thousands
    separators (20,786); smaller ones to ``digits`` significant digits (3.13, 0.340), or with
    ``trim`` without the zeros that end them (a datasheet's 4.8, not 4.80); a count (an int) whole."""
    if not math.isfinite(x):
        raise ValueError(f"x: a number to write must be finite; got {x!r}")
    if isinstance(x, int):
        return f"{x:,}"
    if x == 0:
        return "0"
    if abs(x) >= 10 ** (digits - 1):
        return f"{round(x):,}"
    decimals = digits - 1 - math.floor(math.log10(abs(x)))
    s = f"{x:,.{decimals}f}"
    return s.rstrip("0").rstrip(".") if trim and "." in s else s


@dataclass
class Example:
    """A worked example: its question, numbered steps (Markdown, ``$...$`` math) and its
    conclusion. ``results`` are the numbers the steps compute (as written), apart from the data
    they start from: the tests hold them apart from every solution of the session."""
    title: str
    question: str
    steps: list[str] = field(default_factory=list)
    conclusion: str = ""
    results: list[str] = field(default_factory=list)

    def r(self, x: float, digits: int = 3) -> str:
        """``x`` written as ``fmt`` writes it, and kept as a result of the example."""
        s = fmt(x, digits)
        self.results.append(s)
        return s


def _balance_point() -> Example:
    a = accelerator("H200 SXM")
    P, BW = a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s
    R = balance_point_flop_per_byte(P, BW)
    reached = attainable_flop_per_s(1.0, P, BW)
    p, bw = fmt(P / 1e12, 4, trim=True), fmt(BW / 1e12, trim=True)
    ex = Example(f"the {a.name}'s balance point",
                 f"How many operations per byte must a kernel do before the {a.name}'s math, not its memory, "
                 "limits it? And what does a kernel of one operation per byte reach on it?")
    ex.steps = [
        f"The datasheet: $P$ = {p} TFLOP/s of dense BF16 math, $BW$ = {bw} TB/s.",
        f"The balance point: $R = P / BW$ = {p} TFLOP/s ÷ {bw} TB/s = {ex.r(R)} FLOP per byte.",
        f"A kernel of $I$ = 1 FLOP per byte reaches $\\min(P,\\, I \\cdot BW)$ = "
        f"{fmt(reached / 1e12, trim=True)} TFLOP/s.",
        f"That is {ex.r(100 * reached / P, 2)}% of the peak.",
    ]
    ex.conclusion = f"Below {fmt(R)} FLOP per byte a kernel is memory-bound on this chip, however fast its math."
    return ex


def _decode_ceiling() -> Example:
    a, name = accelerator("H200 SXM"), "Llama-3.1-8B"
    d = decode_point(model(name).config, a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s)
    ex = Example(f"one stream of {name} on the {a.name}",
                 f"How fast can the {a.name} decode {name} in BF16 for one user, and which wall binds?")
    ex.steps = [
        f"A step reads the weights a token multiplies, $W$ = {ex.r(d.weight_bytes / 1e9, 4)} GB, "
        f"and moves $A$ = {ex.r(d.activation_bytes / 1e6)} MB of activations.",
        f"Memory ceiling: $BW / (W + A)$ = {fmt(a.bandwidth_bytes_per_s / 1e12, trim=True)} TB/s ÷ "
        f"{ex.r(d.bytes / 1e9, 4)} GB = {ex.r(d.memory_ceiling)} tokens/s, "
        f"one token every {ex.r(1e3 / d.memory_ceiling)} ms.",
        f"Math: $F \\approx 2N$ = {ex.r(d.flops_per_token / 1e9, 4)} billion FLOP a token; "
        f"$P / F$ = {ex.r(d.math_ceiling)} tokens/s.",
        f"The memory ceiling is {ex.r(d.math_ceiling / d.memory_ceiling)}× lower: the step uses "
        f"{ex.r(100 * d.memory_ceiling / d.math_ceiling, 2)}% of the chip's math.",
    ]
    ex.conclusion = "One stream is memory-bound: bandwidth, not math, sets its speed."
    return ex


def _prefill_crossover() -> Example:
    a, name, S = accelerator("A100 80GB SXM"), "Llama-3.1-8B", 4096
    c = model(name).config
    P, BW = a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s
    W, K, A = weight_bytes_read_per_step(c), kv_bytes_per_token(c), activation_bytes_per_token(c, "prefill")
    crossover = prefill_crossover_tokens(c, P, BW)
    math_s, memory_s = prefill_flops(c, S) / P, (W + S * (K + A)) / BW
    ex = Example(f"prefill of {name} on the {a.name}",
                 f"From what prompt length is a lone prefill of {name} (BF16) on the {a.name} compute-bound? "
                 f"How long does a prompt of {S:,} tokens take to its first token?")
    ex.steps = [
        f"Balance point: $R$ = {fmt(P / 1e12, trim=True)} TFLOP/s ÷ {fmt(BW / 1e9, 4, trim=True)} GB/s = "
        f"{ex.r(balance_point_flop_per_byte(P, BW))} FLOP per byte.",
        f"The pass reads $W$ = {ex.r(W / 1e9, 4)} GB of weights once; each prompt token writes "
        f"$K$ = {fmt(K / 2**10)} KiB of cache and moves $A$ = {ex.r(A / 1e6)} MB of activations.",
        f"Its intensity reaches $R$ at $S^*$ = {ex.r(crossover)} tokens (attention's work counted).",
        f"At $S$ = {S:,}: math {ex.r(math_s * 1e3)} ms, memory {ex.r(memory_s * 1e3)} ms; "
        f"the first token comes after about {fmt(max(math_s, memory_s) * 1e3)} ms.",
    ]
    ex.conclusion = "Past a few hundred tokens a prompt is compute-bound: its time grows with its length."
    return ex


def _batch_knee() -> Example:
    a, name = accelerator("A100 80GB SXM"), "Llama-3.1-8B"
    c = model(name).config
    P, BW = a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s
    W, F, A = weight_bytes_read_per_step(c), decode_flops_per_token(c), activation_bytes_per_token(c)
    R = P / BW
    knee = decode_knee_batch(c, P, BW)
    ex = Example(f"the knee of {name} on the {a.name}",
                 f"How large a batch of {name} (BF16, no context) does the {a.name} need before its math "
                 "binds, and what does it make there?")
    ex.steps = [
        f"$R$ = {ex.r(R)} FLOP per byte; a token multiplies every weight once: $F$ = {ex.r(F / 1e9, 4)} "
        f"billion FLOP against $W$ = {ex.r(W / 1e9, 4)} GB.",
        f"Weights only: $B^* = R \\cdot W / F$ = {ex.r(R * W / F)}.",
        f"With $A$ = {ex.r(A / 1e6)} MB of activations per sequence: $B^* = R W / (F - R A)$ = {ex.r(knee)}.",
        f"There the chip makes $P / F$ = {ex.r(P / F)} tokens/s in all, "
        f"{ex.r(P / F / knee)} for each user.",
    ]
    ex.conclusion = "Below the knee a larger batch is nearly free; beyond it each user slows down."
    return ex


def _cache_fit() -> Example:
    a, name, L = accelerator("H100 SXM"), "Llama-2-7B", 4096
    c = model(name).config
    K, stored, b = kv_bytes_per_token(c), weight_bytes(c), bytes_per_element("BF16")
    usable = usable_memory_fraction()
    room = usable * a.capacity_bytes - stored
    ex = Example(f"caches of {name} on the {a.name}",
                 f"How many conversations of {L:,} tokens can the {a.name} hold for {name} in BF16?")
    ex.steps = [
        f"$K = 2 n_\\text{{layers}} n_{{kv}} d_\\text{{head}} b$ = 2 × {c.num_hidden_layers} × "
        f"{c.num_key_value_heads} × {c.head_dim_qk} × {fmt(b, trim=True)} = {ex.r(K, 5)} bytes, "
        f"{ex.r(K / 2**10)} KiB a token.",
        f"One conversation of {L:,} tokens: {ex.r(K * L / 1e9)} GB.",
        f"{fmt(100 * usable, 2, trim=True)}% of {fmt(a.capacity_bytes / 1e9, trim=True)} GB is usable; "
        f"the weights take {ex.r(stored / 1e9, 4)} GB, which leaves {ex.r(room / 1e9)} GB: "
        f"{ex.r(max_sequences(a.capacity_bytes, stored, K, L))} conversations.",
        f"The caches weigh as much as the weights a step reads at $B_= = W / (K L)$ = "
        f"{ex.r(batch_where_cache_equals_weights(weight_bytes_read_per_step(c), K, L))}.",
    ]
    ex.conclusion = "At long contexts the caches, not the weights, fill the memory and the step."
    return ex


def _launch_overhead() -> Example:
    a, name = accelerator("A100 80GB SXM"), "Llama-3.1-8B"
    c = model(name).config
    la = launch_assumptions()
    n, t = eager_launches_per_step(c), la.seconds_per_launch
    overhead = overhead_ceiling_tokens_per_s(n, t)
    memory = decode_point(c, a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s).memory_ceiling
    ex = Example(f"an eager decode step of {name} on the {a.name}",
                 f"One user, {name} in BF16, an eager loop on the {a.name}: what limits it, the GPU or the host?")
    ex.steps = [
        f"The step launches $n$ = {c.num_hidden_layers} layers × {la.kernels_per_layer} kernels + "
        f"{la.outside_layers} = {ex.r(n)} kernels.",
        f"At $t$ = {fmt(t * 1e6, trim=True)} µs a launch the host needs $n \\cdot t$ = {ex.r(n * t * 1e3)} ms a step.",
        f"Overhead ceiling $1 / (n \\cdot t)$ = {ex.r(overhead)} tokens/s; memory ceiling = "
        f"{ex.r(memory)} tokens/s.",
        f"The host binds, at {ex.r(100 * overhead / memory, 2)}% of the memory ceiling; launches would have "
        f"to cost under {ex.r(1e6 / (memory * n))} µs each to reach it.",
    ]
    ex.conclusion = "Below both walls: fewer launches (fused kernels, a CUDA Graph) help, more bandwidth does not."
    return ex


def _fp8_weights() -> Example:
    a, name = accelerator("H200 SXM"), "Qwen2.5-32B"
    c = model(name).config
    bf16, fp8 = decode_on(a, c), decode_on(a, c, weight_precision="FP8")
    knee_bf16, knee_fp8 = knee_on(a, c), knee_on(a, c, weight_precision="FP8")
    ex = Example(f"FP8 weights for {name} on the {a.name}",
                 f"What do FP8 weights, with the math still in BF16, do for {name} on the {a.name}?")
    ex.steps = [
        f"BF16: a step reads {ex.r(bf16.weight_bytes / 1e9)} GB; one user's ceiling is "
        f"{ex.r(bf16.memory_ceiling)} tokens/s.",
        f"FP8 weights: {ex.r(fp8.weight_bytes / 1e9)} GB (the parts the format keeps in 16 bits stay so): "
        f"{ex.r(fp8.memory_ceiling)} tokens/s.",
        f"The knee $B^*_W = R \\cdot W / F$ falls with $W$: from a batch of {ex.r(knee_bf16)} to "
        f"{ex.r(knee_fp8)}.",
        "Beyond that batch the step is compute-bound, and the math, still BF16, sets the rate.",
    ]
    ex.conclusion = "Weight-only formats speed up memory-bound decode; only narrower math helps past the knee."
    return ex


def _experts_touched() -> Example:
    name = "DeepSeek-V3"
    c = model(name).config
    E, k = c.n_routed_experts, c.num_experts_per_tok
    batches = (8, 16, 32)
    D = {B: experts_touched_per_layer(c, B) for B in batches}
    W = {B: weight_bytes_read_per_step(c, "FP8", B) for B in batches}
    ex = Example(f"experts a batch of {name} touches",
                 f"How many of {name}'s experts does a step read as the batch grows, and what does a token cost?")
    ex.steps = [
        f"Each MoE layer holds $E$ = {E} routed experts; each token picks $k$ = {k}.",
        "$D(B) = E[1 - (1 - k/E)^B]$: " + ", ".join(f"{ex.r(D[B])} at $B$ = {B}" for B in batches) + ".",
        "Weights a step reads (FP8): " + ", ".join(f"{ex.r(W[B] / 1e9)} GB" for B in batches) + ".",
        "Per token: " + ", ".join(f"{ex.r(W[B] / B / 1e9)} GB" for B in batches) + ".",
    ]
    ex.conclusion = "Batching shares an MoE model's reads far less than a dense model's, until every expert is read."
    return ex


def _tensor_parallel() -> Example:
    # on H100s: chapter 9's comparison of a pipeline with tensor parallelism sets the same model on
    # four H200s as an exercise, so the deck works it on another card and gives none of its answers
    a, name = accelerator("H100 SXM"), "Llama-3.1-70B"
    c = model(name).config
    one = fit(a.capacity_bytes, weight_bytes(c))
    two, four = tensor_parallel_on(a, c, 2), tensor_parallel_on(a, c, 4)
    # what a GPU stores (ParallelStep.weight_bytes_per_gpu, W_stored / T) is not what its step
    # reads (tensor_parallel_read_bytes: the weights a token multiplies, W / T, and its activations)
    point = decode_on(a, c)
    read_two, read_four = (sum(tensor_parallel_read_bytes(c, T, point)) for T in (2, 4))
    ex = Example(f"{name} over two and four {a.name}s",
                 f"One user, {name} in BF16, on {a.name}s in tensor parallelism: what does splitting buy?")
    ex.steps = [
        f"{ex.r(weight_bytes(c) / 1e9, 4)} GB of weights do not fit one card's "
        f"{ex.r(one.usable_bytes / 1e9, 4)} GB usable.",
        f"$T$ = 2: each GPU holds {ex.r(two.weight_bytes_per_gpu / 1e9)} GB of weights. A step reads "
        f"{ex.r(read_two / 1e9)} GB, in {ex.r(two.memory_s * 1e3)} ms: its half of the weights a token "
        "multiplies, and the activations. (The embedding table is held, not multiplied: a token looks up its row.)",
        f"Then {ex.r(two.communication_s * 1e3)} ms of all-reduces: {ex.r(two.per_user)} tokens/s.",
        f"$T$ = 4: each GPU reads {ex.r(read_four / 1e9)} GB a step, {ex.r(four.memory_s * 1e3)} ms, "
        f"+ {ex.r(four.communication_s * 1e3)} ms: {ex.r(four.per_user)} tokens/s.",
        f"Twice the GPUs give {ex.r(four.per_user / two.per_user)}× the speed, not 2×.",
    ]
    ex.conclusion = "The memory term shrinks with the GPUs; the all-reduces do not."
    return ex


def _draft_rounds() -> Example:
    a = 0.8
    ex = Example("tokens per round of speculative decoding",
                 f"Each draft token is accepted with chance $a$ = {a} (given the ones before it). How many "
                 "tokens does a round yield, and how long should the draft be?")
    ex.steps = [
        "$\\mathbb{E} = 1 + a + a^2 + \\dots + a^k = (1 - a^{k+1}) / (1 - a)$.",
        ", ".join(f"$k$ = {k}: {ex.r(expected_tokens_per_step(a, k))}" for k in (1, 3, 5)) + " tokens a round.",
        "The $k$-th draft token adds $a^k$: " + ", ".join(ex.r(a ** k, 2) for k in range(1, 6)) + ".",
        f"No draft, however long, passes $1 / (1 - a)$ = {ex.r(1 / (1 - a))} tokens a round.",
    ]
    ex.conclusion = "Each draft token costs as much as the one before and adds less: a short draft is usual."
    return ex


def _index_card() -> Example:
    acc, name, B, L = "H200 SXM", "Qwen2.5-7B", 16, 4096
    card = read_card(acc, name, batch=B, context_tokens=L)
    memory_s = card.weights_time_s + card.cache_time_s + card.activation_time_s
    ex = Example(f"the index card for {name} on the {acc}",
                 f"Fill in the card for {name} in BF16 on the {acc}: {B} sequences of {L:,} tokens.")
    ex.steps = [
        f"Fit: weights {ex.r(card.stored_weight_bytes / 1e9, 4)} GB and caches {ex.r(card.cache_bytes / 1e9)} GB "
        f"against {ex.r(card.memory.usable_bytes / 1e9, 4)} GB usable.",
        f"Times per step: weights {ex.r(card.weights_time_s * 1e3)} ms, caches {ex.r(card.cache_time_s * 1e3)} ms, "
        f"activations {ex.r(card.activation_time_s * 1e3)} ms; math {ex.r(card.math_time_s * 1e3)} ms.",
        f"Memory, {ex.r(memory_s * 1e3)} ms, outlasts the math: {card.verdict}.",
        f"Ceiling: {B} tokens a step = {ex.r(card.ceiling)} tokens/s, {ex.r(card.ceiling / B)} for each user.",
    ]
    ex.conclusion = "Fit, then the two times; the longer one names the wall and the lever."
    return ex


#: name -> the function that works the example (``CONTENTS`` names them)
EXAMPLES: dict[str, Callable[[], Example]] = {
    "balance_point": _balance_point, "decode_ceiling": _decode_ceiling, "prefill_crossover": _prefill_crossover,
    "batch_knee": _batch_knee, "cache_fit": _cache_fit, "launch_overhead": _launch_overhead,
    "fp8_weights": _fp8_weights, "experts_touched": _experts_touched, "tensor_parallel": _tensor_parallel,
    "draft_rounds": _draft_rounds, "index_card": _index_card,
}


# ---- a session's deck --------------------------------------------------------------------------

def chapter_title(stem: str, root: Path = ROOT) -> str:
    """A chapter's title, its first top-level heading."""
    m = re.search(r"^# (.+)$", course.markdown(course.chapter_path(stem, root)), re.M)
    return m.group(1).strip() if m else stem


def chapter_name(stem: str, root: Path = ROOT) -> str:
    """"Chapter 2: Decode: ..." for a numbered chapter, its title otherwise."""
    return f"Chapter {int(stem[:2])}: {chapter_title(stem, root)}" if stem[:2].isdigit() else chapter_title(stem, root)


def chapter_ref(stem: str, root: Path = ROOT) -> str:
    """A chapter as a sentence names it: "Chapter 2" for a numbered chapter, its title otherwise."""
    return f"Chapter {int(stem[:2])}" if stem[:2].isdigit() else chapter_title(stem, root)


def exercise_names(root: Path = ROOT) -> dict[str, tuple[course.Exercise, str]]:
    """label -> (exercise, its name as the book numbers it: "Exercise 2.3" in a numbered chapter,
    "Exercise 1 of the primer" on an unnumbered page), for every chapter's exercises; read once for
    each state of the chapters' files."""
    return _exercise_names(tuple((p, p.stat().st_mtime_ns) for p in sorted((root / "chapters").glob("*.ipynb"))))


@lru_cache(maxsize=1)
def _exercise_names(stamped: tuple[tuple[Path, int], ...]) -> dict[str, tuple[course.Exercise, str]]:
    out = {}
    for p, _ in stamped:
        for i, e in enumerate(course.exercises(p), start=1):
            out[e.label] = (e, f"Exercise {int(p.stem[:2])}.{i}" if p.stem[:2].isdigit()
                            else f"Exercise {i} of the {p.stem}")
    return out


def exercise_name(ex: course.Exercise, root: Path = ROOT) -> str:
    """How the book numbers an exercise (``exercise_names``)."""
    return exercise_names(root)[ex.label][1]


_ROLE = re.compile(r"\{([\w:-]+)\}`([^`]*)`")


def plain(text: str, root: Path = ROOT) -> str:
    """MyST Markdown as plain Markdown for a slide: each role ({numref}, {doc}, {ref}, {term},
    {cite:p}, ...) as the words a reader sees (a chapter as "Chapter 2", ``chapter_ref``); math
    and Markdown kept."""
    names = exercise_names(root)

    def role(m: re.Match) -> str:
        kind, body = m.groups()
        shown = re.match(r"^(.*?)\s*<([^>]+)>$", body, re.S)
        if shown and "%s" not in shown.group(1):
            return shown.group(1)
        target = shown.group(2) if shown else body
        if kind == "doc":
            page = root / "chapters" / f"{Path(target).name}.md"  # a page, not a chapter: its title's head
            if page.exists():
                title = re.search(r"^# (.+)$", page.read_text(encoding="utf-8"), re.M)
                return title.group(1).split(":")[0].strip() if title else Path(target).name
            return chapter_ref(Path(target).name, root)
        if kind in ("numref", "ref") and target in names:
            return names[target][1]
        if kind == "ref" and target.startswith("chapter-"):
            stems = [p.stem for p in (root / "chapters").glob("*.ipynb")
                     if f"({target})=" in course.markdown(p)]
            if stems:
                return chapter_ref(stems[0], root)
        if kind.startswith("cite"):
            return ""
        return target.replace("-", " ")

    return _ROLE.sub(role, text)


@dataclass
class Deck:
    number: int
    session: course.Session
    figures: list[str]                          # names of 16:9 exports, in the deck's order
    equations: list[tuple[str, Equation]]       # (chapter, equation)
    example: Example
    in_class: list[course.Exercise]             # in the order the agenda takes them, then the book's
    homework: list[course.Exercise]
    take_home: list[course.Exercise]            # set with the session's take-home reading, not homework
    answers: dict[str, str] = field(default_factory=dict)   # in-class exercise's label -> its solution
    quiz: list[course.Question] = field(default_factory=list)  # the session's questions of the quiz bank

    @property
    def name(self) -> str:
        return f"session-{self.number:02d}"

    @property
    def chapters(self) -> tuple[str, ...]:
        return self.session.chapters


def _unique(names) -> list[str]:
    return list(dict.fromkeys(names))


def solution(ex: course.Exercise, root: Path = ROOT) -> str:
    """The text of an exercise's solution, as its chapter writes it; a ValueError when the chapter
    has none (a deck's speaker notes give every in-class exercise's answer)."""
    found = course.solutions(course.chapter_path(ex.chapter, root)).get(ex.label)
    if not found:
        raise ValueError(f"ex: {ex.label} ({ex.chapter}) has no solution in its chapter; a deck's speaker notes "
                         "give the answer of every exercise done in class")
    return found.strip()


def in_agenda_order(exercises: list[course.Exercise], session: course.Session) -> list[course.Exercise]:
    """``exercises`` in the order the session's agenda takes them, those it does not name after
    them in the book's order."""
    order = {label: i for i, label in enumerate(_unique(course.agenda_labels(session)))}
    return sorted(exercises, key=lambda e: order.get(e.label, len(order)))


def session_quiz(number: int, root: Path = ROOT) -> list[course.Question]:
    """Session ``number``'s questions of the quiz bank (``course.quiz_questions``), in order."""
    path = course.QUIZ_PATH if root == ROOT else root / course.QUIZ_PATH.relative_to(ROOT)
    return [q for q in course.quiz_questions(path) if q.session == number]


def deck(number: int, session: course.Session, contents: dict[str, Contribution] | None = None,
         root: Path = ROOT) -> Deck:
    """Session ``number``'s deck. Its figures: those its agenda reads together
    (``course.agenda_figures``), then those its chapters bring (``CONTENTS``); its equations
    and its worked example (the first chapter's that names one): its chapters'; its exercises:
    ``course.in_class_exercises`` for class (in the agenda's order, each with its solution for
    the speaker notes), the rest for homework and with the take-home reading; its quiz: the
    session's questions of the quiz bank. A ValueError when the session would have no figure, no
    equation or no example, or an in-class exercise no solution."""
    contents = contributions(root=root) if contents is None else contents
    brought = [contents.get(stem, Contribution(stem)) for stem in session.chapters]
    figures = _unique(course.agenda_figures(session) + [f for b in brought for f in b.figures])
    unknown = [f for f in figures if f not in export.WIDE]
    if unknown:
        raise ValueError(f"session {number}: figures {unknown} have no 16:9 export (export.WIDE)")
    equations = [(b.chapter, e) for b in brought for e in b.equations]
    examples = [b.example for b in brought if b.example]
    missing = [what for what, have in (("figure", figures), ("equation", equations), ("worked example", examples))
               if not have]
    if missing:
        raise ValueError(f"session {number} ({session.topic}): its chapters {', '.join(session.chapters)} bring no "
                         f"{', no '.join(missing)} in slides.CONTENTS")
    in_class = in_agenda_order(course.in_class_exercises(session, root), session)
    homework = course.homework_exercises(session, root)
    listed = {e.label for e in in_class + homework}
    take_home = [e for e in course.take_home_exercises(session, root) if e.label not in listed]
    return Deck(number, session, figures, equations, EXAMPLES[examples[0]](), in_class, homework, take_home,
                {e.label: solution(e, root) for e in in_class},
                session_quiz(number, root))


def decks(sessions: tuple[course.Session, ...] | None = None, root: Path = ROOT) -> list[Deck]:
    """Every session's deck, numbered as the course plan numbers the sessions."""
    sessions = course.SESSIONS if sessions is None else sessions
    contents = contributions(root=root)
    return [deck(i, s, contents, root) for i, s in enumerate(sessions, start=1)]


def figure_title(name: str) -> str:
    """The title a 16:9 export draws (its first line), for the slide's alternative text."""
    title = export.wide_figure(export.WIDE[name])["layout"].get("title") or ""
    text = title.get("text", "") if isinstance(title, dict) else title
    return html.unescape(re.sub(r"<[^>]+>", "\n", text)).split("\n")[0].strip()


#: a lettered part that starts a sentence, "... two? (b) At which ...", not one a sentence names
_PARTS = re.compile(r"(?<=[.?!])\s\(([a-h])\)\s")


def _parts(text: str, root: Path) -> str:
    """Text for a slide or its notes: roles as words, each lettered part that starts a sentence
    on its own line."""
    return _PARTS.sub(lambda m: f"\n\n({m.group(1)}) ", plain(text, root))


def _exercise_text(ex: course.Exercise, root: Path) -> str:
    """An exercise's text for a slide (``_parts``)."""
    return _parts(ex.text, root)


def answer_text(d: Deck, ex: course.Exercise, root: Path = ROOT) -> str:
    """An in-class exercise's answer for the speaker notes: its chapter's solution, rendered as
    the slide renders the exercise (``_parts``), its numbers as the solution states them."""
    return _parts(d.answers[ex.label], root)


def _exercise_source(ex: course.Exercise, root: Path) -> str:
    """The line under an exercise's heading: its kind and level, and what it needs beyond the
    slide: the book's figure with its controls (an explore exercise), a live kernel."""
    needs = []
    if ex.kind == "explore":
        needs.append(f"with the book's figure and its controls ({chapter_ref(ex.chapter, root)})")
    if course.needs_kernel(ex):
        needs.append("part of it in a running notebook (Binder or JupyterLab)")
    return " · ".join([ex.title] + needs)


_AGENDA_FIGURE = re.compile(r"\[figure (\w+)\]")
_AGENDA_REF = re.compile(r"\[([^\]\s]+)\]")


def activity_text(activity: str, root: Path = ROOT, quiz: int = 0) -> str:
    """An agenda activity in a slide's words: its exercises by their numbers, its figures by their
    titles, the quiz as the ``quiz`` questions that end the deck (where there are any)."""
    names = exercise_names(root)

    def ref(m: re.Match) -> str:
        if m.group(1) == "quiz":
            return (f"the {quiz} question{'s' if quiz > 1 else ''} at the end of this deck" if quiz
                    else "the quiz")
        return names[m.group(1)][1] if m.group(1) in names else m.group(1)

    text = _AGENDA_FIGURE.sub(lambda m: f"the figure “{figure_title(m.group(1))}”", activity)
    return plain(_AGENDA_REF.sub(ref, text), root)


def on_the_sheet_with_own_numbers(ex: course.Exercise) -> bool:
    """Whether a homework sheet (``make homework``, ``inferlimits.book.homework.render``) gives
    ``ex`` numbers of its own: a template of ``inferlimits.book.homework`` varies it, as
    ``render.session_sheet`` decides; a sheet sets any other assigned exercise as the book writes it."""
    from inferlimits.book.homework import templates

    t = templates().get(ex.label)
    return t is not None and t.chapter == ex.chapter


#: what the homework slide says: the graded homework is each student's seeded sheet, not the
#: book's versions, whose solutions the full book shows
HOMEWORK_SHEET = ("Graded: your own seeded sheet (`make homework`). Work the sheet, not the book's versions. "
                  "It is drawn from these exercises:")
#: what the slide of the take-home reading's exercises says
TAKE_HOME_PRACTICE = "Optional practice, not graded. The full book's solutions let you check your work."


def homework_text(d: Deck, root: Path = ROOT) -> str:
    """The homework slide: the graded homework is the student's own seeded sheet (``make
    homework``), drawn from the session's assigned exercises (``course.homework_exercises``,
    read when the deck is built), each marked as the sheet sets it: with numbers of its own, or as
    the book sets it (``on_the_sheet_with_own_numbers``)."""
    def how(e: course.Exercise) -> str:
        return "with numbers of its own" if on_the_sheet_with_own_numbers(e) else "as the book sets it"

    return (f"## Homework\n\n{HOMEWORK_SHEET}\n\n"
            + "\n".join(f"- {exercise_name(e, root)} ({e.title}), {how(e)}" for e in d.homework))


def take_home_text(d: Deck, root: Path = ROOT) -> str:
    """The slide of the exercises set with the take-home reading: optional practice, not graded
    (the session's ``course.practice_exercises`` of its take-home chapters)."""
    reading = ", ".join(chapter_ref(c, root) for c in d.session.take_home)
    return (f"## With the take-home reading ({reading})\n\n{TAKE_HOME_PRACTICE}\n\n"
            + "\n".join(f"- {exercise_name(e, root)} ({e.title})" for e in d.take_home))


def notebook(d: Deck, root: Path = ROOT):
    """The deck as a notebook: Markdown cells, each with its reveal.js slide type."""
    import nbformat

    cells = []

    def slide(source: str, kind: str = "slide", css: str = "") -> None:
        if css:
            source = f'<div class="{css}">\n\n{source}\n\n</div>'
        cells.append(nbformat.v4.new_markdown_cell(source, metadata={"slideshow": {"slide_type": kind}}))

    s = d.session
    lines = [f"- Reading: {chapter_name(c, root)}" for c in s.chapters]
    lines += [f"- Take-home reading: {chapter_name(c, root)}" for c in s.take_home]
    lab = f"\n\n**Lab:** {plain(s.lab, root)}" if s.lab else ""
    slide(f"# Session {d.number}: {s.topic}\n\n" + "\n".join(lines) + lab, css="deck-title")
    if s.notes:
        slide(plain(s.notes, root), "notes")
    if s.agenda:
        rows = "\n".join(f"| {minutes} min | {activity_text(activity, root, len(d.quiz))} |"
                         for minutes, activity in s.agenda)
        slide(f"## Today\n\n| | |\n|---|---|\n{rows}", css="deck-agenda")
    stems = _unique(list(d.chapters) + [export.WIDE[f].chapter for f in d.figures])
    for stem in stems:
        for name in [f for f in d.figures if export.WIDE[f].chapter == stem]:
            alt = html.escape(figure_title(name), quote=True)
            slide(f'<img class="deck-figure" src="{FIGURES_DIR}/{name}.svg" alt="{alt}">', css="deck-figure-slide")
            slide(f"From {chapter_name(stem, root)}: its figure as the chapter opens it. "
                  "The book's figure has the controls.", "notes")
        eqs = [e for c, e in d.equations if c == stem]
        for i in range(0, len(eqs), 3):
            body = "\n\n".join(f"{e.says}\n\n$$\n{e.tex}\n$$" for e in eqs[i:i + 3])
            slide(f"## Key equations\n\n<p class=\"deck-source\">{html.escape(chapter_name(stem, root))}</p>\n\n{body}",
                  css="deck-equations")
    ex = d.example
    steps = "\n".join(f"{i}. {step}" for i, step in enumerate(ex.steps, start=1))
    slide(f"## Worked example: {ex.title}\n\n{ex.question}\n\n{steps}\n\n**{ex.conclusion}**\n\n"
          "<p class=\"deck-source\">Every number computed by the book's package when this deck was built.</p>",
          css="deck-example")
    for e in d.in_class:
        slide(f"## In class: {exercise_name(e, root)}\n\n"
              f"<p class=\"deck-source\">{html.escape(_exercise_source(e, root))}</p>\n\n"
              f"{_exercise_text(e, root)}", css="deck-exercise")
        slide(f"**Answer** (the solution in {chapter_ref(e.chapter, root)}):\n\n{answer_text(d, e, root)}", "notes")
    if d.homework:
        slide(homework_text(d, root), css="deck-homework")
    if d.take_home:
        slide(take_home_text(d, root), css="deck-homework")
    if s.setup:
        slide(f"## Before the next session: set up\n\n{plain(s.setup, root)}", css="deck-homework")
    for i, q in enumerate(d.quiz, start=1):
        slide(f"## Quiz: question {i} of {len(d.quiz)}\n\n"
              f"<p class=\"deck-source\">{html.escape(f'{q.id} · {chapter_ref(q.chapter, root)} · {q.kind}')}</p>\n\n"
              f"{plain(q.text, root)}", css="deck-quiz")
        slide(f"**Key** ({q.id}): {plain(q.key, root)}", "notes")
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["title"] = f"Session {d.number}: {s.topic}"
    nb.metadata["inferlimits"] = {"deck": d.name, "made_by": "python -m inferlimits.book.slides"}
    return nb


# ---- HTML: nbconvert's reveal.js exporter, offline ----------------------------------------------

#: nbconvert's reveal template, with the blocks that load jQuery, require.js, mermaid and MathJax
#: from CDNs left empty, and reveal.js loaded from the decks' own copy
TEMPLATE = r"""{%- extends 'index.html.j2' -%}
{%- block html_head_js -%}{%- endblock html_head_js -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
{%- block html_head_js_mathjax -%}
<style type="text/css">
{{ resources.deck_css }}
</style>
{%- endblock html_head_js_mathjax -%}
{% block footer_js %}
<script src="{{ resources.reveal.url_prefix }}/dist/reveal.js"></script>
<script src="{{ resources.reveal.url_prefix }}/plugin/notes/notes.js"></script>
<script>
{{ resources.deck_js }}
</script>
{% endblock footer_js %}
"""

CSS = """
.reveal .slides { text-align: left; }
.reveal .slides section { font-size: %(font)dpx; line-height: 1.3; padding: 0; }
.reveal .jp-Cell, .reveal .jp-Cell-inputWrapper, .reveal .jp-InputArea, .reveal .jp-MarkdownCell,
.reveal .jp-Notebook-cell { padding: 0; margin: 0; border: 0; }
.reveal .jp-InputArea-prompt, .reveal .jp-InputPrompt { display: none; }
.reveal .jp-RenderedHTMLCommon { font-size: inherit; line-height: inherit; padding: 0; overflow: visible;
  font-family: inherit; color: inherit; }
.reveal .jp-RenderedHTMLCommon p, .reveal .jp-RenderedHTMLCommon li { font-size: inherit; }
.reveal .slides h1 { font-size: 1.9em; text-transform: none; }
.reveal .slides h2 { font-size: 1.35em; text-transform: none; margin: 0 0 0.4em 0; }
.reveal .slides section > * { box-sizing: border-box; }
.reveal .deck-title, .reveal .deck-agenda, .reveal .deck-equations, .reveal .deck-example,
.reveal .deck-exercise, .reveal .deck-homework, .reveal .deck-quiz { padding: 36px 56px; }
.reveal .deck-agenda table { font-size: 0.8em; border-collapse: collapse; margin: 0; }
.reveal .deck-agenda td { padding: 0.15em 0.6em 0.15em 0; border: 0; vertical-align: top; text-align: left; }
.reveal .deck-agenda td:first-child { white-space: nowrap; color: #666; }
.reveal .deck-agenda thead { display: none; }
.reveal .deck-title { padding-top: 150px; }
.reveal .deck-title ul { margin-left: 1em; }
.reveal .deck-source { color: #666; font-size: 0.7em; margin: 0 0 0.8em 0; }
.reveal .deck-figure-slide, .reveal .deck-figure-slide p { margin: 0; padding: 0; }
.reveal img.deck-figure { display: block; width: %(width)dpx; height: %(height)dpx; margin: 0; border: 0;
  box-shadow: none; max-width: none; max-height: none; }
.reveal .deck-equations mjx-container[display="true"] { margin: 0.3em 0 0.8em 0; }
.reveal .deck-example ol { margin-left: 1.2em; }
.reveal .deck-example li { margin-bottom: 0.35em; }
.reveal .deck-quiz ul { list-style: none; margin-left: 0.4em; }
.reveal mjx-container { font-size: 100%% !important; }
"""

#: before reveal.js lays the slides out: each slide whose text is taller than the slide is set
#: smaller, a pixel at a time, down to the least size (and marked data-overflow if even that is too
#: tall); then reveal.js starts, at the deck's size, with no margin (a 16:9 page a slide in print)
JS = """
(function () {
  var W = %(width)d, H = %(height)d, MIN = %(min)d;
  function fit() {
    var slides = document.querySelector(".reveal .slides");
    slides.style.width = W + "px"; slides.style.height = H + "px";
    document.querySelectorAll(".reveal .slides section").forEach(function (s) {
      if (s.querySelector("section")) return;
      var old = s.style.cssText;
      s.style.display = "block"; s.style.visibility = "hidden"; s.style.position = "absolute";
      s.style.width = W + "px"; s.style.height = "auto"; s.style.top = "0"; s.style.left = "0";
      var size = parseFloat(getComputedStyle(s).fontSize);
      while (s.scrollHeight > H && size > MIN) { size -= 1; s.style.fontSize = size + "px"; }
      var overflow = s.scrollHeight > H;
      var font = s.style.fontSize;
      s.style.cssText = old;
      if (font) s.style.fontSize = font;
      if (overflow) s.setAttribute("data-overflow", String(s.scrollHeight - H));
    });
    slides.style.width = ""; slides.style.height = "";
  }
  (document.fonts ? document.fonts.ready : Promise.resolve()).then(function () {
    fit();
    return Reveal.initialize({
      controls: true, progress: true, history: true, slideNumber: "c/t", center: false,
      width: W, height: H, margin: 0, pdfMaxPagesPerSlide: 1, transition: "none", showNotes: false,
      plugins: [RevealNotes]
    });
  }).then(function () { window.inferlimitsDeckReady = true; });
})();
"""


#: the speaker view (reveal.js's notes plugin) shows a note's HTML in a window of its own, without
#: the deck's styles: a note with math brings the one rule that keeps each formula's hidden MathML
#: copy (for screen readers) from being drawn beside its SVG, as MathJax's own stylesheet does
NOTES_MATH_CSS = ("<style>.speaker-controls-notes mjx-assistive-mml { position: absolute !important; top: 0; "
                  "left: 0; clip: rect(1px, 1px, 1px, 1px); padding: 1px 0 0 0 !important; border: 0 !important; "
                  "display: block !important; width: auto !important; overflow: hidden !important; "
                  "user-select: none; }</style>\n")


def exporter(tex):
    """nbconvert's SlidesExporter, offline: the template above, reveal.js from ``REVEAL_DIR``
    beside the deck, every formula drawn into SVG by ``tex`` (``mathsvg.TexToSvg``)."""
    from jinja2 import DictLoader, pass_context
    from nbconvert import SlidesExporter
    from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath

    class SvgMathRenderer(IPythonRenderer):
        def block_math(self, body: str) -> str:
            return f'<div class="math display">{tex(body.strip(), True)}</div>'

        def multiline_math(self, text: str) -> str:
            return self.block_math(text.strip().strip("$"))

        def latex_environment(self, name: str, body: str) -> str:
            return self.block_math(f"\\begin{{{name}}}{body}\\end{{{name}}}")

        def inline_math(self, body: str) -> str:
            return tex(body.strip(), False)

    class DeckExporter(SlidesExporter):
        @pass_context
        def markdown2html(self, context, source):
            cell = context.get("cell", {})
            renderer = SvgMathRenderer(escape=False, attachments=cell.get("attachments", {}), embed_images=False,
                                       anchor_link_text=self.anchor_link_text, exclude_anchor_links=True)
            out = MarkdownWithMath(renderer=renderer).render(source)
            notes = cell.get("metadata", {}).get("slideshow", {}).get("slide_type") == "notes"
            return NOTES_MATH_CSS + out if notes and "mjx-assistive-mml" in out else out

    return DeckExporter(template_file="deck.html.j2", extra_loaders=[DictLoader({"deck.html.j2": TEMPLATE})],
                        reveal_url_prefix=REVEAL_DIR, reveal_theme="white", reveal_transition="none",
                        reveal_width=str(SIZE[0]), reveal_height=str(SIZE[1]), exclude_anchor_links=True)


def deck_html(nb, tex, stylesheet: str) -> str:
    """The deck's HTML, from its notebook."""
    width, height = SIZE
    resources = {"deck_css": CSS % {"font": FONT_PX, "width": width, "height": height} + stylesheet,
                 "deck_js": JS % {"width": width, "height": height, "min": MIN_FONT_PX},
                 "metadata": {"name": nb.metadata.get("title", "deck")}}
    body, _ = exporter(tex).from_notebook_node(nb, resources=resources)
    return body


# ---- the build ---------------------------------------------------------------------------------

def copy_reveal(out: Path, reveal: Path = REVEAL) -> None:
    """The parts of the npm package reveal.js that the decks load, into ``out/REVEAL_DIR``."""
    if not (reveal / "dist" / "reveal.js").exists():
        raise FileNotFoundError(f"reveal.js not found at {reveal}; run 'make setup', which installs the npm "
                                "packages of package-requirements.txt")
    target = out / REVEAL_DIR
    shutil.rmtree(target, ignore_errors=True)
    for rel in REVEAL_FILES:
        src, dst = reveal / rel, target / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, dst)


def index_html(built: list[Deck], pdf: bool) -> str:
    rows = "\n".join(
        f'<li><a href="{d.name}.html">Session {d.number}: {html.escape(d.session.topic)}</a>'
        + (f' (<a href="{d.name}.pdf">PDF</a>)' if pdf else "")
        + f' <span>{html.escape(", ".join(chapter_name(c) for c in d.chapters))}</span></li>'
        for d in built)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Decks</title>"
            "<style>body{font:18px/1.5 sans-serif;max-width:60em;margin:2em auto;padding:0 1em}"
            "span{color:#666;display:block;font-size:.85em}li{margin-bottom:.6em}</style></head><body>\n"
            "<h1>The course's decks</h1>\n<p>One deck a session, 16:9; press S in a deck for the speaker "
            "notes (the session's notes, each in-class exercise's answer, each quiz question's key), F for "
            "full screen. The PDFs print the slides only: no answer, no key. These are the instructor's: "
            "do not publish them.</p>\n<ul>\n" + rows + "\n</ul>\n</body></html>\n")


def build(out: Path = OUT, sessions: list[int] | None = None, pdf: bool = True, root: Path = ROOT) -> list[Path]:
    """Write the decks of the sessions numbered ``sessions`` (all where None) into ``out``: each
    one's notebook, HTML and (``pdf``) PDF, with reveal.js, the figures and an index. Returns the
    HTML files."""
    import nbformat

    from inferlimits.book.mathsvg import TexToSvg

    stale = export.stale_wide()
    if stale:
        print("note: some 16:9 exports are out of date (run `make figures`):", ", ".join(stale), file=sys.stderr)
    chosen = [d for d in decks(root=root) if sessions is None or d.number in sessions]
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    copy_reveal(out)
    (out / FIGURES_DIR).mkdir(exist_ok=True)
    for name in {f for d in chosen for f in d.figures}:
        shutil.copy2(export.WIDE_OUT / f"{name}.svg", out / FIGURES_DIR / f"{name}.svg")
    if not MATHJAX.exists():
        raise FileNotFoundError(f"MathJax not found at {MATHJAX}; run 'make setup'")
    tex = TexToSvg(MATHJAX)
    written = []
    try:
        stylesheet = tex.stylesheet()
        for d in chosen:
            nb = notebook(d, root)
            nbformat.write(nb, out / f"{d.name}.ipynb")
            path = out / f"{d.name}.html"
            path.write_text(deck_html(nb, tex, stylesheet), encoding="utf-8")
            written.append(path)
    finally:
        tex.close()
    (out / "index.html").write_text(index_html(chosen, pdf), encoding="utf-8")
    if pdf:
        print_pdfs(out, [p.stem for p in written])
    return written


# ---- PDF: reveal.js's print view, printed by Debian's chromium -----------------------------------

_READY = "() => window.inferlimitsDeckReady === true && document.querySelectorAll('.pdf-page').length > 0"
_OVERFLOW = "() => [...document.querySelectorAll('section[data-overflow]')].map(s => s.textContent.trim().slice(0, 60))"


def print_pdfs(out: Path, names: list[str]) -> list[Path]:
    """Print each deck ``out/NAME.html`` in reveal.js's print view (``?print-pdf``) into
    ``out/NAME.pdf``, one page a slide, the page the slide's size. Raises when a slide's text does
    not fit its slide even at the least size, naming the slide."""
    from playwright.sync_api import sync_playwright

    from inferlimits.book.serve import CHROMIUM, CHROMIUM_FLAGS, serve

    written = []
    with serve(out) as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS, headless=True)
        page = browser.new_page(viewport={"width": SIZE[0], "height": SIZE[1]})
        page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(base) else r.abort())
        for name in names:
            page.goto(f"{base}/{name}.html?print-pdf", wait_until="load")
            page.wait_for_function(_READY, timeout=60_000)
            too_long = page.evaluate(_OVERFLOW)
            if too_long:
                raise ValueError(f"{name}: slides too long for the slide even at {MIN_FONT_PX}px: {too_long}")
            path = out / f"{name}.pdf"
            path.write_bytes(page.pdf(prefer_css_page_size=True, print_background=True))
            written.append(path)
        browser.close()
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m inferlimits.book.slides", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help=f"where to write (default: {OUT.relative_to(ROOT)})")
    parser.add_argument("--session", type=int, action="append", help="only this session (repeatable)")
    parser.add_argument("--no-pdf", action="store_true", help="write the HTML decks only")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    written = build(args.out, args.session, pdf=not args.no_pdf)
    print(f"wrote {len(written)} decks{'' if args.no_pdf else ' and their PDFs'} into {args.out} "
          f"in {time.perf_counter() - start:.1f} s; open {args.out / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
