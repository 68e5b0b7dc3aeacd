"""The memory agent's six LangChain tools: their docstrings are the spec the model reads."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain_core.tools import StructuredTool
from pydantic import ValidationError

from memory.branch import Lineage, Provenance, check_scope_policy
from memory.manager import BaseMemoryManager
from memory.writer.staging import EventCallback, StagedView
from memory.writer.toolkit import READ_HINT, MemoryToolkit, ToolCallError

__all__ = ["MemoryToolkit", "ToolCallError", "make_memory_tools"]


def _validation_handler(kit: MemoryToolkit, signature: str) -> Callable[[ValidationError], str]:
    """Arguments the schema refuses (missing, not a number) become an error the model can fix;
    the call is logged like any other so the live view shows it."""
    tool = signature.split("(")[0]

    def explain(error: ValidationError) -> str:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}"
            for e in error.errors()
        )
        message = (
            f"Error: bad arguments ({problems}). Call {signature} with every argument. {READ_HINT}"
        )
        with kit.lock:
            kit.view.record(tool, {}, message, False)
        return message

    return explain


def make_memory_tools(
    manager: BaseMemoryManager,
    *,
    max_deletes: int = 3,
    forget_requested: bool = False,
    on_event: EventCallback | None = None,
    turn_id: str = "",
    provenance: Provenance | None = None,
    lineage: Lineage | None = None,
    scope_policy: str = "auto",
    turn_text: str = "",
) -> MemoryToolkit:
    """Build the six tools over `manager` for one turn. Calls are staged; nothing is written.

    With a `lineage`, read_memories shows only what this branch may read; with a `provenance`
    (its checkpoint), changing an ancestor's branch memory stages this branch's own version
    (copy-on-write). `scope_policy` "user" or "branch" overrides the scope the model picks.
    """
    view = StagedView(manager, on_event=on_event, turn_id=turn_id, lineage=lineage)
    kit = MemoryToolkit(
        view,
        max_deletes,
        forget_requested,
        provenance=provenance,
        scope_policy=check_scope_policy(scope_policy),
        turn_text=turn_text,
    )

    def create_memory(content: str, section: str, scope: str = "user") -> str:
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
        return kit.call(
            "create_memory",
            {"content": content, "section": section, "scope": scope},
            lambda: kit.create(content, section, scope),
        )

    def read_memories(query: str = "") -> str:
        """List the memories with their ids and sections, including the changes made in this
        turn. Call this before creating, updating, merging or deleting anything. In a large
        store it shows the memories most related to this conversation and says so; pass words
        as `query` to search the rest.

        Args:
            query: Optional words to search for (a topic, a name); empty shows everything, or
                in a large store what relates to this conversation.
        """
        return kit.call("read_memories", {"query": query} if query else {}, lambda: kit.read(query))

    def update_memory(id: int, content: str, reason: str) -> str:
        """Replace the text of an existing memory. Also counts as one use of it (hit).

        Args:
            id: The memory's id, a number shown by read_memories.
            content: The complete new text of the memory (not just the difference).
            reason: Why it changes, in one sentence.
        """
        return kit.call(
            "update_memory",
            {"id": id, "content": content, "reason": reason},
            lambda: kit.update(id, content, reason),
        )

    def delete_memory(id: int, reason: str) -> str:
        """Delete a memory. Only for what the user asked to forget or what is clearly obsolete
        (a to-do whose date has passed). Deleted memories can be restored by the user.

        Args:
            id: The memory's id, a number shown by read_memories.
            reason: Why it is deleted, in one sentence.
        """
        return kit.call(
            "delete_memory", {"id": id, "reason": reason}, lambda: kit.delete(id, reason)
        )

    def merge_memories(id1: int, id2: int, content: str, section: str, reason: str) -> str:
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
        args = {"id1": id1, "id2": id2, "content": content, "section": section, "reason": reason}
        return kit.call(
            "merge_memories", args, lambda: kit.merge(id1, id2, content, section, reason)
        )

    def hit_memory(id: int) -> str:
        """Mark a memory as used once: call it when the conversation relied on or mentioned a
        memory and you did not update it.

        Args:
            id: The memory's id, a number shown by read_memories.
        """
        return kit.call("hit_memory", {"id": id}, lambda: kit.hit(id))

    signatures: dict[Callable[..., str], str] = {
        create_memory: "create_memory(content, section, scope)",
        read_memories: "read_memories(query)",
        update_memory: "update_memory(id, content, reason)",
        delete_memory: "delete_memory(id, reason)",
        merge_memories: "merge_memories(id1, id2, content, section, reason)",
        hit_memory: "hit_memory(id)",
    }
    # Each tool also gets a coroutine: the staged view does no I/O, so running in the event loop
    # keeps parallel calls of one step in the order the model wrote them.
    kit.tools = [
        StructuredTool.from_function(
            func=function,
            coroutine=_as_coroutine(function),
            parse_docstring=True,
            handle_validation_error=_validation_handler(kit, signature),
        )
        for function, signature in signatures.items()
    ]
    return kit


def _as_coroutine(function: Callable[..., str]) -> Callable[..., Awaitable[str]]:
    async def run(**kwargs: Any) -> str:
        return function(**kwargs)

    return run
