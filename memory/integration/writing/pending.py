"""Server mode's batches: admitted turns kept in the store until a memory_writer run writes them."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from memory.integration.writing.pending_mirror import mirror_of
from memory.store.backends.langgraph_store import namespace_label
from memory.writer.batching import BatchPolicy, split_runs
from memory.writer.turn import Turn

# Laid out like the memory namespaces (kind, user label), so memory/integration/auth.py's rule "the
# second
# label is yours" covers it: a user reads and sends again only their own waiting turns.
PENDING_NAMESPACE = "memories_pending"
PAGE_SIZE = 200
# A thread whose newest waiting turn is older than twice the quiet time plus this never got its
# writer run (the server refused it, or it was cancelled): the next run of the user writes it.
LOST_RUN_GRACE = timedelta(seconds=60)


def pending_namespace(user_id: str) -> tuple[str, str]:
    return (PENDING_NAMESPACE, namespace_label(user_id))


async def keep_pending(store: Any, turn: Turn) -> None:
    """Keep the turn durably until a writer run has applied it (async nodes)."""
    await store.aput(pending_namespace(turn.user_id), turn.turn_id, turn.to_dict(), index=False)
    _mirrored(store, turn.user_id, lambda mirror: mirror.added(turn))


def keep_pending_sync(store: Any, turn: Turn) -> None:
    """`keep_pending` for sync nodes."""
    store.put(pending_namespace(turn.user_id), turn.turn_id, turn.to_dict(), index=False)
    _mirrored(store, turn.user_id, lambda mirror: mirror.added(turn))


async def pending_turns(store: Any, user_id: str) -> list[Turn]:
    """The user's waiting turns, oldest first (a turn that cannot be read is left out; it stays
    in the store for someone to look at)."""
    namespace, found, offset = pending_namespace(user_id), [], 0
    while True:
        page = await store.asearch(namespace, limit=PAGE_SIZE, offset=offset)
        for item in page:
            if tuple(item.namespace) != namespace:
                continue
            try:
                found.append(Turn.from_dict(item.value))
            except (ValueError, TypeError):
                continue
        if len(page) < PAGE_SIZE:
            break
        offset += PAGE_SIZE
    return sorted(found, key=lambda turn: (turn.enqueued_at, turn.turn_id))


def pending_turns_sync(
    store: Any, user_id: str, known: dict[str, Turn] | None = None
) -> list[Turn]:
    """`pending_turns` for sync nodes, for reading them before they are written: a turn in
    `known` (by id, its key) is not parsed again (a waiting turn never changes)."""
    namespace, found, offset, known = pending_namespace(user_id), [], 0, known or {}
    while True:
        page = store.search(namespace, limit=PAGE_SIZE, offset=offset)
        for item in page:
            if tuple(item.namespace) != namespace:
                continue
            turn = known.get(item.key)
            if turn is None:
                try:
                    turn = Turn.from_dict(item.value)
                except (ValueError, TypeError):
                    continue
            found.append(turn)
        if len(page) < PAGE_SIZE:
            break
        offset += PAGE_SIZE
    return sorted(found, key=lambda turn: (turn.enqueued_at, turn.turn_id))


def waiting_in_thread(store: Any, user_id: str, thread_id: str) -> int:
    """How many of the user's turns of `thread_id` wait in the store (sync: for sync nodes,
    which the server runs in a worker thread)."""
    namespace, count, offset = pending_namespace(user_id), 0, 0
    while True:
        page = store.search(namespace, limit=PAGE_SIZE, offset=offset)
        count += sum(
            1 for item in page
            if tuple(item.namespace) == namespace and item.value.get("thread_id") == thread_id
        )  # fmt: skip
        if len(page) < PAGE_SIZE:
            return count
        offset += PAGE_SIZE


async def drop_pending(store: Any, user_id: str, turn_ids: Sequence[str]) -> None:
    """Forget waiting turns once they are applied (or moved to the dead letters)."""
    for turn_id in turn_ids:
        await store.adelete(pending_namespace(user_id), turn_id)
        _mirrored(store, user_id, lambda mirror, gone=turn_id: mirror.dropped([gone]))


def waiting_turns(store: Any, user_id: str, known: dict[str, Turn] | None = None) -> list[Turn]:
    """The user's waiting turns as this process knows them
    (memory/integration/writing/pending_mirror.py): for a
    turn to read before the writer files them, in well under a millisecond. Sync."""
    mirror = mirror_of(store, user_id)
    if mirror is None:
        return pending_turns_sync(store, user_id, known)
    return mirror.turns(lambda: pending_turns_sync(store, user_id, known))


def _mirrored(store: Any, user_id: str, change: Any) -> None:
    mirror = mirror_of(store, user_id)
    if mirror is not None:
        change(mirror)


def due_batches(
    turns: Sequence[Turn],
    trigger: tuple[str, str] | None,
    policy: BatchPolicy,
    now: datetime | None = None,
    flush: str | None = None,
) -> list[list[Turn]]:
    """The batches a writer run should write now, oldest first.

    `trigger` is the (thread, turn id) whose hand-off scheduled this run `policy.quiet_seconds`
    later: when that turn is still its thread's newest, the thread was quiet since, and its batch
    is due (that is the debounce; a newer turn has a run of its own coming). A thread's batch is
    also due once it holds a turn decided "write" (or not scored), `policy.size` turns, or when
    its newest turn waited so long that its run must have been lost. `flush` names a thread
    whose batch is due now whatever it holds (before that conversation is compacted).
    """
    now = now or datetime.now(UTC)
    lost_after = timedelta(seconds=2 * policy.quiet_seconds) + LOST_RUN_GRACE
    by_thread: dict[str, list[Turn]] = {}
    for turn in turns:
        by_thread.setdefault(turn.thread_id, []).append(turn)
    due: list[list[Turn]] = []
    for thread, waiting in by_thread.items():
        newest = waiting[-1]
        if (
            thread == flush
            or any(turn.decision != "batch" for turn in waiting)
            or len(waiting) >= policy.size
            or trigger == (thread, newest.turn_id)
            or now - _when(newest) >= lost_after
        ):
            due.extend(split_runs(waiting))
    return due


def _when(turn: Turn) -> datetime:
    try:
        stamp = datetime.fromisoformat(turn.enqueued_at)
    except ValueError:
        return datetime.min.replace(tzinfo=UTC)
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)
