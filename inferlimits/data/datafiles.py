"""The one place the package reads its data files (``inferlimits/data/*.toml``)."""
from __future__ import annotations

import functools
import tomllib
from importlib import resources

_CACHED: list = []


def cached(fn=None, *, maxsize: int | None = None):
    """``functools.cache`` (or, with ``maxsize``, an LRU cache of that size) for anything built on
    these files; ``clear_caches`` forgets them all (the tests that change a data file use it)."""
    if fn is None:
        return lambda f: cached(f, maxsize=maxsize)
    fn = functools.lru_cache(maxsize=maxsize)(fn)
    _CACHED.append(fn)
    return fn


def clear_caches() -> None:
    for fn in _CACHED:
        fn.cache_clear()


def lookup(table: dict, parameter: str, key: str):
    """``table[key]``, or a ValueError naming ``parameter`` and listing the keys it may take."""
    if key not in table:
        raise ValueError(f"{parameter} must be one of {', '.join(map(str, table))}; got {key!r}")
    return table[key]


def read(name: str) -> str:
    """The text of data file ``name``, e.g. ``"accelerators.toml"``."""
    return resources.files("inferlimits.data").joinpath(name).read_text("utf-8")


def load(name: str) -> dict:
    """Data file ``name`` parsed as TOML."""
    return tomllib.loads(read(name))
