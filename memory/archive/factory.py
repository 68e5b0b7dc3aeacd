"""open_archive: one user's conversation archive from a spec (sqlite:<folder>, postgres:<dsn>)."""

from __future__ import annotations

import threading
from collections import OrderedDict

from memory.archive.base import ConversationArchive

SPEC_HELP = "use 'sqlite:<folder>' (one file per user), 'postgres:<connection string>' or 'off'"
MAX_OPEN = 256


def open_archive(spec: str, user_id: str) -> ConversationArchive | None:
    """The archive named by `spec` for `user_id`; None for 'off'; ValueError for a bad spec."""
    kind, _, target = spec.strip().partition(":")
    kind = kind.lower()
    if kind == "off":
        return None
    if kind == "sqlite" and target.strip():
        from memory.archive.sqlite_archive import SqliteArchive

        return SqliteArchive(target.strip(), user_id)
    if kind == "postgres" and target.strip():
        from memory.archive.postgres_archive import PostgresArchive

        return PostgresArchive(target.strip(), user_id)
    raise ValueError(f"conversation archive {spec!r} cannot be used: {SPEC_HELP}")


def archive_exists(spec: str, user_id: str) -> bool:
    """Whether `spec` may hold anything of `user_id`, found without creating a file: what a
    read-only caller asks before opening the archive of a user who may never have chatted."""
    kind, _, target = spec.strip().partition(":")
    if kind.lower() == "sqlite" and target.strip():
        from memory.archive.sqlite_archive import archive_path

        return archive_path(target.strip(), user_id).exists()
    return kind.lower() != "off"


class ArchiveRegistry:
    """Each user's archive opened once per spec and kept (bounded, least recently used out)."""

    def __init__(self, max_open: int = MAX_OPEN) -> None:
        self.max_open = max_open
        self._open: OrderedDict[tuple[str, str], ConversationArchive | None] = OrderedDict()
        self._lock = threading.Lock()

    def open(self, spec: str, user_id: str) -> ConversationArchive | None:
        key = (spec, user_id)
        with self._lock:
            if key in self._open:
                self._open.move_to_end(key)
                return self._open[key]
            archive = open_archive(spec, user_id)
            self._open[key] = archive
            while len(self._open) > self.max_open:
                _, evicted = self._open.popitem(last=False)
                if evicted is not None:
                    evicted.close()
            return archive

    def clear(self) -> None:
        with self._lock:
            for archive in self._open.values():
                if archive is not None:
                    archive.close()
            self._open.clear()


archives = ArchiveRegistry()
