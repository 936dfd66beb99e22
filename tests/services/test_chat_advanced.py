"""Test-chat on an AdvancedSQLiteSession store: the new turn lands on the current
branch as the library's own add_items would put it, and the library reads it back."""

from __future__ import annotations

from pathlib import Path

from advanced_helpers import SID, Library, write_library_store

from fluxgui.adapters import open_store
from fluxgui.services.chat import AgentConfig, chat


async def test_offline_chat_on_a_branch(tmp_path: Path):
    path = tmp_path / "advanced.db"
    await write_library_store(path)
    before = await Library(path).view(SID, current="alt")
    async with await open_store(str(path), writable=True) as store:
        result = await chat(store, SID, "And now?", AgentConfig(), branch="alt")
    assert result.added == 2 and result.reply.startswith("[offline] You said: And now?")
    after = await Library(path).view(SID, current="alt")
    assert after["current_items"][:-2] == before["current_items"]
    assert after["current_items"][-2] == {"role": "user", "content": "And now?"}
    assert after["current_items"][-1]["role"] == "assistant"
    assert after["per_branch"]["main"] == before["per_branch"]["main"]  # main untouched
    turns = after["per_branch"]["alt"]["turns"]
    assert turns[-1]["content"] == "And now?"
