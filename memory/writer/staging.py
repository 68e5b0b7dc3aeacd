"""The staged view a memory agent works on: the store read once, plus its uncommitted changes."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from memory.retrieval.bm25 import MechanicalRetriever
from memory.store.branch import Lineage, origin_checkpoint, visible_ids
from memory.store.item import now_iso
from memory.store.manager import BaseMemoryManager, Change

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ToolEvent:
    """One tool call of the memory agent, as the editor shows it live and the trace records it."""

    step: int
    tool: str
    arguments: dict[str, Any]
    result: str
    ok: bool
    time: str
    user_id: str = ""
    turn_id: str = ""
    # The store's ids of the memories the call changed (the model sees short numbers instead).
    memory_ids: tuple[str, ...] = ()

    def for_people(self) -> str:
        """The call as a person reads it: the changed memories' real ids and what was written
        (or why), never the short numbers only the model knows ("Created memory 1")."""
        if not (self.ok and self.memory_ids):
            return f"{self.tool}: {self.result}"
        said = self.arguments.get("content") or self.arguments.get("reason") or self.result
        return f"{self.tool} {', '.join(self.memory_ids)}: {said}"


EventCallback = Callable[[ToolEvent], Any]


@dataclass
class StagedMemory:
    """One memory as the agent sees it: a short id for the model, the real id for the store."""

    short_id: int
    real_id: str
    description: str
    theme: str
    new: bool = False
    scope: str = "user"
    origin_checkpoint: str = ""  # branch memories: the checkpoint that wrote them
    seen_update_time: str = ""  # latest_update_time when read: apply refuses a change since

    def expected_time(self) -> str | None:
        """What `apply` must still find for a change to this memory (None for a new one)."""
        return None if self.new else self.seen_update_time


@dataclass(frozen=True)
class StagedChange:
    """A change waiting for commit, with the tool call that asked for it (for the trace)."""

    change: Change
    event: ToolEvent


@dataclass
class StagedView:
    """The store snapshot plus staged changes; nothing here touches the store."""

    manager: BaseMemoryManager
    live: dict[int, StagedMemory] = field(default_factory=dict)
    staged: list[StagedChange] = field(default_factory=list)
    events: list[ToolEvent] = field(default_factory=list)
    on_event: EventCallback | None = None
    turn_id: str = ""
    lineage: Lineage | None = None  # with one, only what this branch may read is shown
    # The BM25 retriever of the store (the facade's), used to rank a large store for the model.
    retriever: MechanicalRetriever | None = None
    tombstone_ids: set[str] = field(default_factory=set)  # every stored id not shown (taken)
    stored_live: int = 0  # live memories in the store when read (every branch's: the capacity)
    _next_short_id: int = 1
    _loaded: bool = False

    def load(self) -> None:
        """Read the store once; short ids 1, 2, 3 … follow the store's order."""
        if self._loaded:
            return
        items = self.manager.list_items()
        stored = self.manager.all_items()
        self.stored_live = len(items)
        if self.lineage is not None:
            visible = visible_ids(stored, self.lineage)
            items = {i: item for i, item in items.items() if i in visible}
        for real_id, item in items.items():
            self._add_live(
                real_id,
                item.description,
                item.theme,
                new=False,
                scope=item.scope,
                origin_checkpoint=origin_checkpoint(item),
                seen_update_time=item.latest_update_time,
            )
        self.tombstone_ids = set(stored) - set(items)
        self._loaded = True

    def _add_live(
        self,
        real_id: str,
        description: str,
        theme: str,
        *,
        new: bool,
        scope: str = "user",
        origin_checkpoint: str = "",
        seen_update_time: str = "",
    ) -> StagedMemory:
        memory = StagedMemory(
            self._next_short_id,
            real_id,
            description,
            theme,
            new,
            scope,
            origin_checkpoint,
            seen_update_time,
        )
        self.live[memory.short_id] = memory
        self._next_short_id += 1
        return memory

    def next_real_id(self) -> str:
        """A fresh real id from the manager, unused in the snapshot (tombstones too) and this view.

        No store I/O here, so the tools can run inside the event loop; `apply` still refuses a
        taken id, which only makes the turn retry.
        """
        taken = {memory.real_id for memory in self.live.values()} | self.tombstone_ids
        taken.update(s.change.id for s in self.staged if s.change.id)
        candidate = self.manager.new_id()
        while candidate in taken:
            candidate = self.manager.new_id()
        return candidate

    def stage_new(
        self, description: str, theme: str, scope: str = "user", origin_checkpoint: str = ""
    ) -> StagedMemory:
        """A created memory: visible under the next short id until commit."""
        return self._add_live(
            self.next_real_id(),
            description,
            theme,
            new=True,
            scope=scope,
            origin_checkpoint=origin_checkpoint,
        )

    def record(
        self,
        tool: str,
        arguments: dict[str, Any],
        result: str,
        ok: bool,
        memory_ids: tuple[str, ...] = (),
    ) -> ToolEvent:
        """Log one tool call and tell the listener; a failing listener never breaks the agent."""
        event = ToolEvent(
            len(self.events),
            tool,
            arguments,
            result,
            ok,
            now_iso(),
            self.manager.user_id,
            self.turn_id,
            memory_ids,
        )
        self.events.append(event)
        if self.on_event is not None:
            try:
                self.on_event(event)
            except Exception:  # the live view is optional; the write is not
                logger.exception("memory on_event listener failed for %s", tool)
        return event

    def ranking(self) -> MechanicalRetriever:
        """The store's BM25 retriever (made here when none was given)."""
        if self.retriever is None:
            self.retriever = MechanicalRetriever(self.manager)
        return self.retriever

    def render(self, shown: list[StagedMemory] | None = None, note: str = "") -> str:
        """The staged view as the model reads it: `[id] (section) text`, grouped by section.

        `shown` limits it to some memories (a large store); `note` then says what was left out.
        """
        if not self.live:
            return "No memories yet."
        memories = list(self.live.values()) if shown is None else shown
        by_theme: dict[str, list[StagedMemory]] = {}
        for memory in memories:
            by_theme.setdefault(memory.theme, []).append(memory)
        lines = [note or f"{len(self.live)} memories (ids are the numbers in brackets):"]
        for theme, group in by_theme.items():
            lines.append(f"## {theme}")
            for memory in group:
                text = " ".join(memory.description.split())  # one line each: data, not markup
                marker = " (this conversation)" if memory.scope == "branch" else ""
                lines.append(f"[{memory.short_id}]{marker} {text}")
        return "\n".join(lines)
