"""What starts a consolidation pass: the memory_consolidator graph, the local writer after N
writes or on idle, and the server hand-off queueing a consolidator run when one is due."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

import memory.integration.writing.consolidator_graph as memory_consolidator
from graph.agent import compile_graph
from graph.context import Context
from memory import LongTermMemory
from memory.integration.run_memory import open_run_memory
from memory.integration.settings import use_settings
from memory.integration.writing.consolidator_graph import graph as consolidator
from memory.store.factory import open_memory_manager
from memory.upkeep.consolidation import ConsolidationSchedule, ConsolidationTrigger
from memory.upkeep.consolidation.trigger import writes_since_pass
from memory.writer.local import local_writer

DUPLICATES = [
    "User likes jazz",
    "User enjoys jazz",
    "User's sister Anna lives in Oslo",
    "User runs 5 km every morning",
    "User's friend Tom is a pilot",
]


def _store(tmp_path: Path) -> Any:
    return open_memory_manager(f"yaml:{tmp_path / 'memory'}", "alice")


def test_the_consolidator_graph_runs_a_pass_and_returns_its_report(tmp_path: Path) -> None:
    manager = _store(tmp_path)
    ids = [manager.add(text, "notes") for text in DUPLICATES]
    state = consolidator.invoke({"reason": "test"}, context=Context(user_id="alice"))
    report = state["report"]
    # The longer, equally complete text survives; the other is merged into it.
    assert report["merged"] == {ids[1]: [ids[0]]} and report["kept"] == 4 and not report["refused"]
    assert Path(report["snapshot"]).exists()
    assert _store(tmp_path).get(ids[0], include_deleted=True).deleted


@pytest.mark.slow  # fifty writer runs
async def test_the_local_writer_runs_a_pass_after_n_writes(tmp_path: Path) -> None:
    app = compile_graph(checkpointer=InMemorySaver())
    context = Context(user_id="alice", model="offline/rules")
    with use_settings(consolidate_every_writes=2, write_mode="local", consolidate_idle_seconds=0):
        memory = open_run_memory_for(context)
        await app.ainvoke(
            {"messages": [("user", "I live in Oslo.")]}, _thread("a"), context=context
        )
        await asyncio.wrap_future(local_writer.drain())
        assert writes_since_pass(memory) == 1
        await app.ainvoke(
            {"messages": [("user", "I work at Acme.")]}, _thread("b"), context=context
        )
        await asyncio.wrap_future(local_writer.drain())
        assert writes_since_pass(memory) == 0  # the pass ran after the second write and reset it
    assert list((tmp_path / "memory" / "consolidation").glob("*.writes.json"))


def open_run_memory_for(context: Context) -> LongTermMemory:
    class _Runtime:
        def __init__(self) -> None:
            self.context, self.store = context, None

    return open_run_memory(_Runtime(), {"configurable": {}}).memory  # type: ignore[arg-type]


def _thread(name: str) -> Any:
    return {"configurable": {"thread_id": name}}


class _Applied:
    applied = True


async def write(memory: LongTermMemory, trigger: ConsolidationTrigger, said: str) -> None:
    """One applied writer run, then the hook the queue calls after it."""
    memory.manager.add(f"User said {said}", "notes")
    await trigger.hook(memory)(_Applied())


async def test_an_idle_spell_after_a_write_runs_a_pass(tmp_path: Path) -> None:
    memory = LongTermMemory(_store(tmp_path), embeddings="off")
    trigger = ConsolidationTrigger(ConsolidationSchedule(every_writes=0, idle_seconds=0.2))
    await write(memory, trigger, "one")
    assert writes_since_pass(memory) == 1
    # The pass starts after 0.2 quiet seconds; how long it then takes depends on the machine's
    # load (a fixed 0.6 s wait failed once in a full run), so wait for it, within 10 s.
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 10
    while writes_since_pass(memory) and loop.time() < deadline:
        await asyncio.sleep(0.05)
    assert writes_since_pass(memory) == 0


async def test_nearing_capacity_makes_a_pass_due(tmp_path: Path) -> None:
    memory = LongTermMemory(_store(tmp_path), embeddings="off")
    for text in DUPLICATES[:4]:
        memory.manager.add(text, "notes")
    runs: list[str] = []
    trigger = ConsolidationTrigger(
        ConsolidationSchedule(every_writes=0, idle_seconds=0, capacity=5)
    )

    async def counted(memory: LongTermMemory, reason: str) -> None:
        runs.append(reason)

    trigger.run_pass = counted  # type: ignore[method-assign]
    await write(memory, trigger, "five")
    assert runs == ["capacity"]


async def test_the_server_hand_off_queues_a_consolidator_run_when_due(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    created: list[dict[str, Any]] = []

    class _Runs:
        async def create(self, thread_id: str, graph_id: str, **options: Any) -> None:
            created.append({"thread": thread_id, "graph": graph_id, **options})

    class _Client:
        runs = _Runs()

    import langgraph_sdk

    monkeypatch.setattr(langgraph_sdk, "get_client", lambda: _Client())
    with use_settings(consolidate_every_writes=2):
        run = open_run_memory(_RuntimeFor(Context(user_id="alice")), {"configurable": {}})  # type: ignore[arg-type]
        assert await memory_consolidator.schedule_pass(run) == ""
        assert await memory_consolidator.schedule_pass(run) == "writes"
    assert [c["graph"] for c in created] == ["memory_consolidator"]
    assert created[0]["multitask_strategy"] == "enqueue" and created[0]["context"] == {
        "user_id": "alice"
    }


class _RuntimeFor:
    def __init__(self, context: Context) -> None:
        self.context, self.store = context, None
