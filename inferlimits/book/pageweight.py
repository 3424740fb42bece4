"""What a reader's browser transfers on a first visit: one page loaded with an empty cache in a
fresh browser context, every response counted by resource type, uncompressed (the bytes of each
body, as the test server sends them) and as gzip would send them (level 6, what web servers
use). Used by the browser tests (which assert the 2 MB budget) and by benchmarks/run.py."""
from __future__ import annotations

import gzip
from collections import defaultdict


def first_visit(browser, url: str, viewport: dict | None = None) -> dict:
    """Load ``url`` cold and wait until its figures are drawn; bytes by type and in total."""
    context = browser.new_context(viewport=viewport or {"width": 1300, "height": 900})
    try:
        page = context.new_page()
        responses = []
        page.on("response", lambda r: responses.append(r))
        page.goto(url, wait_until="networkidle")
        page.wait_for_function("() => [...document.querySelectorAll('.plotly-graph-div')]"
                               ".every(d => d.dataset.ready === 'true')", timeout=30_000)
        page.wait_for_load_state("networkidle")
        by_type: dict[str, dict[str, int]] = defaultdict(lambda: {"requests": 0, "bytes": 0, "gzip_bytes": 0})
        for r in responses:
            body = r.body()
            row = by_type[r.request.resource_type]
            row["requests"] += 1
            row["bytes"] += len(body)
            row["gzip_bytes"] += len(gzip.compress(body, 6))
        total = {k: sum(row[k] for row in by_type.values()) for k in ("requests", "bytes", "gzip_bytes")}
        return {"url": url, "by_type": dict(sorted(by_type.items())), "total": total}
    finally:
        context.close()
