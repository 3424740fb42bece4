"""Launch buttons: configured for the repository the book is built from, left out for a local
copy; Binder installs requirements.txt, which a fresh virtual environment built from it alone
must be able to execute every chapter with."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from types import SimpleNamespace

import pytest

from inferlimits.book import ROOT, notebooks
from inferlimits.sphinxext import launch_buttons, repository_url


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


@pytest.mark.skipif(os.environ.get("SKIP_BINDER_TEST") == "1", reason="SKIP_BINDER_TEST=1")
@pytest.mark.measures  # it executes chapter 9 too
def test_a_fresh_environment_from_requirements_alone_runs_every_chapter(tmp_path):
    env_dir = tmp_path / "binder-env"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    subprocess.run([py, "-m", "pip", "install", "--quiet", "-r", "requirements.txt"], cwd=ROOT, check=True,
                   timeout=900)
    work = tmp_path / "chapters"
    work.mkdir()
    for nb in notebooks():
        shutil.copy(nb, work / nb.name)
    run = subprocess.run([py, "-m", "inferlimits.execute", *sorted(str(p) for p in work.glob("*.ipynb"))],
                         cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert sys.executable != str(py)
