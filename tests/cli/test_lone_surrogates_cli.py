"""Text that UTF-8 cannot hold (issue 33.4): a lone surrogate, which a JSON string can
carry (the Agents SDK's ``json.dumps`` writes ``"\\udc80"`` happily), in every store
kind; and bytes that are not UTF-8 on the command line.

Each store is written by its real library where the library can write one: the Agents
SDK's ``SQLiteSession``, ``SQLAlchemySession`` (Postgres) and ``RedisSession`` write it
in an item; flux writes it in a message's metadata (its content column is text, which
``sqlite3`` refuses to encode); HelloAgent cannot (it writes UTF-8 with
``ensure_ascii=False``), so its file is written by the library and then given the JSON
escape, as another writer would leave it. Every command works on them: index, search,
``ls --search``, show, export and import; the index finds what a scan finds.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import REDIS_URL, cli_env, write_agents, write_flux
from json_helpers import hello_entry, hello_save

from fluxgui.adapters import open_store
from fluxgui.core.ports import OpenOptions
from fluxgui.services.index import scan, search, update_index

LONE = "hello \udc80 world lone"
KINDS = ["agents", "flux", "json", "postgres", "redis"]


def cli(*args: str | bytes, cache: Path) -> subprocess.CompletedProcess:
    """``python -m fluxgui ARGS`` (bytes are given as they are) with its own folders."""
    env = {**cli_env(), "FLUXGUI_CACHE_DIR": str(cache / "cache"), "FLUXGUI_DATA_DIR": str(cache / "data")}
    done = subprocess.run([sys.executable, "-m", "fluxgui", *args], capture_output=True,
                          text=True, errors="surrogateescape", env=env, timeout=120)
    assert "Traceback" not in done.stderr, done.stderr
    return done


def ok_json(done: subprocess.CompletedProcess) -> Any:
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _write(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> tuple[list[str], str]:
    """A store of ``kind`` holding a lone surrogate in session ``lone`` (and a plain
    session): its target arguments, and the session id."""
    items = {"lone": [{"role": "user", "content": LONE}], "plain": [{"role": "user", "content": "plain words"}]}
    if kind == "agents":
        write_agents(tmp_path / "agents.db", items)
        return [str(tmp_path / "agents.db")], "lone"
    if kind == "flux":
        write_flux(tmp_path / "flux.db", {
            "lone": [{"role": "user", "content": "hello world lone", "metadata": {"note": "bad \udc80"}}],
            "plain": [{"role": "user", "content": "plain words"}],
        })
        return [str(tmp_path / "flux.db")], "lone"
    if kind == "json":
        folder = tmp_path / "folder"
        for name in items:
            text = "PLACEHOLDER" if name == "lone" else "plain words"
            path = hello_save(folder, name, [hello_entry("user", text)])
        path = folder / "lone.json"
        path.write_text(path.read_text().replace("PLACEHOLDER", "hello \\udc80 world lone"))
        return [str(folder)], "lone"
    if kind == "postgres":
        from doctor_helpers import AlchemySessions

        url = request.getfixturevalue("pg_url")
        sessions = AlchemySessions(url)

        async def run() -> None:
            try:
                for sid, its in items.items():
                    await sessions(sid).add_items(its)
            finally:
                await sessions.dispose()

        asyncio.run(run())
        return [url], "lone"
    prefix = request.getfixturevalue("redis_prefix")

    async def run_redis() -> None:
        import redis.asyncio as aioredis
        from agents.extensions.memory import RedisSession

        client = aioredis.from_url(REDIS_URL)
        try:
            for sid, its in items.items():
                await RedisSession(sid, redis_client=client, key_prefix=prefix).add_items(its)  # type: ignore[arg-type]
        finally:
            await client.aclose()

    asyncio.run(run_redis())
    return [REDIS_URL, "--key-prefix", prefix], "lone"


@pytest.mark.parametrize("kind", KINDS)
def test_every_command_reads_a_lone_surrogate(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    target, sid = _write(kind, tmp_path, request)
    store, options = target[0], target[1:]
    # a scan (no index yet), then the index build and the searches through it
    assert [s["id"] for s in ok_json(cli("ls", store, *options, "--search", "world lone", "--json", cache=tmp_path))["sessions"]] == [sid]
    built = cli("index", store, *options, cache=tmp_path)
    assert built.returncode == 0 and "index built: 2 messages" in built.stdout, built.stderr
    found = ok_json(cli("search", store, *options, "world lone", "--json", cache=tmp_path))
    assert found["path"] == "index" and [h["session_id"] for h in found["hits"]] == [sid]
    text = LONE if kind != "flux" else "hello world lone"
    assert found["hits"][0]["snippet"] == text
    assert [s["id"] for s in ok_json(cli("ls", store, *options, "--search", "world lone", "--json", cache=tmp_path))["sessions"]] == [sid]
    # show: the marker in text, the exact value in JSON
    shown = cli("show", store, *options, sid, cache=tmp_path)
    assert shown.returncode == 0
    if kind != "flux":
        assert "hello ⟨U+DC80⟩ world lone" in shown.stdout
        printed = cli("search", store, *options, "world lone", cache=tmp_path)
        assert printed.returncode == 0 and "hello ⟨U+DC80⟩ world lone" in printed.stdout
    (message,) = ok_json(cli("show", store, *options, sid, "--json", cache=tmp_path))["messages"]
    assert message["text"] == text
    if kind == "flux":
        assert message["metadata"] == {"note": "bad \udc80"}
    # export, and import of the export (into a new SQLite store)
    for suffix in ("json", "jsonl"):
        out = tmp_path / f"all.{suffix}"
        assert cli("export", store, *options, "-o", str(out), cache=tmp_path).returncode == 0
        new = tmp_path / f"new-{suffix}.db"
        done = cli("import", str(new), str(out), cache=tmp_path)
        assert done.returncode == 0, done.stderr
        (again,) = ok_json(cli("show", str(new), sid, "--json", cache=tmp_path))["messages"]
        # an Agents SDK item keeps its JSON escape; flux's content column cannot hold a
        # lone surrogate: U+FFFD, as a card shows an undecodable byte
        assert again["text"] == (text if kind in ("agents", "postgres", "redis") else text.replace("\udc80", "\ufffd"))
        hits = ok_json(cli("search", str(new), "world lone", "--json", cache=tmp_path))["hits"]
        assert [h["session_id"] for h in hits] == [sid]

    # in the process: the index finds what a scan finds, needles holding the surrogate too
    async def same() -> None:
        os.environ["FLUXGUI_CACHE_DIR"] = str(tmp_path / "cache")
        try:
            s = await open_store(store, OpenOptions(key_prefix=options[1] if options else None))
            try:
                await update_index(s)
                for needle in ("\udc80", "\udc80 world", "hello \udc80", "world lone", "lo \udc80 w", "lone"):
                    indexed = await search(s, needle, use="index", update=False)
                    scanned = await scan(s, needle)
                    assert sorted(map(repr, indexed.hits)) == sorted(map(repr, scanned.hits)), needle
                    if kind != "flux" and needle != "lone":
                        assert [h.session_id for h in indexed.hits] == [sid], needle
            finally:
                await s.close()
        finally:
            del os.environ["FLUXGUI_CACHE_DIR"]

    asyncio.run(same())


def test_bytes_that_are_not_utf8_on_the_command_line(tmp_path: Path) -> None:
    """Python decodes the command line with ``surrogateescape``: each byte that is not
    UTF-8 is a lone surrogate. A text (a search, a note) takes U+FFFD for it, as a card
    shows such a byte; a name (a file, a session id) keeps the bytes it names."""
    db = tmp_path / "flux.db"
    write_flux(db, {"s1": [{"role": "user", "content": "to be damaged"}, {"role": "user", "content": "abc here"}]})
    conn = sqlite3.connect(db)
    conn.execute("UPDATE messages SET content = CAST(? AS TEXT) WHERE content = 'to be damaged'",
                 (b"caf\xe9 cr\xe8me",))
    conn.commit()
    conn.close()
    for indexed in (False, True):
        found = ok_json(cli("search", str(db), b"\x80abc", "--json", cache=tmp_path))
        assert found["hits"] == [] and found["path"] == ("index" if indexed else "scan")
        # the byte typed finds the text a card shows with U+FFFD in its place
        found = ok_json(cli("search", str(db), b"caf\xe9 cr", "--json", cache=tmp_path))
        assert [h["snippet"] for h in found["hits"]] == ["caf\ufffd cr\ufffdme"]
        listed = ok_json(cli("ls", str(db), "--search", b"caf\xe9", "--json", cache=tmp_path))
        assert [s["id"] for s in listed["sessions"]] == ["s1"]
        assert cli("index", str(db), cache=tmp_path).returncode == 0
    done = cli("review", "set", str(db), "s1", "--note", b"\xff bad", "--tag", b"t\xfe", cache=tmp_path)
    assert done.returncode == 0, done.stderr
    (review,) = ok_json(cli("review", "ls", str(db), "--json", cache=tmp_path))["reviews"]
    assert [n["text"] for n in review["notes"]] == ["\ufffd bad"] and review["tags"] == ["t\ufffd"]
    # a session id that names no session: one line, exit 3
    missing = cli("show", str(db), b"s\xff", cache=tmp_path)
    assert missing.returncode == 3 and missing.stderr.strip() == 'fluxgui: error: unknown session id "s⟨U+DCFF⟩" in ' + str(db)
    # a file name that is not UTF-8 still names its file
    odd = os.fsencode(tmp_path) + b"/st\xffre.db"
    os.link(db, odd)
    assert [s["id"] for s in ok_json(cli("ls", odd, "--json", cache=tmp_path))["sessions"]] == ["s1"]
    assert cli("index", odd, cache=tmp_path).returncode == 0  # its index is keyed by that name
    found = ok_json(cli("search", odd, "abc here", "--json", cache=tmp_path))
    assert found["path"] == "index" and [h["snippet"] for h in found["hits"]] == ["abc here"]
