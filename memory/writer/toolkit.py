"""MemoryToolkit: the operations behind the memory tools, over a staged view, with clear errors."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from langchain_core.tools import BaseTool

from memory.branch import Provenance
from memory.item import check_description, check_reason, check_theme
from memory.manager import Change
from memory.writer import budget
from memory.writer.guards import find_secret
from memory.writer.staging import StagedChange, StagedMemory, StagedView, ToolEvent

READ_HINT = "Call read_memories to see the valid ids."


class ToolCallError(Exception):
    """A bad call; its message goes back to the model and says how to recover."""


@dataclass
class MemoryToolkit:
    """Tools bound to one manager for one turn. `.changes` is what commit will apply."""

    view: StagedView
    max_deletes: int = 3
    forget_requested: bool = False
    provenance: Provenance | None = None  # where this turn writes (thread, checkpoint, turn)
    scope_policy: str = "auto"  # "auto": the model chooses; "user" / "branch" force the scope
    turn_text: str = ""  # the conversation: what read_memories ranks by in a large store
    tools: list[BaseTool] = field(default_factory=list)
    _hit_this_turn: set[int] = field(default_factory=set)
    _pending: list[tuple[Change, dict[str, str]]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def changes(self) -> list[Change]:
        """The staged changes in call order, ready for `manager.apply(changes, turn_id)`."""
        return [staged.change for staged in self.view.staged]

    @property
    def staged(self) -> list[StagedChange]:
        return list(self.view.staged)

    @property
    def events(self) -> list[ToolEvent]:
        """Every tool call of this turn, failed ones included."""
        return list(self.view.events)

    # ── the operations behind the tools ─────────────────────────────────

    def _memory(self, short_id: Any, argument: str = "id") -> StagedMemory:
        self.view.load()
        if isinstance(short_id, bool) or not isinstance(short_id, int):
            raise ToolCallError(f"{argument} must be a number such as 3. {READ_HINT}")
        memory = self.view.live.get(short_id)
        if memory is None:
            valid = ", ".join(str(i) for i in self.view.live) or "none (the store is empty)"
            raise ToolCallError(
                f"there is no memory with {argument} {short_id}. Valid ids: {valid}. {READ_HINT}"
            )
        return memory

    @staticmethod
    def _text(value: Any, name: str) -> str:
        try:
            text = check_description(value, name)
        except ValueError as exc:
            raise ToolCallError(f"{exc}. Write the complete fact as {name}.") from exc
        secret = find_secret(text)
        if secret:
            raise ToolCallError(
                f"{name} seems to contain {secret}; secrets are never stored. Leave it out, or "
                "store only that the user has one, without its value."
            )
        return text

    @staticmethod
    def _section(value: Any, name: str = "section") -> str:
        try:
            return check_theme(value, name)
        except ValueError as exc:
            raise ToolCallError(
                f"{exc}. Use one of the sections listed in your instructions."
            ) from exc

    @staticmethod
    def _reason(value: Any) -> str:
        try:
            return check_reason(value)
        except ValueError as exc:
            raise ToolCallError(f"{exc}. Give a one-sentence reason.") from exc

    def _stage(self, change: Change, real_ids: dict[str, str]) -> None:
        # Held until `call` has the finished event; then staged with it (for the trace).
        self._pending.append((change, real_ids))

    @property
    def checkpoint(self) -> str:
        """The checkpoint this turn writes at ("" without branch information)."""
        return self.provenance.checkpoint_id if self.provenance is not None else ""

    def _scope(self, requested: Any) -> str:
        if requested not in ("user", "branch"):
            raise ToolCallError(
                "scope must be 'user' (facts about the user) or 'branch' (this conversation's "
                "task or plan)."
            )
        scope = str(requested) if self.scope_policy == "auto" else self.scope_policy
        # Without a checkpoint there are no branches to keep apart: everything is the user's.
        return scope if self.checkpoint else "user"

    def _inherited(self, memory: StagedMemory) -> bool:
        """A branch memory an ancestor wrote: this branch may not change it in place."""
        return (
            bool(self.checkpoint)
            and memory.scope == "branch"
            and not memory.new
            and memory.origin_checkpoint != self.checkpoint
        )

    def _writable(self, memory: StagedMemory) -> StagedMemory:
        """Copy-on-write: stage this branch's own version of an inherited memory and aim the
        short id at it, so the ancestor's item stays byte-stable. Call after validation."""
        if not self._inherited(memory):
            return memory
        new_id = self.view.next_real_id()
        self._stage(
            Change(
                "add",
                id=new_id,
                description=memory.description,
                theme=memory.theme,
                reason=f"copy-on-write version of {memory.real_id} in this branch",
                scope="branch",
                supersedes=memory.real_id,
                # The ancestor's item as read: apply refuses (StaleWrite) if it was edited or
                # deleted since, instead of writing a version that would resurrect it.
                expected_other_update_time=memory.seen_update_time,
            ),
            {"memory_id": new_id, "supersedes": memory.real_id},
        )
        memory.real_id, memory.new, memory.origin_checkpoint = new_id, True, self.checkpoint
        return memory

    def create(self, content: Any, section: Any, scope: Any = "user") -> str:
        self.view.load()
        text, theme = self._text(content, "content"), self._section(section)
        chosen = self._scope(scope)
        for memory in self.view.live.values():
            if memory.description == text:
                raise ToolCallError(
                    f"memory {memory.short_id} already says exactly this; use hit_memory or "
                    "update_memory instead of creating a duplicate."
                )
        memory = self.view.stage_new(text, theme, chosen, self.checkpoint)
        self._stage(
            Change(
                "add",
                id=memory.real_id,
                description=text,
                theme=theme,
                scope="branch" if chosen == "branch" else None,
            ),
            {"memory_id": memory.real_id},
        )
        where = " (this conversation only)" if chosen == "branch" else ""
        return f"Created memory {memory.short_id} in section {theme!r}{where}."

    def read(self, query: Any = "") -> str:
        self.view.load()
        if not isinstance(query, str):
            raise ToolCallError("query must be text: words to search the memories for.")
        explicit = bool(query.strip())
        selection = budget.select(
            self.view, query if explicit else self.turn_text, explicit=explicit
        )
        if not selection.partial:
            return self.view.render()
        if explicit:
            what = f"the {len(selection.shown)} most related to {' '.join(query.split())!r}"
        else:
            what = (
                f"{len(selection.shown)}: those most related to this conversation, the newest "
                "and the most used"
            )
        note = (
            f"{selection.total} memories exist; shown here are {what} (ids are the numbers in "
            'brackets). More exist: call read_memories(query="some words") to search the rest '
            "before creating a memory that may already be there."
        )
        return self.view.render(selection.shown, note)

    def update(self, short_id: Any, content: Any, reason: Any) -> str:
        memory = self._memory(short_id)
        text, why = self._text(content, "content"), self._reason(reason)
        if text == memory.description:
            raise ToolCallError(
                f"memory {memory.short_id} already says this; call hit_memory if it was used."
            )
        memory = self._writable(memory)
        self._stage(
            Change(
                "update",
                id=memory.real_id,
                description=text,
                reason=why,
                expected_update_time=memory.expected_time(),
            ),
            {"memory_id": memory.real_id},
        )
        if not memory.new:  # the seed: an update counts as a use of the memory
            self._stage(Change("hit", id=memory.real_id), {"memory_id": memory.real_id})
            self._hit_this_turn.add(memory.short_id)
        memory.description = text
        return f"Updated memory {memory.short_id}."

    def delete(self, short_id: Any, reason: Any) -> str:
        memory, why = self._memory(short_id), self._reason(reason)
        deletes = sum(1 for s in self.view.staged if s.change.op == "delete")
        if deletes >= self.max_deletes and not self.forget_requested:
            raise ToolCallError(
                f"this turn already deletes {deletes} memories, the limit when the user did not "
                "ask to forget anything. Keep this memory (or update it) and finish."
            )
        memory = self._writable(memory)  # a branch "deletes" an ancestor's item by a tombstone
        self._stage(
            Change(
                "delete", id=memory.real_id, reason=why, expected_update_time=memory.expected_time()
            ),
            {"memory_id": memory.real_id},
        )
        del self.view.live[memory.short_id]
        return f"Deleted memory {memory.short_id}."

    def merge(self, id1: Any, id2: Any, content: Any, section: Any, reason: Any) -> str:
        keep, absorbed = self._memory(id1, "id1"), self._memory(id2, "id2")
        if keep.short_id == absorbed.short_id:
            raise ToolCallError("id1 and id2 are the same memory; merge needs two different ids.")
        text, theme, why = (
            self._text(content, "content"),
            self._section(section),
            self._reason(reason),
        )
        if self.checkpoint and keep.scope != absorbed.scope:
            user, branch = (keep, absorbed) if keep.scope == "user" else (absorbed, keep)
            raise ToolCallError(
                f"memory {user.short_id} is about the user (every conversation sees it) and "
                f"memory {branch.short_id} belongs to this conversation only; they cannot be "
                f"merged. Use update_memory on memory {user.short_id} for the user's fact and "
                f"on memory {branch.short_id} for this conversation's task instead."
            )
        keep, absorbed = self._writable(keep), self._writable(absorbed)
        self._stage(
            Change(
                "merge",
                id=keep.real_id,
                other_id=absorbed.real_id,
                description=text,
                theme=theme,
                reason=why,
                expected_update_time=keep.expected_time(),
                expected_other_update_time=absorbed.expected_time(),
            ),
            {"memory_id": keep.real_id, "other_memory_id": absorbed.real_id},
        )
        keep.description, keep.theme = text, theme
        del self.view.live[absorbed.short_id]
        return f"Merged memory {absorbed.short_id} into memory {keep.short_id}."

    def hit(self, short_id: Any) -> str:
        memory = self._memory(short_id)
        if memory.short_id in self._hit_this_turn:
            return f"Memory {memory.short_id} is already marked as used in this turn."
        if self._inherited(memory):  # an ancestor's item is not touched, not even its count
            self._hit_this_turn.add(memory.short_id)
            return f"Marked memory {memory.short_id} as used."
        # No expectation on a hit: one more use commutes with any edit made meanwhile.
        self._stage(Change("hit", id=memory.real_id), {"memory_id": memory.real_id})
        self._hit_this_turn.add(memory.short_id)
        return f"Marked memory {memory.short_id} as used."

    def call(self, tool: str, arguments: dict[str, Any], operation: Callable[[], str]) -> str:
        """Run one operation; a bad call becomes an error message, never an exception."""
        with self.lock:  # parallel tool calls of one model step may arrive from threads
            return self._call(tool, arguments, operation)

    def _call(self, tool: str, arguments: dict[str, Any], operation: Callable[[], str]) -> str:
        self._pending.clear()
        try:
            result, ok = operation(), True
        except ToolCallError as exc:
            result, ok = f"Error: {exc}", False
        except Exception as exc:  # the agent must go on; the error says what happened
            result, ok = f"Error: {type(exc).__name__}: {exc}. Try again or finish.", False
        event = self.view.record(tool, arguments, result, ok)
        for change, real_ids in self._pending if ok else []:
            details = replace(event, arguments={**arguments, **real_ids})
            self.view.staged.append(StagedChange(change, details))
        self._pending.clear()
        return result
