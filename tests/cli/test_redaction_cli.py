"""A secret in a URL never shows (issue 13 point 3): every command's error path, with the
secret in every place a URL can carry one, prints no secret, logs none and writes none.

Run in-process (``fluxgui.cli.main``) so that the logs are captured too.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from helpers import closed_port, write_agents

from fluxgui.cli import main
from fluxgui.core.redact import redact_text, redact_url, split_secrets

SECRET = "S3cr3tValue"
#: stands for a closed port in the URLs below: the port is found when a test runs, so the
#: test ids stay the same in every pytest-xdist worker
CLOSED = "CLOSED"

URLS = [
    f"redis://:{SECRET}@127.0.0.1:{CLOSED}/0",
    f"redis://127.0.0.1:{CLOSED}/0?password={SECRET}",
    f"rediss://user:{SECRET}@127.0.0.1:99999/0",
    f"unix:///nonexistent/redis.sock?db=0&password={SECRET}",
    f"postgresql+asyncpg://u:{SECRET}@127.0.0.1:{CLOSED}/x",
    f"postgresql+asyncpg://u@127.0.0.1:{CLOSED}/x?password={SECRET}",
    f"postgresql://u@127.0.0.1:{CLOSED}/x?sslmode=disable&PWD={SECRET}",
    f"postgres://u:{SECRET}@127.0.0.1:abc/x",
    f"postgresql+asyncpg://u@127.0.0.1:{CLOSED}/x?Token={SECRET}&api_key={SECRET}&key={SECRET}",
]


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("redact")
    db = folder / "src.db"
    write_agents(db, {"conv": [{"role": "user", "content": "hi"}]})
    export = folder / "src.json"
    assert main(["export", str(db), "-o", str(export)]) == 0
    return {"db": db, "export": export, "out": folder / "out.json", "dest": folder / "dest.db"}


def commands(url: str, f: dict[str, Path]) -> list[list[str]]:
    return [
        ["ls", url],
        ["ls", url, "--json", "--search", "x"],
        ["show", url, "conv"],
        ["branches", url, "conv"],
        ["branch", url, "conv", "--at", "1"],
        ["diff", url, "a", "b"],
        ["clear", url, "conv", "--yes"],
        ["rm", url, "conv", "--yes"],
        ["export", url, "-o", str(f["out"])],
        ["import", url, str(f["export"])],
        ["copy", url, str(f["dest"])],
        ["copy", str(f["db"]), url],
        ["chat", url, "conv", "-m", "hi"],
    ]


@pytest.mark.parametrize("url", URLS, ids=range(len(URLS)))
def test_no_command_shows_a_secret(url, files, capsys, caplog):
    caplog.set_level(logging.DEBUG)
    url = url.replace(CLOSED, str(closed_port()))
    for argv in commands(url, files):
        code = main(argv)
        out, err = capsys.readouterr()
        assert code == 3, (argv, code, err)
        assert SECRET not in out + err, (argv, err)
        assert len(err.strip().splitlines()) == 1, (argv, err)
        assert "***" in err or "bad URL" in err or "port" in err.lower(), (argv, err)
    assert SECRET not in caplog.text


@pytest.mark.parametrize(
    "base_url",
    [
        f"http://user:{SECRET}@127.0.0.1:{CLOSED}/v1",
        f"http://127.0.0.1:{CLOSED}/v1?api_key={SECRET}",
        f"http://user:{SECRET}@127.0.0.1:99999/v1",
    ],
)
@pytest.mark.parametrize("provider", ["openai", "ollama"])
def test_chat_base_url_secret_never_shows(base_url, provider, files, capsys, caplog, monkeypatch):
    caplog.set_level(logging.DEBUG)
    base_url = base_url.replace(CLOSED, str(closed_port()))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    code = main(["chat", str(files["db"]), "conv", "-m", "hi", "--provider", provider,
                 "--base-url", base_url, "--timeout", "5"])
    out, err = capsys.readouterr()
    assert code == 3, err
    assert SECRET not in out + err
    assert "***" in err
    assert SECRET not in caplog.text


def test_logged_urls_are_redacted(caplog):
    from fluxgui.core.redact import install_log_redaction

    install_log_redaction()
    caplog.set_level(logging.INFO)
    log = logging.getLogger("fluxgui.test")
    log.info("opening %s", f"redis://:{SECRET}@h/0")
    try:
        raise RuntimeError(f"failed on postgresql://u:{SECRET}@h/db")
    except RuntimeError:
        log.exception("boom")
    assert SECRET not in caplog.text
    assert "redis://:***@h/0" in caplog.text
    assert "postgresql://u:***@h/db" in caplog.text


@pytest.mark.parametrize(
    "url, shown",
    [
        ("redis://:pw@h:1/0", "redis://:***@h:1/0"),
        ("redis://u:p/w@h/0", "redis://u:***@h/0"),
        ("unix:///s.sock?password=pw&db=1", "unix:///s.sock?password=***&db=1"),
        ("postgresql://h/d?PASS=x;sslmode=y", "postgresql://h/d?PASS=***;sslmode=y"),
        ("http://h/v1?client_secret=x&access_token=y&x-api-key=z&q=1",
         "http://h/v1?client_secret=***&access_token=***&x-api-key=***&q=1"),
        ("http://u@h/v1", "http://u@h/v1"),
        ("plain/path.db", "plain/path.db"),
    ],
)
def test_redact_url(url, shown):
    assert redact_url(url) == shown
    assert redact_text(f'cannot reach "{url}": refused') == f'cannot reach "{shown}": refused'
    bare, found = split_secrets(url)
    assert "***" not in bare and all(v not in bare.split("?")[-1] for v in found.values() if len(v) > 1)
