"""How readable each chapter's main line is (DESIGN.md, "Two depths").

The **main line** is a chapter's prose outside collapsed blocks, exercises and solutions: the
Markdown cells, less fenced code, math, tables, headings, exercises, solutions and every block the
reader must click to open (a ``dropdown``, or a directive with ``:class: dropdown``). Open boxes
(a note, "Before this chapter") stay in it. It ends where the exercises section (``EXERCISES``)
begins: what that section says about its exercises is part of them. For each chapter this module counts:

- its words;
- the median length of its sentences, in words, and the share of them over ``LONG_WORDS``;
- the glossary terms it uses (``chapters/glossary.md``) whose first use is not a ``{term}`` link.

    python -m inferlimits.book.prose        # the table, one row per numbered chapter and the primer

Inline math counts as one word; a list item or a table-free line that ends without a full stop
still ends its sentence.
"""
from __future__ import annotations

import re
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path

from inferlimits.book import ROOT, toc_pages

#: the limits a chapter's main line keeps (DESIGN.md, "Budgets")
MAX_WORDS = 3500
MAX_MEDIAN_SENTENCE = 22
LONG_WORDS = 40
MAX_LONG_SHARE = 0.10
#: glossary terms that are everyday words too ("the key point", "what fits"): their first use may
#: be in the everyday sense, so for them a {term} link anywhere in the chapter is enough
EVERYDAY = ("token", "query", "key", "value", "head", "kernel", "batch", "capacity", "fit", "expert")
#: directives whose whole block is left out of the main line, open or not
LEFT_OUT = {"exercise", "solution", "dropdown", "code-cell", "code", "code-block", "math", "glossary",
            "bibliography", "toggle", "list-table", "csv-table", "table", "figure", "image", "raw"}

_FENCE = re.compile(r"^(?P<mark>`{3,}|:{3,})\s*(?:\{(?P<directive>[\w:-]+)\})?(?P<rest>.*)$")
_OPTION = re.compile(r"^:[\w-]+:")
_ROLE = re.compile(r"\{(?P<role>[\w:-]+)\}`(?P<body>[^`]*)`")
_TARGET = re.compile(r"\s*<[^<>]*>$")
_ABBREVIATIONS = ("e.g.", "i.e.", "vs.", "etc.", "cf.", "Fig.", "Eq.", "approx.", "et al.", "No.")
#: a sentence ends at . ! or ? before a capital, a digit, math, or a lower-case name (gpt-oss, vLLM)
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"”')\]*_]*\s+(?=[\"“(\[*_]*(?:[A-Z0-9$]|[a-z]+[-A-Z0-9]))")


@dataclass(frozen=True)
class Prose:
    """The main line of one page, measured."""

    page: str
    words: int
    sentences: tuple[int, ...] = field(repr=False)   # the words of each sentence, in order
    unlinked: tuple[str, ...] = ()                   # glossary terms whose first use is not a link

    @property
    def median_sentence(self) -> float:
        return statistics.median(self.sentences) if self.sentences else 0.0

    @property
    def long_share(self) -> float:
        """The share of sentences over ``LONG_WORDS`` words."""
        return sum(n > LONG_WORDS for n in self.sentences) / len(self.sentences) if self.sentences else 0.0

    def within_limits(self) -> list[str]:
        """What breaks the limits, in words (empty when none)."""
        out = []
        if self.words > MAX_WORDS:
            out.append(f"{self.words:,} words (at most {MAX_WORDS:,})")
        if self.median_sentence > MAX_MEDIAN_SENTENCE:
            out.append(f"median sentence {self.median_sentence:g} words (at most {MAX_MEDIAN_SENTENCE})")
        if self.long_share > MAX_LONG_SHARE:
            out.append(f"{self.long_share:.0%} of sentences over {LONG_WORDS} words (at most {MAX_LONG_SHARE:.0%})")
        return out


def _markdown_cells(path: Path) -> list[str]:
    if path.suffix == ".md":
        return [path.read_text(encoding="utf-8")]
    import nbformat

    nb = nbformat.read(path, as_version=4)
    return [c.source for c in nb.cells if c.cell_type == "markdown"]


#: the heading of a chapter's exercises section, where its main line ends
EXERCISES = "## Exercises"


def main_line(markdown: str) -> str:
    """The text of ``markdown`` that belongs to the main line, with the markup of what stays
    (roles, links, emphasis) reduced to the words a reader sees; MyST roles are kept as written,
    so that ``glossary_use`` can tell a linked term from a plain one."""
    out: list[str] = []
    stack: list[tuple[str, bool]] = []   # open fences: (their mark, whether their content is left out)
    for line in markdown.splitlines():
        stripped = line.strip()
        m = _FENCE.match(stripped)
        if stack and m and m["mark"][0] == stack[-1][0][0] and len(m["mark"]) >= len(stack[-1][0]) \
                and not m["directive"] and not m["rest"].strip():
            stack.pop()
            out.append("")
            continue
        if m and (m["directive"] or m["mark"].startswith("`")):
            inside_left_out = any(left for _, left in stack)
            directive = (m["directive"] or "code").split(":")[0]
            stack.append((m["mark"], inside_left_out or directive in LEFT_OUT or not m["directive"]))
            out.append("")
            continue
        if any(left for _, left in stack):
            continue
        if not stack and stripped == EXERCISES:
            break
        if stack and _OPTION.match(stripped):
            if stripped.startswith(":class:") and "dropdown" in stripped:
                stack[-1] = (stack[-1][0], True)
            continue
        if stripped.startswith(("#", "|", "(")) and (stripped.startswith(("#", "|")) or stripped.endswith(")=")):
            out.append("")
            continue
        out.append(line)
    text = "\n".join(out)
    text = re.sub(r"\$\$.*?\$\$", " ", text, flags=re.S)
    text = re.sub(r"(?<!\\)\$[^$\n]+\$", "M", text)
    text = re.sub(r"<[^>]+>", " ", text)
    return text


def _plain(text: str) -> str:
    """Roles, links and emphasis as the words they show."""
    def role(m: re.Match) -> str:
        if m["role"].startswith("cite"):
            return ""
        body = _TARGET.sub("", m["body"]) if m["body"].rstrip().endswith(">") else m["body"]
        return body.replace("-", " ") if m["role"] in ("ref", "doc", "numref") and " " not in body else body
    text = _ROLE.sub(role, text)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return re.sub(r"[*_`]", "", text)


def sentences(text: str) -> list[str]:
    """The sentences of a main line's text: paragraphs and list items split at their full stops."""
    out = []
    for block in re.split(r"\n\s*\n|\n(?=\s*(?:[-*+]|\d+\.)\s)", text):
        block = " ".join(block.split())
        block = re.sub(r"^(?:[-*+]|\d+\.)\s+", "", block)
        if not block:
            continue
        protected = block
        for i, abbreviation in enumerate(_ABBREVIATIONS):
            protected = protected.replace(abbreviation, f"\x00{i}\x00")
        for part in _SENTENCE_END.split(protected):
            for i, abbreviation in enumerate(_ABBREVIATIONS):
                part = part.replace(f"\x00{i}\x00", abbreviation)
            if re.search(r"[A-Za-z]", part):
                out.append(part)
    return out


def glossary_terms(root: Path = ROOT) -> list[str]:
    """The terms ``chapters/glossary.md`` defines (a term line is flush left inside the glossary)."""
    text = (root / "chapters" / "glossary.md").read_text(encoding="utf-8")
    body = text.split("```{glossary}", 1)[1].split("\n```", 1)[0]
    return [line.strip() for line in body.splitlines() if line.strip() and not line.startswith((" ", "\t"))]


def _part_names() -> list[str]:
    from inferlimits.data.hardware import accelerators

    return list(accelerators())


def unlinked_terms(text: str, terms: list[str]) -> list[str]:
    """The glossary terms whose first use in ``text`` (main-line markup, roles kept) is not inside
    a ``{term}`` role; for the ``EVERYDAY`` words, those used but never linked."""
    for name in sorted(_part_names(), key=len, reverse=True):   # "H100 SXM" names a part; it is no use of "SXM"
        text = text.replace(name, " " * len(name))
    linked_spans = [(m.start(), m.end()) for m in _ROLE.finditer(text) if m["role"] == "term"]
    other_roles = [(m.start(), m.end()) for m in _ROLE.finditer(text) if m["role"] != "term"]
    out = []
    for term in terms:
        pattern = re.compile(rf"(?<![\w-]){re.escape(term)}(?:e?s)?(?![\w-])", re.I if term.islower() else 0)
        uses = [m.start() for m in pattern.finditer(text) if not any(a <= m.start() < b for a, b in other_roles)]
        linked = [any(a <= u < b for a, b in linked_spans) for u in uses]
        if uses and not (any(linked) if term in EVERYDAY else linked[0]):
            out.append(term)
    return out


def measure(path: Path, terms: list[str] | None = None) -> Prose:
    """The main line of one page, measured."""
    cells = _markdown_cells(path)
    ends = [i for i, md in enumerate(cells) if EXERCISES in md.splitlines()]
    text = "\n\n".join(main_line(md) for md in cells[:ends[0] + 1 if ends else None])
    parts = [len(s.split()) for s in sentences(_plain(text))]
    unlinked = tuple(unlinked_terms(text, terms)) if terms is not None else ()
    return Prose(path.stem, sum(parts), tuple(parts), unlinked)


def chapters(root: Path = ROOT) -> list[Path]:
    """The pages the limits hold for: the primer and the numbered chapters."""
    return [p for p in toc_pages(root) if p.parent.name == "chapters" and (p.stem == "primer" or p.stem[:2].isdigit())]


def table(root: Path = ROOT) -> list[Prose]:
    terms = glossary_terms(root)
    return [measure(p, terms) for p in chapters(root)]


def main(argv: list[str]) -> int:
    rows = table()
    print(f"{'page':<22} {'words':>6} {'median':>6} {'>40':>5}  unlinked glossary terms")
    for r in rows:
        flag = " " if not r.within_limits() else "*"
        print(f"{r.page:<22} {r.words:>6,} {r.median_sentence:>6g} {r.long_share:>5.0%}{flag} "
              f"{', '.join(r.unlinked) or '-'}")
    print(f"limits: {MAX_WORDS:,} words, median sentence {MAX_MEDIAN_SENTENCE}, "
          f"{MAX_LONG_SHARE:.0%} over {LONG_WORDS} words; * marks a page over a limit")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
