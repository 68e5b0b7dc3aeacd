"""MemoryToolkit: the memory agent's six tools over a staged view; the docstrings are the spec
the model reads, and a bad call becomes an error the model can act on, never an exception.

Long because the six tools and their checks are the model's whole interface and read best side by
side.
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from pydantic import StrictInt

from memory.store.branch import Provenance, check_scope_policy
from memory.store.item import MemoryItem, check_description, check_reason, check_theme
from memory.store.manager import BaseMemoryManager, Change
from memory.store.operations import copy_on_write_version
from memory.writer import listing as budget
from memory.writer.faithful import unfaithful
from memory.writer.guards import detect_forget_request, find_secret
from memory.writer.staging import EventCallback, StagedChange, StagedMemory, StagedView, ToolEvent
from memory.writer.turn import Turn

READ_HINT = "Call read_memories to see the valid ids."
FULL = "the memory is full"  # how a refusal for capacity starts (the trace looks for it)
TOOL_NAMES = (
    "create_memory",
    "read_memories",
    "update_memory",
    "delete_memory",
    "merge_memories",
    "hit_memory",
)
Tool = TypeVar("Tool", bound=Callable[..., str])


class ToolCallError(Exception):
    """A bad call; its message goes back to the model and says how to recover."""


def _tool(method: Tool) -> Tool:
    """Run a tool under the toolkit's lock, log the call as a ToolEvent, stage its changes only
    when it succeeds, and turn any failure into an "Error: ..." answer."""

    @functools.wraps(method)
    def run(self: MemoryToolkit, **arguments: Any) -> str:
        with self.lock:  # parallel tool calls of one model step may arrive from threads
            return self._call(method.__name__, arguments, lambda: method(self, **arguments))

    return run  # type: ignore[return-value]


@dataclass
class MemoryToolkit:
    """The tools for one turn over one store. `.changes` is what commit will apply.

    With a lineage (in the view), read_memories shows only what this branch may read; with a
    provenance checkpoint, changing an ancestor's branch memory stages this branch's own version
    (copy-on-write). `scope_policy` "user" or "branch" overrides the scope the model picks.
    Merges and deletes together may remove at most `max_deletes` memories unless the user
    asked to forget something. With a `capacity` (0: none), create_memory refuses while the
    store holds that many live memories.
    """

    view: StagedView
    max_deletes: int = 3
    forget_requested: bool = False
    provenance: Provenance | None = None
    scope_policy: str = "auto"
    turn_text: str = ""  # the conversation: what read_memories ranks by in a large store
    capacity: int = 0
    heard_from_user: str = ""  # what a memory may be drawn from (Turn.heard_from_user)
    # What a memory's numbers and language are checked against (memory/writer/faithful.py):
    # everything said, the exchange before included, the user's own messages, the turn's
    # language setting and the year of the prompt's current time. Empty: no check.
    evidence: str = ""
    user_messages: tuple[str, ...] = ()
    language_policy: str = "auto"
    this_year: int | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    _hit_this_turn: set[int] = field(default_factory=set)
    _pending: list[tuple[Change, dict[str, str]]] = field(default_factory=list)
    _tools: list[Any] = field(default_factory=list)

    @classmethod
    def for_turn(
        cls,
        manager: BaseMemoryManager,
        turn: Turn,
        *,
        retriever: Any = None,
        on_event: EventCallback | None = None,
        max_deletes: int = 3,
        capacity: int = 0,
    ) -> MemoryToolkit:
        """The toolkit for `turn`: its lineage, provenance, scope policy and forget request."""
        view = StagedView(
            manager, on_event=on_event, turn_id=turn.turn_id, lineage=turn.lineage,
            retriever=retriever,
        )  # fmt: skip
        return cls(
            view,
            max_deletes,
            detect_forget_request(turn.user_text),
            turn.provenance,
            check_scope_policy(turn.scope_policy),
            turn.text,
            capacity,
            heard_from_user=turn.heard_from_user,
            evidence="\n".join([turn.text, *(m["content"] for m in turn.context)]),
            user_messages=tuple(m["content"] for m in turn.messages if m["role"] == "user"),
            language_policy=turn.language,
        )

    @property
    def changes(self) -> list[Change]:
        """The staged changes in call order, ready for `manager.apply(changes, turn_id)`."""
        return [staged.change for staged in self.view.staged]

    def live_count(self) -> int:
        """Live memories once the staged changes are applied: what the capacity limits."""
        self.view.load()
        count = self.view.stored_live
        for staged in self.view.staged:
            if staged.change.op == "add":
                count += 1
            elif staged.change.op in ("delete", "merge", "archive"):
                count -= 1
        return count

    def over_capacity(self) -> bool:
        return self.capacity > 0 and self.live_count() >= self.capacity

    @property
    def staged(self) -> list[StagedChange]:
        return list(self.view.staged)

    @property
    def events(self) -> list[ToolEvent]:
        """Every tool call of this turn, failed ones included."""
        return list(self.view.events)

    @property
    def tools(self) -> list[Any]:
        """The six tools as LangChain tools (built once; needs langchain-core)."""
        if not self._tools:
            self._tools = [_as_langchain_tool(self, name) for name in TOOL_NAMES]
        return self._tools

    # ── the tools ───────────────────────────────────────────────────────

    @_tool
    def create_memory(self, content: str, section: str, scope: str = "user") -> str:
        """Add one new memory to a section. Returns its id.

        Args:
            content: One fact, in the third person and in the user's language.
            section: The section it belongs to. Prefer an existing section (see your instructions
                and read_memories); create a new short one only if none fits.
            scope: "user" for a fact about the user (who they are, what they like, where they
                live): every conversation sees it. "branch" for a fact about this
                conversation's task or plan ("we are drafting the intro", "this version uses
                PostgreSQL"): only this conversation, and forks from it, see it.
        """
        self.view.load()
        text, theme = self._text(content, "content"), self._section(section)
        self._check_faithful(text)
        chosen = self._scope(scope)
        if self.over_capacity():
            raise ToolCallError(
                f"{FULL}: it holds {self.live_count()} memories and the limit is "
                f"{self.capacity}. Nothing was created. First merge duplicates (merge_memories) "
                "or delete what is clearly obsolete, then create it; or update an existing "
                "memory to cover this fact."
            )
        for memory in self.view.live.values():
            if memory.description == text:
                raise ToolCallError(
                    f"memory {memory.short_id} already says exactly this; use hit_memory or "
                    "update_memory instead of creating a duplicate."
                )
        memory = self.view.stage_new(text, theme, chosen, self.checkpoint)
        scope_field = "branch" if chosen == "branch" else None
        change = Change("add", memory.real_id, text, theme, scope=scope_field)
        self._stage(change, {"memory_id": memory.real_id})
        where = " (this conversation only)" if chosen == "branch" else ""
        return f"Created memory {memory.short_id} in section {theme!r}{where}."

    @_tool
    def read_memories(self, query: str = "") -> str:
        """List the memories with their ids and sections, including the changes made in this
        turn. Call this before creating, updating, merging or deleting anything. In a large
        store it shows the memories most related to this conversation and says so; pass words
        as `query` to search the rest.

        Args:
            query: Optional words to search for (a topic, a name); empty shows everything, or
                in a large store what relates to this conversation.
        """
        self.view.load()
        if not isinstance(query, str):
            raise ToolCallError("query must be text: words to search the memories for.")
        explicit = bool(query.strip())
        selection = budget.select(self.view, query if explicit else self.turn_text, explicit)
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

    @_tool
    def update_memory(self, id: StrictInt, content: str, reason: str) -> str:
        """Replace the text of an existing memory. Also counts as one use of it (hit).

        Args:
            id: The memory's id, a number shown by read_memories.
            content: The complete new text of the memory (not just the difference).
            reason: Why it changes, in one sentence.
        """
        memory = self._memory(id)
        text, why = self._text(content, "content"), self._reason(reason)
        self._check_faithful(text, memory.description)
        if text == memory.description:
            raise ToolCallError(
                f"memory {memory.short_id} already says this; call hit_memory if it was used."
            )
        memory = self._writable(memory)
        expected = memory.expected_time()
        change = Change("update", memory.real_id, text, reason=why, expected_update_time=expected)
        self._stage(change, {"memory_id": memory.real_id})
        if not memory.new:  # an update counts as a use of the memory
            self._stage(Change("hit", id=memory.real_id), {"memory_id": memory.real_id})
            self._hit_this_turn.add(memory.short_id)
        memory.description = text
        return f"Updated memory {memory.short_id}."

    @_tool
    def delete_memory(self, id: StrictInt, reason: str) -> str:
        """Delete a memory. Only for what the user asked to forget or what is clearly obsolete
        (a to-do whose date has passed). Deleted memories can be restored by the user.

        Args:
            id: The memory's id, a number shown by read_memories.
            reason: Why it is deleted, in one sentence.
        """
        memory, why = self._memory(id), self._reason(reason)
        self._check_removal_limit("deletes")
        memory = self._writable(memory)  # a branch "deletes" an ancestor's item by a tombstone
        expected = memory.expected_time()
        change = Change("delete", memory.real_id, reason=why, expected_update_time=expected)
        self._stage(change, {"memory_id": memory.real_id})
        del self.view.live[memory.short_id]
        return f"Deleted memory {memory.short_id}."

    @_tool
    def merge_memories(
        self, id1: StrictInt, id2: StrictInt, content: str, section: str, reason: str
    ) -> str:
        """Merge two memories that describe the same thing into one: id1 is kept with the new
        text, id2 is removed; both histories are kept. Use it against fragmented or duplicate
        memories (the same song in two sections, identity facts spread over several items).

        Args:
            id1: The memory to keep (a number shown by read_memories).
            id2: The memory absorbed into id1.
            content: The complete merged text, covering both memories.
            section: The section of the merged memory.
            reason: Why they are merged, in one sentence.
        """
        keep, absorbed = self._memory(id1, "id1"), self._memory(id2, "id2")
        if keep.short_id == absorbed.short_id:
            raise ToolCallError("id1 and id2 are the same memory; merge needs two different ids.")
        text, theme = self._text(content, "content"), self._section(section)
        self._check_faithful(text, keep.description, absorbed.description)
        why = self._reason(reason)
        if self.checkpoint and keep.scope != absorbed.scope:
            user, branch = (keep, absorbed) if keep.scope == "user" else (absorbed, keep)
            raise ToolCallError(
                f"memory {user.short_id} is about the user (every conversation sees it) and "
                f"memory {branch.short_id} belongs to this conversation only; they cannot be "
                f"merged. Use update_memory on memory {user.short_id} for the user's fact and "
                f"on memory {branch.short_id} for this conversation's task instead."
            )
        self._check_removal_limit("merges")
        keep, absorbed = self._writable(keep), self._writable(absorbed)
        change = Change(
            "merge", keep.real_id, text, theme, why, other_id=absorbed.real_id,
            expected_update_time=keep.expected_time(),
            expected_other_update_time=absorbed.expected_time(),
        )  # fmt: skip
        self._stage(change, {"memory_id": keep.real_id, "other_memory_id": absorbed.real_id})
        keep.description, keep.theme = text, theme
        del self.view.live[absorbed.short_id]
        return f"Merged memory {absorbed.short_id} into memory {keep.short_id}."

    @_tool
    def hit_memory(self, id: StrictInt) -> str:
        """Mark a memory as used once: call it when the conversation relied on or mentioned a
        memory and you did not update it.

        Args:
            id: The memory's id, a number shown by read_memories.
        """
        memory = self._memory(id)
        if memory.short_id in self._hit_this_turn:
            return f"Memory {memory.short_id} is already marked as used in this turn."
        self._hit_this_turn.add(memory.short_id)
        if not self._inherited(memory):  # an ancestor's item is not touched, not even its count
            # No expectation on a hit: one more use commutes with any edit made meanwhile.
            self._stage(Change("hit", id=memory.real_id), {"memory_id": memory.real_id})
        return f"Marked memory {memory.short_id} as used."

    # ── shared checks ───────────────────────────────────────────────────

    @property
    def checkpoint(self) -> str:
        """The checkpoint this turn writes at ("" without branch information)."""
        return self.provenance.checkpoint_id if self.provenance is not None else ""

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

    def _check_removal_limit(self, what: str) -> None:
        """Deletes and merges each remove one memory: together at most `max_deletes` per turn
        unless the user asked to forget something."""
        removed = sum(1 for s in self.view.staged if s.change.op in ("delete", "merge"))
        if removed >= self.max_deletes and not self.forget_requested:
            raise ToolCallError(
                f"this turn already removes {removed} memories by deleting or merging, the "
                f"limit when the user did not ask to forget anything; no more {what}. Keep "
                "these memories (or update them) and finish."
            )

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

    def _check_faithful(self, text: str, *stored: str) -> None:
        """Refuse a text with a number, date or name nobody said, or in another language than the
        user's (`stored`: the memories it rewrites, whose details it may keep)."""
        if not self.evidence:
            return
        said = "\n".join([self.evidence, *stored])
        remembered = "\n".join(memory.description for memory in self.view.live.values())
        problem = unfaithful(text, said, self.user_messages, self.language_policy, self.this_year,
                             remembered)  # fmt: skip
        if problem is not None:
            raise ToolCallError(f"{problem}. Nothing was stored; send the fact again.")

    @staticmethod
    def _section(value: Any) -> str:
        try:
            return check_theme(value, "section")
        except ValueError as exc:
            raise ToolCallError(f"{exc}. Use one of the sections in your instructions.") from exc

    @staticmethod
    def _reason(value: Any) -> str:
        try:
            return check_reason(value)
        except ValueError as exc:
            raise ToolCallError(f"{exc}. Give a one-sentence reason.") from exc

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
        seen = memory.seen_update_time
        as_read = MemoryItem(memory.description, memory.theme, latest_update_time=seen)
        version = copy_on_write_version(memory.real_id, as_read, new_id)
        self._stage(version, {"memory_id": new_id, "supersedes": memory.real_id})
        memory.real_id, memory.new, memory.origin_checkpoint = new_id, True, self.checkpoint
        return memory

    def _stage(self, change: Change, real_ids: dict[str, str]) -> None:
        # Held until `_call` has the finished event; then staged with it (for the trace).
        self._pending.append((change, real_ids))

    def _call(self, tool: str, arguments: dict[str, Any], operation: Callable[[], str]) -> str:
        self._pending.clear()
        try:
            result, ok = operation(), True
        except ToolCallError as exc:
            result, ok = f"Error: {exc}", False
        except Exception as exc:  # the agent must go on; the error says what happened
            result, ok = f"Error: {type(exc).__name__}: {exc}. Try again or finish.", False
        changed = [real for _, ids in self._pending for real in ids.values()] if ok else []
        event = self.view.record(tool, arguments, result, ok, tuple(dict.fromkeys(changed)))
        for change, real_ids in self._pending if ok else []:
            details = replace(event, arguments={**arguments, **real_ids})
            self.view.staged.append(StagedChange(change, details))
        self._pending.clear()
        return result

    def record_refused_call(self, tool: str, message: str) -> str:
        """Log a call the schema refused (missing argument, not a number) like any other, so
        the live view and the trace show it; returns the message for the model."""
        with self.lock:
            self.view.record(tool, {}, message, False)
        return message


def _as_langchain_tool(kit: MemoryToolkit, name: str) -> Any:
    """One tool for a LangChain agent: its schema and description come from the method's
    signature and docstring. Arguments the schema refuses (missing, not a number) become an
    error the model can fix; it also gets a coroutine: the staged view does no I/O, so running
    in the event loop keeps parallel calls of one step in the order the model wrote them."""
    from langchain_core.tools import StructuredTool
    from pydantic import ValidationError

    method = getattr(kit, name)
    signature = f"{name}({', '.join(inspect.signature(method).parameters)})"

    def explain(error: ValidationError) -> str:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}"
            for e in error.errors()
        )
        message = f"Error: bad arguments ({problems}). Call {signature} with every argument."
        return kit.record_refused_call(name, f"{message} {READ_HINT}")

    async def run(**arguments: Any) -> str:
        return str(method(**arguments))

    return StructuredTool.from_function(
        func=method,
        coroutine=run,
        name=name,
        parse_docstring=True,
        handle_validation_error=explain,
    )
