"""The turns a conversation holds: each user message with the replies after it, the exchange
before it as context, said at the user message's time."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from memory.integration.importing.records import ImportedConversation, ImportedMessage
from memory.text.messages import preceding_exchange

REPLY_CHARS = 2_000  # of an assistant reply in a turn: memories come from the user's side


@dataclass(frozen=True)
class ImportedTurn:
    """One turn to write: its stable id, thread, messages, context and time."""

    turn_id: str
    thread_id: str
    messages: tuple[dict[str, str], ...]
    context: tuple[dict[str, str], ...]
    said_at: str
    time: float

    @property
    def user_text(self) -> str:
        return self.messages[0]["content"]


def turns_of(conversation: ImportedConversation) -> Iterator[ImportedTurn]:
    """The conversation's turns in order; its id is `import:<thread>:<message id>`, the same
    at every import of the same file, so a turn written once is skipped after."""
    thread = conversation.thread_id
    messages = conversation.messages
    for index, message in enumerate(messages):
        if message.role != "user":
            continue
        replies = []
        for after in messages[index + 1 :]:
            if after.role == "user":
                break
            replies.append(_said(after))
        before = [_said(m) for m in messages[: index + 1]]
        yield ImportedTurn(
            f"import:{thread}:{message.message_id}", thread,
            (_said(message), *replies), tuple(preceding_exchange(before)),
            message.said_at, message.time,
        )  # fmt: skip


def _said(message: ImportedMessage) -> dict[str, str]:
    text = message.text
    if message.role == "assistant" and len(text) > REPLY_CHARS:
        text = text[: REPLY_CHARS - 1] + "…"
    return {"role": message.role, "content": text}
