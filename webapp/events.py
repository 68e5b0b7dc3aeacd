"""Server-sent events: poll the cheap revision token and push what changed, and by which tool."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from anyio import sleep, to_thread

from memory import BaseMemoryManager, LongTermMemory
from memory.integration import get_settings
from webapp.views import changed_cards

logger = logging.getLogger(__name__)
HEARTBEAT_SECONDS = 15.0
Snapshot = dict[str, tuple[str, str, bool, int, int]]
Reopen = Callable[[], LongTermMemory | None]


def poll_seconds() -> float:
    """How often a stream checks the revision (GULFSTREAM_EDITOR_POLL_SECONDS, default 0.25)."""
    return max(0.05, get_settings().editor_poll_seconds)


def revision_of(manager: BaseMemoryManager) -> str:
    return manager.revision


def snapshot(manager: BaseMemoryManager) -> Snapshot:
    """Enough of every item (tombstones too) to tell what a write changed."""
    items = manager.all_items()
    return {
        i: (it.description, it.theme, it.deleted, len(it.history), it.hit)
        for i, it in items.items()
    }


def describe_changes(
    manager: BaseMemoryManager, before: Snapshot, after: Snapshot
) -> list[dict[str, Any]]:
    """One row per changed item, from its newest history entry: action, reason, time, text."""
    rows = []
    for memory_id, state in after.items():
        previous = before.get(memory_id)
        if previous == state:
            continue
        if previous is not None and previous[:4] == state[:4]:
            entry = {"action": "hit"}  # only the hit count moved: no history entry of its own
        else:
            try:
                entry = manager.get(memory_id, include_deleted=True).history[-1]
            except (KeyError, IndexError):
                entry = {}
        rows.append(
            {
                "id": memory_id,
                "action": entry.get("action", "change"),
                "reason": entry.get("reason", ""),
                "time": entry.get("time", ""),
                "description": state[0],
                "theme": state[1],
                "deleted": state[2],
            }
        )
    rows.extend(
        {
            "id": i,
            "action": "purge",
            "reason": "",
            "time": "",
            "description": s[0],
            "theme": s[1],
            "deleted": True,
        }
        for i, s in before.items()
        if i not in after
    )
    return sorted(rows, key=lambda row: row["time"])


def trace_rows(memory: LongTermMemory, seen: set[tuple[str, int]]) -> list[dict[str, Any]]:
    """New rows of the memory writer's trace (which tool changed what); `seen` is updated."""
    try:
        from webapp.trace_adapter import unseen_rows
    except ImportError:  # the writer package is optional for the editor
        return []
    try:
        return unseen_rows(memory, seen)
    except Exception:  # the trace is a nicety; a broken trace must not stop the stream
        logger.exception("reading the write trace failed")
        return []


def trace_signature(memory: LongTermMemory) -> object:
    """A cheap stamp of the trace files (stat only); None when the trace cannot be read."""
    try:
        from webapp.trace_adapter import trace_signature as signature
    except ImportError:
        return None
    return signature(memory)


def format_event(event: str, data: dict[str, Any]) -> str:
    """One SSE frame; JSON keeps newlines in memory text from splitting the frame."""
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def change_event(
    manager: BaseMemoryManager, revision: str, changes: list[dict[str, Any]], trace: list[Any]
) -> dict[str, Any]:
    """A `change` event: the rows for the activity panel plus the changed cards, so the page
    patches those cards instead of fetching the whole list again."""
    cards = changed_cards(manager, [row["id"] for row in changes]) if changes else {}
    return {"revision": revision, "changes": changes, "trace": trace, **cards}


async def change_stream(
    memory: LongTermMemory,
    since: str,
    is_disconnected: Callable[[], Any],
    reopen: Reopen | None = None,
) -> AsyncIterator[str]:
    """Yield a `hello`, then a `change` event after every write, and heartbeats in between.

    `reopen` is for a user with nothing stored (`memory` is then an empty stand-in): each poll
    asks it for the real memory, which appears with the user's first write; until then nothing
    is opened or created."""
    manager = memory.manager
    revision = await to_thread.run_sync(revision_of, manager)
    before = await to_thread.run_sync(snapshot, manager)
    seen: set[tuple[str, int]] = set()
    stamp = await to_thread.run_sync(trace_signature, memory)
    await to_thread.run_sync(trace_rows, memory, seen)  # rows from before the page opened
    yield "retry: 2000\n\n"
    yield format_event("hello", {"revision": revision, "user_id": manager.user_id})
    if since and since != revision:
        # Changes were missed while the page was not listening: it reloads its first page.
        event = {"revision": revision, "changes": [], "trace": [], "resync": True}
        yield format_event("change", event)
    last_beat = time.monotonic()
    interval = poll_seconds()
    while not await is_disconnected():
        await sleep(interval)
        if reopen is not None:
            opened = await to_thread.run_sync(reopen)
            if opened is None:
                # Nothing stored yet; the trace beside the journal may still say what the
                # writer decided (a turn the admission scorer skipped writes nothing else).
                new_stamp = await to_thread.run_sync(trace_signature, memory)
                trace = []
                if new_stamp != stamp:
                    stamp = new_stamp
                    trace = await to_thread.run_sync(trace_rows, memory, seen)
                if trace:
                    yield format_event(
                        "change", {"revision": revision, "changes": [], "trace": trace}
                    )
                    last_beat = time.monotonic()
                elif time.monotonic() - last_beat > HEARTBEAT_SECONDS:
                    yield ": heartbeat\n\n"
                    last_beat = time.monotonic()
                continue
            memory, manager, reopen = opened, opened.manager, None
            stamp = None  # read the trace on this poll: the first write's rows may be there
        try:
            current = await to_thread.run_sync(revision_of, manager)
        except Exception as exc:  # a corrupt file mid-edit: tell the page, keep the stream
            yield format_event("problem", {"error": str(exc)})
            await sleep(interval * 4)
            continue
        # The writer marks its trace rows applied just after the store commit, so they can
        # land after the revision moved: the trace files are watched on their own too.
        new_stamp = await to_thread.run_sync(trace_signature, memory)
        trace = []
        if current != revision or new_stamp != stamp:
            stamp = new_stamp
            trace = await to_thread.run_sync(trace_rows, memory, seen)
        if current != revision:
            after = await to_thread.run_sync(snapshot, manager)
            changes = await to_thread.run_sync(describe_changes, manager, before, after)
            revision, before = current, after
            event = await to_thread.run_sync(change_event, manager, revision, changes, trace)
            yield format_event("change", event)
            last_beat = time.monotonic()
        elif trace:
            yield format_event("change", {"revision": revision, "changes": [], "trace": trace})
            last_beat = time.monotonic()
        elif time.monotonic() - last_beat > HEARTBEAT_SECONDS:
            yield ": heartbeat\n\n"
            last_beat = time.monotonic()
