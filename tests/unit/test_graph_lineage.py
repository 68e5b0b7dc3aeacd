"""memory.integration.lineage on a real SqliteSaver: ancestor chains across turns and forks, the
cache."""

from __future__ import annotations

import logging
import operator
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.config import get_config
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

import memory.integration.lineage as lineage_module
import memory.integration.run_memory as run_memory
from graph.agent import compile_graph
from graph.context import Context
from memory.integration.lineage import (
    acurrent_lineage,
    checkpoint_is_saved,
    current_checkpoint_id,
    current_lineage,
    parent_cache,
)
from memory.integration.settings import use_settings
from memory.store.branch import Lineage
from memory.store.factory import open_memory_manager


class Steps(TypedDict):
    log: Annotated[list[str], operator.add]


def build(
    seen: list[tuple[str, Lineage | None]], checkpointer: Any = None, async_last: bool = False
) -> Any:
    """Two nodes, each recording the lineage it sees; the second one async if asked."""

    def first(state: Steps) -> dict:
        seen.append((current_checkpoint_id(get_config()), current_lineage(get_config())))
        return {"log": ["first"]}

    async def last_async(state: Steps) -> dict:
        config = get_config()
        seen.append((current_checkpoint_id(config), await acurrent_lineage(config)))
        return {"log": ["last"]}

    builder = StateGraph(Steps)
    builder.add_node("first", first)
    builder.add_node("last", last_async if async_last else first)
    builder.add_edge(START, "first")
    builder.add_edge("first", "last")
    builder.add_edge("last", END)
    return builder.compile(checkpointer=checkpointer)


def history_ids(app: Any, config: dict) -> list[str]:
    return [s.config["configurable"]["checkpoint_id"] for s in app.get_state_history(config)]


@pytest.fixture(autouse=True)
def empty_cache() -> Iterator[None]:
    parent_cache.clear()
    yield
    parent_cache.clear()


@pytest.fixture
def saver(tmp_path: Path) -> Iterator[SqliteSaver]:
    conn = sqlite3.connect(tmp_path / "threads.sqlite", check_same_thread=False)
    yield SqliteSaver(conn)
    conn.close()


@pytest.mark.parametrize("kind", ["sqlite", "memory", "get_tuple"])
def test_lineage_is_the_whole_ancestor_chain_and_excludes_a_fork_sibling(
    saver: SqliteSaver, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if kind == "get_tuple":  # a checkpointer without a fast path for parent links
        monkeypatch.setattr(lineage_module, "read_parent_links", lambda *args: None)
    seen: list[tuple[str, Lineage | None]] = []
    app = build(seen, InMemorySaver() if kind == "memory" else saver)
    thread = {"configurable": {"thread_id": "t1"}}
    app.invoke({"log": ["turn 1"]}, thread)
    after_turn_1 = history_ids(app, thread)
    app.invoke({"log": ["turn 2"]}, thread)
    turn_2_only = set(history_ids(app, thread)) - set(after_turn_1)

    current, lineage = seen[-1]
    assert lineage is not None and lineage.thread_id == "t1"
    # Every checkpoint of the thread so far is an ancestor, the one the step started from too.
    assert current in lineage.checkpoint_ids
    assert set(history_ids(app, thread)) - lineage.checkpoint_ids <= {history_ids(app, thread)[0]}

    # A new run from the end of turn 1: a sibling of turn 2.
    fork_point = {"configurable": {"thread_id": "t1", "checkpoint_id": after_turn_1[0]}}
    app.invoke({"log": ["fork"]}, fork_point)
    fork_current, fork_lineage = seen[-1]
    assert fork_lineage is not None
    assert set(after_turn_1) <= fork_lineage.checkpoint_ids
    assert not turn_2_only & fork_lineage.checkpoint_ids
    assert fork_current not in lineage.checkpoint_ids  # and turn 2 never sees the fork


def test_a_cold_walk_reads_the_parent_links_in_one_query(saver: SqliteSaver) -> None:
    seen: list[tuple[str, Lineage | None]] = []
    app = build(seen, saver)
    thread = {"configurable": {"thread_id": "t-cold"}}
    for turn in range(10):
        app.invoke({"log": [f"turn {turn}"]}, thread)
    warm = seen[-1][1]
    parent_cache.clear()  # a new process
    app.invoke({"log": ["turn 11"]}, thread)
    cold = seen[-2][1]
    assert warm is not None and cold is not None and warm.checkpoint_ids < cold.checkpoint_ids
    assert len(cold.checkpoint_ids) > 30
    # Counted on a walk with no save in flight: inside a run, each wait for the checkpoint the
    # step started from adds a read, and how many waits a loaded machine makes varies.
    newest = history_ids(app, thread)[0]
    parent_cache.clear()
    walked = lineage_module.lineage_of(saver, "t-cold", newest)
    assert cold.checkpoint_ids < walked.checkpoint_ids
    assert parent_cache.reads == 1  # one query for every link, not one per checkpoint


def test_other_checkpointers_walk_get_tuple_and_fetch_only_new_checkpoints(
    saver: SqliteSaver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lineage_module, "read_parent_links", lambda *args: None)
    fetched: list[str] = []
    original_get_tuple = saver.get_tuple

    def recording_get_tuple(config: Any) -> Any:
        found = original_get_tuple(config)
        if found is not None and "checkpoint_id" in config["configurable"]:
            fetched.append(config["configurable"]["checkpoint_id"])
        return found

    monkeypatch.setattr(saver, "get_tuple", recording_get_tuple)
    seen: list[tuple[str, Lineage | None]] = []
    app = build(seen, saver)
    thread = {"configurable": {"thread_id": "t-generic"}}
    for turn in range(5):
        app.invoke({"log": [f"turn {turn}"]}, thread)
    before = history_ids(app, thread)
    fetched.clear()
    app.invoke({"log": ["turn 6"]}, thread)
    assert fetched and len(fetched) == len(set(fetched))  # each checkpoint read once
    # Only checkpoints written since the last lineage: turn 6's and the end of turn 5.
    assert not set(fetched) & set(before[1:])
    assert seen[-1][1] is not None and set(before) < seen[-1][1].checkpoint_ids


def test_without_a_checkpointer_there_is_no_lineage() -> None:
    seen: list[tuple[str, Lineage | None]] = []
    build(seen).invoke({"log": ["x"]})
    assert seen == [("", None), ("", None)]


def test_durability_exit_does_not_wait_and_reports_its_checkpoint_unsaved(
    saver: SqliteSaver,
) -> None:
    seen: list[tuple[str, Lineage | None]] = []
    app = build(seen, saver)
    thread = {"configurable": {"thread_id": "t-exit"}}
    app.invoke({"log": ["turn 1"]}, thread)
    saved_current, _ = seen[-1]
    started = time.monotonic()
    app.invoke({"log": ["turn 2"]}, thread, durability="exit")
    assert time.monotonic() - started < 4  # not the 5 s wait for a save that never comes
    current, lineage = seen[-1]
    # Reads still see user memories and no branch memory of the unknown part; a write must not
    # stamp a branch memory with `current`, which is never saved: no run descends from it.
    assert lineage is not None and lineage.checkpoint_ids == {current}
    assert current not in history_ids(app, thread)
    assert not checkpoint_is_saved("t-exit", current)
    assert checkpoint_is_saved("t-exit", saved_current)


@pytest.mark.slow  # three turns and their writes on a SQLite checkpointer
def test_a_durability_exit_turn_writes_user_scope_memories_the_next_turn_sees(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run_memory, "_told_unsaved_origin", False)
    context = Context(user_id="ada", model="offline/rules")
    with (
        use_settings(memory_backend=f"yaml:{tmp_path}", write_mode="inline"),
        SqliteSaver.from_conn_string(str(tmp_path / "threads.sqlite")) as saver,
    ):
        app = compile_graph(checkpointer=saver)
        thread = {"configurable": {"thread_id": "t1"}}
        with caplog.at_level(logging.WARNING, logger="memory.integration.run_memory"):
            for text in ("Let's plan a trip to Kyoto.", "We are working on a budget."):
                say = {"messages": [{"role": "user", "content": text}]}
                done = app.invoke(say, thread, context=context, durability="exit")
                assert done["memory_write"]["status"] == "written"
        told = [r for r in caplog.records if "written with user scope" in r.getMessage()]
        assert len(told) == 1  # said once, not per turn
        items = open_memory_manager(f"yaml:{tmp_path}", "ada").list_items().values()
        assert {item.scope for item in items} == {"user"} and len(items) == 2
        ask = {"messages": [{"role": "user", "content": "How is the trip to Kyoto going?"}]}
        state = app.invoke(ask, thread, context=context)
    assert "Kyoto" in state["messages"][-1].content  # recalled on the next (saved) turn


async def test_async_checkpointer(tmp_path: Path) -> None:
    seen: list[tuple[str, Lineage | None]] = []
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "a.sqlite")) as saver:
        app = build(seen, saver, async_last=True)
        thread = {"configurable": {"thread_id": "t-async"}}
        await app.ainvoke({"log": ["turn 1"]}, thread)
        ids = [
            s.config["configurable"]["checkpoint_id"] async for s in app.aget_state_history(thread)
        ]
        # The async node walks with aget_tuple; the sync one runs in a thread and uses get_tuple.
        for current, lineage in seen:
            assert lineage is not None and current in lineage.checkpoint_ids
            assert lineage.checkpoint_ids <= set(ids)
        assert seen[1][1] is not None and seen[0][1] is not None
        assert seen[0][1].checkpoint_ids < seen[1][1].checkpoint_ids
