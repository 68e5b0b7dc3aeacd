"""Read your writes: what reading the waiting turns adds to retrieval at 1,000 waiting turns, and
the seconds from a fact told to it being seen in a new thread, local and server.

Run: `.venv/bin/python bench/read_your_writes.py` (about two minutes; `--no-server` skips the
`langgraph dev` part).

1. Added retrieval time. 10,000 synthetic memories (bench/retrieval.py) and 1,000 waiting turns
   of the user (synthetic sentences, 20 threads) behind a writer that waits: local, in a real
   SQLite journal; server, in a LangGraph store's `memories_pending`. Each query follows one new
   waiting turn of the asking thread and the oldest turn leaving (as between two chat turns),
   then runs BM25 retrieval with a lineage (the baseline: retrieve_memory's call, without
   embeddings, so the smallest denominator) and `said_recently` (the added part), in the same
   loop; wall clock, and CPU time of the thread (on a shared machine the wall clock's tail is
   mostly the core taken away mid-call). Target: the added part under 5 ms p95.
2. Told → seen. Default settings (admission on, batches of 5 turns or 30 quiet seconds), the
   offline model (local) or the stub model (server): "By the way, I live in Porto now." in one
   thread, then "Where do I live now?" in a new one. Local also runs the same without the waiting
   read and the thread-switch flush (what the code did before), in the same run.
"""

from __future__ import annotations

import asyncio
import logging
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from retrieval import percentile, synthetic_items, synthetic_queries

import memory.integration.reading as reading
from graph.context import Context
from memory.integration.run_memory import RunMemory
from memory.integration.settings import get_settings, use_settings
from memory.integration.writing.pending import drop_pending, keep_pending, keep_pending_sync
from memory.integration.writing.said_recently import said_recently
from memory.long_term import LongTermMemory
from memory.retrieval.evaluation import write_items
from memory.store.backends.sqlite_db import SqliteMemoryManager
from memory.store.branch import Lineage
from memory.store.manager import BaseMemoryManager
from memory.writer.batching import BatchPolicy
from memory.writer.turn import Turn

USER = "bench"
MEMORIES, WAITING, QUERIES, THREADS = 10_000, 1_000, 300, 20
LINEAGE = Lineage("new-thread", frozenset({"c1"}))
FACT, QUESTION = "By the way, I live in Porto now.", "Where do I live now?"


class ReleasedWriter:
    """A writer that writes one turn each time the benchmark releases it, and otherwise waits:
    the turns sent stay waiting."""

    timeout_seconds = 3600

    def __init__(self) -> None:
        self.releases = asyncio.Semaphore(0)

    async def consume(self, turn: Turn, memory: LongTermMemory) -> None:
        await self.releases.acquire()


def waiting_turn(number: int, text: str, thread: str = "") -> Turn:
    said = [
        {"role": "user", "content": f"I told you {text}"},
        {"role": "assistant", "content": "Ok."},
    ]
    return Turn.of(USER, said, turn_id=f"w{number}", thread_id=thread or f"t{number % THREADS}",
                   checkpoint_id=f"k{number}")  # fmt: skip


def run_of(memory: LongTermMemory, server: bool) -> RunMemory:
    metadata = {"langgraph_api_version": "bench"} if server else {}
    config: Any = {"configurable": {"thread_id": "new-thread"}, "metadata": metadata}
    return RunMemory(get_settings(), Context(user_id=USER), USER, "new-thread", "", memory, config)


async def measure(
    memory: LongTermMemory, run: RunMemory, store: Any, queries: list[str], churn: Any
) -> dict[str, list[float]]:
    """ms per query, wall clock and this thread's CPU time (what the code costs when the
    machine does not take the core away mid-call): BM25 retrieval alone, and the waiting read
    after it."""
    times: dict[str, list[float]] = {"base": [], "added": [], "base_cpu": [], "added_cpu": []}
    for number, query in enumerate(queries):
        await churn(number)
        revision = memory.manager.change_token()
        started, started_cpu = time.perf_counter(), time.thread_time()
        memory.get_related_memory_from(query, "mechanical", 10, LINEAGE)
        middle, middle_cpu = time.perf_counter(), time.thread_time()
        said_recently(run, store, query, LINEAGE, since=revision)
        times["base"].append((middle - started) * 1000)
        times["added"].append((time.perf_counter() - middle) * 1000)
        times["base_cpu"].append((middle_cpu - started_cpu) * 1000)
        times["added_cpu"].append((time.thread_time() - middle_cpu) * 1000)
    return times


async def no_churn(number: int) -> None:
    return None


def report(label: str, times: dict[str, list[float]]) -> None:
    for clock, suffix in (("wall", ""), ("cpu", "_cpu")):
        base, added = times["base" + suffix], times["added" + suffix]
        b50, b95 = percentile(base, 0.5), percentile(base, 0.95)
        a50, a95 = percentile(added, 0.5), percentile(added, 0.95)
        print(f"{label:<7}{clock:<5} retrieval p50 {b50:6.2f} ms p95 {b95:6.2f} ms | waiting read "
              f"p50 {a50:5.2f} ms p95 {a95:5.2f} ms | with it / without: p50 "
              f"x{(b50 + a50) / b50:.2f} p95 x{(b95 + a95) / b95:.2f}")  # fmt: skip


def filled(manager: BaseMemoryManager, rng: random.Random) -> tuple[LongTermMemory, list[str]]:
    items = synthetic_items(MEMORIES, rng)
    write_items(manager, items)
    memory = LongTermMemory(manager, consumer=ReleasedWriter(), embeddings="off")
    return memory, synthetic_queries(items, QUERIES, rng)


async def local_cost(rng: random.Random, folder: Path) -> None:
    memory, queries = filled(SqliteMemoryManager(folder / "memory.sqlite", USER), rng)
    memory.journal_path = folder / "journal.sqlite"
    memory.batching = BatchPolicy(size=1)  # each turn its own writer run, one per release
    memory.start()
    writer = memory.consumer
    assert isinstance(writer, ReleasedWriter)
    texts = [*queries, *queries]
    for number in range(WAITING):
        await memory.send(waiting_turn(number, texts[number % len(texts)]))

    async def churn(number: int) -> None:  # a turn of this thread arrives, the oldest is written
        await memory.send(waiting_turn(WAITING + number, texts[number % len(texts)], "new-thread"))
        writer.releases.release()
        while len(memory.waiting_turns()) > WAITING:
            await asyncio.sleep(0.001)

    with use_settings(write_mode="local"):
        run = run_of(memory, server=False)
        await measure(memory, run, None, queries[:20], no_churn)  # indexes built once
        report("local", await measure(memory, run, None, queries, churn))
    await memory.stop(timeout=0.1)


async def server_cost(rng: random.Random) -> None:
    from langgraph.store.memory import InMemoryStore

    from memory.store.backends.langgraph_store import StoreMemoryManager

    store = InMemoryStore()
    memory, queries = filled(StoreMemoryManager(store, USER), rng)
    texts = [*queries, *queries]
    for number in range(WAITING):
        keep_pending_sync(store, waiting_turn(number, texts[number % len(texts)]))

    async def churn(number: int) -> None:  # as the hand-off and the writer run do it
        turn = waiting_turn(WAITING + number, texts[number % len(texts)], "new-thread")
        await keep_pending(store, turn)
        await drop_pending(store, USER, [f"w{number}"])

    run = run_of(memory, server=True)
    await measure(memory, run, store, queries[:20], no_churn)
    report("server", await measure(memory, run, store, queries, churn))


async def local_told_to_seen(folder: Path, read_waiting: bool) -> str:
    from graph.cli.session import LocalSession

    data = folder / ("with" if read_waiting else "without")
    with use_settings(memory_backend=f"sqlite:{data}/memory.sqlite"), mock.patch.object(
        reading, "said_recently", reading.said_recently if read_waiting else _nothing
    ):  # fmt: skip
        async with LocalSession(Context(user_id="ada", model="offline/rules"), data) as session:
            told = await session.say("t1", FACT)
            told_at = time.monotonic()
            asked = await session.say("t2", QUESTION)
            if any("Porto" in line["text"] for line in asked.said_recently):
                seen = f"seen in the next turn ({time.monotonic() - told_at:.2f} s after)"
            else:
                seen = "not seen in the next turn"
            manager, turn_id = session.manager, told.memory_write["turn_id"]
            while not manager.has_applied(turn_id):
                await asyncio.sleep(0.1)
            written = time.monotonic() - told_at
            later = await session.say("t3", QUESTION)
            found = any("Porto" in m["description"] for m in later.related_memories)
    return f"{seen}; written as a memory after {written:.1f} s (found then: {found})"


def _nothing(*args: Any, **kwargs: Any) -> list[dict[str, str]]:
    return []


async def server_told_to_seen() -> str:
    from langgraph_sdk import get_client

    from memory.store.backends.langgraph_store import namespace_label
    from tests.e2e.server import copy_app, running_server, stub_model_env
    from tests.e2e.stub_openai import StubOpenAI

    with tempfile.TemporaryDirectory() as folder, StubOpenAI() as stub:
        env = {**stub_model_env(stub), "GULFSTREAM_MEMORY_BACKEND": "store"}
        with running_server(copy_app(Path(folder) / "app"), env) as dev:
            client = get_client(url=dev.url)

            async def say(text: str) -> dict:
                thread = (await client.threads.create())["thread_id"]
                message: dict[str, Any] = {"messages": [{"role": "user", "content": text}]}
                state = await client.runs.wait(thread, "agent", input=message,
                                               context={"user_id": "ada"})  # fmt: skip
                assert isinstance(state, dict)
                return state

            await say(FACT)
            told_at = time.monotonic()
            asked = await say(QUESTION)
            seen = any("Porto" in line["text"] for line in asked["said_recently"])
            seen_text = f"seen in the next turn ({time.monotonic() - told_at:.2f} s after)"
            namespace = ("memories_pending", namespace_label("ada"))

            async def waiting() -> bool:
                items = (await client.store.search_items(namespace, limit=100))["items"]
                return any(FACT in str(item["value"]) for item in items)

            while await waiting():
                await asyncio.sleep(0.2)
            written = time.monotonic() - told_at
    return f"{seen_text if seen else 'not seen in the next turn'}; written after {written:.1f} s"


async def main() -> None:
    logging.basicConfig(level=logging.ERROR)
    rng = random.Random(25)
    print(f"== added retrieval time: {MEMORIES:,} memories, {WAITING:,} waiting turns, "
          f"{QUERIES} queries")  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        await local_cost(rng, Path(folder))
    await server_cost(rng)
    print("== told -> seen in a new thread (default settings)")
    with tempfile.TemporaryDirectory() as folder:
        print("local, waiting read + flush: ", await local_told_to_seen(Path(folder), True))
        print("local, before (neither):     ", await local_told_to_seen(Path(folder), False))
    if "--no-server" not in sys.argv:
        print("server (langgraph dev + SDK):", await server_told_to_seen())


if __name__ == "__main__":
    asyncio.run(main())
