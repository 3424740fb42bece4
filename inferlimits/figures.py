"""Figure builders: plain parameters in, a plotly figure out.

Interactive figures come as a pure *state* function (what every trace shows for given control
values) used twice: by the static figure, whose plotly sliders and dropdowns hold precomputed
states, and by the kernel-side widget panel, which applies the state to a FigureWidget in place.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import plotly.graph_objects as go

from .hardware import accelerator
from .roofline import attainable_flop_per_s, balance_point_flop_per_byte, bound
from .units import TERA

FONT = dict(family="Helvetica, Arial, sans-serif", size=14)
SELECTED = "#c0392b"
FAINT = "#c8c8c8"

# fixed log-log axes, so nothing jumps while a slider moves
INTENSITY_RANGE = (0.1, 10_000.0)   # FLOP per byte
TFLOPS_RANGE = (0.02, 5_000.0)      # TFLOP/s
ROOFLINE_INTENSITIES = (0.5, 1, 2, 5, 10, 20, 50, 100, 150, 200, 300, 500, 1000, 2000, 5000)


def _base_layout(title: str, x_title: str, y_title: str, log: bool = True) -> dict:
    axis = dict(type="log", dtick=1) if log else {}
    return dict(
        title=dict(text=title, x=0.02, xanchor="left"),
        template="plotly_white", font=FONT, height=520, margin=dict(l=70, r=20, t=60, b=60),
        xaxis=dict(title=x_title, **axis), yaxis=dict(title=y_title, **axis), showlegend=False,
    )


def roofline_point(name: str, intensity_flop_per_byte: float) -> tuple[float, float, str]:
    """Where a workload of this intensity sits on this accelerator's roof: (intensity, TFLOP/s,
    label naming the wall and the share of peak math)."""
    a = accelerator(name)
    y = attainable_flop_per_s(intensity_flop_per_byte, a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s)
    wall = bound(intensity_flop_per_byte, a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s)
    share = y / a.dense_bf16_flops_per_s
    return intensity_flop_per_byte, y / TERA, f"{wall}: {share:.2%} of peak math"


def roofline_state(names: Sequence[str], selected: str, intensity_flop_per_byte: float) -> dict:
    """Everything the controls change, per trace of ``roofline_figure``: which traces are visible
    and where the marker of each accelerator sits."""
    points = [roofline_point(n, intensity_flop_per_byte) for n in names]
    visible = [True] + [n == selected for n in names for _ in range(3)]
    return {
        "visible": visible,
        "marker_x": [[p[0]] for p in points],
        "marker_y": [[p[1]] for p in points],
        "marker_text": [[p[2]] for p in points],
        "title": f"Roofline of the {selected}",
    }


def marker_traces(names: Sequence[str]) -> list[int]:
    """Indices of the marker traces in ``roofline_figure``: after the faint roofs, each
    accelerator adds roof, ridge and marker."""
    return [1 + 3 * i + 2 for i in range(len(names))]


def roofline_figure(names: Sequence[str], selected: str, intensity_flop_per_byte: float) -> go.Figure:
    """Log-log roofline: every accelerator's roof in grey, the selected one in colour with its
    ridge (the balance point) and a marker at the workload's intensity."""
    if selected not in names:
        raise ValueError(f"selected must be one of names; got {selected!r}")
    x0, x1 = INTENSITY_RANGE
    fig = go.Figure()
    fx, fy = [], []
    for n in names:
        a = accelerator(n)
        ridge = balance_point_flop_per_byte(a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s)
        peak = a.dense_bf16_flops_per_s / TERA
        fx += [x0, ridge, x1, None]
        fy += [x0 * a.bandwidth_bytes_per_s / TERA, peak, peak, None]
    fig.add_trace(go.Scatter(x=fx, y=fy, mode="lines", line=dict(color=FAINT, width=1),
                             hoverinfo="skip", name="other accelerators"))
    for n in names:
        a = accelerator(n)
        ridge = balance_point_flop_per_byte(a.dense_bf16_flops_per_s, a.bandwidth_bytes_per_s)
        peak = a.dense_bf16_flops_per_s / TERA
        fig.add_trace(go.Scatter(
            x=[x0, ridge, x1], y=[x0 * a.bandwidth_bytes_per_s / TERA, peak, peak], mode="lines",
            line=dict(color=SELECTED, width=3), name=n,
            hovertemplate=f"{n}<br>%{{x:.3g}} FLOP/byte → %{{y:.4g}} TFLOP/s<extra></extra>"))
        fig.add_trace(go.Scatter(
            x=[ridge, ridge], y=[TFLOPS_RANGE[0], peak], mode="lines+text",
            line=dict(color=SELECTED, width=1, dash="dot"), text=["", f"ridge {ridge:.0f}"],
            textposition="top left", hoverinfo="skip", name=f"{n} ridge"))
        fig.add_trace(go.Scatter(
            x=[0], y=[0], mode="markers+text", marker=dict(size=14, color="#1f4e79"),
            textposition="bottom right", name="workload",
            hovertemplate="%{x:.3g} FLOP/byte → %{y:.4g} TFLOP/s<extra></extra>"))
    layout = _base_layout("", "arithmetic intensity (FLOP per byte moved)", "attainable math rate (dense BF16 TFLOP/s)")
    layout["xaxis"]["range"] = [math.log10(v) for v in INTENSITY_RANGE]
    layout["yaxis"]["range"] = [math.log10(v) for v in TFLOPS_RANGE]
    fig.update_layout(**layout)
    apply_roofline_state(fig, roofline_state(names, selected, intensity_flop_per_byte), names)
    return fig


def apply_roofline_state(fig: go.Figure, state: dict, names: Sequence[str]) -> None:
    """Set a roofline figure's traces to a state (used for the first draw and by the widgets)."""
    for trace, vis in zip(fig.data, state["visible"]):
        trace.visible = vis
    for i, idx in enumerate(marker_traces(names)):
        fig.data[idx].x = state["marker_x"][i]
        fig.data[idx].y = state["marker_y"][i]
        fig.data[idx].text = state["marker_text"][i]
    fig.layout.title.text = state["title"]


def roofline_static(names: Sequence[str], selected: str, intensity_flop_per_byte: float,
                    intensities: Sequence[float] = ROOFLINE_INTENSITIES) -> go.Figure:
    """The roofline with plotly's own controls, for a page with no kernel: a dropdown over
    accelerators and a slider over precomputed intensities."""
    fig = roofline_figure(names, selected, intensity_flop_per_byte)
    markers = marker_traces(names)
    buttons = []
    for n in names:
        s = roofline_state(names, n, intensity_flop_per_byte)
        buttons.append(dict(label=n, method="update", args=[{"visible": s["visible"]}, {"title.text": s["title"]}]))
    steps = []
    for v in intensities:
        s = roofline_state(names, selected, v)
        steps.append(dict(label=f"{v:g}", method="restyle",
                          args=[{"x": s["marker_x"], "y": s["marker_y"], "text": s["marker_text"]}, markers]))
    fig.update_layout(
        updatemenus=[dict(buttons=buttons, active=list(names).index(selected), x=1.0, y=1.02,
                          xanchor="right", yanchor="bottom", direction="down")],
        sliders=[dict(steps=steps, active=_nearest(intensities, intensity_flop_per_byte),
                      currentvalue=dict(prefix="intensity (FLOP/byte): "), pad=dict(t=50))],
        height=620, margin=dict(t=100),
    )
    return fig


def _nearest(values: Sequence[float], x: float) -> int:
    return min(range(len(values)), key=lambda i: abs(math.log(values[i]) - math.log(x)))
