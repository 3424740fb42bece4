"""The scoreboard of appendix A3, as data and tables: each published run beside the book's expected
figure (cross-validated, ``measured.fitted``) and its ceiling (``measured.compare``), and the
tables the appendix shows of them (the runs, the scores by category beside the peers' reported
errors, the fitted parameters, the largest misses, the sources).

``rows`` gathers the runs from the package; every other function takes plain rows, so that the
tables and the figure (``figures.measured.scoreboard``) are pure functions of what they show."""
from __future__ import annotations

import html
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from IPython.display import Markdown

from inferlimits.arithmetic import expected
from inferlimits.arithmetic.measured import METRIC_UNITS, compare, fitted, predict
from inferlimits.data.measurements import Measurement, measurements
from inferlimits.data.peers import Peer

#: which way a figure counts: a rate (more is faster) or a time (less is faster)
TIMES = ("ms_per_output_token", "ms_to_first_token", "ms_end_to_end")
#: the columns of the table of runs: its header, and whether it sorts by number
COLUMNS = (("run", False), ("hardware", False), ("model", False), ("weights", False), ("sequences", False),
           ("figure", False), ("measured", True), ("expected", True), ("ceiling", True), ("share of ceiling", True),
           ("miss", True), ("source", False))


@dataclass(frozen=True)
class Row:
    """One published run on the scoreboard, every figure in the run's own metric (``unit``)."""

    key: str
    categories: tuple[str, ...]   # of ``expected.CATEGORIES``
    hardware: str                 # "8 × B200 (HGX)"
    model: str
    weights: str                  # "INT4", "FP8", "NVFP4, FP8 math"
    sequences: str                # "1", "960", "64 in flight", "engine's"
    metric: str
    unit: str
    published: float | int        # the figure as its source gives it (a whole number stays one)
    expected: float               # the book's, by a fit that never saw the run's source
    low: float                    # the 80% interval around it
    high: float
    ceiling: float                # the book's ceiling (for a time: the least time)
    share: float                  # the measured rate over the ceiling rate
    source: str                   # the publication, short
    group: str                    # the source as cross-validation leaves it out (``expected.source_group``)
    url: str | None               # where a reader opens it
    clear: bool

    @property
    def miss(self) -> float:
        """expected / measured − 1, in the run's own metric."""
        return self.expected / self.published - 1

    @property
    def setup(self) -> str:
        """The run in a line: "Llama-2-7B, BF16, on A100 80GB SXM, 1 sequence"."""
        if self.sequences == "engine's":
            batch = "the engine's own batch"
        elif self.sequences.endswith("in flight"):
            batch = f"{self.sequences.split()[0]} sequences in flight"
        else:
            batch = f"{self.sequences} sequence{'' if self.sequences == '1' else 's'}"
        return f"{self.model}, {self.weights}, on {self.hardware}, {batch}"


def _sequences(m: Measurement) -> str:
    if m.batch is not None:
        return f"{m.batch:,}"
    if m.concurrency is not None:
        return f"{m.concurrency:,} in flight"
    return "engine's"


def _weights(m: Measurement) -> str:
    if m.math_precision in (m.weight_precision, "unstated"):
        return m.weight_precision
    return f"{m.weight_precision}, {m.math_precision} math"


_URL = re.compile(r"https?://[^\s,;)'\"]+")
_REPO = re.compile(r"(?:^|\(|; )\s*([A-Za-z0-9][\w-]*/[\w.-]+)")
_COMMIT = re.compile(r"\bcommit ([0-9a-f]{40})\b")
_FILE = re.compile(r"[\w.-]+(?:/[\w.-]+)*\.(?:md|rst|py|txt|json|ipynb)\b")


def source_url(source: str) -> str | None:
    """Where a reader opens a run's source: the file on GitHub at the commit read (or at HEAD)
    where the source names a repository and a file in it, else the address it gives, else the
    repository; None for a source with neither (the book's own seed document)."""
    urls = _URL.findall(source)
    text = _URL.sub(" ", source)
    repo = _REPO.search(text)
    if repo:
        found = _FILE.search(text, repo.end())
        commit = _COMMIT.search(text)
        if found:
            return f"https://github.com/{repo.group(1)}/blob/{commit.group(1) if commit else 'HEAD'}/{found.group(0)}"
    if urls:
        return urls[0].rstrip(".")
    return f"https://github.com/{repo.group(1)}" if repo else None


def source_label(m: Measurement) -> str:
    """The publication in a few words: a repository's owner/name, a site's host."""
    group = expected.source_group(m)
    if "://" not in m.source and "/" not in group:
        return group.split(",")[0].split(":")[0]
    head = group.split("/")[0]
    return head if "." in head else group


def rows() -> list[Row]:
    """Every published run, in file order, beside the book's expected figure and ceiling."""
    runs = list(measurements().values())
    f = fitted()
    out = []
    for i, m in enumerate(runs):
        c = compare(m)
        lo, hi = f.low_high[i]
        guess = math.exp(f.log_cross[i])
        hardware = f"{m.gpus} × {m.accelerator}" if m.gpus > 1 else m.accelerator
        out.append(Row(m.key, expected.categories(m), hardware, m.model, _weights(m), _sequences(m), m.metric,
                       METRIC_UNITS[m.metric], m.value, guess, guess * math.exp(lo), guess * math.exp(hi),
                       predict(vars(m)).ceiling, c.share, source_label(m), f.groups[i], source_url(m.source), m.clear))
    return out


def points(runs: Sequence[Row]) -> list[dict]:
    """The rows as the plain points ``figures.measured.scoreboard`` draws."""
    return [dict(key=r.key, categories=r.categories, setup=r.setup, source=r.source, measured=r.published,
                 expected=r.expected, unit=r.unit) for r in runs]


def sig(x: float) -> str:
    """Three significant figures, with thousands separators: 0.795, 81.3, 1,020, 83,900."""
    r = float(f"{x:.3g}")
    return f"{r:,.0f}" if r >= 100 else f"{r:g}"


def _share(x: float) -> str:
    return f"{x:.1%}" if x < 0.01 else f"{x:.0%}"


def _table(header: Sequence[str], body: list[Sequence[object]], align: str) -> Markdown:
    marks = {"l": ":--", "r": "--:"}
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(marks[a] for a in align) + "|"]
    lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in body]
    return Markdown("\n".join(lines))


# ---- the table of runs ---------------------------------------------------------------------------

def runs_html(runs: Sequence[Row]) -> str:
    """Every run as an HTML table in a region that scrolls both ways, its header and its first column
    kept in view; the miss is expected / measured − 1, as the text around it says. The
    site's ``tables.js`` makes the columns sortable and adds a filter (``il-sortable``); a column
    marked ``data-type="number"`` sorts by the number its cells show. An asterisk marks a run whose
    conditions are unclear."""
    esc = html.escape
    number = ' data-type="number"'
    head = "".join(f'<th scope="col"{number if numeric else ""}>{esc(name)}</th>' for name, numeric in COLUMNS)
    body = []
    for r in runs:
        link = f'<a href="{esc(r.url)}">{esc(r.source)}</a>' if r.url else esc(r.source)
        cells = [f"<td>{esc(r.key)}{'' if r.clear else '*'}</td>", f"<td>{esc(r.hardware)}</td>",
                 f"<td>{esc(r.model)}</td>", f"<td>{esc(r.weights)}</td>", f"<td>{esc(r.sequences)}</td>",
                 f"<td>{esc(r.unit)}</td>"]
        for shown in (f"{r.published:,}", sig(r.expected), sig(r.ceiling), _share(r.share), f"{r.miss:+.0%}"):
            cells.append(f"<td>{shown}</td>")
        cells.append(f"<td>{link}</td>")
        body.append(f'<tr data-categories="{esc(", ".join(r.categories))}">{"".join(cells)}</tr>')
    caption = f"The {len(runs)} published runs, each figure in the run's own unit"
    return (f'<div class="il-scroll il-runs" tabindex="0" role="region" aria-label="the table of runs">'
            f'<table class="table il-sortable"><caption>{esc(caption)}</caption><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table></div>')


class Table:
    """An HTML table shown by a notebook cell and by the book (its ``text/html``), with a line of
    plain text for what shows neither."""

    def __init__(self, html_text: str, plain: str):
        self.html, self.plain = html_text, plain

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"text/html": self.html, "text/plain": self.plain}


def runs_table(runs: Sequence[Row]) -> Table:
    """``runs_html`` for a notebook cell."""
    return Table(runs_html(runs), f"<table of {len(runs)} runs>")


# ---- the tables of scores, peers and parameters --------------------------------------------------

def scores_table(scores: Mapping[str, Mapping[str, float]]) -> Markdown:
    """The cross-validated scores (``expected.scores``), over all runs and by category."""
    body = [[name if name != "all" else "every run", s["runs"], f"{s['median error']:.0%}", f"{s['within 25%']:.0%}",
             f"{s['in the 80% interval']:.0%}"] for name, s in scores.items()]
    return _table(["runs", "how many", "median miss", "within 25%", "inside the 80% interval"], body, "lrrrr")


def peers_table(peers: Sequence[Peer], book: Mapping[str, float], runs: int, sources: int) -> Markdown:
    """Each peer's reported accuracy, as its source gives it, under the book's own score."""
    body = [["this book's expected rate", "the chapters' physics, with the parameters below fitted to published runs",
             f"{book['median error']:.0%} median miss, each run predicted without its source",
             f"{runs} published runs from {sources} sources, across vendors", "this appendix"]]
    for p in peers:
        figure = f"{p.figure} ({p.measure})" if p.kind == "error" else f"over-predicts {p.figure} ({p.measure})"
        body.append([p.tool, p.method, figure, f"{p.on}; {p.who}", f"[{p.source.split(',')[0]}]({p.url})"])
    return _table(["tool", "how it predicts", "reported error", "measured on, and by whom", "source"], body, "lllll")


def _parameter_value(p: Mapping[str, object], x: float) -> str:
    if p["unit"] == "share":
        return f"{x:.0%}"
    if p["unit"] == "s":
        return f"{x * 1e6:,.1f} µs" if x < 1e-4 else f"{x * 1e6:,.0f} µs"
    return f"{x:.2f}×"


def parameters_table(table: Sequence[Mapping[str, object]]) -> Markdown:
    """The fitted parameters (``Fitted.parameter_table``): value, the range one standard deviation
    either side, the round value the fit is pulled toward, and what each means."""
    body = [[p["name"], _parameter_value(p, p["value"]),
             f"{_parameter_value(p, p['low'])} to {_parameter_value(p, p['high'])}", _parameter_value(p, p["prior"]),
             p["meaning"]] for p in table]
    return _table(["parameter", "fitted", "one standard deviation", "pulled toward", "meaning"], body, "lrrrl")


def largest_misses(runs: Sequence[Row], how_many: int) -> list[Row]:
    """The ``how_many`` runs the expected figure misses most (by the larger of expected / measured
    and its inverse)."""
    if how_many < 1:
        raise ValueError(f"how_many must be at least 1; got {how_many!r}")
    return sorted(runs, key=lambda r: -abs(math.log(r.expected / r.published)))[:how_many]


def misses_table(runs: Sequence[Row]) -> Markdown:
    """Runs with their setup, figure, expected figure and miss."""
    body = [[r.key, r.setup, f"{r.published:,} {r.unit}", sig(r.expected), f"{r.miss:+.0%}", r.source] for r in runs]
    return _table(["run", "setup", "measured", "expected", "expected ÷ measured − 1", "source"], body, "llrrrl")


def shares_table(runs: Sequence[Row], categories: Sequence[str]) -> Markdown:
    """How close to their ceilings the runs of each category come: the median share, and the
    10th and 90th percentiles."""
    body = []
    for name in ("all", *categories):
        shares = np.array([r.share for r in runs if name == "all" or name in r.categories])
        if shares.size:
            p10, p50, p90 = np.percentile(shares, [10, 50, 90])
            body.append([name if name != "all" else "every run", shares.size, _share(p50), _share(p10), _share(p90),
                         _share(shares.max())])
    return _table(["runs", "how many", "median share of the ceiling", "10th percentile", "90th percentile", "highest"],
                  body, "lrrrrr")


def sources_table(runs: Sequence[Row]) -> Markdown:
    """Each source as cross-validation leaves it out, how many runs it gives, on what hardware, and
    where it is (its first run's address)."""
    seen: dict[str, list[Row]] = {}
    for r in runs:
        seen.setdefault(r.group, []).append(r)
    body = [[f"[{group[0].source}]({group[0].url})" if group[0].url else group[0].source, len(group),
             ", ".join(sorted({g.hardware.split(" × ")[-1] for g in group}))] for group in seen.values()]
    return _table(["publication", "runs", "hardware"], body, "lrl")
