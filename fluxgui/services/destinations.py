"""The store an import or a copy writes into: opened, or made — and a made one appears
whole or not at all.

A destination that does not exist yet (a new SQLite file, a new JSON session folder) is
built beside its final path as ``.<name>.<random>.part`` and moved into place only when
everything was written: a failure, a cancellation or a kill leaves nothing at the path
(a kill leaves the ``.part``, which the next write to the same place removes, see
:mod:`fluxgui.core.files`). A store that exists is written in place, one transaction per
session, as before.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fluxgui.core.roles import Store
from fluxgui.adapters.registry import kind_of, open_store, parse_target
from fluxgui.core.errors import FluxguiError, NotASessionStore, TargetError, show_id
from fluxgui.core.files import (
    hold_path,
    part_name,
    part_pattern,
    release,
    remove_path,
    remove_stale,
    sync_folder,
)

FORMAT_NAMES = {"flux": "flux", "agents": "Agents SDK", "json": "JSON session folder"}


@dataclass
class Plan:
    """What :func:`writable_store` does with a target: open it, or make it in ``create``
    (``new``: at a path that does not exist yet)."""

    create: str | None
    new: Path | None


def _wants_folder(target: str, fmt: str | None) -> bool:
    return "://" not in target and (
        fmt == "json"
        or (fmt is None and (target.endswith(("/", os.sep)) or Path(target).expanduser().is_dir()))
    )


def plan_for(target: str, fmt: str | None, default: str) -> Plan:
    """Decide how to write ``target`` (see :func:`writable_store`)."""
    if kind_of(target) == "conversations":  # a server: nothing to make beside a path
        return Plan(None, None)
    if fmt == "json" and "://" in target:
        raise TargetError("a JSON session folder is a folder path, not a URL")
    if _wants_folder(target, fmt):
        path = Path(target).expanduser()
        return Plan("json", None if path.exists() else path)
    parsed = parse_target(target)
    if parsed.path is not None and not parsed.path.exists():
        return Plan(fmt or default, parsed.path)
    return Plan(None, None)


async def _is_empty(target: str) -> bool:
    from fluxgui.adapters.sql import SqlAlchemyBackend, SqliteBackend

    parsed = parse_target(target)
    if parsed.path is not None:
        backend: Any = await SqliteBackend.open(parsed.path)
    else:
        assert parsed.url is not None
        backend = await SqlAlchemyBackend.open(parsed.url, parsed.display)
    try:
        return not await backend.tables()
    finally:
        await backend.close()


async def open_existing(
    target: str, *, fmt: str | None, default: str, create: str | None = None, **options: Any
) -> Store:
    """Open an existing ``target`` writable. A JSON session folder (even empty) takes the
    sessions; a database without any table gets a new store in ``fmt`` or ``default``; a
    database with other tables gets one only when ``fmt`` says which."""
    if create == "json":
        return await open_store(target, create="json", **options)
    try:
        store = await open_store(target, writable=True, format=fmt, **options)
    except NotASessionStore:
        if fmt is None and not await _is_empty(target):
            raise
        return await open_store(target, writable=True, format=fmt, create=fmt or default, **options)
    if fmt is not None and store.format != fmt:
        await store.close()
        raise NotASessionStore(
            f"{store.target} is a session store in the {FORMAT_NAMES[store.format]} format, "
            f"not {FORMAT_NAMES[fmt]}: leave the format out to write into it in its own"
        )
    return store


@dataclass
class _Beside:
    """A new store being built at ``tmp``, to be moved to ``final``."""

    tmp: Path
    final: Path
    held: int | None


async def _make_beside(final: Path, create: str, **options: Any) -> tuple[Store, _Beside]:
    folder = final.parent
    if not folder.is_dir():
        raise TargetError(f"no such folder: {folder}")
    await asyncio.to_thread(remove_stale, folder, part_pattern(final.name))
    tmp = folder / part_name(final.name)
    store = await open_store(str(tmp), create=create, **options)
    store.target = str(final)
    return store, _Beside(tmp, final, await asyncio.to_thread(hold_path, tmp))


def _move_into_place(beside: _Beside) -> None:
    """Move the finished store to its path; never over something that appeared there."""
    tmp, final = beside.tmp, beside.final
    try:
        if tmp.is_dir():
            if final.exists():
                raise FileExistsError
            os.rename(tmp, final)
        else:
            try:
                os.link(tmp, final)  # fails when the name is taken: no clobbering
            except (NotImplementedError, PermissionError):  # no hard links here
                if final.exists():
                    raise FileExistsError from None
                os.rename(tmp, final)
            else:
                os.unlink(tmp)
    except FileExistsError:
        raise TargetError(
            f"{show_id(str(final))} appeared while the sessions were being written; "
            f"nothing was written there"
        ) from None
    except OSError as exc:
        raise TargetError(f"cannot write {show_id(str(final))}: {exc.strerror or exc}") from None
    sync_folder(final.parent)


@asynccontextmanager
async def writable_store(
    target: str, *, fmt: str | None, default: str, **options: Any
) -> AsyncGenerator[Store, None]:
    """The store to import or copy into, closed at the end of the block.

    A path that does not exist becomes a new SQLite store (a new JSON session folder when
    it ends with a path separator or ``fmt`` is "json") in ``fmt`` or else ``default``,
    built beside the path and moved there when the block ends without an error (removed
    when it raises). ``options`` (``sessions_table``, ``messages_table``, ``key``,
    ``ttl``, ``key_prefix``) go to :func:`open_store`.
    """
    plan = plan_for(target, fmt, default)
    if plan.new is None:
        store = await open_existing(target, fmt=fmt, default=default, create=plan.create, **options)
        try:
            yield store
        finally:
            await store.close()
        return
    assert plan.create is not None
    store, beside = await _make_beside(plan.new, plan.create, **options)
    try:
        yield store
    except BaseException as exc:
        await store.close()
        release(beside.held)
        await asyncio.to_thread(remove_path, beside.tmp)
        _name_final(exc, beside)
        raise
    try:
        await store.close()
        await asyncio.to_thread(_move_into_place, beside)
    except FluxguiError as exc:
        _name_final(exc, beside)
        raise
    finally:
        release(beside.held)
        await asyncio.to_thread(remove_path, beside.tmp)


def _name_final(exc: BaseException, beside: _Beside) -> None:
    """An error about the store being built names the path the user gave, not the
    temporary beside it (``.NAME.RANDOM.part``, gone by the time the error shows)."""
    if not isinstance(exc, FluxguiError) or not exc.args or not isinstance(exc.args[0], str):
        return
    text = exc.args[0]
    for tmp, final in ((str(beside.tmp), str(beside.final)), (beside.tmp.name, beside.final.name)):
        text = text.replace(tmp, final)
    exc.args = (text, *exc.args[1:])
