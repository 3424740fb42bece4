"""Accelerators, read from ``data/accelerators.toml``.

Every figure keeps its unit in its name: FLOP/s, bytes per second, bytes.
"""
from __future__ import annotations

from dataclasses import dataclass

from . import datafiles
from .units import GB, GIB, TERA


@dataclass(frozen=True)
class Accelerator:
    """One accelerator's datasheet figures, in base units."""

    name: str
    vendor: str
    year: int
    dense_bf16_flops_per_s: float
    sparse_bf16_flops_per_s: float
    bandwidth_bytes_per_s: float
    capacity_marketed: float
    capacity_unit: str
    datacenter: bool
    source: str
    notes: str
    measured_matmul_flops_per_s: float | None = None
    measured_source: str | None = None

    @property
    def capacity_bytes(self) -> float:
        """Memory capacity in bytes, from the marketed figure and the unit it really counts."""
        return self.capacity_marketed * {"GB": GB, "GiB": GIB}[self.capacity_unit]

    @property
    def dense_bf16_tflops(self) -> float:
        return self.dense_bf16_flops_per_s / TERA

    @property
    def bandwidth_tb_s(self) -> float:
        return self.bandwidth_bytes_per_s / TERA


def _from_row(name: str, row: dict) -> Accelerator:
    if row["capacity_unit"] not in ("GB", "GiB"):
        raise ValueError(f"{name}: capacity_unit must be GB or GiB, got {row['capacity_unit']!r}")
    return Accelerator(
        name=name,
        vendor=row["vendor"],
        year=int(row["year"]),
        dense_bf16_flops_per_s=float(row["dense_bf16_tflops"]) * TERA,
        sparse_bf16_flops_per_s=float(row["sparse_bf16_tflops"]) * TERA,
        bandwidth_bytes_per_s=float(row["bandwidth_gb_s"]) * GB,
        capacity_marketed=float(row["capacity"]),
        capacity_unit=row["capacity_unit"],
        datacenter=bool(row["datacenter"]),
        source=row["source"],
        notes=row["notes"],
        measured_matmul_flops_per_s=(float(row["measured_matmul_tflops"]) * TERA
                                     if "measured_matmul_tflops" in row else None),
        measured_source=row.get("measured_source"),
    )


@datafiles.cached
def accelerators() -> dict[str, Accelerator]:
    """All accelerators in the data file, in file order, keyed by name."""
    table = datafiles.load("accelerators.toml")["accelerators"]
    return {name: _from_row(name, row) for name, row in table.items()}


def accelerator(name: str) -> Accelerator:
    """The accelerator called ``name`` (as in the data file), or a ValueError listing the names."""
    return datafiles.lookup(accelerators(), "accelerator", name)
