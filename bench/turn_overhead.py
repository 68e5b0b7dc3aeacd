"""Turn overhead: what the memory nodes add to one graph turn at 0, 1,000 and 10,000 memories.

Run: `.venv/bin/python bench/turn_overhead.py`. The chat model is an instant fake, retrieval is
mechanical (BM25), and the writer is a no-op consumer behind the local write sink (the turn is
scored, journaled when admitted, then only counted), so the figures are the cost of
`retrieve_memory` + the prompt + `ltm_write`, against the same graph without the memory nodes.
Turns alternate between a fact (admitted, journaled, batched) and a question (skipped).
Target: at most 15 ms added (median) at 10,000 memories.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.graph import END, START, StateGraph
from langgraph.prebuilt import ToolNode

import graph.nodes as nodes
from graph.agent import compile_graph
from graph.context import Context
from graph.state import InputState, State
from graph.tools import CHAT_TOOLS
from memory.integration.settings import get_settings, use_settings
from memory.registry import registry
from memory.store.document import Change
from memory.store.factory import open_memory_manager
from memory.writer.local import local_writer
from memory.writer.turn import Turn

SIZES = (0, 1_000, 10_000)
TURNS = 40
WARMUP = 3
TARGET_MS = 15.0
BACKENDS = ("yaml", "sqlite")
WORDS = (  # noqa: SIM905 - a line of words reads better than a list
    "tea coffee lisbon porto cello guitar cat dog running swimming python rust garden paris "
    "sister brother teacher nurse exam monday train bicycle mountain sea book film song"
).split()


class InstantModel(BaseChatModel):
    """Answers at once; no tool calls. bind_tools returns itself."""

    @property
    def _llm_type(self) -> str:
        return "instant"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=AIMessage("ok"))])


class NoOpWriter:
    """Stands in for the memory agent behind the local write queue: takes the turn and returns.
    It counts the turns, so a hand-off that failed (and was only reported) cannot pass unseen."""

    def __init__(self) -> None:
        self.turns = 0

    async def consume(self, turn: Turn, memory: Any) -> None:
        self.turns += len(turn.turn_ids)  # a batch carries several


def baseline_graph() -> Any:
    """The same agent ⇄ tools loop without retrieve_memory and ltm_write."""
    builder = StateGraph(State, input_schema=InputState, context_schema=Context)
    builder.add_node("agent", nodes.agent)
    builder.add_node("tools", ToolNode(CHAT_TOOLS))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges(
        "agent", lambda s: "tools" if s.messages[-1].tool_calls else END, ["tools", END]
    )
    builder.add_edge("tools", "agent")
    return builder.compile()


def fill(spec: str, user_id: str, count: int) -> None:
    manager = open_memory_manager(spec, user_id)
    changes = [
        Change(
            op="add",
            description=f"The user mentioned {WORDS[i % len(WORDS)]} and "
            f"{WORDS[(i * 7) % len(WORDS)]} (note {i})",
            theme=f"theme{i % 12}",
        )
        for i in range(count)
    ]
    for start in range(0, count, 2_000):
        manager.apply(changes[start : start + 2_000], f"fill-{start}")


async def median_turn_ms(apps: list[Any], context: Context) -> tuple[list[float], int, int]:
    """Median ms per turn of each app, turns interleaved so that machine noise hits all alike;
    how many memories the last turn of the first app retrieved, and how many it journaled."""
    timings: list[list[float]] = [[] for _ in apps]
    retrieved = journaled = 0
    for i in range(WARMUP + TURNS):
        first, second = WORDS[i % len(WORDS)], WORDS[(i * 3) % len(WORDS)]
        text = f"I like {first} and my {second}." if i % 2 else f"Do you remember my {first}?"
        for app, times in zip(apps, timings, strict=True):
            started = time.perf_counter()
            state = await app.ainvoke(
                {"messages": [{"role": "user", "content": text}]}, context=context
            )
            if i >= WARMUP:
                times.append((time.perf_counter() - started) * 1000)
            if app is apps[0]:
                retrieved = len(state.get("related_memories", []))
                journaled += state["memory_write"]["status"] == "journaled"
    return [statistics.median(times) for times in timings], retrieved, journaled


async def main() -> int:
    nodes.load_chat_model = lambda name, **_: InstantModel()  # type: ignore[assignment]
    with_memory, without_memory = compile_graph(), baseline_graph()
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        print(f"median of {TURNS} turns; instant model; mechanical retrieval; no-op writer")
        print(f"{'backend':8} {'memories':>9} {'retrieved':>9} {'baseline ms':>12} "
              f"{'with memory ms':>15} {'added ms':>9} {'ratio':>6}")  # fmt: skip
        for backend in BACKENDS:
            for size in SIZES:
                user = f"bench-{backend}-{size}"
                target = f"{tmp}/mem" if backend == "yaml" else f"{tmp}/mem.db"
                spec = f"{backend}:{target}"
                fill(spec, user, size)
                writer = NoOpWriter()
                context = Context(
                    user_id=user, model="offline/instant", retrieval_mode="mechanical"
                )
                with use_settings(memory_backend=spec, write_mode="local"):
                    settings = get_settings()
                    # The memory the chat graph opens for this user, with the no-op consumer.
                    memory = registry.open(
                        spec, user, default_data_dir=settings.data_dir,
                        snapshot_delay=settings.snapshot_seconds, consumer=writer,
                    )  # fmt: skip
                    (full, base), retrieved, journaled = await median_turn_ms(
                        [with_memory, without_memory], context
                    )
                    await asyncio.wrap_future(local_writer.drain(memory))
                added = full - base
                print(f"{backend:8} {size:>9,} {retrieved:>9} {base:>12.2f} {full:>15.2f} "
                      f"{added:>9.2f} {full / base:>6.2f}")  # fmt: skip
                if size == 10_000 and added > TARGET_MS:
                    failed = True
                if writer.turns != journaled:  # every admitted turn must reach the writer
                    print(f"  the memory graph handed {writer.turns} of {journaled} journaled "
                          f"turns to the writer ({backend}, {size})")  # fmt: skip
                    failed = True
    local_writer.stop(timeout=30)
    print(
        f"target: <= {TARGET_MS:g} ms added at 10,000 memories -> {'MISSED' if failed else 'met'}"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
