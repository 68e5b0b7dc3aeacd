"""The archive holds what people said: tool results are stored but never searched, a reply that
quotes a search result is archived without the quote, and a text said twice in a thread is
kept once; on real SQLite files and the local PostgreSQL, and through the chat graph."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.sqlite import SqliteSaver

import graph.nodes as nodes
from graph.agent import compile_graph
from graph.context import Context
from memory.archive import ArchivedMessage, ConversationArchive, Window, archives
from memory.integration.archive_location import archive_spec
from memory.integration.settings import use_settings
from memory.store.branch import Lineage
from tests.fakes import ScriptedModel

pytestmark = pytest.mark.slow

FACT = "My locker code at the gym is 4711, on the second floor by the pool."


@pytest.fixture
def archive(each_archive: ConversationArchive) -> ConversationArchive:
    return each_archive


def message(archive: ConversationArchive, text: str, role: str = "user", thread: str = "t1",
            checkpoint: str = "c1", when: float = 1_000.0) -> ArchivedMessage:  # fmt: skip
    return ArchivedMessage(archive.user_id, thread, checkpoint, uuid.uuid4().hex, role, text, when)


def test_tool_results_are_stored_but_never_searched(archive: ConversationArchive) -> None:
    said = message(archive, FACT, when=1_000.0)
    result = message(archive, f"[search_conversations] <conversation_archive> {FACT}", "tool",
                     when=2_000.0)  # fmt: skip
    reply = message(archive, "Noted: the pool is warm today.", "assistant", when=3_000.0)
    assert archive.add([said, result, reply]) == 3
    assert {m.role for m in archive.messages()} == {"user", "tool", "assistant"}
    hits = archive.search("locker code 4711").hits
    assert [h.anchor.content for h in hits] == [FACT]
    assert all(m.role != "tool" for h in hits for m in h.around)  # not even as context
    assert archive.search("search_conversations").hits == ()


def test_a_text_said_twice_in_a_thread_is_kept_once(archive: ConversationArchive) -> None:
    first = [message(archive, FACT), message(archive, "ok", "user")]
    archive.add(archive.new_messages(first, Window()))
    again = [
        message(archive, FACT, checkpoint="c2", when=2_000.0),  # pasted again, another id
        message(archive, "ok", "user", checkpoint="c2", when=2_000.0),  # short: the flow
        message(archive, FACT, thread="t2", checkpoint="d1", when=2_000.0),  # another thread
    ]
    fresh = archive.new_messages(again, Window(lineage=Lineage("t1", frozenset({"c1", "c2"}))))
    archive.add(fresh)
    texts = [(m.thread_id, m.content) for m in archive.messages()]
    assert texts.count(("t1", FACT)) == 1 and texts.count(("t1", "ok")) == 2
    assert texts.count(("t2", FACT)) == 1
    assert [h.anchor.thread_id for h in archive.search("locker code").hits] == ["t2", "t1"]


def quoting_turns(turns: int) -> Iterator[AIMessage]:
    yield AIMessage("Noted.")  # the turn that tells the fact
    for turn in range(turns):
        yield AIMessage("", tool_calls=[{"name": "search_conversations", "id": f"s{turn}",
                                         "args": {"query": "locker code 4711"}}])  # fmt: skip
        yield AIMessage(f'I found it. You said: "{FACT}" Shall I remind you on Monday?')


def test_searches_never_find_earlier_searches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chat = ScriptedModel(messages=quoting_turns(6))
    monkeypatch.setattr(nodes, "load_chat_model", lambda name, **_: chat)
    user = "ada"
    with (
        use_settings(memory_backend=f"sqlite:{tmp_path / 'memory.db'}", embeddings="off",
                     digests=False),
        SqliteSaver.from_conn_string(str(tmp_path / "threads.sqlite")) as saver,
    ):  # fmt: skip
        app = compile_graph(checkpointer=saver)
        context = Context(user_id=user, model="offline/rules")
        app.invoke({"messages": [{"role": "user", "content": FACT}]},
                   {"configurable": {"thread_id": "gym"}},
                   context=context)  # fmt: skip
        results = []
        for turn in range(6):
            state = app.invoke(
                {"messages": [{"role": "user", "content": f"Question {turn}: my locker?"}]},
                {"configurable": {"thread_id": f"ask-{turn}"}}, context=context,
            )  # fmt: skip
            results.append([m for m in state["messages"] if isinstance(m, ToolMessage)][-1])
        archive = archives.open(archive_spec(), user)
        assert archive is not None
        for result in results:
            text = str(result.content)
            assert text.count("4711") == 1, text  # the message itself, never a copy of it
            assert text.count("<conversation_archive>") == 1 and "tool result" not in text
        replies = [m for m in archive.messages() if m.role == "assistant" and m.thread_id != "gym"]
        assert len(replies) == 6
        assert all("4711" not in m.content and "Monday" in m.content for m in replies)
        assert all("[quoted from the conversation archive]" in m.content for m in replies)
