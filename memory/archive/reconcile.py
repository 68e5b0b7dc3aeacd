"""Forgetting in the conversation archive: what carries a forgotten memory is hidden from the
agent (its messages, the digests of their days) until it is restored."""

from __future__ import annotations

import itertools
import math
import threading
import time
import weakref
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from memory.archive.dates import day_bounds, local_day
from memory.archive.digest import extractive_digest
from memory.archive.query import Window
from memory.archive.records import ArchivedMessage, Digest, ForgottenRecord, MessageKey
from memory.store.branch import batch_size_of
from memory.store.core_context import human_summary, user_facts
from memory.store.forgotten import fingerprint, forgotten_at, is_forgotten, lineage_of
from memory.store.item import MemoryItem
from memory.store.manager import BaseMemoryManager
from memory.text.fingerprint import WORD_COVERAGE, Fingerprint, redact

if TYPE_CHECKING:
    from memory.archive.base import ConversationArchive

__all__ = ["Reconciled", "carrying_messages", "hide", "reconcile", "reseal", "unhide"]

# Both archives rank only the newest 2,000 matches of a query: a query that fills this many is
# answered by reading the messages instead.
INDEX_WINDOW = 2_000
MAX_WORD_QUERIES = 64  # index queries for a memory's words; beyond, its messages are all read
# History entries that wrote the memory's content: their turns carried it.
WRITING_ACTIONS = ("create", "update", "merge")


def _turn_places(items: Sequence[MemoryItem]) -> dict[tuple[str, str], bool]:
    """(thread, checkpoint) of the turns that wrote the memory's content, each with whether it
    is exactly the turn the content came from (False: the last turn of a batched writer run,
    which records its last turn for a change any of its turns may have told)."""
    places: dict[tuple[str, str], bool] = {}
    for item in items:
        entries = [e for e in item.history if e.get("action") in WRITING_ACTIONS]
        for entry in [*entries, item.origin]:
            thread, checkpoint = entry.get("thread_id", ""), entry.get("checkpoint_id", "")
            if thread and checkpoint:
                exact = batch_size_of(entry) == 1
                places[(thread, checkpoint)] = places.get((thread, checkpoint), False) or exact
    return places


# ── what in the archive carries it ──────────────────────────────────────


def carrying_messages(
    archive: ConversationArchive,
    item: MemoryItem,
    *,
    ancestors: Sequence[MemoryItem] = (),
    until: float | None = None,
) -> list[MessageKey]:
    """The archived messages that carry a forgotten memory: those of the turns in its history
    (and in the history of the `ancestors` it superseded; of a batched writer run's recorded
    last turn, only those its fingerprint matches), and any message said up to `until`
    (default: when it was forgotten) that its fingerprint matches (its names, places and
    numbers, or most of its words). Erase removes these same messages for good."""
    until = forgotten_at(item) if until is None else until
    return sorted(_carrying(archive, [item, *ancestors], until))


def _carrying(
    archive: ConversationArchive, chain: Sequence[MemoryItem], until: float
) -> dict[MessageKey, ArchivedMessage]:
    places, print_ = _turn_places(chain), fingerprint(chain)
    # A turn that told it is taken whatever its words; a batch's last turn only where it
    # names the memory (it may have told another fact of the batch, which stays).
    found = {
        m.ref: m
        for thread in {thread for thread, _ in places}
        for m in archive.messages(thread)
        if (exact := places.get((m.thread_id, m.checkpoint_id))) is not None
        and (exact or print_.carries(m.content))
    }
    if not print_.empty:
        candidates = _candidates(archive, print_, until)
        found.update((m.ref, m) for m in candidates if print_.carries(m.content))
    return found


def _candidates(
    archive: ConversationArchive, print_: Fingerprint, until: float
) -> list[ArchivedMessage]:
    """The messages said up to `until` that the archive's index says may carry `print_` (each
    name; any mark; the share of its words `carries` needs), to be checked one by one; every
    message up to `until` when a query is too broad for the index's ranked window."""
    window = Window(until=until + 0.001)

    def every_message() -> list[ArchivedMessage]:
        return [m for m in archive.messages(until=window.until) if print_.may_carry(m.content)]

    queries: list[tuple[Sequence[str], bool]] = [(sorted(name), False) for name in print_.names]
    if print_.marks:
        queries.append((sorted(print_.marks), True))
    words = sorted(print_.words)
    need = max(1, math.ceil(len(words) * WORD_COVERAGE - 1e-9)) if words else 0
    subsets = math.comb(len(words), need) if words else 0
    if subsets <= MAX_WORD_QUERIES:
        queries += [(combo, False) for combo in itertools.combinations(words, need)]
    elif words:  # a text with `need` of the words holds one of any len - need + 1 of them
        queries.append((sorted(words, key=len, reverse=True)[: len(words) - need + 1], True))
    found: dict[MessageKey, ArchivedMessage] = {}
    for terms, any_term in queries:
        rows = archive.match(terms, any_term, window, INDEX_WINDOW)
        if len(rows) >= INDEX_WINDOW:  # older matches are not ranked: read them all instead
            return every_message()
        found.update((m.ref, m) for m, _ in rows)
    return list(found.values())


def hide(
    archive: ConversationArchive,
    memory_id: str,
    item: MemoryItem,
    *,
    ancestors: Sequence[MemoryItem] = (),
) -> ForgottenRecord:
    """Hide what carries a forgotten memory: its messages leave every search and digest, and
    the digests of their days (and any digest that names it) are sealed again without it; the
    digests as they were are kept in the record for `unhide`."""
    carried = _carrying(archive, [item, *ancestors], forgotten_at(item))
    keys = sorted(carried)
    print_ = fingerprint([item, *ancestors])
    hidden_days = {local_day(m.timestamp, archive.zone) for m in carried.values()}
    digests = [
        d for d in archive.digests()
        if d.day in hidden_days or (not print_.empty and print_.carries(d.text))
    ]  # fmt: skip
    # Hidden again (forgotten once more, or by two turns at once): each day keeps the digest
    # from before the first hide, which is the one a restore puts back.
    earlier = archive.forgotten().get(memory_id)
    originals = {d.day: d for d in digests}
    originals.update({d.day: d for d in (earlier.digests if earlier is not None else ())})
    record = ForgottenRecord(memory_id, forgotten_at(item), tuple(keys), tuple(originals.values()))
    archive.put_forgotten(record)
    reseal(archive, [d.day for d in digests], {memory_id: print_})
    return record


def unhide(archive: ConversationArchive, memory_id: str) -> ForgottenRecord | None:
    """Bring back what forgetting `memory_id` hid: its messages, and each day's digest as it
    was (sealed again instead when another forgotten memory still hides part of that day)."""
    record = archive.drop_forgotten(memory_id)
    if record is None:
        return None
    still = archive.hidden_keys()
    for original in record.digests:
        start, end = day_bounds(original.day, archive.zone)
        day = archive.messages(since=start, until=end)
        if not any(m.ref in still for m in day):
            archive.put_digest(original)
        else:
            reseal(archive, [original.day])
    return record


def reseal(
    archive: ConversationArchive, days: Iterable[str], prints: Mapping[str, Fingerprint] = {}
) -> None:
    """Seal `days` again from their messages that are not hidden (extractive: no model is
    called on the way to a reply), leaving out any line that still carries `prints`."""
    hidden = archive.hidden_keys()
    for day in dict.fromkeys(days):
        start, end = day_bounds(day, archive.zone)
        day_messages = [m for m in archive.messages(since=start, until=end)
                        if m.role in ("user", "assistant")]  # fmt: skip
        if not day_messages:
            continue
        visible = [m for m in day_messages if m.ref not in hidden]
        text, _ = redact(extractive_digest(visible), prints)
        last = max(m.timestamp for m in day_messages)  # not due again for what it left out
        archive.put_digest(Digest(archive.user_id, day, text, len(visible), last, time.time()))


# ── the one call that keeps the archive in step with the store ─────────


@dataclass(frozen=True)
class Reconciled:
    """What `reconcile` changed: messages hidden per newly forgotten memory, memories whose
    messages came back."""

    hidden: dict[str, int] = field(default_factory=dict)
    restored: tuple[str, ...] = ()


def reconcile(manager: BaseMemoryManager, archive: ConversationArchive) -> Reconciled:
    """Hide what carries each memory forgotten since the last call and bring back what a
    restored one hid; cheap when nothing changed (a tombstone read and one small table)."""
    with _lock_of(archive):  # two turns of one user at once hide each memory once
        # Neither the store nor the archive's records changed since the last look: nothing to do.
        seen = (id(manager), manager.change_token(), archive.forgotten_signature())
        if _looked.get(archive) == seen and seen[2] is not None:
            return Reconciled()
        done = _reconcile(manager, archive)
        _looked[archive] = (id(manager), manager.change_token(), archive.forgotten_signature())
        return done


def _reconcile(manager: BaseMemoryManager, archive: ConversationArchive) -> Reconciled:
    items = manager.all_items()
    forgotten = {memory_id: item for memory_id, item in items.items() if is_forgotten(item)}
    records = archive.forgotten()
    # A memory removed from the store altogether (erased) stays hidden: only a restore (or a
    # merge of the restored memory) brings its messages back.
    restored = tuple(sorted(i for i in records if i in items and i not in forgotten))
    for memory_id in restored:
        unhide(archive, memory_id)
    hidden: dict[str, int] = {}
    # New, or restored and forgotten again since the last call (what was said between counts).
    due = [
        i for i in forgotten
        if i not in records or abs(records[i].forgotten_at - forgotten_at(forgotten[i])) > 0.001
    ]  # fmt: skip
    for memory_id in due:
        chain = lineage_of(forgotten[memory_id], items)
        record = hide(archive, memory_id, chain[0], ancestors=chain[1:])
        hidden[memory_id] = len(record.messages)
    if restored:  # `human` was seeded without them after they were forgotten
        manager.seed_core_context(human=human_summary(user_facts(manager.list_items())))
    return Reconciled(hidden, restored)


_looked: weakref.WeakKeyDictionary[ConversationArchive, tuple[int, str, object]]
_looked = weakref.WeakKeyDictionary()
_locks: weakref.WeakKeyDictionary[ConversationArchive, threading.Lock]
_locks = weakref.WeakKeyDictionary()
_locks_lock = threading.Lock()


def _lock_of(archive: ConversationArchive) -> threading.Lock:
    with _locks_lock:
        return _locks.setdefault(archive, threading.Lock())
