"""What each project-sized exercise needs, for the lab sheet: one row per project, by its label.

A project (an exercise whose title's subject is ``course.PROJECT``, as in ``extend: project ·
advanced``) may ask for a machine, a runtime, a model to download, or nothing beyond the book. The
chapters say what to do; ``PROJECTS`` says what a student must have to do it:

- **hardware**: one of ``HARDWARE``: nothing to run, any laptop, or an NVIDIA GPU;
- **software**: what to install beyond the book's notebooks;
- **model**: which model's files it needs, and the licence a download asks a student to accept;
- **without a GPU**: the route that needs no GPU, where some part asks for one (a GPU project has
  one); its published runs are named by their keys in ``measurements.toml`` (``runs``);
- **tolerance**: what the tolerance the exercise states applies to. For a measuring project that is
  the student's prediction, computed from the inputs the student measured or chose, never the
  measurement itself.

The lab sheet shows the rows as a table (``projects_markdown``, which ``student.labs_markdown``
writes into the page when the book is built), with the rubric that grades them
(``course.RUBRICS[course.PROJECT]``). ``problems`` lists what keeps the rows and the chapters apart:
a project with no row, a row that names no project, a GPU project with no route around it, a run
that the data do not hold.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from inferlimits.book import ROOT

#: what a project asks of a machine, from least to most
HARDWARE = ("none", "any laptop", "an NVIDIA GPU")
#: the hardware that needs a route around it for a student without one
GPU = "an NVIDIA GPU"

#: the small model the measuring projects suggest, gated on the Hugging Face Hub, and an open one that
#: serves the same projects; the lab sheet says once how to get each (``GATED``)
_SMALL = "Llama-3.2-1B (gated: see above) or Qwen2.5-0.5B (open)."
#: how to get the gated model, and the open one, said once above the table
GATED = ("**Models and licences.** Llama-3.2-1B, which several projects suggest, is gated: on its Hugging "
         "Face page, accept Meta's Llama 3.2 Community License, then log in (`hf auth login`) before you "
         "download it. A GGUF copy of it stays under that licence. Qwen2.5-0.5B is released under Apache "
         "2.0, with no gate, and serves in its place. A gated repository shows its files, even its "
         "`config.json`, only to those who accept its licence, and its authors may approve each request "
         "by hand: choose your model early.")
#: the appendix that shows the published runs (inferlimits/data/measurements.toml)
_A3 = "{doc}`a3_measurements`"


@dataclass(frozen=True)
class Project:
    """What one project-sized exercise needs (see the module's docstring for each field)."""

    label: str                    # the exercise's label, as its chapter writes it
    hardware: str                 # one of HARDWARE
    software: str
    model: str
    tolerance: str                # what the exercise's stated tolerance applies to
    without_gpu: str = ""         # the route with no GPU; "" where nothing asks for one
    runs: tuple[str, ...] = ()    # the published runs (keys of measurements.toml) that route uses


PROJECTS: tuple[Project, ...] = (
    Project(
        "two-speeds-ex7", "none",
        software="Nothing beyond the book: the maker's datasheet, and a calculator or a notebook.",
        model="None: the exercise gives the model's bytes.",
        tolerance="Your numbers, computed from the figures you quote. The grader recomputes them from "
                  "your inputs, not from the book's."),
    Project(
        "decode-ex9", "any laptop",
        software="A runtime that decodes one sequence: llama.cpp, which runs on a CPU, or vLLM, which "
                 "is built for GPUs.",
        model=_SMALL,
        without_gpu="Run llama.cpp on the laptop's CPU. With no download at all, time the small decoder "
                    "of {doc}`13_measure` on your own machine. To warm up, take a single-stream run "
                    f"from {_A3}, such as llama.cpp on a server CPU.",
        runs=("epyc_9274f_cpu_llama2_7b_q4_0_tg128", "d_xdai_m3max_llama2_7b_q4_0", "gptfast_a100_llama31_8b_bf16"),
        tolerance="The bytes, the ceiling, the share and the predicted rate, computed from your model's "
                  "configuration, your datasheet and your measured rate. The measured rate has none: "
                  "report its spread."),
    Project(
        "prefill-ex9", "any laptop",
        software="llama.cpp's `llama-bench`, whose `-p` option sets the prompt lengths; or vLLM or "
                 "`transformers` on a GPU. The longest prompts are slow on a CPU.",
        model=_SMALL,
        without_gpu="Run `llama-bench` on the laptop's CPU. To warm up, take the times to first token "
                    f"in {_A3}: TensorRT-LLM ran one model at two prompt lengths.",
        runs=("trtllm_h100_llama2_7b_fp8_ttft_bs1_128", "trtllm_h100_llama2_7b_fp8_ttft_bs1_2048",
              "b_lmdeploy_a100_llama2_7b_b1_ftl_2048"),
        tolerance="The terms of the bound and the predicted times, from the configuration and the "
                  "datasheet. The measured times have none: repeat them and show their spread."),
    Project(
        "batching-ex7", "none",
        software="Nothing beyond the book: a calculator or a notebook.",
        model="None: the exercise and {doc}`a1_accelerators` give every figure.",
        tolerance="Every figure of the sizing, computed from the chapter's and the appendix's figures; "
                  "counts are exact."),
    Project(
        "kv-cache-ex9", "none",
        software="A browser to read the model's `config.json`, and a calculator or a notebook.",
        model="Only the model's `config.json`: a gated repository shows it only after you accept "
              "its licence.",
        tolerance="Every number, computed from your model's configuration and your accelerator's "
                  "datasheet."),
    Project(
        "overhead-ex7", "any laptop",
        software="PyTorch and `transformers`, with `torch.profiler`. Nsight Systems and CUDA Graphs "
                 "need an NVIDIA GPU.",
        model=f"Any small model that fits, such as {_SMALL}",
        without_gpu="Decode on the CPU: `torch.profiler` records its operators too. For the fix, take "
                    "a static cache or `torch.compile`, not a CUDA Graph. To warm up, take the eager "
                    f"and compiled runs of one loop in {_A3}.",
        runs=("a100_eager_llama2_7b", "a100_compiled_llama2_7b", "b200_eager_llama8b"),
        tolerance="The ceilings and the predictions, from your step's bytes, your bandwidth, and the "
                  "kernel count and launch time read off your own trace. The measured rates have none."),
    Project(
        "low-precision-ex8", "any laptop",
        software="llama.cpp: `llama-bench` times the runs; `llama-quantize` makes the Q8_0 and Q4_0 "
                 "files from an F16 one.",
        model=f"The model as GGUF files: {_SMALL}",
        without_gpu="llama.cpp runs all three formats on a CPU. To warm up, take the pairs of formats "
                    f"in {_A3}: llama.cpp on Apple's M2 Ultra and M3 Max.",
        runs=("m2_ultra_llama7b_q4_0_tg128_pr2917", "m2_ultra_llama7b_q8_0_tg128_pr2917",
              "d_xdai_m3max_llama2_7b_f16", "d_xdai_m3max_llama2_7b_q4_0"),
        tolerance="The ceilings and the speed-ups the bytes predict, from your files' sizes and your "
                  "bandwidth. The measured rates and speed-ups have none."),
    Project(
        "moe-ex8", "none",
        software="The book's package, in a running notebook or a copy of the student notebooks "
                 "(`make lab`): your row goes in its `inferlimits/data/models.toml`. Binder keeps "
                 "nothing, so download the file you edit.",
        model="Only the model's `config.json` and model card: a gated repository shows its files "
              "only after you accept its licence.",
        tolerance="Every number, computed from your row; the package must give the same. Counts are exact."),
    Project(
        "serving-at-scale-ex9", "none",
        software="Nothing beyond the book: a calculator, or the book's package in a running notebook.",
        model="None: the exercise and the book's data give every figure.",
        tolerance="Every row of the table, computed from the book's data and its assumed prices; "
                  "counts are exact."),
    Project(
        "speculative-ex6", GPU,
        software="vLLM, which reports the mean acceptance length, with a draft model that shares the "
                 "target's tokenizer.",
        model="A target and a draft of one family. Llama-3.1-8B with Llama-3.2-1B: both gated, accept "
              "both licences. Qwen2.5-7B with Qwen2.5-0.5B: both under Apache 2.0, no gate.",
        without_gpu=f"Fit the model to a published sweep in {_A3}: TensorRT-LLM decoded DeepSeek-R1 "
                    "without a draft and with drafts of one to five tokens (the exercise's warm-up). "
                    "Hand in the fit, the predicted best length and the paragraph.",
        runs=("c_trtllm_blog1_b200_dsr1_nvfp4_nomtp", "c_trtllm_blog1_b200_dsr1_nvfp4_mtp1",
              "c_trtllm_blog1_b200_dsr1_nvfp4_mtp2", "c_trtllm_blog1_b200_dsr1_nvfp4_mtp3",
              "c_trtllm_blog1_b200_dsr1_nvfp4_mtp4", "c_trtllm_blog1_b200_dsr1_nvfp4_mtp5"),
        tolerance="The fitted acceptance, the draft's cost, the speed-ups and the predicted best length, "
                  "computed from the acceptance lengths and rates you measured or read. The "
                  "measurements have none."),
    Project(
        "index-card-ex8", "none",
        software="The book's package, in a running notebook or a copy of the student notebooks "
                 "(`make lab`): your row goes in its `inferlimits/data/accelerators.toml`.",
        model="None: the book's data hold both models.",
        without_gpu="Only the optional measured rate asks for the part itself. Without the part, "
                    "compare a published run: of your part if you find one, else of its neighbour in "
                    f"{_A3}.",
        tolerance="The card's numbers, computed from your row of the data. A measured rate has none."),
    Project(
        "worked-example-ex7", "none",
        software="Nothing beyond the book: a calculator or a notebook.",
        model="None: the exercise and the book's data give every figure.",
        tolerance="Every number of your plan, computed from the book's data; counts are exact."),
    Project(
        "measure-ex8", "any laptop",
        software="The student notebooks on your own computer (`make lab`), not Binder: the chapter "
                 "measures the machine it runs on.",
        model="None: the chapter's small decoder is built in the notebook, with nothing to download.",
        tolerance="Your predictions: the formulas evaluated at the bandwidth and math rate you "
                  "measured. Never the measurements."),
)


def projects() -> tuple[Project, ...]:
    return PROJECTS


def project(label: str) -> Project:
    """The row of the project whose exercise has ``label``."""
    for p in PROJECTS:
        if p.label == label:
            return p
    raise ValueError(f"label: no project row for {label!r}")


def project_exercises(root: Path = ROOT) -> list:
    """The project-sized exercises of the student notebooks, in the book's order (``course.Exercise``)."""
    from inferlimits.book import course, student

    return [e for path in student.student_notebooks(root) for e in course.exercises(path) if e.project]


def problems(rows: tuple[Project, ...] = PROJECTS, root: Path = ROOT) -> list[str]:
    """What keeps ``rows`` and the chapters' projects apart, in words (empty where nothing does)."""
    from inferlimits.data.measurements import measurements

    found = {e.label: e for e in project_exercises(root)}
    labels = [r.label for r in rows]
    out = [f"{label}: a project with no row" for label in found if label not in labels]
    out += [f"{label}: a row that names no project" for label in labels if label not in found]
    out += [f"{label}: {labels.count(label)} rows" for label in sorted(set(labels)) if labels.count(label) > 1]
    known = measurements()
    for r in rows:
        if r.hardware not in HARDWARE:
            out.append(f"{r.label}: hardware {r.hardware!r} is not one of {HARDWARE}")
        if r.hardware == GPU and not r.without_gpu:
            out.append(f"{r.label}: it needs a GPU and gives no route without one")
        if r.runs and not r.without_gpu:
            out.append(f"{r.label}: published runs with no route that uses them")
        out += [f"{r.label}: the run {key!r} is not in the data" for key in r.runs if key not in known]
        for name in ("software", "model", "tolerance"):
            if not getattr(r, name).strip():
                out.append(f"{r.label}: no {name}")
    return out


def _cell(text: str) -> str:
    if "|" in text or "\n" in text:
        raise ValueError(f"a table cell cannot hold a '|' or a line break: {text!r}")
    return text


def projects_markdown(rows: tuple[Project, ...] = PROJECTS, root: Path = ROOT) -> str:
    """The lab sheet's section on the projects, as MyST Markdown (links relative to ``chapters/``):
    a table with one row per project, in the book's order, and the rubric that grades them."""
    from inferlimits.book import course

    by_label = {r.label: r for r in rows}
    lines = ["## Projects: what each needs", "",
             "Each chapter ends with a project-sized exercise. Some need only the book. Others need a "
             "machine, a runtime or a model to download. The table says what each needs, and how to "
             "do it without a GPU where a part asks for one.", "",
             "Every project states its tolerance in its last line. For a measuring project, the "
             "tolerance applies to your predictions, computed from the inputs you measured. A "
             "measurement has no tolerance: repeat it and report its spread.", "", GATED, "",
             "| Project | Hardware | Software | Model and licence | Without a GPU | The tolerance applies to |",
             "|---|---|---|---|---|---|"]
    for e in project_exercises(root):
        r = by_label[e.label]
        route = r.without_gpu or ("Nothing to run." if r.hardware == "none" else "Needs no GPU.")
        cells = [f"{course.numref(e)}, {{doc}}`{e.chapter}`", r.hardware, r.software, r.model, route, r.tolerance]
        lines.append("| " + " | ".join(map(_cell, cells)) + " |")
    rubric = course.RUBRICS[course.PROJECT]
    lines += ["", "**How a project is graded.** By the book's rubric for projects. Your instructor's key "
              "lists checkpoints for each one; the rubric says how they count.", "",
              f"- **Full credit:** {rubric.full}",
              f"- **Partial credit:** {rubric.partial}",
              f"- **No credit:** {rubric.none}", ""]
    return "\n".join(lines)
