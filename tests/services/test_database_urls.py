"""The Open URL form's parts (fluxgui.services.database_urls), without Qt."""

from __future__ import annotations

from dataclasses import replace

from sqlalchemy.engine import make_url

from fluxgui.services.database_urls import (
    POSTGRES,
    REDIS,
    SQLITE,
    UrlParts,
    default_port,
    known_driver,
    parse_options,
    parts_from_url,
)


def test_a_complete_database_url_and_its_key() -> None:
    parts = UrlParts(POSTGRES, "db.example.com", "6543", "sup/port", "ro@ot", "p@ss:w", "ssl=require")
    assert parts.problem() is None
    url = make_url(parts.url())
    assert (url.username, url.password, url.database, url.port) == ("ro@ot", "p@ss:w", "sup/port", 6543)
    assert url.query == {"ssl": "require"}
    assert ":***@" in parts.display_url() and "p%40ss" not in parts.display_url()
    assert make_url(parts.url_key()).password is None
    assert parts.redis_prefix() is None


def test_what_is_missing_is_one_sentence() -> None:
    base = UrlParts(POSTGRES, "localhost", "5432")
    assert "database" in (base.problem() or "")
    assert "1 to 65535" in (replace(base, database="d", port="70000").problem() or "")
    assert "key=value" in (replace(base, database="d", options="ssl").problem() or "")
    assert "driver name" in (UrlParts("").problem() or "")
    assert "backend+driver" in (UrlParts("my sql").problem() or "")
    assert "SQLite file" in (UrlParts(SQLITE).problem() or "")
    redis = UrlParts(REDIS, "localhost", "6379", "0")
    assert redis.problem() is None and redis.redis_prefix() == "agents:session"
    assert "number" in (replace(redis, database="main").problem() or "")
    assert "prefix" in (replace(redis, key_prefix=" ").problem() or "")


def test_redis_auth_with_a_password_only() -> None:
    parts = UrlParts(REDIS, "h", "6380", "2", "", "pw", key_prefix="x:y")
    assert parts.url() == "redis://:pw@h:6380/2"
    assert parts.redis_prefix() == "x:y"


def test_parts_from_a_url_round_trip() -> None:
    parts = parts_from_url("postgresql://ro%40ot:p%40ss@db.example.com:6543/sup%2Fport?ssl=require")
    assert parts is not None and known_driver(parts.drivername) == POSTGRES
    assert (parts.user, parts.password, parts.database, parts.port) == ("ro@ot", "p@ss", "sup/port", "6543")
    assert parts.options == "ssl=require"
    path = parts_from_url("/data/my store?.db")
    assert path is not None and path.is_sqlite and path.database == "/data/my store?.db"
    assert parts_from_url("postgresql://u@h:notaport/db") is None
    assert parts_from_url("redis://h/0", "team:s").key_prefix == "team:s"  # type: ignore[union-attr]
    assert known_driver("mysql+aiomysql") is None
    assert default_port("mysql+aiomysql") == 3306 and default_port("sqlite") is None
    assert parse_options("a=1&a=2&b=") == {"a": ["1", "2"], "b": ""}
