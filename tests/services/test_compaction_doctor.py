"""The session doctor on a compacted history: compaction items (``add_items`` of the real
``agents.SQLiteSession``) are no problem, stay in the input the SDK builds, and are never
candidates for compaction again (``core.items.compaction_candidates``, the SDK's rule)."""

from __future__ import annotations

from agents import SQLiteSession

from fluxgui.adapters import open_store
from fluxgui.core.items import compaction_candidates, is_compaction_item
from fluxgui.services.doctor import check_session
from fluxgui.services.doctor.preflight import preflight

COMPACTION = {"id": "cmp_1", "type": "compaction", "created_by": "resp_1", "encrypted_content": "gAAAAB" + "Q" * 600}
ITEMS = [
    {"role": "user", "content": "first question"},
    {"type": "message", "role": "assistant", "status": "completed",
     "content": [{"type": "output_text", "text": "first answer", "annotations": []}]},
    {"role": "user", "content": "second question"},
    COMPACTION,
    {"role": "user", "content": "after the compaction"},
]


async def test_a_compacted_history_is_healthy_and_sent_as_it_is(tmp_path):
    path = tmp_path / "compacted.db"
    session = SQLiteSession("c", str(path))
    try:
        await session.add_items(ITEMS)
    finally:
        session.close()
    async with await open_store(str(path)) as store:
        report = await check_session(store, "c")
        sent = (await preflight(store, "c")).input
    assert report.problems == ()
    compactions = [i for i in sent if is_compaction_item(i)]
    # The SDK sends it back as it is (only its created_by, SDK metadata, is left out).
    assert compactions == [{k: v for k, v in COMPACTION.items() if k != "created_by"}]
    assert not any(is_compaction_item(i) for i in compaction_candidates(list(sent)))
