"""Tests that time this machine carry the marker ``measures``: the nbval run of a chapter that
measures the machine it runs on (``inferlimits.book.measures_this_machine``) and the tests that
execute such a chapter. Their checks compare measurements with each other, which holds on a quiet
machine, so ``make test`` runs them alone, after the parallel run of everything else."""
from pathlib import Path

import pytest

from inferlimits.book import measures_this_machine


def pytest_configure(config):
    config.addinivalue_line("markers", "measures: times this machine; run alone, not beside other tests")


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects
def pytest_collection_modifyitems(items):
    for item in items:
        path = Path(str(item.path))
        if path.suffix == ".ipynb" and measures_this_machine(path):
            item.add_marker(pytest.mark.measures)
