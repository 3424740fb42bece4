"""Launch buttons: configured for the repository the book is built from, left out for a local
copy. Binder installs requirements.txt alone: the tests run in an environment held to exactly
that, so the strict nbval run that executes every chapter here shows Binder can too."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from types import SimpleNamespace

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from inferlimits.book import ROOT
from inferlimits.book.sphinxext import launch_buttons, repository_url


def test_repository_url_prefers_the_explicit_setting(tmp_path):
    assert repository_url({"BOOK_REPOSITORY_URL": "https://github.com/a/b/"}, tmp_path) == "https://github.com/a/b"
    assert repository_url({"GITHUB_REPOSITORY": "a/b"}, tmp_path) == "https://github.com/a/b"
    assert repository_url({}, tmp_path) is None  # not a git checkout: no buttons


def test_launch_buttons_point_at_binder_thebe_and_the_repository():
    config = SimpleNamespace(html_theme_options={}, thebe_config={"selector": ".cell"})
    launch_buttons(config, "https://github.com/a/b")
    opts = config.html_theme_options
    assert opts["repository_url"] == "https://github.com/a/b" and opts["use_repository_button"]
    assert opts["launch_buttons"]["binderhub_url"] == "https://mybinder.org" and opts["launch_buttons"]["thebe"]
    assert config.thebe_config == {"selector": ".cell", "repository_url": "https://github.com/a/b",
                                   "repository_branch": "main"}
    untouched = SimpleNamespace(html_theme_options={}, thebe_config={})
    launch_buttons(untouched, None)
    assert untouched.html_theme_options == {}


def test_requirements_are_pinned():
    lines = [ln.split("#")[0].strip() for ln in (ROOT / "requirements.txt").read_text().splitlines()]
    reqs = [ln for ln in lines if ln and not ln.startswith("-e")]
    assert reqs and all("==" in r for r in reqs), [r for r in reqs if "==" not in r]


def _pins() -> dict[str, Requirement]:
    pins = {}
    for ln in (ROOT / "requirements.txt").read_text().splitlines():
        ln = ln.split("#")[0].strip()
        if ln and not ln.startswith("-"):
            r = Requirement(ln)
            pins[canonicalize_name(r.name)] = r
    return pins


def _installed() -> dict[str, metadata.Distribution]:
    return {canonicalize_name(d.metadata["Name"]): d for d in metadata.distributions()}


def _closure(wanted: list[Requirement], installed: dict[str, metadata.Distribution]) -> tuple[set[str], list[str]]:
    """What installing ``wanted`` brings in (each requirement's own requirements, with their
    extras and markers, as installed here), and which of them are not installed."""
    needed, missing, todo, seen = set(), [], list(wanted), set()
    while todo:
        r = todo.pop()
        name, extras = canonicalize_name(r.name), frozenset(r.extras)
        if (name, extras) in seen:
            continue
        seen.add((name, extras))
        needed.add(name)
        if name not in installed:
            missing.append(str(r))
            continue
        for spec in installed[name].requires or []:
            q = Requirement(spec)
            if q.marker is None or any(q.marker.evaluate({"extra": e}) for e in (extras or {""})):
                todo.append(q)
    return needed, missing


def test_the_tests_run_in_an_environment_of_the_requirements_alone():
    """Binder builds its environment from requirements.txt alone. The tests run in one like it:
    every pin installed at its version, and nothing installed that the pins (and the book's own
    package, ``-e .``) do not bring in, beyond pip. So the strict nbval run, which executes every
    chapter in this environment (``--nbval-current-env``), is also the proof that a Binder
    environment runs every chapter; ``make setup`` builds the environment that way."""
    pins, installed = _pins(), _installed()
    wrong = {n: installed[n].version for n, r in pins.items() if n in installed and installed[n].version not in r.specifier}
    assert not wrong, f"installed at other versions than requirements.txt pins: {wrong}"
    needed, missing = _closure([*pins.values(), Requirement("inferlimits")], installed)
    assert not missing, f"required but not installed: {missing}"
    extra = sorted(set(installed) - needed - {"pip"})
    assert not extra, (f"installed here but not brought in by requirements.txt (Binder would lack them): {extra}; "
                       "remove them, or run the tests in a fresh `make setup`")


def test_the_closure_finds_a_package_nothing_requires():
    """The test above can fail: a package beside the pins is found."""
    installed = _installed()
    needed, missing = _closure([Requirement("nbval")], installed)
    assert {"nbval", "pytest", "ipykernel"} <= needed and not missing
    assert "plotly" not in needed  # nbval does not bring plotly in
    assert _closure([Requirement("no-such-package-here")], installed)[1] == ["no-such-package-here"]


def test_make_setup_installs_the_requirements_alone():
    makefile = (ROOT / "Makefile").read_text()
    installs = [ln.strip() for ln in makefile.splitlines() if "pip install" in ln]
    assert installs == ["@test -x $(UV) || $(PY) -m pip install --quiet --disable-pip-version-check --target $(VENV)/uv uv",
                        "$(UV) pip install --quiet --python $(PY) --compile-bytecode --upgrade pip -r requirements.txt"], installs


def test_binder_runs_python_3_11_with_jupyterlab_and_its_myst_renderer_pinned():
    assert (ROOT / "runtime.txt").read_text().strip() == "python-3.11"
    pins = dict(ln.split("#")[0].strip().split("==") for ln in (ROOT / "requirements.txt").read_text().splitlines()
                if "==" in ln.split("#")[0])
    assert {"jupyterlab", "jupyterlab-myst", "ipywidgets", "anywidget"} <= set(pins)


def test_jupyterlab_renders_myst(tmp_path):
    """jupyterlab-myst must be enabled and compatible with the JupyterLab the requirements pin (an
    incompatible pair is listed but not loaded)."""
    run = subprocess.run([Path(sys.executable).parent / "jupyter", "labextension", "list"], capture_output=True,
                         text=True, timeout=120, env={**os.environ, "JUPYTER_CONFIG_DIR": str(tmp_path)})
    listing = run.stdout + run.stderr
    myst = [ln for ln in listing.splitlines() if "jupyterlab-myst" in ln]
    assert myst and "enabled" in myst[0] and "OK" in myst[0], listing
    assert "not compatible" not in listing, listing


def test_a_wheel_holds_every_module_and_data_file_and_builds_without_warnings(tmp_path):
    """The package is declared whole (its subpackages and data files, not only the top level), so
    an install that is not editable works too, and setuptools does not warn about undeclared parts."""
    import zipfile

    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(ROOT / "pyproject.toml", src)
    shutil.copytree(ROOT / "inferlimits", src / "inferlimits", ignore=shutil.ignore_patterns("__pycache__"))
    run = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-v",
                          "-w", str(tmp_path / "wheel"), str(src)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    said = run.stdout + run.stderr
    assert "would be ignored" not in said and "absent from the `packages`" not in said, said[-3000:]
    names = set(zipfile.ZipFile(next((tmp_path / "wheel").glob("*.whl"))).namelist())
    expected = {p.relative_to(src).as_posix() for p in (src / "inferlimits").rglob("*")
                if p.suffix in (".py", ".toml")}
    assert expected and expected <= names, sorted(expected - names)
