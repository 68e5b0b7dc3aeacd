"""An imported conversation in the conversation archive, each message at its own time."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from memory.archive import ArchivedMessage, Window
from memory.integration.conversations.archiving import run_archive
from memory.integration.importing.records import ImportedConversation
from memory.integration.run_memory import RunMemory


def archive_conversation(run: RunMemory, conversation: ImportedConversation) -> int:
    """Archive the conversation's messages not archived yet (one transaction: a conversation
    is archived whole or not at all); returns how many were new."""
    archive = run_archive(run)
    if archive is None:
        return 0
    candidates = [
        ArchivedMessage(run.user_id, conversation.thread_id, "", m.message_id, m.role, m.text,
                        m.time, position)
        for position, m in enumerate(conversation.messages)
    ]  # fmt: skip
    return archive.add(archive.new_messages(candidates, Window()))


def archive_all(
    run_for: Callable[[str], RunMemory], conversations: Iterable[ImportedConversation]
) -> int:
    """`archive_conversation` for each, with the run of its thread; how many were new."""
    return sum(archive_conversation(run_for(c.thread_id), c) for c in conversations)
