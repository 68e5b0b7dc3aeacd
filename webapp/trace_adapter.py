"""Read the memory writer's trace (which tool changed what) for the editor's live panel."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memory.long_term import LongTermMemory
from memory.writer.trace import TraceEntry, WriteTrace

RECENT_ROWS = 50
TraceKey = tuple[str, int]


def trace_file(memory: LongTermMemory) -> Path:
    """Where the user's writer keeps its trace: beside the write journal."""
    return memory.trace_path


def recent_entries(memory: LongTermMemory) -> list[TraceEntry]:
    """The user's latest applied changes, newest first ([] before anything was written)."""
    path = trace_file(memory)
    if not path.exists():  # opening a WriteTrace would create the file; the editor only reads
        return []
    trace = WriteTrace(path)
    try:
        return trace.for_user(memory.user_id, limit=RECENT_ROWS)
    finally:
        trace.close()


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


def trace_signature(memory: LongTermMemory) -> tuple[tuple[str, int, int], ...]:
    """Size and mtime of the trace file and its WAL: it moves whenever a row is written."""
    stamps = []
    path = trace_file(memory)
    for part in (path, path.with_name(path.name + "-wal")):
        try:
            stat = part.stat()
        except OSError:
            continue
        stamps.append((str(part), stat.st_mtime_ns, stat.st_size))
    return tuple(stamps)


def unseen_rows(memory: LongTermMemory, seen: set[TraceKey]) -> list[dict[str, Any]]:
    """Rows not reported yet on this stream, oldest first; `seen` is updated in place."""
    fresh = [e for e in recent_entries(memory) if (e.turn_id, e.step) not in seen]
    seen.update((e.turn_id, e.step) for e in fresh)
    return [row(e) for e in reversed(fresh)]
