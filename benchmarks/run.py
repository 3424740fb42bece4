"""Measure the book's budgets (DESIGN.md): build times, kernel-side redraw latency, page weight,
each chapter's main line (words and sentence lengths),
the first visit of chapter 1 with an empty cache (Debian's chromium, bytes by type, uncompressed
and gzip), the first paint of chapters 1, 3 and 8 on a phone (benchmarks/firstpaint.py), notebook
sizes. Reports, never asserts; writes benchmarks/results.json and prints it.

    .venv/bin/python benchmarks/run.py            # all
    .venv/bin/python benchmarks/run.py --no-build # skip the two timed builds
    .venv/bin/python benchmarks/run.py --fresh-clone  # only `make test` on a fresh clone (minutes)
    .venv/bin/python benchmarks/run.py --first-paint [--html DIR]  # only the first paint on a phone (minutes)
"""
from __future__ import annotations

import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD = [str(ROOT / ".venv" / "bin" / "jupyter-book"), "build", str(ROOT), "-W", "-n", "--keep-going", "-q"]


def timed_build(clean: bool) -> float:
    if clean:
        shutil.rmtree(ROOT / "_build", ignore_errors=True)
    t = time.perf_counter()
    subprocess.run(BUILD, check=True, capture_output=True, cwd=ROOT)
    return time.perf_counter() - t


def _control_values(control) -> list:
    """A few values a control can take: its options, or its slider's ends and middle."""
    options = getattr(control, "options", None)
    if options:
        return [o[1] if isinstance(o, tuple) else o for o in options][:8]
    ends = [control.min, control.max, (control.min + control.max) / 2]
    base = getattr(control, "base", None)  # a log slider's min and max are exponents
    return [base ** e for e in ends] if base else ends


def redraw_latency_ms(repeats: int = 40) -> dict[str, float]:
    """Median time from a control's value change to the FigureWidget holding the new data, for
    every control of the book's main panels, built as the chapters build them."""
    from inferlimits.data import hardware, models
    from inferlimits.figures import batching, indexcard, kvcache, moe, precision, prefill, roofline, serving

    names = list(hardware.accelerators())
    datacenter = [n for n, a in hardware.accelerators().items() if a.datacenter]
    dense = [m for m in models.models() if not models.model(m).config.is_moe]
    panels = {"roofline": roofline.panel(names, "B200 (HGX)", 1.0),
              "prefill": prefill.panel(names, "B200 (HGX)", dense, "Llama-3.1-8B", "BF16", 2048),
              "batching": batching.throughput_panel(dense, names, "Llama-3.1-8B", "B200 (HGX)", batch=64),
              "KV-cache ceiling": kvcache.ceiling_panel(dense, names, "Llama-3.1-8B", "B200 (HGX)", batch=64),
              "index card": indexcard.panel(names, dense, "B200 (HGX)", "Llama-3.1-8B", "BF16", "BF16", batch=1,
                                            context_tokens=8192),
              "low precision": precision.panel(names, dense, "B200 (HGX)", "Llama-3.1-8B", "FP8", "FP8", batch=64),
              "mixture of experts": moe.panel([m for m in models.models() if models.model(m).config.is_moe], names,
                                              "DeepSeek-V3", "H200 SXM", batch=64),
              "tensor parallelism": serving.tp_panel(list(models.models()), names, "Llama-3.1-70B", "H100 SXM", "BF16", 4),
              "speculative decoding": serving.speculative_panel(dense, datacenter, "Llama-3.1-70B", "B200 (HGX)", "FP8"),
              "serving frontier": serving.frontier_panel(list(models.models()), datacenter, "Llama-3.1-8B", "H100 SXM",
                                                         "FP8", 1, 1024, 256, 64)}
    out = {}
    for name, panel in panels.items():
        for control in panel.controls:
            values, samples = _control_values(control), []
            for i in range(repeats):
                v = values[i % len(values)]
                if control.value == v:
                    continue
                t = time.perf_counter()
                control.value = v
                samples.append((time.perf_counter() - t) * 1000)
            if samples:
                out[f"{name}: {control.description}"] = statistics.median(samples)
    return out


def page_weights_kb() -> dict[str, float]:
    """Bytes of each chapter page plus what only it loads (figures and math are inline); the shared
    assets under _static (plotly.js, theme) load once per site and are reported apart."""
    html = ROOT / "_build" / "html"
    pages = {p.relative_to(html).as_posix(): p.stat().st_size / 1000 for p in sorted((html / "chapters").glob("*.html"))}
    pages["(shared) _static/plotly-basic.min.js"] = (html / "_static" / "plotly-basic.min.js").stat().st_size / 1000
    return pages


def first_visit_kb(page: str = "chapters/01_two_speeds.html") -> dict:
    """A cold first visit of ``page`` in Debian's chromium, served on loopback (see pageweight.py)."""
    from playwright.sync_api import sync_playwright

    from inferlimits.book.pageweight import first_visit
    from inferlimits.book.serve import CHROMIUM_FLAGS, serve

    with serve(ROOT / "_build" / "html") as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=shutil.which("chromium") or "/usr/bin/chromium",
                                    args=CHROMIUM_FLAGS, headless=True)
        try:
            weight = first_visit(browser, f"{base}/{page}")
        finally:
            browser.close()
    kb = lambda row: {"requests": row["requests"], "kB": round(row["bytes"] / 1000, 1),  # noqa: E731
                      "gzip kB": round(row["gzip_bytes"] / 1000, 1)}
    return {"page": page, **{k: kb(v) for k, v in weight["by_type"].items()}, "total": kb(weight["total"])}


def main_lines() -> dict[str, dict]:
    """Each chapter's main line (``inferlimits.book.prose``): words, median sentence, share of
    sentences over 40 words, glossary terms used without a link."""
    from inferlimits.book import prose

    return {p.page: {"words": p.words, "median sentence": p.median_sentence, "over 40 words": round(p.long_share, 3),
                     "unlinked terms": list(p.unlinked)} for p in prose.table()}


def notebook_sizes_kb() -> dict[str, float]:
    return {p.name: p.stat().st_size / 1000 for p in sorted((ROOT / "chapters").glob("*.ipynb"))}


FRESH = "make test from a fresh clone, s (budget 300)"
FIRST_PAINT = "first paint on a phone, median of 3, s (budget: first contentful paint 1.8, load 6)"


def first_paint(html: Path = ROOT / "_build" / "html") -> dict:
    """Chapters 1, 3 and 8 under Lighthouse's mobile profile (benchmarks/firstpaint.py), served as
    a static host serves them (gzip) and, as the test server does, uncompressed."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import firstpaint

    out = {"date": time.strftime("%Y-%m-%d"), "profile": firstpaint.describe_profile(True).split("; ")[0]}
    for compress, label in ((True, "served gzip-compressed, as a static host serves it"), (False, "served uncompressed")):
        out[label] = firstpaint.measure(html, compress=compress)
    return out


#: where each phase of ``make test`` begins: the first line of its output that holds this text
PHASES = (("build", "jupyter-book build . -W"), ("tests that time the machine, alone", "-m measures"),
          ("student edition, beside the tests that need nothing built", "beside_the_build and not measures"),
          ("the rest of the tests on both cores, then waiting for those beside the build", "--dist loadfile"))


def fresh_clone_test() -> dict:
    """``make test`` on a fresh clone of this checkout's last commit (``.ci/run``'s command), with
    when each phase began as seen in what it prints, and where the test time goes (seconds of one
    core, summed over the workers, from the JUnit reports that ``REPORT=`` asks for)."""
    with tempfile.TemporaryDirectory() as tmp:
        clone, reports = Path(tmp) / "book", Path(tmp) / "reports"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        reports.mkdir()
        start, began = time.perf_counter(), {"set-up (venv, uv, npm) beside chromium's": 0.0}
        run = subprocess.Popen(["make", "test", f"REPORT={reports}"], cwd=clone, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
        said = []
        for line in run.stdout:
            said.append(line)
            for phase, text in PHASES:
                if text in line and phase not in began:
                    began[phase] = time.perf_counter() - start
        if run.wait():
            raise RuntimeError("make test failed on the fresh clone:\n" + "".join(said[-60:]))
        total = time.perf_counter() - start
        ends = [*list(began.values())[1:], total]
        out = {phase: round(end - t, 1) for (phase, t), end in zip(began.items(), ends)}
        files = Counter()
        for report in sorted(reports.glob("*.xml")):
            suite = next(ET.parse(report).iter("testsuite"))
            out[f"pytest {report.stem}"] = round(float(suite.get("time")), 1)
            for case in suite.iter("testcase"):
                where = case.get("classname")
                files["nbval, every chapter" if where.startswith("chapters.") else where] += float(case.get("time"))
        out["total"] = round(total, 1)
        out["test time by file, core-seconds"] = {k: round(v, 1) for k, v in files.most_common(12)}
        return out


def main() -> None:
    if "--first-paint" in sys.argv:   # minutes: measured alone, the other results kept
        results = json.loads((ROOT / "benchmarks" / "results.json").read_text())
        html = Path(sys.argv[sys.argv.index("--html") + 1]) if "--html" in sys.argv else ROOT / "_build" / "html"
        results[FIRST_PAINT] = first_paint(html)
        (ROOT / "benchmarks" / "results.json").write_text(json.dumps(results, indent=2) + "\n")
        print(json.dumps(results[FIRST_PAINT], indent=2))
        return
    if "--fresh-clone" in sys.argv:   # minutes: measured alone, the other results kept
        results = json.loads((ROOT / "benchmarks" / "results.json").read_text())
        results[FRESH] = {"date": time.strftime("%Y-%m-%d"), **fresh_clone_test()}
        (ROOT / "benchmarks" / "results.json").write_text(json.dumps(results, indent=2) + "\n")
        print(json.dumps(results[FRESH], indent=2))
        return
    results = {"machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
                          f"Python {platform.python_version()}", "date": time.strftime("%Y-%m-%d")}
    builds = ("clean build s (budget 90)", "rebuild, nothing changed, s (budget 10)")
    if "--no-build" not in sys.argv:
        results[builds[0]] = round(timed_build(clean=True), 1)
        results[builds[1]] = round(timed_build(clean=False), 1)
    else:   # keep the last timed builds, with their date
        last = json.loads((ROOT / "benchmarks" / "results.json").read_text())
        for key in builds:
            if key in last:
                results[key] = last[key] if "(measured" in str(last[key]) else f"{last[key]} (measured {last['date']})"
    results["redraw median ms (budget 16)"] = {k: round(v, 2) for k, v in redraw_latency_ms().items()}
    results["page kB (budget 1,500 per chapter page)"] = {k: round(v, 1) for k, v in page_weights_kb().items()}
    results["first visit, empty cache (budget 2,000 kB)"] = first_visit_kb()
    results[FIRST_PAINT] = first_paint()
    results["notebook kB (budget 300)"] = {k: round(v, 1) for k, v in notebook_sizes_kb().items()}
    results["main line (budget 3,500 words, median sentence 22, 10% over 40 words)"] = main_lines()
    last = json.loads((ROOT / "benchmarks" / "results.json").read_text())
    if FRESH in last:   # measured by --fresh-clone, kept
        results[FRESH] = last[FRESH]
    (ROOT / "benchmarks" / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
