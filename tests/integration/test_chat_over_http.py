"""The chat model's requests through the real OpenAI client over HTTP: a provider that answers
HTTP 500 (llama.cpp on output it cannot parse) is tried exactly once more, then the run fails
naming the provider's answer and the user's message stays in the thread; with
GULFSTREAM_MAX_TOOL_ROUNDS=0 no tool schema is sent (most of a small model's prompt)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from graph.agent import compile_graph
from graph.context import Context
from memory.integration.settings import Settings, use_settings
from memory.integration.tool_loop import ChatModelError
from prompts.persona import PERSONA
from tests.e2e.stub_openai import PARSE_FAILURE, STUB_MODEL, StubOpenAI

CONFIG = {"configurable": {"thread_id": "t1"}}


@pytest.fixture
def inline(tmp_path: Path, clean_process: Settings) -> Iterator[Settings]:
    with use_settings(clean_process, memory_backend=f"yaml:{tmp_path}", write_mode="inline") as s:
        yield s


def say(app: Any, text: str, model: str = "openai/local") -> dict[str, Any]:
    """One turn of user "u1" on `model` served at OPENAI_BASE_URL."""
    context = Context(user_id="u1", model=model, writer_model=model)
    return app.invoke({"messages": [{"role": "user", "content": text}]}, CONFIG, context=context)


def chat_tools_sent(stub: StubOpenAI) -> list[set[str]]:
    """The tool names of each request of the chat agent (its system prompt opens with the
    persona; the writer's and the archive digest's requests left out)."""
    return [
        {t["function"]["name"] for t in r.get("tools") or []}
        for r in stub.requests
        if str(r["messages"][0].get("content", "")).startswith(PERSONA["en"])
    ]


def chat_requests(stub: StubOpenAI) -> int:
    tools = ({t["function"]["name"] for t in r.get("tools") or []} for r in stub.requests)
    return sum(1 for names in tools if "create_memory" not in names)


def test_one_failed_request_is_tried_once_more_and_the_user_gets_the_answer(
    inline: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    with StubOpenAI(failing_chat_requests=1) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        state = say(compile_graph(checkpointer=InMemorySaver()), "Hi")
    assert state["messages"][-1].text.startswith("STUB")
    assert chat_requests(stub) == 2


def test_two_failed_requests_fail_the_run_with_the_providers_answer_and_keep_the_message(
    inline: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    with StubOpenAI(failing_chat_requests=100) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        app = compile_graph(checkpointer=InMemorySaver())
        with pytest.raises(ChatModelError, match=rf"openai/local failed twice.*{PARSE_FAILURE}"):
            say(app, "My name is Li Wei.")
        # Not the client's own retries on top: a local server that fails is asked twice.
        assert chat_requests(stub) == 2
    kept = app.get_state(CONFIG).values["messages"]
    assert [m.content for m in kept if isinstance(m, HumanMessage)] == ["My name is Li Wei."]


def test_no_tool_rounds_sends_no_tools_and_names_none(
    inline: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    with StubOpenAI() as stub, use_settings(inline, max_tool_rounds=0):
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        state = say(compile_graph(checkpointer=InMemorySaver()), "Hi", f"openai/{STUB_MODEL}")
    (chat,) = [r for r in stub.requests if not r.get("tools")]
    assert "search_memory" not in chat["messages"][0]["content"]
    assert not any(r.get("tools") and "search_memory" in str(r["tools"]) for r in stub.requests)
    assert state["messages"][-1].text.startswith("STUB")


def test_a_small_model_chats_without_tools_unless_the_server_allows_it_rounds(
    inline: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The 1.5B local model, given tools, wrote a lookup as text on most turns and answered the
    # lookup's result instead of the user (bench/local_conversation.py in docs/LOCAL_MODEL.md).
    with StubOpenAI() as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        app = compile_graph(checkpointer=InMemorySaver())
        say(app, "Hi", "openai/local")
        say(app, "Hi again", "openai/qwen2.5:3b")
        say(app, "And hello", f"openai/{STUB_MODEL}")
        with use_settings(inline, small_model_tool_rounds=2):
            say(app, "Hello once more", "openai/local")
    small, sized, large, allowed = chat_tools_sent(stub)
    assert small == set() and sized == set()
    assert "search_memory" in large and "search_memory" in allowed
