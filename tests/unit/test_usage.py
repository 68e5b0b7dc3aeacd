"""Cost accounting: model calls and tokens by purpose, per run (the state) and per user (the
ledger), for the chat, retrieval and the background writer."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

import memory.integration.run_memory as run_memory
from graph.agent import compile_graph
from graph.context import Context
from memory.long_term import TRACE_FILE
from memory.usage.counts import Usage, UsageMeter, describe
from memory.usage.metering import metered
from memory.writer.local import local_writer
from memory.writer.trace import UsageLedger
from tests.fakes import ScriptedModel


def test_metered_counts_each_call_with_the_providers_tokens_or_an_estimate() -> None:
    reported = AIMessage("hi", usage_metadata={"input_tokens": 120, "output_tokens": 7,
                                               "total_tokens": 127})  # fmt: skip
    model = ScriptedModel(messages=iter([reported, AIMessage("unreported"), AIMessage("x")]))
    meter = UsageMeter()
    with metered(meter, "chat"):
        model.invoke([HumanMessage("hello")])
    with metered(meter, "retrieval"):
        model.invoke([HumanMessage("which memories matter here?")])
    model.invoke([HumanMessage("outside any meter")])
    usage = meter.by_purpose()
    assert usage["chat"] == Usage(1, 120, 7)
    assert usage["retrieval"].calls == 1 and usage["retrieval"].input_tokens > 0
    assert "writer" not in usage
    assert describe(usage).startswith("chat 1 call (120 in / 7 out tokens), retrieval 1 call")


async def test_metered_follows_async_calls_and_counts_failed_ones() -> None:
    model = ScriptedModel(messages=iter([AIMessage("ok"), RuntimeError("503")]))
    meter = UsageMeter()
    with metered(meter, "writer"):
        await model.ainvoke([HumanMessage("a")])
        with pytest.raises(Exception):  # noqa: B017 - the fake fails its own way; any failure
            await asyncio.create_task(model.ainvoke([HumanMessage("b")]))  # a task of its own
    assert meter.by_purpose()["writer"].calls == 2
    with pytest.raises(ValueError, match="purpose"):
        meter.record("gossip", 1, 1)


def test_the_ledger_sums_a_users_runs_by_purpose(tmp_path: Path) -> None:
    ledger = UsageLedger(tmp_path / "ledger.sqlite")
    ledger.record("ada", "turn-1", {"chat": Usage(1, 100, 10)}, "t1")
    ledger.record("ada", "turn-1", {"chat": Usage(1, 100, 12)}, "t1")  # a rerun replaces
    ledger.record("ada", "writer:turn-1", {"writer": Usage(2, 900, 30)}, "t1")
    ledger.record("bob", "turn-9", {"chat": Usage(1, 50, 5)})
    assert ledger.totals("ada") == {"chat": Usage(1, 100, 12), "writer": Usage(2, 900, 30)}
    assert ledger.for_run("ada", "writer:turn-1") == {"writer": Usage(2, 900, 30)}
    assert ledger.totals("nobody") == {}


async def test_a_run_reports_its_cost_and_the_user_ledger_adds_the_writer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The chat on the offline model (estimated tokens) with LLM retrieval through a scripted
    ranking model: the run's state says chat 1 call and retrieval 1 call; once the background
    writer ran, the user's ledger holds its calls too."""
    ranking = ScriptedModel(messages=iter([AIMessage("[]")]))

    def load(name: str, **options: Any) -> Any:
        from memory.integration.models.offline import OfflineChatModel

        return OfflineChatModel()

    monkeypatch.setattr(run_memory, "load_chat_model", load)
    monkeypatch.setattr(run_memory.RunMemory, "ranking_model", lambda self: ranking)
    app = compile_graph(checkpointer=InMemorySaver())
    context = Context(user_id="alice", model="offline/rules", retrieval_mode="llm")
    config = {"configurable": {"thread_id": "t1"}}
    await app.ainvoke({"messages": [{"role": "user", "content": "Remember: I like tea."}]},
                      config, context=context)  # fmt: skip
    app_state = await app.aget_state(config)
    state = app_state.values
    # No memories yet, so LLM retrieval had nothing to rank: its model was not called.
    assert set(state["cost"]) == {"chat"} and state["cost"]["chat"]["calls"] == 1
    await asyncio.wait_for(asyncio.wrap_future(local_writer.drain()), 60)
    second = await app.ainvoke(
        {"messages": [{"role": "user", "content": "What do I drink?"}]}, config, context=context
    )
    assert second["cost"]["retrieval"]["calls"] == 1  # a memory exists now: the model ranked
    assert second["cost"]["chat"]["calls"] == 1
    totals = UsageLedger(tmp_path / "memory" / TRACE_FILE).totals("alice")
    assert totals["chat"].calls == 2 and totals["retrieval"].calls == 1
    assert totals["writer"].calls >= 1 and totals["writer"].input_tokens > 0
