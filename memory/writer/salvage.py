"""Salvage: the journal rows still readable in a damaged SQLite file, read page by page.

A truncated or partly overwritten database fails every query (SQLite checks the whole tree),
yet most of its table leaf pages are intact. This reads the file format directly: each table
leaf page, each cell, each record, and keeps the rows shaped like the journal's."""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

LEAF_TABLE_PAGE = 0x0D
COLUMNS = 11  # seq, user_id, turn_id, turn, state, attempts, last_error, lease_owner,
# lease_until, created_at, updated_at: the journal's table, in order
STATE_RANK = {"pending": 0, "dead": 1, "done": 2}


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = 0
    for i in range(8):
        byte = data[at + i]
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, at + i + 1
    return (value << 8) | data[at + 8], at + 9


def _values(record: bytes) -> list[Any]:
    header_size, at = _varint(record, 0)
    kinds = []
    while at < header_size:
        kind, at = _varint(record, at)
        kinds.append(kind)
    values: list[Any] = []
    at = header_size
    for kind in kinds:
        if kind == 0:
            values.append(None)
        elif kind in (8, 9):
            values.append(kind - 8)
        elif 1 <= kind <= 6:
            size = (1, 2, 3, 4, 6, 8)[kind - 1]
            values.append(int.from_bytes(record[at : at + size], "big", signed=True))
            at += size
        elif kind == 7:
            values.append(struct.unpack(">d", record[at : at + 8])[0])
            at += 8
        else:
            size = (kind - 12) // 2 if kind % 2 == 0 else (kind - 13) // 2
            raw = record[at : at + size]
            values.append(raw if kind % 2 == 0 else raw.decode("utf-8"))
            at += size
    return values


def _cells(data: bytes, page_size: int, usable: int) -> Iterator[tuple[int, bytes]]:
    """(rowid, record) of every table leaf cell in the file, overflow followed when present."""
    pages = len(data) // page_size
    for number in range(1, pages + 1):
        start = (number - 1) * page_size
        header = start + (100 if number == 1 else 0)
        if data[header] != LEAF_TABLE_PAGE:
            continue
        (count,) = struct.unpack_from(">H", data, header + 3)
        for index in range(count):
            try:
                (offset,) = struct.unpack_from(">H", data, header + 8 + 2 * index)
                size, at = _varint(data, start + offset)
                rowid, at = _varint(data, at)
                yield rowid, _payload(data, at, size, page_size, usable)
            except (IndexError, struct.error, ValueError):
                continue


def _payload(data: bytes, at: int, size: int, page_size: int, usable: int) -> bytes:
    most = usable - 35
    if size <= most:
        return data[at : at + size]
    least = (usable - 12) * 32 // 255 - 23
    local = least + (size - least) % (usable - 4)
    local = local if local <= most else least
    parts = [data[at : at + local]]
    (page,) = struct.unpack_from(">I", data, at + local)
    remaining = size - local
    while remaining > 0:
        if page == 0 or page * page_size > len(data):
            raise ValueError("overflow page missing")
        start = (page - 1) * page_size
        (page,) = struct.unpack_from(">I", data, start)
        chunk = data[start + 4 : start + 4 + min(remaining, usable - 4)]
        parts.append(chunk)
        remaining -= len(chunk)
    return b"".join(parts)


def salvage_rows(path: str | Path) -> list[tuple[Any, ...]]:
    """The journal rows found in the file at `path` (and its WAL is not read: a damaged WAL's
    good frames are what SQLite itself reads), as (turn, state, attempts, last_error,
    created_at, updated_at, seq), the furthest state of each row when a page held an old copy."""
    data = Path(path).read_bytes()
    if len(data) < 100 or not data.startswith(b"SQLite format 3\0"):
        return []
    (page_size,) = struct.unpack_from(">H", data, 16)
    page_size = 65536 if page_size == 1 else page_size
    usable = page_size - data[20]
    found: dict[int, tuple[Any, ...]] = {}
    for rowid, record in _cells(data, page_size, usable):
        try:
            values = _values(record)
        except (IndexError, UnicodeDecodeError, struct.error):
            continue
        if len(values) != COLUMNS or not _looks_like_turn(values[3]):
            continue
        row = (values[3], values[4], values[5], values[6], values[9], values[10], rowid)
        kept = found.get(rowid)
        if kept is None or STATE_RANK.get(row[1], 0) > STATE_RANK.get(kept[1], 0):
            found[rowid] = row
    return [found[rowid] for rowid in sorted(found)]


def _looks_like_turn(value: Any) -> bool:
    if not isinstance(value, str) or not value.startswith("{"):
        return False
    try:
        return "turn_id" in json.loads(value)
    except ValueError:
        return False
