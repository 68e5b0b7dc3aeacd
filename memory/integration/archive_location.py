"""Where the deployment archives a user's conversations (`GULFSTREAM_CONVERSATION_ARCHIVE`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from memory.integration.settings import Settings, get_settings
from memory.integration.time_of_run import deployment_timezone, zone_of
from memory.store.factory import backend_folder

# memory.archive is imported by the functions that run while the archive is on: a deployment
# that turned it off never loads it.
if TYPE_CHECKING:
    from memory.archive import ConversationArchive

ARCHIVE_FOLDER = "conversations"


def archive_spec(settings: Settings | None = None) -> str:
    """The deployment's archive (`GULFSTREAM_CONVERSATION_ARCHIVE`), `auto` resolved: beside
    the memory store (its folder, or its PostgreSQL: `Settings.shared_database`), else a folder in
    `GULFSTREAM_DATA_DIR`."""
    settings = settings or get_settings()
    spec = settings.conversation_archive.strip()
    if spec.lower() != "auto":
        return spec
    if settings.shared_database:
        return f"postgres:{settings.shared_database}"
    folder = backend_folder(settings.memory_backend) or Path(settings.data_dir)
    return f"sqlite:{folder / ARCHIVE_FOLDER}"


def existing_archive(user_id: str, settings: Settings | None = None) -> ConversationArchive | None:
    """The user's archive when the deployment keeps one and it holds anything (what erase
    opens: erasing never creates an archive)."""
    settings = settings or get_settings()
    if not settings.archive_on:
        return None
    from memory.archive import archive_exists

    if not archive_exists(archive_spec(settings), user_id):
        return None
    return deployment_archive(user_id, settings)


def deployment_archive(
    user_id: str, settings: Settings | None = None
) -> ConversationArchive | None:
    """The user's archive as the deployment keeps it (None when `archives` says it is off), its
    days cut in the deployment's zone (GULFSTREAM_TIMEZONE, else the server's): one zone for
    every door, or a digest and the erase that reseals it would disagree on a message's day."""
    settings = settings or get_settings()
    from memory.archive import archives

    archive = archives.open(archive_spec(settings), user_id)
    if archive is not None:
        archive.zone = zone_of(deployment_timezone())
    return archive
