"""MemoryItem: one memory, its theme, its change history and its hit count (no I/O).

Long because every rule of a memory's fields and history lives with the item, checked where it is
made.
"""

from __future__ import annotations

import unicodedata
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


# Characters that reorder the text after them (bidi embeddings, overrides and isolates):
# "invoice \u202efdp.exe" reads as "invoice exe.pdf". Refused in every stored text.
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
# Characters that render as nothing or as a blank although they are not whitespace.
_BLANKS = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u2800\u3164\uffa0")
_VARIATION_SELECTORS = (range(0xFE00, 0xFE10), range(0xE0100, 0xE01F0))


def _is_variation_selector(char: str) -> bool:
    return any(ord(char) in block for block in _VARIATION_SELECTORS)


def _invisible(char: str) -> bool:
    """Whether `char` shows nothing on its own: whitespace, format and control characters,
    variation selectors, and the blank-looking fillers."""
    return (
        char.isspace()
        or unicodedata.category(char) in ("Cc", "Cf", "Zs", "Zl", "Zp")
        or char in _BLANKS
        or _is_variation_selector(char)
    )


def check_text(value: str, field_name: str, *, line_breaks: bool) -> str:
    """`value` in NFC with its line breaks as "\n", or ValueError naming the field when it holds
    a lone surrogate, a control character (NUL included; a line break only when `line_breaks`),
    a line or paragraph separator, or a bidi embedding/override/isolate. Zero-width joiners
    stay (emoji sequences, Persian and Indic scripts need them); themes refuse them too
    (`check_theme`)."""
    for char in value:
        if 0xD800 <= ord(char) <= 0xDFFF:
            raise ValueError(f"{field_name} holds a lone surrogate (U+{ord(char):04X}): not text")
    text = unicodedata.normalize("NFC", value.replace("\r\n", "\n").replace("\r", "\n"))
    for char in text:
        if char == "\n" and line_breaks:
            continue
        category = unicodedata.category(char)
        if category == "Cc" or category in ("Zl", "Zp"):
            where = "" if line_breaks else " (it is one line)"
            raise ValueError(
                f"{field_name} holds the control character or separator "
                f"U+{ord(char):04X}{where}; remove it"
            )
        if char in _BIDI_CONTROLS:
            raise ValueError(
                f"{field_name} holds the bidi control U+{ord(char):04X}, which reorders the text "
                "after it; remove it"
            )
    return text


def _visible(text: str, field_name: str, what: str) -> str:
    stripped = text.strip()
    if not stripped or all(_invisible(char) for char in stripped):
        raise ValueError(f"{field_name} must be {what} with visible characters")
    return stripped


def check_description(value: object, field_name: str = "description") -> str:
    """Return the description stripped and NFC-normalised, or raise ValueError naming the field.

    A description may keep line breaks (LF; CRLF and CR become LF): prompts show it on one
    line anyway (`memory.text.fencing.escape_data`). See `check_text` for what is refused."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{field_name} must be a non-empty string")
    text = _visible(check_text(value.strip(), field_name, line_breaks=True), field_name, "a fact")
    if len(text) > MAX_DESCRIPTION_CHARS:
        raise ValueError(
            f"{field_name} is {len(text)} characters; the limit is {MAX_DESCRIPTION_CHARS}"
        )
    return text


def check_theme(value: object, field_name: str = "theme") -> str:
    """Return the theme stripped and NFC-normalised, or raise ValueError: a theme is a short
    one-line label, and two themes that look the same must be the same, so it refuses every
    invisible format character (zero-width spaces and joiners, bidi marks, soft hyphens) too;
    a variation selector may only follow a symbol (an emoji)."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{field_name} must be a non-empty short label")
    if "\n" in value.strip() or "\r" in value.strip():
        raise ValueError(
            f"{field_name} must be a short label on one line (at most {MAX_THEME_CHARS} characters)"
        )
    text = _visible(check_text(value.strip(), field_name, line_breaks=False), field_name, "a label")
    previous = ""
    for char in text:
        invisible_here = unicodedata.category(char) == "Cf" or char in _BLANKS
        if _is_variation_selector(char):
            invisible_here = not previous or unicodedata.category(previous) != "So"
        if invisible_here:
            raise ValueError(
                f"{field_name} holds the invisible character U+{ord(char):04X}; a theme must "
                "not look like another one: remove it"
            )
        previous = char
    if len(text) > MAX_THEME_CHARS:
        raise ValueError(
            f"{field_name} must be a short label on one line (at most {MAX_THEME_CHARS} characters)"
        )
    return text


def check_reason(value: object, field_name: str = "reason") -> str:
    """Return the reason stripped and NFC-normalised (it may be empty), or raise ValueError if it
    is not text or holds what a description may not (`check_text`)."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValueError(f"{field_name} must be a string")
    if len(value) > MAX_REASON_CHARS:
        raise ValueError(
            f"{field_name} is {len(value)} characters; the limit is {MAX_REASON_CHARS}"
        )
    return check_text(value.strip(), field_name, line_breaks=True)


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
    # thread_id, checkpoint_id, turn_id; batch_size when a batched writer run made it
    origin: dict[str, str] = field(default_factory=dict)
    supersedes: str = ""  # the ancestor's branch item this copy-on-write version replaces

    # The checks every door applies to the text it is handed (the editor, MCP, imports): the
    # clean text back, or a ValueError naming the field. And the order of "newest first".
    check_description = staticmethod(check_description)
    check_theme = staticmethod(check_theme)
    check_reason = staticmethod(check_reason)
    time_sort_key = staticmethod(time_sort_key)
    local_date = staticmethod(local_date)  # a stored time as the user's local day

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

    @property
    def created_time(self) -> str:
        """When the memory was created: its first history entry's time ("" when that entry has
        none), `latest_update_time` for an item without a history."""
        return self.history[0].get("time", "") if self.history else self.latest_update_time

    @property
    def stale_since(self) -> float:
        """When consolidation marked the memory stale (its date passed), in epoch seconds; 0 when
        it is not stale. An update, merge or restore since makes it current again."""
        for entry in reversed(self.history):
            action = entry.get("action")
            if action == "stale":
                marked = parse_time(entry.get("time"))
                return marked.timestamp() if marked is not None else 1.0
            if action in ("create", "update", "merge", "restore"):
                return 0.0
        return 0.0

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
