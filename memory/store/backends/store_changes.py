"""The store backend's change feed: what each revision changed, for readers to catch up on."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langgraph.store.base import BaseStore, GetOp, Item, PutOp

from memory.store.item import MemoryItem
from memory.store.repair import item_from_raw

CHANGES_NAMESPACE = "memories_changes"
# Entries kept per user: a reader further behind than this reads everything, as it would
# after a bulk load or a repair (which write no entry).
CHANGES_KEPT = 1000


@dataclass(frozen=True)
class Delta:
    """What changed between a reader's revision token and `token`: the items (tombstones
    included) and the turns applied."""

    token: str
    counter: int
    items: dict[str, MemoryItem]
    turns: list[str]


def revision_token(value: dict[str, Any]) -> str:
    """The revision as readers key their caches: the counter and the stamp of its write."""
    counter, stamp = revision_counter(value), value.get("stamp")
    return f"{counter}.{stamp}" if isinstance(stamp, str) and stamp else str(counter)


def revision_counter(value: dict[str, Any]) -> int:
    counter = value.get("revision", 0)
    return counter if isinstance(counter, int) and not isinstance(counter, bool) else 0


class ChangeFeed:
    """One entry per revision in (CHANGES_NAMESPACE, user): the ids it wrote, the turns it
    applied and its stamp, written in the same batch as the items and the revision."""

    def __init__(self, store: BaseStore, namespace: tuple[str, ...], items_ns: tuple[str, ...]):
        self.store = store
        self.namespace = namespace
        self.items_ns = items_ns

    def entry_ops(self, counter: int, stamp: str, ids: list[str], turns: list[str]) -> list[PutOp]:
        value = {"ids": sorted(ids), "turns": list(turns), "stamp": stamp}
        ops = [PutOp(self.namespace, _key(counter), value, index=False)]
        if counter > CHANGES_KEPT:
            ops.append(PutOp(self.namespace, _key(counter - CHANGES_KEPT), None))
        return ops

    def since(self, token: str, current: dict[str, Any]) -> Delta | None:
        """The delta from `token` to the revision `current`; None when the feed cannot tell
        (no stamp, too far behind, an entry missing or of another write, an item removed): the
        reader then reads everything."""
        now_token, now = revision_token(current), revision_counter(current)
        if token == now_token:
            return Delta(token, now, {}, [])
        counter_text, _, stamp = token.partition(".")
        if not counter_text.isdigit() or not stamp:
            return None
        since = int(counter_text)
        if not since < now <= since + CHANGES_KEPT:
            return None
        got = self._get(self.namespace, [_key(n) for n in range(since, now + 1)])
        if got is None:
            return None
        entries = [entry.value for entry in got]
        # Both ends must be the writes the tokens name: a counter set twice is not a delta.
        if entries[0].get("stamp") != stamp or entries[-1].get("stamp") != current.get("stamp"):
            return None
        ids = sorted({i for entry in entries[1:] for i in entry.get("ids", [])})
        found = self._get(self.items_ns, ids)
        if found is None:
            return None  # removed for good (a purge, an erase): readers must drop it
        items = {i: item_from_raw(i, hit.value, []) for i, hit in zip(ids, found, strict=True)}
        turns = [t for entry in entries[1:] for t in entry.get("turns", [])]
        return Delta(now_token, now, items, turns)

    def _get(self, namespace: tuple[str, ...], keys: list[str]) -> list[Item] | None:
        """The items at `keys`, in one batch; None when any is missing."""
        found = self.store.batch([GetOp(namespace, key) for key in keys])
        items = [hit for hit in found if isinstance(hit, Item)]
        return items if len(items) == len(keys) else None


def _key(counter: int) -> str:
    return f"{counter:012d}"
