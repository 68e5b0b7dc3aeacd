"""The read node only reads: a forget is settled where what it changed is read, the running
summary by the compaction node, the archive by whoever searches it, never before every reply."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

import memory.archive.reconcile as reconciling  # feature: archive
from graph.agent import compile_graph
from graph.context import Context
from memory.integration.settings import Settings, use_settings
from memory.store.factory import open_memory_manager

READ_KEYS = {"related_memories", "core_context", "cost", "user_id", "said_recently",
             "standing_instructions", "private", "take_back", "coming_up"}  # fmt: skip
ADDRESS = "Hangzhou, 18 Wenyi Road"
CONFIG = {"configurable": {"thread_id": "t1"}}


@pytest.fixture
def inline(tmp_path: Path, clean_process: Settings) -> Iterator[Settings]:
    with use_settings(
        clean_process, memory_backend=f"yaml:{tmp_path}", write_mode="inline",
        context_budget_tokens="100000",  # compaction on, never needed: the summary alone is kept
    ) as settings:  # fmt: skip
        yield settings


async def _turn(app: Any, text: str) -> list[dict[str, Any]]:
    """One turn of thread t1; the nodes' updates in order."""
    updates = []
    async for chunk in app.astream(
        {"messages": [{"role": "user", "content": text}]},
        {"configurable": {"thread_id": "t1"}},
        context=Context(user_id="ada", model="offline/rules"),
        stream_mode="updates",
    ):
        updates.append(chunk)
    return updates


async def _forgotten_address_in_the_summary(app: Any, settings: Settings) -> None:
    """Thread t1 after a turn that filed the address, with a running summary that carries it and
    the address then forgotten."""
    await _turn(app, f"I live in {ADDRESS}.")
    manager = open_memory_manager(settings.memory_backend, "ada")
    [memory_id] = [k for k, i in manager.list_items().items() if "Hangzhou" in i.description]
    summary = {"text": f"The user said they live in {ADDRESS}. They like tea.", "messages": 2}
    await app.aupdate_state(CONFIG, {"summary": summary}, as_node="ltm_write")
    manager.forget(memory_id, "the user asked")


async def test_after_a_forget_the_read_node_writes_nothing(
    inline: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = compile_graph(checkpointer=InMemorySaver())
    await _forgotten_address_in_the_summary(app, inline)
    calls: list[Any] = []  # feature: archive
    monkeypatch.setattr(reconciling, "reconcile", lambda *a: calls.append(a))  # feature: archive
    updates = await _turn(app, "What should I cook tonight?")
    [read] = [u["retrieve_memory"] for u in updates if "retrieve_memory" in u]
    assert set(read) <= READ_KEYS  # no summary, no archive: it only reads
    assert calls == []  # no search this turn: nothing reconciled the archive  # feature: archive


@pytest.mark.uses("compaction")
async def test_after_a_forget_the_compaction_node_clears_the_running_summary(
    inline: Settings,
) -> None:
    app = compile_graph(checkpointer=InMemorySaver())
    await _forgotten_address_in_the_summary(app, inline)
    updates = await _turn(app, "What should I cook tonight?")
    [compacted] = [u["compact"] for u in updates if "compact" in u]
    assert "Hangzhou" not in compacted["summary"]["text"] and "tea" in compacted["summary"]["text"]
    state = await app.aget_state(CONFIG)
    assert "Hangzhou" not in state.values["summary"]["text"]


async def test_without_compaction_no_running_summary_reaches_the_prompt(
    tmp_path: Path, clean_process: Settings
) -> None:
    from graph.state import State
    from memory.integration.answering import prompt_inputs

    state = State(summary={"text": f"The user lives in {ADDRESS}."})
    context = Context(user_id="ada", model="offline/rules")
    assert "Wenyi" in prompt_inputs(state, context, budget=100_000)[1]
    # Compaction off: no node keeps a summary clear of what was forgotten, so none is shown.
    assert prompt_inputs(state, context, budget=None)[1] == ""
