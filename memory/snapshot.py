"""Portable snapshots: a user's whole store as `.jsonl.gz`, restored when the backend is empty."""

from __future__ import annotations

import argparse
import atexit
import gzip
import json
import logging
import os
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from memory.core_context import read_core_context
from memory.document import MemoryDocument
from memory.errors import CorruptStoreError
from memory.manager import BaseMemoryManager, file_stem

SNAPSHOT_FORMAT = "gulfstream-memory-snapshot"
SNAPSHOT_VERSION = 1  # items carry scope/origin/supersedes; older readers ignore extra keys
DEFAULT_DELAY_SECONDS = 5.0

logger = logging.getLogger(__name__)


def default_snapshot_path(manager: BaseMemoryManager) -> Path | None:
    """The default snapshot location: beside the backend's files (None for in-memory stores)."""
    directory = getattr(manager, "directory", None)
    if directory is None and getattr(manager, "path", None) is not None:
        directory = Path(manager.path).parent  # type: ignore[attr-defined]
    if directory is None:
        return None
    return Path(directory) / "memory_backup" / f"{file_stem(manager.user_id)}.jsonl.gz"


def write_snapshot(manager: BaseMemoryManager, path: str | os.PathLike[str]) -> Path:
    """Write every item (tombstones and history included) and the applied turns, atomically."""
    document = manager._load_all()
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
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
    fd, tmp_name = tempfile.mkstemp(prefix=".snapshot.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb") as gz:
            gz.write(_line(header))
            for memory_id, item in document.items.items():
                gz.write(_line({"id": memory_id, **item.to_dict()}))
            gz.close()
            raw.flush()
            os.fsync(raw.fileno())
        os.replace(tmp_name, target)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    return target


def read_snapshot(path: str | os.PathLike[str], manager: BaseMemoryManager) -> MemoryDocument:
    """Parse a snapshot into a document, repairing items the same way a hand-edited file is."""
    try:
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            lines = [json.loads(line) for line in handle if line.strip()]
    except (OSError, EOFError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CorruptStoreError(f"snapshot {path} cannot be read: {exc}") from exc
    if not lines or not isinstance(lines[0], dict) or lines[0].get("format") != SNAPSHOT_FORMAT:
        raise CorruptStoreError(f"snapshot {path} does not start with a {SNAPSHOT_FORMAT} header")
    header, rows = lines[0], lines[1:]
    raw_items: dict[str, Any] = {}
    for row in rows:
        if not isinstance(row, dict) or not isinstance(row.get("id"), str):
            raise CorruptStoreError(f"snapshot {path} has a line without an id: {row!r:.80}")
        raw_items[row.pop("id")] = row
    items, _ = manager._validate_all_items(raw_items)
    turns = [str(t) for t in header.get("applied_turns") or []]
    core_context = read_core_context(header.get("core_context"))
    return MemoryDocument(items, turns, int(header.get("revision") or 0), core_context)


def import_snapshot(manager: BaseMemoryManager, path: str | os.PathLike[str]) -> int:
    """Load a snapshot into an EMPTY backend; return the item count. Never overwrites data."""
    document = read_snapshot(path, manager)
    with manager._write_lock():
        current = manager._load_all()
        if current.items or current.core_context:
            raise ValueError(
                f"the {manager.backend} store of user {manager.user_id!r} is not empty; "
                "import only into an empty store (export it first if you mean to replace it)"
            )
        document.revision += 1
        manager._save_all(document)
    return len(document.items)


def restore_if_empty(
    manager: BaseMemoryManager, path: str | os.PathLike[str] | None = None
) -> bool:
    """On start: restore the snapshot when the backend holds nothing. True if it did."""
    snapshot = Path(path) if path is not None else default_snapshot_path(manager)
    if snapshot is None or not snapshot.exists():
        return False
    current = manager._load_all()
    if current.items or current.core_context:
        return False
    import_snapshot(manager, snapshot)
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
def _flush_pending() -> None:
    """Write the snapshots still waiting for their quiet period when the process exits."""
    for scheduler in list(_pending):
        if scheduler.pending:
            scheduler._flush_quietly()


def _line(record: dict[str, Any]) -> bytes:
    return (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")


def main(argv: list[str] | None = None) -> int:
    """`python -m memory.snapshot export|import --backend SPEC --user ID [--file PATH]`."""
    from memory.factory import open_memory_manager

    parser = argparse.ArgumentParser(prog="python -m memory.snapshot", description=__doc__)
    parser.add_argument("command", choices=["export", "import"])
    parser.add_argument(
        "--backend", default=os.environ.get("GULFSTREAM_MEMORY_BACKEND", "yaml:data/memory")
    )
    parser.add_argument("--user", default=os.environ.get("GULFSTREAM_USER_ID", "default"))
    parser.add_argument(
        "--file", help="snapshot path (default: memory_backup/<user>.jsonl.gz beside the store)"
    )
    args = parser.parse_args(argv)
    manager = open_memory_manager(args.backend, args.user)
    path = Path(args.file) if args.file else default_snapshot_path(manager)
    if path is None:
        parser.error("this backend has no default snapshot location; pass --file")
    if args.command == "export":
        print(f"wrote {write_snapshot(manager, path)} ({len(manager._load_all().items)} items)")
    else:
        try:
            print(f"imported {import_snapshot(manager, path)} items from {path}")
        except (ValueError, CorruptStoreError) as exc:
            print(f"error: {exc}")
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
