"""The files beside a store that hold one user's memories: snapshots, hand-edit copies of a
YAML file, consolidation plans, the vector sidecar."""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterator
from pathlib import Path

from memory.store.erasure_report import ErasureReport
from memory.store.manager import file_stem
from memory.store.snapshots import redact_records, write_snapshot_lines
from memory.text.needles import Needles, strings_in

BACKUP_FOLDER = "memory_backup"
PLAN_FOLDER = "consolidation"
VECTOR_SIDECAR = ".{stem}.vectors.sqlite"
# `<stem>.bak-20261201T101010123456.yaml`: the exact shape, so that no other user's file (a user
# id may hold "." and "-") is taken for a copy of this one's.
_COPY = r"\.(?:bak|corrupt)-\d{8}T\d{12}\.yaml"


def snapshots_of(folder: Path, user_id: str) -> Iterator[Path]:
    """Every snapshot in `folder/memory_backup` whose header names `user_id` (the automatic
    one, those taken before consolidation passes, any exported there)."""
    backups = folder / BACKUP_FOLDER
    if not backups.is_dir():
        return
    for path in sorted(backups.glob("*.jsonl.gz")):
        try:
            with gzip.open(path, "rt", encoding="utf-8") as handle:
                header = json.loads(handle.readline() or "{}")
        except (OSError, EOFError, ValueError):
            continue  # not a snapshot this code can read: not counted as this user's
        if isinstance(header, dict) and header.get("user_id") == user_id:
            yield path


def rewrite_snapshot(path: Path, needles: Needles) -> tuple[int, bool | None]:
    """Drop the erased items from a snapshot and redact what other items' histories and the
    core context say of them; the file is dropped when no item is left, and left as it is when
    nothing in it names the memory. (items dropped, whether the file is gone: None untouched)."""
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        lines = [json.loads(line) for line in handle if line.strip()]
    kept, dropped = redact_records(lines, needles)
    if kept is None:
        return 0, None
    if len(kept) == 1:
        path.unlink()
        return dropped, True
    write_snapshot_lines(path, kept)
    return dropped, False


def erase_snapshots(
    folder: Path, user_id: str, needles: Needles | None, report: ErasureReport
) -> None:
    """Rewrite (one memory) or remove (a whole user, `needles` None) the user's snapshots."""
    for path in snapshots_of(folder, user_id):
        if needles is None:
            path.unlink()
            report.count("snapshots", 1)
            report.file(path, "removed")
            continue
        dropped, gone = rewrite_snapshot(path, needles)
        report.count("snapshot items", dropped)
        if gone is not None:
            report.file(path, "removed (no item left)" if gone else "rewritten")


def yaml_copies(directory: Path, user_id: str) -> list[Path]:
    """The copies a YAML backend set aside for this user (hand edits it repaired, corrupt files)."""
    stem = file_stem(user_id)
    shape = re.compile(re.escape(stem) + _COPY)
    return sorted(p for p in directory.glob(f"{stem}.*.yaml") if shape.fullmatch(p.name))


def erase_yaml_copies(
    directory: Path, user_id: str, needles: Needles | None, report: ErasureReport
) -> None:
    """Remove the set-aside copies holding an erased text (all of them for a whole user): they
    are the bytes a person left, not a document this code may rewrite."""
    for path in yaml_copies(directory, user_id):
        if needles is not None:
            text = path.read_text(encoding="utf-8", errors="replace")
            if not any(needle in text for needle in needles.texts | needles.ids):
                continue
        path.unlink()
        report.count("set-aside copies", 1)
        report.file(path, "removed")


def erase_plans(folder: Path, user_id: str, needles: Needles | None, report: ErasureReport) -> None:
    """A consolidation plan naming an erased memory is dropped (the next pass plans afresh);
    for a whole user, the plan and the write counter both go."""
    stem = file_stem(user_id)
    for name in (f"{stem}.plan.json", f"{stem}.writes.json"):
        path = folder / PLAN_FOLDER / name
        if not path.exists():
            continue
        if needles is not None and not _mentions(path, needles):
            continue
        path.unlink()
        report.count("consolidation plans", 1)
        report.file(path, "removed")


def _mentions(path: Path, needles: Needles) -> bool:
    text = path.read_text(encoding="utf-8", errors="replace")
    return needles.in_text(text) or any(needles.in_text(value) for value in strings_in(text))
