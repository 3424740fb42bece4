"""The number-check mechanism itself: parsing and rounding of stated numbers, the static coverage
test, and strict nbval failing on a notebook with a wrong stated value."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from inferlimits.checks import CheckFailed, allow, answer, check, check_range, parse_stated
from inferlimits.book.execute import execute
from inferlimits.checks.numerals import coverage_problems, read_notebook


# ---- stated numbers --------------------------------------------------------------------------

@pytest.mark.parametrize("stated,value,decimals,unit,mode", [
    ("~500", "500", 0, "", "approximate"),
    ("about 6%", "6", 0, "%", "approximate"),
    ("1.07 GB", "1.07", 2, "GB", "plain"),
    ("exactly 1 GiB", "1", 0, "GiB", "exact"),
    ("140,000", "140000", 0, "", "plain"),
    ("≈ 1.43×", "1.43", 2, "×", "approximate"),
    ("128 KiB", "128", 0, "KiB", "plain"),
    ("33.6 million", "33.6", 1, "million", "plain"),
    ("At 1,365", "1365", 0, "", "plain"),
    ("4,096 tokens", "4096", 0, "", "plain"),
    ("m = 4{,}096", "4096", 0, "", "plain"),
    (r"1.07\,\text{GB}", "1.07", 2, "GB", "plain"),
])
def test_parse_stated(stated, value, decimals, unit, mode):
    s = parse_stated(stated)
    assert (str(s.value), s.decimals, s.unit, s.mode) == (value, decimals, unit, mode)


@pytest.mark.parametrize("bad", ["", "about", "5 or 6", None, 42])
def test_parse_stated_rejects_what_is_not_one_number(bad):
    with pytest.raises(ValueError, match="stated"):
        parse_stated(bad)


def test_plain_numbers_must_round_to_the_written_precision(capsys):
    check("a", 1.0737e9, "1.07 GB")
    check("b", 14.96, "15")
    check("c", 0.00356, "0.4%")
    with pytest.raises(CheckFailed, match="1.08 GB"):
        check("d", 1.0737e9, "1.08 GB")
    with pytest.raises(CheckFailed):
        check("e", 498.1, "500")  # no marker: 498 is not 500 at the written precision
    assert capsys.readouterr().out.count("✓") == 3


def test_approximate_markers_allow_the_stated_tolerance():
    check("a", 498.1, "~500")
    check("b", 140_095, "~140,000")
    check("c", 0.0582, "about 6%")
    with pytest.raises(CheckFailed):
        check("d", 480, "~500")          # 4% off and does not round to 500
    check("e", 480, "~500", tolerance=0.05)
    with pytest.raises(ValueError, match="tolerance"):
        check("f", 480, "~500", tolerance=0.9)


def test_exact_means_exact():
    check("a", 2**30, "exactly 1 GiB")
    with pytest.raises(CheckFailed):
        check("b", 2**30 + 1, "exactly 1 GiB")


def test_a_failed_check_names_claim_stated_and_computed():
    with pytest.raises(CheckFailed) as e:
        check("memory ceiling", 510.0, "~600")
    assert "memory ceiling" in str(e.value) and "'~600'" in str(e.value) and "510" in str(e.value)


def test_each_check_prints_one_stable_line(capsys):
    check("memory ceiling", 498.1157992831468, "~500")
    check("memory ceiling", 498.1157992831468, "~500")
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and lines[0] == lines[1]
    assert lines[0] == "✓ memory ceiling: text '~500', computed 498.116 [rounds, or within 3%]"


def test_the_printed_line_shows_changes_inside_the_tolerance(capsys):
    check("x", 498.1, "~500")
    check("x", 499.1, "~500")
    a, b = capsys.readouterr().out.splitlines()
    assert a != b


def test_ranges(capsys):
    check_range("balance points", [152.9, 295.3], "150 and 300")
    check_range("balance points", [152.9, 295.3], "150–300")
    with pytest.raises(CheckFailed):
        check_range("balance points", [152.9, 312.5], "150–300")
    with pytest.raises(ValueError, match="range"):
        check_range("balance points", [1.0], "150")


def test_an_answer_is_checked_like_a_number_and_carries_its_tolerance(capsys):
    answer("crossover on an MI300X", 325.6, "about 326", tolerance=0.02)
    assert capsys.readouterr().out.startswith("answer, tolerance 0.02: ✓ crossover on an MI300X")
    with pytest.raises(CheckFailed, match="crossover"):
        answer("crossover on an MI300X", 340.0, "about 326", tolerance=0.02)
    for bad in (-0.01, 0.5, float("nan"), True, "2%"):
        with pytest.raises(ValueError, match="tolerance"):
            answer("crossover", 325.6, "about 326", tolerance=bad)


def test_allow_needs_a_numeral_and_a_reason():
    allow("2009", "the year the paper appeared")
    with pytest.raises(ValueError, match="reason"):
        allow("2009", "year")
    with pytest.raises(ValueError, match="text"):
        allow("twenty", "a number in words")


# ---- static coverage ---------------------------------------------------------------------------

def _notebook(tmp_path: Path, markdown: str, code: str, name: str = "page.ipynb") -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(markdown),
                nbformat.v4.new_code_cell("from inferlimits.checks import allow, check, check_range\n" + code)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / name
    nbformat.write(nb, path)
    return path


def _problems(tmp_path, markdown, code):
    return coverage_problems(read_notebook(_notebook(tmp_path, markdown, code)))


def test_a_checked_page_passes(tmp_path):
    md = "The B200 moves 8 TB/s and its ridge sits at about 281 FLOP per byte, like the H100 SXM."
    code = 'check("bw", 8e12, "8 TB/s")\ncheck("ridge", 281.25, "about 281")'
    assert _problems(tmp_path, md, code) == []


def test_an_unchecked_numeral_fails(tmp_path):
    problems = _problems(tmp_path, "It runs at 29 tokens per second.", "")
    assert len(problems) == 1 and "'29'" in problems[0]


def test_a_stated_number_missing_from_the_text_fails(tmp_path):
    problems = _problems(tmp_path, "No numbers here.", 'check("x", 29, "29")')
    assert any("does not appear in the text" in p for p in problems)


def test_a_stale_allow_list_entry_fails(tmp_path):
    problems = _problems(tmp_path, "A paper from long ago.", 'allow("2009", "the year the paper appeared")')
    assert any("stale" in p for p in problems)


def test_one_check_cannot_cover_two_places(tmp_path):
    problems = _problems(tmp_path, "We use 4 GPUs and 4 nodes.", 'check("gpus", 4, "4")')
    assert any("appears 2 time(s)" in p for p in problems)
    assert _problems(tmp_path, "We use 4 GPUs and 4 nodes.", 'check("gpus", 4, "4 GPUs")\ncheck("nodes", 4, "4 nodes")') == []


def test_stated_values_must_be_literals(tmp_path):
    problems = _problems(tmp_path, "Nothing.", 'x = "29"\ncheck("rate", 29, x)')
    assert any("string literal" in p for p in problems)


def test_names_labels_and_formula_structure_are_not_quantities(tmp_path):
    md = ("(chapter-one)=\n# On the H100 SXM and the RTX 4090\n\n"
          "Llama-3.1-8B and Qwen2.5-32B in BF16 or FP8; see [the paper](https://example.org/2009.pdf).\n\n"
          "1. a list item\n\n$$F = 2mkn, \\quad M = 3n^2 b$$\n\n**Exercise 2 (compute).**")
    assert _problems(tmp_path, md, "") == []


def test_a_number_inside_math_is_still_a_quantity(tmp_path):
    problems = _problems(tmp_path, "The size is $m = 4{,}096$.", "")
    assert problems, "a quantity written in math must be checked too"


def test_a_markdown_page_with_a_number_fails(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Intro\n\nIt costs 3 dollars.\n")
    assert coverage_problems(read_notebook(page))


# ---- strict nbval over a notebook ----------------------------------------------------------------

def _json(path: Path) -> dict:
    nb = json.loads(path.read_text())
    for cell in nb["cells"]:
        cell["source"] = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
    return nb


def _nbval(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "--nbval", "--nbval-current-env", "-p", "no:cacheprovider",
                           "-p", "no:xdist", "-q", str(path)], capture_output=True, text=True, cwd=path.parent,
                          timeout=120)


def test_nbval_passes_a_correct_notebook_and_fails_a_wrong_stated_value(tmp_path):
    md = "The ridge sits at about 281 FLOP per byte."
    good = _notebook(tmp_path, md, 'check("ridge", 2.25e15 / 8e12, "about 281")', "good.ipynb")
    execute(good)
    assert _nbval(good).returncode == 0

    nb = _json(good)
    nb["cells"][0]["source"] = "The ridge sits at about 381 FLOP per byte."
    nb["cells"][1]["source"] = nb["cells"][1]["source"].replace('"about 281"', '"about 381"')
    wrong = tmp_path / "wrong.ipynb"
    wrong.write_text(json.dumps(nb))
    assert coverage_problems(read_notebook(wrong)) == [], "statically it looks fine..."
    result = _nbval(wrong)
    assert result.returncode != 0, "...but running it must fail"
    assert "CheckFailed" in result.stdout and "about 381" in result.stdout


def test_nbval_fails_when_a_computed_number_moves_inside_the_tolerance(tmp_path):
    md = "The ridge sits at about 281 FLOP per byte."
    path = _notebook(tmp_path, md, 'check("ridge", 2.25e15 / 8e12, "about 281")', "moved.ipynb")
    execute(path)
    nb = _json(path)
    nb["cells"][1]["source"] = nb["cells"][1]["source"].replace("8e12", "8.01e12")  # 280.9: still "about 281"
    path.write_text(json.dumps(nb))
    result = _nbval(path)
    assert result.returncode != 0 and "280.899" in result.stdout
