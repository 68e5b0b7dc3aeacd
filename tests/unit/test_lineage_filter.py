"""LineageFilter answers as visible_ids does for every live id, from the branch items alone."""

from __future__ import annotations

import random

import pytest

from memory.store.branch import Lineage, LineageFilter, visible_ids
from memory.store.item import MemoryItem


def random_items(rng: random.Random, checkpoints: list[str]) -> dict[str, MemoryItem]:
    items: dict[str, MemoryItem] = {}
    for n in range(40):
        branch = rng.random() < 0.5
        origin = {"checkpoint_id": rng.choice(checkpoints)} if branch else {}
        supersedes = rng.choice([*items, ""]) if branch and items and rng.random() < 0.4 else ""
        items[f"m{n}"] = MemoryItem(
            f"memory {n}", "theme", [], "2026-01-01T00:00:00+00:00", 0,
            deleted=rng.random() < 0.2, scope="branch" if branch else "user",
            origin=origin, supersedes=supersedes,
        )  # fmt: skip
    return items


@pytest.mark.parametrize("seed", range(30))
def test_the_filter_agrees_with_visible_ids_on_live_items(seed: int) -> None:
    rng = random.Random(seed)
    checkpoints = [f"c{n}" for n in range(6)]
    items = random_items(rng, checkpoints)
    lineage = Lineage("t", frozenset(rng.sample(checkpoints, 3)))
    branch = {i: item for i, item in items.items() if item.scope == "branch"}
    keep = LineageFilter(branch, lineage)
    live = [i for i, item in items.items() if not item.deleted]
    assert {i for i in live if i in keep} == visible_ids(items, lineage)
