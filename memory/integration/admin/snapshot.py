"""`make export` / `make import`: one user's memory to or from a `.jsonl.gz` snapshot."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from memory.errors import CorruptStoreError
from memory.integration.context import MemoryContext
from memory.integration.settings import get_settings, load_dotenv
from memory.store.factory import open_memory_manager
from memory.store.snapshots import default_snapshot_path, import_snapshot, write_snapshot


def main(argv: list[str] | None = None) -> int:
    """`python -m memory.integration.admin.snapshot export|import [--backend SPEC] [--user ID]
    [--file PATH]`."""
    load_dotenv()
    parser = argparse.ArgumentParser(
        prog="python -m memory.integration.admin.snapshot", description=__doc__
    )
    parser.add_argument("command", choices=["export", "import"])
    parser.add_argument("--backend", help="memory backend (default: GULFSTREAM_MEMORY_BACKEND)")
    parser.add_argument(
        "--user", default=MemoryContext().user_id
    )  # GULFSTREAM_USER_ID, else "default"
    parser.add_argument(
        "--file", help="snapshot path (default: memory_backup/<user>.jsonl.gz beside the store)"
    )
    # What the hint names: `make export`/`make import` pass their own variable, FILE=<path>.
    parser.add_argument("--file-named-as", default="--file", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        manager = open_memory_manager(args.backend or get_settings().memory_backend, args.user)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    path = Path(args.file) if args.file else default_snapshot_path(manager)
    if path is None:
        # Not parser.error: its usage line names --file, which `make export` does not take.
        hint = f"this backend has no default snapshot location; pass {args.file_named_as}"
        print(f"error: {hint}", file=sys.stderr)
        return 2
    try:
        if args.command == "export":
            print(f"wrote {write_snapshot(manager, path)} ({len(manager.all_items())} items)")
        else:
            print(f"imported {import_snapshot(manager, path)} items from {path}")
            print(vectors_after_import(manager))
    except (ValueError, CorruptStoreError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


def vectors_after_import(manager: Any) -> str:
    """Make the imported memories' vectors now when that takes seconds, so the server's first
    query is fused; a larger import leaves them to the server (BM25 only for them meanwhile)."""
    from memory.integration.models.embeddings import deployment_embeddings
    from memory.long_term import LongTermMemory

    embeddings = deployment_embeddings()
    if embeddings is None:
        return "semantic recall is off: no vectors to make"
    retrievers = LongTermMemory(manager, embeddings=embeddings).retrievers
    if retrievers.catch_up():
        return "vectors made: the imported memories are searchable by meaning"
    status = retrievers.recall_status()
    missing = status.pending if status is not None else "some"
    return (f"{missing} vectors are left to make; the server makes them in the background "
            "and uses BM25 alone for those memories meanwhile")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
