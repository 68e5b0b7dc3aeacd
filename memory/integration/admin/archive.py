"""`make archive`: rebuild the conversation archive from the checkpoints, or search it."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Iterable
from typing import Any

from memory.archive import ConversationArchive, Window, render
from memory.archive.reconcile import reconcile
from memory.integration.archive_location import deployment_archive
from memory.integration.conversations.archiving import archive_messages
from memory.integration.settings import get_settings, load_dotenv
from memory.store.branch import Lineage
from memory.store.factory import open_memory_manager

logger = logging.getLogger(__name__)

TURN_END = ("ltm_write",)  # the step whose checkpoint holds a finished turn


def thread_ids(checkpointer: Any) -> list[str]:
    """Every thread the checkpointer holds."""
    found = {str(t.config["configurable"]["thread_id"]) for t in checkpointer.list(None)}
    return sorted(found)


def rebuild(
    app: Any,
    open_archive: Callable[[str], ConversationArchive | None],
    threads: Iterable[str] | None = None,
    default_user: str = "",
) -> dict[str, int]:
    """Archive every finished turn the checkpointer of `app` (the compiled chat graph) holds, oldest
    first, with the rule the live archive follows
    (`memory.integration.conversations.archiving.archive_messages`): each
    message once per branch, at the first turn that held it. Each user's archive is emptied first
    (their digests are sealed again later). Returns the messages added per user. A turn saved before
    the state named its user goes to `default_user` (skipped without)."""
    added: dict[str, int] = {}
    for thread in threads if threads is not None else thread_ids(app.checkpointer):
        history = list(app.get_state_history({"configurable": {"thread_id": thread}}))
        parents = {_id(s.config): _id(s.parent_config) for s in history}
        ancestors: dict[str, frozenset[str]] = {}
        for snapshot in sorted(history, key=lambda s: _id(s.config)):
            checkpoint = _id(snapshot.config)
            ancestors[checkpoint] = ancestors.get(parents[checkpoint], frozenset()) | {checkpoint}
            if tuple(snapshot.next) != TURN_END or snapshot.values.get("private"):
                continue  # not a finished turn, or one of a conversation off the record
            user = str(snapshot.values.get("user_id") or default_user)
            archive = open_archive(user) if user else None
            if archive is None:
                logger.warning("turn %s of thread %s names no user: skipped", checkpoint, thread)
                continue
            if user not in added:
                archive.clear()
                added[user] = 0
            lineage = Lineage(thread, ancestors[checkpoint])
            messages = snapshot.values.get("messages") or []
            added[user] += archive_messages(archive, messages, user, thread, checkpoint, lineage)
    return added


def _id(config: Any) -> str:
    return str(((config or {}).get("configurable") or {}).get("checkpoint_id") or "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    build = commands.add_parser("rebuild", help="rebuild the archive from a checkpointer")
    source = build.add_mutually_exclusive_group()
    source.add_argument(
        "--threads", default="data/chat/threads.sqlite", help="a SQLite checkpointer file"
    )
    source.add_argument("--postgres", help="a PostgreSQL checkpointer (e.g. $DATABASE_URI)")
    build.add_argument("--user", default="", help="for turns saved before states named a user")
    find = commands.add_parser("search", help="search one user's archive")
    find.add_argument("query")
    find.add_argument("--user", required=True)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    load_dotenv()
    try:
        if args.command == "search":
            archive = deployment_archive(args.user)
            if archive is not None and get_settings().memory_backend.split(":")[0] != "store":
                # What carries a forgotten memory is left out, as the agent's search does.
                reconcile(open_memory_manager(get_settings().memory_backend, args.user), archive)
            print(render(archive.search(args.query, Window())) if archive else "archive is off")
            return 0
        counts = _rebuild_from(args, deployment_archive)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for user, count in sorted(counts.items()):
        print(f"{user}: {count} messages archived")
    return 0


def checkpoint_reader(checkpointer: Any) -> Any:
    """A graph over `checkpointer` that reads the chat graph's saved states (its messages and
    user): any chat graph whose state extends MemoryState saved them so. A state's `next` names
    only nodes of the graph reading it: with the chat graph's last node (`TURN_END`), a
    finished turn's checkpoint reads as one (with another node, `rebuild` found no turn)."""
    from langgraph.graph import START, StateGraph

    from memory.integration.state import MemoryState

    builder = StateGraph(MemoryState)
    for node in TURN_END:
        builder.add_node(node, lambda state: {})
        builder.add_edge(START, node)
    return builder.compile(checkpointer=checkpointer)


def _rebuild_from(args: argparse.Namespace, open_: Callable[[str], Any]) -> dict[str, int]:
    if args.postgres:
        from langgraph.checkpoint.postgres import PostgresSaver

        with PostgresSaver.from_conn_string(args.postgres) as saver:
            return rebuild(checkpoint_reader(saver), open_, default_user=args.user)
    from pathlib import Path

    from langgraph.checkpoint.sqlite import SqliteSaver

    if not Path(args.threads).is_file():
        raise ValueError(f"no checkpointer file at {args.threads} (--threads names one)")
    with SqliteSaver.from_conn_string(args.threads) as saver:
        return rebuild(checkpoint_reader(saver), open_, default_user=args.user)


if __name__ == "__main__":
    sys.exit(main())
