"""`make chat`: a terminal chat with long-term memory (/memories, /forget, /search, /back, ...)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import uuid
from pathlib import Path

from graph.cli.session import LocalSession
from graph.cli.streaming import ReplyPrinter
from graph.context import Context
from memory import (
    BaseMemoryManager,
    Lineage,
    LongTermMemory,
    MemoryItem,
    MemoryNotFound,
    Provenance,
    open_memory,
    visible_ids,
)
from memory.integration import (
    PURPOSES,
    ToolEvent,
    check_deployment_models,
    describe,
    from_dicts,
    get_settings,
    load_dotenv,
    search_command,  # feature: archive
    tidy_up,  # feature: consolidation
)

WRITE_WAIT_SECONDS = 120.0
FORGET_REASON = "forgotten from the terminal chat"
HELP = (
    "Commands: /memories  /forget <id or text>  /restore <id>  "
    "/search <text> (past conversations)  "  # feature: archive
    "/cost (model calls by purpose)  "
    "/consolidate (merge duplicates, stale plans, archive cold ones)  "  # feature: consolidation
    "/back (take back your last message: the next one starts a sibling branch)  /new (a new "
    "thread)  /quit"
)


def show_event(event: ToolEvent) -> None:
    """Tell the user when the background writer changed their memory."""
    if event.tool != "read_memories" and event.ok:
        print(f"\n  (memory) {event.tool}: {event.result}", flush=True)


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


async def read_line(prompt: str) -> str | None:
    try:
        return await asyncio.to_thread(input, prompt)
    except EOFError:
        return None


async def chat(context: Context, data_dir: Path, thread_id: str) -> None:
    async with LocalSession(context, data_dir, on_memory_event=show_event) as session:
        assert session.manager is not None
        print(f"Gulfstream chat — user {context.user_id!r}, thread {thread_id}. {HELP}")
        # The checkpoints this session's turns ended at, for /back; the next turn forks from
        # `fork_from` when it is set.
        turn_ends: list[str] = []
        fork_from: str | None = None
        last_cost: dict[str, dict[str, int]] = {}
        while True:
            line = await read_line("you> ")
            if line is None or line.strip() == "/quit":
                print("Writing the last memories before exit (Ctrl-C leaves them journaled)...")
                return
            line = line.strip()
            if not line:
                continue
            if line in ("/memories", "/consolidate") or line.startswith(("/forget", "/restore")):
                # Show (and edit) memory as it is after the turns already sent are written.
                try:
                    await session.wait_for_writes(WRITE_WAIT_SECONDS)
                except TimeoutError:
                    print("  (the memory writer is still busy; showing what is written so far)")
            if line == "/memories" or line.startswith(("/forget", "/search")):
                # What the next turn will see: the branch it continues (after /back, the one
                # it forks from), not every branch of the thread.
                at = fork_from or await session.latest_checkpoint_id(thread_id)
                lineage = await session.lineage_at(thread_id, at)
            if line == "/memories":
                print(await asyncio.to_thread(list_memories, session.manager, lineage))
            elif line.startswith("/forget"):
                target = line.removeprefix("/forget")
                here = Provenance(thread_id=thread_id, checkpoint_id=at)
                print(await asyncio.to_thread(forget, session.manager, target, lineage, here))
            elif line.startswith("/search"):  # feature: archive
                print(await search_command(session.manager, line, lineage))  # feature: archive
            elif line.startswith("/restore"):
                target = line.removeprefix("/restore")
                print(await asyncio.to_thread(restore, session.manager, target))
            elif line == "/consolidate" and session.memory is not None:  # feature: consolidation
                print(await asyncio.to_thread(tidy_up, session.memory))  # feature: consolidation
            elif line == "/cost":
                assert session.memory is not None
                print(await asyncio.to_thread(cost_report, session.memory, last_cost))
            elif line == "/new":
                thread_id = uuid.uuid4().hex[:8]
                turn_ends, fork_from = [], None
                print(f"  new thread {thread_id}")
            elif line == "/back":
                if len(turn_ends) < 2:
                    print("  /back needs two turns in this session (or use /new)")
                    continue
                turn_ends.pop()
                fork_from = turn_ends[-1]
                print("  your next message starts a sibling branch of the one taken back")
            elif line.startswith("/"):
                print(f"  unknown command. {HELP}")
            else:
                # The reply is printed while the model writes it (a small local model takes
                # seconds); the memory writer's "(memory)" lines come after it.
                printer = ReplyPrinter()
                reply = await session.say(
                    thread_id, line, checkpoint_id=fork_from, on_text=printer.piece
                )
                printer.finish(reply.text)
                fork_from, last_cost = None, reply.cost
                turn_ends.append(await session.latest_checkpoint_id(thread_id))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", default="data/chat", help="threads and write journal (data/chat)")
    parser.add_argument("--thread", default="main", help="the thread to continue (default: main)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    load_dotenv()
    # A bad GULFSTREAM_* variable, a named model's missing package or key, or 'store' without a
    # LangGraph server's store: one line and exit code 2, before anything is opened.
    try:
        context = Context()
        check_deployment_models()
        settings = get_settings()
        open_memory(
            settings.memory_backend, context.user_id, default_data_dir=settings.data_dir,
            shared_database=settings.shared_database,
        )  # fmt: skip
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        asyncio.run(chat(context, Path(args.data), args.thread))
    except KeyboardInterrupt:
        print("\nInterrupted; queued memory turns are kept in the journal and replayed next time.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
