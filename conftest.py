"""Two markers that ``make test`` schedules by:

- ``measures``: tests that time this machine, the nbval run of a chapter that measures the machine
  it runs on (``inferlimits.book.measures_this_machine``) and the tests that execute such a
  chapter. Their checks compare measurements with each other, which holds on a quiet machine, so
  ``make test`` runs them alone, after the full book and before the other tests.
- ``beside_the_build``: the tests of ``BESIDE_THE_BUILD``, which need nothing built and take long
  on one core; ``make test`` runs them while it builds the student edition, and on beside the
  parallel run of the rest."""
from pathlib import Path

import pytest

from inferlimits.book import measures_this_machine


#: test files that need neither edition built and run long on one core
BESIDE_THE_BUILD = {"test_mutations_data.py"}


def pytest_configure(config):
    config.addinivalue_line("markers", "measures: times this machine; run alone, not beside other tests")
    config.addinivalue_line("markers", "beside_the_build: needs nothing built; runs while the student edition is built")


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects
def pytest_collection_modifyitems(items):
    for item in items:
        path = Path(str(item.path))
        if path.suffix == ".ipynb" and measures_this_machine(path):
            item.add_marker(pytest.mark.measures)
        if path.name in BESIDE_THE_BUILD:
            item.add_marker(pytest.mark.beside_the_build)
