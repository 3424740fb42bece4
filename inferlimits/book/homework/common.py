"""What the templates share: the pools they draw from, and the quantities as sheets write them."""
from __future__ import annotations

from functools import cache

from inferlimits.data.hardware import Accelerator, accelerator, accelerators
from inferlimits.data.models import Config, Model, model, models
from inferlimits.data.units import GB, GIB, KIB, MIB
from inferlimits.book.homework import sig

# ---- pools ----------------------------------------------------------------------------------------


@cache
def cards() -> tuple[str, ...]:
    """Every accelerator of the data, by name."""
    return tuple(accelerators())


def cards_with(precision: str) -> tuple[str, ...]:
    """The accelerators that multiply in ``precision`` (FP8, INT8, FP4) at their own rate."""
    return tuple(n for n in cards() if accelerators()[n].supports(precision))


#: accelerators whose GPUs talk over NVLink or Infinity Fabric (a server's fast link), not PCIe
def linked_cards() -> tuple[str, ...]:
    return tuple(n for n in cards() if accelerators()[n].link.kind != "PCIe")


@cache
def dense_models() -> tuple[str, ...]:
    """Dense models whose every layer attends to the whole context (no sliding windows): the
    chapters' formulas for the cache hold for them as written."""
    return tuple(n for n, m in models().items() if not m.config.is_moe and not m.config.windowed_layers)


@cache
def moe_models() -> tuple[str, ...]:
    """Mixture-of-experts models, one of each configuration (DeepSeek-R1 shares DeepSeek-V3's)."""
    seen, out = set(), []
    for n, m in models().items():
        c = m.config
        if not c.is_moe:
            continue
        shape = (c.hidden_size, c.num_hidden_layers, c.routed_experts, c.num_experts_per_tok, c.vocab_size)
        if shape not in seen:
            seen.add(shape)
            out.append(n)
    return tuple(out)


def fp8_or_bf16(a: Accelerator) -> str:
    """The precision a question stores a card's model in: FP8 where the card multiplies in FP8, else BF16."""
    return "FP8" if a.supports("FP8") else "BF16"


def cfg(name: str) -> Config:
    return model(name).config


def mdl(name: str) -> Model:
    return model(name)


def card(name: str) -> Accelerator:
    return accelerator(name)


# ---- quantities as the sheets write them ------------------------------------------------------------

def gb(x: float, digits: int = 3) -> str:
    return f"{sig(x / GB, digits)} GB"


def gib(x: float, digits: int = 3) -> str:
    return f"{sig(x / GIB, digits)} GiB"


def mb(x: float, digits: int = 3) -> str:
    return f"{sig(x / 1e6, digits)} MB"


def kib(x: float, digits: int = 4) -> str:
    return f"{sig(x / KIB, digits)} KiB"


def mib(x: float) -> str:
    return f"{round(x / MIB):,} MiB"


def billions(x: float, digits: int = 4) -> str:
    return f"{sig(x / 1e9, digits)} billion"


def millions(x: float, digits: int = 4) -> str:
    return f"{sig(x / 1e6, digits)} million"


def gbps(x: float) -> str:
    """A bandwidth in GB/s, to four figures: 2,039 GB/s, 3,350 GB/s."""
    return f"{sig(x / GB, 4)} GB/s"


def tflops(x: float) -> str:
    return f"{sig(x / 1e12, 4)} TFLOP/s"


def ms(x: float, digits: int = 3) -> str:
    return f"{sig(x * 1e3, digits)} ms"


def us(x: float, digits: int = 3) -> str:
    return f"{sig(x * 1e6, digits)} µs"


def pct(x: float, digits: int = 3) -> str:
    return f"{sig(x * 100, digits)}%"


def times(x: float, digits: int = 3) -> str:
    return f"{sig(x, digits)}×"


def rate(x: float, digits: int = 3) -> str:
    return f"{sig(x, digits)} tokens/s"


def flop_per_byte(x: float, digits: int = 3) -> str:
    return f"{sig(x, digits)} FLOP per byte"


def usd(x: float, digits: int = 3) -> str:
    return f"USD {sig(x, digits)}"


def tokens(x: float) -> str:
    return f"{round(x):,} tokens"


def datasheet(a: Accelerator, *, memory: bool = True, math: bool = True) -> str:
    """A card's figures, as a question gives them: what it reports, its bandwidth, its dense BF16 rate."""
    parts = []
    if memory:
        parts.append(f"reports {mib(a.capacity_bytes)} of memory")
    parts.append(f"moves {gbps(a.bandwidth_bytes_per_s)}")
    if math:
        parts.append(f"does {tflops(a.dense_bf16_flops_per_s)} of dense BF16 math")
    return f"The {a.name} " + (", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]) + "."


def yes_no(flag: bool) -> str:
    return "yes" if flag else "no"


def an(name: str) -> str:
    """``name`` with its article, as the letters of a card's name are read: an H100, a B200."""
    return f"{'an' if name[:1].upper() in 'AEFHILMNORSX' else 'a'} {name}"


def An(name: str) -> str:
    """``an(name)`` at the start of a sentence."""
    s = an(name)
    return s[0].upper() + s[1:]


def multiplied_note(c: Config) -> str:
    """Which weights a token multiplies, in words: all but the input embedding table, or, where the
    table is also the output head, all of them."""
    return ("all of them: its embedding table is also its output head" if c.tie_word_embeddings
            else "all but the input embedding table")


def vocabulary_note(c: Config) -> str:
    """The vocabulary tables, in words, with their weights."""
    n = billions(c.vocab_size * c.hidden_size)
    return (f"its embedding table, which is also its output head, holds {n} of them" if c.tie_word_embeddings
            else f"its input embedding table and its output head hold {n} of them each")
