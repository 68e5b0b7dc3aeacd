"""MCP tool latency through the SDK's own client over stdio, at 10,000 memories.

Run: `.venv/bin/python bench/mcp_latency.py` (a few minutes: the offline embedder makes the
10,000 vectors first, once, as a deployment would in the background).

Same run, for the YAML and then the SQLite backend: a store of 10,000 synthetic memories (half
English, half Chinese), the offline model and embedder (the defaults with no key). The baseline
is the chat's own retrieval in this process, as a turn does it (`get_related_memory_from` in the
deployment's mode, then `record_recall`, whose queue the next retrieval writes first), printed
beside the retrieval alone; then `search_memories`, `list_memories` and `remember`
through `python -m webapp.mcp` with the `mcp` client: p50 / p95 in milliseconds, and the
search's ratio to the baseline.
"""

from __future__ import annotations

import asyncio
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mcp import Client, StdioServerParameters
from retrieval import percentile, synthetic_items, synthetic_queries

from graph.context import Context
from memory.integration.settings import Settings, use_settings
from memory.long_term import LongTermMemory
from memory.retrieval.evaluation import write_items
from webapp.mcp.doors import open_user_memory

SIZE = 10_000
QUERIES = 60
REMEMBERS = 12
USER = "bench"
BACKENDS = ("yaml", "sqlite")
FACTS = ["My sister's name is Ana", "I live in Porto", "My favourite tea is oolong",
         "I work at a bakery", "My dog is called Rex", "I like hiking in the Alps"]  # fmt: skip


def main() -> None:
    for backend in BACKENDS:
        print(f"== {backend} backend")
        one_backend(backend)


def one_backend(backend: str) -> None:
    rng = random.Random(7)
    folder = Path(tempfile.mkdtemp(prefix="gulfstream-mcp-bench-"))
    settings = Settings(memory_backend=f"{backend}:{folder / 'memory'}",
                        data_dir=str(folder / "data"), snapshot_seconds=None)  # fmt: skip
    items = synthetic_items(SIZE, rng)
    queries = synthetic_queries(items, QUERIES, rng)
    mode = Context(user_id=USER).retrieval_mode
    with use_settings(settings):
        memory = open_user_memory(USER)
        write_items(memory.manager, items)
        started = time.perf_counter()
        memory.get_related_memory_from("warm up", mode, 10)
        wait = getattr(memory.retrievers.semantic, "wait", None)  # kept vectors: made here
        if wait is not None:
            wait()
        print(f"{SIZE} memories stored and embedded in {time.perf_counter() - started:.0f} s")
        baseline = [
            timed_ms(lambda q=q: memory.get_related_memory_from(q, mode, 10)) for q in queries
        ]
        memory.close()
    row(f"in-process retrieval ({mode}), the baseline", baseline)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GULFSTREAM_", "OPENAI_"))}
    env.update(
        GULFSTREAM_MEMORY_BACKEND=settings.memory_backend,
        GULFSTREAM_DATA_DIR=settings.data_dir,
        GULFSTREAM_SNAPSHOT_SECONDS="off",
    )
    project = Path(__file__).resolve().parents[1]
    server = ["-m", "webapp.mcp", "--user", USER]
    params = StdioServerParameters(command=sys.executable, args=server, env=env, cwd=project)
    asyncio.run(over_stdio(params, queries, baseline))


async def over_stdio(
    params: StdioServerParameters, queries: list[str], baseline: list[float]
) -> None:
    async with Client(params, read_timeout_seconds=300) as client:
        first = await timed_call(client, "search_memories", {"query": queries[0]})
        print(f"first search of a new server process: {first:.0f} ms (opens the store and index)")
        searches = [await timed_call(client, "search_memories", {"query": q}) for q in queries]
        row("MCP search_memories", searches)
        ratio = percentile(searches, 0.5) / percentile(baseline, 0.5)
        print(f"  p50 ratio to the baseline: {ratio:.2f}x")
        pages = [await timed_call(client, "list_memories", {"limit": 50}) for _ in range(20)]
        row("MCP list_memories (50 of 10,000)", pages)
        remembers = [await timed_call(client, "remember", {"fact": FACTS[i % len(FACTS)] + f" {i}"})
                     for i in range(REMEMBERS)]  # fmt: skip
        row("MCP remember (admission + offline writer + apply)", remembers)


async def timed_call(client: Client, tool: str, arguments: dict[str, Any]) -> float:
    started = time.perf_counter()
    result = await client.call_tool(tool, arguments)
    elapsed = (time.perf_counter() - started) * 1000
    if result.is_error:
        raise RuntimeError(f"{tool} failed: {result.content}")
    return elapsed


def chat_retrieval(memory: LongTermMemory, query: str, mode: str) -> None:
    """What retrieve_memory does for a chat turn: the retrieval, then the recall noted."""
    found = memory.get_related_memory_from(query, mode, 10)
    memory.record_recall([m["id"] for m in found], query)


def timed_ms(function: Callable[..., Any], *args: Any) -> float:
    started = time.perf_counter()
    function(*args)
    return (time.perf_counter() - started) * 1000


def row(label: str, values: list[float]) -> None:
    p50, p95 = percentile(values, 0.5), percentile(values, 0.95)
    print(f"{label:<52} p50 {p50:7.1f} ms  p95 {p95:7.1f} ms  (n={len(values)})")


if __name__ == "__main__":
    main()
