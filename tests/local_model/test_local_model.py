"""Whole chat turns on a real small model (Qwen2.5-Coder-1.5B-Instruct, 4-bit, llama.cpp): what a
user checks after a few turns: facts kept in English and Chinese, a changed fact updated, a
forget request honoured, small talk ignored, a fact recalled in a new thread, "when did I tell
you" answered from the day a memory was said, and every turn answered within its tool-round
limit. Temperature 0 on both the chat and the writer."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from graph.agent import compile_graph
from graph.context import Context
from memory.integration.settings import Settings, use_settings
from memory.retrieval.evaluation import write_items
from memory.store.factory import open_memory_manager
from tests.dated_memories import said

MAX_TOOL_ROUNDS = 3
# The machine is shared: under load the model reads 20-60 prompt tokens/s instead of 120-170.
WRITER_TIMEOUT_SECONDS = 120.0
_users = itertools.count()


@pytest.fixture
def local(
    local_server: str, tmp_path: Path, clean_process: Settings, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Settings]:
    """Inline writes (done when the run returns) to YAML files, the json writer protocol (what
    docs/LOCAL_MODEL.md recommends for small models), every turn sent to the writer."""
    monkeypatch.setenv("OPENAI_BASE_URL", local_server)
    with use_settings(
        clean_process, memory_backend=f"yaml:{tmp_path}", write_mode="inline",
        writer_protocol="json", max_tool_rounds=MAX_TOOL_ROUNDS, admission=False,
        writer_timeout_seconds=WRITER_TIMEOUT_SECONDS,
    ) as settings:  # fmt: skip
        yield settings


class Chat:
    """One user talking to the graph on the real model, thread by thread."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.user = f"user{next(_users)}"
        self.app = compile_graph(checkpointer=InMemorySaver())
        self.context = Context(user_id=self.user, model="openai/local", writer_model="openai/local")

    def say(self, text: str, thread: str = "t1") -> dict[str, Any]:
        state = self.app.invoke(
            {"messages": [{"role": "user", "content": text}]},
            {"configurable": {"thread_id": thread}, "recursion_limit": 50},
            context=self.context,
        )
        check_within_tool_limit(state)
        return state

    def memories(self) -> list[str]:
        manager = open_memory_manager(self.settings.memory_backend, self.user)
        return [item.description for item in manager.list_items().values()]


def check_within_tool_limit(state: dict[str, Any]) -> None:
    """The turn ended on an answer (text, no pending call) within its tool rounds."""
    messages = state["messages"]
    last_user = max(i for i, m in enumerate(messages) if isinstance(m, HumanMessage))
    turn = messages[last_user + 1 :]
    rounds = [m for m in turn if isinstance(m, AIMessage) and m.tool_calls]
    assert len(rounds) <= MAX_TOOL_ROUNDS, [m.tool_calls for m in rounds]
    final = turn[-1]
    assert isinstance(final, AIMessage) and not final.tool_calls and final.text.strip()
    assert state["memory_write"]["status"] == "written", state["memory_write"]


def mentions(memories: list[str], *words: str) -> bool:
    return any(all(w.lower() in m.lower() for w in words) for m in memories)


def test_facts_in_english_are_stored_and_a_changed_fact_is_updated(local: Settings) -> None:
    chat = Chat(local)
    chat.say("My name is Li Wei and I live in Hangzhou.")
    stored = chat.memories()
    assert mentions(stored, "Li Wei") and mentions(stored, "Hangzhou"), stored
    chat.say("I moved to Shanghai last month.")
    stored = chat.memories()
    assert mentions(stored, "Shanghai"), stored
    assert not mentions(stored, "live", "Hangzhou"), stored  # updated, not kept beside it


def test_facts_in_chinese_are_stored(local: Settings) -> None:
    chat = Chat(local)
    chat.say("我叫王芳，在北京做老师。")
    stored = chat.memories()
    assert mentions(stored, "王芳") and mentions(stored, "北京"), stored


def test_forget_deletes_and_small_talk_stores_nothing(local: Settings) -> None:
    chat = Chat(local)
    chat.say("Hi there! How are you today?")
    assert chat.memories() == []
    chat.say("I like oolong tea.")
    assert mentions(chat.memories(), "oolong"), chat.memories()
    chat.say("Please forget that I like oolong tea.")
    assert not mentions(chat.memories(), "oolong"), chat.memories()


def test_a_new_thread_recalls_a_fact(local: Settings) -> None:
    chat = Chat(local)
    chat.say("My dog is called Biscuit.", thread="first")
    assert mentions(chat.memories(), "Biscuit"), chat.memories()
    state = chat.say("What is my dog called?", thread="second")
    assert any("Biscuit" in m["description"] for m in state["related_memories"])
    assert "Biscuit" in state["messages"][-1].text


def test_when_did_i_tell_you_is_answered_from_the_day_it_was_said(local: Settings) -> None:
    chat = Chat(local)
    manager = open_memory_manager(local.memory_backend, chat.user)
    write_items(manager, {"porto": said("The user moved to Porto.", "03-14"),
                          "dog": said("The user's dog is called Rex.", "01-20")})  # fmt: skip
    answer = chat.say("When did I tell you that I moved to Porto?")["messages"][-1].text
    assert "2024-03-14" in answer or "March 14" in answer or "14 March" in answer, answer
