"""Checkpoint trees for branch-visibility tests: walks up and down a tree of `parents`, and which
memories a node sees by the definition (brute force), to compare `memory.store.branch` against."""

from __future__ import annotations

from memory.store.item import MemoryItem


def checkpoint(node: int) -> str:
    return f"ckpt-{node}"


def ancestors(parents: list[int], node: int) -> list[int]:
    """The walk from `node` up to the root, node first."""
    chain = [node]
    while chain[-1] != 0:
        chain.append(parents[chain[-1]])
    return chain


def subtree(parents: list[int], node: int) -> set[int]:
    """`node` and every node below it, found by walking down the child links."""
    children: dict[int, list[int]] = {}
    for child, parent in enumerate(parents):
        if child:
            children.setdefault(parent, []).append(child)
    found, stack = set(), [node]
    while stack:
        here = stack.pop()
        found.add(here)
        stack.extend(children.get(here, []))
    return found


def written_above(parents: list[int], item: MemoryItem, current: int) -> bool:
    """Whether `item` was written at `current` or at one of its ancestors, decided from the
    other end: `current` lies in the subtree below the item's own checkpoint."""
    checkpoint_id = item.origin.get("checkpoint_id", "")
    if not checkpoint_id.startswith("ckpt-"):
        return False
    return current in subtree(parents, int(checkpoint_id.removeprefix("ckpt-")))


def brute_force_visible(parents: list[int], current: int, items: dict[str, MemoryItem],
                        memory_id: str) -> bool:  # fmt: skip
    """Visibility from the definition, not from `visible_ids`' rule: live, and a user memory or
    a branch memory written above the current node, and not replaced (by a version or a
    tombstone) by a branch memory written above the current node."""
    item = items.get(memory_id)
    if item is None or item.deleted:
        return False
    if item.scope == "branch" and not written_above(parents, item, current):
        return False
    replaced = any(
        other.scope == "branch"
        and other.supersedes == memory_id
        and written_above(parents, other, current)
        for other in items.values()
    )
    return not replaced
