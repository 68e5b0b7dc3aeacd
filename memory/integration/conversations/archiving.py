"""The conversation archive from the graph's side: which archive a run uses, what of a finished
turn is archived; the daily digests are sealed by memory/integration/conversations/digests.py."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from memory.integration.archive_location import archive_spec, deployment_archive
from memory.integration.run_memory import RunMemory
from memory.store.branch import Lineage
from memory.text.messages import text_of

# memory.archive is imported by the functions that run while the archive is on: a deployment
# that turned it off never loads it.
if TYPE_CHECKING:
    from memory.archive import ArchivedMessage, ConversationArchive

logger = logging.getLogger(__name__)


def run_archive(run: RunMemory) -> ConversationArchive | None:
    """The run's user's archive (None when the deployment turned it off)."""
    if not run.settings.archive_on:
        return None
    return deployment_archive(run.user_id, run.settings)


def forget_in_run_archive(run: RunMemory) -> None:
    """`forget_in_archive` on the run's archive, before a reply; an archive that cannot be
    opened is logged (the search tool reports it) and skipped."""
    try:
        archive = run_archive(run)
    except Exception:  # an unreachable archive database is the search tool's error to report
        logger.exception("the conversation archive of %r cannot be opened", run.user_id)
        return
    forget_in_archive(run, archive)


def forget_in_archive(run: RunMemory, archive: ConversationArchive | None) -> None:
    """Hide what carries each memory the user forgot since the last look, and bring back what a
    restored one hid (`memory.archive.reconcile.reconcile`): done before the archive is read. A
    failure is logged, never fails the turn."""
    if archive is None:
        return
    from memory.archive.reconcile import reconcile

    try:
        done = reconcile(run.memory.manager, archive)
    except Exception:
        logger.exception("hiding forgotten memories in the archive of %r failed", run.user_id)
        return
    if done.hidden or done.restored:
        logger.info("archive of %r: hidden for forgotten memories %s, restored %s",
                    run.user_id, done.hidden, list(done.restored))  # fmt: skip


def archived_form(
    messages: Sequence[Any], user_id: str, thread_id: str, checkpoint_id: str, timestamp: float
) -> list[ArchivedMessage]:
    """The archivable messages of a state: user and assistant text, tool results as a preview
    (with the tool's name; stored, never searched); system messages and tool-call-only replies
    are left out. An assistant reply that repeats an archive search result of its turn is
    archived with the quoted sentences marked out: the archive holds each thing said once."""
    from memory.archive import ArchivedMessage
    from memory.archive.quotes import is_archive_result, strip_quotes
    from memory.archive.records import content_hash

    found: list[ArchivedMessage] = []
    results: list[str] = []  # the archive search results of the current turn
    for message in messages:
        if not isinstance(message, BaseMessage):
            continue
        text = text_of(message.content)
        if isinstance(message, HumanMessage):
            role, results = "user", []
        elif isinstance(message, AIMessage):
            role, text = "assistant", strip_quotes(text, results)
        elif isinstance(message, ToolMessage):
            if is_archive_result(text):
                results.append(text)
            role, text = "tool", f"[{message.name or 'tool'}] {text}"
        else:
            continue
        if not text.strip():
            continue
        message_id = message.id or f"hash:{content_hash(role, text)}"
        found.append(
            ArchivedMessage(
                user_id,
                thread_id,
                checkpoint_id,
                message_id,
                role,
                text,
                timestamp,
                len(found),
            )
        )
    return found


def archive_messages(
    archive: ConversationArchive,
    messages: Sequence[Any],
    user_id: str,
    thread_id: str,
    checkpoint_id: str,
    lineage: Lineage | None,
) -> int:
    """Archive what of `messages` (a turn's state at `checkpoint_id`) is not yet archived on
    this branch of the thread: each message once, at the first turn that held it. The same
    rule rebuilds the archive from the checkpoints (memory/integration/admin/archive.py)."""
    from memory.archive import ArchivedMessage, Window, checkpoint_time

    moment = checkpoint_time(checkpoint_id) if checkpoint_id else None
    stamp = moment.timestamp() if moment is not None else time.time()
    candidates = archived_form(messages, user_id, thread_id, checkpoint_id, stamp)
    window = Window(lineage=lineage)
    fresh = archive.new_messages(candidates, window)
    renumbered = [
        ArchivedMessage(m.user_id, m.thread_id, m.checkpoint_id, m.message_id, m.role, m.content,
                        m.timestamp, position, m.content_hash)
        for position, m in enumerate(fresh)
    ]  # fmt: skip
    return archive.add(renumbered)


def archive_turn(run: RunMemory, messages: Sequence[Any], lineage: Lineage | None) -> int:
    """Archive a finished turn (admitted or skipped: nothing said is lost); a failure is logged
    and never fails the turn. Then the user's digests are looked at in the background."""
    try:
        archive = run_archive(run)
        if archive is None:
            return 0
        added = archive_messages(
            archive, messages, run.user_id, run.thread_id, run.checkpoint_id, lineage
        )
    except Exception:
        logger.exception("archiving the turn of %r in thread %s failed", run.user_id, run.thread_id)
        return 0
    if run.settings.digests:  # feature: digests
        from memory.integration.conversations.digests import seal_digests_soon  # feature: digests

        seal_digests_soon(run, archive, archive_spec(run.settings))  # feature: digests
    return added
