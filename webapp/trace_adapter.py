"""Read the memory writer's trace (which tool changed what) for the editor's live panel."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from memory.long_term import default_journal_path, write_trace_path
from memory.manager import BaseMemoryManager
from memory.writer.trace import TraceEntry, WriteTrace

RECENT_ROWS = 50
CHAT_TRACE = Path("data/chat/write-journal-trace.sqlite")
TraceKey = tuple[str, int]


def trace_files(manager: BaseMemoryManager) -> list[Path]:
    """GULFSTREAM_WRITE_TRACE (paths joined by os.pathsep) if set, else the usual places:
    beside the manager's default journal (LongTermMemory's default) and `make chat`'s data/chat.
    """
    configured = os.environ.get("GULFSTREAM_WRITE_TRACE")
    if configured:
        return [Path(p) for p in configured.split(os.pathsep) if p]
    beside_store = write_trace_path(default_journal_path(manager))
    return list(dict.fromkeys([beside_store, CHAT_TRACE]))


def recent_entries(manager: BaseMemoryManager) -> list[TraceEntry]:
    """The user's latest applied changes from every trace file that exists, newest first."""
    entries: list[TraceEntry] = []
    for path in trace_files(manager):
        if not path.exists():  # opening a WriteTrace would create the file; the editor only reads
            continue
        trace = WriteTrace(path)
        try:
            entries += trace.for_user(manager.user_id, limit=RECENT_ROWS)
        finally:
            trace.close()
    return sorted(entries, key=lambda e: (e.time, e.step), reverse=True)[:RECENT_ROWS]


def row(entry: TraceEntry) -> dict[str, Any]:
    """What the page shows for one traced change."""
    arguments = entry.arguments
    text = arguments.get("content") or arguments.get("description") or arguments.get("reason")
    return {
        "tool": entry.tool,
        "action": entry.op,
        "time": entry.time,
        "turn_id": entry.turn_id,
        "id": str(arguments.get("memory_id", "")),
        "description": str(text or entry.result)[:300],
        "reason": str(arguments.get("reason", ""))[:300] if text != arguments.get("reason") else "",
    }


def trace_signature(manager: BaseMemoryManager) -> tuple[tuple[str, int, int], ...]:
    """Size and mtime of every trace file and its WAL: it moves whenever a row is written."""
    stamps = []
    for path in trace_files(manager):
        for part in (path, path.with_name(path.name + "-wal")):
            try:
                stat = part.stat()
            except OSError:
                continue
            stamps.append((str(part), stat.st_mtime_ns, stat.st_size))
    return tuple(stamps)


def unseen_rows(manager: BaseMemoryManager, seen: set[TraceKey]) -> list[dict[str, Any]]:
    """Rows not reported yet on this stream, oldest first; `seen` is updated in place."""
    fresh = [e for e in recent_entries(manager) if (e.turn_id, e.step) not in seen]
    seen.update((e.turn_id, e.step) for e in fresh)
    return [row(e) for e in reversed(fresh)]
