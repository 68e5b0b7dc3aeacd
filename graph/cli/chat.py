"""`make chat`: a terminal chat with long-term memory (/memories, /forget, /why, /private, ...)."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import logging
import sys
import uuid
from pathlib import Path

from graph.cli.session import LocalSession
from graph.cli.streaming import ReplyPrinter
from graph.context import Context
from memory.integration import Settings, get_settings, open_user_memory, prepare_deployment
from prompts.reminders import DUE

WRITE_WAIT_SECONDS = 120.0
HELP = (
    "Commands: /memories  /forget <id or text>  /restore <id>  "
    "/search <text> (past conversations)  "  # feature: archive
    "/cost (model calls by purpose)  /why (the memories the last reply was given)  "
    "/private (a new thread kept out of memory)  "
    "/consolidate (merge duplicates, stale plans, archive cold ones)  "  # feature: consolidation
    "/back (take back your last message: the next one starts a sibling branch)  /new (a new "
    "thread)  /quit"
)


def help_for(settings: Settings) -> str:
    """HELP without the commands of the features this deployment turned off."""
    shown = HELP
    if not settings.archive_on:  # feature: archive
        shown = shown.replace("/search <text> (past conversations)  ", "")  # feature: archive
    return shown


def show_event(event: LocalSession.Event) -> None:
    """Tell the user when the background writer changed their memory."""
    if event.tool != "read_memories" and event.ok:
        print(f"\n  (memory) {event.for_people()}", flush=True)


async def read_line(prompt: str) -> str | None:
    try:
        return await asyncio.to_thread(input, prompt)
    except EOFError:
        return None


async def chat(context: Context, data_dir: Path, thread_id: str) -> None:
    async with LocalSession(context, data_dir, on_memory_event=show_event) as session:
        assert session.memory is not None
        commands = session.commands()
        shown_help = help_for(get_settings())
        print(f"Gulfstream chat — user {context.user_id!r}, thread {thread_id}. {shown_help}")
        # The checkpoints this session's turns ended at, for /back; the next turn forks from
        # `fork_from` when it is set.
        turn_ends: list[str] = []
        fork_from: str | None = None
        last_cost: dict[str, dict[str, int]] = {}
        last_sources: list[str] = []
        while True:
            for reminder in await asyncio.to_thread(session.memory.reminders.take_due,
                                                    context.moment()):  # fmt: skip
                print(DUE.format(what=reminder.what))
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
                print(await asyncio.to_thread(commands.list, lineage))
            elif line.startswith("/forget"):
                target = line.removeprefix("/forget")
                print(await asyncio.to_thread(commands.forget, target, lineage, thread_id, at))
            elif line.startswith("/search") and "/search" in shown_help:  # feature: archive
                text = line.removeprefix("/search")  # feature: archive
                print(await asyncio.to_thread(commands.search, text, lineage))  # feature: archive
            elif line.startswith("/restore"):
                target = line.removeprefix("/restore")
                print(await asyncio.to_thread(commands.restore, target))
            elif line == "/consolidate":  # feature: consolidation
                print(await asyncio.to_thread(commands.consolidate))  # feature: consolidation
            elif line == "/cost":
                print(await asyncio.to_thread(commands.cost, last_cost))
            elif line == "/why":
                print(await asyncio.to_thread(commands.why, last_sources))
            elif line in ("/new", "/private"):
                thread_id = uuid.uuid4().hex[:8]
                turn_ends, fork_from = [], None
                # Off the record from its first turn; the thread stays so (its state says it).
                session.context = dataclasses.replace(context, remember=line == "/new")
                kept = "" if line == "/new" else ", off the record: nothing of it is remembered"
                print(f"  new thread {thread_id}{kept}")
            elif line == "/back":
                if len(turn_ends) < 2:
                    print("  /back needs two turns in this session (or use /new)")
                    continue
                turn_ends.pop()
                fork_from = turn_ends[-1]
                print("  your next message starts a sibling branch of the one taken back")
            elif line.startswith("/"):
                print(f"  unknown command. {shown_help}")
            else:
                # The reply is printed while the model writes it (a small local model takes
                # seconds); the memory writer's "(memory)" lines come after it.
                printer = ReplyPrinter()
                reply = await session.say(
                    thread_id, line, checkpoint_id=fork_from, on_text=printer.piece
                )
                printer.finish(reply.text)
                if reply.private:
                    print("  (off the record: this conversation is not remembered)")
                fork_from, last_cost, last_sources = None, reply.cost, reply.memory_ids
                turn_ends.append(await session.latest_checkpoint_id(thread_id))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", default="data/chat", help="threads and write journal (data/chat)")
    parser.add_argument("--thread", default="main", help="the thread to continue (default: main)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    Settings.load_dotenv()
    # A bad GULFSTREAM_* variable, a named model's missing package or key, or 'store' without a
    # LangGraph server's store: one line and exit code 2, before anything is opened.
    try:
        context = Context()
        prepare_deployment()
        open_user_memory(context.user_id)
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
