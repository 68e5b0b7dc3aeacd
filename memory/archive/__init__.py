"""The conversation archive: every message of every thread, searchable, with daily digests, and what
forgetting hides in it. Imports the store, text and admission (a digest keeps what admission
would); erasure reaches it through its own protocol."""

from __future__ import annotations

from memory.archive.base import ConversationArchive
from memory.archive.digest import DigestSealer, extractive_digest
from memory.archive.factory import ArchiveRegistry, archive_exists, archives, open_archive
from memory.archive.query import Window, parse_day, query_terms
from memory.archive.ranking import Ranking
from memory.archive.records import (
    ArchivedMessage,
    Digest,
    ForgottenRecord,
    Hit,
    MessageKey,
    SearchResult,
    checkpoint_time,
)
from memory.archive.render import render

__all__ = [
    "ArchiveRegistry",
    "ArchivedMessage",
    "ConversationArchive",
    "Digest",
    "DigestSealer",
    "ForgottenRecord",
    "Hit",
    "MessageKey",
    "Ranking",
    "SearchResult",
    "Window",
    "archive_exists",
    "archives",
    "checkpoint_time",
    "extractive_digest",
    "open_archive",
    "parse_day",
    "query_terms",
    "render",
]
