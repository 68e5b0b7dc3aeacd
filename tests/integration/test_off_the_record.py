"""Off the record: a conversation run with `remember=False`, and one where the user says "don't
remember this conversation" (or "这段对话别记下来"), leave no byte of their text in any file of the
memory (store, archive, digests, summaries, journal, trace, recall log) through the real graph,
though the thread's own checkpoints keep it; the reply says so; a later thread never sees it."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graph.cli.session import LocalSession
from graph.context import Context
from memory.archive import DigestSealer, archives  # feature: archive
from memory.integration.conversations.archiving import archive_spec  # feature: archive
from memory.integration.conversations.chat_search import find_in_archive  # feature: archive
from memory.integration.settings import use_settings
from memory.registry import registry

pytestmark = pytest.mark.slow

# Words found nowhere else: each must be in no memory file once its conversation is private.
SECRETS = ("Zanzibarquartz", "Ulaanbaatar", "Xylophonia", "翡翠山庄")
PRIVATE_RUN = [
    "My codename is Zanzibarquartz and I live in Ulaanbaatar.",
    "I like hiking near Ulaanbaatar on weekends, my codename Zanzibarquartz knows it.",
    "I work at Zanzibarquartz Labs.",
]
ASKED_EN = ["Please don't remember this conversation.", "I am planning a surprise for Xylophonia."]
ASKED_ZH = ["这段对话别记下来。", "我住在翡翠山庄。"]


@pytest.fixture
def settings(file_backend: str, tmp_path: Path) -> Iterator[Any]:
    with use_settings(
        data_dir=str(tmp_path / "data"), embeddings="off", snapshot_seconds=None,
        memory_backend=file_backend, context_budget_tokens="200", compaction_keep_messages=2,
    ) as chosen:  # fmt: skip
        yield chosen
    registry.clear()
    archives.clear()  # feature: archive


def _files_holding(root: Path, words: tuple[str, ...]) -> dict[str, list[str]]:
    """Every file under `root` but the checkpointer's that holds one of `words` (UTF-8)."""
    found: dict[str, list[str]] = {}
    for path in root.rglob("*"):
        if not path.is_file() or path.name.startswith("threads.sqlite"):
            continue
        data = path.read_bytes()
        hits = [word for word in words if word.encode() in data]
        if hits:
            found[str(path.relative_to(root))] = hits
    return found


async def test_a_private_conversation_leaves_nothing_but_its_checkpoints(
    settings: Any, tmp_path: Path
) -> None:
    user = f"pri-{uuid.uuid4().hex[:8]}"
    context = Context(user_id=user, model="offline/rules")
    async with LocalSession(context, settings.data_dir) as s:
        await s.say("open", "I like green tea.")  # a conversation kept as usual
        await s.wait_for_writes()
        recalls = s.memory.recall_stats() if s.memory else {}
        s.context = dataclasses.replace(context, remember=False)
        replies = [await s.say("private-run", text) for text in PRIVATE_RUN]
        asked = await s.say("private-run", "Do I like green tea?")
        assert "green tea" in str(asked.related_memories)  # given to the reply, and yet
        assert s.memory is not None and s.memory.recall_stats() == recalls  # no recall noted
        replies.append(asked)
        s.context = context
        replies += [await s.say("asked-en", text) for text in ASKED_EN]
        replies += [await s.say("asked-zh", text) for text in ASKED_ZH]
        await s.wait_for_writes()
        archive = archives.open(archive_spec(), user)  # feature: archive
        assert archive is not None  # feature: archive
        DigestSealer(refresh_seconds=0).seal(archive)  # feature: archive
        later = await s.say("later", "What is my codename, where do I live and what do I like?")
        await s.wait_for_writes()

        assert [r.memory_write.get("status") for r in replies] == ["private"] * len(replies)
        assert all("Off the record" in r.text or "不留记录" in r.text for r in replies)
        assert "green tea" in str(s.manager.show())  # the open conversation was remembered
        assert "green tea" in find_in_archive(s.manager, "green tea", None)  # feature: archive
        assert not [w for w in SECRETS if w in later.text + str(later.related_memories)]
        assert not [w for w in SECRETS if w in str(s.manager.show())]
        assert _files_holding(tmp_path, ("green tea",))  # the scan finds what was kept
        assert _files_holding(tmp_path, SECRETS) == {}
        # Its id is noted (nothing else of it), so the editor and MCP can tell it apart.
        assert s.manager.private_threads() == ["asked-en", "asked-zh", "private-run"]
        assert s.manager.get_core_context("private-run")["private"] == "1"
        assert "private" not in s.manager.get_core_context("open")
        # The thread's own checkpoints keep it (the user can scroll back) and they alone.
        state = await s._graph.aget_state({"configurable": {"thread_id": "private-run"}})
        assert state.values["private"] is True
        kept = str(state.values["messages"]) + str(state.values.get("summary"))
        assert "Zanzibarquartz" in kept


async def test_turning_private_or_forgetting_the_last_turn_takes_back_what_was_kept(
    settings: Any, tmp_path: Path
) -> None:
    user = f"tb-{uuid.uuid4().hex[:8]}"
    context = Context(user_id=user, model="offline/rules")
    # A budget that keeps "what I just said" in the thread's state (a compacted turn is gone
    # from it; turning the whole thread private reaches it anyway).
    with use_settings(context_budget_tokens="4000"):
        await _take_back(context, settings, tmp_path)


async def _take_back(context: Context, settings: Any, tmp_path: Path) -> None:
    async with LocalSession(context, settings.data_dir) as s:
        await s.say("open", "I like green tea.")
        await s.say("mid", "My codename is Quokkaberry and I live in Vladivostok.")
        await s.say("oops", "I work at Zorbulon Industries.")
        await s.wait_for_writes()
        archive = archives.open(archive_spec(), context.user_id)  # feature: archive
        assert archive is not None  # feature: archive
        DigestSealer(refresh_seconds=0).seal(archive)  # feature: archive
        kept = ("Quokkaberry", "Vladivostok", "Zorbulon")
        assert set(kept) <= {w for hits in _files_holding(tmp_path, kept).values() for w in hits}

        turned = await s.say("mid", "Actually, don't remember this conversation.")
        forgot = await s.say("oops", "Forget what I just said.")
        await s.wait_for_writes()
        assert turned.memory_write["status"] == "private"
        assert forgot.memory_write["status"] == "taken back"
        assert _files_holding(tmp_path, kept) == {}
        assert "green tea" in str(s.manager.show())  # the other conversation stays
        assert "green tea" in find_in_archive(s.manager, "green tea", None)  # feature: archive
        assert "green tea" in "\n".join(d.text for d in archive.digests())  # feature: archive
        later = await s.say("later", "Where do I work and what is my codename?")
        assert not [w for w in kept if w in later.text + str(later.related_memories)]
