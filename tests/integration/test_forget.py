"""Forget means forgotten: a conversation through LocalSession with the offline model on each
backend; after "forget where I live", a new thread finds nothing of it in retrieval, the
conversation search, topics, digests, the core context, the running summary or the reply, and
`restore` brings each back."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graph.cli.session import LocalSession
from graph.context import Context
from memory.archive import DigestSealer, archives
from memory.archive.base import hidden_note
from memory.integration.archive_location import archive_spec
from memory.integration.chat_commands import forget, restore
from memory.integration.conversations.chat_search import find_in_archive
from memory.integration.settings import use_settings
from memory.long_term import LongTermMemory
from memory.registry import registry
from tests.integration.conftest import POSTGRES_URL, postgres_unreachable_reason

pytestmark = pytest.mark.slow

FACTS = ["My name is Ada.", "I live in Hangzhou, at 18 Wenyi Road.", "I work at Google.",
         "I like green tea."]  # fmt: skip
WHERE = ("Hangzhou", "Wenyi", "杭州")  # what must be nowhere once forgotten
QUESTION = "Where do I live?"


def _backend(kind: str, tmp_path: Path) -> dict[str, Any]:
    if kind == "yaml":
        return {"memory_backend": f"yaml:{tmp_path / 'memory'}"}
    if kind == "sqlite":
        return {"memory_backend": f"sqlite:{tmp_path / 'memory.sqlite'}"}
    if kind == "store":  # a LangGraph store (in-process), the archive in the data folder
        return {"memory_backend": "store:memory", "conversation_archive": "auto"}
    reason = postgres_unreachable_reason()
    if reason:
        pytest.skip(reason)
    return {"memory_backend": f"postgres:{POSTGRES_URL}"}  # its archive is PostgreSQL's too


@pytest.fixture(
    params=["yaml", "sqlite", "store", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    chosen = _backend(request.param, tmp_path)
    with use_settings(
        data_dir=str(tmp_path / "data"), embeddings="off", snapshot_seconds=None,
        context_budget_tokens="200", compaction_keep_messages=2, **chosen,
    ) as settings:  # fmt: skip
        yield settings
    registry.clear()
    archives.clear()


def _mentions(text: str) -> list[str]:
    return [word for word in WHERE if word in text]


def _channels(memory: LongTermMemory, reply: Any) -> dict[str, str]:
    """What each place the agent reads holds, as text."""
    archive = archives.open(archive_spec(), memory.user_id)
    assert archive is not None
    about = memory.get_related_memory_from("", "mechanical", topic="Hangzhou")  # feature: topics
    return {
        "retrieval": str(memory.get_related_memory_from("where do I live", "mechanical")),
        "search_memory": str(memory.get_related_memory_from("Hangzhou", "mechanical")),
        "memories_about": str(about),  # feature: topics
        "topic summary": str(memory.topics.summary("Hangzhou")),  # feature: topics
        "conversation search": find_in_archive(memory.manager, "Hangzhou Wenyi Road", None),
        "digests": "\n".join(d.text for d in archive.digests()),
        "core context": str(memory.get_core_context("t2")),
        "reply": reply.text + str(reply.related_memories),
    }


async def test_forget_leaves_every_channel_and_restore_brings_it_back(settings: Any) -> None:
    user = f"ada-{uuid.uuid4().hex[:8]}"  # PostgreSQL is shared between runs
    chat = Context(user_id=user, model="offline/rules")
    async with LocalSession(chat, settings.data_dir) as session:
        memory = session.memory
        assert memory is not None
        for fact in FACTS:
            await session.say("t1", fact)
        await session.wait_for_writes()
        archive = archives.open(archive_spec(), user)
        assert archive is not None
        DigestSealer(refresh_seconds=0).seal(archive)
        memory.topics.refresh()  # feature: topics
        before = _channels(memory, await session.say("t2", QUESTION))
        # Every channel held the address before, and t1's running summary (it was compacted).
        assert {name: bool(_mentions(text)) for name, text in before.items()} == dict.fromkeys(
            before, True
        )
        assert _mentions(await _summary(session, "t1"))

        await session.say("t1", "Please forget where I live.")
        await session.say("t1", "Please forget my shoe size.")  # matches nothing
        await session.wait_for_writes()
        trace = memory.trace.for_user(user)
        assert [e.op for e in trace if e.op in ("delete", "unmatched")] == ["unmatched", "delete"]
        unmatched = next(e for e in trace if e.op == "unmatched")
        assert "shoe size" in unmatched.arguments["request"] and "nothing" in unmatched.result
        forgotten = next(iter(memory.manager.deleted_items()))

        after = _channels(memory, await session.say("t2", QUESTION))
        assert [name for name, text in after.items() if _mentions(text)] == []
        # It says so (how many: every message matching any of the words that carried it).
        assert after["conversation search"].rstrip(")").endswith(hidden_note(1).split(" ", 1)[1])
        assert "green tea" in find_in_archive(memory.manager, "green tea", None)
        assert "green tea" in after["digests"]  # the rest of the day is still sealed
        compacted = await session.say("t1", "Anything else?")
        summary = await _summary(session, "t1")
        assert summary and not _mentions(summary)
        assert compacted.text and not _mentions(compacted.text)

        assert "restored" in restore(memory.manager, forgotten)
        back = _channels(memory, await session.say("t3", QUESTION))
        assert [name for name, text in back.items() if not _mentions(text)] == []
        assert "hidden" not in back["conversation search"]
        await session.say("t1", "And now?")
        assert _mentions(await _summary(session, "t1"))

        # The terminal's /forget is a forget too: the next thread's search hides it again.
        assert "forgot" in forget(memory.manager, "Hangzhou")
        again = _channels(memory, await session.say("t4", QUESTION))
        assert [name for name, text in again.items() if _mentions(text)] == []


async def _summary(session: LocalSession, thread: str) -> str:
    state = await session._graph.aget_state({"configurable": {"thread_id": thread}})
    return str((state.values.get("summary") or {}).get("text") or "")


@pytest.mark.parametrize("kind", ["yaml", "sqlite"])
async def test_forgetting_one_fact_of_a_batch_keeps_the_other_facts_messages(
    kind: str, tmp_path: Path
) -> None:
    """Two facts told in two turns written by one batched writer run (which records its last
    turn as the provenance): forgetting where the user lives hides the address message and
    not the sister's name, told in the other turn; restore brings the address back."""
    with use_settings(
        data_dir=str(tmp_path / "data"), embeddings="off", snapshot_seconds=None,
        write_batch_size=2, **_backend(kind, tmp_path),
    ) as settings:  # fmt: skip
        try:
            await _forget_one_of_a_batch(settings)
        finally:
            registry.clear()
            archives.clear()


async def _forget_one_of_a_batch(settings: Any) -> None:
    user = f"bea-{uuid.uuid4().hex[:8]}"
    async with LocalSession(Context(user_id=user, model="offline/rules"), settings.data_dir) as s:
        memory = s.memory
        assert memory is not None
        await s.say("t1", "I live in Lisbon.")
        await s.say("t1", "My sister's name is Clara.")  # the batch's last: its provenance
        await s.wait_for_writes()
        items = memory.manager.all_items().values()
        written = {e.get("turn_id") for i in items for e in i.history if e["action"] == "create"}
        assert len(items) == 2 and len(written) == 1  # one writer run wrote both facts
        assert "Clara" in find_in_archive(memory.manager, "sister Clara", None)

        await s.say("t1", "Please forget where I live.")
        await s.wait_for_writes()
        forgotten = next(iter(memory.manager.deleted_items()))
        await s.say("t2", "Hello again.")  # a new thread: the archive is reconciled
        sister = find_in_archive(memory.manager, "sister Clara", None)
        assert "My sister's name is Clara." in sister and "hidden" not in sister
        assert "Lisbon" not in find_in_archive(memory.manager, "Lisbon", None)

        assert "restored" in restore(memory.manager, forgotten)
        await s.say("t3", "Hello once more.")
        assert "I live in Lisbon." in find_in_archive(memory.manager, "Lisbon", None)
        assert "Clara" in find_in_archive(memory.manager, "sister Clara", None)
