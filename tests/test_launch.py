"""Launch buttons: configured for the repository the book is built from, left out for a local
copy; Binder installs requirements.txt, which a fresh virtual environment built from it alone
must be able to execute every chapter with."""
from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import venv
from pathlib import Path
from types import SimpleNamespace

import pytest

from inferlimits.book import ROOT, measures_this_machine, notebooks
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


def binder_env() -> Path:
    """A virtual environment made from requirements.txt alone, as Binder makes one: built once per
    checkout and version of the requirements (outside the repository, so the book's build never sees it) and
    shared by the two tests below, which run in different phases of ``make test``."""
    digest = hashlib.sha256(str(ROOT).encode() + (ROOT / "requirements.txt").read_bytes()  # it installs ROOT
                            + (ROOT / "pyproject.toml").read_bytes())
    env_dir = Path(tempfile.gettempdir()) / f"inferlimits-binder-{digest.hexdigest()[:12]}"
    with open(f"{env_dir}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one builder at a time
        if not (env_dir / "complete").exists():
            shutil.rmtree(env_dir, ignore_errors=True)
            venv.EnvBuilder(with_pip=True).create(env_dir)
            subprocess.run([env_dir / "bin" / "python", "-m", "pip", "install", "--quiet", "-r", "requirements.txt"],
                           cwd=ROOT, check=True, timeout=900)
            (env_dir / "complete").touch()
    return env_dir


def _execute_in_binder_env(chapters: list[Path], tmp_path: Path) -> None:
    py = binder_env() / "bin" / "python"
    assert sys.executable != str(py)
    for nb in chapters:
        shutil.copy(nb, tmp_path / nb.name)
    run = subprocess.run([py, "-m", "inferlimits.book.execute", *(str(tmp_path / nb.name) for nb in chapters)],
                         cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]


QUIET = [nb for nb in notebooks() if not measures_this_machine(nb)]
MEASURING = [nb for nb in notebooks() if measures_this_machine(nb)]
BINDER = pytest.mark.skipif(os.environ.get("SKIP_BINDER_TEST") == "1", reason="SKIP_BINDER_TEST=1")


@BINDER
def test_a_fresh_environment_from_requirements_alone_runs_every_chapter(tmp_path):
    """The chapters that do not time the machine, beside other tests; the rest below, alone."""
    assert QUIET and sorted(QUIET + MEASURING) == sorted(notebooks())
    _execute_in_binder_env(QUIET, tmp_path)


@BINDER
@pytest.mark.measures
def test_the_same_environment_runs_the_chapters_that_time_the_machine(tmp_path):
    assert MEASURING, "chapter 12 measures this machine"
    _execute_in_binder_env(MEASURING, tmp_path)


def test_binder_runs_python_3_11_with_jupyterlab_and_its_myst_renderer_pinned():
    assert (ROOT / "runtime.txt").read_text().strip() == "python-3.11"
    pins = dict(ln.split("#")[0].strip().split("==") for ln in (ROOT / "requirements.txt").read_text().splitlines()
                if "==" in ln.split("#")[0])
    assert {"jupyterlab", "jupyterlab-myst", "ipywidgets", "anywidget"} <= set(pins)


@BINDER
def test_the_fresh_environment_renders_myst_in_jupyterlab(tmp_path):
    """jupyterlab-myst must be enabled and compatible with the JupyterLab that Binder installs
    (an incompatible pair is listed but not loaded)."""
    run = subprocess.run([binder_env() / "bin" / "jupyter", "labextension", "list"], capture_output=True,
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
