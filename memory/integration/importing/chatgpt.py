"""ChatGPT's `conversations.json`: each conversation's kept branch, from `current_node` up."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memory.integration.importing.collect import ConversationBuilder
from memory.integration.importing.records import ParsedExport, Skipped, describe_conversation


class MalformedConversation(ValueError):
    """A conversation whose structure cannot be read (it is skipped, the rest imported)."""


def parse_chatgpt(data: list[Any], export: ParsedExport) -> None:
    """Add each conversation of a ChatGPT export to `export`."""
    for index, raw in enumerate(data):
        title = str(raw.get("title") or "") if isinstance(raw, Mapping) else ""
        where = describe_conversation(index, title)
        try:
            if not isinstance(raw, Mapping):
                raise MalformedConversation("not a JSON object")
            nodes = kept_branch(raw)
        except MalformedConversation as exc:
            export.skipped_conversations.append(Skipped(where, str(exc)))
            continue
        source_id = str(raw.get("conversation_id") or raw.get("id") or f"{title}#{index}")
        builder = ConversationBuilder(export, where, raw.get("create_time"))
        for position, node in enumerate(nodes, start=1):
            message = node["message"]
            author = message.get("author")
            role = author.get("role") if isinstance(author, Mapping) else None
            message_id = str(message.get("id") or node.get("id") or position)
            builder.add(position, message_id, role, text_of(message.get("content")),
                        message.get("create_time"))  # fmt: skip
        export.conversations.append(builder.build(source_id, title))


def kept_branch(conversation: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The nodes holding a message from the root to `current_node` (the branch the user kept;
    without it, the newest leaf's), oldest first."""
    mapping = conversation.get("mapping")
    if not isinstance(mapping, Mapping) or not mapping:
        raise MalformedConversation("no 'mapping' of messages")
    current = conversation.get("current_node") or newest_leaf(mapping)
    if current not in mapping:
        raise MalformedConversation(f"current_node {current!r} is not in its mapping")
    chain: list[Mapping[str, Any]] = []
    seen: set[str] = set()
    while current is not None:
        if current in seen:
            raise MalformedConversation(f"its messages form a loop at node {current!r}")
        seen.add(current)
        node = mapping.get(current)
        if not isinstance(node, Mapping):
            raise MalformedConversation(f"node {current!r} is named as a parent but missing")
        if isinstance(node.get("message"), Mapping):
            chain.append(node)
        current = node.get("parent")
    return chain[::-1]


def newest_leaf(mapping: Mapping[str, Any]) -> str | None:
    """The id of the childless node with the latest message (an export without current_node)."""
    leaves = [
        (float((node.get("message") or {}).get("create_time") or 0), node_id)
        for node_id, node in mapping.items()
        if isinstance(node, Mapping) and not node.get("children")
    ]
    return max(leaves)[1] if leaves else None


def text_of(content: object) -> str:
    """A ChatGPT message content's text: its string parts (images and other objects left out),
    or its `text` (code and other single-text types)."""
    if not isinstance(content, Mapping):
        return ""
    parts = content.get("parts")
    if isinstance(parts, list):
        return "\n".join(p for p in parts if isinstance(p, str) and p.strip())
    text = content.get("text")
    return text if isinstance(text, str) else ""
