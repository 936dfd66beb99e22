"""Passwords and API keys in the keyring (fluxgui.services.credentials): the calls that
may block have async twins that run them on a worker thread, and nothing raises."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import keyring
import keyring.backend
import keyring.backends.fail
import pytest

from fluxgui.services import credentials

KEY = "postgresql+asyncpg://root@127.0.0.1:5432/test"


class ThreadKeyring(keyring.backend.KeyringBackend):
    """A keyring in a dict that records the thread each call ran on."""

    @keyring.backend.properties.classproperty
    def priority(cls) -> float:  # noqa: N805 - keyring's classproperty
        raise RuntimeError("test backend: only used through set_keyring")

    def __init__(self) -> None:
        super().__init__()
        self.store: dict[tuple[str, str], str] = {}
        self.threads: list[str] = []

    def get_password(self, service: str, username: str) -> str | None:
        self.threads.append(threading.current_thread().name)
        return self.store.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.threads.append(threading.current_thread().name)
        self.store[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self.threads.append(threading.current_thread().name)
        self.store.pop((service, username))


@pytest.fixture
def backend() -> Iterator[ThreadKeyring]:
    previous = keyring.get_keyring()
    ring = ThreadKeyring()
    keyring.set_keyring(ring)
    try:
        yield ring
    finally:
        keyring.set_keyring(previous)


def test_the_async_twins_run_off_the_calling_thread(backend: ThreadKeyring) -> None:
    async def main() -> tuple[bool, bool, str | None, bool]:
        available = await credentials.keyring_available_async()
        filed = await credentials.set_password_async(KEY, "p@ss")
        found = await credentials.get_password_async(KEY)
        gone = await credentials.delete_password_async(KEY)
        return available, filed, found, gone

    assert asyncio.run(main()) == (True, True, "p@ss", True)
    here = threading.current_thread().name
    assert backend.threads and here not in backend.threads
    assert credentials.backend_chosen()


def test_file_password_takes_the_url_apart(backend: ThreadKeyring) -> None:
    assert credentials.file_password("postgresql+asyncpg://root:p%40ss@127.0.0.1:5432/test")
    assert backend.store == {("fluxgui", KEY): "p@ss"}
    assert not credentials.file_password("/some/file.db")
    assert not credentials.file_password("postgresql://u:x@h:port/db")  # does not parse
    assert not credentials.file_password("postgresql+asyncpg://u@h/db")  # no password


def test_file_password_soon_writes_on_a_worker_thread_when_a_loop_runs(backend: ThreadKeyring) -> None:
    async def main() -> None:
        credentials.file_password_soon("postgresql+asyncpg://root:pw@127.0.0.1:5432/test")
        assert backend.store == {}  # not yet: the write is a task
        while credentials._writes:
            await asyncio.sleep(0.01)

    asyncio.run(main())
    assert backend.store == {("fluxgui", KEY): "pw"}
    assert threading.current_thread().name not in backend.threads

    backend.store.clear()
    credentials.file_password_soon("postgresql+asyncpg://root:pw@127.0.0.1:5432/test")  # no loop
    assert backend.store == {("fluxgui", KEY): "pw"}


def test_api_key_from_the_environment_then_the_keyring(
    backend: ThreadKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert credentials.api_key_for("openai") is None
    backend.store[("fluxgui", credentials.API_KEY_KEYRING)] = "sk-from-keyring"
    assert credentials.api_key_for("openai") == "sk-from-keyring"
    assert asyncio.run(credentials.api_key_for_async("openai")) == "sk-from-keyring"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    backend.threads.clear()
    assert asyncio.run(credentials.api_key_for_async("openai")) == "sk-from-env"
    assert backend.threads == []  # the environment answered: no keyring call
    for provider in ("offline", "ollama"):
        assert credentials.api_key_for(provider) is None
        assert asyncio.run(credentials.api_key_for_async(provider)) is None


def test_no_keyring_is_none_and_false() -> None:
    previous = keyring.get_keyring()
    keyring.set_keyring(keyring.backends.fail.Keyring())
    try:
        assert asyncio.run(credentials.keyring_available_async()) is False
        assert asyncio.run(credentials.get_password_async(KEY)) is None
        assert asyncio.run(credentials.set_password_async(KEY, "pw")) is False
        assert asyncio.run(credentials.delete_password_async(KEY)) is False
        assert credentials.file_password("postgresql+asyncpg://root:pw@h/db") is False
    finally:
        keyring.set_keyring(previous)
