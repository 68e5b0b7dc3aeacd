"""graph.lineage on a real SqliteSaver: ancestor chains across turns and forks, the cache."""

from __future__ import annotations

import operator
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.config import get_config
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from graph.lineage import acurrent_lineage, current_checkpoint_id, current_lineage, parent_cache
from memory.branch import Lineage


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


def test_lineage_is_the_whole_ancestor_chain_and_excludes_a_fork_sibling(
    saver: SqliteSaver,
) -> None:
    seen: list[tuple[str, Lineage | None]] = []
    app = build(seen, saver)
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


def test_each_turn_fetches_only_the_new_checkpoints(saver: SqliteSaver) -> None:
    seen: list[tuple[str, Lineage | None]] = []
    app = build(seen, saver)
    thread = {"configurable": {"thread_id": "t-cache"}}
    for turn in range(5):
        app.invoke({"log": [f"turn {turn}"]}, thread)
    fetched_before = parent_cache.fetches
    app.invoke({"log": ["turn 6"]}, thread)
    per_turn = parent_cache.fetches - fetched_before
    # a turn writes input, first, last (+ the final checkpoint of the previous turn): ~4 new ones
    assert 0 < per_turn <= 5, per_turn
    assert len(seen[-1][1].checkpoint_ids) > 20  # type: ignore[union-attr]

    # A cold cache (a new process) walks the whole chain again and finds the same lineage.
    cached = seen[-1][1]
    parent_cache.clear()
    app.invoke({"log": ["turn 7"]}, thread)
    cold = seen[-1][1]
    assert cached is not None and cold is not None
    assert cached.checkpoint_ids < cold.checkpoint_ids
    assert parent_cache.fetches == len(cold.checkpoint_ids)


def test_without_a_checkpointer_there_is_no_lineage() -> None:
    seen: list[tuple[str, Lineage | None]] = []
    build(seen).invoke({"log": ["x"]})
    assert seen == [("", None), ("", None)]


def test_durability_exit_does_not_wait_and_hides_branches(saver: SqliteSaver) -> None:
    seen: list[tuple[str, Lineage | None]] = []
    app = build(seen, saver)
    thread = {"configurable": {"thread_id": "t-exit"}}
    app.invoke({"log": ["turn 1"]}, thread)
    started = time.monotonic()
    app.invoke({"log": ["turn 2"]}, thread, durability="exit")
    assert time.monotonic() - started < 2  # not the 5 s wait for a save that never comes
    current, lineage = seen[-1]
    assert lineage == Lineage("t-exit", frozenset({current}))


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
