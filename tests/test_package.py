"""The package declares itself so that set-up is quiet: every folder of data under inferlimits/
is named in the package data (setuptools warns about any it would otherwise leave out or install
as data by accident), and the package sits at the root with ``package-dir = {"" = "."}``, so that
an editable install is a plain path entry (setuptools' static .pth strategy, which prints no
notice) rather than a meta-path finder with its warning about folders of the same name."""
from __future__ import annotations

import fnmatch
import tomllib

from inferlimits.book import ROOT

CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]


def test_the_package_sits_at_the_root_so_an_editable_install_is_a_plain_path():
    assert CONFIG["package-dir"] == {"": "."}
    assert CONFIG["packages"]["find"]["include"] == ["inferlimits", "inferlimits.*"]


def test_every_file_that_is_not_python_is_declared_as_package_data():
    declared = CONFIG["package-data"]
    undeclared = []
    for path in sorted((ROOT / "inferlimits").rglob("*")):
        if not path.is_file() or path.suffix in (".py", ".pyc") or "__pycache__" in path.parts:
            continue
        package = ".".join(path.parent.relative_to(ROOT).parts)
        if not any(fnmatch.fnmatch(path.name, pattern) for pattern in declared.get(package, [])):
            undeclared.append(str(path.relative_to(ROOT)))
    assert not undeclared, f"files under inferlimits/ that pyproject.toml's package-data does not name: {undeclared}"
