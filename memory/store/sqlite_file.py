"""The small SQLite files of the write pipeline (journal, trace): WAL, one writer at a time, and
a check that a WAL left by a crash was not damaged (SQLite would silently drop what follows)."""

from __future__ import annotations

import os
import sqlite3
import struct
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

BUSY_TIMEOUT_MS = 10_000
_WAL_MAGIC = (0x377F0682, 0x377F0683)  # checksums little- or big-endian
_WAL_HEADER = 32
_FRAME_HEADER = 24


def open_wal(
    path: str | os.PathLike[str], schema: str, synchronous: str = ""
) -> sqlite3.Connection:
    """A connection usable from any thread (callers hold their own lock), WAL, schema applied."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(
        path, check_same_thread=False, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000
    )
    try:
        while_locked(lambda: connection.execute("PRAGMA journal_mode=WAL"))
        if synchronous:
            connection.execute(f"PRAGMA synchronous={synchronous}")
        while_locked(lambda: connection.executescript(schema))
    except BaseException:
        connection.close()
        raise
    return connection


def while_locked(step: Callable[[], object]) -> None:
    """Run `step`, again while SQLite says the file is locked, for up to the busy timeout.

    Two processes opening a new file at once both read it and then ask for the write lock to
    turn WAL on (or create the schema); SQLite answers one of them "database is locked" at once,
    without waiting, because waiting could never end. Trying again from the start succeeds
    once the other has finished."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    pause = 0.005
    while True:
        try:
            step()
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.2)


@contextmanager
def write_transaction(
    lock: threading.Lock, connection: sqlite3.Connection
) -> Iterator[sqlite3.Connection]:
    """`BEGIN IMMEDIATE` … `COMMIT` under `lock`; any exception rolls back and propagates."""
    with lock:
        connection.execute("BEGIN IMMEDIATE")
        try:
            yield connection
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        connection.execute("COMMIT")


def scrub(connection: sqlite3.Connection) -> bool:
    """Leave no deleted text in the file or its WAL: the WAL is checkpointed into the file,
    VACUUM rebuilds the file without its free pages (where SQLite leaves deleted rows), and the
    WAL is checkpointed again and truncated to nothing. False when another connection's open
    read kept the WAL from being emptied (the text then stays in it until the next checkpoint)."""
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.execute("VACUUM")
    busy, _, _ = connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    return not busy


def scrub_file(path: str | os.PathLike[str]) -> bool:
    """`scrub` through a connection of its own (a file other objects hold open); True when there
    was no file."""
    if not Path(path).exists():
        return True
    connection = sqlite3.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
    try:
        return scrub(connection)
    finally:
        connection.close()


def remove_database(path: str | os.PathLike[str]) -> list[str]:
    """Delete a SQLite file with its WAL and shared-memory files; the paths removed."""
    removed = []
    for name in (str(path), f"{path}-wal", f"{path}-shm", f"{path}-journal"):
        try:
            os.unlink(name)
            removed.append(name)
        except FileNotFoundError:
            pass
    return removed


def _checksum(data: bytes, sums: tuple[int, int], big_endian: bool) -> tuple[int, int]:
    words = struct.unpack(f"{'>' if big_endian else '<'}{len(data) // 4}I", data)
    s0, s1 = sums
    for i in range(0, len(words), 2):
        s0 = (s0 + words[i] + s1) & 0xFFFFFFFF
        s1 = (s1 + words[i + 1] + s0) & 0xFFFFFFFF
    return s0, s1


def wal_damage(db_path: str | os.PathLike[str]) -> str | None:
    """Why the WAL beside `db_path` has committed frames SQLite would drop, or None.

    SQLite reads a WAL up to the first frame whose checksum fails and ignores the rest without
    a word. A frame that fails with frames of the same generation after it is damage (a torn
    last frame after a crash is not: nothing follows it).
    """
    wal = Path(f"{db_path}-wal")
    try:
        data = wal.read_bytes()
    except FileNotFoundError:
        return None
    if len(data) <= _WAL_HEADER:
        return None  # empty, or a header that was being written: no frames to lose
    magic, _, page_size, _, salt1, salt2, sum1, sum2 = struct.unpack(">8I", data[:_WAL_HEADER])
    if magic not in _WAL_MAGIC:
        return f"{wal} does not start with a WAL header"
    big_endian = bool(magic & 1)
    if _checksum(data[:24], (0, 0), big_endian) != (sum1, sum2):
        return f"the header of {wal} is damaged: every frame in it would be ignored"
    frame_size = _FRAME_HEADER + page_size
    frames = (len(data) - _WAL_HEADER) // frame_size
    sums = (sum1, sum2)
    for index in range(frames):
        start = _WAL_HEADER + index * frame_size
        header = data[start : start + _FRAME_HEADER]
        fields = struct.unpack(">6I", header)
        if fields[2:4] != (salt1, salt2):
            return None  # an older generation's frame: the log ends here
        page = data[start + _FRAME_HEADER : start + frame_size]
        sums = _checksum(header[:8] + page, sums, big_endian)
        if sums != fields[4:6]:
            later = sum(
                1
                for rest in range(index + 1, frames)
                if struct.unpack_from(">2I", data, _WAL_HEADER + rest * frame_size + 8)
                == (salt1, salt2)
            )
            if later:
                return f"frame {index + 1} of {wal} is damaged; {later} later frames would be lost"
            return None
    return None
