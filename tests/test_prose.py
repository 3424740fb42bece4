"""The prose measure (inferlimits/book/prose.py): what counts as a chapter's main line, how its
sentences are split and counted, and which glossary terms are used without a link."""
from __future__ import annotations

import nbformat
import pytest

from inferlimits.book import prose

PAGE = """(chapter-x)=
# A title that is not a sentence

Decode reads every weight once per step. A step of $B$ sequences does $2NB$ FLOPs: the batch shares the read.

```{admonition} Before this chapter
Chapter 1's balance point.
```

```{admonition} Refinement: counting kernel by kernel
:class: dropdown
This sentence is one click away and not in the main line at all.
```

:::{dropdown} Refinement: units
Neither is this one.
:::

```{exercise} Compute · basic
:label: x-ex1
An exercise is not the main line.
```

````{solution} x-ex1
:class: dropdown
```python
print("nor is code inside a solution")
```
````

| a table | is left out |
|---|---|
| 1 | 2 |

$$
F = 2N
$$

- A list item ends its sentence
- and so does the next one.
"""


def test_the_main_line_leaves_out_what_the_reader_must_open_and_what_is_not_prose():
    text = prose.main_line(PAGE)
    assert "Decode reads every weight" in text and "balance point" in text
    for hidden in ("one click away", "Neither is this one", "An exercise", "nor is code", "a table", "F = 2N",
                   "A title", "chapter-x"):
        assert hidden not in text, hidden


def test_the_main_line_ends_where_the_exercises_section_begins(tmp_path):
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# A page\n\nDecode reads every weight."),
                                         nbformat.v4.new_markdown_cell("Batching shares the read.\n\n"
                                                                       + prose.EXERCISES + "\n\nEach exercise states its tolerance."),
                                         nbformat.v4.new_markdown_cell("A note between two exercises.")])
    path = tmp_path / "page.ipynb"
    nbformat.write(nb, path)
    assert prose.measure(path).words == 8


def test_sentences_are_split_at_full_stops_and_list_items_and_math_is_one_word():
    parts = prose.sentences(prose._plain(prose.main_line(PAGE)))
    assert parts[:2] == ["Decode reads every weight once per step.",
                         "A step of M sequences does M FLOPs: the batch shares the read."]
    assert parts[-2:] == ["A list item ends its sentence", "and so does the next one."]
    assert [len(p.split()) for p in parts[:2]] == [7, 13]


@pytest.mark.parametrize("text, count", [
    ("It runs at 1.5 TB/s. The next one starts here.", 2),
    ("Engines (e.g. vLLM) batch. That is all.", 2),
    ("DeepSeek-V3 needs 8. gpt-oss-120b needs 1.", 2),
    ("A ratio of 2.5 is not an end. Nor is Fig. 3 here.", 2),
])
def test_no_split_inside_numbers_or_abbreviations(text, count):
    assert len(prose.sentences(text)) == count


def test_roles_show_their_words():
    assert prose._plain("a {term}`knee <knee>` and {ref}`the card <chapter-index-card>` {cite:p}`kwon2023vllm`.") \
        == "a knee and the card ."


def test_a_glossary_term_is_unlinked_only_where_its_first_use_is_plain():
    terms = ["knee", "KV cache", "ridge"]
    text = "The {term}`knee <knee>` comes first; the knee again. A KV cache grows. Past the {term}`ridge`."
    assert prose.unlinked_terms(text, terms) == ["KV cache"]
    assert prose.unlinked_terms("See {doc}`05_kv_cache` and the {term}`KV cache`.", terms) == []


def test_a_page_is_measured_and_judged_against_the_limits(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(PAGE),
                                         nbformat.v4.new_code_cell("x = 1  # code cells are not prose")])
    path = tmp_path / "01_x.ipynb"
    nbformat.write(nb, path)
    page = prose.measure(path, ["balance point"])
    assert page.words == sum(page.sentences) and len(page.sentences) == 5
    assert page.unlinked == ("balance point",) and page.within_limits() == []
    long = prose.Prose("long", 5000, (50,) * 3 + (10,) * 7)
    assert len(long.within_limits()) == 2 and long.long_share == pytest.approx(0.3)


def test_the_table_covers_the_primer_and_every_numbered_chapter():
    names = [p.stem for p in prose.chapters()]
    assert names[0] == "primer" and len(names) == 14 and all(n[:2].isdigit() for n in names[1:])
    assert "MLP" in prose.glossary_terms() and "knee" in prose.glossary_terms()


def test_an_everyday_word_needs_one_link_anywhere_a_term_needs_its_first_use_linked():
    terms = ["key", "ridge"]
    assert prose.unlinked_terms("The key point. Each {term}`key <key>` is cached. The ridge.", terms) == ["ridge"]
    assert prose.unlinked_terms("The key point, and nothing linked.", terms) == ["key"]


# ---- the book keeps the limits ------------------------------------------------------------------

#: check(), check_range() (and later answer()) calls in the chapters at d6468db, before the main lines were rewritten
#: (counted by ``_check_calls``): moving a refinement aside must not drop a check
CHECKS_BEFORE_TWO_DEPTHS = 3227


def _check_calls(path) -> int:
    import ast

    n = 0
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type == "code":
            source = "\n".join(line for line in cell.source.splitlines() if not line.lstrip().startswith(("%", "!")))
            n += sum(isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("check", "check_range", "answer")
                     for node in ast.walk(ast.parse(source)))
    return n


@pytest.mark.parametrize("path", prose.chapters(), ids=lambda p: p.stem)
def test_every_main_line_reads_in_one_sitting(path):
    page = prose.measure(path, prose.glossary_terms())
    assert page.within_limits() == [], f"{path.stem}: " + "; ".join(page.within_limits())
    assert page.unlinked == (), f"{path.stem}: glossary terms used without a link: {', '.join(page.unlinked)}"


@pytest.mark.parametrize("path", prose.chapters(), ids=lambda p: p.stem)
def test_every_chapter_opens_with_what_it_relies_on(path):
    cells = [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown"]
    opening = cells[0].source
    box = opening.find("{admonition} Before this chapter")
    assert box != -1, f"{path.stem}: no 'Before this chapter' box in its first Markdown cell"
    objectives = opening.find("After this chapter you can")
    assert objectives == -1 or box < objectives, f"{path.stem}: the box comes before the objectives"
    body = opening[box:].split("\n```", 1)[0]
    assert "**Recap:**" in body and len([l for l in body.split("**Recap:**", 1)[1].splitlines() if l.strip()]) <= 3


def test_no_check_was_lost_on_the_way():
    from inferlimits.book import notebooks

    assert sum(_check_calls(p) for p in notebooks()) >= CHECKS_BEFORE_TWO_DEPTHS
