"""Generated Markdown tables (inferlimits/figures/tables.py): a cell cannot split its row."""
from inferlimits.figures import tables


def test_a_pipe_inside_a_cell_is_escaped_once():
    text = tables._table(["part", "source"], [["MI355X", "datasheet | table 2"], ["x", r"already \| escaped"]]).data
    rows = text.splitlines()[2:]
    assert rows == [r"| MI355X | datasheet \| table 2 |", r"| x | already \| escaped |"]


def test_the_on_chip_cache_table_keeps_its_columns_in_every_row():
    text = tables.on_chip_caches("Qwen2.5-32B").data
    lines = text.splitlines()
    width = lines[0].count(" | ")
    assert all(line.replace(r"\|", "").count(" | ") == width for line in lines[2:])
