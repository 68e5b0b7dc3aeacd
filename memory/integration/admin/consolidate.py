"""`make consolidate USER=...`: one consolidation pass over a user's memory, its report printed."""

from __future__ import annotations

import argparse
import json
import sys

from memory.errors import CorruptStoreError, WritesDisabled
from memory.integration.context import MemoryContext
from memory.integration.settings import get_settings, load_dotenv
from memory.integration.writing.consolidator_graph import describe
from memory.long_term import LongTermMemory
from memory.store.factory import open_memory_manager


def main(argv: list[str] | None = None) -> int:
    """`python -m memory.integration.admin.consolidate [--backend SPEC] [--user ID] [--rewrite]
    [--json]`."""
    load_dotenv()
    parser = argparse.ArgumentParser(
        prog="python -m memory.integration.admin.consolidate", description=__doc__
    )
    parser.add_argument("--backend", help="memory backend (default: GULFSTREAM_MEMORY_BACKEND)")
    parser.add_argument(
        "--user", default=MemoryContext().user_id
    )  # GULFSTREAM_USER_ID, else "default"
    parser.add_argument(
        "--rewrite",
        action="store_true",
        help="let the writer model (GULFSTREAM_WRITER_MODEL) rewrite each merged group",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args(argv)
    settings = get_settings()
    backend = args.backend or settings.memory_backend
    shared = settings.with_changes(memory_backend=backend).shared_database
    try:
        manager = open_memory_manager(backend, args.user, lock_database=shared)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    llm = None
    if args.rewrite:
        from memory.integration.models.loading import load_chat_model

        try:  # a named writer model's missing package or key: one line, before any pass
            llm = load_chat_model(MemoryContext().writer_model)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    # The data folder the chat and the server use, so an interrupted pass resumes either way.
    memory = LongTermMemory(
        manager, data_dir=manager.data_dir or settings.data_dir, embeddings="off",
        state_database=shared,
    )  # fmt: skip
    try:
        report = memory.consolidate(llm, policy=settings.consolidation_policy())
    except (CorruptStoreError, WritesDisabled, OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(
        json.dumps(report.to_dict(), ensure_ascii=False, indent=2)
        if args.json
        else describe(report)
    )
    return 1 if report.refused else 0


if __name__ == "__main__":
    sys.exit(main())
