"""The worked example of chapter 8: every numeric claim of a post about Qwen2.5-32B in BF16 on one
A100 80GB SXM, recomputed from the model's config, the accelerator's data and the book's serving
rules, and judged strictly.

The claims are data (``data/worked_example_claims.toml``): the document's wording of each number,
the number(s) as written, their unit, which recomputation applies, and the assumptions the
document states that a claim rests on. A recomputation gives

* ``right``: the value the book's model gives (the capacity the card reports, the cache in the
  model's own precision, what fits in the usable share the claims are judged at), in base units
  (bytes, seconds, FLOP/s); for the claims on the usable share itself and the memory it leaves, the
  book's own share (they are judged under the document's, ``assumed``);
* ``assumed``: the value under the assumptions the document states for this claim (its 95% usable,
  its 2 to 2.5x cache factor), where it names any;
* ``route``: the arithmetic that reproduces the document's number, where it differs from both,
  with the slip it takes, in words;
* ``named``: the vendor's own printed figure, where the claim quotes one (the card's marketed
  "80 GB", the whitepaper's "40 MB" of L2).

One rule decides every verdict, ``gives``: a recomputed value gives the document's number when it
rounds to it at the precision the document writes, or lies within ``VERDICT_TOLERANCE`` (5%) of
it, whatever marker (~, "around") the document puts before it. A pair of ends ("66–86 GB") needs
each end given by the recomputed value at that end; a bound ("<0.3 ms") must hold at every context
that fits, so it needs every recomputed value at or below it, unrounded (a bound is a promise about
every value, and rounding would let a value over it pass); claims made together about one step are recomputed over the same
contexts. Every claim is judged on the document's own terms, at its own usable share (its 95%,
``Setting.judged_usable``): what fits beside the weights, the longest context a step can have and
the steps the closing claims cover are all counted with it; the book's own share (its 90%,
``Setting.usable``) enters no verdict. The value the rule is applied to is the right one, except
that a claim resting only on assumptions a deployment can make (the document's 95% usable, stated;
the 70% of the bandwidth its step times imply) is judged under them. There are three verdicts. A claim *holds* when that value gives
it, or when it quotes the vendor's own figure as the vendor prints it: a marketed name used as a
name holds, and where the document computes with it, the computation is judged as its own claim.
It *holds under its assumption* when the value under its admissible assumptions gives it. Otherwise
it *does not hold*: that covers a claim whose only support is an assumption no deployment makes,
and a range whose end cannot happen on the card (a step that reads more than memory can hold).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from functools import cached_property

from inferlimits.data import datafiles
from inferlimits.arithmetic.activations import activation_bytes_per_token
from inferlimits.checks import UNITS
from inferlimits.arithmetic.generation import decode_point
from inferlimits.data.hardware import Accelerator, accelerator
from inferlimits.arithmetic.kvcache import (kv_cache_bytes, max_context_tokens, max_sequences,
                                            memory_left_for_cache_bytes, usable_memory_fraction)
from inferlimits.data.models import Config, embedding_params, kv_bytes_per_token, model, param_count, weight_bytes
from inferlimits.arithmetic.roofline import balance_point_flop_per_byte
from inferlimits.data.units import GB, GIB, KIB, MB, MIB, bytes_per_element, non_negative, positive

#: The verdict rule's one tolerance (``gives``): a recomputed value within this share of itself
#: gives the document's number, for every claim alike. Chosen so that rounding a figure to two
#: significant digits ("32B" for 32.76 billion) or a typo in the last digit ("2035" for 2,039)
#: passes, and a unit crossed (GiB read as GB, 7%) does not.
VERDICT_TOLERANCE = 0.05

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
    brief: str = ""


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
    read_as: str = ""
    slip: str = ""

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
    return {key: Assumption(key, row["claim"], bool(row["admissible"]), row["why"], row.get("brief", ""))
            for key, row in _data()["assumptions"].items()}


@datafiles.cached
def slips() -> dict[str, str]:
    """The slips the document's failures come from, keyed by id, with what each is."""
    return {key: row["what"] for key, row in _data()["slips"].items()}


def _numerals(text: str) -> list[str]:
    return [n.replace(",", "") for n in re.findall(r"\d[\d,]*(?:\.\d+)?", text)]


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
        read_as = row.get("read_as", "")
        if read_as and _numerals(row["wording"]):
            raise ValueError(f"claim {key}: read_as is only for a wording with no numeral; "
                             f"{row['wording']!r} has one")
        written = _numerals(row["wording"]) or _numerals(read_as) or ["0"]
        if written != row["stated"]:
            raise ValueError(f"claim {key}: stated {row['stated']} must be the numbers its wording "
                             f"{row['wording']!r} shows, or its read_as {read_as!r} ({written}; none means 0)")
        if row.get("slip", "") and row["slip"] not in slips():
            raise ValueError(f"claim {key}: slip must be one of {', '.join(slips())}; got {row['slip']!r}")
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
                         route_bandwidth_share=row.get("route_bandwidth_share"), assumptions=rests_on,
                         read_as=read_as, slip=row.get("slip", ""))
    return out


def claim(claim_id: str) -> Claim:
    """The claim called ``claim_id``, or a ValueError listing the ids."""
    return datafiles.lookup(claims(), "claim_id", claim_id)


def example_model() -> Config:
    """The config of the model the document runs (Qwen2.5-32B)."""
    return model(_data()["model"]).config


def example_model_name() -> str:
    """The name of the model the document runs ("Qwen2.5-32B")."""
    return _data()["model"]


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
    assumptions, the route to the document's number where it differs from both, and the vendor's
    own figure where the claim quotes one."""

    right: tuple[float, ...]
    assumed: tuple[float, ...] | None = None
    route: tuple[float, ...] | None = None
    route_text: str = ""
    note: str = ""
    named: tuple[float, ...] | None = None
    named_text: str = ""
    named_as: str = ""      # what the vendor's figure is, in two or three words ("the card's name")
    holds_brief: str = ""   # what the value is, in one short clause, where the claim holds
    fails_brief: str = ""   # the slip behind the plan's number, in one short clause, where it fails


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
    def judged_usable(self) -> float:
        """The usable share every claim is judged at: the document's own 95%, its budget. What fits
        beside the weights (sequences, the longest context, the steps the closing claims cover) is
        counted in it; the book's own share (``usable``) enters no verdict."""
        return self.doc_usable

    @cached_property
    def judged_left(self) -> float:
        """Bytes left for caches in the share the claims are judged at: capacity x 95% - weights."""
        return memory_left_for_cache_bytes(self.a.capacity_bytes, self.w, self.judged_usable)

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
    """The capacity the card reports; the marketed figure is the product's name."""
    a = s.a
    return Recomputed((a.capacity_bytes,), named=(a.capacity_marketed_gb * GB,),
                      named_text=f"NVIDIA's name for the card, “{a.capacity_marketed_gb:g}GB”",
                      named_as=f"named “{a.capacity_marketed_gb:g}GB”",
                      note=(f"the card reports {a.reported_capacity_mib:,.0f} MiB = {a.capacity_bytes / GIB:g} GiB, "
                            f"{_gb(a.capacity_bytes)}; the plan's arithmetic with it is judged in its own rows"))


def _free_memory(cl: Claim, s: Setting) -> Recomputed:
    free = memory_left_for_cache_bytes(s.a.capacity_bytes, s.w, 1.0)
    cap, wts = claim("gpu_memory"), claim("bf16_weights")
    return Recomputed((free,), route=(cap.stated_base() - wts.stated_base(),),
                      route_text=f"{cap.wording} − {wts.wording}, GiB read as GB and the count rounded,",
                      fails_brief=f"{cap.wording} − {wts.wording}: a GiB read as a GB",
                      note=f"{_gb(s.a.capacity_bytes)} − {_gb(s.w)} = {_gb(free)} ({free / GIB:.1f} GiB)")


def _peak_math(cl: Claim, s: Setting) -> Recomputed:
    return Recomputed((s.a.dense_bf16_flops_per_s,),
                      note=(f"dense BF16; the {s.a.sparse_bf16_flops_per_s / 1e12:g} TFLOP/s on the datasheet "
                            "is with sparsity"))


def _bandwidth(cl: Claim, s: Setting) -> Recomputed:
    bw = s.a.bandwidth_bytes_per_s
    return Recomputed((bw,), holds_brief="the datasheet's figure" if cl.id == "bandwidth" else "",
                      note="" if cl.id == "bandwidth" else
                      f"a typo for the datasheet's {bw / GB:,.0f} GB/s, which the plan itself writes earlier")


def _balance_point(cl: Claim, s: Setting) -> Recomputed:
    p, bw = s.a.dense_bf16_flops_per_s, s.a.bandwidth_bytes_per_s
    return Recomputed((balance_point_flop_per_byte(p, bw),),
                      note=f"math over bandwidth; the other way round it is {bw / p:.5f} byte per FLOP")


def _l2_cache(cl: Claim, s: Setting) -> Recomputed:
    """The L2 CUDA reports; NVIDIA's whitepaper prints its size in MiB and calls them MB."""
    l2 = s.a.last_level_cache_bytes
    printed = float(s.a.last_level_cache_marketed.split()[0])
    return Recomputed((l2,), named=(printed * cl.scale,),
                      named_text=f"NVIDIA's own figure, the {printed:g} MB of its A100 whitepaper",
                      named_as=f"NVIDIA's “{printed:g} MB”",
                      note=(f"CUDA reports {l2:,.0f} bytes, {l2 / MIB:g} MiB = {l2 / MB:.1f} MB; the weights "
                            f"a token reads are {s.point().weight_bytes / l2:,.0f} times larger"))


def _decode_rate(cl: Claim, s: Setting) -> Recomputed:
    p = s.point()
    return Recomputed((p.ceiling,), note=(f"{s.a.bandwidth_bytes_per_s / GB:,.0f} GB/s over the {_gb(p.bytes, 2)} "
                                          "a token moves (every weight but the embedding table, and activations)"))


def _token_latency(cl: Claim, s: Setting) -> Recomputed:
    head, bw_doc = output_head_bytes(s.c), claim("latency_bandwidth")
    return Recomputed((1 / s.point().ceiling,), route=(head / bw_doc.stated_base(),),
                      route_text=(f"one {s.c.vocab_size:,} × {s.c.hidden_size:,} BF16 matrix ({_gb(head, 2)}) "
                                  f"over {bw_doc.wording}"),
                      note=f"a token reads {_gb(s.point().weight_bytes)} of weights",
                      fails_brief=f"one {_gb(head, 2)} matrix over the bandwidth")


def _bytes_per_token(cl: Claim, s: Setting) -> Recomputed:
    head = output_head_bytes(s.c)
    return Recomputed((s.point().bytes,), route=(head,),
                      route_text=f"one vocabulary-sized matrix, {s.c.vocab_size:,} × {s.c.hidden_size:,} × 2 bytes,",
                      note="a token reads every weight but the embedding table",
                      fails_brief="the size of one vocabulary-sized matrix")


def _kv_per_token(cl: Claim, s: Setting) -> Recomputed:
    c = s.c
    product = f"2 × {c.num_hidden_layers} × {c.num_key_value_heads} × {c.head_dim_qk} × 2 bytes"
    return Recomputed((s.k,), note=f"{product} = {s.k / KIB:g} KiB", holds_brief=product)


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
                      fails_brief=f"{s.doc_usable:.0%} of {cap / GIB:g} GiB, read as GB",
                      note=f"its own {s.doc_usable:.0%} of {_gb(cap)} is {_gb(s.doc_usable * cap)} "
                           f"({s.doc_usable * cap / GIB:.0f} GiB); the book's {s.usable:.0%} gives {_gb(s.usable * cap)}")


def _left_for_cache(cl: Claim, s: Setting) -> Recomputed:
    usable, wts = claim("usable"), claim("plan_weights")
    return Recomputed((s.left,), assumed=(s.doc_left,), route=(usable.stated_base() - wts.stated_base(),),
                      route_text=f"{usable.stated[0]} GiB minus {wts.stated[0]} GB, as if one unit,",
                      fails_brief=f"{usable.stated[0]} GiB minus {wts.stated[0]} GB, as if one unit",
                      note=(f"its own {s.doc_usable:.0%} leaves {_gb(s.doc_left)} ({s.doc_left / GIB:.1f} GiB); "
                            f"the book's {s.usable:.0%} leaves {_gb(s.left)} = {s.left / GIB:.1f} GiB"))


def _sequences(cl: Claim, s: Setting) -> Recomputed:
    L, cap = cl.context_tokens, s.a.capacity_bytes
    plain = max_sequences(cap, s.w, s.k, L, s.judged_usable)
    assumed = max_sequences(cap, s.w, s.factor * s.k, L, s.judged_usable)
    remaining = claim("remaining")
    per_sequence = next(x for x in claims().values() if x.recompute == "kv_sequence" and x.context_tokens == L)
    doc = math.floor(remaining.stated_base() / per_sequence.stated_base())
    return Recomputed((plain,), assumed=(assumed,),
                      route=(doc,), route_text=f"{remaining.wording} left over {per_sequence.wording} each",
                      fails_brief=f"both slips: {remaining.wording} (units), caches {s.factor:g}× too large (factor)")


def _most_one_sequence_reads(s: Setting) -> float:
    """The most one sequence's decode step can read on the card, the case the document describes
    ("decoding each token streams"): the weights it reads, the longest cache that fits beside
    the stored weights in the usable memory (the share the claims are judged at), and its activations. (The weights a step reads leave
    out the embedding table, which is held but not read.)"""
    c = s.c
    return (s.judged_usable * s.a.capacity_bytes - embedding_params(c) * bytes_per_element("BF16")
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
            f"{s.factor:g} times too large, a case the plan itself calls “{claim('seq_32k').wording}”, and more than "
            f"one sequence's step can read on this card")


def _unable_brief() -> str:
    """Why the upper end of the plan's step cannot happen, in one clause: the factor's cache."""
    return (f"its top end adds a {claim('seq_32k').context_tokens:,}-token cache "
            f"{claim('kv_factor').stated[-1]}× too large")


def _bytes_per_step(cl: Claim, s: Setting) -> Recomputed:
    most = _most_one_sequence_reads(s)
    return Recomputed((s.point().bytes, most), route=_documents_step_bytes(),
                      route_text=(f"{claim('plan_weights').wording} of weights plus its own caches of "
                                  f"{min(x.context_tokens for x in claims().values() if x.recompute == 'kv_sequence'):,}"
                                  f" and {claim('seq_32k').context_tokens:,} tokens"),
                      note=(f"from the weights a token reads to the most one sequence's step can read with "
                            f"{s.judged_usable:.0%} usable, {_gb(most)}"))


def _step_time(cl: Claim, s: Setting) -> Recomputed:
    """The least time of the step's bytes at the datasheet bandwidth ("right"), and the same bytes
    at the share of it the document's own bytes and times imply ("assumed", which judges the
    claim: a share real kernels reach)."""
    bw = s.a.bandwidth_bytes_per_s
    share = cl.route_bandwidth_share
    streamed = claim("streamed")
    implied = [implied_bandwidth_bytes_per_s(streamed.stated_base(i), cl.stated_base(i)) for i in range(2)]
    moved = (s.point().bytes, _most_one_sequence_reads(s))
    least = tuple(m / bw for m in moved)
    at_share = tuple(m / (share * bw) for m in moved)
    ends = "; ".join(f"{x * 1e3:.1f} ms {'gives' if _close(x, st, cl.scale) else 'misses'} {st}"
                     for x, st in zip(at_share, cl.stated))
    return Recomputed(least, assumed=at_share,
                      route=tuple(b / (share * bw) for b in _documents_step_bytes()),
                      route_text=f"those bytes at {share:.0%} of the bandwidth, a share real kernels can reach",
                      note=(f"judged at {share:.0%} of the bandwidth, the share the stated pairs imply "
                            f"({implied[0] / 1e12:.2f} and {implied[1] / 1e12:.2f} TB/s): {ends}; at the full "
                            f"{bw / GB:,.0f} GB/s a step takes at least {least[0] * 1e3:.1f} to "
                            f"{least[1] * 1e3:.1f} ms"))


def served_contexts() -> list[int]:
    """The contexts the document's own plan serves: those it counts one sequence or more at."""
    return sorted(x.context_tokens for x in claims().values() if x.recompute == "sequences" and x.stated[0] > 0)


def longest_context(s: Setting) -> int:
    """The longest context one sequence can keep on the card: its cache fills the memory the usable
    share the claims are judged at (the document's 95%) leaves beside the stored weights,
    floor((u x C - W) / K) tokens. The document's
    step claims ("66–86 GB", "46–61 ms", "<0.3 ms", one sentence) are judged from no context to this."""
    return max_context_tokens(s.a.capacity_bytes, s.w, s.k, 1, s.judged_usable)


def _compute_time(cl: Claim, s: Setting) -> Recomputed:
    """The math of one token over the range the document's step bytes and times are judged over,
    from no context to the longest context one sequence can keep; the note says where the math
    crosses the bound, and that this lies inside the document's own range (up to its 32,768-token
    case), so the bound fails there too."""
    p = s.a.dense_bf16_flops_per_s
    longest = longest_context(s)
    times = tuple(s.point(context_tokens=L).flops_per_token / p for L in (0, longest))
    crossing = context_tokens_at_compute_time(s.c, p, cl.stated_base())
    top = claim("seq_32k").context_tokens
    at_top = s.point(context_tokens=top).flops_per_token / p
    inside = "inside" if crossing <= top else "beyond"
    return Recomputed(times, note=(f"the range the step's bytes and time are judged over, from no context to "
                                   f"{longest:,} tokens, the longest one sequence can keep; the math crosses "
                                   f"{cl.stated_base() * 1e3:g} ms at {crossing:,.0f} tokens, {inside} the plan's own "
                                   f"range, which reaches {top:,} tokens ({at_top * 1e3:.3f} ms there), and takes "
                                   f"{times[-1] * 1e3:.3f} ms at {longest:,}"),
                      fails_brief=f"over {cl.stated[0]} ms from {crossing:,.0f} tokens, {inside} the plan's range")


def _weights_read_share(cl: Claim, s: Setting) -> Recomputed:
    """The share of the stored weights a decode step reads: all but the embedding table."""
    read = s.point().weight_bytes
    return Recomputed((read / s.w,), note=(f"a token reads every weight but the embedding table, {_gb(read)} of the "
                                           f"{_gb(s.w)} stored, and none of it stays on chip"))


def plan_steps(s: Setting) -> list:
    """Decode steps of the plans the document discusses: one sequence with no context, and at each
    context it names that fits, one sequence and as many as fit (the share the claims are judged at)."""
    steps = [s.point()]
    for L in sorted(x.context_tokens for x in claims().values() if x.recompute == "kv_sequence"):
        most = max_sequences(s.a.capacity_bytes, s.w, s.k, L, s.judged_usable)
        steps += [s.point(b, L) for b in sorted({1, most}) if most >= 1]
    return steps


def _memory_share_of_time(cl: Claim, s: Setting) -> Recomputed:
    """The least share of a decode step's least time that its memory traffic (bandwidth over bytes)
    sets, max(T_mem, T_math) = T_mem where memory-bound, over the document's plans."""
    p, bw = s.a.dense_bf16_flops_per_s, s.a.bandwidth_bytes_per_s
    steps = plan_steps(s)
    shares = [(x.bytes / bw) / max(x.bytes / bw, x.flops / p) for x in steps]
    ratio = min((x.bytes / bw) / (x.flops / p) for x in steps)
    weights = min(x.weight_bytes / x.bytes for x in steps)
    most = max(x.batch for x in steps)
    return Recomputed((min(shares),), holds_brief=f"memory takes {ratio:.1f} times the math's time or more",
                      note=(f"memory takes at least {ratio:.1f} times as long as the math, from one "
                                            f"sequence to {most:.0f}, at every context named that fits; the weights are "
                                            f"{weights:.0%} or more of those bytes, so the parameter count still sets "
                                            f"most of the time"))


RECOMPUTATIONS = {
    "parameters": _parameters, "weight_bytes": _weight_bytes, "capacity": _capacity,
    "free_memory": _free_memory, "peak_math": _peak_math, "bandwidth": _bandwidth,
    "balance_point": _balance_point, "l2_cache": _l2_cache, "decode_rate": _decode_rate,
    "token_latency": _token_latency, "bytes_per_token": _bytes_per_token, "kv_per_token": _kv_per_token,
    "kv_sequence": _kv_sequence, "kv_factor": _kv_factor, "usable_fraction": _usable_fraction,
    "usable_memory": _usable_memory, "left_for_cache": _left_for_cache, "sequences": _sequences,
    "bytes_per_step": _bytes_per_step, "step_time": _step_time, "compute_time": _compute_time,
    "weights_read_share": _weights_read_share, "memory_share_of_time": _memory_share_of_time,
}


def recompute(claim_id: str) -> Recomputed:
    """The recomputation of claim ``claim_id`` for the document's model and accelerator."""
    cl = claim(claim_id)
    return RECOMPUTATIONS[cl.recompute](cl, Setting())


# ---- verdicts -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Verdict:
    """A claim's verdict: its kind, which recomputed value the rule judged ("right", "assumed" or
    "named"), and the reason in words."""

    claim: Claim
    recomputed: Recomputed
    kind: str
    why: str
    judged: str = "right"
    brief: str = ""   # the reason in one short clause, as the chapter's table shows it


def _rounds(x: float, s: Decimal, scale: float) -> bool:
    """Whether x (base units) rounds to s at the decimals s is written to."""
    step = Decimal(1).scaleb(s.as_tuple().exponent)
    return Decimal(repr(x / scale)).quantize(step, rounding=ROUND_HALF_UP) == s


def _close(x: float, s: Decimal, scale: float) -> bool:
    """One value against one stated number: x (base units) rounds to s at the decimals s is written
    to, or |s - x| <= VERDICT_TOLERANCE x |x|."""
    v = x / scale
    return _rounds(x, s, scale) or abs(float(s) - v) <= VERDICT_TOLERANCE * abs(v)


def _recomputed(values: object, least=non_negative) -> tuple[float, ...]:
    """``values`` as recomputed values: a non-empty tuple of finite numbers, zero or more (above
    zero where ``least`` is ``positive``); one number stands for a tuple of one."""
    if isinstance(values, (int, float)) and not isinstance(values, bool):
        values = (values,)
    if not isinstance(values, tuple) or not values:
        raise ValueError(f"values must be a non-empty tuple of recomputed values; got {values!r}")
    return tuple(least("values", v) for v in values)


def gives(cl: Claim, values: tuple[float, ...]) -> bool:
    """The verdict rule: whether recomputed ``values`` (base units) give the claim's number(s).

    One value x gives a stated number s when x rounds to s at the decimals s is written to, or
    when |s - x| <= VERDICT_TOLERANCE x |x| (within 5% of the recomputed value). A pair of values
    gives a pair of ends ("66–86") when each gives its end; one value gives a range ("0.7–0.8")
    when it lies inside it or gives one of its ends; values give an upper bound ("<0.3") when each
    lies at or below it, unrounded and with no tolerance: a bound must hold at every value. The
    document's markers (~, "around") change nothing."""
    values = _recomputed(values)
    stated = cl.stated
    if cl.bound == "<":
        return all(x <= cl.stated_base() for x in values)
    if len(values) == len(stated):
        return all(_close(x, s, cl.scale) for x, s in zip(values, stated))
    if len(values) == 1 and len(stated) == 2:
        x = values[0]
        return cl.stated_base(0) <= x <= cl.stated_base(1) or any(_close(x, s, cl.scale) for s in stated)
    raise ValueError(f"claim {cl.id}: {len(values)} recomputed value(s) for {len(cl.stated)} stated")


def off(cl: Claim, values: tuple[float, ...]) -> float:
    """How far the stated number(s) lie from ``values``, as a share of the value: |s - x| / |x|,
    the larger for a pair of ends; 0 inside a stated range or under a bound. A share of nothing
    has no meaning, so every value must be above zero."""
    values = _recomputed(values, positive)
    def one(x: float, s: float) -> float:
        return abs(s - x) / abs(x)

    if cl.bound == "<":
        return max([0.0] + [one(x, cl.stated_base()) for x in values if x > cl.stated_base()])
    if len(values) == len(cl.stated):
        return max(one(x, cl.stated_base(i)) for i, x in enumerate(values))
    x, lo, hi = values[0], cl.stated_base(0), cl.stated_base(1)
    return 0.0 if lo <= x <= hi else min(one(x, lo), one(x, hi))


def rests_on(cl: Claim) -> list[Assumption]:
    """The document's assumptions a claim rests on: those it names, or the one it states itself."""
    return [assumptions()[key] for key in cl.assumptions] or [a for a in assumptions().values() if a.claim == cl.id]


def judged_by(cl: Claim, r: Recomputed) -> str:
    """Which recomputed value the rule judges a claim by: the value under the document's
    assumptions ("assumed") where the claim rests only on ones a deployment can make, else the
    book's value ("right")."""
    stated = rests_on(cl)
    return "assumed" if stated and r.assumed is not None and all(a.admissible for a in stated) else "right"


def _show(cl: Claim, values: tuple[float, ...] | None, fmt=lambda x: f"{x:,.4g}") -> str:
    """Values in the claim's unit, four significant figures ("65.53 GB", "32.14 ms"), or as ``fmt``
    writes a number."""
    if values is None:
        return "–"
    unit = "" if cl.unit in ("×", "%") else f" {cl.unit}"
    if cl.unit == "sequences" and values == (1,):
        unit = " sequence"
    shown = [fmt(x / cl.scale) for x in values]
    return " to ".join(shown) + unit if cl.unit != "%" else " to ".join(shown) + "%"


def _rounds_all(cl: Claim, values: tuple[float, ...]) -> bool:
    """Whether ``values`` give the claim's number(s) by rounding alone (no tolerance needed)."""
    return len(values) == len(cl.stated) and all(_rounds(x, s, cl.scale) for x, s in zip(values, cl.stated))


def _within(cl: Claim, values: tuple[float, ...]) -> str:
    """How a passing value passes, in words: "" where it rounds to the number, lies in the stated
    range or under the bound; else how far off it is."""
    miss = off(cl, values)
    return "" if miss == 0 or _rounds_all(cl, values) else f"{miss:.1%} off, within the rule's {VERDICT_TOLERANCE:.0%}"


def judge(claim_id: str) -> Verdict:
    """The verdict on claim ``claim_id`` and the reason, in words, with the numbers. Every verdict
    follows from ``gives``, applied to the value ``judged_by`` names, or to the vendor's own
    figure where the claim quotes one."""
    cl = claim(claim_id)
    r = recompute(claim_id)
    read = f"read as {cl.read_as}" if cl.read_as else ""
    note = f"; {r.note}" if r.note else ""
    which = judged_by(cl, r)
    values = getattr(r, which)
    route_ok = r.route is not None and gives(cl, r.route)
    route = f"{r.route_text} gives {_show(cl, r.route)}" if route_ok else ""
    stated = rests_on(cl)
    if r.named is not None and gives(cl, r.named):   # a marketed name, used as a name
        return Verdict(cl, r, HOLDS, f"{r.named_text}{note}", "named", r.named_text)
    if gives(cl, values):
        if which == "assumed":
            return Verdict(cl, r, ASSUMED, f"under the plan's assumption: {stated[0].why}", which,
                           stated[0].brief or stated[0].why)
        exact_route = r.route is not None and _rounds_all(cl, r.route)
        parts = [p for p in (read, _within(cl, values),
                             f"{r.route_text} gives {_show(cl, r.route)}" if exact_route else "") if p]
        brief = _within(cl, values).replace("the rule's ", "") or r.holds_brief or r.note.split("; ")[0]
        return Verdict(cl, r, HOLDS, "; ".join(parts) + (note if parts else r.note), which, brief)
    if r.assumed is not None and stated and gives(cl, r.assumed):
        against = [a for a in stated if not a.admissible]
        if against[0].claim == cl.id:  # the assumption itself: say once why no deployment makes it
            return Verdict(cl, r, FAILS, f"no real deployment makes it: {against[0].why}", which,
                           f"no deployment makes it: {against[0].brief or against[0].why}")
        factor = claim(against[0].claim).wording
        why = (f"{route + ', ' if route else ''}only with the plan's {factor} "
               f"cache factor, which no deployment applies; the book's model gives {_show(cl, r.right)}")
        return Verdict(cl, r, FAILS, why, which, f"only with the plan's {factor} cache factor")
    why = route or f"{off(cl, values):.1%} off"
    brief = r.fails_brief or why
    if cl.unit in ("GB", "MB") and claim("bf16_weights").stated_base() == claim("params").stated_base() * 2 and (
            cl.recompute in ("capacity", "usable_memory", "left_for_cache")):
        why += (f", in the plan's own GB, which its {claim('params').wording} × 2 = "
                f"{claim('bf16_weights').wording} makes decimal")
    if cl.recompute in ("bytes_per_step", "step_time") and claim("streamed").stated_base(-1) > _most_one_sequence_reads(
            Setting()):
        why = _unable(Setting()) + "; " + why
        brief = _unable_brief()
    return Verdict(cl, r, FAILS, why + note, which, brief)


def _figures(x: float, n: int = 3) -> str:
    """``x`` to ``n`` significant figures in fixed notation, with thousands separators, as the
    chapter's text writes its numbers ("65.5", "0.537", "2,039"); a whole number stays whole ("29", "1")."""
    if x == 0:
        return "0"
    if abs(x) >= 1 and math.isclose(x, round(x), abs_tol=1e-9):
        return f"{round(x):,}"
    return f"{x:,.{max(0, n - 1 - math.floor(math.log10(abs(x))))}f}"


def shown(v: Verdict, which: str | None = None) -> str:
    """A verdict's recomputed values (``which``: "right", "assumed", "route" or "named"; by default
    the value the rule judged) in the claim's unit, to three significant figures as the chapter's
    text rounds them ("65.5 GB", "0.537 GB", "2,039 GB/s"; a parameter count in billions to four,
    "32.76 billion"), or "–" where there are none. (The reasons, ``Verdict.why``, keep four.)"""
    which = v.judged if which is None else which
    if which not in ("right", "assumed", "route", "named"):
        raise ValueError(f"which must be right, assumed, route or named; got {which!r}")
    n = 4 if v.claim.unit == "billion" else 3
    return _show(v.claim, getattr(v.recomputed, which), lambda x: _figures(x, n))


#: The recomputations that count what fits beside the weights in the usable memory: the sequences
#: that fit, and the step claims, judged up to the longest context one sequence can keep.
FITS_IN_THE_USABLE_MEMORY = ("sequences", "bytes_per_step", "step_time", "compute_time", "memory_share_of_time")


def usable_share(v: Verdict) -> float | None:
    """The share of the card's memory held usable that a verdict's judged value rests on: the one
    share every claim is judged at, the document's own 95% (``Setting.judged_usable``), where the
    claim is judged under its stated usable_share assumption or the recomputation counts what fits
    beside the weights (``FITS_IN_THE_USABLE_MEMORY``); None where no usable share enters (the
    capacity, the free memory, the weights, the cache of one sequence). The book's own share never
    judges a claim."""
    s = Setting()
    on_its_budget = v.judged == "assumed" and any(a.id == "usable_share" for a in rests_on(v.claim))
    if on_its_budget or (v.judged != "named" and v.claim.recompute in FITS_IN_THE_USABLE_MEMORY):
        return s.judged_usable
    return None


def verdicts() -> list[Verdict]:
    """Verdicts on every claim, in the document's order."""
    return [judge(k) for k in claims()]


def verdict_counts() -> dict[str, int]:
    """How many claims got each kind of verdict (every kind listed, zeros included)."""
    counts = {k: 0 for k in KINDS}
    for v in verdicts():
        counts[v.kind] += 1
    return counts


def slip_counts() -> dict[str, int]:
    """How many claims each slip accounts for (the ``slip`` of the claims file), every slip listed."""
    counts = {k: 0 for k in slips()}
    for cl in claims().values():
        if cl.slip:
            counts[cl.slip] += 1
    return counts
