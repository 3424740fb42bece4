"""The scoreboard of appendix A3: its figure (``figures.measured.scoreboard``), the rows it is drawn
from (``figures.scoreboard.rows``), the tables of runs, scores, peers and parameters, the peers'
data file, and the site's table script that sorts and filters the table of runs."""
from __future__ import annotations

import math
import re

import numpy as np
import pytest
from browsers import chromium, needs_chromium

from inferlimits.arithmetic import expected as E
from inferlimits.arithmetic.measured import fitted
from inferlimits.book import sitepages
from inferlimits.data import peers as peers_module
from inferlimits.data.measurements import measurements
from inferlimits.figures import measured as F
from inferlimits.figures import scoreboard as S

RUNS = list(measurements().values())


@pytest.fixture(scope="module")
def rows():
    return S.rows()


def _point(key="r1", categories=("batch 1",), measured=100.0, expected=80.0, unit="tokens/s"):
    return dict(key=key, categories=categories, setup="Llama-3.1-8B, BF16, on H100 SXM, 1 sequence",
                source="owner/repo", measured=measured, expected=expected, unit=unit)


# ---- the figure ---------------------------------------------------------------------------------

def test_a_run_takes_the_colour_of_its_first_category_in_the_order():
    assert F.colour_category(("batched", "MoE", "multi-GPU")) == "MoE"
    assert F.colour_category(("batch 1", "MoE", "multi-GPU", "speculative")) == "speculative"
    assert F.colour_category(("first token", "multi-GPU")) == "first token"
    assert F.colour_category(("batch 1",)) == "batch 1"
    with pytest.raises(ValueError, match="categories"):
        F.colour_category(("unknown",))


def test_the_scoreboard_draws_the_diagonal_the_band_and_a_trace_per_category_on_fixed_log_axes():
    points = [_point("a"), _point("b", ("batched", "MoE"), 5000.0, 6000.0),
              _point("c", ("first token",), 36.0, 38.7, "ms to first token")]
    fig = F.scoreboard(points)
    layout = fig.layout
    for axis in (layout.xaxis, layout.yaxis):
        assert axis.type == "log" and tuple(axis.range) == tuple(math.log10(v) for v in F.RANGE)
    band, diagonal, *markers = fig.data
    assert band.fill == "toself" and band.line.width == 0 and band.name == f"within {F.BAND:.0%}"
    lo, hi = F.RANGE
    assert list(band.y) == [lo * (1 - F.BAND), hi * (1 - F.BAND), hi * (1 + F.BAND), lo * (1 + F.BAND)]
    assert list(diagonal.x) == list(diagonal.y) == [lo, hi]
    assert [t.name for t in markers] == [F.NAMES[c] for c in ("first token", "MoE", "batch 1")]
    moe = markers[1]
    assert list(moe.x) == [5000.0] and list(moe.y) == [6000.0] and list(moe.text) == ["b"]
    assert list(moe.marker.color) == [F.COLOURS["MoE"]] or moe.marker.color == F.COLOURS["MoE"]
    # the hover names the run, its setup, both figures in its unit and its source
    assert "%{text}" in moe.hovertemplate and "%{x" in moe.hovertemplate and "%{y" in moe.hovertemplate
    assert list(markers[0].customdata[0]) == [points[2]["setup"], "ms to first token", "owner/repo"]
    assert layout.title.text and layout.height > 0


def test_the_menu_fades_the_runs_outside_each_category_it_offers():
    points = [_point("a"), _point("b", ("batched", "MoE", "multi-GPU")), _point("c", ("batched", "multi-GPU")),
              _point("d", ("batch 1", "multi-GPU", "speculative"))]
    fig = F.scoreboard(points)
    menu = fig.layout.updatemenus[0]
    labels = [b.label for b in menu.buttons]
    assert labels == ["every run", "speculative", "MoE", "multi-GPU", "batched", "batch 1"]
    traces = [t for t in fig.data[2:]]
    for button in menu.buttons[1:]:
        picked, indices = button.args
        assert list(indices) == list(range(2, 2 + len(traces)))
        chosen = {traces[t].text[i] for t, sel in enumerate(picked["selectedpoints"]) for i in sel}
        assert chosen == {p["key"] for p in points if button.label in p["categories"]}, button.label
    assert menu.buttons[0].args[0]["selectedpoints"] == [None] * len(traces)


def test_figures_are_rounded_to_four_significant_figures_in_the_plot():
    fig = F.scoreboard([_point(measured=104.9123456, expected=81.25463595716947)])
    assert list(fig.data[2].x) == [104.9] and list(fig.data[2].y) == [81.25]


@pytest.mark.parametrize("points, band, field", [([], F.BAND, "points"), ([_point()], 0.0, "band"),
                                                 ([_point()], 1.5, "band"), ([_point(measured=1e9)], F.BAND, "measured"),
                                                 ([_point(expected=0.01)], F.BAND, "expected")])
def test_bad_input_to_the_scoreboard_names_what_is_wrong(points, band, field):
    with pytest.raises(ValueError, match=field):
        F.scoreboard(points, band)


def test_every_run_of_the_book_lies_on_the_scoreboards_axes(rows):
    fig = F.scoreboard(S.points(rows))
    assert sum(len(t.x) for t in fig.data[2:]) == len(RUNS)


# ---- the rows -----------------------------------------------------------------------------------

def test_there_is_a_row_for_every_run_with_its_cross_validated_figure(rows):
    f = fitted()
    assert [r.key for r in rows] == [m.key for m in RUNS]
    for r, m, cross in zip(rows, RUNS, f.log_cross):
        assert r.published == m.value and r.categories == E.categories(m)
        assert math.isclose(r.expected, math.exp(cross))
        assert r.low < r.expected < r.high
    assert np.allclose([abs(r.miss) for r in rows], f.errors())


def test_the_expected_figure_never_beats_the_ceiling_even_from_a_fit_without_its_source(rows):
    for r in rows:
        if r.metric.startswith("ms_"):
            assert r.expected >= r.ceiling * (1 - 1e-9), r.key
        else:
            assert r.expected <= r.ceiling * (1 + 1e-9), r.key
        assert 0 < r.share <= 1, r.key


def test_the_largest_misses_come_first():
    rows = [S.Row(k, ("batch 1",), "H100 SXM", "m", "BF16", "1", "tokens_per_s", "tokens/s", 100, e, e / 2, e * 2, 1000,
                  0.1, "s", "s", None, True) for k, e in (("a", 90.0), ("b", 400.0), ("c", 20.0), ("d", 150.0))]
    assert [r.key for r in S.largest_misses(rows, 2)] == ["c", "b"]
    with pytest.raises(ValueError, match="how_many"):
        S.largest_misses(rows, 0)


@pytest.mark.parametrize("source, url", [
    ("pytorch-labs/gpt-fast README.md (commit 32971d3129541c5bfb4f715abc33d1c5f408d204), Benchmarks table",
     "https://github.com/pytorch-labs/gpt-fast/blob/32971d3129541c5bfb4f715abc33d1c5f408d204/README.md"),
    ("PyTorch blog, 'GPT, Fast' (pytorch/pytorch.github.io, _posts/2023-11-30-accelerating-generative-ai-2.md)",
     "https://github.com/pytorch/pytorch.github.io/blob/HEAD/_posts/2023-11-30-accelerating-generative-ai-2.md"),
    ("mlcommons/inference_results_v5.1 (commit 965182b03376a00fcae415c54e560e1c83937932): closed/AMD/results/x/"
     "performance/run_1/mlperf_log_summary.txt; config closed/AMD/code/y.yaml",
     "https://github.com/mlcommons/inference_results_v5.1/blob/965182b03376a00fcae415c54e560e1c83937932/"
     "closed/AMD/results/x/performance/run_1/mlperf_log_summary.txt"),
    ("ggml-org/llama.cpp pull request 2917, 'metal : speed-up', https://github.com/ggml-org/llama.cpp/pull/2917",
     "https://github.com/ggml-org/llama.cpp/pull/2917"),
    ("randomfoo2, 'llama.cpp Efficiency w/ Different Devices/Backends', r/LocalLLaMA (https://www.reddit.com/r/x/, read)",
     "https://www.reddit.com/r/x/"),
    ("the book's main source document, section 1", None),
])
def test_a_source_becomes_the_address_a_reader_opens(source, url):
    assert S.source_url(source) == url


def test_every_source_but_the_books_own_document_has_an_address(rows):
    missing = {r.source for r in rows if r.url is None}
    assert missing == {"the book's main source document"}
    assert all(r.url.startswith("https://") for r in rows if r.url)


# ---- the tables ---------------------------------------------------------------------------------

def test_the_table_of_runs_has_a_row_per_run_twelve_columns_and_its_marks(rows):
    page = S.runs_html(rows)
    assert page.startswith('<div class="il-scroll il-runs" tabindex="0" role="region"')
    assert '<table class="table il-sortable">' in page
    head = re.search(r"<thead><tr>(.*?)</tr></thead>", page).group(1)
    assert re.findall(r">([^<]+)</th>", head) == [name for name, _ in S.COLUMNS]
    assert head.count('data-type="number"') == sum(numeric for _, numeric in S.COLUMNS)
    body = re.search(r"<tbody>(.*)</tbody>", page).group(1)
    trs = re.findall(r"<tr[^>]*>(.*?)</tr>", body)
    assert len(trs) == len(rows)
    assert all(tr.count("<td>") == len(S.COLUMNS) for tr in trs)
    unclear = [r for r in rows if not r.clear]
    assert unclear and all(f"<td>{r.key}*</td>" in page for r in unclear)
    one = next(r for r in rows if r.key == "gptfast_a100_llama2_7b_bf16")
    assert (f"<td>{one.key}</td><td>A100 80GB SXM</td><td>Llama-2-7B</td><td>BF16</td><td>1</td><td>tokens/s</td>"
            f"<td>104.9</td><td>{S.sig(one.expected)}</td><td>154</td><td>68%</td><td>{one.miss:+.0%}</td>") in page
    assert f'<a href="{one.url}">pytorch-labs/gpt-fast</a>' in page


def test_the_table_of_runs_escapes_what_it_shows():
    row = S.Row("k<1>", ("batch 1",), "H100 SXM", 'a "model"', "BF16", "1", "tokens_per_s", "tokens/s", 10, 9.0, 5.0,
                20.0, 50.0, 0.2, "x & y", "x", "https://e.org/?a=1&b=2", True)
    page = S.runs_html([row])
    assert "k&lt;1&gt;" in page and "a &quot;model&quot;" in page and "x &amp; y" in page
    assert 'href="https://e.org/?a=1&amp;b=2"' in page
    bundle = S.runs_table([row])._repr_mimebundle_()
    assert bundle["text/html"] == page and bundle["text/plain"] == "<table of 1 runs>"


def test_the_scores_table_has_every_category_and_the_figures_it_was_given():
    scores = E.scores(fitted(), RUNS)
    text = S.scores_table(scores).data
    lines = text.splitlines()
    assert len(lines) == 2 + len(scores)
    assert lines[2].startswith("| every run | 176 |")
    s = scores["batched"]
    assert f"| batched | {s['runs']} | {s['median error']:.0%} | {s['within 25%']:.0%} |" in text


def test_the_peers_table_shows_each_peer_with_its_source_under_the_books_own_score():
    peers = list(peers_module.peers().values())
    runs, sources = len(RUNS), len(set(fitted().groups))  # the counts the appendix passes in
    text = S.peers_table(peers, {"median error": 0.183}, runs, sources).data
    lines = text.splitlines()
    assert len(lines) == 3 + len(peers) and "18% median miss" in lines[2]
    assert f"{runs} published runs from {sources} sources" in lines[2]
    for p in peers:
        assert p.url in text and p.figure in text and p.tool in text


def test_the_parameter_table_gives_every_parameter_in_its_unit():
    table = fitted().parameter_table()
    text = S.parameters_table(table).data
    assert len(text.splitlines()) == 2 + len(table)
    ampere = next(p for p in table if p["name"] == "bandwidth, NVIDIA Ampere")
    assert f"| bandwidth, NVIDIA Ampere | {ampere['value']:.0%} | {ampere['low']:.0%} to {ampere['high']:.0%} | 75% |" in text
    assert re.search(r"\| per step \| [\d.]+ µs \| [\d.]+ µs to [\d.]+ µs \| 200 µs \|", text), text
    assert re.search(r"\| communication \| 1\.\d\d× \|", text)
    assert "an AMD Instinct device" in text


def test_the_sources_table_counts_the_runs_of_each_source_as_cross_validation_does(rows):
    text = S.sources_table(rows).data
    body = text.splitlines()[2:]
    assert len(body) == len(set(fitted().groups))
    assert sum(int(line.split(" | ")[1]) for line in body) == len(rows)


def test_the_shares_table_gives_the_median_and_the_spread_of_each_category(rows):
    text = S.shares_table(rows, E.CATEGORIES).data
    assert len(text.splitlines()) == 2 + 1 + len(E.CATEGORIES)
    assert f"| every run | {len(rows)} | {np.median([r.share for r in rows]):.0%} |" in text


# ---- the peers' data ----------------------------------------------------------------------------

def test_every_peer_is_sourced_and_its_figure_reads_as_the_source_gives_it():
    peers = peers_module.peers()
    assert set(peers) == {"roofline", "llm_viewer", "aiconfigurator", "blis"}
    for p in peers.values():
        assert p.url.startswith("https://") and len(p.quote.split()) >= 5 and p.low <= p.high
    assert peers["aiconfigurator"].figure == "45%" and peers["blis"].figure == "10%"
    assert peers["roofline"].figure == "49–54%" and peers["llm_viewer"].figure == "1.44–1.91×"


@pytest.mark.parametrize("change, field", [({"kind": "guess"}, "kind"), ({"low": 0.5, "high": 0.4}, "high"),
                                           ({"url": "http://x"}, "url"), ({"quote": " "}, "quote"),
                                           ({"low": -1.0}, "low")])
def test_a_bad_peer_row_is_named(change, field):
    row = dict(tool="t", method="m", kind="error", low=0.1, high=0.2, measure="m", on="o", who="w", source="s",
               url="https://e.org", quote="q", how="h")
    with pytest.raises(ValueError, match=field):
        peers_module._peer("p", {**row, **change})


# ---- the site ------------------------------------------------------------------------------------

def _context(body: str) -> dict:
    return {"body": body, "pathto": lambda name, _: "../" + name, "css_files": [], "script_files": []}


def test_a_page_with_a_sortable_table_loads_the_table_script_and_others_do_not():
    with_table = _context('<div><table class="table il-sortable"><thead></thead></table></div>')
    sitepages.page_assets(None, "chapters/a3", "page.html", with_table, None)
    assert f'<script defer src="../_static/{sitepages.TABLE_SCRIPT}"></script>' in with_table["body"]
    without = _context('<table class="table"><tr><td>il-sortable</td></tr></table>')
    sitepages.page_assets(None, "chapters/a2", "page.html", without, None)
    assert sitepages.TABLE_SCRIPT not in without["body"]


def test_the_table_script_is_served_by_the_site():
    from inferlimits.book import sphinxext

    assert sitepages.TABLE_SCRIPT in sphinxext.SITE_FILES
    assert (sphinxext.SITE / sitepages.TABLE_SCRIPT).exists()


@needs_chromium
def test_the_table_script_sorts_and_filters_in_a_browser(tmp_path):
    """The table of runs as the book writes it, with the site's table script, in Debian's chromium."""
    pytest.importorskip("playwright.sync_api")
    from inferlimits.book.serve import serve
    from inferlimits.book.sphinxext import SITE

    rows = [S.Row(k, cats, hw, "Llama-3.1-8B", "BF16", "1", "tokens_per_s", "tokens/s", v, e, e / 2, e * 2, 1000.0,
                  share, "src", "src", None, True)
            for k, cats, hw, v, e, share in (("alpha", ("batch 1",), "H100 SXM", 1200, 1000.0, 0.5),
                                             ("beta", ("batched", "MoE"), "8 × B200 (HGX)", 95.5, 120.0, 0.1),
                                             ("gamma", ("speculative", "batch 1"), "A100 80GB SXM", 30, 29.0, 0.05))]
    (tmp_path / "tables.js").write_text((SITE / "tables.js").read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "page.html").write_text(f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>t</title></head><body>{S.runs_html(rows)}'
                                        '<script src="tables.js"></script></body></html>', encoding="utf-8")
    with chromium() as browser, serve(tmp_path) as base:
        page = browser.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{base}/page.html")

        def keys():
            return page.eval_on_selector_all("tbody tr:not([hidden]) td:first-child", "c => c.map(x => x.textContent)")

        assert keys() == ["alpha", "beta", "gamma"]
        page.get_by_role("button", name="measured", exact=True).click()
        assert keys() == ["gamma", "beta", "alpha"]          # by number: 30, 95.5, 1,200
        assert page.get_attribute("th:nth-child(7)", "aria-sort") == "ascending"
        page.get_by_role("button", name="measured", exact=True).click()
        assert keys() == ["alpha", "beta", "gamma"]
        assert page.get_attribute("th:nth-child(7)", "aria-sort") == "descending"
        page.get_by_role("button", name="hardware", exact=True).click()
        assert keys() == ["beta", "gamma", "alpha"]          # by text: 8 × B200, A100, H100
        page.get_by_label("Filter the rows").fill("B200 MoE")      # every word, in any column or category
        assert keys() == ["beta"] and page.text_content("output") == "1 of 3 rows"
        page.get_by_label("Filter the rows").fill("speculative A100")
        assert keys() == ["gamma"]
        page.get_by_label("Filter the rows").fill("")
        assert len(keys()) == 3 and not errors
