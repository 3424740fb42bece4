"""Other tools' reported accuracy, from ``data/peers.toml``: each figure as its source publishes
it, on that source's own runs (the file's header says what each field means). These are not
like-for-like comparisons with the book's cross-validated score."""
from __future__ import annotations

from dataclasses import dataclass

from inferlimits.data import datafiles
from inferlimits.data.units import positive

#: what a peer's figure counts: an absolute relative error, or predicted over measured
KINDS = ("error", "ratio")


@dataclass(frozen=True)
class Peer:
    """One tool's reported accuracy: ``low`` to ``high`` (equal for one figure), of ``kind``."""

    key: str
    tool: str
    method: str
    kind: str
    low: float
    high: float
    measure: str
    on: str
    who: str
    source: str
    url: str
    quote: str
    how: str

    @property
    def figure(self) -> str:
        """The figure in words: "45%", "49–54%", "1.44–1.91×"."""
        if self.kind == "error":
            lo, hi = f"{self.low:.0%}", f"{self.high:.0%}"
            return lo if lo == hi else f"{lo[:-1]}–{hi}"
        lo, hi = f"{self.low:.2f}", f"{self.high:.2f}"
        return f"{lo}×" if lo == hi else f"{lo}–{hi}×"


def _peer(key: str, row: dict) -> Peer:
    missing = [f for f in ("tool", "method", "measure", "on", "who", "source", "url", "quote", "how")
               if not str(row.get(f, "")).strip()]
    if missing:
        raise ValueError(f"peer {key}: give {', '.join(missing)}")
    kind = datafiles.lookup({k: k for k in KINDS}, f"kind of peer {key}", row.get("kind"))
    low, high = positive(f"low of peer {key}", row["low"]), positive(f"high of peer {key}", row["high"])
    if high < low:
        raise ValueError(f"peer {key}: high must be at least low; got {low} and {high}")
    if not row["url"].startswith("https://"):
        raise ValueError(f"peer {key}: url must be an https address; got {row['url']!r}")
    return Peer(key, row["tool"], row["method"], kind, float(low), float(high), row["measure"], row["on"], row["who"],
                row["source"], row["url"], row["quote"], row["how"])


@datafiles.cached
def peers() -> dict[str, Peer]:
    """Every peer in ``peers.toml``, in file order."""
    return {key: _peer(key, row) for key, row in datafiles.load("peers.toml")["peers"].items()}
