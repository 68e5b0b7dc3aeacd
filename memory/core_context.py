"""The core context block (seed 000): persona, what is known about the human, the current goal."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memory.item import now_iso

CORE_CONTEXT_KEYS = ("persona", "human", "goal")
MAX_CORE_CONTEXT_CHARS = 4000
HUMAN_SEED_CHARS = 600
GOAL_SEED_CHARS = 200


def check_core_context_part(value: object, name: str) -> str:
    """Return the text stripped, or raise ValueError naming the part."""
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a string")
    text = value.strip()
    if len(text) > MAX_CORE_CONTEXT_CHARS:
        raise ValueError(f"{name} is {len(text)} characters; the limit is {MAX_CORE_CONTEXT_CHARS}")
    return text


def merge_core_context(current: Mapping[str, str], changes: Mapping[str, Any]) -> dict[str, str]:
    """The stored block with `changes` applied and `updated_at` set; every key present."""
    merged = {key: str(current.get(key, "")) for key in CORE_CONTEXT_KEYS}
    for key, value in changes.items():
        if key not in CORE_CONTEXT_KEYS:
            raise ValueError(f"core context has no part {key!r}; use {CORE_CONTEXT_KEYS}")
        merged[key] = check_core_context_part(value, key)
    merged["updated_at"] = now_iso()
    return merged


def read_core_context(raw: Any, repaired: list[str] | None = None) -> dict[str, str]:
    """A stored block as a dict of text; anything else is dropped (and noted in `repaired`)."""
    if not raw:
        return {}
    if not isinstance(raw, Mapping):
        if repaired is not None:
            repaired.append("core_context was not a mapping; dropped")
        return {}
    keys = (*CORE_CONTEXT_KEYS, "updated_at")
    return {key: str(raw[key]) for key in keys if raw.get(key) is not None}


def truncate(text: str, limit: int) -> str:
    """`text` on one line, cut at `limit` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"
