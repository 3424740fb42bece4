"""The one place the package reads its data files (``inferlimits/data/*.toml``)."""
from __future__ import annotations

import tomllib
from importlib import resources


def read(name: str) -> str:
    """The text of data file ``name``, e.g. ``"accelerators.toml"``."""
    return resources.files("inferlimits.data").joinpath(name).read_text("utf-8")


def load(name: str) -> dict:
    """Data file ``name`` parsed as TOML."""
    return tomllib.loads(read(name))
