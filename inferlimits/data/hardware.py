"""Accelerators, read from ``data/accelerators.toml``, and the other processors that published
measurements ran on (CPUs, Apple's systems on a chip), from ``data/processors.toml``.

Every figure keeps its unit in its name: FLOP/s, bytes per second, bytes.
"""
from __future__ import annotations

from dataclasses import dataclass

from inferlimits.data import datafiles
from inferlimits.data.units import GB, MB, MIB, TERA

_CACHE_UNITS = {"MB": MB, "MiB": MIB}

#: The precisions a part's tensor cores may multiply in, widest first. BF16 stands for the 16-bit
#: rate (BF16 and FP16 run at the same rate on every part here); INT8 counts operations, not
#: floating-point ones, at two per multiply-add as the others.
MATH_PRECISIONS = ("BF16", "FP8", "INT8", "FP6", "FP4")
#: Bits per operand of each math precision: a weight product can run at a precision only if its
#: weights are stored in at most that many bits (``precision.product_math``).
MATH_BITS = {"BF16": 16, "FP8": 8, "INT8": 8, "FP6": 6, "FP4": 4}


@dataclass(frozen=True)
class MathRate:
    """One precision's tensor-core rate: dense and sparse in FLOP/s (None where the part has no
    such mode, or the vendor prints no sparse figure), and where it is stated (or why there is
    none)."""

    precision: str
    dense_flops_per_s: float | None
    sparse_flops_per_s: float | None
    source: str

    @property
    def supported(self) -> bool:
        return self.dense_flops_per_s is not None


@dataclass(frozen=True)
class Link:
    """How a part reaches the other GPUs of its server: ``kind`` (NVLink, Infinity Fabric, PCIe),
    what one GPU sends into the fabric one way in bytes/s, the vendor's printed figure, where it is
    read, and the conditions it holds under (``note``)."""

    kind: str
    bytes_per_s: float
    printed: str
    source: str
    note: str | None = None
    #: one direct link to one other GPU (AMD's fully connected platforms), bytes/s one way
    peer_bytes_per_s: float | None = None

    def bytes_per_s_among(self, gpus: int) -> float:
        """What one GPU can send one way while ``gpus`` GPUs work together: the whole link
        through a switch (NVLink, PCIe); over direct links, one per other GPU, the ``gpus - 1``
        links it uses (at most the whole)."""
        if self.peer_bytes_per_s is None:
            return self.bytes_per_s
        return min(self.bytes_per_s, max(gpus - 1, 1) * self.peer_bytes_per_s)


@dataclass(frozen=True)
class Accelerator:
    """One accelerator's datasheet figures, and the memory it reports, in base units."""

    name: str
    vendor: str
    year: int
    dense_bf16_flops_per_s: float
    sparse_bf16_flops_per_s: float | None
    bandwidth_bytes_per_s: float
    capacity_marketed_gb: float
    reported_capacity_mib: float | None
    capacity_source: str
    datacenter: bool
    source: str
    notes: str
    measured_matmul_flops_per_s: float | None = None
    measured_source: str | None = None
    driver_reserved_mib: float | None = None
    later_bandwidth_bytes_per_s: float | None = None
    uncited_reported_mib: float | None = None
    #: the narrower precisions' rates (``MATH_PRECISIONS`` after BF16), one entry each
    narrow_math: tuple[MathRate, ...] = ()
    dense_fp16_accumulate_flops_per_s: float | None = None
    last_level_cache_bytes: float | None = None
    last_level_cache_marketed: str | None = None
    last_level_cache_name: str | None = None
    last_level_cache_source: str | None = None
    link: Link | None = None
    #: for a processor (``processors.toml``): what it is, and which precision its math rate is
    kind: str = "accelerator"
    peak_precision: str | None = None

    @property
    def capacity_reported(self) -> bool:
        """Whether the capacity is what the device reports (else the cautious reading of the
        marketed figure as decimal GB)."""
        return self.reported_capacity_mib is not None

    @property
    def capacity_bytes(self) -> float:
        """Memory capacity in bytes: the total the device reports (MiB x 2^20), or, where no report
        could be found, the marketed figure read as decimal GB."""
        if self.reported_capacity_mib is not None:
            return self.reported_capacity_mib * MIB
        return self.capacity_marketed_gb * GB

    def math_rate(self, precision: str) -> MathRate:
        """The rate entry for ``precision`` (one of ``MATH_PRECISIONS``), supported or not."""
        if precision == "BF16":
            return MathRate("BF16", self.dense_bf16_flops_per_s, self.sparse_bf16_flops_per_s, self.source)
        for r in self.narrow_math:
            if r.precision == precision:
                return r
        if precision in MATH_PRECISIONS:
            return MathRate(precision, None, None, f"the data give no {precision} rate for the {self.name}")
        raise ValueError(f"math_precision must be one of {', '.join(MATH_PRECISIONS)}; got {precision!r}")

    def supports(self, precision: str) -> bool:
        """Whether the part's tensor cores multiply in ``precision``."""
        return self.math_rate(precision).supported

    def math_flops_per_s(self, precision: str = "BF16") -> float:
        """The dense tensor-core rate at ``precision`` in FLOP/s (operations/s for INT8); a
        ValueError naming the precision and the part where it has no such mode."""
        r = self.math_rate(precision)
        if not r.supported:
            raise ValueError(f"math_precision {precision}: the {self.name} has no {precision} tensor-core mode ({r.source})")
        return r.dense_flops_per_s

    @property
    def fp8_math(self) -> bool:
        """Whether the part multiplies FP8 numbers."""
        return self.supports("FP8")

    @property
    def dense_bf16_tflops(self) -> float:
        return self.dense_bf16_flops_per_s / TERA

    @property
    def bandwidth_tb_s(self) -> float:
        return self.bandwidth_bytes_per_s / TERA


def _narrow_math(name: str, table: dict) -> tuple[MathRate, ...]:
    """The rows of ``[accelerators.NAME.math]``: every precision after BF16, each a rate with its
    source or ``none`` with the reason."""
    missing = [p for p in MATH_PRECISIONS[1:] if p not in table]
    unknown = [p for p in table if p not in MATH_PRECISIONS[1:]]
    if missing or unknown:
        raise ValueError(f"{name}: the math table must state {', '.join(MATH_PRECISIONS[1:])} (a rate or none); "
                         f"missing {missing}, unknown {unknown}")
    out = []
    for p in MATH_PRECISIONS[1:]:
        r = table[p]
        if "none" in r:
            out.append(MathRate(p, None, None, r["none"]))
        else:
            out.append(MathRate(p, float(r["dense_tflops"]) * TERA,
                                float(r["sparse_tflops"]) * TERA if "sparse_tflops" in r else None, r["source"]))
    return tuple(out)


def _from_row(name: str, row: dict) -> Accelerator:
    reported = row.get("reported_capacity_mib")
    source = row.get("reported_capacity_source") if reported else row.get("capacity_note")
    if not source:
        raise ValueError(f"{name}: give reported_capacity_mib with reported_capacity_source, or a capacity_note "
                         "saying why no reported figure is used")
    unit = row.get("last_level_cache_unit")
    cached = "last_level_cache" in row
    if cached and unit not in _CACHE_UNITS:
        raise ValueError(f"{name}: last_level_cache_unit must be MB or MiB; got {unit!r}")
    return Accelerator(
        name=name,
        vendor=row["vendor"],
        year=int(row["year"]),
        dense_bf16_flops_per_s=float(row["dense_bf16_tflops"]) * TERA,
        sparse_bf16_flops_per_s=float(row["sparse_bf16_tflops"]) * TERA,
        bandwidth_bytes_per_s=float(row["bandwidth_gb_s"]) * GB,
        capacity_marketed_gb=float(row["capacity_marketed_gb"]),
        reported_capacity_mib=float(reported) if reported else None,
        capacity_source=source,
        datacenter=bool(row["datacenter"]),
        source=row["source"],
        notes=row["notes"],
        measured_matmul_flops_per_s=(float(row["measured_matmul_tflops"]) * TERA
                                     if "measured_matmul_tflops" in row else None),
        measured_source=row.get("measured_source"),
        driver_reserved_mib=float(row["driver_reserved_mib"]) if "driver_reserved_mib" in row else None,
        later_bandwidth_bytes_per_s=(float(row["later_bandwidth_gb_s"]) * GB
                                     if "later_bandwidth_gb_s" in row else None),
        uncited_reported_mib=float(row["uncited_reported_mib"]) if "uncited_reported_mib" in row else None,
        narrow_math=_narrow_math(name, row.get("math", {})),
        dense_fp16_accumulate_flops_per_s=(float(row["dense_fp16_accumulate_tflops"]) * TERA
                                           if "dense_fp16_accumulate_tflops" in row else None),
        last_level_cache_bytes=float(row["last_level_cache"]) * _CACHE_UNITS[unit] if cached else None,
        last_level_cache_marketed=f"{row['last_level_cache']:g} {unit}" if cached else None,
        last_level_cache_name=row.get("last_level_cache_name"),
        last_level_cache_source=row.get("last_level_cache_source"),
        link=_link(name, row["link"]),
    )


LINK_KINDS = ("NVLink", "Infinity Fabric", "PCIe")


def _link(name: str, row: dict) -> Link:
    if row["kind"] not in LINK_KINDS:
        raise ValueError(f"{name}: link.kind must be one of {', '.join(LINK_KINDS)}; got {row['kind']!r}")
    peer = float(row["peer_gb_s"]) * GB if "peer_gb_s" in row else None
    return Link(row["kind"], float(row["gb_s"]) * GB, row["printed"], row["source"], row.get("note"), peer)


@datafiles.cached
def accelerators() -> dict[str, Accelerator]:
    """All accelerators in the data file, in file order, keyed by name."""
    table = datafiles.load("accelerators.toml")["accelerators"]
    return {name: _from_row(name, row) for name, row in table.items()}


def accelerator(name: str) -> Accelerator:
    """The accelerator called ``name`` (as in the data file), or a ValueError listing the names."""
    return datafiles.lookup(accelerators(), "accelerator", name)


def _processor(name: str, row: dict) -> Accelerator:
    return Accelerator(
        name=name, vendor=row["vendor"], year=int(row["year"]),
        dense_bf16_flops_per_s=float(row["peak_tflops"]) * TERA, sparse_bf16_flops_per_s=None,
        bandwidth_bytes_per_s=float(row["bandwidth_gb_s"]) * GB, capacity_marketed_gb=float(row["capacity_gb"]),
        reported_capacity_mib=None, capacity_source=row["capacity_note"], datacenter=False,
        source=f"{row['source']}; math: {row['peak_source']}", notes=row["notes"], kind=row["kind"],
        peak_precision=row["peak_precision"])


@datafiles.cached
def processors() -> dict[str, Accelerator]:
    """The CPUs and systems on a chip of the published measurements: their math rate (the one the
    comparison uses, ``peak_precision`` says which), bandwidth and memory, as accelerators are."""
    return {name: _processor(name, row) for name, row in datafiles.load("processors.toml")["processors"].items()}


def device(name: str) -> Accelerator:
    """An accelerator or another processor, by name."""
    return datafiles.lookup({**accelerators(), **processors()}, "device", name)
