"""The profile a user owns (the core context's persona and `human`) as an export carries it:
read from a store, checked, and imported without overwriting what the store holds."""

from __future__ import annotations

from typing import Any

from memory.store.manager import BaseMemoryManager

PROFILE_PARTS = ("persona", "human")  # the core context the user owns (not a thread's goal)


class ProfileRejected(ValueError):
    """An export's profile is not acceptable; `field` says where (`profile.human`)."""

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.field = field


def profile_of(manager: BaseMemoryManager) -> dict[str, str]:
    """The persona and `human` the user's prompts get ("" for a part never set)."""
    block = manager.get_core_context(None)
    return {part: block.get(part, "") for part in PROFILE_PARTS}


def parse_profile(export: dict[str, Any]) -> dict[str, str]:
    """An export's profile (`{}` when it has none), checked before anything is written."""
    raw = export.get("profile", {})
    if not isinstance(raw, dict) or set(raw) - set(PROFILE_PARTS):
        raise ProfileRejected("profile must be an object of persona and human", "profile")
    for part, value in raw.items():
        if not isinstance(value, str):
            raise ProfileRejected(f"profile.{part} must be text", f"profile.{part}")
    return {part: value.strip() for part, value in raw.items() if value.strip()}


def import_profile(manager: BaseMemoryManager, profile: dict[str, str]) -> list[str]:
    """Set the parts of `profile` the store has none of (overwriting nothing, like the items);
    returns the parts set. An imported `human` is the user's: the writer does not rewrite it."""
    current = manager.get_core_context(None)
    missing = {part: text for part, text in profile.items() if not current.get(part, "").strip()}
    if missing:
        manager.set_core_context(persona=missing.get("persona"), human=missing.get("human"))
    return sorted(missing)
