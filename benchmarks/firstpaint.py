"""First paint on a phone: chapters loaded in Debian's chromium under Lighthouse's mobile profile,
first contentful paint, largest contentful paint and load for each (DESIGN.md, Budgets: first
contentful paint under 1.8 s; issue 34: load within 6 s). Reports, never asserts.

The profile, set through Chromium's DevTools protocol (CDP) on each page before it loads:

- a 390 x 844 viewport, touch (a phone);
- 4x CPU slowdown (``Emulation.setCPUThrottlingRate``);
- 1.6 Mbit/s down, 750 kbit/s up, 150 ms round trips (``Network.emulateNetworkConditions``);
- the cache disabled (``Network.setCacheDisabled``), in a fresh browser context each run.

The site is served on loopback as a static host serves it: text (HTML, CSS, JavaScript, JSON,
SVG) gzip-compressed when the browser asks for it, as GitHub Pages, Read the Docs and Netlify
do; ``--uncompressed`` serves every byte as it is (Python's ``http.server``, the tests' server).
Times are from the start of navigation: first contentful paint and largest contentful paint as
the page's own performance timeline reports them (the largest contentful paint read once every
figure is drawn, still under the profile), load as its ``load`` event; beside them, when every
figure was drawn (figures.js draws them after the load, those near the screen first) and what
arrived until the load. Each chapter is loaded ``runs`` times, and the median is reported.

    .venv/bin/python benchmarks/firstpaint.py                   # _build/html, chapters 1, 3 and 8
    .venv/bin/python benchmarks/firstpaint.py --html DIR --runs 5 chapters/02_decode.html
"""
from __future__ import annotations

import argparse
import gzip
import io
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from inferlimits.book.serve import CHROMIUM, CHROMIUM_FLAGS, Quiet, serve  # noqa: E402

CHAPTERS = ("chapters/01_two_speeds.html", "chapters/03_prefill.html", "chapters/08_moe.html")
#: Lighthouse's mobile profile, as issue 34 states it
PROFILE = {"viewport": {"width": 390, "height": 844}, "cpu_slowdown": 4,
           "down_bits_per_s": 1_600_000, "up_bits_per_s": 750_000, "rtt_ms": 150}
BUDGET_S = {"first contentful paint": 1.8, "load": 6.0}
#: what a static host compresses
COMPRESSED = (".html", ".css", ".js", ".json", ".svg", ".txt", ".map")

#: every figure of the page drawn (figures.js marks each plot's div ready)
DRAWN = "() => [...document.querySelectorAll('.plotly-graph-div')].every((d) => d.dataset.ready === 'true')"
#: read once the page has loaded and its figures are drawn: times from the start of navigation, in ms
TIMES = """() => new Promise((resolve) => {
  let lcp = null;
  new PerformanceObserver((list) => { for (const e of list.getEntries()) lcp = e.startTime; })
    .observe({type: "largest-contentful-paint", buffered: true});
  setTimeout(() => {
    const nav = performance.getEntriesByType("navigation")[0];
    const fcp = performance.getEntriesByName("first-contentful-paint")[0];
    const untilLoad = performance.getEntriesByType("resource").filter((r) => r.responseEnd <= nav.loadEventStart);
    resolve({fcp: fcp ? fcp.startTime : null, lcp, load: nav.loadEventStart, dcl: nav.domContentLoadedEventStart,
             bytes: untilLoad.reduce((s, r) => s + r.transferSize, nav.transferSize), requests: untilLoad.length + 1,
             figures: document.querySelectorAll(".plotly-graph-div").length});
  }, 50);
})"""


class _Host(Quiet):
    """Serves files as a static host does: HTTP/1.1 with keep-alive, and text gzip-compressed
    (level 6) when the browser accepts it."""
    protocol_version = "HTTP/1.1"
    compress = True

    def send_head(self):
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            path = path / "index.html"
        wants = "gzip" in self.headers.get("Accept-Encoding", "")
        if not (self.compress and wants and path.is_file() and path.suffix in COMPRESSED):
            return super().send_head()
        body = gzip.compress(path.read_bytes(), 6)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Vary", "Accept-Encoding")
        self.end_headers()
        return io.BytesIO(body)


def load_once(browser, url: str, profile: dict = PROFILE) -> dict:
    """One cold load of ``url`` under ``profile``: its times in seconds, and what it transferred."""
    context = browser.new_context(viewport=profile["viewport"], has_touch=True, is_mobile=True,
                                  device_scale_factor=1)
    try:
        page = context.new_page()
        cdp = context.new_cdp_session(page)
        cdp.send("Network.enable")
        cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
        cdp.send("Network.emulateNetworkConditions", {
            "offline": False, "latency": profile["rtt_ms"],
            "downloadThroughput": profile["down_bits_per_s"] / 8, "uploadThroughput": profile["up_bits_per_s"] / 8})
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": profile["cpu_slowdown"]})
        page.goto(url, wait_until="load", timeout=120_000)
        # still under the profile: the figures drawn after the page has loaded
        page.wait_for_function(DRAWN, polling=100, timeout=180_000)
        drawn = page.evaluate("() => performance.now()")
        times = page.evaluate(TIMES)
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": 1})
        return {"first contentful paint": times["fcp"] / 1000, "largest contentful paint": (times["lcp"] or times["fcp"]) / 1000,
                "load": times["load"] / 1000, "DOMContentLoaded": times["dcl"] / 1000,
                "every figure drawn": drawn / 1000 if times["figures"] else None,
                "kB until load": times["bytes"] / 1000, "requests until load": times["requests"]}
    finally:
        context.close()


def measure(html: Path, chapters=CHAPTERS, runs: int = 3, compress: bool = True) -> dict:
    """For each chapter, the median of ``runs`` cold loads (seconds, and kB over the wire until load)."""
    from playwright.sync_api import sync_playwright

    out = {}
    with serve(Path(html), type("Host", (_Host,), {"compress": compress})) as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS, headless=True)
        try:
            for chapter in chapters:
                samples = [load_once(browser, f"{base}/{chapter}") for _ in range(runs)]
                out[chapter] = {k: None if samples[0][k] is None else
                                round(statistics.median(s[k] for s in samples), 2 if k != "kB until load" else 1)
                                for k in samples[0]}
                out[chapter]["runs"] = {k: [round(s[k], 2) for s in samples] for k in
                                        ("first contentful paint", "largest contentful paint", "load")}
        finally:
            browser.close()
    return out


def describe_profile(compress: bool = True) -> str:
    p = PROFILE
    return (f"{p['viewport']['width']}x{p['viewport']['height']}, {p['cpu_slowdown']}x CPU slowdown, "
            f"{p['down_bits_per_s'] / 1e6:g} Mbit/s down, {p['up_bits_per_s'] / 1e3:g} kbit/s up, {p['rtt_ms']} ms RTT, "
            f"cache disabled; served {'gzip-compressed, as a static host' if compress else 'uncompressed'}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("chapters", nargs="*", default=list(CHAPTERS), help="pages, relative to the site")
    parser.add_argument("--html", type=Path, default=ROOT / "_build" / "html", help="the built site")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--uncompressed", action="store_true", help="serve every file as it is, not gzip")
    args = parser.parse_args(argv)
    results = measure(args.html, args.chapters, args.runs, compress=not args.uncompressed)
    print(describe_profile(not args.uncompressed))
    print(f"{'page':32} {'FCP s':>7} {'LCP s':>7} {'load s':>7} {'drawn s':>8} {'kB to load':>11}")
    for chapter, r in results.items():
        print(f"{chapter:32} {r['first contentful paint']:7.2f} {r['largest contentful paint']:7.2f} "
              f"{r['load']:7.2f} {r['every figure drawn'] or 0:8.2f} {r['kB until load']:11.1f}")
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
