"""Interactive figures in two modes, from one *spec* function.

A spec takes plain control values as keywords and returns ``{"data": [trace dicts], "layout":
{...}}``. It always returns the same traces in the same order; only their data change. From it:

- ``static_figure`` precomputes states for plotly's own dropdown and slider, for a page with no
  kernel: one group of traces per dropdown value (the dropdown shows one group), and one restyle
  per slider value (each step rewrites the traces that the slider moves, in every group);
- ``panel`` builds ipywidgets controls over a ``go.FigureWidget`` that is updated in place (trace
  data and a few layout keys, never re-created), and carries the static figure as ``text/html``
  so that the hosted book, which drops the widget view, still shows a working figure.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import ipywidgets as W
import plotly.graph_objects as go

from inferlimits.figures.display import figure_html

Spec = Callable[..., dict]
DATA_KEYS = ("x", "y", "text", "visible", "name", "customdata")
LAYOUT_KEYS = ("title", "annotations", "shapes")


@dataclass(frozen=True)
class Control:
    """One control of a figure: ``name`` is the spec's keyword.

    ``kind`` is "dropdown" (choose among ``options``) or "slider". A slider moves between listed
    stops, never along a float step, so every value it shows is one the text can name: ``options``
    are its stops on a page without a kernel (plotly's slider), ``stops`` (default: ``options``) its
    stops with a kernel, a finer list that contains every option. A value a chapter passes must be
    one of the stops; the readout shows it as the text writes it (8,192, not 8.19e+03).

    A dropdown for a page without a kernel may set several of the spec's keywords at once: then
    ``name`` is a tuple of keywords, each option a tuple of their values, and ``labels`` may name
    each option (plotly has one dropdown, so two choices, say weights and math, become one list of
    pairs there, while a kernel gets one dropdown each)."""

    name: str | tuple[str, ...]
    label: str
    options: Sequence
    kind: str = "dropdown"
    stops: Sequence | None = None
    labels: dict | None = None

    def __post_init__(self):
        if self.kind not in ("dropdown", "slider"):
            raise ValueError(f"kind of control {self.name!r} must be dropdown or slider; got {self.kind!r}")
        if not self.options:
            raise ValueError(f"options of control {self.name!r} must not be empty")
        if self.stops is not None:
            if self.kind != "slider":
                raise ValueError(f"control {self.name!r}: only a slider has stops")
            if list(self.stops) != sorted(set(self.stops)):
                raise ValueError(f"stops of control {self.name!r} must increase")
            missing = [o for o in self.options if o not in self.stops]
            if missing:
                raise ValueError(f"stops of control {self.name!r} must contain its options; missing {missing}")

    def value_in(self, values: dict):
        """This control's value among a spec's keyword ``values`` (a tuple for several keywords)."""
        return tuple(values[n] for n in self.name) if isinstance(self.name, tuple) else values[self.name]

    def set_in(self, values: dict, value) -> None:
        """Put ``value`` into a spec's keyword ``values``."""
        values.update(zip(self.name, value) if isinstance(self.name, tuple) else [(self.name, value)])

    def label_of(self, value) -> str:
        """The option as its readout or its dropdown shows it."""
        if self.labels and value in self.labels:
            return self.labels[value]
        return " · ".join(_label(v) for v in value) if isinstance(value, tuple) else _label(value)

    @property
    def live(self) -> tuple:
        """What the live widget offers."""
        return tuple(self.options if self.stops is None else self.stops)

    def check(self, value, choices: Sequence | None = None) -> None:
        """Raise a ValueError naming the control unless ``value`` is one of ``choices`` (the live ones)."""
        choices = self.live if choices is None else choices
        if value not in choices:
            shown = ", ".join(self.label_of(c) for c in choices[:12]) + (", ..." if len(choices) > 12 else "")
            raise ValueError(f"{self.name}={value!r} is not one of the stops of control {self.label!r} ({shown})")

    def widget(self, value) -> W.Widget:
        """The live ipywidget for this control, starting at ``value``."""
        self.check(value)
        choices = [(self.label_of(v), v) for v in self.live]
        style = {"description_width": "initial"}
        if self.kind == "dropdown":
            return W.Dropdown(options=choices, value=value, description=self.label, style=style)
        return W.SelectionSlider(options=choices, value=value, description=self.label, style=style,
                                 continuous_update=True)


def doubling_stops(lo: int, hi: int, per_doubling: int = 4, include: Sequence[int] = ()) -> tuple[int, ...]:
    """Whole numbers from ``lo`` to ``hi`` (``hi / lo`` a power of two), ``per_doubling`` to a
    doubling and rounded (repeats dropped), so every power of two times ``lo`` is a stop; and ``include``."""
    if lo < 1 or hi <= lo:
        raise ValueError(f"doubling stops need 1 <= lo < hi; got lo={lo!r}, hi={hi!r}")
    n = round(math.log2(hi / lo) * per_doubling)
    return tuple(sorted({round(lo * 2 ** (i / per_doubling)) for i in range(n + 1)} | set(include)))


def step_stops(lo: float, hi: float, step: float, include: Sequence = ()) -> tuple:
    """``lo``, ``lo + step``, ... up to ``hi``, rounded to the step's own decimals; and ``include``."""
    if step <= 0 or hi <= lo:
        raise ValueError(f"step stops need step > 0 and lo < hi; got lo={lo!r}, hi={hi!r}, step={step!r}")
    n = round((hi - lo) / step)
    return tuple(sorted({round(lo + i * step, 9) for i in range(n + 1)} | set(include)))


PREFERRED = (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8)   # a round-number series for log scales, per decade


def preferred_stops(lo: float, hi: float, include: Sequence = ()) -> tuple:
    """The round numbers 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 times powers of ten from ``lo`` to ``hi``; and ``include``."""
    if lo <= 0 or hi <= lo:
        raise ValueError(f"preferred stops need 0 < lo < hi; got lo={lo!r}, hi={hi!r}")
    decades = range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
    series = {round(p * 10.0 ** d, 9) for d in decades for p in PREFERRED}
    return tuple(sorted({v for v in series if lo <= v <= hi} | set(include)))


def _data(trace: dict) -> dict:
    return {k: trace.get(k) for k in DATA_KEYS if k in trace}


def _label(value) -> str:
    """A control value as the text writes it: 8,192, 0.35, BF16."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    return f"{int(value):,}" if float(value).is_integer() else f"{value:,g}"


def static_figure(spec: Spec, values: dict, dropdown: Control | None = None,
                  slider: Control | None = None) -> go.Figure:
    """The spec's figure at ``values`` with plotly's own dropdown and slider over precomputed states."""
    groups = list(dropdown.options) if dropdown else [None]
    chosen = dropdown.value_in(values) if dropdown else None
    if dropdown:
        dropdown.check(chosen, groups)

    def at(group, step=None):
        v = dict(values)
        if dropdown:
            dropdown.set_in(v, group)
        if slider and step is not None:
            slider.set_in(v, step)
        return spec(**v)

    base = {g: at(g) for g in groups}
    n = len(base[groups[0]]["data"])
    if any(len(s["data"]) != n for s in base.values()):
        raise ValueError("a spec must return the same number of traces for every control value")
    states = {(g, b): at(g, b)["data"] for g in groups for b in slider.options} if slider else {}
    # a trace that is the same for every dropdown value and every slider stop is drawn once, not
    # once per group: the page carries fewer bytes and nothing moves it
    shared = [i for i in range(n) if len(groups) > 1
              and all(base[g]["data"][i] == base[groups[0]]["data"][i] for g in groups)
              and all(data[i] == base[groups[0]]["data"][i] for data in states.values())]
    own = [i for i in range(n) if i not in shared]
    index = {(g, ti): len(shared) + gi * len(own) + k for gi, g in enumerate(groups) for k, ti in enumerate(own)}
    fig = go.Figure(layout=base[chosen]["layout"])   # its own template, not plotly's default merged in
    for i in shared:
        fig.add_trace(base[groups[0]]["data"][i])
    for g in groups:
        for ti in own:
            t = base[g]["data"][ti]
            fig.add_trace({**t, "visible": (g == chosen) and t.get("visible", True)})
    menus, sliders = [], []
    if dropdown:
        buttons = []
        for g in groups:
            visible = ([base[g]["data"][i].get("visible", True) for i in shared]
                       + [(h == g) and base[h]["data"][ti].get("visible", True) for h in groups for ti in own])
            layout = {k: base[g]["layout"].get(k) for k in LAYOUT_KEYS if k in base[g]["layout"]}
            buttons.append(dict(label=dropdown.label_of(g), method="update", args=[{"visible": visible}, layout]))
        menus.append(dict(name=dropdown.label, buttons=buttons, active=groups.index(chosen), x=1.0, y=1.02,
                          xanchor="right",
                          yanchor="bottom", direction="down"))
    if slider:
        moving = sorted({(index[g, ti], g, ti) for g in groups for b in slider.options for ti in own
                         if _data(states[g, b][ti]) != _data(base[g]["data"][ti])})
        keys = sorted({k for (g, b), data in states.items() for _, h, ti in moving if h == g
                       for k in ("x", "y", "text", "customdata") if k in data[ti]})
        steps = []
        for b in slider.options:
            restyle = {k: [states[g, b][ti].get(k) for _, g, ti in moving] for k in keys}
            steps.append(dict(label=slider.label_of(b), method="restyle", args=[restyle, [i for i, _, _ in moving]]))
        slider.check(slider.value_in(values), tuple(slider.options))
        active = list(slider.options).index(slider.value_in(values))
        sliders.append(dict(name=slider.label, steps=steps, active=active,
                            currentvalue=dict(prefix=f"{slider.label}: "),
                            pad=dict(t=50)))
    fig.update_layout(updatemenus=menus, sliders=sliders)
    if menus:
        fig.update_layout(margin=dict(t=100))
    return fig


class Panel(W.VBox):
    """Live controls above a FigureWidget, with the static figure for pages without a kernel."""

    def __init__(self, spec: Spec, values: dict, controls: Sequence[Control], static: go.Figure, div_id: str,
                 static_controls: dict[str, Control] | None = None):
        self.spec, self.values, self.specs, self.static = spec, dict(values), tuple(controls), static
        #: which controls the static figure's "dropdown" and "slider" are
        self.static_controls = dict(static_controls or {})
        self.controls = [c.widget(values[c.name]) for c in controls]
        self.figure = go.FigureWidget(spec(**values))
        for control, widget in zip(controls, self.controls):
            widget.observe(lambda change, name=control.name: self._set(name, change["new"]), names="value")
        super().__init__([W.HBox(self.controls, layout=W.Layout(flex_flow="row wrap")), self.figure])
        self._static_html = figure_html(static, div_id)
        self._div_id = div_id

    def _set(self, name, value) -> None:
        self.values[name] = value
        self.redraw()

    def redraw(self) -> None:
        """Recompute the spec and update the figure's traces and layout in place."""
        s = self.spec(**self.values)
        with self.figure.batch_update():
            for trace, new in zip(self.figure.data, s["data"]):
                trace.update(_data(new))
            self.figure.layout.update({k: s["layout"][k] for k in LAYOUT_KEYS if k in s["layout"]})

    def _repr_mimebundle_(self, **kwargs):
        bundle = dict(super()._repr_mimebundle_(**kwargs) or {})
        bundle["text/html"] = self._static_html
        bundle["text/plain"] = f"<control panel {self._div_id}: live in Jupyter with a kernel running, static without one>"
        return bundle


def panel(spec: Spec, values: dict, controls: Sequence[Control], div_id: str,
          static_dropdown: str | Control | None = None, static_slider: str | None = None) -> Panel:
    """Live panel over ``controls``; its static twin uses the controls named ``static_dropdown``
    and ``static_slider`` (plotly allows one of each without combining states). ``static_dropdown``
    may instead be a control of its own that sets several keywords at once (see ``Control``)."""
    by_name = {c.name: c for c in controls}
    for name in (static_dropdown, static_slider):
        if name is not None and not isinstance(name, Control) and name not in by_name:
            raise ValueError(f"static control {name!r} is not one of {list(by_name)}")
    chosen = {role: (c if isinstance(c, Control) else by_name[c])
              for role, c in (("dropdown", static_dropdown), ("slider", static_slider)) if c is not None}
    static = static_figure(spec, values, chosen.get("dropdown"), chosen.get("slider"))
    return Panel(spec, values, controls, static, div_id, chosen)
