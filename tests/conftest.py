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
#: cores: test_browser's one by one, test_mutations' one chapter at a time (a chapter's tests share
#: one run of it); every other file (and each chapter's nbval cells, which share one kernel in
#: order) stays whole on one worker
SPREAD = {"test_browser.py": False, "test_mutations.py": True}


@pytest.hookimpl(optionalhook=True)   # the hook exists only where xdist runs
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadfile`` (make test), except for the ``SPREAD`` files. (Not ``loadgroup`` with
    marks: under pytest 9.2 it silently stops grouping, pytest-xdist issue 1386.)"""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class SpreadSome(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            if Path(path).name not in SPREAD:
                return path
            by_chapter = SPREAD[Path(path).name] and nodeid.endswith("]")
            return path + "[" + nodeid.rsplit("[", 1)[1] if by_chapter else nodeid

    return SpreadSome(config, log)
