"""A process that writes one user's memory while other processes write it too (the lock tests).

    python -m tests.integration.contended_writer write BACKEND DSN USER HIT_ID EDIT_ID HITS EDITS GO
    python -m tests.integration.contended_writer hold BACKEND DSN USER
    python -m tests.integration.contended_writer add BACKEND DSN USER DESCRIPTION HUMAN

`write` waits for the file GO (so that every process starts together), then hits HIT_ID HITS
times and edits EDIT_ID EDITS times in between, and prints one JSON line: its edits and the
errors raised, by type. `hold` takes the user's write lock, writes a memory through it, prints
"holding" and sleeps until it is killed. `add` adds one memory and sets the core context's
`human`, as a replica serving the user's next turn would. BACKEND is `postgres` (the
`postgres:` backend) or `store` (a StoreMemoryManager over a PostgresStore of its own, locking
in DSN, as the platform's store does).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

from langgraph.store.base import PutOp

from memory.store.backends.langgraph_store import StoreMemoryManager
from memory.store.factory import open_memory_manager
from memory.store.manager import BaseMemoryManager


def open_manager(backend: str, dsn: str, user: str) -> BaseMemoryManager:
    if backend == "postgres":
        return open_memory_manager(f"postgres:{dsn}", user)
    from langgraph.store.postgres import PostgresStore
    from psycopg import Connection
    from psycopg.rows import dict_row

    conn = Connection.connect(dsn, autocommit=True, prepare_threshold=0, row_factory=dict_row)
    return open_memory_manager("store", user, PostgresStore(conn), lock_database=dsn)


def write(manager: BaseMemoryManager, hit_id: str, edit_id: str, hits: int, edits: int) -> None:
    every = max(1, hits // max(1, edits))
    made: list[str] = []
    errors: Counter[str] = Counter()
    for i in range(hits):
        try:
            manager.hit(hit_id)
        except Exception as exc:
            errors[type(exc).__name__] += 1
        if len(made) < edits and i % every == 0:
            text = f"edit {os.getpid()}-{len(made)}"
            try:
                manager.update(edit_id, "contended edit", new_description=text)
                made.append(text)
            except Exception as exc:
                errors[type(exc).__name__] += 1
    print(json.dumps({"edits": made, "errors": dict(errors)}), flush=True)


def hold(manager: BaseMemoryManager) -> None:
    assert isinstance(manager, StoreMemoryManager)
    with manager._write_lock():
        value = {"description": "written by a process that dies", "theme": "test"}
        manager._writes.batch([PutOp(manager.items_ns, "doomed", value)])
        print("holding", flush=True)
        time.sleep(120)


def main(argv: list[str]) -> None:
    mode, backend, dsn, user = argv[:4]
    manager = open_manager(backend, dsn, user)
    if mode == "hold":
        hold(manager)
        return
    if mode == "add":
        description, human = argv[4:6]
        print(manager.add(description, "replica"), flush=True)
        manager.set_core_context(human=human)
        return
    hit_id, edit_id, hits, edits, go = argv[4:9]
    while not Path(go).exists():
        time.sleep(0.01)
    write(manager, hit_id, edit_id, int(hits), int(edits))


if __name__ == "__main__":
    main(sys.argv[1:])
