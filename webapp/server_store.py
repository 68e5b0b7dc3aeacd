"""The LangGraph server's live store as a sync BaseStore, for the editor's StoreMemoryManager."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterable
from typing import Any

from langgraph.store.base import BaseStore, GetOp, Item, Op, PutOp, Result, SearchItem, SearchOp

# A store call that has not answered in this time is a hung server, not a slow one.
CALL_TIMEOUT_SECONDS = 60.0

_stores: dict[int, ServerStore] = {}
_stores_guard = threading.Lock()


class ServerStore(BaseStore):
    """Forwards each store operation to the server's own store API through the in-process SDK
    client (`langgraph_sdk.get_client()` without a URL).

    A route handler cannot use `langgraph.config.get_store()` (it can be a stale, empty store);
    the in-process client reaches the store the graphs write to. That client skips auth: the
    namespaces it receives come from StoreMemoryManager, built for the authenticated user only.
    The manager is synchronous, so its calls run in worker threads and each operation is sent
    to the server's event loop and waited for. Operations of one batch run in order, not in one
    transaction: StoreMemoryManager writes the revision last so a reader never sees it early.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self._client: Any | None = None

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        if _running_loop() is self.loop:
            # Waiting here would block the loop that has to answer: a guaranteed deadlock.
            raise RuntimeError("ServerStore.batch was called on the server's event loop")
        future = asyncio.run_coroutine_threadsafe(self.abatch(list(ops)), self.loop)
        try:
            return future.result(timeout=CALL_TIMEOUT_SECONDS)
        except TimeoutError:
            future.cancel()
            raise

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        if self._client is None:
            from langgraph_sdk import get_client

            self._client = get_client()  # no URL: this server's API, in-process
        store = self._client.store
        results: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                found = await store.get_item(op.namespace, key=op.key)
                results.append(Item(**_item_fields(found)) if found else None)
            elif isinstance(op, SearchOp):
                answer = await store.search_items(
                    op.namespace_prefix,
                    filter=op.filter,
                    limit=op.limit,
                    offset=op.offset,
                    query=op.query,
                )
                results.append([_search_item(raw) for raw in answer["items"]])
            elif isinstance(op, PutOp):
                if op.value is None:
                    await store.delete_item(op.namespace, key=op.key)
                else:
                    index = list(op.index) if op.index else op.index
                    await store.put_item(op.namespace, key=op.key, value=op.value, index=index)
                results.append(None)
            else:
                raise NotImplementedError(f"ServerStore does not support {type(op).__name__}")
        return results


class ServerThreads:
    """The LangGraph server's threads as `erase_user(threads=...)` needs them: `delete_thread`
    through the in-process SDK client, sent to the server's loop from a worker thread. The
    client skips auth: the ids come from the caller's own archive and journal only."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop

    def delete_thread(self, thread_id: str) -> None:
        future = asyncio.run_coroutine_threadsafe(self._delete(thread_id), self.loop)
        try:
            future.result(timeout=CALL_TIMEOUT_SECONDS)
        except TimeoutError:
            future.cancel()
            raise

    @staticmethod
    async def _delete(thread_id: str) -> None:
        from langgraph_sdk import get_client

        await get_client().threads.delete(thread_id)


def _item_fields(raw: Any) -> dict[str, Any]:
    return {
        "namespace": tuple(raw["namespace"]),
        "key": raw["key"],
        "value": raw["value"],
        "created_at": raw["created_at"],
        "updated_at": raw["updated_at"],
    }


def _search_item(raw: Any) -> SearchItem:
    return SearchItem(**_item_fields(raw), score=raw.get("score"))


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def server_store(loop: asyncio.AbstractEventLoop) -> ServerStore:
    """One ServerStore per server loop, so the manager cache and its write lock are shared."""
    with _stores_guard:
        store = _stores.get(id(loop))
        if store is None or store.loop is not loop:
            store = _stores[id(loop)] = ServerStore(loop)
        return store
