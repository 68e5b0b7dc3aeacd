"""Reminders without a server (`make chat`): kept in `<data_dir>/reminders.json`, and shown by the
chat at the first prompt after they fall due; the server keeps its own as crons."""

from __future__ import annotations

import json
import threading
import uuid
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path

from memory.integration import get_settings

_LOCK = threading.Lock()  # one process: make chat is the only writer of its file


@dataclass(frozen=True)
class LocalReminder:
    """One reminder: whose, in which thread, what, and when (ISO, the user's zone)."""

    id: str
    user_id: str
    thread_id: str
    what: str
    due: str


def _path() -> Path:
    return Path(get_settings().data_dir) / "reminders.json"


def _read() -> list[LocalReminder]:
    try:
        rows = json.loads(_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [LocalReminder(**row) for row in rows if isinstance(row, dict)]


def _write(reminders: list[LocalReminder]) -> None:
    path = _path()
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    text = json.dumps([asdict(r) for r in reminders], ensure_ascii=False, indent=1)
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(path)  # never half a file


def add(user_id: str, thread_id: str, what: str, due: datetime) -> LocalReminder:
    reminder = LocalReminder(uuid.uuid4().hex[:8], user_id, thread_id, what, due.isoformat())
    with _LOCK:
        _write([*_read(), reminder])
    return reminder


def listed(user_id: str, thread_id: str) -> list[LocalReminder]:
    return [r for r in _read() if (r.user_id, r.thread_id) == (user_id, thread_id)]


def cancel(user_id: str, reminder_id: str) -> LocalReminder | None:
    with _LOCK:
        kept, gone = [], None
        for reminder in _read():
            mine = reminder.user_id == user_id and reminder.id.startswith(reminder_id.strip())
            if mine and gone is None and reminder_id.strip():
                gone = reminder
            else:
                kept.append(reminder)
        if gone is not None:
            _write(kept)
    return gone


def take_due(user_id: str, now: datetime) -> list[LocalReminder]:
    """The user's reminders due by `now`, taken out of the file (each is shown once)."""
    with _LOCK:
        reminders = _read()
        due = [
            r for r in reminders if r.user_id == user_id and datetime.fromisoformat(r.due) <= now
        ]
        if due:
            _write([r for r in reminders if r not in due])
    return due
