"""Static number coverage: every numeral in a chapter's markdown must be stated by a check in
the same notebook, or allow-listed there with a reason, and every stated number and allow-list
entry must still be in the text.

Read without running anything: markdown cells are scanned for numerals; code cells are parsed
(``ast``) for calls to ``check``, ``check_range`` and ``allow``, whose stated strings must be
literals. Numerals inside names (H100, BF16, Llama-3.1-8B, RTX 4090) are not quantities.
"""
from __future__ import annotations

import ast
import dataclasses
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from inferlimits.data import datafiles
from inferlimits.data.hardware import accelerators, processors
from inferlimits.data.models import models
from inferlimits.data.units import formats

CHECK_CALLS = {"check": 2, "check_range": 2, "answer": 2}  # function name -> position of ``stated``
ALLOW_CALL = "allow"

NUMERAL = re.compile(r"(?<![\w.])\d+(?:,\d{3})*(?:\.\d+)?")
# a word that starts with a letter and holds a digit: H100, MI300X, FP8, Qwen2.5-32B, HBM3e
IDENTIFIER = re.compile(r"(?<![\w.])[A-Za-z][\w]*\d[\w.\-]*[\w]|(?<![\w.])[A-Za-z][\w]*\d")
LIST_MARKER = re.compile(r"^\s*\d+[.)]\s", re.M)
NOT_PROSE = [
    re.compile(r"\]\([^)]*\)"),             # link targets
    re.compile(r"<https?://[^>]*>"),        # autolinks
    re.compile(r"<!--.*?-->", re.S),        # comments
    re.compile(r"^\(.*\)=\s*$", re.M),     # MyST labels
    re.compile(r"\{[a-z:-]+\}`[^`]*`"),     # roles such as {ref}`chapter-two`
    re.compile(r"\[\^[\w-]+\]"),            # footnote references
    re.compile(r"^:[\w-]+:.*$", re.M),      # directive options
    re.compile(r"^```\{?[\w-]*\}?.*$", re.M),  # fences and directive names
    re.compile(r"(?<=\*\*Exercise )\d+"),      # exercise numbers
]


MATH = re.compile(r"\$\$.*?\$\$|\$[^$\n]+\$", re.S)
# inside math, a coefficient before a symbol (2mkn, 3n^2, 2 n_layers) or an exponent or index
# (n^3, x_1) is formula structure; a number before a command (128\,\text{KiB}) is a quantity
FORMULA_STRUCTURE = re.compile(r"(?<=[\^_])\d+|(?<=[\^_]\{)\d+|\d+(?=\s*[A-Za-z])")


def _blank_formula_structure(text: str) -> str:
    return MATH.sub(lambda m: _blank(m.group(0), FORMULA_STRUCTURE), text)


def names() -> list[str]:
    """Names whose digits are not quantities: every accelerator, processor, model and precision name."""
    found = set(accelerators()) | set(processors()) | set(models()) | set(formats())
    return sorted(found, key=len, reverse=True)


@datafiles.cached
def _names_pattern() -> re.Pattern:
    """Any one of ``names()``, whole: "H20" is not the start of "H200" (longest tried first)."""
    return re.compile(r"(?<![\w.])(?:" + "|".join(map(re.escape, names())) + r")(?!\w)")


@dataclass
class NotebookNumbers:
    path: Path
    markdown: str
    stated: list[str] = field(default_factory=list)
    allowed: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _literal(node: ast.Call, position: int, keyword: str) -> ast.AST | None:
    if len(node.args) > position:
        return node.args[position]
    for k in node.keywords:
        if k.arg == keyword:
            return k.value
    return None


def _call_name(node: ast.Call) -> str | None:
    f = node.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def read_notebook(path: Path) -> NotebookNumbers:
    """Collect a page's markdown and the stated strings of its checks and allow-list. A Markdown
    page (.md) has no code cells, so any quantity in it fails the coverage test."""
    if Path(path).suffix == ".md":
        return NotebookNumbers(Path(path), Path(path).read_text(encoding="utf-8"))
    nb = json.loads(Path(path).read_text(encoding="utf-8"))
    md, out = [], NotebookNumbers(Path(path), "")
    for cell in nb["cells"]:
        src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if cell["cell_type"] == "markdown":
            md.append(src)
        elif cell["cell_type"] == "code":
            _read_code(src, out)
    out.markdown = "\n\n".join(md)
    return out


def _read_code(src: str, out: NotebookNumbers) -> None:
    lines = [ln for ln in src.splitlines() if not ln.lstrip().startswith(("%", "!"))]
    try:
        tree = ast.parse("\n".join(lines))
    except SyntaxError as e:
        out.problems.append(f"a code cell does not parse: {e}")
        return
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _call_name(node)
        if name in CHECK_CALLS:
            target, keyword, into = CHECK_CALLS[name], "stated", out.stated
        elif name == ALLOW_CALL:
            target, keyword, into = 0, "text", out.allowed
        else:
            continue
        arg = _literal(node, target, keyword)
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            into.append(arg.value)
        else:
            out.problems.append(f"line {node.lineno}: {name}(...) must state its number as a string literal")


def _spans(text: str, needle: str, lo: int = 0, hi: int | None = None) -> list[tuple[int, int]]:
    """Where ``needle`` stands in ``text`` as a whole: not inside a longer number or word (only
    the places that start in ``lo`` to ``hi``, when given). Whether a place counts depends on
    ``text[i - 2:j + 2]`` alone, for the place ``i`` to ``j``."""
    spans, start = [], lo
    while (i := text.find(needle, start)) >= 0 and (hi is None or i < hi):
        j = i + len(needle)
        before, after = text[i - 1:i], text[j:j + 2]
        inside = ((before.isalnum() and needle[:1].isalnum())
                  or (before in ",." and text[i - 2:i - 1].isdigit() and needle[:1].isdigit())
                  or (after[:1].isalnum() and needle[-1:].isalnum())
                  or (after[:1] in ",." and after[1:2].isdigit() and needle[-1:].isdigit()))
        if not inside:
            spans.append((i, j))
        start = i + 1
    return spans


def _blank(text: str, pattern: re.Pattern) -> str:
    return pattern.sub(lambda m: " " * len(m.group(0)), text)


def _unstructured(markdown: str) -> str:
    """The markdown with links, labels, roles, directives and list markers blanked, positions kept."""
    text = markdown
    for pattern in NOT_PROSE + [LIST_MARKER]:
        text = _blank(text, pattern)
    return text


def _prose(markdown: str) -> str:
    """The markdown with everything that is not prose blanked out, positions kept."""
    return _blank(_unstructured(markdown), _names_pattern())


def quantity_spans(markdown: str, prose: str | None = None) -> list[tuple[int, int]]:
    """Where the numerals that are quantities stand in ``markdown``: not in names, labels, links,
    list markers or formula structure (``prose`` is ``_prose(markdown)`` if already made)."""
    text = _blank_formula_structure(_blank(prose if prose is not None else _prose(markdown), IDENTIFIER))
    return [m.span() for m in NUMERAL.finditer(text)]


@dataclass(frozen=True)
class Reading:
    """What the coverage test reads off a page's markdown: the text without structure
    (``_unstructured``), the prose (names blanked too), where each stated number and allowed entry
    stands in it, and where the quantities stand."""
    unstructured: str
    prose: str
    places: dict[str, list[tuple[int, int]]]
    quantities: list[tuple[int, int]]


def read_prose(nb: NotebookNumbers) -> Reading:
    unstructured = _unstructured(nb.markdown)
    prose = _blank(unstructured, _names_pattern())
    return Reading(unstructured, prose, {s: _spans(prose, s) for s in {*nb.stated, *nb.allowed}},
                   quantity_spans(nb.markdown, prose))


def read_after_digit_change(nb: NotebookNumbers, reading: Reading, position: int, digit: str) -> Reading:
    """``read_prose`` of the markdown with the digit at ``position`` changed to ``digit``, worked
    out from ``reading`` (the page's own) without reading the whole page again.

    Every pattern that blanks structure or finds numerals (``NOT_PROSE``, list markers,
    identifiers, formula structure, numerals) uses character classes (digit, word, any) and no
    particular digit, so one digit in place of another blanks the same places and finds the same
    quantities. What does depend on which digit it is: the names (H100, Llama-3.1-8B) and the
    stated strings. A name that could stand on the changed character (or beside it, where its
    boundary is read) in either text sends the page to a full reading; otherwise the names are
    blanked where they were. A stated string is looked for again where its place could reach the
    changed character (``_spans`` reads two characters either side); elsewhere its places stay.
    ``tests/test_mutations.py`` compares this with the full reading."""
    old = nb.markdown[position]
    if not (old.isdigit() and digit.isdigit()):
        raise ValueError(f"position {position} must hold a digit and digit must be one; got {old!r} -> {digit!r}")
    if reading.unstructured[position] != old or reading.prose[position] != old or position >= len(nb.markdown) - 2:
        return read_prose(dataclasses.replace(nb, markdown=_with(nb.markdown, position, digit)))
    unstructured = _with(reading.unstructured, position, digit)
    reach = max(map(len, names()), default=0) + 1
    window = slice(max(0, position - reach), position + reach + 1)
    for text in (reading.unstructured, unstructured):
        for m in _name_candidates().finditer(text, window.start, window.stop):
            if m.start() - 1 <= position <= m.start() + len(m.group(1)):
                return read_prose(dataclasses.replace(nb, markdown=_with(nb.markdown, position, digit)))
    prose = _with(reading.prose, position, digit)
    places = {}
    for s, spans in reading.places.items():
        lo, hi = max(0, position - len(s) - 1), position + 3
        kept = [sp for sp in spans if not lo <= sp[0] < hi]
        places[s] = sorted(kept + _spans(prose, s, lo, hi))
    return Reading(unstructured, prose, places, reading.quantities)


def _with(text: str, position: int, char: str) -> str:
    return text[:position] + char + text[position + 1:]


@datafiles.cached
def _name_candidates() -> re.Pattern:
    """Every place any name's letters stand, overlapping, boundaries not yet asked."""
    return re.compile(r"(?=(" + "|".join(map(re.escape, names())) + r"))")


def coverage_problems(nb: NotebookNumbers, reading: Reading | None = None) -> list[str]:
    """Everything wrong with a notebook's numbers: unchecked numerals, stated numbers missing from
    the text or stated a different number of times than checked, stale allow-list entries,
    non-literal stated values (``reading`` is ``read_prose(nb)`` if already made)."""
    reading = reading or read_prose(nb)
    problems = list(nb.problems)
    covered = bytearray(len(reading.prose))  # 1 where a check's stated number (or an allowed entry) stands

    def claim(spans):
        for a, b in spans:
            covered[a:b] = b"\x01" * (b - a)

    checks = Counter(nb.stated)
    # longest first, so "4,096 tokens" claims its place before a bare "4,096" counts the rest
    for stated in sorted(checks, key=len, reverse=True):
        found = [(a, b) for a, b in reading.places[stated] if not all(covered[a:b])]
        if not found:
            problems.append(f"stated {stated!r} is checked but does not appear in the text")
        elif len(found) != checks[stated]:
            problems.append(f"stated {stated!r} appears {len(found)} time(s) in the text but is checked "
                            f"{checks[stated]} time(s): give each place its own check, with words around the number "
                            "to tell them apart")
        claim(found)
    for entry in nb.allowed:
        found = reading.places[entry]
        if not found:
            problems.append(f"allow-list entry {entry!r} is stale: the text no longer contains it")
        claim(found)
    for start, end in reading.quantities:
        if not all(covered[start:end]):
            line = nb.markdown.count("\n", 0, start) + 1
            context = nb.markdown[max(0, start - 40): end + 40].replace("\n", " ")
            problems.append(f"numeral {nb.markdown[start:end]!r} (markdown line {line}) is not stated by any check: …{context}…")
    return problems
