"""Needles: what marks a stored text or row as carrying an erased memory (its ids and its texts),
and how such text is cut out or redacted."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

ERASED = "[erased]"
_SEPARATORS = re.compile(r"(?:\s*;\s*){2,}")
MIN_NEEDLE_CHARS = 6
MIN_CONTAINED_CHARS = 20  # a stored text this long that a needle contains is a cut copy of it


@dataclass
class Needles:
    """What marks a stored row as carrying an erased memory: its ids and its texts (every
    version, and the archived messages that said it)."""

    ids: set[str] = field(default_factory=set)
    texts: set[str] = field(default_factory=set)

    def add_texts(self, texts: Iterable[str]) -> None:
        """Texts long enough to name the memory (a word alone would take unrelated rows)."""
        self.texts |= {text for text in texts if len(text.strip()) >= MIN_NEEDLE_CHARS}

    def in_text(self, value: str) -> bool:
        if value in self.ids:
            return True
        if any(text in value for text in self.texts):
            return True
        # The admission log keeps the start of a message; a trace row, a cut preview.
        return len(value) >= MIN_CONTAINED_CHARS and any(value in text for text in self.texts)

    def in_row(self, row: dict[str, Any]) -> bool:
        # Not by turn id: a batched turn wrote other memories too, whose rows stay.
        if row.get("memory_id") in self.ids:
            return True
        return any(self.in_text(value) for value in strings_in(row))

    def without(self, text: str) -> str:
        """`text` without the erased texts in it (the rest kept: `human` lists other facts)."""
        stripped = text
        for needle in sorted(self.texts, key=len, reverse=True):
            stripped = stripped.replace(needle, "")
        if stripped == text:
            return text
        return _SEPARATORS.sub("; ", stripped).strip(" ;")

    def redact(self, value: Any) -> tuple[Any, bool]:
        """`value` with every string carrying a needle replaced by ERASED; and whether any was."""
        if isinstance(value, str):
            return (ERASED, True) if self.in_text(value) else (value, False)
        if isinstance(value, dict):
            pairs = {key: self.redact(inner) for key, inner in value.items()}
            return {k: v for k, (v, _) in pairs.items()}, any(c for _, c in pairs.values())
        if isinstance(value, list):
            parts = [self.redact(inner) for inner in value]
            return [v for v, _ in parts], any(c for _, c in parts)
        return value, False


def strings_in(value: Any) -> Iterator[str]:
    """Every string in a row, JSON columns opened (a JSON text may escape what it holds)."""
    if isinstance(value, dict):
        for inner in value.values():
            yield from strings_in(inner)
    elif isinstance(value, list | tuple):
        for inner in value:
            yield from strings_in(inner)
    elif isinstance(value, str):
        yield value
        if value.startswith(("[", "{")):
            try:
                parsed = json.loads(value)
            except ValueError:
                return
            yield from strings_in(parsed)
