"""Debian's chromium, which the browser tests drive with playwright: never a browser download."""
from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from inferlimits.book.serve import CHROMIUM, CHROMIUM_FLAGS

needs_chromium = pytest.mark.skipif(not Path(CHROMIUM).exists(),
                                    reason="Debian chromium is not installed (make test installs it)")


@contextlib.contextmanager
def chromium():
    """A headless chromium, closed on leaving."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS, headless=True)
        try:
            yield b
        finally:
            b.close()
