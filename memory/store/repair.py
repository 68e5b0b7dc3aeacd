"""Rebuild MemoryItems from raw stored data, repairing what a hand edit can break, and say so."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memory.store.item import MAX_THEME_CHARS, MemoryItem, now_iso

FALLBACK_THEME = "uncategorized"
_KNOWN_FIELDS = (
    "description",
    "theme",
    "history",
    "latest_update_time",
    "hit",
    "deleted",
    "scope",
    "origin",
    "supersedes",
)
_ORIGIN_KEYS = ("thread_id", "checkpoint_id", "turn_id", "batch_size")


@dataclass
class SelfCheckReport:
    """What `self_check()` found: FAIL stops writes for the user; WARN means something was fixed."""

    status: str  # "OK" | "WARN" | "FAIL"
    issues: list[str]
    repaired: list[str]
    item_count: int

    @property
    def ok(self) -> bool:
        return self.status == "OK"


def items_from_raw(raw_items: dict[str, Any]) -> tuple[dict[str, MemoryItem], list[str]]:
    """Rebuild every item from raw stored data; return the items and the repairs made."""
    repaired: list[str] = []
    items = {str(i): item_from_raw(str(i), raw, repaired) for i, raw in raw_items.items()}
    return items, repaired


def item_from_raw(memory_id: str, raw: Any, repaired: list[str]) -> MemoryItem:
    """Build an item from whatever a file held, fixing types and noting every fix in `repaired`."""
    where = f"item {memory_id!r}"
    if not isinstance(raw, dict):
        repaired.append(f"{where}: was not a mapping; kept its text as the description, tombstoned")
        item = MemoryItem(description=str(raw), theme=FALLBACK_THEME, deleted=True)
        item.history.append({"time": now_iso(), "action": "repair", "reason": "not a mapping"})
        return item
    unknown = sorted(set(raw) - set(_KNOWN_FIELDS))
    if unknown:
        repaired.append(f"{where}: dropped unknown fields {unknown}")

    description = raw.get("description")
    if isinstance(description, int | float) and not isinstance(description, bool):
        description = str(description)
        repaired.append(f"{where}: description was a number; stored as text")
    theme = raw.get("theme")
    if not isinstance(theme, str) or not theme.strip():
        repaired.append(f"{where}: theme was missing or not text; set to {FALLBACK_THEME!r}")
        theme = FALLBACK_THEME
    elif len(theme.strip()) > MAX_THEME_CHARS or "\n" in theme.strip():
        repaired.append(f"{where}: theme was not a short label; shortened")
        theme = theme.strip().splitlines()[0][:MAX_THEME_CHARS]
    history = raw.get("history")
    if history is None:
        history = []
        repaired.append(f"{where}: history was missing; started an empty one")
    elif not isinstance(history, list):
        history = [{"action": "note", "reason": f"history was not a list: {history!r}"}]
        repaired.append(f"{where}: history was not a list; kept it as one note")
    else:
        fixed = [_history_entry(entry) for entry in history]
        if fixed != history:
            repaired.append(f"{where}: history entries were not mappings of text; converted")
        history = fixed
    hit = raw.get("hit", 0)
    if isinstance(hit, bool) or not isinstance(hit, int) or hit < 0:
        new_hit = _to_count(hit)
        repaired.append(f"{where}: hit was {hit!r}; set to {new_hit}")
        hit = new_hit
    latest = raw.get("latest_update_time")
    if not isinstance(latest, str) or not latest:
        latest = next((e["time"] for e in reversed(history) if e.get("time")), "") or now_iso()
        repaired.append(f"{where}: latest_update_time was missing; set to {latest}")
    deleted = raw.get("deleted", False)
    if not isinstance(deleted, bool):
        deleted = str(deleted).strip().lower() in {"true", "yes", "1"}
        repaired.append(f"{where}: deleted was not true/false; read as {deleted}")

    scope, origin, supersedes = _branch_fields(raw, where, repaired)

    item = MemoryItem(
        description=description if isinstance(description, str) else "",
        theme=theme.strip(),
        history=history,
        latest_update_time=latest,
        hit=hit,
        deleted=deleted,
        scope=scope,
        origin=origin,
        supersedes=supersedes,
    )
    if not item.description.strip() and not item.deleted:
        repaired.append(f"{where}: description was empty; tombstoned (restore it after editing)")
        item.mark_deleted("self_check: empty description", action="repair")
    return item


def _branch_fields(
    raw: dict[str, Any], where: str, repaired: list[str]
) -> tuple[str, dict[str, str], str]:
    """scope, origin and supersedes; absent in files written before branch scope (no repair)."""
    scope = raw.get("scope", "user")
    if scope not in ("user", "branch"):
        repaired.append(f"{where}: scope was {scope!r}; set to 'user' (visible to every thread)")
        scope = "user"
    origin = raw.get("origin") or {}
    if not isinstance(origin, dict) or not all(
        isinstance(origin.get(key, ""), str) for key in _ORIGIN_KEYS
    ):
        repaired.append(f"{where}: origin was not a mapping of text; kept what was readable")
        origin = {k: str(v) for k, v in origin.items()} if isinstance(origin, dict) else {}
    origin = {key: origin[key] for key in _ORIGIN_KEYS if origin.get(key)}
    if scope == "branch" and not origin.get("checkpoint_id"):
        repaired.append(f"{where}: branch memory without an origin checkpoint; set to 'user'")
        scope = "user"
    supersedes = raw.get("supersedes") or ""
    if not isinstance(supersedes, str):
        repaired.append(f"{where}: supersedes was not text; cleared")
        supersedes = ""
    return str(scope), origin, supersedes


def _history_entry(entry: Any) -> dict[str, str]:
    if isinstance(entry, dict) and all(isinstance(v, str) for v in entry.values()):
        return {str(k): v for k, v in entry.items()}
    if isinstance(entry, dict):
        return {str(k): "" if v is None else str(v) for k, v in entry.items()}
    return {"action": "note", "reason": str(entry)}


def _to_count(value: Any) -> int:
    try:
        return max(0, int(str(value).strip()))
    except ValueError:
        return 0
