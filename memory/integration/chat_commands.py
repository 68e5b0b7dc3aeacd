"""The memory commands of a terminal chat on one user's memory (`make chat`'s /memories, /forget,
/restore, /search, /consolidate, /why and /cost): each answers with the lines to print."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memory.errors import MemoryNotFound
from memory.integration.conversations.chat_search import find_in_archive  # feature: archive
from memory.integration.writing.consolidator_graph import tidy_up  # feature: consolidation
from memory.long_term import LongTermMemory
from memory.store.branch import Lineage, Provenance, visible_ids
from memory.store.item import MemoryItem
from memory.store.manager import BaseMemoryManager
from memory.usage.counts import PURPOSES, describe, from_dicts

FORGET_REASON = "forgotten from the terminal chat"


@dataclass
class MemoryCommands:
    """`make chat`'s memory commands on `memory`. A command's `lineage` is the branch the next
    turn continues (None: the whole thread): what /memories shows and /forget may touch."""

    memory: LongTermMemory

    def list(self, lineage: Lineage | None = None) -> str:
        """/memories: what the next turn may read."""
        return list_memories(self.memory.manager, lineage)

    def forget(
        self, target: str, lineage: Lineage | None = None, thread_id: str = "", at: str = ""
    ) -> str:
        """/forget <id or text>, said in `thread_id` at checkpoint `at` (copy-on-write there)."""
        here = Provenance(thread_id=thread_id, checkpoint_id=at) if thread_id else None
        return forget(self.memory.manager, target, lineage, here)

    def restore(self, memory_id: str) -> str:
        """/restore <id>."""
        return restore(self.memory.manager, memory_id)

    def search(self, text: str, lineage: Lineage | None = None) -> str:  # feature: archive
        """/search <text>: past conversations of this branch and the others."""  # feature: archive
        return find_in_archive(self.memory.manager, text, lineage)  # feature: archive

    def consolidate(self) -> str:  # feature: consolidation
        """/consolidate: a pass with the deployment's thresholds."""  # feature: consolidation
        return tidy_up(self.memory)  # feature: consolidation

    def why(self, memory_ids: Sequence[str]) -> str:
        """/why: the memories the last reply was given, by id (its message's `memory_ids`)."""
        return memories_given(self.memory.manager, memory_ids)

    def cost(self, last_turn: dict[str, dict[str, int]]) -> str:
        """/cost: the last turn's model calls and the user's so far."""
        return cost_report(self.memory, last_turn)


def list_memories(manager: BaseMemoryManager, lineage: Lineage | None = None) -> str:
    """The memories the next turn may read: with a lineage, neither a sibling branch's memories
    nor the versions this branch superseded."""
    items = _visible(manager, lineage)
    if not items:
        return "  (no memories yet)"
    return "\n".join(
        f"  {mid}  [{item.theme}]{' (branch)' if item.scope == 'branch' else ''} {item.description}"
        for mid, item in items.items()
    )


def forget(
    manager: BaseMemoryManager,
    target: str,
    lineage: Lineage | None = None,
    provenance: Provenance | None = None,
) -> str:
    """Delete (tombstone, `/restore` undoes it) one memory this branch sees: by id, by its whole
    text, or by a piece of text that only one memory contains. Several candidates are listed,
    none deleted. With a provenance the delete is copy-on-write, as the memory writer's: a
    branch memory an ancestor wrote gets this branch's tombstone and stays as it was."""
    target = " ".join(target.split())
    if not target:
        return "  usage: /forget <id or text>"
    items = _visible(manager, lineage)
    if target in items:
        ids = [target]
    else:
        wanted = target.casefold()
        ids = [mid for mid, item in items.items() if item.description.casefold() == wanted]
        ids = ids or [mid for mid, item in items.items() if wanted in item.description.casefold()]
    if not ids:
        return f"  no memory matches {target!r}"
    if len(ids) > 1:
        listed = "\n".join(f"  {mid}  {items[mid].description}" for mid in ids)
        return f"  {len(ids)} memories match {target!r}; nothing forgotten. Say which id:\n{listed}"
    try:
        tombstone = manager.forget(ids[0], FORGET_REASON, lineage=lineage, provenance=provenance)
    except (MemoryNotFound, ValueError) as exc:  # a concurrent edit, or a stale write
        return f"  cannot forget {ids[0]}: {exc}"
    return f"  forgot {ids[0]}: {items[ids[0]].description}  (undo: /restore {tombstone})"


def _visible(manager: BaseMemoryManager, lineage: Lineage | None) -> dict[str, MemoryItem]:
    items = manager.list_items()
    if lineage is None:
        return items
    visible = visible_ids(manager.all_items(), lineage)
    return {mid: item for mid, item in items.items() if mid in visible}


def restore(manager: BaseMemoryManager, memory_id: str) -> str:
    """Bring back a forgotten (tombstoned) memory by its id."""
    memory_id = memory_id.strip()
    deleted = manager.deleted_items()
    if memory_id not in deleted:
        if not deleted:
            return "  nothing to restore"
        listed = "\n".join(f"  {mid}  {item.description}" for mid, item in deleted.items())
        return f"  no forgotten memory has the id {memory_id!r}; forgotten ones:\n{listed}"
    manager.restore(memory_id, reason="restored from the terminal chat")
    return f"  restored {memory_id}: {deleted[memory_id].description}"


def memories_given(manager: BaseMemoryManager, memory_ids: Sequence[str]) -> str:
    """The memories a reply was given, one line each (a memory since forgotten says so)."""
    if not memory_ids:
        return "  the last reply was given no memories"
    lines = []
    for memory_id in memory_ids:
        try:
            item = manager.get(memory_id, include_deleted=True)
        except MemoryNotFound:
            lines.append(f"  {memory_id}  (no longer kept)")
            continue
        gone = " (forgotten since)" if item.deleted else ""
        lines.append(f"  {memory_id}  [{item.theme}]{gone} {item.description}")
    return "\n".join(lines)


def cost_report(memory: LongTermMemory, last_turn: dict[str, dict[str, int]]) -> str:
    """The last turn's model calls and the user's so far, by purpose (the background writer's
    appear once it has written; a skipped turn costs it nothing)."""
    totals = memory.usage.totals(memory.user_id)
    lines = [f"  last turn: {describe(from_dicts(last_turn))}" if last_turn else ""]
    lines.append(f"  you so far: {describe(totals)}")
    for purpose in PURPOSES:
        usage = totals.get(purpose)
        if usage is not None and usage.calls:
            lines.append(
                f"    {purpose:<9} {usage.calls:>4} calls {usage.input_tokens:>8} in "
                f"{usage.output_tokens:>7} out tokens"
            )
    return "\n".join(line for line in lines if line)
