"""Lineage: the checkpoint ancestor chain of the current run, read from the checkpointer, cached."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig

from graph.checkpoint_links import aread_parent_links, read_parent_links
from memory.branch import Lineage

logger = logging.getLogger(__name__)

# Keys LangGraph puts in a node's `configurable` (langgraph._internal._constants).
CHECKPOINTER_KEY = "__pregel_checkpointer"
CHECKPOINT_MAP_KEY = "checkpoint_map"
DURABILITY_KEY = "__pregel_durability"
ROOT = ""  # the parent of a thread's first checkpoint
# With durability "async" (the default) the checkpoint a step starts from is saved in the
# background while the step runs, so a node may ask for it a few milliseconds too early: wait.
CURRENT_CHECKPOINT_WAIT_SECONDS = 5.0
PARENT_CACHE_SIZE = 100_000


class ParentCache:
    """(thread_id, checkpoint_id) → parent checkpoint id, bounded, least recently used first out.

    A checkpoint's parent never changes, so an entry never goes stale; each turn only fetches
    the checkpoints written since the previous one.
    """

    def __init__(self, max_entries: int = PARENT_CACHE_SIZE) -> None:
        self.max_entries = max_entries
        self._parents: OrderedDict[tuple[str, str], str] = OrderedDict()
        self._newest: dict[str, str] = {}  # thread → the newest checkpoint id read
        self._lock = threading.Lock()
        self.reads = 0  # calls to the checkpointer (for tests and benchmarks)

    def follow(self, thread_id: str, checkpoint_id: str, chain: list[str]) -> str | None:
        """Append `checkpoint_id` and its cached ancestors to `chain`; return the first id
        whose parent is not cached, or None once the root was reached."""
        current = checkpoint_id
        with self._lock:
            while current:
                chain.append(current)
                key = (thread_id, current)
                parent = self._parents.get(key)
                if parent is None:
                    return current
                self._parents.move_to_end(key)
                current = parent
        return None

    def knows(self, thread_id: str, checkpoint_id: str) -> bool:
        """Whether the parent of this checkpoint was read (so the checkpoint is saved)."""
        with self._lock:
            return (thread_id, checkpoint_id) in self._parents

    def put_many(self, thread_id: str, links: dict[str, str]) -> None:
        """Remember `{checkpoint_id: parent_id}` links read in one checkpointer call."""
        with self._lock:
            self.reads += 1
            for checkpoint_id, parent_id in links.items():
                self._parents[(thread_id, checkpoint_id)] = parent_id
                self._parents.move_to_end((thread_id, checkpoint_id))
            if links:
                self._newest[thread_id] = max(self._newest.get(thread_id, ""), *links)
            while len(self._parents) > self.max_entries:
                evicted, _ = self._parents.popitem(last=False)
                self._newest.pop(evicted[0], None)  # its next read is a full one

    def newest(self, thread_id: str) -> str:
        """The newest checkpoint id read for the thread ("" when none): later reads of parent
        links need only what was saved after it."""
        with self._lock:
            return self._newest.get(thread_id, "")

    def clear(self) -> None:
        with self._lock:
            self._parents.clear()
            self._newest.clear()
            self.reads = 0

    def __len__(self) -> int:
        return len(self._parents)


parent_cache = ParentCache()


def current_checkpoint_id(config: RunnableConfig | None) -> str:
    """The checkpoint the current step started from ("" without a checkpointer).

    In `ltm_write` this is a checkpoint written by this run after the agent step, so a
    sibling fork can never have it in its lineage.
    """
    configurable = (config or {}).get("configurable") or {}
    if configurable.get(CHECKPOINTER_KEY) is None:
        return ""  # LangGraph still numbers the steps, but nothing is saved under that id
    checkpoint_map = configurable.get(CHECKPOINT_MAP_KEY) or {}
    return str(checkpoint_map.get("", "")) if isinstance(checkpoint_map, Mapping) else ""


def current_lineage(config: RunnableConfig | None) -> Lineage | None:
    """The current run's ancestor checkpoints, or None when the graph has no checkpointer
    (no checkpoints, no branches: nothing to filter). For sync nodes (they run in a thread)."""
    start = _start(config)
    if start is None:
        return None
    checkpointer, thread_id, checkpoint_id, may_wait = start
    return lineage_of(checkpointer, thread_id, checkpoint_id, may_wait=may_wait)


async def acurrent_lineage(config: RunnableConfig | None) -> Lineage | None:
    """`current_lineage` for async nodes: the checkpointer's async API, never blocking the loop."""
    start = _start(config)
    if start is None:
        return None
    checkpointer, thread_id, checkpoint_id, may_wait = start
    return await alineage_of(checkpointer, thread_id, checkpoint_id, may_wait=may_wait)


def lineage_of(
    checkpointer: Any, thread_id: str, checkpoint_id: str, *, may_wait: bool = False
) -> Lineage:
    """The ancestor chain of any checkpoint of a thread (`make chat` asks for its newest)."""
    chain: list[str] = []
    unknown = parent_cache.follow(thread_id, checkpoint_id, chain)
    while unknown is not None:
        wait = may_wait and unknown == checkpoint_id
        deadline, delay = time.monotonic() + CURRENT_CHECKPOINT_WAIT_SECONDS, 0.0005
        last_try = False
        while (parent := _fetch_parent(checkpointer, thread_id, unknown, last_try)) is None:
            if last_try:
                return _partial(thread_id, chain, unknown, checkpoint_id)
            last_try = not wait or time.monotonic() >= deadline
            time.sleep(delay if wait else 0)
            delay = min(delay * 2, 0.05)
        unknown = parent_cache.follow(thread_id, parent, chain) if parent else None
    return Lineage(thread_id, frozenset(chain))


async def alineage_of(
    checkpointer: Any, thread_id: str, checkpoint_id: str, *, may_wait: bool = False
) -> Lineage:
    """`lineage_of` with the checkpointer's async API."""
    chain: list[str] = []
    unknown = parent_cache.follow(thread_id, checkpoint_id, chain)
    while unknown is not None:
        wait = may_wait and unknown == checkpoint_id
        deadline, delay = time.monotonic() + CURRENT_CHECKPOINT_WAIT_SECONDS, 0.0005
        last_try = False
        while (parent := await _afetch_parent(checkpointer, thread_id, unknown, last_try)) is None:
            if last_try:
                return _partial(thread_id, chain, unknown, checkpoint_id)
            last_try = not wait or time.monotonic() >= deadline
            await asyncio.sleep(delay if wait else 0)
            delay = min(delay * 2, 0.05)
        unknown = parent_cache.follow(thread_id, parent, chain) if parent else None
    return Lineage(thread_id, frozenset(chain))


def checkpoint_is_saved(thread_id: str, checkpoint_id: str) -> bool:
    """After a lineage walk from `checkpoint_id`: whether the checkpointer had it. A walk caches
    the parent of every checkpoint it found, and a missing one only when it is saved. (An entry
    evicted meanwhile reads as unsaved, the safe answer for a write's scope.)"""
    return parent_cache.knows(thread_id, checkpoint_id)


def _fetch_parent(
    checkpointer: Any, thread_id: str, checkpoint_id: str, last_try: bool
) -> str | None:
    """The parent of `checkpoint_id` (ROOT for the first), caching what was read; None when
    the checkpoint is not saved (yet). Reads only the links saved since the newest one known,
    unless that misses an older checkpoint (or this is the `last_try` before giving up)."""
    since = parent_cache.newest(thread_id)
    since = "" if last_try or checkpoint_id < since else since
    links = read_parent_links(checkpointer, thread_id, since)
    if links is not None:
        return _remember_links(thread_id, links, checkpoint_id)
    found = checkpointer.get_tuple(_checkpoint_config(thread_id, checkpoint_id))
    return _remember_tuple(thread_id, checkpoint_id, found)


async def _afetch_parent(
    checkpointer: Any, thread_id: str, checkpoint_id: str, last_try: bool
) -> str | None:
    since = parent_cache.newest(thread_id)
    since = "" if last_try or checkpoint_id < since else since
    links = await aread_parent_links(checkpointer, thread_id, since)
    if links is not None:
        return _remember_links(thread_id, links, checkpoint_id)
    found = await checkpointer.aget_tuple(_checkpoint_config(thread_id, checkpoint_id))
    return _remember_tuple(thread_id, checkpoint_id, found)


def _remember_links(thread_id: str, links: dict[str, str], checkpoint_id: str) -> str | None:
    parent_cache.put_many(thread_id, links)
    return links.get(checkpoint_id)


def _remember_tuple(thread_id: str, checkpoint_id: str, found: Any) -> str | None:
    if found is None:
        return None
    parent_config = found.parent_config or {}
    parent = str((parent_config.get("configurable") or {}).get("checkpoint_id") or ROOT)
    parent_cache.put_many(thread_id, {checkpoint_id: parent})
    return parent


def _partial(thread_id: str, chain: list[str], missing: str, current_id: str) -> Lineage:
    # The current checkpoint is not saved (durability "exit", or a very slow saver): the lineage
    # is what is known, which shows user memories and hides the branch memories of the unknown
    # part rather than risk showing a sibling's.
    logger.warning(
        "checkpoint %s of thread %s is not in the checkpointer%s; its branch memories are hidden",
        missing,
        thread_id,
        "" if missing == current_id else " (an ancestor was deleted?)",
    )
    return Lineage(thread_id, frozenset(chain))


def _start(config: RunnableConfig | None) -> tuple[Any, str, str, bool] | None:
    configurable = (config or {}).get("configurable") or {}
    checkpointer = configurable.get(CHECKPOINTER_KEY)
    thread_id = str(configurable.get("thread_id") or "")
    checkpoint_id = current_checkpoint_id(config)
    if checkpointer is None or not thread_id or not checkpoint_id:
        return None
    # With durability "exit" nothing is saved before the run ends: waiting would be in vain.
    may_wait = configurable.get(DURABILITY_KEY, "async") != "exit"
    return checkpointer, thread_id, checkpoint_id, may_wait


def _checkpoint_config(thread_id: str, checkpoint_id: str) -> RunnableConfig:
    return {
        "configurable": {
            "thread_id": thread_id,
            "checkpoint_ns": "",
            "checkpoint_id": checkpoint_id,
        }
    }
