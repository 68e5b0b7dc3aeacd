"""YamlMemoryManager: one human-readable YAML file per user, locked across processes, atomic."""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import portalocker
import yaml

from memory.errors import CorruptStoreError
from memory.store.atomic_file import write_text_atomically
from memory.store.core_context import read_stored
from memory.store.item import MemoryItem
from memory.store.manager import BaseMemoryManager, MemoryDocument, file_stem
from memory.store.repair import SelfCheckReport, items_from_raw

logger = logging.getLogger(__name__)

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml is ~10x faster when present
_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
LOCK_TIMEOUT_SECONDS = 60.0
_HEADER = "# Gulfstream memories of one user. Safe to edit by hand; the app repairs and reports.\n"


class YamlMemoryManager(BaseMemoryManager):
    """The default backend: `<directory>/<user_id>.yaml`, edited by people and by the app."""

    backend = "yaml"

    def __init__(self, directory: str | os.PathLike[str], user_id: str) -> None:
        super().__init__(user_id)
        self.directory = self.data_dir = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.stem = file_stem(self.user_id)
        self.path = self.directory / f"{self.stem}.yaml"
        self._lock_path = self.directory / f".{self.stem}.yaml.lock"
        self._thread_lock = threading.RLock()
        self._cache: tuple[tuple[int, int, int], MemoryDocument, list[str]] | None = None
        self._parsed: tuple[str, MemoryDocument, list[str]] | None = None  # text, its parse
        self._kept_original: tuple[int, int, int] | None = None  # file key of the last backup

    # ── primitives ──────────────────────────────────────────────────────

    @contextmanager
    def _write_lock(self) -> Iterator[None]:
        with (
            self._thread_lock,
            portalocker.Lock(str(self._lock_path), mode="a", timeout=LOCK_TIMEOUT_SECONDS),
        ):
            yield

    def _load_all(self) -> MemoryDocument:
        # Called for writes, under the lock: what it returns is saved back.
        document, repairs = self._parse_file()
        if repairs:
            self._keep_hand_edit(document, repairs)
        return document

    def _keep_hand_edit(self, document: MemoryDocument, repairs: list[str]) -> None:
        """A hand edit made while the app runs is repaired by the write about to happen: keep
        the file as the person left it beside it, and say so in `last_report` and the log."""
        key = self._file_key()
        if key is None or key == self._kept_original:
            return  # these very bytes are already kept (a write that then failed)
        backup = self._copy_aside("bak")
        self._kept_original = key
        repaired = [*repairs, f"original bytes kept at {backup}"]
        logger.warning(
            "memory file %s was edited by hand and is repaired by this write: %s",
            self.path,
            "; ".join(repaired),
        )
        live = sum(1 for item in document.items.values() if not item.deleted)
        issue = f"{self.path} was edited while the app ran; the next write repaired it"
        self.last_report = SelfCheckReport("WARN", [issue], repaired, live)

    def _save_all(self, document: MemoryDocument) -> None:
        data: dict[str, Any] = {
            "revision": document.revision,
            "items": {i: item.to_dict() for i, item in document.items.items()},
            "applied_turns": document.applied_turns,
        }
        if document.core_context:
            data["core_context"] = dict(document.core_context)
        text = _HEADER + yaml.dump(
            data, Dumper=_Dumper, allow_unicode=True, default_flow_style=False, sort_keys=False
        )
        write_text_atomically(self.path, text, prefix=f".{self.stem}.")
        # What parsing `text` would give, without PyYAML: the next write skips the parse.
        items, repairs = items_from_raw(data["items"])
        parsed = MemoryDocument(
            items, list(document.applied_turns), document.revision, dict(document.core_context)
        )
        self._parsed = None if repairs else (text, parsed, [])

    def _read_document(self) -> MemoryDocument:
        # Reads are served from a cache keyed by the file's identity; each write replaces the file.
        key = self._file_key()
        if key is not None and self._cache is not None and self._cache[0] == key:
            return self._cache[1]
        document, repairs = self._parse_file()
        if key is not None:
            self._cache = (key, document, repairs)
        return document

    def change_token(self) -> str:
        # A person editing the file by hand changes it but not the revision inside it: the
        # file's identity makes that edit count as a change too.
        return f"{self.revision}:{self._file_key()}"

    # ── parsing ─────────────────────────────────────────────────────────

    def _file_key(self) -> tuple[int, int, int] | None:
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            return None
        return (stat.st_ino, stat.st_mtime_ns, stat.st_size)

    def _parse_file(self) -> tuple[MemoryDocument, list[str]]:
        """Parse the file leniently: type errors are repaired in memory and listed, never fatal."""
        try:
            raw_text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return MemoryDocument(), []
        except UnicodeDecodeError as exc:
            raise CorruptStoreError(f"{self.path} is not UTF-8 text: {exc}") from exc
        # PyYAML needs ~0.15 s per 1,000 items. Every write re-reads the file under the lock;
        # when its bytes are exactly those parsed (or written) last time, reuse that result.
        if self._parsed is not None and self._parsed[0] == raw_text:
            return _copy_document(self._parsed[1]), list(self._parsed[2])
        document, repairs = self._parse_text(raw_text)
        self._parsed = (raw_text, _copy_document(document), list(repairs))
        return document, repairs

    def _parse_text(self, raw_text: str) -> tuple[MemoryDocument, list[str]]:
        try:
            data = yaml.load(raw_text, Loader=_Loader)  # a safe loader (CSafeLoader or SafeLoader)
        except yaml.YAMLError as exc:
            raise CorruptStoreError(f"{self.path} is not valid YAML: {exc}") from exc
        if data is None:
            return MemoryDocument(), []
        if not isinstance(data, dict):
            raise CorruptStoreError(f"{self.path} must hold a mapping, found {type(data).__name__}")
        repairs: list[str] = []
        core_context: dict[str, str] = {}
        if "items" in data and isinstance(data.get("items"), dict | None):
            core_context = read_stored(data.get("core_context"), repairs)
            raw_items = data.get("items") or {}
            turns = data.get("applied_turns") or []
            revision = data.get("revision", 0)
        else:  # the first, flat layout: {id: item}
            raw_items, turns, revision = data, [], 0
            repairs.append("file used the flat layout {id: item}; rewritten with items/revision")
        if not isinstance(turns, list):
            repairs.append("applied_turns was not a list; reset")
            turns = []
        if isinstance(revision, bool) or not isinstance(revision, int):
            repairs.append("revision was not a number; reset")
            revision = 0
        items, item_repairs = items_from_raw(raw_items)
        repairs.extend(item_repairs)
        document = MemoryDocument(items, [str(t) for t in turns], revision, core_context)
        return document, repairs

    # ── self-check ──────────────────────────────────────────────────────

    def _check_and_repair(self) -> tuple[list[str], list[str]]:
        # A probe file of our own: two processes checking the same user at once must not
        # delete each other's probe (that once read as "storage is not usable").
        with tempfile.NamedTemporaryFile(dir=self.directory, prefix=f".{self.stem}.probe."):
            pass
        with self._write_lock():
            try:
                document, repairs = self._parse_file()
            except CorruptStoreError as exc:
                copy = self._copy_aside("corrupt")
                raise CorruptStoreError(
                    f"{exc}. The file is left untouched and a copy is at {copy}; fix or move it, "
                    "then run self_check again"
                ) from exc
            if repairs:
                backup = self._copy_aside("bak")
                document.revision += 1
                self._save_all(document)
                repairs.append(f"original bytes kept at {backup}")
        return [], repairs

    def _copy_aside(self, label: str) -> Path:
        stamp = datetime.now().strftime("%Y%m%dT%H%M%S%f")
        target = self.directory / f"{self.stem}.{label}-{stamp}.yaml"
        shutil.copy2(self.path, target)
        return target


def _copy_document(document: MemoryDocument) -> MemoryDocument:
    """A copy a transaction may change without touching the remembered parse."""
    items = {i: MemoryItem(**item.to_dict()) for i, item in document.items.items()}
    return MemoryDocument(
        items, list(document.applied_turns), document.revision, dict(document.core_context)
    )
