"""Which archived messages carry a memory: the user messages of the turns that wrote it, and
messages holding most of its distinctive words (names, places, numbers)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from memory.archive.base import ConversationArchive
from memory.archive.records import ArchivedMessage
from memory.item import MemoryItem
from memory.tokenize import tokenize

SHARE_NEEDED = 0.6  # of the memory's distinctive terms a message must hold to carry it
_SALIENT = re.compile(r"\b[A-Z][\w'-]*|\d[\d.,:/-]*")
_CJK_PAIR = re.compile(r"^[\u3400-\u9fff]{2}$")
_NOT_DISTINCTIVE = {"user", "用户", "the", "i", "my"}


def item_texts(item: MemoryItem) -> set[str]:
    """Every text the item ever held: each version's description and the ones merged into it."""
    texts = {item.description}
    for entry in item.history:
        for key in ("description", "previous_description", "merged_description"):
            value = entry.get(key)
            if isinstance(value, str) and value.strip():
                texts.add(value)
    return {text for text in texts if text.strip()}


def turn_ids_of(item: MemoryItem) -> set[str]:
    """The turns that wrote or changed the item (its origin and its history's provenance)."""
    found = {item.origin.get("turn_id", "")}
    found |= {str(entry.get("turn_id") or "") for entry in item.history}
    return {turn for turn in found if turn}


def message_id_of_turn(turn_id: str) -> str:
    """The user message a chat turn id names: `<thread>:<message id>[@<checkpoint>]`."""
    _, _, rest = turn_id.partition(":")
    return rest.partition("@")[0]


def distinctive_terms(text: str) -> set[str]:
    """The words that make a fact this fact: capitalised words and numbers, Chinese pairs."""
    salient = set(tokenize(" ".join(_SALIENT.findall(text))))
    pairs = {term for term in tokenize(text) if _CJK_PAIR.match(term)}
    return (salient | pairs) - _NOT_DISTINCTIVE


def carries(message: ArchivedMessage, terms: set[str], texts: Iterable[str]) -> bool:
    if any(text in message.content for text in texts):
        return True
    if not terms:
        return False
    held = terms & set(tokenize(message.content))
    return len(held) >= max(1, SHARE_NEEDED * len(terms))


def carrier_message_ids(archive: ConversationArchive, items: Iterable[MemoryItem]) -> set[str]:
    """The archived message ids carrying any of `items`: every copy of them goes with them."""
    found: set[str] = set()
    chosen = list(items)
    turn_messages = {message_id_of_turn(t) for item in chosen for t in turn_ids_of(item)}
    texts = {text for item in chosen for text in item_texts(item)}
    terms = [distinctive_terms(text) for text in texts]
    for message in archive.messages():
        if message.role not in ("user", "assistant", "tool"):
            continue
        said_it = message.role == "user" and message.message_id in turn_messages
        if said_it or any(carries(message, wanted, texts) for wanted in terms):
            found.add(message.message_id)
    return found
