"""A user's past conversations found by text: `/search` in `make chat`, `make archive search`,
the editor's conversation page and MCP's search_conversations."""

from __future__ import annotations

from typing import Any

from memory.archive import SearchResult, Window, archive_exists, parse_day, render
from memory.archive.reconcile import reconcile
from memory.archive.render import local_time
from memory.integration.archive_location import archive_spec, deployment_archive
from memory.integration.settings import get_settings
from memory.integration.time_of_run import deployment_timezone, run_moment
from memory.long_term import LongTermMemory
from memory.store.branch import Lineage
from memory.store.manager import BaseMemoryManager

SEARCH_BUDGET_CHARS = 4_000  # what `/search` in `make chat` prints at most
HITS = 10  # what a page of the editor shows
ARCHIVE_OFF = "the conversation archive is off (GULFSTREAM_CONVERSATION_ARCHIVE)"


def find_in_archive(manager: BaseMemoryManager, text: str, lineage: Lineage | None) -> str:
    """What `search_conversations` finds for `text`: the user's other threads and this
    branch of this one, each hit with the messages around it (what carries a forgotten
    memory left out)."""
    if not text.strip():
        return "  usage: /search <text>"
    archive = deployment_archive(manager.user_id)
    if archive is None:
        return "  the conversation archive is off (GULFSTREAM_CONVERSATION_ARCHIVE)"
    reconcile(manager, archive)
    return render(archive.search(text, Window(lineage=lineage)), SEARCH_BUDGET_CHARS)


def search_archive(
    user_id: str,
    query: str,
    *,
    since: str = "",
    until: str = "",
    thread: str = "",
    memory: LongTermMemory | None = None,
    limit: int = HITS,
) -> dict[str, Any]:
    """`{query, hits, notes}` as JSON from `user_id`'s archive, every thread (or `thread`),
    between the days `since` and `until` (YYYY-MM-DD or ISO date-times, both included; a
    ValueError names the accepted forms). With the user's `memory`, what carries a memory
    they forgot is left out, as for the agent. A user never archived gets no hits, and no
    archive is created to find out."""
    now = run_moment("", deployment_timezone())  # the deployment's days: a caller has no zone
    window = Window(
        parse_day(since, tz=now.tzinfo),
        parse_day(until, end=True, tz=now.tzinfo),
        thread.strip() or None,
    )
    if not get_settings().archive_on:  # said, not answered as if nothing was ever said
        return {"query": query, "hits": [], "notes": [ARCHIVE_OFF]}
    if not archive_exists(archive_spec(), user_id):
        return {"query": query, "hits": [], "notes": []}
    archive = deployment_archive(user_id)
    if archive is None:
        return {"query": query, "hits": [], "notes": [ARCHIVE_OFF]}
    if memory is not None:
        reconcile(memory.manager, archive)
    return _as_json(archive.search(query, window, limit=limit, now=now))


def _as_json(result: SearchResult) -> dict[str, Any]:
    hits: list[dict[str, Any]] = []
    for hit in result.hits:
        if hit.digest is not None:
            hits.append({"digest": {"day": hit.digest.day, "text": hit.digest.text,
                                    "messages": hit.digest.message_count}})  # fmt: skip
            continue
        ordered = sorted((*hit.around, hit.anchor),
                         key=lambda m: (m.timestamp, m.checkpoint_id, m.position))  # fmt: skip
        hits.append({
            "thread_id": hit.thread_id,
            "messages": [{"role": m.role, "content": m.content, "time": local_time(m.timestamp),
                          "match": m is hit.anchor} for m in ordered],
        })  # fmt: skip
    return {"query": result.query, "hits": hits, "notes": list(result.notes)}
