"""Forgetting's core: which memories are forgotten and their fingerprints (what derived text
must leave out); hiding what carries them in the archive is memory/archive/reconcile.py."""

from __future__ import annotations

import time
import weakref
from collections.abc import Mapping, Sequence

from memory.store.item import MemoryItem, parse_time
from memory.store.manager import BaseMemoryManager
from memory.text.fingerprint import Fingerprint, redact, redact_core_context

__all__ = [
    "Fingerprint",
    "fingerprint",
    "forgotten_items",
    "forgotten_prints",
    "is_forgotten",
    "lineage_of",
    "redact",
    "redact_core_context",
]

# A tombstone is a forgotten memory when it was deleted or archived; a merge's tombstone is
# not: its content lives on in the memory it was merged into.
FORGETTING_ACTIONS = ("delete", "archived")


# ── which memories are forgotten ────────────────────────────────────────


def is_forgotten(item: MemoryItem) -> bool:
    """A tombstone made by a delete or an archive (not by a merge)."""
    if not item.deleted:
        return False
    last = next((e for e in reversed(item.history) if e.get("action") != "stale"), {})
    return last.get("action") in FORGETTING_ACTIONS


def forgotten_items(manager: BaseMemoryManager) -> dict[str, MemoryItem]:
    """The user's forgotten memories by id."""
    return {i: item for i, item in manager.deleted_items().items() if is_forgotten(item)}


def forgotten_at(item: MemoryItem) -> float:
    """When the memory was forgotten (epoch seconds; now when its history does not say)."""
    for entry in reversed(item.history):
        if entry.get("action") in FORGETTING_ACTIONS:
            moment = parse_time(entry.get("time"))
            if moment is not None:
                return moment.timestamp()
    return time.time()


def lineage_of(item: MemoryItem, items: Mapping[str, MemoryItem]) -> list[MemoryItem]:
    """The item and the ancestors' versions it superseded (copy-on-write), newest first."""
    chain, seen = [item], set()
    while chain[-1].supersedes and chain[-1].supersedes not in seen:
        seen.add(chain[-1].supersedes)
        older = items.get(chain[-1].supersedes)
        if older is None:
            break
        chain.append(older)
    return chain


def fingerprint(items: Sequence[MemoryItem]) -> Fingerprint:
    """The fingerprint of everything the memory ever said (every description in its history)."""
    texts: list[str] = []
    for item in items:
        texts.append(item.description)
        for entry in item.history:
            texts += [entry[k] for k in ("description", "previous_description") if entry.get(k)]
    return Fingerprint.of(dict.fromkeys(texts))


# ── derived text: summaries, the core context ──────────────────────────

_prints_cache: weakref.WeakKeyDictionary[BaseMemoryManager, tuple[str, dict[str, Fingerprint]]]
_prints_cache = weakref.WeakKeyDictionary()


def forgotten_prints(manager: BaseMemoryManager) -> dict[str, Fingerprint]:
    """Each forgotten memory's fingerprint by id, kept until the store changes."""
    token = manager.change_token()
    cached = _prints_cache.get(manager)
    if cached is not None and cached[0] == token:
        return cached[1]
    items = manager.all_items()
    prints = {
        memory_id: fingerprint(lineage_of(item, items))
        for memory_id, item in items.items()
        if is_forgotten(item)
    }
    prints = {memory_id: p for memory_id, p in prints.items() if not p.empty}
    _prints_cache[manager] = (token, prints)
    return prints
