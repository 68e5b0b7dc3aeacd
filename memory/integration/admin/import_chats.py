"""`make import-chats FILE=... USER=...`: a user's past conversations (ChatGPT, Claude or JSONL
export) into their conversation archive and memory, with the dates they were said."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
import time
from types import FrameType

from memory.errors import CorruptStoreError
from memory.integration.context import MemoryContext
from memory.integration.importing.formats import FORMATS, UnreadableExport, read_export
from memory.integration.importing.writing import Importer, Progress
from memory.integration.settings import get_settings, load_dotenv, use_settings

NO_STORE = (
    "the 'store' backend is the LangGraph server's own store, which a command outside the "
    "server cannot reach (store:memory would be forgotten at exit); import into the same "
    "PostgreSQL with --backend postgres:<the deployment's DATABASE_URI>"
)


def main(argv: list[str] | None = None) -> int:
    """`python -m memory.integration.admin.import_chats --file PATH [--user ID] [--backend SPEC]
    [--format F]`."""
    load_dotenv()
    parser = argparse.ArgumentParser(
        prog="python -m memory.integration.admin.import_chats", description=__doc__
    )
    parser.add_argument("--file", required=True, help="the export: conversations.json or .jsonl")
    parser.add_argument(
        "--user", default=MemoryContext().user_id
    )  # GULFSTREAM_USER_ID, else "default"
    parser.add_argument("--backend", help="memory backend (default: GULFSTREAM_MEMORY_BACKEND)")
    parser.add_argument("--format", default="auto", choices=["auto", *FORMATS])
    parser.add_argument("--quiet", action="store_true", help="no progress line")
    args = parser.parse_args(argv)
    if not args.file.strip():
        parser.error("--file names the export to import (make import-chats FILE=...)")
    logging.basicConfig(level=logging.ERROR, format="%(levelname)s %(name)s: %(message)s")
    try:
        export = read_export(args.file, args.format)
    except UnreadableExport as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not export.conversations:
        print(f"error: {args.file}: no conversation could be read", file=sys.stderr)
        for skipped in export.skipped_conversations[:5]:
            print(f"  {skipped.where}: {skipped.reason}", file=sys.stderr)
        return 1
    backend = args.backend or get_settings().memory_backend
    if backend.split(":", 1)[0].strip().lower() == "store":
        print(f"error: {NO_STORE}", file=sys.stderr)
        return 2
    stop = StopRequest()
    bar = ProgressLine(enabled=not args.quiet)
    importer = Importer(args.user, on_progress=bar.show, stop=stop)
    try:
        with use_settings(memory_backend=backend):
            summary = asyncio.run(importer.import_export(export))
    except (ValueError, PermissionError, CorruptStoreError, OSError) as exc:
        bar.end()
        print(f"error: {exc}", file=sys.stderr)
        return 1
    bar.end()
    print(f"imported {args.file} for user {args.user!r}")
    print(summary.describe())
    return 0 if summary.complete else 1


class StopRequest:
    """SIGTERM (and Ctrl-C) ask the import to stop after the turn it is writing; a second one
    stops it at once (what is applied stays applied: the next run goes on from there)."""

    def __init__(self) -> None:
        self.asked = False
        signal.signal(signal.SIGTERM, self._ask)
        signal.signal(signal.SIGINT, self._ask)

    def _ask(self, signum: int, frame: FrameType | None) -> None:
        if self.asked:
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
        self.asked = True
        print("\nstopping after this turn (again to stop now)", file=sys.stderr)

    def __call__(self) -> bool:
        return self.asked


class ProgressLine:
    """A progress bar on stderr, redrawn in place at most a few times a second."""

    WIDTH = 30

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self.started = time.monotonic()
        self.drawn = 0.0
        self.shown = False

    def show(self, progress: Progress) -> None:
        now = time.monotonic()
        if not self.enabled or (now - self.drawn < 0.2 and progress.done < progress.total):
            return
        self.drawn, self.shown = now, True
        share = progress.done / progress.total if progress.total else 1.0
        filled = int(share * self.WIDTH)
        rate = progress.done / max(now - self.started, 1e-9)
        bar = "#" * filled + "-" * (self.WIDTH - filled)
        sys.stderr.write(f"\rturns [{bar}] {progress.done}/{progress.total} {rate:.1f}/s")
        sys.stderr.flush()

    def end(self) -> None:
        if self.shown:
            sys.stderr.write("\n")
            sys.stderr.flush()


if __name__ == "__main__":
    sys.exit(main())
