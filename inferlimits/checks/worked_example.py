"""The worked example of chapter 8: every numeric claim of a post about Qwen2.5-32B in BF16 on one
A100 80GB SXM, recomputed from the model's config, the accelerator's data and the book's serving
rules, and judged strictly.

The claims are data (``data/worked_example_claims.toml``): the document's wording of each number,
the number(s) as written, their unit, which recomputation applies, and the assumptions the
document states that a claim rests on. A recomputation gives

* ``right``: the value the book's model gives (the capacity the card reports, the book's usable
  share, the cache in the model's own precision), in base units (bytes, seconds, FLOP/s);
* ``assumed``: the value under the assumptions the document states for this claim (its 95% usable,
  its 2 to 2.5x cache factor), where it names any;
* ``route``: the arithmetic that reproduces the document's number, where it differs from both,
  with the slip it takes, in words.

There are three verdicts. A claim *holds* when the right value gives it by the rule the book
applies to its own numbers (equal at the precision written, or within 3% where the document marks
it approximate). It *holds under its assumption* when only the assumed value gives it and every
assumption it rests on is one a real deployment can make. Otherwise it *does not hold*, and the
right value is shown: that covers a claim whose only support is an assumption no deployment makes,
and a range whose end cannot happen on the card (a step that reads more than memory can hold).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from decimal import Decimal
from functools import cached_property

from inferlimits.data import datafiles
from inferlimits.arithmetic.activations import activation_bytes_per_token
from inferlimits.checks import UNITS, Stated, verdict as _check_rule
from inferlimits.arithmetic.generation import decode_point
from inferlimits.data.hardware import Accelerator, accelerator
from inferlimits.arithmetic.kvcache import (kv_cache_bytes, max_context_tokens, max_sequences,
                                            memory_left_for_cache_bytes, usable_memory_fraction)
from inferlimits.data.models import Config, embedding_params, kv_bytes_per_token, model, param_count, weight_bytes
from inferlimits.arithmetic.roofline import balance_point_flop_per_byte
from inferlimits.data.units import GB, GIB, KIB, bytes_per_element, positive

#: A route (the arithmetic behind a wrong number) reproduces an approximate number within this
#: share, a plain one within the smaller share (1.55 GB for 1.557 GB).
ROUTE_WITHIN = 0.03
ROUTE_PLAIN = 0.01

HOLDS = "holds"
ASSUMED = "holds under its assumption"
FAILS = "does not hold"
KINDS = (HOLDS, ASSUMED, FAILS)

_SCALE = {**UNITS, "tokens/s": 1.0, "FLOP/byte": 1.0, "sequences": 1.0}


# ---- the claims, as data ------------------------------------------------------------------------

@dataclass(frozen=True)
class Assumption:
    """An assumption the document states, and whether a real deployment can make it."""

    id: str
    claim: str
    admissible: bool
    why: str


@dataclass(frozen=True)
class Claim:
    """One numeric claim of the document, as ``data/worked_example_claims.toml`` holds it."""

    id: str
    what: str
    wording: str
    stated: tuple[Decimal, ...]
    unit: str
    recompute: str
    point: int
    approximate: bool = False
    bound: str = ""
    context_tokens: int | None = None
    route_bandwidth_share: float | None = None
    assumptions: tuple[str, ...] = ()

    @property
    def scale(self) -> float:
        """Base units per unit of the stated number (1e9 for GB, 1e-3 for ms)."""
        return _SCALE[self.unit]

    def stated_base(self, i: int = 0) -> float:
        """The ``i``-th stated number in base units (80 GB -> 8e10 bytes)."""
        return float(self.stated[i]) * self.scale


@datafiles.cached
def _data() -> dict:
    return datafiles.load("worked_example_claims.toml")


@datafiles.cached
def assumptions() -> dict[str, Assumption]:
    """The document's stated assumptions, keyed by id."""
    return {key: Assumption(key, row["claim"], bool(row["admissible"]), row["why"])
            for key, row in _data()["assumptions"].items()}


@datafiles.cached
def claims() -> dict[str, Claim]:
    """Every claim, in the document's order, keyed by id."""
    out = {}
    for key, row in _data()["claims"].items():
        if row["unit"] not in _SCALE:
            raise ValueError(f"claim {key}: unit must be one of {', '.join(_SCALE)}; got {row['unit']!r}")
        if row["recompute"] not in RECOMPUTATIONS:
            raise ValueError(f"claim {key}: recompute must be one of {', '.join(RECOMPUTATIONS)}; "
                             f"got {row['recompute']!r}")
        written = [n.replace(",", "") for n in re.findall(r"\d[\d,]*(?:\.\d+)?", row["wording"])] or ["0"]
        if written != row["stated"]:
            raise ValueError(f"claim {key}: stated {row['stated']} must be the numbers its wording "
                             f"{row['wording']!r} shows ({written}; none means 0)")
        rests_on = row.get("assumption", ())
        rests_on = (rests_on,) if isinstance(rests_on, str) else tuple(rests_on)
        unknown = set(rests_on) - set(assumptions())
        if unknown:
            raise ValueError(f"claim {key}: assumption must be one of {', '.join(assumptions())}; got {unknown}")
        out[key] = Claim(id=key, what=row["what"], wording=row["wording"],
                         stated=tuple(Decimal(s) for s in row["stated"]),
                         unit=row["unit"], recompute=row["recompute"], point=int(row["point"]),
                         approximate=bool(row.get("approximate", False)), bound=row.get("bound", ""),
                         context_tokens=row.get("context_tokens"),
                         route_bandwidth_share=row.get("route_bandwidth_share"), assumptions=rests_on)
    return out


def claim(claim_id: str) -> Claim:
    """The claim called ``claim_id``, or a ValueError listing the ids."""
    return datafiles.lookup(claims(), "claim_id", claim_id)


def example_model() -> Config:
    """The config of the model the document runs (Qwen2.5-32B)."""
    return model(_data()["model"]).config


def example_accelerator() -> Accelerator:
    """The accelerator the document runs it on (the A100 80GB SXM)."""
    return accelerator(_data()["accelerator"])


def source() -> str:
    """Where the claims come from."""
    return _data()["source"]


# ---- quantities the package does not already have --------------------------------------------------

def output_head_bytes(c: Config, weight_precision: str = "BF16") -> float:
    """One vocabulary-sized matrix (the output head, or the input embedding table):
    vocab x hidden x bytes per weight."""
    return embedding_params(c) * bytes_per_element(weight_precision, "weight_precision")


def context_tokens_at_compute_time(c: Config, peak_flop_per_s: float, seconds: float) -> float:
    """The context L at which one token's decode math, F(L) / P, takes ``seconds``: from
    F(L) = 2N + 2aL (N the weights a token multiplies, a = layers x heads x (d_qk + d_v)),
    L = (seconds x P - F(0)) / (F(1) - F(0)). Raises ValueError if even L = 0 takes longer."""
    budget = positive("seconds", seconds) * positive("peak_flop_per_s", peak_flop_per_s)
    f0 = decode_point(c, peak_flop_per_s, 1.0).flops_per_token
    if budget < f0:
        raise ValueError(f"seconds ({seconds!r}) is shorter than the math of a token with no context "
                         f"({f0 / peak_flop_per_s:.3g} s)")
    return (budget - f0) / (decode_point(c, peak_flop_per_s, 1.0, context_tokens=1).flops_per_token - f0)


def implied_bandwidth_bytes_per_s(bytes_moved: float, seconds: float) -> float:
    """The bandwidth a stated time implies for a stated amount of traffic: M / T."""
    return positive("bytes_moved", bytes_moved) / positive("seconds", seconds)


# ---- the recomputations -------------------------------------------------------------------------

@dataclass(frozen=True)
class Recomputed:
    """What the book's model gives for a claim (base units), the value under the document's stated
    assumptions, and the route to the document's number where it differs from both."""

    right: tuple[float, ...]
    assumed: tuple[float, ...] | None = None
    route: tuple[float, ...] | None = None
    route_text: str = ""
    note: str = ""


@dataclass(frozen=True)
class Setting:
    """The example: the model's config, the accelerator, and quantities every claim uses, under
    the book's rules and under the document's stated assumptions."""

    c: Config = field(default_factory=example_model)
    a: Accelerator = field(default_factory=example_accelerator)

    @cached_property
    def w(self) -> float:
        """The stored BF16 weights, what memory must hold."""
        return weight_bytes(self.c, "BF16")

    @cached_property
    def k(self) -> float:
        return kv_bytes_per_token(self.c, "BF16")

    @cached_property
    def usable(self) -> float:
        """The book's usable share of memory (``data/serving.toml``)."""
        return usable_memory_fraction()

    @cached_property
    def doc_usable(self) -> float:
        """The document's usable share (its 95%)."""
        return claim("usable_fraction").stated_base()

    @cached_property
    def factor(self) -> float:
        """The document's cache factor at its upper end (the 2.5 of ~2–2.5x)."""
        return float(claim("kv_factor").stated[-1])

    @cached_property
    def left(self) -> float:
        """Bytes left for caches under the book's rule: capacity x usable share - weights."""
        return memory_left_for_cache_bytes(self.a.capacity_bytes, self.w, self.usable)

    @cached_property
    def doc_left(self) -> float:
        """Bytes left for caches with the document's 95% of the capacity the card reports."""
        return memory_left_for_cache_bytes(self.a.capacity_bytes, self.w, self.doc_usable)

    def point(self, batch: float = 1, context_tokens: float = 0.0, efficiency: float = 1.0):
        """A decode step on the card, every term counted (``generation.decode_point``)."""
        return decode_point(self.c, self.a.dense_bf16_flops_per_s, self.a.bandwidth_bytes_per_s, batch,
                            context_tokens, efficiency=efficiency)


def _gb(x: float, digits: int = 1) -> str:
    return f"{x / GB:,.{digits}f} GB"


def _parameters(cl: Claim, s: Setting) -> Recomputed:
    n = param_count(s.c)
    return Recomputed((n,), note=f"the size class in the model's name; the config gives {n:,}")


def _weight_bytes(cl: Claim, s: Setting) -> Recomputed:
    b = bytes_per_element("BF16")
    params = claim("params")
    return Recomputed((s.w,), route=(params.stated_base() * b,),
                      route_text=f"the rounded {params.wording} × {b:g} bytes",
                      note=f"{_gb(s.w, 2)} is {s.w / GIB:.1f} GiB")


def _capacity(cl: Claim, s: Setting) -> Recomputed:
    a = s.a
    return Recomputed((a.capacity_bytes,), route=(a.capacity_marketed_gb * GB,),
                      route_text="the marketed name read as decimal GB",
                      note=f"the card reports {a.reported_capacity_mib:,.0f} MiB = {a.capacity_bytes / GIB:g} GiB")


def _free_memory(cl: Claim, s: Setting) -> Recomputed:
    free = memory_left_for_cache_bytes(s.a.capacity_bytes, s.w, 1.0)
    cap, wts = claim("gpu_memory"), claim("bf16_weights")
    return Recomputed((free,), route=(cap.stated_base() - wts.stated_base(),),
                      route_text=f"{cap.wording} − {wts.wording}, GiB read as GB and the count rounded,",
                      note=f"{_gb(s.a.capacity_bytes)} − {_gb(s.w)} = {_gb(free)} ({free / GIB:.1f} GiB)")


def _peak_math(cl: Claim, s: Setting) -> Recomputed:
    return Recomputed((s.a.dense_bf16_flops_per_s,),
                      note=(f"dense BF16; the {s.a.sparse_bf16_flops_per_s / 1e12:g} TFLOP/s on the datasheet "
                            "is with sparsity"))


def _bandwidth(cl: Claim, s: Setting) -> Recomputed:
    bw = s.a.bandwidth_bytes_per_s
    return Recomputed((bw,), note="" if cl.id == "bandwidth" else
                      f"the datasheet says {bw / GB:,.0f} GB/s, as the document itself does earlier")


def _balance_point(cl: Claim, s: Setting) -> Recomputed:
    p, bw = s.a.dense_bf16_flops_per_s, s.a.bandwidth_bytes_per_s
    return Recomputed((balance_point_flop_per_byte(p, bw),),
                      note=f"math over bandwidth; the other way round it is {bw / p:.5f} byte per FLOP")


def _l2_cache(cl: Claim, s: Setting) -> Recomputed:
    l2 = s.a.last_level_cache_bytes
    return Recomputed((l2,), route=(float(s.a.last_level_cache_marketed.split()[0]) * cl.scale,),
                      route_text="NVIDIA's marketed figure, which counts MiB, read as MB,",
                      note=f"the weights a token reads are {s.point().weight_bytes / l2:,.0f} times larger")


def _decode_rate(cl: Claim, s: Setting) -> Recomputed:
    p = s.point()
    return Recomputed((p.ceiling,), note=(f"{s.a.bandwidth_bytes_per_s / GB:,.0f} GB/s over the {_gb(p.bytes, 2)} "
                                          "a token moves (every weight but the embedding table, and activations)"))


def _token_latency(cl: Claim, s: Setting) -> Recomputed:
    head, bw_doc = output_head_bytes(s.c), claim("latency_bandwidth")
    return Recomputed((1 / s.point().ceiling,), route=(head / bw_doc.stated_base(),),
                      route_text=(f"one {s.c.vocab_size:,} × {s.c.hidden_size:,} BF16 matrix ({_gb(head, 2)}) "
                                  f"over {bw_doc.wording}"),
                      note=f"a token reads {_gb(s.point().weight_bytes)} of weights")


def _bytes_per_token(cl: Claim, s: Setting) -> Recomputed:
    head = output_head_bytes(s.c)
    return Recomputed((s.point().bytes,), route=(head,),
                      route_text=f"one vocabulary-sized matrix, {s.c.vocab_size:,} × {s.c.hidden_size:,} × 2 bytes,",
                      note="a token reads every weight but the embedding table")


def _kv_per_token(cl: Claim, s: Setting) -> Recomputed:
    c = s.c
    return Recomputed((s.k,), note=(f"2 × {c.num_hidden_layers} × {c.num_key_value_heads} × {c.head_dim_qk} "
                                    f"× 2 bytes = {s.k / KIB:g} KiB"))


def _kv_sequence(cl: Claim, s: Setting) -> Recomputed:
    plain = kv_cache_bytes(s.k, 1, cl.context_tokens)
    return Recomputed((plain,), assumed=(s.factor * plain,),
                      note=f"{cl.context_tokens:,} tokens × {s.k:,.0f} B = {plain / GIB:g} GiB")


def _kv_factor(cl: Claim, s: Setting) -> Recomputed:
    """The factor on the cache is 1 in the book's model: the cache is stored in its own precision."""
    up = bytes_per_element("FP32") / bytes_per_element("BF16")
    return Recomputed((1.0,), assumed=tuple(cl.stated_base(i) for i in range(len(cl.stated))), note=f"FP32 storage would double the cache ({up:g}×); the rest is not derived")


def _usable_fraction(cl: Claim, s: Setting) -> Recomputed:
    return Recomputed((s.usable,), assumed=(s.doc_usable,), note="a choice of headroom")


def _usable_memory(cl: Claim, s: Setting) -> Recomputed:
    cap = s.a.capacity_bytes
    doc = claim("gpu_memory").stated_base()
    return Recomputed((s.usable * cap,), assumed=(s.doc_usable * cap,), route=(s.doc_usable * doc,),
                      route_text=f"{s.doc_usable:.0%} of {claim('gpu_memory').wording} read as decimal GB",
                      note=f"{s.usable:.0%} of {_gb(cap)}; with the document's {s.doc_usable:.0%}, "
                           f"{_gb(s.doc_usable * cap)} ({s.doc_usable * cap / GIB:.0f} GiB)")


def _left_for_cache(cl: Claim, s: Setting) -> Recomputed:
    usable, wts = claim("usable"), claim("plan_weights")
    return Recomputed((s.left,), assumed=(s.doc_left,), route=(usable.stated_base() - wts.stated_base(),),
                      route_text=f"{usable.stated[0]} GiB minus {wts.stated[0]} GB, as if one unit,",
                      note=f"{_gb(s.left)} = {s.left / GIB:.1f} GiB")


def _sequences(cl: Claim, s: Setting) -> Recomputed:
    L, cap = cl.context_tokens, s.a.capacity_bytes
    plain = max_sequences(cap, s.w, s.k, L, s.usable)
    assumed = max_sequences(cap, s.w, s.factor * s.k, L, s.doc_usable)
    remaining = claim("remaining")
    per_sequence = next(x for x in claims().values() if x.recompute == "kv_sequence" and x.context_tokens == L)
    doc = math.floor(remaining.stated_base() / per_sequence.stated_base())
    return Recomputed((plain,), assumed=(assumed,),
                      route=(doc,), route_text=f"{remaining.wording} left over {per_sequence.wording} each")


def _most_one_sequence_reads(s: Setting) -> float:
    """The most one sequence's decode step can read on the card, the case the document describes
    ("decoding each token streams"): the weights it reads, the longest cache that fits beside
    the stored weights in the usable memory, and its activations. (The weights a step reads leave
    out the embedding table, which is held but not read.)"""
    c = s.c
    return (s.usable * s.a.capacity_bytes - embedding_params(c) * bytes_per_element("BF16")
            + activation_bytes_per_token(c))


def _documents_step_bytes() -> tuple[float, float]:
    """The document's own route to "66–86 GB": its 65 GB of weights plus its own (2.5x) cache of
    one sequence at the shortest and at the longest context it says a step can hold."""
    weights = claim("plan_weights").stated_base()
    caches = [x for x in claims().values() if x.recompute == "kv_sequence"]
    shortest = min(caches, key=lambda x: x.context_tokens)
    served = [x for x in caches if x.context_tokens <= claim("seq_32k").context_tokens]
    longest = max(served, key=lambda x: x.context_tokens)
    return weights + shortest.stated_base(), weights + longest.stated_base()


def _unable(s: Setting) -> str:
    """Why the upper end of the document's step cannot happen, in words."""
    return (f"its upper end is a {claim('seq_32k').context_tokens:,}-token sequence with a cache "
            f"{s.factor:g} times too large, a case the document itself calls “{claim('seq_32k').wording}”, and more than "
            f"one sequence's step can read on this card")


def _bytes_per_step(cl: Claim, s: Setting) -> Recomputed:
    most = _most_one_sequence_reads(s)
    return Recomputed((s.point().bytes, most), route=_documents_step_bytes(),
                      route_text=(f"{claim('plan_weights').wording} of weights plus its own caches of "
                                  f"{min(x.context_tokens for x in claims().values() if x.recompute == 'kv_sequence'):,}"
                                  f" and {claim('seq_32k').context_tokens:,} tokens"),
                      note=(f"from the weights a token reads to the most one sequence's step can read with "
                            f"{s.usable:.0%} usable, {_gb(most)}"))


def _step_time(cl: Claim, s: Setting) -> Recomputed:
    bw = s.a.bandwidth_bytes_per_s
    share = cl.route_bandwidth_share
    streamed = claim("streamed")
    implied = [implied_bandwidth_bytes_per_s(streamed.stated_base(i), cl.stated_base(i)) for i in range(2)]
    moved = (s.point().bytes, _most_one_sequence_reads(s))
    return Recomputed(tuple(m / bw for m in moved),
                      route=tuple(b / (share * bw) for b in _documents_step_bytes()),
                      route_text=f"those bytes at {share:.0%} of the bandwidth, a share real kernels can reach",
                      note=(f"the stated pairs imply {implied[0] / 1e12:.2f} and {implied[1] / 1e12:.2f} TB/s; "
                            f"at the full {bw / GB:,.0f} GB/s a step takes at least the times shown"))


def _compute_time(cl: Claim, s: Setting) -> Recomputed:
    p = s.a.dense_bf16_flops_per_s
    longest = max_context_tokens(s.a.capacity_bytes, s.w, s.k, 1, s.usable)
    times = tuple(s.point(context_tokens=L).flops_per_token / p for L in (0, longest))
    crossing = context_tokens_at_compute_time(s.c, p, cl.stated_base())
    return Recomputed(times, note=(f"no context to the longest one sequence can keep, {longest:,} tokens; "
                                   f"{cl.wording[1:]} at {crossing:,.0f} tokens"))


RECOMPUTATIONS = {
    "parameters": _parameters, "weight_bytes": _weight_bytes, "capacity": _capacity,
    "free_memory": _free_memory, "peak_math": _peak_math, "bandwidth": _bandwidth,
    "balance_point": _balance_point, "l2_cache": _l2_cache, "decode_rate": _decode_rate,
    "token_latency": _token_latency, "bytes_per_token": _bytes_per_token, "kv_per_token": _kv_per_token,
    "kv_sequence": _kv_sequence, "kv_factor": _kv_factor, "usable_fraction": _usable_fraction,
    "usable_memory": _usable_memory, "left_for_cache": _left_for_cache, "sequences": _sequences,
    "bytes_per_step": _bytes_per_step, "step_time": _step_time, "compute_time": _compute_time,
}


def recompute(claim_id: str) -> Recomputed:
    """The recomputation of claim ``claim_id`` for the document's model and accelerator."""
    cl = claim(claim_id)
    return RECOMPUTATIONS[cl.recompute](cl, Setting())


# ---- verdicts -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Verdict:
    claim: Claim
    recomputed: Recomputed
    kind: str
    why: str


def _matches(cl: Claim, values: tuple[float, ...], tolerance: float | None = None) -> bool:
    """Whether ``values`` (base units) give the stated number(s): each end of a pair, or a single
    value inside a stated range. The book's check rule; ``tolerance`` makes any match approximate."""
    mode = "approximate" if (cl.approximate or tolerance) else "plain"

    def one(x: float, s: Decimal) -> bool:
        st = Stated(str(s), s, max(0, -s.as_tuple().exponent), "", mode)
        return _check_rule(x / cl.scale, st, tolerance or 0.03)[0]

    if len(values) == len(cl.stated):
        return all(one(x, s) for x, s in zip(values, cl.stated))
    if len(values) == 1 and len(cl.stated) == 2:
        lo, hi = (float(s) * cl.scale for s in cl.stated)
        slack = (tolerance or 0.03) if mode == "approximate" else 0.0
        return lo * (1 - slack) <= values[0] <= hi * (1 + slack)
    raise ValueError(f"claim {cl.id}: {len(values)} recomputed value(s) for {len(cl.stated)} stated")


def _show(cl: Claim, values: tuple[float, ...] | None) -> str:
    """Values in the claim's unit, four significant figures ("65.53 GB", "32.14 ms")."""
    if values is None:
        return "–"
    unit = "" if cl.unit in ("×", "%") else f" {cl.unit}"
    if cl.unit == "sequences" and values == (1,):
        unit = " sequence"
    shown = [f"{x / cl.scale:,.4g}" for x in values]
    return " to ".join(shown) + unit if cl.unit != "%" else " to ".join(shown) + "%"


def judge(claim_id: str) -> Verdict:
    """The verdict on claim ``claim_id`` and the reason, in words, with the numbers."""
    cl = claim(claim_id)
    r = recompute(claim_id)
    note = f"; {r.note}" if r.note else ""
    if cl.bound == "<":
        if all(x < cl.stated_base() for x in r.right):
            return Verdict(cl, r, HOLDS, r.note)
        return Verdict(cl, r, FAILS, f"the book's model gives {_show(cl, r.right)}{note}")
    if _matches(cl, r.right):
        return Verdict(cl, r, HOLDS, r.note)
    stated = [assumptions()[key] for key in cl.assumptions]
    if cl.recompute == "usable_fraction" or cl.recompute == "kv_factor":
        stated = [a for a in assumptions().values() if a.claim == cl.id]
    route_ok = r.route is not None and _matches(cl, r.route, ROUTE_WITHIN if cl.approximate else ROUTE_PLAIN)
    route = f"{r.route_text} gives {_show(cl, r.route)}" if route_ok else ""
    if r.assumed is not None and stated and _matches(cl, r.assumed):
        against = [a for a in stated if not a.admissible]
        if not against:
            return Verdict(cl, r, ASSUMED, f"under the document's assumption: {stated[0].why}")
        if cl.recompute == "kv_factor":  # the assumption itself: say once why no deployment makes it
            return Verdict(cl, r, FAILS, f"no real deployment makes it: {against[0].why}")
        why = (f"{route + ', ' if route else ''}only with the document's {claim(against[0].claim).wording} "
               f"cache factor, which no deployment applies; the book's model gives {_show(cl, r.right)}")
        return Verdict(cl, r, FAILS, why)
    pairs = list(zip(cl.stated, r.right)) if len(cl.stated) == len(r.right) else []
    if route:
        why = route
    elif pairs:
        off = max(abs(float(x) * cl.scale - y) / y for x, y in pairs)
        coarse = all(abs(float(x) * cl.scale - y) < _last_place(x) * cl.scale for x, y in pairs)
        why = f"{off:.1%} off: {'coarser than written' if coarse else 'a different figure'}"
    else:
        why = "no route found to the document's number"
    if cl.unit in ("GB", "MB") and claim("bf16_weights").stated_base() == claim("params").stated_base() * 2 and (
            cl.recompute in ("capacity", "usable_memory", "left_for_cache")):
        why += (f", in the document's own GB, which its {claim('params').wording} × 2 = "
                f"{claim('bf16_weights').wording} makes decimal")
    if cl.recompute in ("bytes_per_step", "step_time") and claim("streamed").stated_base(-1) > _most_one_sequence_reads(
            Setting()):
        why = _unable(Setting()) + "; " + why
    return Verdict(cl, r, FAILS, why + note)


def _last_place(x: Decimal) -> float:
    """One unit in the last written place of a stated number (1 for "32", 0.01 for "1.34")."""
    return 10.0 ** x.as_tuple().exponent


def shown(v: Verdict, which: str = "right") -> str:
    """A verdict's recomputed values (``which``: "right", "assumed" or "route") in the claim's unit,
    four significant figures ("65.53 GB", "32.14 ms"), or "–" where there are none."""
    if which not in ("right", "assumed", "route"):
        raise ValueError(f"which must be right, assumed or route; got {which!r}")
    return _show(v.claim, getattr(v.recomputed, which))


def verdicts() -> list[Verdict]:
    """Verdicts on every claim, in the document's order."""
    return [judge(k) for k in claims()]


def verdict_counts() -> dict[str, int]:
    """How many claims got each kind of verdict (every kind listed, zeros included)."""
    counts = {k: 0 for k in KINDS}
    for v in verdicts():
        counts[v.kind] += 1
    return counts
