"""The conversation archive's chat tool, search_conversations (bound while the archive is on)."""

from __future__ import annotations

import logging

from langgraph.runtime import get_runtime

from memory.integration.context import MemoryContext
from memory.integration.conversations.archiving import forget_in_archive, run_archive
from memory.integration.run_memory import open_run_memory

logger = logging.getLogger(__name__)


def search_conversations(query: str, since: str = "", until: str = "", thread: str = "") -> str:
    """Search what was said in this user's past conversations (and earlier in this one).

    query: the question, or a few words to look for (any language); a date in it ("last May",
    "on May 2nd", "去年五月") limits the search to that period. Leave it empty, with
    since/until, for a broad question about a period ("what happened today?", "what did we
    talk about this week?"): the daily digests of that period answer it.
    since / until: optional dates, YYYY-MM-DD (local days, both included) or ISO date-times;
    work out "last Tuesday" or "上周二" from the current time first.
    thread: optional; "current" for this conversation only, or a thread id from an earlier
    result.

    Returns the best few matches with the messages around each, their thread and time.
    """
    from memory.archive import Window, parse_day, render  # the archive is on: imported now

    run = open_run_memory(get_runtime(MemoryContext))
    try:
        archive = run_archive(run)
    except Exception as exc:  # the archive's database is unreachable: say so, keep the turn
        logger.exception("the conversation archive of %r cannot be opened", run.user_id)
        return f"Error: the conversation archive cannot be read ({type(exc).__name__})."
    if archive is None:  # not bound when the archive is off (chat_tools); a stale call
        return "The conversation archive is turned off on this deployment."
    forget_in_archive(run, archive)
    now = run.context.moment()  # "yesterday", "May 2nd" and bare days are the user's
    try:
        window = Window(
            parse_day(since, tz=now.tzinfo), parse_day(until, end=True, tz=now.tzinfo),
            run.thread_id if thread.strip() == "current" else thread.strip() or None,
            run.lineage(),
        )  # fmt: skip
    except ValueError as exc:
        return f"Error: {exc}"
    try:
        # No model call: the archive's full-text index, this branch of this thread only.
        return render(archive.search(query, window, now=now))
    except Exception as exc:
        logger.exception("searching the conversation archive of %r failed", run.user_id)
        return f"Error: the conversation archive cannot be read ({type(exc).__name__})."
