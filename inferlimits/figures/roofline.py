"""Chapter 1's figures. The roofline: every accelerator's roof in grey, one in colour with a roof
for each precision its tensor cores multiply in, and a marker where a workload of a given
intensity lands on the roof of the chosen precision. And the balance points of the datacenter
parts against their launch year, at a chosen math precision."""
from __future__ import annotations

from collections.abc import Sequence

from inferlimits.data.hardware import MATH_PRECISIONS, accelerator
from inferlimits.figures.interactive import Control, panel as _panel, preferred_stops
from inferlimits.arithmetic.roofline import attainable_flop_per_s, balance_point_flop_per_byte, bound
from inferlimits.data.units import TERA
from inferlimits.figures import ACCENT, FAINT, INK, PALETTE, base_layout

INTENSITY_RANGE = (0.1, 10_000.0)   # FLOP per byte, fixed x axis
TFLOPS_RANGE = (0.02, 20_000.0)     # TFLOP/s, fixed y axis (the FP4 roofs reach 14,000)
INTENSITIES = (0.5, 1, 2, 5, 10, 20, 50, 100, 150, 200, 300, 500, 1000, 2000, 5000)   # static slider stops
#: one colour per precision, the same in every figure of the book
PRECISION_COLOURS = dict(zip(MATH_PRECISIONS, [ACCENT, PALETTE[0], PALETTE[5], PALETTE[3], PALETTE[2]]))


def roof(name: str, math_precision: str = "BF16") -> tuple[list[float], list[float], float] | None:
    """The roof of one accelerator at one math precision across the x range, in TFLOP/s, and its
    ridge; None where the part has no such mode."""
    a = accelerator(name)
    if not a.supports(math_precision):
        return None
    peak = a.math_flops_per_s(math_precision)
    ridge = peak / a.bandwidth_bytes_per_s
    x0, x1 = INTENSITY_RANGE
    return [x0, ridge, x1], [x0 * a.bandwidth_bytes_per_s / TERA, peak / TERA, peak / TERA], ridge


def spec(names: Sequence[str], accelerator_name: str, intensity_flop_per_byte: float,
         math_precision: str = "BF16") -> dict:
    """Roofs of ``names`` at ``math_precision`` in grey, ``accelerator_name``'s roof at every
    precision it has (``math_precision``'s drawn bold, with its ridge), and a workload at the given
    intensity on that roof."""
    if accelerator_name not in names:
        raise ValueError(f"accelerator_name must be one of names; got {accelerator_name!r}")
    a = accelerator(accelerator_name)
    fx, fy = [], []
    for n in names:  # every part, the chosen one too (drawn over it): the same trace whichever is chosen
        r = roof(n, math_precision)
        if r:
            fx += r[0] + [None]
            fy += r[1] + [None]
    data = [dict(type="scatter", x=fx, y=fy, mode="lines", line=dict(color=FAINT, width=1), hoverinfo="skip",
                 name=f"every accelerator, {math_precision}")]
    chosen_roof = roof(accelerator_name, math_precision) or roof(accelerator_name, "BF16")
    rates = {p: accelerator(accelerator_name).math_flops_per_s(p) for p in MATH_PRECISIONS
             if accelerator(accelerator_name).supports(p)}
    for p in MATH_PRECISIONS:
        r = roof(accelerator_name, p)
        chosen = p == math_precision
        if r and not chosen and chosen_roof:
            # the other precisions' roofs share the slanted part: draw only what differs, the slope
            # from the chosen ridge up to a higher ridge and the flat top
            start = max(chosen_roof[2], INTENSITY_RANGE[0]) if r[2] > chosen_roof[2] else r[2]
            r = ([start, r[2], INTENSITY_RANGE[1]], [start * a.bandwidth_bytes_per_s / TERA, r[1][1], r[1][1]], r[2])
        if not r:  # no such mode: an empty trace, as light as it can be, keeps every group's traces alike
            data.append(dict(type="scatter", x=[], y=[], name=f"{accelerator_name}, {p}", showlegend=False))
            continue
        # one label for precisions that share a rate (Blackwell's FP8 and FP6, AMD's FP6 and FP4)
        same = [q for q, v in rates.items() if v == rates[p]]
        label = "/".join(same) if same and same[0] == p else ""
        data.append(dict(type="scatter", x=r[0], y=r[1], mode="lines+text",
                         line=dict(color=PRECISION_COLOURS[p], width=3 if chosen else 1.5,
                                   dash="solid" if chosen else "dash"),
                         text=["", "", f"{label} {r[1][1]:,.0f}" if label else ""],
                         textposition="bottom left", name=f"{accelerator_name}, {p}",
                         hovertemplate=f"{p}: " + "%{x:.3g} FLOP/byte → %{y:.4g} TFLOP/s<extra></extra>"))
    drawn = math_precision if a.supports(math_precision) else "BF16"  # the BF16 roof where the part has no such mode
    x, y, ridge = roof(accelerator_name, drawn)
    peak = a.math_flops_per_s(drawn)
    at = attainable_flop_per_s(intensity_flop_per_byte, peak, a.bandwidth_bytes_per_s)
    wall = bound(intensity_flop_per_byte, peak, a.bandwidth_bytes_per_s)
    data += [
        dict(type="scatter", x=[ridge, ridge], y=[TFLOPS_RANGE[0], y[1]], mode="lines+text",
             line=dict(color=PRECISION_COLOURS[drawn], width=1, dash="dot"),
             text=["", f"ridge {ridge:.0f}"], textposition="bottom left", hoverinfo="skip", name="ridge"),
        dict(type="scatter", x=[intensity_flop_per_byte], y=[at / TERA], mode="markers+text",
             marker=dict(size=14, color=INK), textposition="bottom right", name="workload",
             text=[f"{wall}: {at / peak:.2%} of peak {drawn} math"],
             hovertemplate="%{x:.3g} FLOP/byte → %{y:.4g} TFLOP/s<extra></extra>")]
    title = f"Roofline of the {accelerator_name}"
    if drawn != math_precision:
        title += f": no {math_precision} mode, the workload sits on the BF16 roof"
    layout = base_layout(title, "arithmetic intensity (FLOP per byte moved)",
                         "attainable math rate (dense TFLOP/s)", x_log=True, y_log=True,
                         x_range=INTENSITY_RANGE, y_range=TFLOPS_RANGE)
    return {"data": data, "layout": layout}


def panel(names: Sequence[str], accelerator_name: str, intensity_flop_per_byte: float,
          math_precision: str = "BF16", div_id: str = "fig-roofline"):
    """Accelerator and math-precision dropdowns and an intensity slider over the roofline, live; an
    accelerator dropdown and the intensity slider on a page without a kernel, where every
    precision's roof is drawn and the workload sits on the BF16 one."""
    controls = [Control("accelerator_name", "accelerator", list(names)),
                Control("math_precision", "math", MATH_PRECISIONS),
                Control("intensity_flop_per_byte", "intensity (FLOP/byte)", INTENSITIES, kind="slider",
                        stops=preferred_stops(min(INTENSITIES), max(INTENSITIES), INTENSITIES))]
    values = dict(names=list(names), accelerator_name=accelerator_name, intensity_flop_per_byte=intensity_flop_per_byte,
                  math_precision=math_precision)
    return _panel(spec, values, controls, div_id, static_dropdown="accelerator_name",
                  static_slider="intensity_flop_per_byte")


#: balance points the year figure's fixed y axis spans, FLOP per byte (B300's INT8 is about 19, its FP4 about 1,800)
RIDGE_RANGE = (10.0, 3000.0)
SYMBOLS = ("circle", "diamond", "square", "triangle-up")


def balance_by_year_spec(names: Sequence[str], math_precision: str = "BF16") -> dict:
    """Each part of ``names`` at its launch year and its balance point P / BW with dense math at
    ``math_precision``, one trace per vendor; a part with no such mode is left out, and the title
    says how many are."""
    parts = [accelerator(n) for n in names]
    if not parts:
        raise ValueError("names must name at least one accelerator")
    vendors = sorted({a.vendor for a in parts})
    if len(vendors) > len(SYMBOLS):
        raise ValueError(f"names may span at most {len(SYMBOLS)} vendors; got {vendors}")
    data = []
    for i, vendor in enumerate(vendors):
        own = [a for a in parts if a.vendor == vendor and a.supports(math_precision)]
        data.append(dict(type="scatter", mode="markers", name=vendor, x=[a.year for a in own],
                         y=[balance_point_flop_per_byte(a.math_flops_per_s(math_precision), a.bandwidth_bytes_per_s)
                            for a in own],
                         text=[a.name for a in own], marker=dict(size=11, color=PALETTE[i], symbol=SYMBOLS[i]),
                         hovertemplate="%{text}, %{x}: %{y:.0f} FLOP per byte<extra></extra>"))
    lacking = sum(not a.supports(math_precision) for a in parts)
    title = f"Balance point by launch year, dense {math_precision}"
    if lacking:
        title += f"<br>{lacking} of {len(parts)} parts have no {math_precision} mode"
    years = [a.year for a in parts]
    layout = base_layout(title, "launch year", "balance point (FLOP per byte)", y_log=True,
                         x_range=(min(years) - 0.5, max(years) + 0.5), y_range=RIDGE_RANGE, legend=True)
    layout["xaxis"]["dtick"] = 1
    return {"data": data, "layout": layout}


def balance_by_year_panel(names: Sequence[str], math_precision: str = "BF16", div_id: str = "fig-balance-by-year"):
    """A math-precision dropdown over the balance points by year, live and on a page without a kernel."""
    values = dict(names=list(names), math_precision=math_precision)
    return _panel(balance_by_year_spec, values, [Control("math_precision", "math", MATH_PRECISIONS)], div_id,
                  static_dropdown="math_precision")
