"""A chat turn notes which memories it injected, for which question, without waiting for a file."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from graph.agent import compile_graph
from graph.context import Context
from memory.integration.models.embeddings import deployment_embeddings
from memory.integration.settings import Settings, get_settings, use_settings
from memory.long_term import LongTermMemory
from memory.registry import registry
from memory.retrieval.recall_log import RECALL_FILE, query_hash


@pytest.fixture
def inline(tmp_path: Path, clean_process: Settings) -> Iterator[Settings]:
    backend = f"yaml:{tmp_path / 'memory'}"
    with use_settings(clean_process, memory_backend=backend, write_mode="inline") as settings:
        yield settings


def users_memory(user_id: str) -> LongTermMemory:
    """The same LongTermMemory the graph's runs open (the process's registry)."""
    settings = get_settings()
    return registry.open(settings.memory_backend, user_id, None,
                         default_data_dir=settings.data_dir, snapshot_delay=None,
                         embeddings=deployment_embeddings())  # fmt: skip


async def say(app: Any, thread_id: str, text: str, user_id: str = "alice") -> dict[str, Any]:
    return await app.ainvoke(
        {"messages": [{"role": "user", "content": text}]},
        {"configurable": {"thread_id": thread_id}},
        context=Context(user_id=user_id, model="offline/rules"),
    )


async def test_a_turn_records_the_memories_it_injected(tmp_path: Path, inline: Settings) -> None:
    app = compile_graph(checkpointer=InMemorySaver())
    memory = users_memory("alice")
    memory.recall_log.flush_seconds = 3600  # only an explicit flush writes: see what is queued
    memory.manager.add("User lives in Lisbon", "home")
    memory.manager.add("User likes green tea", "taste")
    sidecar = tmp_path / "memory" / RECALL_FILE  # the backend's folder: the server's data dir

    result = await say(app, "t1", "Where do I live?")
    injected = [m["id"] for m in result["related_memories"]]
    assert injected and "User lives in Lisbon" in [
        m["description"] for m in result["related_memories"]
    ]
    # The run returned with the recalls queued in memory, nothing written yet.
    assert memory.recall_log.pending == len(injected)
    assert not sidecar.exists()

    stats = memory.recall_stats()
    assert set(stats) == set(injected)
    assert all(s.recalls == 1 and s.queries == 1 for s in stats.values())
    with sqlite3.connect(sidecar) as db:
        hashes = {row[0] for row in db.execute("SELECT query_hash FROM recall_queries")}
    assert hashes == {query_hash("Where do I live?")}

    await say(app, "t2", "Where do I live?", user_id="bob")  # bob has no memories
    assert users_memory("bob").recall_stats() == {}
    assert memory.recall_stats() == stats
