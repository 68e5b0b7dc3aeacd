"""The chat graph's tool loop is bounded and a provider error is retried once, then named: a
model that calls the same tool forever, one that never stops calling tools, an HTTP 500."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

import graph.nodes as nodes
from graph.agent import compile_graph
from graph.context import Context
from memory.integration.settings import Settings, use_settings
from memory.integration.tool_loop import ChatModelError
from memory.prompts.chat_loop import NO_WORDS
from tests.fakes import ScriptedModel

_ids = itertools.count()


def asks(name: str, **args: Any) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"c{next(_ids)}"}])


@pytest.fixture
def inline(tmp_path: Path, clean_process: Settings) -> Iterator[Settings]:
    with use_settings(clean_process, memory_backend=f"yaml:{tmp_path}", write_mode="inline") as s:
        yield s


def chat_with(monkeypatch: pytest.MonkeyPatch, answers: Iterator[Any]) -> ScriptedModel:
    model = ScriptedModel(messages=answers)
    monkeypatch.setattr(nodes, "load_chat_model", lambda name, **_: model)
    # The run names its model: it must look reachable for the run to start (never called).
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")
    return model


def system_text(request: list[Any]) -> str:
    """What a request's system messages say (the instructions, then this turn's context)."""
    return "\n".join(str(m.content) for m in request if isinstance(m, SystemMessage))


async def say(app: Any, text: str, thread: str = "t1") -> dict[str, Any]:
    return await app.ainvoke(
        {"messages": [{"role": "user", "content": text}]},
        {"configurable": {"thread_id": thread}, "recursion_limit": 200},
        context=Context(user_id="dana", model="openai/scripted", writer_model="offline/rules"),
    )


async def test_the_same_call_again_is_answered_from_its_first_result(inline, monkeypatch):
    same = (asks("search_memory", query="Daniela Ortiz") for _ in range(3))
    model = chat_with(monkeypatch, iter([*same, AIMessage("Nice to meet you, Daniela!")]))
    state = await say(compile_graph(checkpointer=InMemorySaver()), "Hi! I am Daniela Ortiz.")
    assert state["messages"][-1].content == "Nice to meet you, Daniela!"
    results = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert len(results) == 3 and "already made in this turn" in results[1].content
    assert results[1].content.startswith(results[0].content)  # the first result, not a rerun
    assert len(model.seen) == 4


async def test_a_model_that_never_stops_calling_tools_answers_after_the_limit(inline, monkeypatch):
    endless = (asks("search_memory", query=f"q{i}") for i in itertools.count())
    model = chat_with(monkeypatch, endless)
    with use_settings(inline, max_tool_rounds=3):
        state = await say(compile_graph(checkpointer=InMemorySaver()), "Tell me everything.")
    last = state["messages"][-1]
    assert isinstance(last, AIMessage) and not last.tool_calls and last.content
    rounds = [m for m in state["messages"] if isinstance(m, AIMessage) and m.tool_calls]
    assert len(rounds) == 3 and len(model.seen) == 4  # three rounds, then one answer
    assert "Tool limit" in system_text(model.seen[-1])  # the last call is told to answer
    assert state["memory_write"]["status"] in ("written", "skipped")  # the turn finished


async def test_the_limit_counts_this_turn_only(inline, monkeypatch):
    answers = iter([asks("search_memory", query="a"), AIMessage("one"),
                    asks("search_memory", query="b"), AIMessage("two")])  # fmt: skip
    model = chat_with(monkeypatch, answers)
    app = compile_graph(checkpointer=InMemorySaver())
    with use_settings(inline, max_tool_rounds=1):
        await say(app, "first")
        state = await say(app, "second")
    assert state["messages"][-1].content == "two"
    assert "Tool limit" not in system_text(model.seen[2])  # a new turn starts with tools again


async def test_a_provider_error_is_retried_once(inline, monkeypatch):
    chat_with(monkeypatch, iter([RuntimeError("HTTP 500"), AIMessage("Hello!")]))
    state = await say(compile_graph(checkpointer=InMemorySaver()), "Hi")
    assert state["messages"][-1].content == "Hello!"


async def test_a_provider_failing_twice_fails_the_run_with_its_answer_and_keeps_the_message(
    inline, monkeypatch
):
    answer = "Error code: 500 - the model produced output that does not match the expected format"
    chat_with(monkeypatch, iter([RuntimeError(answer), RuntimeError(answer)]))
    app = compile_graph(checkpointer=InMemorySaver())
    with pytest.raises(ChatModelError, match=r"failed twice.*does not match the expected format"):
        await say(app, "My name is Li Wei.")
    kept = app.get_state({"configurable": {"thread_id": "t1"}}).values["messages"]
    assert [m.content for m in kept if isinstance(m, HumanMessage)] == ["My name is Li Wei."]


async def test_a_tool_call_written_as_text_in_a_code_fence_is_run(inline, monkeypatch):
    written = '```json\n{\n  "name": "search_memory",\n  "arguments": {"query": "dog"}\n}\n```'
    chat_with(monkeypatch, iter([AIMessage(written), AIMessage("Your dog is Biscuit.")]))
    state = await say(compile_graph(checkpointer=InMemorySaver()), "What is my dog called?")
    calls = [m for m in state["messages"] if isinstance(m, AIMessage) and m.tool_calls]
    assert calls and calls[0].tool_calls[0]["name"] == "search_memory"
    assert any(isinstance(m, ToolMessage) for m in state["messages"])
    assert state["messages"][-1].content == "Your dog is Biscuit."


async def test_an_empty_answer_after_a_tool_result_is_asked_once_more(inline, monkeypatch):
    # What the 1.5B model did: a bare end-of-text after reading the tool's result.
    answers = iter([asks("search_memory", query="dog"), AIMessage(""), AIMessage("It is Rex.")])
    model = chat_with(monkeypatch, answers)
    state = await say(compile_graph(checkpointer=InMemorySaver()), "What is my dog called?")
    assert state["messages"][-1].content == "It is Rex."
    assert "in words" in system_text(model.seen[-1])


async def test_an_answer_wrapped_in_the_templates_tool_response_tags_reaches_the_user_bare(
    inline, monkeypatch
):
    # The 1.5B model copies its chat template's tool-result wrapper around its answer.
    wrapped = "<tool_response>\nI'm doing well, thank you! How about you?\n</tool_response>"
    chat_with(monkeypatch, iter([AIMessage(wrapped)]))
    state = await say(compile_graph(checkpointer=InMemorySaver()), "Hi there! How are you?")
    assert state["messages"][-1].content == "I'm doing well, thank you! How about you?"


async def test_an_answer_at_the_tool_limit_is_asked_without_tools_with_the_results_in_the_prompt(
    inline, monkeypatch
):
    # The 1.5B model at its tool limit: three identical calls, then end-of-text twice.
    calls = [asks("search_memory", query="dog") for _ in range(3)]
    answers = iter([*calls, AIMessage(""), AIMessage("It is Rex.")])
    model = chat_with(monkeypatch, answers)
    with use_settings(max_tool_rounds=3):
        state = await say(compile_graph(checkpointer=InMemorySaver()), "What is my dog called?")
    assert state["messages"][-1].content == "It is Rex."
    last = model.seen[-1]
    assert "Found with tools in this turn" in system_text(last)
    assert last[-1].content == "What is my dog called?"  # no tool exchange after the question
    assert "search_memory" not in str(model.seen[-1])  # no tool named: none is bound


async def test_a_model_that_never_answers_in_words_leaves_the_user_a_sentence_not_a_blank(
    inline, monkeypatch
):
    chat_with(monkeypatch, iter([AIMessage("")] * 3))
    state = await say(compile_graph(checkpointer=InMemorySaver()), "Hi")
    assert state["messages"][-1].content == NO_WORDS
