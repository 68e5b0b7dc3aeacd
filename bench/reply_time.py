"""Reply time with a 0.8 s model: the chat graph with memory vs the same graph without its memory
nodes, in the same run.

Run: `.venv/bin/python bench/reply_time.py` (about two minutes).

Three graphs answer the same turns (the scripted chat of bench/model_calls.py), interleaved so
that machine noise hits them alike, against the OpenAI-compatible stub answering in 0.8 s; the
user already has 30 memories (SQLite), so retrieval has something to find:

- without memory: START → agent ⇄ tools → END (no retrieve_memory, no ltm_write);
- memory, defaults: BM25 retrieval, admission, batched local writes;
- memory, before issue 12: hybrid retrieval (a model call before the reply), every turn written.

Target: the defaults add at most 50 ms to the median reply.
"""

from __future__ import annotations

import asyncio
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.prebuilt import ToolNode
from model_calls import AFTER, BEFORE, SCRIPT, STUB_SECONDS, use_stub

import graph.nodes as nodes
from graph.agent import compile_graph
from graph.context import Context
from graph.state import InputState, State
from graph.tools import CHAT_TOOLS
from memory.integration.settings import Settings, use_settings
from memory.store.document import Change
from memory.store.factory import open_memory_manager
from memory.writer.local import local_writer
from tests.e2e.stub_openai import STUB_MODEL, StubOpenAI

TARGET_MS = 50.0
TURNS = 30
KNOWN = ["The user's name is Priya", "The user lives in Leeds", "The user works as a nurse",
         "The user has a cat called Miso", "The user likes sci-fi novels",
         "The user is learning Japanese"]  # fmt: skip


def without_memory() -> Any:
    """The same agent ⇄ tools loop without retrieve_memory and ltm_write."""
    builder = StateGraph(State, input_schema=InputState, context_schema=Context)
    builder.add_node("agent", nodes.agent)
    builder.add_node("tools", ToolNode(CHAT_TOOLS))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges(
        "agent", lambda s: "tools" if s.messages[-1].tool_calls else END, ["tools", END]
    )
    builder.add_edge("tools", "agent")
    return builder.compile(checkpointer=InMemorySaver())


def settings_for(config: dict[str, Any], folder: Path) -> Settings:
    return Settings(
        memory_backend=f"sqlite:{folder / 'memory.db'}", data_dir=str(folder / "data"),
        snapshot_seconds=None, admission=config["admission"],
        write_batch_size=config["write_batch_size"],
    )  # fmt: skip


async def timed_turn(app: Any, text: str, thread: str, context: Context) -> float:
    started = time.perf_counter()
    await app.ainvoke({"messages": [{"role": "user", "content": text}]},
                      {"configurable": {"thread_id": thread}}, context=context)  # fmt: skip
    return (time.perf_counter() - started) * 1000


async def main() -> int:
    logging.basicConfig(level=logging.ERROR)
    rows: dict[str, list[float]] = {"without memory": [], "memory, defaults": [],
                                    "memory, before issue 12": []}  # fmt: skip
    with StubOpenAI(delay_seconds=STUB_SECONDS) as stub, tempfile.TemporaryDirectory() as tmp:
        use_stub(stub)
        folders = {"after": Path(tmp) / "after", "before": Path(tmp) / "before"}
        for folder in folders.values():
            manager = open_memory_manager(f"sqlite:{folder / 'memory.db'}", "priya")
            changes = [Change("add", description=f"{KNOWN[n % len(KNOWN)]} (note {n})",
                              theme="identity") for n in range(30)]  # fmt: skip
            manager.apply(changes, "seed")
        plain, with_memory = without_memory(), compile_graph(checkpointer=InMemorySaver())
        contexts = {name: Context(user_id="priya", model=f"openai/{STUB_MODEL}",
                                  retrieval_mode=config["retrieval_mode"])
                    for name, config in (("after", AFTER), ("before", BEFORE))}  # fmt: skip
        for turn, text in enumerate(SCRIPT[:TURNS]):
            rows["without memory"].append(await timed_turn(plain, text, "t", contexts["after"]))
            with use_settings(settings_for(AFTER, folders["after"])):
                rows["memory, defaults"].append(
                    await timed_turn(with_memory, text, "a", contexts["after"])
                )
            with use_settings(settings_for(BEFORE, folders["before"])):
                rows["memory, before issue 12"].append(
                    await timed_turn(with_memory, text, "b", contexts["before"])
                )
            if turn == 0:  # the first turn of each warms caches and connections
                for times in rows.values():
                    times.clear()
        await asyncio.wrap_future(local_writer.drain())
    local_writer.stop(timeout=60)
    base = statistics.median(rows["without memory"])
    print(
        f"reply time over {TURNS - 1} turns, stub answering in {STUB_SECONDS:g} s, "
        "30 memories stored"
    )
    print(f"{'graph':26} {'median ms':>10} {'p95 ms':>8} {'added ms':>9} {'ratio':>6}  "
          "added per turn (median of paired differences)")  # fmt: skip
    for name, times in rows.items():
        median = statistics.median(times)
        p95 = sorted(times)[round(0.95 * (len(times) - 1))]
        paired = statistics.median(
            t - b for t, b in zip(times, rows["without memory"], strict=True)
        )
        print(f"{name:26} {median:10.0f} {p95:8.0f} {median - base:9.0f} {median / base:6.2f}  "
              f"{paired:.0f} ms")  # fmt: skip
    added = statistics.median(
        t - b for t, b in zip(rows["memory, defaults"], rows["without memory"], strict=True)
    )
    met = added <= TARGET_MS
    print(f"target: the defaults add <= {TARGET_MS:g} ms -> {'met' if met else 'MISSED'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
