"""Portable snapshots: a user's whole store as `.jsonl.gz`, restored when the backend is empty."""

from __future__ import annotations

import atexit
import gzip
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from memory.errors import CorruptStoreError
from memory.store.atomic_file import replaced_atomically
from memory.store.core_context import read_stored
from memory.store.document import MemoryDocument
from memory.store.manager import BaseMemoryManager, file_stem
from memory.store.repair import items_from_raw
from memory.text.needles import Needles

SNAPSHOT_FORMAT = "gulfstream-memory-snapshot"
SNAPSHOT_VERSION = 1  # items carry scope/origin/supersedes; older readers ignore extra keys
DEFAULT_DELAY_SECONDS = 5.0

logger = logging.getLogger(__name__)


def default_snapshot_path(manager: BaseMemoryManager) -> Path | None:
    """The default snapshot location: beside the backend's files (None for in-memory stores)."""
    if manager.data_dir is None:
        return None
    return manager.data_dir / "memory_backup" / f"{file_stem(manager.user_id)}.jsonl.gz"


def write_snapshot(manager: BaseMemoryManager, path: str | os.PathLike[str]) -> Path:
    """Write every item (tombstones and history included) and the applied turns, atomically."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    write_snapshot_lines(target, snapshot_records(manager))
    return target


def snapshot_records(manager: BaseMemoryManager) -> list[dict[str, Any]]:
    """A snapshot's records: the header (revision, applied turns, core context), then one per
    item, tombstones and history included."""
    document = manager.read_document()
    header = {
        "format": SNAPSHOT_FORMAT,
        "version": SNAPSHOT_VERSION,
        "user_id": manager.user_id,
        "backend": manager.backend,
        "revision": document.revision,
        "written_at": datetime.now().astimezone().isoformat(timespec="seconds"),
        "applied_turns": document.applied_turns,
        "core_context": document.core_context,
    }
    rows = [{"id": memory_id, **item.to_dict()} for memory_id, item in document.items.items()]
    return [header, *rows]


def write_snapshot_lines(target: Path, records: Iterable[dict[str, Any]]) -> None:
    """Write a snapshot's records (the header first) as gzipped JSON lines, atomically: a crash
    leaves the old file or the new one, never half of either."""
    with (
        replaced_atomically(target, prefix=".snapshot.") as raw,
        gzip.GzipFile(fileobj=raw, mode="wb") as gz,  # closed (its trailer written) before raw
    ):
        for record in records:
            gz.write(_line(record))


def read_snapshot(path: str | os.PathLike[str]) -> MemoryDocument:
    """Parse a snapshot into a document, repairing items the same way a hand-edited file is."""
    try:
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            lines = [json.loads(line) for line in handle if line.strip()]
    except (OSError, EOFError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CorruptStoreError(f"snapshot {path} cannot be read: {exc}") from exc
    return document_from_records(lines, str(path))


def document_from_records(lines: list[Any], path: str) -> MemoryDocument:
    """A snapshot's records (from the file or the database at `path`) as a document."""
    if not lines or not isinstance(lines[0], dict) or lines[0].get("format") != SNAPSHOT_FORMAT:
        raise CorruptStoreError(f"snapshot {path} does not start with a {SNAPSHOT_FORMAT} header")
    header, rows = lines[0], lines[1:]
    raw_items: dict[str, Any] = {}
    for row in rows:
        if not isinstance(row, dict) or not isinstance(row.get("id"), str):
            raise CorruptStoreError(f"snapshot {path} has a line without an id: {row!r:.80}")
        raw_items[row.pop("id")] = row
    items, _ = items_from_raw(raw_items)
    turns = [str(t) for t in header.get("applied_turns") or []]
    core_context = read_stored(header.get("core_context"))
    return MemoryDocument(items, turns, int(header.get("revision") or 0), core_context)


def import_snapshot(manager: BaseMemoryManager, path: str | os.PathLike[str]) -> int:
    """Load a snapshot into an EMPTY backend; return the item count. Never overwrites data."""
    return manager.import_document(read_snapshot(path))


def restore_if_empty(
    manager: BaseMemoryManager, path: str | os.PathLike[str] | None = None
) -> bool:
    """On start: restore the snapshot when the backend holds nothing. True if it did."""
    snapshot = Path(path) if path is not None else default_snapshot_path(manager)
    if snapshot is None or not snapshot.exists():
        return False
    current = manager.read_document()
    if current.items or current.core_context:
        return False
    try:
        import_snapshot(manager, snapshot)
    except ValueError:  # another process restored (or wrote) it meanwhile
        return False
    return True


class SnapshotScheduler:
    """Debounced snapshots: after writes, wait `delay` quiet seconds, then write one snapshot.

    `manager.add_change_listener(scheduler.changed)` wires it to every committed write; a
    snapshot still waiting when the process exits is written by an exit hook.
    """

    def __init__(
        self,
        manager: BaseMemoryManager,
        path: str | os.PathLike[str],
        delay: float = DEFAULT_DELAY_SECONDS,
    ):
        self.manager, self.path, self.delay = manager, Path(path), delay
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()
        self.last_written: float | None = None
        self.writes = 0  # snapshots written (tests and logs read it)
        self.last_error: str | None = None

    def changed(self) -> None:
        """Call after each write; bursts of writes produce one snapshot."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
            self._timer = threading.Timer(self.delay, self._flush_quietly)
            self._timer.daemon = True
            self._timer.start()
            _pending.add(self)

    @property
    def pending(self) -> bool:
        """Whether a snapshot is scheduled and not yet written."""
        return self._timer is not None

    def cancel(self) -> None:
        """Drop a snapshot still waiting (the user's data is being erased)."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            _pending.discard(self)

    def flush(self) -> None:
        """Write the snapshot now (also called at shutdown)."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            _pending.discard(self)
        write_snapshot(self.manager, self.path)
        self.last_written = time.monotonic()
        self.writes += 1

    def _flush_quietly(self) -> None:
        # A timer thread has no caller to raise to: a failed snapshot is logged and retried at
        # the next change; the store itself is untouched.
        try:
            self.flush()
            self.last_error = None
        except Exception as exc:
            self.last_error = f"{type(exc).__name__}: {exc}"
            logger.warning("memory snapshot to %s failed: %s", self.path, self.last_error)


_pending: set[SnapshotScheduler] = set()


@atexit.register
def flush_pending() -> None:
    """Write the snapshots still waiting for their quiet period (at exit, or when asked)."""
    for scheduler in list(_pending):
        if scheduler.pending:
            scheduler._flush_quietly()


def _line(record: dict[str, Any]) -> bytes:
    return (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")


def attach_snapshots(
    manager: BaseMemoryManager,
    delay: float | None,
    on_restore: Callable[[], object] | None = None,
) -> SnapshotScheduler | None:
    """Restore an empty store from its snapshot (then call `on_restore`), then (unless `delay`
    is None) keep the snapshot current `delay` quiet seconds after writes. Only backends with a
    folder have a snapshot location."""
    path = default_snapshot_path(manager)
    if path is None:
        return None
    try:
        if restore_if_empty(manager, path):
            logger.warning(
                "memory of user %r was empty; restored %d items from the snapshot %s",
                manager.user_id,
                len(manager.all_items()),
                path,
            )
            if on_restore is not None:
                on_restore()
    except Exception:  # a bad snapshot must not stop the app; the store is left as it was
        logger.exception("could not restore the memory snapshot %s", path)
    if delay is None:
        return None
    scheduler = SnapshotScheduler(manager, path, delay)
    manager.add_change_listener(scheduler.changed)
    return scheduler


def redact_records(
    lines: list[dict[str, Any]], needles: Needles
) -> tuple[list[dict[str, Any]] | None, int]:
    """A snapshot's records without the erased items, and with what other items' histories and
    the core context say of them redacted: (the header and the items kept, or None when
    nothing names the memory; how many items were dropped)."""
    header, rows = dict(lines[0]), lines[1:]
    kept = [row for row in rows if row.get("id") not in needles.ids]
    dropped = len(rows) - len(kept)
    redacted = [needles.redact(row) for row in kept]
    context = header.get("core_context")
    stripped = context
    if isinstance(context, dict):
        stripped = {
            key: needles.without(value) if isinstance(value, str) and key != "updated_at" else value
            for key, value in context.items()
        }
    if not dropped and stripped == context and not any(changed for _, changed in redacted):
        return None, 0
    header["core_context"] = stripped
    return [header, *(row for row, _ in redacted)], dropped
