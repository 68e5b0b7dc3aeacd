"""Compaction with summarisers that misbehave, through the compiled graph and a real SQLite
checkpointer: a summary as long as its input (or longer), an empty one, a failing one. The
prompt stays within the budget, the summary within its limit, and the status says the truth."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.messages.utils import count_tokens_approximately
from langgraph.checkpoint.sqlite import SqliteSaver

import graph.nodes as nodes
import memory.integration.compaction as compaction
from graph.agent import compile_graph
from graph.context import Context
from memory.integration.prompt_budget import summary_limit
from memory.integration.settings import use_settings
from tests.fakes import EchoingModel, ScriptedModel

pytestmark = pytest.mark.slow

BUDGET = 2_000


def said(turn: int) -> str:
    if turn % 7 == 0:
        return f"My cousin Ana moved to Porto on day {turn}; she teaches piano to {turn} pupils."
    return f"Turn {turn}: the weather report says light rain, about {turn} millimetres, then sun."


def replies() -> Iterator[str]:
    for turn in itertools.count(1):
        yield f"Reply {turn}: noted. It sounds like a quiet day; tell me more when you like."


def latest_turn_tokens(prompt: list[BaseMessage]) -> int:
    start = max(i for i, m in enumerate(prompt) if isinstance(m, HumanMessage))
    return count_tokens_approximately(prompt[start:])


def converse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, summarizer: Any, turns: int, budget: int
) -> tuple[ScriptedModel, list[dict[str, Any]]]:
    chat = ScriptedModel(messages=replies())
    monkeypatch.setattr(nodes, "load_chat_model", lambda name, **_: chat)
    monkeypatch.setattr(compaction, "load_chat_model", lambda name, **_: summarizer)
    states = []
    with (
        use_settings(
            memory_backend=f"sqlite:{tmp_path / 'memory.db'}", context_budget_tokens=str(budget),
            embeddings="off", compaction_cooldown_seconds=0, digests=False,
        ),
        SqliteSaver.from_conn_string(str(tmp_path / "threads.sqlite")) as saver,
    ):  # fmt: skip
        app = compile_graph(checkpointer=saver)
        config = {"configurable": {"thread_id": "long"}}
        context = Context(user_id="alice", model="offline/rules")
        for turn in range(1, turns + 1):
            state = app.invoke(
                {"messages": [{"role": "user", "content": said(turn)}]}, config, context=context
            )
            states.append(state)
    return chat, states


def test_a_verbose_summariser_over_three_hundred_turns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summarizer = EchoingModel(times=2)  # twice as long as what it was given
    chat, states = converse(tmp_path, monkeypatch, summarizer, 300, BUDGET)
    limit = summary_limit(BUDGET)
    statuses = [s.get("compaction", {}).get("status") for s in states]
    assert statuses.count("compacted") >= 10, statuses
    for prompt in chat.seen:  # every prompt the chat model was sent, system prompt included
        size = count_tokens_approximately(prompt)
        assert size <= BUDGET or size - latest_turn_tokens(prompt) <= BUDGET, size
    for state in states:
        assert len(state.get("summary", {}).get("text", "")) <= limit
        report = state.get("compaction") or {}
        if report.get("status") == "compacted":
            assert report["prompt_tokens"] <= BUDGET < report["prompt_tokens_before"]
            assert report["summary_chars"] <= limit and report["summary_bounded"]
        if report.get("status") == "over_budget":
            assert report["prompt_tokens"] > BUDGET and report["reason"]
    # The summary was asked for its limit, and capped by max_tokens.
    assert all(call.get("max_tokens") == limit // 4 + 50 for call in summarizer.calls)
    largest = max(len("".join(str(m.content) for m in p)) for p in chat.seen[-100:])
    assert largest < 16_000, largest


def test_an_empty_or_failing_summary_keeps_the_old_one_and_trims(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    good = "The user's cousin Ana moved to Porto. It rains a lot."
    answers = itertools.chain(
        [AIMessage(good)], itertools.cycle([AIMessage(""), RuntimeError("summary model down")])
    )
    summarizer = ScriptedModel(messages=answers)
    chat, states = converse(tmp_path, monkeypatch, summarizer, 80, 800)
    actions = [s.get("compaction", {}).get("action") for s in states]
    first = actions.index("compacted")
    assert "failed" in actions[first + 1 :], actions
    for state in states[first:]:
        assert state["summary"]["text"] == good  # kept, never replaced by nothing
    reports = [s.get("compaction", {}) for s in states]
    errors = {r["error"] for r in reports if r.get("action") == "failed"}
    assert any("answered nothing" in e for e in errors) and any("down" in e for e in errors)
    for prompt in chat.seen:
        size = count_tokens_approximately(prompt)
        assert size <= 800 or size - latest_turn_tokens(prompt) <= 800, size
    assert len(states[-1]["messages"]) > 40  # nothing could be folded: the agent trimmed
