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
