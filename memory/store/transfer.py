"""Export a user's memories as JSON and import them back with their history, overwriting nothing."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from memory.store.item import MemoryItem, check_description, check_text, check_theme, now_iso
from memory.store.manager import BaseMemoryManager
from memory.store.profile import import_profile, parse_profile, profile_of

EXPORT_FORMAT = "gulfstream.memories"
EXPORT_VERSION = 1
MAX_IMPORT_ITEMS = 10_000
IMPORT_FIELDS = {"format", "version", "user_id", "exported_at", "revision", "items", "profile"}
_MEMORY_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class ImportRejected(ValueError):
    """The import file is not acceptable; `field` says where (e.g. `items.ab12.theme`)."""

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass
class ImportOutcome:
    """What an import did: new ids, other versions of existing ids (kept as tombstones under a
    new id: original id → tombstone id), and items already present."""

    added: list[str] = field(default_factory=list)
    superseded: dict[str, str] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    profile: list[str] = field(default_factory=list)  # the parts of the profile it set


def export_document(manager: BaseMemoryManager) -> dict[str, Any]:
    """Every item of the user, tombstones included, with full history."""
    items = {**manager.list_items(), **manager.deleted_items()}
    return {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "user_id": manager.user_id,
        "exported_at": now_iso(),
        "revision": manager.revision,
        "items": {memory_id: item.to_dict() for memory_id, item in sorted(items.items())},
        "profile": profile_of(manager),
    }


def parse_import(data: dict[str, Any]) -> dict[str, MemoryItem]:
    """Validate a whole export before anything is written; the first problem is raised."""
    unknown = sorted(set(data) - IMPORT_FIELDS)
    if unknown:
        message = f"unknown field {unknown[0]!r}; expected {sorted(IMPORT_FIELDS)}"
        raise ImportRejected(message, unknown[0])
    if data.get("format", EXPORT_FORMAT) != EXPORT_FORMAT:
        raise ImportRejected(f"format must be {EXPORT_FORMAT!r}", "format")
    if data.get("version", EXPORT_VERSION) != EXPORT_VERSION:
        raise ImportRejected(f"version must be {EXPORT_VERSION}", "version")
    raw_items = data.get("items")
    if not isinstance(raw_items, dict):
        raise ImportRejected("items must be an object of id → memory", "items")
    if len(raw_items) > MAX_IMPORT_ITEMS:
        message = f"items holds {len(raw_items)}; the limit is {MAX_IMPORT_ITEMS}"
        raise ImportRejected(message, "items")
    return {str(i): _parse_item(str(i), raw) for i, raw in raw_items.items()}


def _parse_item(memory_id: str, raw: Any) -> MemoryItem:
    where = f"items.{memory_id}"
    if not _MEMORY_ID.match(memory_id):
        raise ImportRejected(f"{where}: id must be 1-64 letters, digits, '_' or '-'", where)
    if not isinstance(raw, dict):
        raise ImportRejected(f"{where} must be an object", where)
    try:
        description = check_description(raw.get("description"), f"{where}.description")
        theme = check_theme(raw.get("theme"), f"{where}.theme")
    except ValueError as exc:
        name = "description" if "description" in str(exc).split()[0] else "theme"
        raise ImportRejected(str(exc), f"{where}.{name}") from exc
    history = _parse_history(raw.get("history", []), f"{where}.history")
    hit = raw.get("hit", 0)
    if isinstance(hit, bool) or not isinstance(hit, int) or hit < 0:
        raise ImportRejected(f"{where}.hit must be a whole number ≥ 0", f"{where}.hit")
    deleted = raw.get("deleted", False)
    if not isinstance(deleted, bool):
        raise ImportRejected(f"{where}.deleted must be true or false", f"{where}.deleted")
    name = f"{where}.latest_update_time"
    updated = raw.get("latest_update_time", "")
    if not isinstance(updated, str):
        raise ImportRejected(f"{name} must be text", name)
    return MemoryItem(description, theme, history, _clean(updated, name, False), hit, deleted)


def _parse_history(history: Any, where: str) -> list[dict[str, str]]:
    """History entries as the editor would have written them: objects of clean text."""
    if not isinstance(history, list) or not all(
        isinstance(entry, dict) and all(isinstance(v, str) for v in entry.values())
        for entry in history
    ):
        raise ImportRejected(f"{where} must be a list of text-valued objects", where)
    return [
        {_clean(key, where, False): _clean(value, where, True) for key, value in entry.items()}
        for entry in history
    ]


def _clean(value: str, where: str, line_breaks: bool) -> str:
    try:
        return check_text(value, where, line_breaks=line_breaks)
    except ValueError as exc:
        raise ImportRejected(str(exc), where) from exc


def import_source(data: dict[str, Any]) -> str:
    """Who and when an export came from, as the `import` history entry names it."""
    user = _clean(str(data.get("user_id", "?"))[:64], "user_id", False)
    exported_at = _clean(str(data.get("exported_at", "?"))[:40], "exported_at", False)
    return f"an export of user {user} at {exported_at}"


def _already_present(existing: MemoryItem, incoming: MemoryItem) -> bool:
    """The store already holds this version: same text and the incoming history is its prefix."""
    return (
        existing.description == incoming.description
        and existing.theme == incoming.theme
        and existing.history[: len(incoming.history)] == incoming.history
    )


def import_items(
    manager: BaseMemoryManager, items: dict[str, MemoryItem], source: str
) -> ImportOutcome:
    """Add the items in one transaction. An id that is not in the store is added as exported; a
    known version is skipped; a different version of an existing id (an older export brought
    back, or a diverged copy) never becomes a second live memory: it is kept as a tombstone under
    a new id, with its history, restorable from "recently deleted" (and skipped once kept).
    """
    outcome = ImportOutcome()
    tombstones = list(manager.deleted_items().values())  # a version kept by an earlier import
    # The manager has no public "put an item with its history"; its transaction keeps this
    # all-or-nothing, under the same lock and revision bump as every other write.
    with manager.transaction() as tx:
        for memory_id, item in items.items():
            existing = tx.get(memory_id)
            if existing is not None and (
                _already_present(existing, item)
                or any(_already_present(kept, item) for kept in tombstones)
            ):
                outcome.skipped.append(memory_id)
                continue
            time = now_iso()
            item.history.append(
                {
                    "time": time,
                    "action": "import",
                    "reason": f"imported from {source}",
                    "original_id": memory_id,
                }
            )
            item.latest_update_time = time
            if existing is None:
                tx.put(memory_id, item)
                outcome.added.append(memory_id)
                continue
            target = manager.new_id()
            while tx.get(target) is not None:
                target = manager.new_id()
            reason = f"memory {memory_id} already holds another version; this one is kept deleted"
            item.mark_deleted(reason)
            tx.put(target, item)
            outcome.superseded[memory_id] = target
    return outcome


def import_document(manager: BaseMemoryManager, data: dict[str, Any]) -> ImportOutcome:
    """An export (`export_document`'s JSON) added to `manager`: validated whole first, then
    written in one transaction (ImportRejected, naming the field, before anything is written)."""
    items, profile = parse_import(data), parse_profile(data)
    outcome = import_items(manager, items, import_source(data))
    outcome.profile = import_profile(manager, profile)
    return outcome
