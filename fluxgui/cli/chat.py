"""The ``chat`` command: send a message to an agent with a session's history.

The reply streams to standard output as it arrives; :func:`fluxgui.services.chat.chat`
then saves the user's message and the reply in the session (with ``--copy``: in a fork
of it, the original untouched). On a provider error nothing is saved.
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from fluxgui.core.errors import SessionNotFound, show_id

from .errors import Known

from .stores import open_target


async def cmd_chat(args: argparse.Namespace, out: TextIO) -> int:
    """``chat``: one turn with the chosen provider, saved once the reply is complete."""
    from fluxgui.services.chat import AgentConfig, ChatEvent, chat

    config = AgentConfig(
        instructions=args.instructions,
        model=args.model or "",
        temperature=args.temperature,
        provider=args.provider,
        base_url=args.base_url,
        timeout=args.timeout,
    )

    written = [""]  # the last piece written, to end the line properly

    def on_event(event: ChatEvent) -> None:
        if event.kind == "text" and event.text:
            out.write(event.text)
            out.flush()
            written[0] = event.text

    store = await open_target(args, writable=True)
    try:
        if args.new and await store.reader.session_info(args.session_id) is not None:
            raise Known(
                f"session {show_id(args.session_id)} already exists in {store.target}: "
                "leave out --new to chat in it"
            )
        try:
            result = await chat(
                store, args.session_id, args.message, config,
                on_event=on_event, copy=args.copy, new=args.new,
            )
        except SessionNotFound as exc:
            if args.new or args.copy:
                raise
            raise Known(f"{exc} (pass --new to start a new session)") from None
    finally:
        await store.close()
        # Also when the stream broke off: the error line then starts on a line of its own.
        if written[0] and not written[0].endswith("\n"):
            out.write("\n")
            out.flush()
    if args.copy:
        print(f"fluxgui: saved in the copy {show_id(result.session_id)}", file=sys.stderr)
    return 0
