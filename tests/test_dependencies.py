"""The behaviour fluxgui relies on in each library with an upper version bound in
pyproject.toml, checked directly, so that a release that changes it fails here first.

(PySide6's pin has its own test, tests/qt/test_pyside_pin.py; what the Agents SDK and
flux write and read is checked against the real libraries throughout tests/adapters.)
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

import pytest


def test_sqlalchemy_urls_say_whether_a_driver_was_named():
    """parse_target gives a bare postgresql:// asyncpg by looking for a '+' (SQLAlchemy
    2.1 changed its own default driver to psycopg)."""
    from sqlalchemy.engine import make_url

    from fluxgui.adapters.registry import parse_target

    assert make_url("postgresql://u@h/db").drivername == "postgresql"
    assert make_url("postgresql+asyncpg://u@h/db").get_driver_name() == "asyncpg"
    assert make_url("postgres://u@h/db").get_backend_name() in ("postgres", "postgresql")
    for url in ("postgresql://u@h/db", "postgres://u@h:5433/db"):
        assert parse_target(url).url.startswith("postgresql+asyncpg://")
    assert parse_target("postgresql+psycopg://u@h/db").url.startswith("postgresql+psycopg://")


def test_aiosqlite_runs_sqlite_off_the_loop_and_opens_read_only(tmp_path: Path):
    import aiosqlite

    db = tmp_path / "x.db"
    sqlite3.connect(db).execute("CREATE TABLE t (a)").connection.commit()

    async def run() -> str:
        conn = await aiosqlite.connect(f"file:{db}?mode=ro", uri=True)
        try:
            await conn.execute("SELECT * FROM t")
            with pytest.raises(sqlite3.OperationalError):
                await conn.execute("INSERT INTO t VALUES (1)")
            return type(conn).__name__
        finally:
            await conn.close()

    assert asyncio.run(run()) == "Connection"


def test_redis_pipelines_watch_and_multi():
    """The store's writes are WATCH + MULTI/EXEC pipelines, retried on WatchError."""
    import redis.asyncio as aioredis
    from redis.exceptions import WatchError

    pipe = aioredis.Redis().pipeline(transaction=True)
    assert callable(pipe.watch) and callable(pipe.multi) and issubclass(WatchError, Exception)


def test_cryptography_fernet_keeps_the_encryption_time():
    """EncryptedSession's TTL is the Fernet token's time: sealing backdates it, opening
    reads it (adapters/encryption.py)."""
    import base64

    from cryptography.fernet import Fernet

    f = Fernet(base64.urlsafe_b64encode(b"k" * 32))
    token = f.encrypt_at_time(b"x", 1_700_000_000)
    assert f.extract_timestamp(token) == 1_700_000_000
    assert f.decrypt(token) == b"x"


def test_keyring_says_when_it_has_no_backend():
    import keyring.backends.fail
    from keyring.errors import NoKeyringError

    with pytest.raises(NoKeyringError):
        keyring.backends.fail.Keyring().get_password("fluxgui", "x")


def test_pygments_lexes_by_name_and_styles_by_name():
    from pygments.lexers import get_lexer_by_name
    from pygments.styles import get_style_by_name
    from pygments.token import Keyword

    tokens = list(get_lexer_by_name("python").get_tokens("def f(): pass"))
    assert tokens[0][0] in Keyword and get_style_by_name("default")


def test_openai_errors_carry_status_and_body():
    """chat_providers turns the client's errors into one line from these fields."""
    import httpx2
    import openai

    request = httpx2.Request("POST", "http://127.0.0.1/v1/chat/completions")
    response = httpx2.Response(429, request=request, json={"error": {"message": "slow down"}})
    err = openai.RateLimitError("slow down", response=response, body={"message": "slow down"})
    assert isinstance(err, openai.APIStatusError) and err.status_code == 429
    assert err.body == {"message": "slow down"}


def test_httpx2_streams_line_by_line():
    import httpx2

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, content=b'{"a": 1}\n{"b": 2}\n')

    async def run() -> list[dict]:
        async with httpx2.AsyncClient(transport=httpx2.MockTransport(handler)) as client:
            async with client.stream("POST", "http://127.0.0.1/api/chat") as response:
                return [json.loads(line) async for line in response.aiter_lines() if line]

    assert asyncio.run(run()) == [{"a": 1}, {"b": 2}]


def test_flux_session_protocol_and_runner_take_any_store():
    """fluxgui's stores hand out objects of flux's Session protocol; Runner.run takes
    them (services/chat.py)."""
    import inspect

    from flux import Runner
    from flux.sessions import Session

    for name in ("get_messages", "add_messages", "clear"):
        assert inspect.iscoroutinefunction(getattr(Session, name)) or hasattr(Session, name)
    assert "session" in inspect.signature(Runner.run).parameters


def test_qasync_runs_asyncio_on_the_qt_loop(qapp):
    import qasync

    loop = qasync.QEventLoop(qapp)
    try:
        assert loop.run_until_complete(asyncio.to_thread(lambda: 41 + 1)) == 42
    finally:
        loop.close()
        asyncio.set_event_loop(None)


def test_orjson_reads_as_json_does_but_for_what_the_export_checks():
    """fluxgui.core.jsonrecords parses stored items with orjson and trusts it where json
    would give the same value: orjson refuses (never misreads) NaN, 1e400, lone
    surrogates and deep nesting, keeps json's key order for duplicate keys, and reads an
    integer beyond 64 bits as a float of at least 2**63 (which the export detects by the
    ``e+`` of its dump)."""
    import orjson

    for text in ("NaN", "-Infinity", "1e400", '"\\ud800"', "[" * 1100 + "]" * 1100):
        with pytest.raises(orjson.JSONDecodeError):
            orjson.loads(text)
    assert list(orjson.loads('{"a": 1, "b": 2, "a": 3}').items()) == [("a", 3), ("b", 2)]
    for text in ("18446744073709551615", "-9223372036854775808", "1234567890123456789"):
        assert orjson.loads(text) == json.loads(text) and type(orjson.loads(text)) is int
    for text in ("18446744073709551616", "-9223372036854775809", "1" * 30):
        value = orjson.loads(text)
        assert type(value) is float and abs(value) >= 2**63 and "e+" in json.dumps(value)
    for text in ("0.1", "-0.0", "1E5", "2.5e-7", "1e-400", "123456.789e3"):
        assert repr(orjson.loads(text)) == repr(json.loads(text))


def test_phonenumbers_strict_grouping_takes_formatted_numbers_not_ids():
    """Redaction's phone detector (fluxgui.services.redaction.pii) relies on
    PhoneNumberMatcher at STRICT_GROUPING: grouped numbers found, national ones read in
    the region given, ids grouped otherwise not taken; is_valid_number for a bare number
    after a word such as "phone"."""
    import phonenumbers

    def found(text: str, region: str = "US") -> list[str]:
        matcher = phonenumbers.PhoneNumberMatcher(text, region, leniency=phonenumbers.Leniency.STRICT_GROUPING)
        return [m.raw_string for m in matcher]

    assert found("call (415) 555-2671 or +44 20 7946 0958") == ["(415) 555-2671", "+44 20 7946 0958"]
    assert found("020 7946 0958", "GB") == ["020 7946 0958"]
    assert found("2024-000123") == [] and found("2024-01-15 10") == []
    assert phonenumbers.is_valid_number(phonenumbers.parse("4155552671", "US"))
    assert "US" in phonenumbers.SUPPORTED_REGIONS and "GB" in phonenumbers.SUPPORTED_REGIONS


def test_stdnum_iban_checks_the_checksum_with_spaces():
    """The IBAN detector passes the candidate as written (grouped by spaces or not)."""
    from stdnum import iban

    assert iban.is_valid("GB82 WEST 1234 5698 7654 32")
    assert iban.is_valid("DE89370400440532013000")
    assert not iban.is_valid("GB82 WEST 1234 5698 7654 33")
    assert not iban.is_valid("GB82 WEST 1234 5698 7654 32 THE")
