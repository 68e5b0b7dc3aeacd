"""Read the memory writer's trace for the editor: which tool changed what, which turns the
admission scorer let through or skipped (the live panel), and the model calls (the status)."""

from __future__ import annotations

from typing import Any

from memory import LongTermMemory

RECENT_ROWS = 50
ADMISSION_STEP = -2  # an admission decision's key on a stream, beside the changes' steps
TraceKey = tuple[str, int]


def admission_row(entry: Any) -> dict[str, Any]:
    """What the page shows for one admission decision: what was said, the decision, and why."""
    admission = entry.admission
    return {
        "tool": "admission",
        "action": admission.decision,
        "time": entry.time,
        "turn_id": entry.turn_id,
        "id": "",
        "description": entry.said[:300],
        "reason": f"score {admission.score:g}: {', '.join(admission.reasons) or '-'}",
    }


def row(entry: Any) -> dict[str, Any]:
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


def trace_signature(memory: LongTermMemory) -> tuple[Any, ...]:
    """What moves whenever a row is written: the user's row counts and latest times in the
    state database, else the size and mtime of the trace file and its WAL."""
    if memory.state_dsn:
        return memory.trace.signature(memory.user_id)
    stamps = []
    path = memory.trace_path
    for part in (path, path.with_name(path.name + "-wal")):
        try:
            stat = part.stat()
        except OSError:
            continue
        stamps.append((str(part), stat.st_mtime_ns, stat.st_size))
    return tuple(stamps)


def unseen_rows(memory: LongTermMemory, seen: set[TraceKey]) -> list[dict[str, Any]]:
    """Rows not reported yet on this stream, oldest first; `seen` is updated in place."""
    changes, admissions = memory.recent_changes(RECENT_ROWS)
    fresh = [e for e in changes if (e.turn_id, e.step) not in seen]
    decided = [a for a in admissions if (a.turn_id, ADMISSION_STEP) not in seen]
    seen.update((e.turn_id, e.step) for e in fresh)
    seen.update((a.turn_id, ADMISSION_STEP) for a in decided)
    rows = [(e.time, row(e)) for e in fresh] + [(a.time, admission_row(a)) for a in decided]
    return [shown for _, shown in sorted(rows, key=lambda pair: pair[0])]
