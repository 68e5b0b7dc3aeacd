"""Daily digests with the chat model: a day of conversation in a few lines (extractive offline)."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Sequence
from datetime import datetime

from memory.archive import ArchivedMessage, ConversationArchive, DigestSealer
from memory.integration.models.loading import is_offline, load_chat_model
from memory.integration.run_memory import RunMemory
from memory.integration.settings import get_settings
from memory.long_term import LongTermMemory
from memory.prompts.digest import DIGEST_PROMPTS
from memory.text.language import language_of
from memory.usage.counts import UsageMeter
from memory.usage.metering import metered
from memory.writer.local import local_writer

logger = logging.getLogger(__name__)

DIGEST_WORDS = 120
DIGEST_INPUT_CHARS = 12_000  # the day's messages given to the model, the latest kept
DIGEST_EVERY_SECONDS = 300.0  # a user's digests are looked at no more often than this


def transcript(messages: Sequence[ArchivedMessage], limit: int = DIGEST_INPUT_CHARS) -> str:
    lines = [f"{m.role}: {' '.join(m.content.split())}" for m in messages if m.role != "tool"]
    text = "\n".join(lines)
    return text[-limit:]


def sealer_for(model_name: str) -> DigestSealer:
    """A sealer that asks `model_name` for each digest, or extracts one with the offline model."""
    model = load_chat_model(model_name, timeout=get_settings().writer_timeout_seconds,
                            max_retries=0)  # fmt: skip
    if is_offline(model):
        return DigestSealer()

    def summarize(day: str, messages: Sequence[ArchivedMessage]) -> str:
        text = transcript(messages)
        prompt = DIGEST_PROMPTS[language_of(text)].format(
            day=day, messages=text, max_words=DIGEST_WORDS
        )
        return str(model.invoke(prompt).text)

    return DigestSealer(summarize=summarize)


async def seal_digests(
    model_name: str, archive: ConversationArchive, memory: LongTermMemory
) -> int:
    """Seal the user's due digests (in a worker thread), counting the model calls as "summary"
    in the user's ledger; a failure is logged. Returns how many digests were made."""
    meter = UsageMeter()

    def work() -> int:
        with metered(meter, "summary"):
            return len(sealer_for(model_name).seal(archive))

    try:
        made = await asyncio.to_thread(work)
    except Exception:
        logger.exception("sealing the daily digests of %r failed", archive.user_id)
        return 0
    usage = meter.by_purpose()
    if usage:
        run_id = f"digest:{datetime.now().astimezone():%Y-%m-%dT%H:%M:%S}"
        try:
            await asyncio.to_thread(memory.usage.record, archive.user_id, run_id, usage)
        except Exception:
            logger.exception("recording the digests' model calls of %r failed", archive.user_id)
    return made


_last_sealed: dict[str, float] = {}
_sealing_lock = threading.Lock()


def seal_digests_soon(run: RunMemory, archive: ConversationArchive, spec: str) -> None:
    """Seal the user's due daily digests on the background writer's loop, at most every
    DIGEST_EVERY_SECONDS per user and archive (`spec`, as
    memory.integration.conversations.archiving names it; the
    digests' own model calls count as "summary")."""
    key = f"{spec}\n{run.user_id}"  # the archive, as the registry keys it
    now = time.monotonic()
    with _sealing_lock:
        if now - _last_sealed.get(key, -DIGEST_EVERY_SECONDS) < DIGEST_EVERY_SECONDS:
            return
        _last_sealed[key] = now
    local_writer.run(seal_digests(run.context.model, archive, run.memory))
