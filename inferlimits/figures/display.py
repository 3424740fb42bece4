"""Showing figures in both modes: a mimebundle whose ``text/html`` draws the figure in the static
book (plotly.js is served once by the site, never from a CDN) and whose plotly JSON lets Jupyter
draw it with a kernel."""
from __future__ import annotations

import json

import plotly.graph_objects as go
import plotly.io as pio

#: how the hosted book's figures behave: they follow their box's width, and the mode bar keeps only
#: "download as PNG" (no plotly logo, no link or upload to an outside service, no zoom tools: the
#: axes are fixed on purpose)
PLOTLY_CONFIG = {"displaylogo": False, "responsive": True, "modeBarButtons": [["toImage"]]}


def figure_html(fig: go.Figure, div_id: str) -> str:
    """The figure as an HTML fragment that expects a global ``Plotly`` (no script tag for
    plotly.js, a fixed div id so the output is the same on every run)."""
    return pio.to_html(fig, include_plotlyjs=False, full_html=False, div_id=div_id,
                       config=PLOTLY_CONFIG, validate=False)


def figure_bundle(fig: go.Figure, div_id: str) -> dict:
    """``text/html`` for the book, plotly JSON for Jupyter."""
    return {"text/html": figure_html(fig, div_id),
            "application/vnd.plotly.v1+json": json.loads(fig.to_json()),
            "text/plain": f"<figure {div_id}>"}


class Figure:
    """Displays a plotly figure in both modes: ``Figure(fig, "fig-roofline")`` as a cell's last line."""

    def __init__(self, fig: go.Figure, div_id: str):
        self.fig, self.div_id = fig, div_id

    def _repr_mimebundle_(self, include=None, exclude=None):
        return figure_bundle(self.fig, self.div_id)
