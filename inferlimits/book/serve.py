"""Serve the built site on loopback for a browser (tests, PDF printing), quietly."""
from __future__ import annotations

import contextlib
import functools
import http.server
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path


class Quiet(http.server.SimpleHTTPRequestHandler):
    """Python's static file handler, without a log line per request."""

    def log_message(self, *args) -> None:
        pass


@contextlib.contextmanager
def serve(directory: Path, handler: type[Quiet] = Quiet) -> Iterator[str]:
    """Serve ``directory`` on 127.0.0.1 at a free port with ``handler``; yield the base URL."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(directory)))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


#: Debian's chromium, which the tests, the PDF and the slide exports drive: never a browser download
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"

#: flags for Debian's chromium in a closed network (no background connections, no sandbox as root);
#: every page it opens is the book's own, on loopback, so its pages share renderer processes instead
#: of one per site (about 5% less work for the browser tests, measured)
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-features=site-per-process,IsolateOrigins", "--disable-site-isolation-trials",
                  "--renderer-process-limit=2"]
