"""MemoryItem: one memory, its theme, its change history and its hit count (no I/O)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

MAX_DESCRIPTION_CHARS = 2000
MAX_THEME_CHARS = 32
MAX_REASON_CHARS = 1000


def now_iso() -> str:
    """The current time in UTC, ISO 8601 ("+00:00"), to the microsecond.

    Stored times are UTC so that they compare across machines and daylight-saving changes;
    what the model or a person reads is converted to local time (`local_date`). Files written
    before kept local times with an offset: compare any stored time through `time_sort_key`.
    """
    return datetime.now(UTC).isoformat(timespec="microseconds")


def parse_time(value: object) -> datetime | None:
    """A stored time as an aware datetime (no offset: local time); None when unreadable."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.astimezone()


def time_sort_key(value: object) -> tuple[float, str]:
    """Sort key for stored times: the instant first (UTC and old local-offset times mix), then
    the text; unreadable times sort first."""
    parsed = parse_time(value)
    return (parsed.timestamp() if parsed is not None else float("-inf"), str(value or ""))


def local_date(value: object) -> str:
    """The local calendar date of a stored time (YYYY-MM-DD), "" when there is none."""
    parsed = parse_time(value)
    if parsed is None:
        return str(value or "")[:10]
    return parsed.astimezone().date().isoformat()


def check_description(value: object, field_name: str = "description") -> str:
    """Return the description stripped, or raise ValueError naming the field."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{field_name} must be a non-empty string")
    text = value.strip()
    if len(text) > MAX_DESCRIPTION_CHARS:
        raise ValueError(
            f"{field_name} is {len(text)} characters; the limit is {MAX_DESCRIPTION_CHARS}"
        )
    return text


def check_theme(value: object, field_name: str = "theme") -> str:
    """Return the theme stripped, or raise ValueError: a theme is a short one-line label."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{field_name} must be a non-empty short label")
    text = value.strip()
    if len(text) > MAX_THEME_CHARS or "\n" in text or "\r" in text:
        raise ValueError(
            f"{field_name} must be a short label on one line (at most {MAX_THEME_CHARS} characters)"
        )
    return text


def check_reason(value: object, field_name: str = "reason") -> str:
    """Return the reason stripped (it may be empty), or raise ValueError if it is not text."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValueError(f"{field_name} must be a string")
    if len(value) > MAX_REASON_CHARS:
        raise ValueError(
            f"{field_name} is {len(value)} characters; the limit is {MAX_REASON_CHARS}"
        )
    return value.strip()


@dataclass
class MemoryItem:
    """One memory. Every change appends a history entry: what changed, why, and when.

    `deleted` marks a tombstone: hidden from `show()` and from retrieval, kept with its history so
    that a delete can be undone (`BaseMemoryManager.restore`).
    """

    description: str
    theme: str
    history: list[dict[str, str]] = field(default_factory=list)
    latest_update_time: str = ""
    hit: int = 0
    deleted: bool = False
    # Branch scope: "user" items are seen by every thread of the user; "branch" items
    # only by runs whose checkpoint lineage holds `origin["checkpoint_id"]`.
    scope: str = "user"
    origin: dict[str, str] = field(default_factory=dict)  # thread_id, checkpoint_id, turn_id
    supersedes: str = ""  # the ancestor's branch item this copy-on-write version replaces

    @classmethod
    def create(
        cls,
        description: str,
        theme: str,
        reason: str = "",
        *,
        scope: str = "user",
        origin: dict[str, str] | None = None,
        supersedes: str = "",
    ) -> MemoryItem:
        """A new item whose history starts with its creation."""
        item = cls(
            description=check_description(description),
            theme=check_theme(theme),
            scope=scope,
            origin=dict(origin or {}),
            supersedes=supersedes,
        )
        details = {"description": item.description, "theme": item.theme}
        if scope != "user":
            details["scope"] = scope
        if supersedes:
            details["supersedes"] = supersedes
        item._record("create", check_reason(reason), **details)
        return item

    def update(
        self,
        reason: str,
        new_description: str | None = None,
        new_theme: str | None = None,
    ) -> None:
        """Change the description and/or the theme and record the old values."""
        if new_description is None and new_theme is None:
            raise ValueError("update needs new_description or new_theme")
        description = (
            check_description(new_description, "new_description")
            if new_description is not None
            else self.description
        )
        theme = check_theme(new_theme, "new_theme") if new_theme is not None else self.theme
        self._record(
            "update",
            check_reason(reason),
            description=description,
            theme=theme,
            previous_description=self.description,
            previous_theme=self.theme,
        )
        self.description, self.theme = description, theme

    def merge(
        self,
        another: MemoryItem,
        reason: str,
        merged_description: str,
        merged_theme: str,
    ) -> None:
        """Absorb another item: both histories are kept, in time order, then the merge itself."""
        description = check_description(merged_description, "merged_description")
        theme = check_theme(merged_theme, "merged_theme")
        absorbed = [{**entry, "via": "merge"} for entry in another.history]
        self.history = sorted(
            self.history + absorbed, key=lambda entry: time_sort_key(entry.get("time", ""))
        )
        self._record(
            "merge",
            check_reason(reason),
            description=description,
            theme=theme,
            previous_description=self.description,
            previous_theme=self.theme,
            merged_description=another.description,
            merged_theme=another.theme,
        )
        self.description, self.theme = description, theme
        self.hit += another.hit

    def mark_deleted(self, reason: str, action: str = "delete", **details: str) -> None:
        """Turn the item into a tombstone; nothing of it is lost."""
        self._record(action, check_reason(reason), **details)
        self.deleted = True

    def mark_restored(self, reason: str) -> None:
        """Bring a tombstone back."""
        self._record("restore", check_reason(reason))
        self.deleted = False

    def show_description_history(self) -> list[dict[str, str]]:
        """The history, newest entry first."""
        return list(reversed(self.history))

    def to_dict(self) -> dict[str, Any]:
        """A plain dict for YAML, JSON and stores (a deep copy: history entries are copied)."""
        # Written out rather than dataclasses.asdict, which is ~40x slower and dominated saves.
        return {
            "description": self.description,
            "theme": self.theme,
            "history": [dict(entry) for entry in self.history],
            "latest_update_time": self.latest_update_time,
            "hit": self.hit,
            "deleted": self.deleted,
            "scope": self.scope,
            "origin": dict(self.origin),
            "supersedes": self.supersedes,
        }

    def _record(self, action: str, reason: str, **details: str) -> None:
        time = now_iso()
        self.history.append({"time": time, "action": action, "reason": reason, **details})
        self.latest_update_time = time
