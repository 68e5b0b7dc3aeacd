"""The memory a request works on: the user's own, or an empty stand-in when a read names a user
with nothing stored (a read never creates a file, lock, row or cache entry)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from memory import BaseMemoryManager, LongTermMemory, MemoryDocument, WritesDisabled
from memory.integration import get_settings, open_user_memory
from webapp.guard import ApiError, Caller
from webapp.server_store import ServerStore, server_store


class NothingStored(BaseMemoryManager):
    """A user the backend holds nothing of, as a read sees it: no items, revision 0. It keeps
    no state and writes nowhere; the first write opens the real manager instead."""

    def __init__(self, user_id: str, backend: str) -> None:
        super().__init__(user_id)
        self.backend = backend

    def _load_all(self) -> MemoryDocument:
        return MemoryDocument()

    def _save_all(self, document: MemoryDocument) -> None:
        raise WritesDisabled(f"nothing is stored for user {self.user_id!r}; this view only reads")

    @contextmanager
    def _write_lock(self) -> Iterator[None]:
        yield

    def _stored_revision(self) -> int:
        return 0


def _store(loop: asyncio.AbstractEventLoop) -> ServerStore | None:
    """The LangGraph server's live store for the `store` backend (None for the others)."""
    spec = get_settings().memory_backend
    if spec.split(":", 1)[0].strip().lower() != "store":
        return None
    if "langgraph_api.server" not in sys.modules:
        raise ApiError(
            501,
            "the store backend lives in the LangGraph server: open the editor under "
            "`langgraph dev` (make dev), or use a yaml, sqlite or postgres backend",
            "GULFSTREAM_MEMORY_BACKEND",
        )
    return server_store(loop)


def open_memory(caller: Caller, loop: asyncio.AbstractEventLoop) -> LongTermMemory:
    """The caller's memory on the deployment's backend, opened (and created) for a write. The
    `store` backend is the LangGraph server's live store, reached from this server's event loop
    `loop`; the namespace is always the caller's own. Open memories live in the process's
    bounded registry (least recently used closed first)."""
    return open_user_memory(caller.user_id, _store(loop))


def stored_memory(caller: Caller, loop: asyncio.AbstractEventLoop) -> LongTermMemory | None:
    """The caller's memory if the backend holds anything of theirs (or it is open already);
    None otherwise, having opened nothing."""
    return open_user_memory(caller.user_id, _store(loop), create=False)


def read_memory(caller: Caller, loop: asyncio.AbstractEventLoop) -> LongTermMemory:
    """What a read sees: the stored memory, or an empty stand-in that is not kept anywhere."""
    memory = stored_memory(caller, loop)
    if memory is not None:
        return memory
    settings = get_settings()
    kind = settings.memory_backend.split(":", 1)[0].strip().lower()
    backend = "store" if kind == "postgres" else kind  # StoreMemoryManager's name for both
    folder = settings.memory_folder
    # The real folder, so the status still reports this user's dead-lettered turns, if any.
    return LongTermMemory(NothingStored(caller.user_id, backend), data_dir=folder)


def is_stand_in(memory: LongTermMemory) -> bool:
    return isinstance(memory.manager, NothingStored)
