"""A plain JSONL export: one `{thread, role, text, time}` object per line."""

from __future__ import annotations

import json
from collections.abc import Mapping

from memory.integration.importing.collect import ConversationBuilder
from memory.integration.importing.records import ParsedExport, Skipped


def parse_jsonl(text: str, export: ParsedExport) -> None:
    """Add each thread of a JSONL export to `export`, in the order threads first appear; a
    message's id is its index in its thread. An unreadable line is left out with its number."""
    builders: dict[str, ConversationBuilder] = {}
    counts: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            export.skipped_messages.append(Skipped(f"line {number}", f"not JSON ({exc.msg})"))
            continue
        thread = record.get("thread") if isinstance(record, Mapping) else None
        if not isinstance(thread, str | int) or isinstance(thread, bool) or str(thread) == "":
            export.skipped_messages.append(Skipped(f"line {number}", "no thread"))
            continue
        thread = str(thread)
        if thread not in builders:
            builders[thread] = ConversationBuilder(export, f"thread {thread!r}", unit="line")
        index = counts[thread] = counts.get(thread, 0) + 1
        words = record.get("text") if isinstance(record.get("text"), str) else ""
        builders[thread].add(number, str(index), record.get("role"), words, record.get("time"))
    export.conversations.extend(b.build(thread, thread) for thread, b in builders.items())
