"""Lineage benchmark: what finding a run's checkpoint ancestors costs per turn, deep in a thread.

A thread of DEPTH turns on the chat graph (offline model, real AsyncSqliteSaver, inline writes to
YAML), then more turns with the lineage calls timed: with the parent cache warm (each turn walks
only its new checkpoints) and cold (a new process: the whole chain is read once). The baseline is
the whole turn, measured in the same runs.

Run: `.venv/bin/python bench/lineage_cost.py` (offline; under a minute).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

import memory.integration.lineage as lineage
import memory.integration.reading as nodes
import memory.integration.writing.ltm_write as handoff
from graph.agent import compile_graph
from graph.context import Context
from memory.integration.settings import use_settings

DEPTH = 100
MEASURED_TURNS = 20
COLD_TURNS = 5
spent: list[float] = []


def timed_sync(function: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any) -> Any:
        started = time.perf_counter()
        try:
            return function(*args)
        finally:
            spent.append(time.perf_counter() - started)

    return wrapper


def timed_async(function: Callable[..., Any]) -> Callable[..., Any]:
    async def wrapper(*args: Any) -> Any:
        started = time.perf_counter()
        try:
            return await function(*args)
        finally:
            spent.append(time.perf_counter() - started)

    return wrapper


async def turn(app: Any, context: Context, number: int, cold: bool) -> tuple[float, float]:
    """(whole turn, lineage calls) in seconds for one turn."""
    if cold:
        lineage.parent_cache.clear()
    spent.clear()
    started = time.perf_counter()
    await app.ainvoke(
        {"messages": [{"role": "user", "content": f"Message number {number}, about nothing."}]},
        {"configurable": {"thread_id": "deep"}},
        context=context,
    )
    return time.perf_counter() - started, sum(spent)


async def main() -> None:
    # Time every lineage call the chat graph makes: retrieval (nodes) and the write hand-off.
    nodes.current_lineage = timed_sync(nodes.current_lineage)
    handoff.current_lineage = timed_sync(handoff.current_lineage)
    handoff.acurrent_lineage = timed_async(handoff.acurrent_lineage)
    # The async walk runs the sync one in a worker thread: one fast reader serves both.
    fast_reader = lineage.read_parent_links
    context = Context(user_id="bench", model="offline/rules")
    with (
        tempfile.TemporaryDirectory(prefix="gulfstream-lineage-") as tmp,
        use_settings(memory_backend=f"yaml:{tmp}/memory", write_mode="inline"),
    ):
        async with AsyncSqliteSaver.from_conn_string(f"{tmp}/threads.sqlite") as saver:
            app = compile_graph(checkpointer=saver)
            for number in range(DEPTH):
                await turn(app, context, number, cold=False)
            thread = {"configurable": {"thread_id": "deep"}}
            history = [s async for s in app.aget_state_history(thread)]  # type: ignore[arg-type]
            print(f"thread depth: {DEPTH} turns, {len(history)} checkpoints (AsyncSqliteSaver)")
            results = {}
            for path in ("parent links (one query)", "get_tuple walk (fallback)"):
                if path.startswith("get_tuple"):
                    lineage.read_parent_links = lambda *a: None
                else:
                    lineage.read_parent_links = fast_reader
                lineage.parent_cache.clear()
                await turn(app, context, 0, cold=False)  # warm the cache for this path
                reads_before = lineage.parent_cache.reads
                warm = [await turn(app, context, i, cold=False) for i in range(MEASURED_TURNS)]
                reads = (lineage.parent_cache.reads - reads_before) / MEASURED_TURNS
                cold = [await turn(app, context, i, cold=True) for i in range(COLD_TURNS)]
                results[path] = (warm, cold)
                report(path, reads, warm, cold)
    fast, slow = results.values()
    for index, name in ((0, "warm"), (1, "cold")):
        ratio = statistics.median(c for _, c in slow[index]) / statistics.median(
            c for _, c in fast[index]
        )
        print(f"{name}: get_tuple walk / parent links = {ratio:.1f}x")
    lineage.read_parent_links = fast_reader
    with (
        tempfile.TemporaryDirectory(prefix="gulfstream-lineage-") as tmp,
        use_settings(memory_backend=f"yaml:{tmp}/memory", write_mode="inline"),
    ):
        await in_memory_saver(context)


async def in_memory_saver(context: Context) -> None:
    """The saver `langgraph dev` uses (a subclass of InMemorySaver): parent links are a dict."""
    app = compile_graph(checkpointer=InMemorySaver())
    for number in range(DEPTH):
        await turn(app, context, number, cold=False)
    warm = [await turn(app, context, i, cold=False) for i in range(MEASURED_TURNS)]
    cold = [await turn(app, context, i, cold=True) for i in range(COLD_TURNS)]
    print(f"thread depth: {DEPTH} turns (InMemorySaver, the saver langgraph dev subclasses)")
    report("parent links (a dict read)", float("nan"), warm, cold)


def report(
    path: str, reads: float, warm: list[tuple[float, float]], cold: list[tuple[float, float]]
) -> None:
    def ms(values: list[float]) -> str:
        return f"{statistics.median(values) * 1000:.2f} ms"

    reads_text = "" if reads != reads else f": {reads:.1f} checkpointer reads per warm turn"
    print(f"== {path}{reads_text}")
    for name, runs in (("warm cache", warm), ("cold cache", cold)):
        share = statistics.median(c / t for t, c in runs)
        print(
            f"  {name}: lineage {ms([c for _, c in runs])} per turn (2 calls), "
            f"whole turn {ms([t for t, _ in runs])}; lineage / turn = {share:.3f}"
        )


if __name__ == "__main__":
    asyncio.run(main())
