"""Reading the figures out of HTML: every ``Plotly.newPlot("id", data, layout, config)`` call that
``display.figure_html`` writes (plotly's own ``to_html``), as the figure's JSON. One parser for
the slide exports (committed notebook outputs), the site's build step (the pages) and the tests."""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

_CALL = re.compile(r'Plotly\.newPlot\(\s*"([^"]+)"\s*,\s*')
_COMMA = re.compile(r"\s*,\s*")
_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class PlotCall:
    """One figure drawn by a page: its div id, data, layout and config, and where the call is."""

    div_id: str
    data: list
    layout: dict
    config: dict
    start: int
    end: int

    @property
    def trace_types(self) -> set[str]:
        """The trace types it draws (plotly's default type is ``scatter``)."""
        return {t.get("type", "scatter") for t in self.data}


def plot_calls(html: str) -> Iterator[PlotCall]:
    """Every ``Plotly.newPlot`` call in ``html``, in order; ``end`` is just past its ``)``."""
    for found in _CALL.finditer(html):
        parts, pos = [], found.end()
        while len(parts) < 3:   # data, layout and (when given) config
            value, pos = _DECODER.raw_decode(html, pos)
            parts.append(value)
            sep = _COMMA.match(html, pos)
            if sep is None:
                break
            pos = sep.end()
        parts += [{}] * (3 - len(parts))
        close = re.compile(r"\s*\)").match(html, pos)
        if close is None:
            raise ValueError(f"figure {found.group(1)!r}: Plotly.newPlot call not closed at {pos}")
        yield PlotCall(found.group(1), parts[0], parts[1], parts[2], found.start(), close.end())


def figure_spec(html: str, div_id: str) -> dict | None:
    """``{"data", "layout"}`` of the figure drawn in ``div_id``, or None when ``html`` draws none."""
    for call in plot_calls(html):
        if call.div_id == div_id:
            return {"data": call.data, "layout": call.layout}
    return None
