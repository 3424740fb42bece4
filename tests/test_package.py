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


#: inferlimits' folders in the order the data flows; a module imports only from its own layer
#: and the layers before it
LAYERS = ("data", "arithmetic", "checks", "machine", "figures", "book")


def _imported(path) -> set[str]:
    """Every inferlimits module a file imports, at the top or inside a function."""
    import ast

    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return {m for m in found if m.split(".")[0] == "inferlimits"}


def test_the_folders_are_the_layers_and_imports_run_one_way():
    package = ROOT / "inferlimits"
    assert sorted(p.name for p in package.iterdir() if p.is_dir() and p.name != "__pycache__") == sorted(LAYERS)
    assert [p.name for p in package.glob("*.py")] == ["__init__.py"], "every module sits in a layer's folder"
    backwards = []
    for path in sorted(package.rglob("*.py")):
        layer = path.relative_to(package).parts[0]
        if layer == "__init__.py":
            continue
        for module in _imported(path):
            parts = module.split(".")
            target = parts[1] if len(parts) > 1 else None
            if target not in LAYERS or LAYERS.index(target) > LAYERS.index(layer):
                backwards.append(f"{path.relative_to(ROOT)} imports {module}")
    assert not backwards, backwards


def test_no_module_imports_relatively():
    """Absolute imports name the layer they come from, which is what the test above reads."""
    import ast

    relative = [str(p.relative_to(ROOT)) for p in (ROOT / "inferlimits").rglob("*.py")
                if any(isinstance(n, ast.ImportFrom) and n.level for n in ast.walk(ast.parse(p.read_text())))]
    assert not relative, relative
