"""`/search` in `make chat` and `make archive search`: a user's past conversations found by text."""

from __future__ import annotations

from memory.archive import Window, archives, render
from memory.archive.reconcile import reconcile
from memory.integration.conversations.archiving import archive_spec
from memory.store.branch import Lineage
from memory.store.manager import BaseMemoryManager

SEARCH_BUDGET_CHARS = 4_000  # what `/search` in `make chat` prints at most


def find_in_archive(manager: BaseMemoryManager, text: str, lineage: Lineage | None) -> str:
    """What `search_conversations` finds for `text`: the user's other threads and this
    branch of this one, each hit with the messages around it (what carries a forgotten
    memory left out)."""
    if not text.strip():
        return "  usage: /search <text>"
    archive = archives.open(archive_spec(), manager.user_id)
    if archive is None:
        return "  the conversation archive is off (GULFSTREAM_CONVERSATION_ARCHIVE)"
    reconcile(manager, archive)
    return render(archive.search(text, Window(lineage=lineage)), SEARCH_BUDGET_CHARS)
