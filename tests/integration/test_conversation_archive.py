"""The archive as the chat graph keeps it (a real SQLite checkpointer): every turn, skipped or
not; forks see their own branch; the archive rebuilt from the checkpoints is the live one; a
summary that fails never fails the turn."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.sqlite import SqliteSaver

import graph.nodes as nodes
import memory.integration.compaction as compaction  # feature: compaction
from graph.agent import compile_graph
from graph.context import Context
from memory.archive import Window, archives, parse_day, render
from memory.archive.sqlite_archive import SqliteArchive
from memory.integration.admin.archive import rebuild
from memory.integration.archive_location import archive_spec
from memory.integration.lineage import lineage_of
from memory.integration.models.offline import OfflineChatModel
from memory.integration.settings import use_settings
from tests.fakes import ScriptedModel

pytestmark = pytest.mark.slow


@pytest.fixture
def app(tmp_path: Path) -> Iterator[Any]:
    with (
        use_settings(memory_backend=f"sqlite:{tmp_path / 'memory.db'}", embeddings="off"),
        SqliteSaver.from_conn_string(str(tmp_path / "threads.sqlite")) as saver,
    ):
        yield compile_graph(checkpointer=saver)


def say(app: Any, user: str, thread: str, text: str, checkpoint: str = "") -> dict[str, Any]:
    configurable = {"thread_id": thread, **({"checkpoint_id": checkpoint} if checkpoint else {})}
    return app.invoke(
        {"messages": [{"role": "user", "content": text}]}, {"configurable": configurable},
        context=Context(user_id=user, model="offline/rules"),
    )  # fmt: skip


def head(app: Any, thread: str) -> str:
    state = app.get_state({"configurable": {"thread_id": thread}})
    return str(state.config["configurable"]["checkpoint_id"])


def found(app: Any, user: str, query: str, thread: str = "", at: str = "") -> list[str]:
    """What a search from `thread` at checkpoint `at` finds (the tool's window)."""
    lineage = lineage_of(app.checkpointer, thread, at) if thread and at else None
    archive = archives.open(archive_spec(), user)
    assert archive is not None
    hits = archive.search(query, Window(lineage=lineage)).hits
    return [h.anchor.content for h in hits if h.digest is None]  # messages, not day digests


@pytest.mark.uses("admission")
def test_skipped_turns_are_archived_too(app: Any) -> None:
    state = say(app, "ada", "t1", "ok thanks")
    assert state["memory_write"]["status"] == "skipped"
    assert found(app, "ada", "thanks") == ["ok thanks"]


def test_a_fork_does_not_find_its_siblings_messages(app: Any) -> None:
    say(app, "ada", "t1", "We are planning a garden party")
    after_first = head(app, "t1")
    say(app, "ada", "t1", "The party theme is flamingo pink")
    main = head(app, "t1")
    say(app, "ada", "t1", "The party theme is jungle green", checkpoint=after_first)
    fork = head(app, "t1")
    assert found(app, "ada", "flamingo", "t1", fork) == []
    assert found(app, "ada", "jungle", "t1", fork) == ["The party theme is jungle green"]
    assert found(app, "ada", "jungle", "t1", main) == []
    assert found(app, "ada", "garden party", "t1", fork) == ["We are planning a garden party"]
    say(app, "ada", "t2", "another conversation")  # the user's other threads see every branch
    archive = archives.open(archive_spec(), "ada")
    assert archive is not None
    shown = render(archive.search("party theme", Window(lineage=lineage_of(
        app.checkpointer, "t2", head(app, "t2")))))  # fmt: skip
    assert "flamingo pink" in shown and "jungle green" in shown
    assert found(app, "bob", "party") == []


def test_the_tool_searches_within_the_branch(app: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    say(app, "ada", "t1", "My locker code is 4711")
    chat = ScriptedModel(messages=iter([
        AIMessage("", tool_calls=[{"name": "search_conversations", "id": "s1",
                                   "args": {"query": "locker", "since": "2000-01-01"}}]),
        AIMessage("Found it."),
        AIMessage("", tool_calls=[{"name": "search_conversations", "id": "s2",
                                   "args": {"query": "locker", "since": "last Tuesday"}}]),
        AIMessage("Tell me the date."),
    ]))  # fmt: skip
    monkeypatch.setattr(nodes, "load_chat_model", lambda name, **_: chat)
    state = say(app, "ada", "t1", "what was my locker code?")
    result = next(m for m in state["messages"] if isinstance(m, ToolMessage))
    assert "4711" in result.content and "thread t1" in result.content
    state = say(app, "ada", "t1", "and the week before?")
    result = [m for m in state["messages"] if isinstance(m, ToolMessage)][-1]
    assert result.content.startswith("Error:") and "YYYY-MM-DD" in result.content


def test_the_archive_rebuilt_from_the_checkpoints_is_the_live_one(
    app: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    say(app, "ada", "t1", "I live in Lisbon")
    first = head(app, "t1")
    say(app, "ada", "t1", "我下周要去上海出差")
    say(app, "ada", "t1", "Actually the trip is to Beijing", checkpoint=first)  # a fork
    say(app, "bob", "t2", "Bob's own thread about chess")
    chat = ScriptedModel(messages=iter([
        AIMessage("", tool_calls=[{"name": "get_current_time", "args": {}, "id": "c1"}]),
        AIMessage("It is late."),
    ]))  # fmt: skip
    monkeypatch.setattr(nodes, "load_chat_model", lambda name, **_: chat)
    say(app, "ada", "t3", "what time is it?")  # a tool result, archived as a preview
    live = {user: archives.open(archive_spec(), user) for user in ("ada", "bob")}
    rebuilt_folder = tmp_path / "rebuilt"
    counts = rebuild(app, lambda user: SqliteArchive(rebuilt_folder, user))
    for user, archive in live.items():
        assert archive is not None
        rebuilt = SqliteArchive(rebuilt_folder, user).messages()
        assert rebuilt == archive.messages() and counts[user] == len(rebuilt)
    roles = {m.role for m in live["ada"].messages()}  # type: ignore[union-attr]
    assert roles == {"user", "assistant", "tool"}


@pytest.mark.uses("compaction")
def test_a_failed_summary_trims_and_a_later_turn_compacts(
    app: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    answers = [RuntimeError("summary model down"), AIMessage("The user talks about rain.")]
    summarizer = ScriptedModel(messages=iter(answers))
    monkeypatch.setattr(compaction, "load_chat_model", lambda name, **_: summarizer)
    with use_settings(context_budget_tokens="800", compaction_cooldown_seconds=0):
        states = [
            say(app, "ada", "long", f"Turn {i}: it rained {i} millimetres in the garden today.")
            for i in range(40)
        ]
    statuses = [s.get("compaction", {}).get("status") for s in states]
    failed = statuses.index("failed")
    assert isinstance(states[failed]["messages"][-1], AIMessage)  # the turn still answered
    assert states[failed]["compaction"]["error"].endswith("summary model down")
    assert "compacted" in statuses[failed + 1 :]
    last = states[-1]
    assert last["summary"]["text"] == "The user talks about rain."
    assert last["cost"].get("summary", {}).get("calls", 0) in (0, 1)
    compacted = states[statuses.index("compacted")]
    assert compacted["cost"]["summary"]["calls"] == 1  # counted under "summary"


@pytest.mark.uses("compaction")
def test_the_offline_summary_is_extractive(app: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(compaction, "load_chat_model", lambda name, **_: OfflineChatModel())
    with use_settings(context_budget_tokens="800"):
        say(app, "ada", "x", "My sister Mei lives in Porto and teaches piano.")
        for i in range(40):
            state = say(app, "ada", "x", f"Turn {i}: it rained {i} millimetres today.")
    assert "Mei lives in Porto" in state["summary"]["text"]
    assert all("Mei" not in str(m.content) for m in state["messages"])  # left the state


@pytest.mark.postgres
def test_the_deployment_path_archives_into_postgres(app: Any) -> None:
    from memory.archive.postgres_archive import PostgresArchive
    from tests.integration.conftest import POSTGRES_URL, postgres_unreachable_reason

    if reason := postgres_unreachable_reason():
        pytest.skip(reason)
    user = f"pg-{uuid.uuid4().hex[:8]}"
    with use_settings(conversation_archive=f"postgres:{POSTGRES_URL}"):
        say(app, user, "t1", "我下周要去上海出差")
        say(app, user, "t1", "ok")
        try:
            assert found(app, user, "上海") == ["我下周要去上海出差"]
            assert isinstance(archives.open(archive_spec(), user), PostgresArchive)
        finally:
            PostgresArchive(POSTGRES_URL, user).clear()


@pytest.mark.uses("digests")
def test_a_day_is_sealed_into_a_digest_in_the_background(app: Any) -> None:
    say(app, "ada", "t1", "I adopted a puppy called Biscuit")
    say(app, "ada", "t1", "ok")
    archive = archives.open(archive_spec(), "ada")
    assert archive is not None
    deadline = time.monotonic() + 30
    while not archive.digests() and time.monotonic() < deadline:
        time.sleep(0.1)
    (digest,) = archive.digests()
    assert "Biscuit" in digest.text  # extractive: the offline model
    hits = archive.search("what happened today", Window(since=parse_day(digest.day))).hits
    assert hits and hits[0].digest is not None and "Biscuit" in hits[0].digest.text


@pytest.mark.uses("compaction")
def test_the_summary_is_not_streamed_as_a_reply(app: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    summarizer = ScriptedModel(messages=iter(["SECRET-SUMMARY of the rain talk"] * 5))
    monkeypatch.setattr(compaction, "load_chat_model", lambda name, **_: summarizer)
    streamed: list[str] = []
    with use_settings(context_budget_tokens="800"):
        for i in range(30):
            config = {"configurable": {"thread_id": "streamed"}}
            for chunk, _ in app.stream(
                {"messages": [{"role": "user", "content": f"Turn {i}: {i} mm of rain today."}]},
                config, context=Context(user_id="ada", model="offline/rules"),
                stream_mode="messages",
            ):  # fmt: skip
                streamed.append(str(chunk.content))
    assert summarizer.seen, "the conversation was never compacted"
    assert not any("SECRET-SUMMARY" in text for text in streamed)
