"""Kept vectors: one per memory version (content hash), beside each backend, never per query."""

from __future__ import annotations

import sqlite3
import sys
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from memory.store.manager import BaseMemoryManager
from memory.store.sqlite_file import while_locked

VECTORS_NAMESPACE = "memories_vectors"
SIDECAR_SUFFIX = ".vectors.sqlite"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS memory_vectors (
    user_id TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    model TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (user_id, memory_id)
)"""


@dataclass(frozen=True)
class StoredVector:
    """The vector of one memory version under one embedding model."""

    memory_id: str
    model: str
    content_hash: str
    vector: npt.NDArray[np.float32]


class VectorStore(Protocol):
    """Where a user's vectors live. One row per memory id: a new version replaces the old."""

    def load(self) -> Iterator[StoredVector]: ...

    def put(self, vectors: Iterable[StoredVector]) -> None: ...

    def drop(self, memory_ids: Iterable[str]) -> None: ...


class MemoryVectors:
    """No persistence (a manager without a folder or store of its own): vectors last a process."""

    def __init__(self) -> None:
        self.rows: dict[str, StoredVector] = {}

    def load(self) -> Iterator[StoredVector]:
        return iter(list(self.rows.values()))

    def put(self, vectors: Iterable[StoredVector]) -> None:
        self.rows.update((v.memory_id, v) for v in vectors)

    def drop(self, memory_ids: Iterable[str]) -> None:
        for memory_id in memory_ids:
            self.rows.pop(memory_id, None)


class SqliteVectors:
    """A `memory_vectors` table: inside the SQLite backend's own file, or in a sidecar file
    beside a YAML file. Vectors are float32 blobs; WAL lets the writer and readers share it."""

    def __init__(self, path: str | Path, user_id: str) -> None:
        self.path = Path(path)
        self.user_id = user_id
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            conn = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
            # Processes opening a new file at once: one is told "locked" at once (while_locked).
            while_locked(lambda: conn.execute("PRAGMA journal_mode=WAL"))
            while_locked(lambda: conn.execute(_SCHEMA))
            conn.commit()
            self._conn = conn
        return self._conn

    def load(self) -> Iterator[StoredVector]:
        with self._lock:
            rows = (
                self._connection()
                .execute(
                    "SELECT memory_id, model, content_hash, vector FROM memory_vectors "
                    "WHERE user_id = ?",
                    (self.user_id,),
                )
                .fetchall()
            )
        for memory_id, model, content_hash, blob in rows:
            yield StoredVector(memory_id, model, content_hash, np.frombuffer(blob, np.float32))

    def put(self, vectors: Iterable[StoredVector]) -> None:
        params = [
            (
                self.user_id,
                v.memory_id,
                v.model,
                v.content_hash,
                v.vector.astype(np.float32).tobytes(),
            )
            for v in vectors
        ]
        with self._lock, self._connection() as conn:  # one transaction
            conn.executemany("INSERT OR REPLACE INTO memory_vectors VALUES (?, ?, ?, ?, ?)", params)

    def drop(self, memory_ids: Iterable[str]) -> None:
        params = [(self.user_id, memory_id) for memory_id in memory_ids]
        with self._lock, self._connection() as conn:
            conn.executemany(
                "DELETE FROM memory_vectors WHERE user_id = ? AND memory_id = ?", params
            )

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


class StoreVectors:
    """A sidecar namespace `("memories_vectors", user)` of a LangGraph store, never indexed by
    the store itself (the vectors are the index)."""

    PAGE = 1000

    def __init__(self, store: Any, label: str) -> None:
        self.store = store
        self.namespace = (VECTORS_NAMESPACE, label)

    def load(self) -> Iterator[StoredVector]:
        offset = 0
        while True:
            page = self.store.search(self.namespace, limit=self.PAGE, offset=offset)
            for hit in page:
                value = hit.value
                if tuple(hit.namespace) != self.namespace or not isinstance(value, dict):
                    continue
                vector = np.asarray(value.get("vector") or [], dtype=np.float32)
                yield StoredVector(hit.key, str(value.get("model")), str(value.get("hash")), vector)
            if len(page) < self.PAGE:
                return
            offset += self.PAGE

    def put(self, vectors: Iterable[StoredVector]) -> None:
        from langgraph.store.base import PutOp

        ops = [
            PutOp(self.namespace, v.memory_id,
                  {"model": v.model, "hash": v.content_hash, "vector": v.vector.tolist()},
                  index=False)
            for v in vectors
        ]  # fmt: skip
        if ops:
            self.store.batch(ops)

    def drop(self, memory_ids: Iterable[str]) -> None:
        from langgraph.store.base import PutOp

        ops = [PutOp(self.namespace, memory_id, None) for memory_id in memory_ids]
        if ops:
            self.store.batch(ops)


VECTOR_PURPOSES = ("", "descriptions")  # retrieval's vectors, consolidation's


def vector_owners(owner: str) -> tuple[str, ...]:
    """Every key `vector_store_for` files an owner's vectors under, one per purpose: erasing a
    user must drop them all."""
    return tuple(owner + (f"#{purpose}" if purpose else "") for purpose in VECTOR_PURPOSES)


def vector_store_for(manager: BaseMemoryManager, purpose: str = "") -> VectorStore:
    """Where `manager`'s vectors are kept: its SQLite file, a sidecar beside its YAML file, a
    sidecar namespace of its LangGraph store, or (any other manager) this process only. A
    `purpose` ("descriptions": consolidation's) keeps a second set apart from retrieval's."""
    from memory.store.backends.sqlite_db import SqliteMemoryManager
    from memory.store.backends.yaml_files import YamlMemoryManager

    suffix = f"#{purpose}" if purpose else ""
    if isinstance(manager, SqliteMemoryManager):
        return SqliteVectors(manager.path, manager.user_id + suffix)
    if isinstance(manager, YamlMemoryManager):
        sidecar = manager.directory / f".{manager.stem}{SIDECAR_SUFFIX}"
        return SqliteVectors(sidecar, manager.user_id + suffix)
    store_module = sys.modules.get(
        "memory.store.backends.langgraph_store"
    )  # loaded when a store manager exists
    if store_module is not None and isinstance(manager, store_module.StoreMemoryManager):
        return StoreVectors(manager.store, store_module.namespace_label(manager.user_id) + suffix)
    return MemoryVectors()
