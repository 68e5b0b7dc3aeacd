"""The public consolidation set (tests/data/public_consolidation_set.json): its stores and the
figures a pass is judged by (groups merged, distinct memories kept, traps merged)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

PUBLIC = Path(__file__).resolve().parent / "data" / "public_consolidation_set.json"
SPLITS = ("tuning", "held-out")


@dataclass(frozen=True)
class PublicStore:
    """One split's store: memory texts, the groups that must merge, the trap pairs that must
    not, and every memory that must stay on its own."""

    texts: dict[str, str]
    languages: dict[str, str]
    groups: list[list[str]]
    traps: list[tuple[str, str]]
    distinct: list[str]  # memories in no group (traps included)


def public_store(split: str) -> PublicStore:
    memories = json.loads(PUBLIC.read_text(encoding="utf-8"))[split]
    texts = {m["id"]: m["text"] for m in memories}
    pairs: dict[tuple[str, str], list[str]] = {}
    for m in memories:
        if "pair" in m:
            pairs.setdefault((m["kind"], m["pair"]), []).append(m["id"])
    groups = [ids for (kind, _), ids in pairs.items() if kind == "group"]
    traps = [(ids[0], ids[1]) for (kind, _), ids in pairs.items() if kind == "trap"]
    distinct = [m["id"] for m in memories if m["kind"] != "group"]
    return PublicStore(texts, {m["id"]: m["lang"] for m in memories}, groups, traps, distinct)


@dataclass(frozen=True)
class Figures:
    groups_merged: float  # share of labelled groups whose members all ended in one group
    distinct_kept: float  # share of memories outside groups that were merged with nothing
    traps_merged: int  # trap pairs whose two sides ended in one group
    groups: int
    distinct: int


def figures(store: PublicStore, found: Iterable[Iterable[str]], lang: str = "") -> Figures:
    """How a set of found groups (each a list of ids) does on `store` (`lang`: one language)."""
    group_of: dict[str, int] = {}
    for number, members in enumerate(found):
        for memory_id in members:
            group_of[memory_id] = number

    def wanted(ids: Iterable[str]) -> bool:
        return not lang or all(store.languages[i] == lang for i in ids)

    groups = [g for g in store.groups if wanted(g)]
    merged = sum(
        1 for g in groups if g[0] in group_of and all(group_of.get(i) == group_of[g[0]] for i in g)
    )
    distinct = [i for i in store.distinct if wanted([i])]
    kept = sum(1 for i in distinct if i not in group_of)
    traps = sum(
        1 for a, b in store.traps
        if wanted([a]) and a in group_of and group_of.get(b) == group_of[a]
    )  # fmt: skip
    return Figures(merged / max(len(groups), 1), kept / max(len(distinct), 1), traps,
                   len(groups), len(distinct))  # fmt: skip
