"""Claude's `conversations.json`: each conversation's `chat_messages`, human and assistant."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memory.integration.importing.collect import ConversationBuilder
from memory.integration.importing.records import ParsedExport, Skipped, describe_conversation


def parse_claude(data: list[Any], export: ParsedExport) -> None:
    """Add each conversation of a Claude export to `export`."""
    for index, raw in enumerate(data):
        title = str(raw.get("name") or "") if isinstance(raw, Mapping) else ""
        where = describe_conversation(index, title)
        messages = raw.get("chat_messages") if isinstance(raw, Mapping) else None
        if not isinstance(messages, list):
            reason = (
                "not a JSON object" if not isinstance(raw, Mapping) else "no chat_messages list"
            )
            export.skipped_conversations.append(Skipped(where, reason))
            continue
        source_id = str(raw.get("uuid") or f"{title}#{index}")
        builder = ConversationBuilder(export, where, raw.get("created_at"))
        for position, message in enumerate(messages, start=1):
            if not isinstance(message, Mapping):
                builder.add(position, f"#{position}", None, "", None)
                continue
            message_id = str(message.get("uuid") or f"#{position}")
            said, when = message.get("sender"), message.get("created_at")
            builder.add(position, message_id, said, text_of(message), when)
        export.conversations.append(builder.build(source_id, title))


def text_of(message: Mapping[str, Any]) -> str:
    """The message's text blocks joined (attachments and tool blocks left out), else `text`."""
    blocks = message.get("content")
    if isinstance(blocks, list):
        texts = [
            b["text"] for b in blocks
            if isinstance(b, Mapping) and b.get("type") == "text" and isinstance(b.get("text"), str)
        ]  # fmt: skip
        if any(t.strip() for t in texts):
            return "\n".join(t for t in texts if t.strip())
    text = message.get("text")
    return text if isinstance(text, str) else ""
