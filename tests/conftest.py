import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from hypothesis import settings  # noqa: E402

# Property tests: modest example counts, no deadline (a loaded 2-core machine is slow) and no
# example database, so the suite stays fast and writes nothing.
settings.register_profile("book", max_examples=60, deadline=None, database=None)
settings.load_profile("book")



@pytest.fixture(scope="module")
def browser():
    """One headless Debian chromium for a module's tests (see browsers.py)."""
    from browsers import chromium

    with chromium() as b:
        yield b


#: test files whose tests are independent of one another and costly enough to spread over both
#: cores one by one; every other file (and each chapter's nbval cells, which share one kernel in
#: order) stays whole on one worker, as ``--dist loadfile`` would keep it
SPREAD = {"test_browser.py", "test_mutations.py"}


def pytest_collection_modifyitems(config, items):
    """For ``pytest -n 2 --dist loadgroup`` (make test): group every test by its file, except the
    tests of the ``SPREAD`` files, which any worker may take."""
    if config.getoption("dist", "no") != "loadgroup":
        return
    for item in items:
        name = item.path.name
        if name not in SPREAD:
            item.add_marker(pytest.mark.xdist_group(name))
