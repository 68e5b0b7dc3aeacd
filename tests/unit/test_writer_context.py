"""The memory writer reads the exchange before a turn as context, so that "yes, that's right"
after "is your sister called Mei?" means something, and never takes memories from it."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

import graph.nodes as nodes
import memory.integration.run_memory as run_memory
from graph.agent import compile_graph
from graph.context import Context
from memory.integration.settings import use_settings
from memory.text.messages import CONTEXT_CHARS, preceding_exchange
from memory.writer.turn import Turn
from tests.fakes import ScriptedModel


def test_the_context_is_a_few_messages_within_a_bound() -> None:
    session = [HumanMessage("x" * 5000), AIMessage("a1"), HumanMessage("u2"), AIMessage("a2"),
               HumanMessage("u3"), AIMessage("a3"), HumanMessage("the question")]  # fmt: skip
    earlier = preceding_exchange(session)
    assert [m["content"] for m in earlier] == ["u2", "a2", "u3", "a3"]
    long = preceding_exchange([HumanMessage("y" * 5000), AIMessage("ok"), HumanMessage("q")])
    assert sum(len(m["content"]) for m in long) <= CONTEXT_CHARS
    assert preceding_exchange([HumanMessage("first message")]) == []


def test_a_turn_carries_its_context_through_the_journal() -> None:
    context = ({"role": "assistant", "content": "Is your sister called Mei?"},)
    turn = Turn.of("ada", [{"role": "user", "content": "yes"}], context=context)
    assert Turn.from_json(turn.to_json()).context == context
    later = Turn.of("ada", [{"role": "user", "content": "she is 30"}])
    assert Turn.merge([turn, later]).context == context
    with pytest.raises(ValueError, match="context"):
        Turn.of("ada", [{"role": "user", "content": "yes"}],
                context=({"role": "user", "content": "z" * (CONTEXT_CHARS + 1)},))  # fmt: skip


def test_the_writer_sees_the_question_a_short_answer_answers(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    chat = ScriptedModel(messages=iter([AIMessage("Is your sister called Mei?"),
                                        AIMessage("Noted.")]))  # fmt: skip
    writer = ScriptedModel(messages=iter([AIMessage("Nothing."), AIMessage("Nothing.")]))
    monkeypatch.setattr(nodes, "load_chat_model", lambda name, **_: chat)
    monkeypatch.setattr(run_memory, "load_chat_model", lambda name, **_: writer)
    app = compile_graph(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    context = Context(user_id="ada", model="offline/rules")
    with use_settings(write_mode="inline", admission=False, embeddings="off"):
        app.invoke({"messages": [{"role": "user", "content": "I have a sister"}]}, config,
                   context=context)  # fmt: skip
        app.invoke({"messages": [{"role": "user", "content": "yes, that's right"}]}, config,
                   context=context)  # fmt: skip
    prompt = str(writer.seen[-1][-1].content)
    before, _, turn = prompt.partition("## New turn of conversation")
    assert before.startswith("## Earlier in the conversation (context only")
    assert "earlier, assistant:" in before and "Is your sister called Mei?" in before
    assert "earlier, user:" in before and "I have a sister" in before
    assert "yes, that's right" in turn and "Mei" not in turn
