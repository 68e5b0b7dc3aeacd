"""`make erase USER=... [ID=...]`: erase one memory for good, or everything of one user."""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memory.errors import MemoryNotFound
from memory.integration.archive_location import existing_archive  # feature: archive
from memory.integration.settings import get_settings, load_dotenv
from memory.registry import registry

CHAT_THREADS = "data/chat/threads.sqlite"  # where `make chat` keeps its threads


def main(argv: list[str] | None = None) -> int:
    """`python -m memory.integration.admin.erase --user ID [--id MEMORY] [--threads
    FILE|--keep-threads]`."""
    load_dotenv()
    parser = argparse.ArgumentParser(
        prog="python -m memory.integration.admin.erase", description=__doc__
    )
    parser.add_argument("--user", required=True, help="whose data (every tier, every backend)")
    parser.add_argument("--id", default="", help="one memory; without it, everything of the user")
    parser.add_argument("--backend", help="memory backend (default: GULFSTREAM_MEMORY_BACKEND)")
    threads = parser.add_mutually_exclusive_group()
    threads.add_argument(
        "--threads",
        help=f"a SQLite checkpointer whose threads of the user go too (default: {CHAT_THREADS} "
        "when it exists)",
    )
    threads.add_argument(
        "--postgres-threads", help="a PostgreSQL checkpointer (e.g. $DATABASE_URI)"
    )
    threads.add_argument(
        "--keep-threads", action="store_true", help="leave the conversations in the checkpointer"
    )
    parser.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    # What the no-terminal hint names: `make erase` passes its own variable, YES=1.
    parser.add_argument("--confirm-with", default="--yes", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.ERROR, format="%(levelname)s %(name)s: %(message)s")
    settings = get_settings()
    what = (
        f"memory {args.id} of user {args.user!r}"
        if args.id
        else f"everything of user {args.user!r}"
    )
    if not args.yes and not _confirmed(what, args.id or args.user, args.confirm_with):
        print("not erased", file=sys.stderr)
        return 1
    try:
        backend = args.backend or settings.memory_backend
        memory = registry.open(
            backend, args.user, default_data_dir=settings.data_dir, snapshot_delay=None,
            embeddings="off",
            shared_database=settings.with_changes(memory_backend=backend).shared_database,
        )  # fmt: skip
        archive = None  # what stays when the archive feature is deleted (docs/CUSTOMIZING.md)
        archive = existing_archive(args.user, settings)  # feature: archive
        if args.id:
            report = memory.erase(args.id, archive=archive)
        else:
            with _checkpointer(args) as saver:
                report = memory.erase_user(archive=archive, threads=saver)
    except MemoryNotFound as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(report.to_dict(), indent=2) if args.json else report.describe())
    return 0


def _confirmed(what: str, word: str, flag: str) -> bool:
    if not sys.stdin.isatty():
        print(f"erase {what}: this cannot be undone; pass {flag} to confirm", file=sys.stderr)
        return False
    answer = input(f"Erase {what} for good? This cannot be undone. Type {word!r} to confirm: ")
    return answer.strip() == word


@contextlib.contextmanager
def _checkpointer(args: argparse.Namespace) -> Iterator[Any]:
    """The checkpointer whose threads of the user are deleted too (None: kept)."""
    if args.keep_threads:
        yield None
    elif args.postgres_threads:
        from langgraph.checkpoint.postgres import PostgresSaver

        with PostgresSaver.from_conn_string(args.postgres_threads) as saver:
            yield saver
    else:
        path = Path(args.threads or CHAT_THREADS)
        if not path.is_file():
            if args.threads:
                raise ValueError(f"no checkpointer file at {path} (--threads names one)")
            yield None
            return
        from langgraph.checkpoint.sqlite import SqliteSaver

        with SqliteSaver.from_conn_string(str(path)) as saver:
            yield saver


if __name__ == "__main__":
    sys.exit(main())
