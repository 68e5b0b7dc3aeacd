"""Erasure in the conversation archive: the archived messages and digests that carry an erased
memory, a conversation taken off the record, or the whole archive of an erased user
(memory/erasure/archive.py's protocol)."""

from __future__ import annotations

import time
from collections.abc import Collection
from dataclasses import replace
from typing import TYPE_CHECKING

from memory.archive.dates import day_bounds, local_day
from memory.archive.reconcile import carrying_messages, reseal
from memory.archive.records import MessageKey
from memory.store.erasure_report import ErasureReport
from memory.store.forgotten import fingerprint, lineage_of
from memory.store.item import MemoryItem
from memory.text.fingerprint import Fingerprint
from memory.text.needles import Needles

if TYPE_CHECKING:
    from memory.archive.base import ConversationArchive


def erase_carriers(
    archive: ConversationArchive,
    items: dict[str, MemoryItem],
    chosen: dict[str, MemoryItem],
    needles: Needles,
    report: ErasureReport,
) -> None:
    """The archived messages carrying the memory (`memory.store.forgotten`: its turns, and any
    message its fingerprint matches, up to now), every copy of them at other checkpoints,
    the records of what forgetting it hid, and the digests of their days sealed again."""
    said = archive.messages()
    prints = {i: fingerprint(lineage_of(item, items)) for i, item in chosen.items()}
    keys: set[MessageKey] = set()
    for item in chosen.values():
        chain = lineage_of(item, items)
        keys |= set(carrying_messages(archive, item, ancestors=chain[1:], until=time.time()))
    carried_ids = {key[2] for key in keys if key[2]}
    candidates = [m for m in said if m.ref in keys or m.message_id in carried_ids]
    # Irreversible, so only what names it: a batched writer run records its last turn, whose
    # messages may be another fact's (forgetting narrows those too, from the entry's
    # batch_size; entries written before it was recorded do not say).
    messages = [m for m in candidates if _names(m.content, prints, needles)]
    if len(messages) < len(candidates):
        report.notes.append(
            f"{len(candidates) - len(messages)} archived message(s) of the turns that wrote it "
            "do not name it and were kept"
        )
    needles.add_texts(m.content for m in messages)
    report.count("archive: messages", archive.erase_messages([m.ref for m in messages]))
    _erase_forgotten_records(archive, prints, needles, {m.ref for m in messages}, report)
    digests = archive.digests()  # read once: nothing changes them until erase_digests below
    days = {local_day(m.timestamp, archive.zone) for m in messages}
    days |= {d.day for d in digests if needles.in_text(d.text)}
    days |= {d.day for d in digests for p in prints.values() if p.carries(d.text)}
    sealed = sorted({d.day for d in digests} & days)
    emptied = [day for day in sealed if not _said_on(archive, day)]
    report.count("archive: digests", archive.erase_digests(emptied))
    resealed = [day for day in sealed if day not in emptied]
    reseal(archive, resealed, prints)  # from what is left, offline; leaving out what carries it
    report.count("archive: digests sealed again", len(resealed))
    if not archive.scrub():
        report.notes.append("the archive's log could not be emptied at once (another reader)")


def _names(text: str, prints: dict[str, Fingerprint], needles: Needles) -> bool:
    return needles.in_text(text) or any(not p.empty and p.carries(text) for p in prints.values())


def _said_on(archive: ConversationArchive, day: str) -> bool:
    start, end = day_bounds(day, archive.zone)
    return any(m.role in ("user", "assistant") for m in archive.messages(since=start, until=end))


def _erase_forgotten_records(
    archive: ConversationArchive,
    prints: dict[str, Fingerprint],
    needles: Needles,
    erased: set[MessageKey],
    report: ErasureReport,
) -> None:
    """Forgetting kept the digests of the memory's days as they were, for a restore: the
    memory's record goes, and other records lose the erased messages and such digests."""
    for memory_id, record in archive.forgotten().items():
        if memory_id in needles.ids:
            archive.drop_forgotten(memory_id)
            report.count("archive: forgotten records", 1)
            continue
        digests = tuple(d for d in record.digests if not _names(d.text, prints, needles))
        messages = tuple(key for key in record.messages if key not in erased)
        if digests != record.digests or messages != record.messages:
            archive.put_forgotten(replace(record, messages=messages, digests=digests))
            report.count("archive: forgotten records rewritten", 1)


def erase_said(
    archive: ConversationArchive,
    thread_id: str,
    message_ids: Collection[str] | None,
    needles: Needles,
    report: ErasureReport,
) -> None:
    """Remove a conversation's archived messages for good (the thread's, or only those of
    `message_ids`), add what the user said in them to `needles`, remove every other archived
    message quoting that (a reply elsewhere that repeated it), and seal their days' digests
    again without them (a day with nothing else said loses its digest)."""
    everything = archive.messages()
    messages = [
        m
        for m in everything
        if m.thread_id == thread_id and (message_ids is None or m.message_id in message_ids)
    ]
    needles.add_texts(m.content for m in messages if m.role == "user")
    taken = {m.ref for m in messages}
    messages += [m for m in everything if m.ref not in taken and needles.in_text(m.content)]
    report.count("archive: messages", archive.erase_messages([m.ref for m in messages]))
    digests = archive.digests()
    days = {local_day(m.timestamp, archive.zone) for m in messages}
    days |= {d.day for d in digests if needles.in_text(d.text)}
    sealed = sorted({d.day for d in digests} & days)
    emptied = [day for day in sealed if not _said_on(archive, day)]
    report.count("archive: digests", archive.erase_digests(emptied))
    resealed = [day for day in sealed if day not in emptied]
    reseal(archive, resealed)
    report.count("archive: digests sealed again", len(resealed))
    if not archive.scrub():
        report.notes.append("the archive's log could not be emptied at once (another reader)")
