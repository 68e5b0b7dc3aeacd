"""The process's open memories: one LongTermMemory per (backend, user, store), bounded, each
self-checked when opened, restored from its snapshot when empty, and snapshotted after writes."""

from __future__ import annotations

import logging
import os
import threading
from collections import OrderedDict
from typing import Any

from memory.long_term import LongTermMemory
from memory.retrieval.embedder import DEFAULT as DEFAULT_EMBEDDINGS
from memory.store.factory import open_memory_manager
from memory.store.snapshots import DEFAULT_DELAY_SECONDS, attach_snapshots
from memory.writer.queue import TurnConsumer

logger = logging.getLogger(__name__)

DEFAULT_MAX_OPEN = 256  # users kept open; the least recently used idle one is closed first
_Key = tuple[str, str, int]


class MemoryRegistry:
    """Opens each user's memory once and keeps it (its BM25 index, its queue) while it is
    used. A memory whose queue is writing is never closed."""

    def __init__(self, max_open: int = DEFAULT_MAX_OPEN) -> None:
        self.max_open = max_open
        self._open: OrderedDict[_Key, LongTermMemory] = OrderedDict()
        self._lock = threading.Lock()
        self._opening: dict[_Key, threading.Lock] = {}

    def open(
        self,
        spec: str,
        user_id: str,
        store: Any | None = None,
        *,
        default_data_dir: str | os.PathLike[str] | None = None,
        snapshot_delay: float | None = DEFAULT_DELAY_SECONDS,
        consumer: TurnConsumer | None = None,
        embeddings: Any = DEFAULT_EMBEDDINGS,
        shared_database: str | None = None,
    ) -> LongTermMemory:
        """The user's memory for backend `spec` (a `store` backend uses `store`); ValueError
        for a bad spec or user id. A FAIL self-check stops its writes (reads go on). The journal
        and trace live in the backend's folder, else in `default_data_dir`. `shared_database`
        is the PostgreSQL the deployment's processes share: the `store` backend takes each
        write's lock there, and the trace, recall log and the other records live there (see
        `LongTermMemory`). `embeddings` is used when the memory is first opened."""
        key = (spec, user_id, id(store) if store is not None else 0)
        memory = self.peek_key(key)
        if memory is None:
            with self._lock:
                opening = self._opening.setdefault(key, threading.Lock())
            with opening:  # one opening per key; other users open meanwhile
                memory = self.peek_key(key)
                if memory is None:
                    memory = self._make(
                        spec, user_id, store, default_data_dir, snapshot_delay, embeddings,
                        shared_database,
                    )  # fmt: skip
                    with self._lock:
                        self._open[key] = memory
                        self._opening.pop(key, None)
                        self._close_idle()
        if consumer is not None and memory.consumer is None:
            memory.consumer = consumer
        return memory

    def peek(self, spec: str, user_id: str, store: Any | None = None) -> LongTermMemory | None:
        """The user's memory if it is open, without opening anything."""
        return self.peek_key((spec, user_id, id(store) if store is not None else 0))

    def peek_key(self, key: _Key) -> LongTermMemory | None:
        with self._lock:
            memory = self._open.get(key)
            if memory is not None:
                self._open.move_to_end(key)
            return memory

    def _make(
        self,
        spec: str,
        user_id: str,
        store: Any | None,
        default_data_dir: str | os.PathLike[str] | None,
        snapshot_delay: float | None,
        embeddings: Any,
        shared_database: str | None,
    ) -> LongTermMemory:
        manager = open_memory_manager(spec, user_id, store, lock_database=shared_database)
        report = manager.self_check()
        log = logger.error if report.status == "FAIL" else logger.info
        log(
            "memory self_check for user %r (%s): %s, %d items, issues=%s, repaired=%s",
            user_id, manager.backend, report.status, report.item_count, report.issues,
            report.repaired,
        )  # fmt: skip
        memory = LongTermMemory(
            manager, data_dir=manager.data_dir or default_data_dir, embeddings=embeddings,
            state_database=shared_database,
        )  # fmt: skip
        if report.status != "FAIL":
            memory.snapshots = attach_snapshots(
                manager, snapshot_delay, on_restore=lambda: _vectors_after_bulk_load(memory)
            )
        return memory

    def _close_idle(self) -> None:
        for key in list(self._open):
            if len(self._open) <= self.max_open:
                return
            if not self._open[key].writing:
                del self._open[key]

    def clear(self) -> None:
        """Forget every open memory (tests; a queue still writing keeps its own reference)."""
        with self._lock:
            self._open.clear()

    def __len__(self) -> int:
        return len(self._open)


def _vectors_after_bulk_load(memory: LongTermMemory) -> None:
    """After a restore: make the vectors before the first reply when that takes seconds (else
    they are made in the background and the editor's status says so); a failing embedding
    provider leaves BM25 alone, never the restore undone."""
    try:
        memory.retrievers.catch_up()
    except Exception:
        logger.exception("embedding the restored memories of %r failed; BM25 only meanwhile",
                         memory.user_id)  # fmt: skip


registry = MemoryRegistry()


def open_memory(
    spec: str, user_id: str, store: Any | None = None, **options: Any
) -> LongTermMemory:
    """`registry.open(...)`: the process's LongTermMemory of one user."""
    return registry.open(spec, user_id, store, **options)
