"""erase_memory, erase_conversation and erase_user: remove for good, from every tier, one memory
with everything derived from it, what one conversation put in memory, or everything of one user;
each returns an ErasureReport."""

from __future__ import annotations

import json
import logging
from collections.abc import Collection, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from memory.erasure.archive import ErasableArchive
from memory.erasure.files import erase_plans, erase_snapshots, erase_yaml_copies
from memory.erasure.rows import (
    JOURNAL_TABLES,
    RECALL_TABLES,
    REMINDER_TABLES,
    STATE_TABLES,
    SUMMARY_TABLES,
    TRACE_TABLES,
    SharedTable,
    erase_rows,
)
from memory.erasure.stores import (
    erase_everything,
    purge_items,
    redact_core_context,
    scrub_backend,
)
from memory.erasure.threads import delete_threads, known_threads
from memory.errors import MemoryNotFound
from memory.store.erasure_report import ErasureReport
from memory.store.item import MemoryItem
from memory.store.reminders import REMINDER_COLUMNS, REMINDERS_FILE, reminder_of_row
from memory.store.sqlite_file import scrub_file
from memory.store.state_db import SUMMARIES_FILE, PostgresState, StateDatabase
from memory.text.needles import MIN_CONTAINED_CHARS, Needles

if TYPE_CHECKING:
    from memory.retrieval.recall_log import RecallLog
    from memory.store.manager import BaseMemoryManager
    from memory.store.snapshots import SnapshotScheduler

logger = logging.getLogger(__name__)

CHECKPOINTS_NOTE = (
    "the checkpoints of the threads where it was said still hold it: they are the conversation "
    "itself and belong to the checkpointer (erase_user(threads=checkpointer), or delete the "
    "threads with the LangGraph SDK on a server)"
)

NO_ARCHIVE_NOTE = "no conversation archive was given: archived messages were not looked at"


class ErasedMemory(Protocol):
    """Every place of one user's memory an erase reaches (a `LongTermMemory` is one): the store,
    the recall log, the snapshots, the journal and its trace, the records in `data_dir` or the
    deployment's PostgreSQL (`state_dsn`)."""

    manager: BaseMemoryManager
    recall_log: RecallLog
    snapshots: SnapshotScheduler | None
    journal_path: Path
    data_dir: Path
    state_dsn: str | None

    @property
    def user_id(self) -> str: ...
    @property
    def trace_path(self) -> Path: ...
    def state_database(self, file: str, schema: str, synchronous: str = "") -> StateDatabase: ...


def erase_memory(
    memory: ErasedMemory, memory_id: str, archive: ErasableArchive | None = None
) -> ErasureReport:
    """Remove `memory_id` (tombstone or not) and everything derived from it: its versions (the
    copy-on-write versions that supersede it, or that it supersedes), its history, what other
    items' histories say of it, its vector, the archived messages carrying it (text and index)
    and the digests of their days (sealed again without them), its rows in the journal, trace,
    recall log and topic summaries, and every snapshot of the user (rewritten without it). The
    files touched are vacuumed and their WAL emptied. MemoryNotFound when no item has that id."""
    manager = memory.manager
    manager._check_writable()  # a store that refuses writes refuses before anything is removed
    items = manager.all_items()
    if memory_id not in items:
        raise MemoryNotFound(memory_id)
    chosen = _versions(items, memory_id)
    report = ErasureReport(memory.user_id, sorted(chosen))
    needles = Needles(set(chosen))
    for item in chosen.values():
        needles.add_texts(item_texts(item))
    if archive is not None:
        archive.erase_carriers(items, chosen, needles, report)
    else:
        report.notes.append(NO_ARCHIVE_NOTE)
    memory.recall_log.flush()  # queued recalls of the memory would come back after the erase
    purge_items(manager, needles, report)
    redact_core_context(manager, needles, report)
    _drop_vectors(memory, set(chosen), report)

    def carries(row: dict[str, Any]) -> bool:
        return needles.in_row(row) or _reminds_of(row, chosen.values())

    _erase_shared_rows(memory, carries, report)
    _erase_side_files(memory, needles, report)
    scrub_backend(manager, report)
    report.notes.append(CHECKPOINTS_NOTE)
    logger.info("memory %s of user %r erased: %s", memory_id, memory.user_id, report.removed)
    return report


def erase_conversation(
    memory: ErasedMemory,
    thread_id: str,
    texts: Iterable[str],
    archive: ErasableArchive | None = None,
    message_ids: Collection[str] | None = None,
) -> ErasureReport:
    """What a conversation put in memory, removed for good when the user takes it off the
    record: the memories its turns created (their `origin` names the thread; with
    `message_ids`, only the turns of those user messages), every version of them, every row,
    file and snapshot carrying what was said (`texts`, the conversation's own words), and with
    `archive` its archived messages, their days' digests sealed again without them. A memory
    another conversation created and this one only changed keeps its text (its history entries
    carrying what was said are redacted)."""
    manager = memory.manager
    manager._check_writable()
    items = manager.all_items()
    chosen: dict[str, MemoryItem] = {}
    for memory_id, item in items.items():
        if item.origin.get("thread_id") == thread_id and _said_in(item, thread_id, message_ids):
            chosen |= _versions(items, memory_id)
    report = ErasureReport(memory.user_id, sorted(chosen))
    needles = Needles(set(chosen))
    for item in chosen.values():
        needles.add_texts(item_texts(item))
    said = Needles(texts={text for text in texts if len(text.strip()) >= MIN_CONTAINED_CHARS})
    if archive is not None:  # what the user said there joins `said` (and copies of it go)
        archive.erase_said(thread_id, message_ids, said, report)
    else:
        report.notes.append(NO_ARCHIVE_NOTE)
    # Only what is long enough to be this conversation's own words: "thanks!" would take other
    # conversations' rows; this one's rows go by their thread below.
    needles.add_texts(text for text in said.texts if len(text.strip()) >= MIN_CONTAINED_CHARS)
    memory.recall_log.flush()
    purge_items(manager, needles, report)
    redact_core_context(manager, needles, report)
    _drop_vectors(memory, set(chosen), report)
    turns = None if message_ids is None else [f"{thread_id}:{m}" for m in message_ids]

    def carries(row: dict[str, Any]) -> bool:
        return needles.in_row(row) or _of_conversation(row, thread_id, turns)

    _erase_shared_rows(memory, carries, report)
    _erase_side_files(memory, needles, report)
    scrub_backend(manager, report)
    logger.info("a conversation of user %r taken off the record: %s", memory.user_id,
                report.removed)  # fmt: skip
    return report


def _reminds_of(row: dict[str, Any], items: Iterable[MemoryItem]) -> bool:
    """Whether `row` is a reminder one of `items` is about (set by the turn that wrote it, or
    saying what it says): erasing the memory erases the reminder."""
    if not row.keys() >= REMINDER_COLUMNS:
        return False
    reminder = reminder_of_row(row)
    return any(reminder.about(item) for item in items)


def _of_conversation(row: dict[str, Any], thread_id: str, turns: list[str] | None) -> bool:
    """Whether a journal, trace or ledger row belongs to the thread (to one of `turns`)."""
    turn: dict[str, Any] = {}
    if isinstance(row.get("turn"), str):
        try:
            turn = json.loads(row["turn"])
        except ValueError:
            turn = {}
    thread = row.get("thread_id") or row.get("session_id") or turn.get("thread_id")
    if thread != thread_id:
        return False
    turn_id = str(row.get("turn_id") or turn.get("turn_id") or "")
    return turns is None or any(turn_id.startswith(prefix) for prefix in turns)


def _said_in(item: MemoryItem, thread_id: str, message_ids: Collection[str] | None) -> bool:
    """Whether the turn that created `item` is one of `message_ids`' (all: None)."""
    if message_ids is None:
        return True
    turn_id = item.origin.get("turn_id", "")
    return any(turn_id.startswith(f"{thread_id}:{message_id}") for message_id in message_ids)


def erase_user(
    memory: ErasedMemory, archive: ErasableArchive | None = None, threads: Any = None
) -> ErasureReport:
    """Remove everything of the memory's user in every tier: the backend's rows or files, the
    archive, the journal, trace, usage ledger, recall log, topic summaries, snapshots,
    consolidation plans and set-aside copies; with `threads` (a checkpointer), the user's
    threads too. Other users' rows and files are left as they are."""
    memory.manager._check_writable()
    report = ErasureReport(memory.user_id)
    shared = _shared_files(memory)
    thread_ids = known_threads(memory.user_id, archive, shared[:2] + shared[4:])
    if memory.snapshots is not None:  # a snapshot due after the erase would write one back
        memory.snapshots.cancel()
    memory.recall_log.discard()
    _drop_vectors(memory, None, report)
    erase_everything(memory.manager, report)
    if archive is not None:
        archive.erase_everything(report)
    else:
        report.notes.append(NO_ARCHIVE_NOTE)
    _erase_shared_rows(memory, None, report)
    _erase_side_files(memory, None, report)
    if threads is not None:
        delete_threads(threads, sorted(thread_ids), report)
    elif thread_ids:
        report.notes.append(
            f"{len(thread_ids)} thread(s) of this user keep the conversation in the "
            "checkpointer: pass threads=<checkpointer> (or delete them with the SDK) to remove them"
        )
    logger.info("every memory of user %r erased: %s", memory.user_id, report.removed)
    return report


# ── the parts ───────────────────────────────────────────────────────────


def item_texts(item: MemoryItem) -> set[str]:
    """Every text the item ever held: each version's description and the ones merged into it."""
    texts = {item.description}
    for entry in item.history:
        for key in ("description", "previous_description", "merged_description"):
            value = entry.get(key)
            if isinstance(value, str):
                texts.add(value)
    return {text for text in texts if text.strip()}


def _versions(items: dict[str, MemoryItem], memory_id: str) -> dict[str, MemoryItem]:
    """The item and every copy-on-write version linked to it, in either direction."""
    chosen = {memory_id}
    while True:
        linked = {
            i for i, item in items.items()
            if item.supersedes in chosen or (i in chosen and item.supersedes in items)
        } | {items[i].supersedes for i in chosen if items[i].supersedes in items}  # fmt: skip
        if linked <= chosen:
            return {i: items[i] for i in sorted(chosen)}
        chosen |= linked


def _drop_vectors(memory: ErasedMemory, ids: set[str] | None, report: ErasureReport) -> None:
    from memory.retrieval.vector_store import VECTOR_PURPOSES, vector_store_for

    for purpose in VECTOR_PURPOSES:  # retrieval's vectors and consolidation's
        store = vector_store_for(memory.manager, purpose)
        path = getattr(store, "path", None)
        if isinstance(path, Path) and not path.exists():
            continue  # never embedded: opening it would make the file
        stored = {v.memory_id for v in store.load()}
        dropped = stored if ids is None else ids & stored
        if dropped:
            store.drop(dropped)
            report.count("vectors", len(dropped))
        if isinstance(path, Path) and path != getattr(memory.manager, "path", None):
            scrub_file(path)
        close = getattr(store, "close", None)
        if callable(close):
            close()


def _shared_files(
    memory: ErasedMemory,
) -> list[tuple[Path | StateDatabase, tuple[SharedTable, ...]]]:
    """The databases several users share: the journal, trace, recall log and summaries files in
    the data folder (a deployment that moved to a state database may have left some), and the
    state database."""
    from memory.retrieval.recall_log import RECALL_FILE

    shared: list[tuple[Path | StateDatabase, tuple[SharedTable, ...]]] = [
        (memory.journal_path, JOURNAL_TABLES),
        (memory.trace_path, TRACE_TABLES),
        (memory.data_dir / RECALL_FILE, RECALL_TABLES),
        (memory.data_dir / SUMMARIES_FILE, SUMMARY_TABLES),
        (memory.data_dir / REMINDERS_FILE, REMINDER_TABLES),
    ]
    if memory.state_dsn:
        shared.append((PostgresState(memory.state_dsn, ""), STATE_TABLES))
    return shared


def _erase_shared_rows(memory: ErasedMemory, match: Any, report: ErasureReport) -> None:
    for target, tables in _shared_files(memory):
        removed = erase_rows(target, tables, memory.user_id, match)
        for place, count in removed.items():
            report.count(place, count)
        if isinstance(target, StateDatabase):
            if removed:
                target.scrub([spec.table for spec in tables])
                report.file(target.describe(), "vacuumed")
        elif target.exists():
            if not scrub_file(target):
                report.notes.append(
                    f"{target}-wal is held by a reader: emptied at its next checkpoint"
                )
            report.file(target, "vacuumed")


def _erase_side_files(memory: ErasedMemory, needles: Needles | None, report: ErasureReport) -> None:
    from memory.store.backends.yaml_files import YamlMemoryManager

    manager = memory.manager
    folders = {memory.data_dir}
    if manager.data_dir is not None:
        folders.add(manager.data_dir)
    for folder in sorted(folders):
        erase_snapshots(folder, memory.user_id, needles, report)
        erase_plans(folder, memory.user_id, needles, report)
    if needles is not None and isinstance(manager, YamlMemoryManager):
        erase_yaml_copies(manager.directory, manager.user_id, needles, report)
    if needles is not None and memory.state_dsn:
        from memory.store.snapshot_rows import SCHEMA, SNAPSHOTS_FILE, erase_stored_snapshots

        db = memory.state_database(SNAPSHOTS_FILE, SCHEMA)
        erase_stored_snapshots(db, memory.user_id, needles, report)
    journal = memory.journal_path
    damaged = sorted(journal.parent.glob(f"{journal.name}.damaged-*"))
    if damaged:  # a damaged file is not edited; it holds every user's turns of its time
        report.notes.append(
            f"{len(damaged)} damaged journal file(s) set aside by a recovery ({damaged[0]}...) "
            "may still hold it: delete them once the recovery is acknowledged"
        )
