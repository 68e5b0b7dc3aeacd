"""ConversationArchive: one user's archived messages and digests; search shared by the backends.

Long because search, windows and the branch filter are shared by both backends, which only store.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection, Iterable, Sequence
from dataclasses import replace
from datetime import datetime, tzinfo
from typing import TYPE_CHECKING

from memory.archive.dates import day_bounds, question_period
from memory.archive.query import Terms, Window, query_terms
from memory.archive.ranking import Ranking, bm25_scores, content_terms, reranked
from memory.archive.records import (
    ArchivedMessage,
    Digest,
    ForgottenRecord,
    Hit,
    MessageKey,
    SearchResult,
)
from memory.store.manager import validate_user_id
from memory.text.tokenize import tokenize

if TYPE_CHECKING:
    from memory.store.erasure_report import ErasureReport
    from memory.store.item import MemoryItem
    from memory.text.needles import Needles

DEFAULT_HITS = 3
DEFAULT_AROUND = 2  # messages before and after each hit
OVERFETCH = 40  # candidates read per hit asked for: the branch filter may drop some
# A text said again in a thread ("ok", "thanks") is part of the conversation's flow; a longer
# one repeated (a pasted text, a fork's copy of its question) is archived once per branch.
DEDUPLICATE_CHARS = 20


class ConversationArchive(ABC):
    """One user's conversation archive. Backends implement the storage primitives; `search`
    (what `search_conversations` calls) is the same for all of them. Only this user's rows are
    ever read: the user is fixed when the archive is opened."""

    backend = "abstract"

    def __init__(self, user_id: str) -> None:
        self.user_id = validate_user_id(user_id)
        # The zone its days are cut in (digests, "what happened on the 3rd"): the deployment's
        # (GULFSTREAM_TIMEZONE, set by whoever opens it), None for the server's own.
        self.zone: tzinfo | None = None
        self._forgotten_cache: (
            tuple[object, dict[str, ForgottenRecord], frozenset[MessageKey]] | None
        ) = None

    # ── storage primitives ──────────────────────────────────────────────

    @abstractmethod
    def add(self, messages: Sequence[ArchivedMessage]) -> int:
        """Archive messages (one transaction); a message already archived at its checkpoint is
        skipped. Returns how many were new."""

    @abstractmethod
    def known(self, thread_id: str) -> list[tuple[str, str, str]]:
        """(message id, content hash, checkpoint id) of every message archived in a thread."""

    @abstractmethod
    def match(
        self, terms: Sequence[str], any_term: bool, window: Window, limit: int
    ) -> list[tuple[ArchivedMessage, float]]:
        """Messages with all `terms` (any, with `any_term`) in the window's time and thread,
        best first (the branch filter is applied by the caller)."""

    @abstractmethod
    def neighbours(
        self, message: ArchivedMessage, before: int, after: int
    ) -> list[ArchivedMessage]:
        """Up to `before`/`after` messages of the same thread around `message`, in order."""

    @abstractmethod
    def messages(
        self, thread_id: str | None = None, since: float | None = None, until: float | None = None
    ) -> list[ArchivedMessage]:
        """Archived messages, oldest first (a thread's, or all; in a time window)."""

    @abstractmethod
    def put_digest(self, digest: Digest) -> None:
        """Store a day's digest, replacing an older one of that day."""

    @abstractmethod
    def digests(
        self, since: float | None = None, until: float | None = None, terms: Sequence[str] = ()
    ) -> list[Digest]:
        """Digests of the days in the window (with all `terms` when given), newest first."""

    def frequencies(self, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        """How many messages the index holds, and how many hold each term ((0, {}) when the
        backend cannot say: the candidates' own counts are used)."""
        return 0, {}

    @abstractmethod
    def count(self) -> int:
        """How many messages are archived."""

    @abstractmethod
    def clear(self) -> None:
        """Remove every message and digest of this user (before a rebuild)."""

    @abstractmethod
    def _load_forgotten(self) -> dict[str, ForgottenRecord]:
        """Read every record of what forgetting a memory hid."""

    def forgotten_signature(self) -> object:
        """A cheap value that changes whenever the records change (None: always read them)."""
        return None

    @abstractmethod
    def put_forgotten(self, record: ForgottenRecord) -> None:
        """Record (or replace) what forgetting one memory hid."""

    @abstractmethod
    def drop_forgotten(self, memory_id: str) -> ForgottenRecord | None:
        """Remove the record of one memory and return it (None when there was none)."""

    def forgotten(self) -> dict[str, ForgottenRecord]:
        """What forgetting each memory hid (`memory.store.forgotten`), by memory id; read again
        only when the records changed (every search and every turn asks). Treat it as read-only."""
        signature = self.forgotten_signature()
        cached = self._forgotten_cache
        if signature is not None and cached is not None and cached[0] == signature:
            return cached[1]
        records = self._load_forgotten()
        keys = frozenset(key for record in records.values() for key in record.messages)
        self._forgotten_cache = (signature, records, keys)
        return records

    def hidden_keys(self) -> frozenset[MessageKey]:
        """The messages hidden because a memory they carried was forgotten."""
        self.forgotten()
        assert self._forgotten_cache is not None
        return self._forgotten_cache[2]

    @abstractmethod
    def erase_messages(self, keys: Collection[MessageKey]) -> int:
        """Remove these archived messages for good, text and index (`ArchivedMessage.ref`
        keys); returns how many rows went."""

    @abstractmethod
    def erase_digests(self, days: Collection[str]) -> int:
        """Remove the digests of these days for good; returns how many went."""

    @abstractmethod
    def erase_all(self) -> list[str]:
        """Remove every message and digest of this user for good (files, rows, free space);
        returns what was removed, for a report."""

    @abstractmethod
    def scrub(self) -> bool:
        """Leave no erased text in the storage's free space or log; False when it could not be
        done completely (said in the erase report)."""

    def close(self) -> None:  # noqa: B027 - most backends hold nothing to release
        """Release connections (the archive can be opened again)."""

    # ── what erasure asks (memory.erasure.archive.ErasableArchive) ─────

    def thread_ids(self) -> set[str]:
        """The threads this user's archive holds messages of."""
        return {m.thread_id for m in self.messages()}

    @abstractmethod
    def erase_carriers(
        self,
        items: dict[str, MemoryItem],
        chosen: dict[str, MemoryItem],
        needles: Needles,
        report: ErasureReport,
    ) -> None:
        """Remove the messages and digests that carry the `chosen` memories. Every archive
        binds memory/archive/erasing.py's `erase_carriers` (which builds on this class, so this
        class cannot import it)."""

    @abstractmethod
    def erase_said(
        self,
        thread_id: str,
        message_ids: Collection[str] | None,
        needles: Needles,
        report: ErasureReport,
    ) -> None:
        """Remove a conversation's messages (those of `message_ids`, or all) and seal their
        days again; every archive binds memory/archive/erasing.py's `erase_said`."""

    def erase_everything(self, report: ErasureReport) -> None:
        """Remove every message and digest of this user, counted in `report`."""
        report.count("archive: messages", self.count())
        for removed in self.erase_all():
            report.file(removed, "removed")

    # ── what search_conversations does ─────────────────────────────────

    def new_messages(
        self, candidates: Iterable[ArchivedMessage], window: Window
    ) -> list[ArchivedMessage]:
        """The candidates not yet archived on this branch of their thread: a message counts as
        archived when its id and text are archived at a checkpoint the window sees, and a text
        of DEDUPLICATE_CHARS or more when the same role said it there already (another id)."""
        found: list[ArchivedMessage] = []
        seen: dict[str, set[tuple[str, str]]] = {}
        texts: dict[str, set[str]] = {}
        for message in candidates:
            thread = message.thread_id
            if thread not in seen:
                visible = [
                    (mid, digest)
                    for mid, digest, checkpoint in self.known(thread)
                    if window.sees(thread, checkpoint)
                ]
                seen[thread] = set(visible)
                texts[thread] = {digest for _, digest in visible}
            repeated = len(message.content) >= DEDUPLICATE_CHARS and (
                message.content_hash in texts[thread]
            )
            if message.key not in seen[thread] and not repeated:
                seen[thread].add(message.key)
                texts[thread].add(message.content_hash)
                found.append(message)
        return found

    def search(
        self,
        query: str,
        window: Window | None = None,
        *,
        limit: int = DEFAULT_HITS,
        around: int = DEFAULT_AROUND,
        ranking: Ranking | None = None,
        now: datetime | None = None,
    ) -> SearchResult:
        """The best `limit` matches of `query` the window sees, each with `around` messages
        before and after it; a broad question about a period ("what happened today?") gets the
        period's daily digests. No model is called (unless `ranking` names an embedder).
        `now` is when the question is asked (its "last May"), by default now."""
        window = window or Window()
        ranking = ranking or Ranking()
        terms = query_terms(query)
        hidden = self.hidden_keys()
        if terms.broad:
            return self._broad(query, window, limit, hidden)
        hits: list[Hit] = []
        withheld = 0
        period = question_period(query, now) if ranking.dates else None
        if period is not None and window.since is None and window.until is None:
            slack = ranking.date_slack_days * 86400
            dated = replace(window, since=period[0] - slack, until=period[1] + slack)
            hits, withheld = self._hits(query, terms, dated, limit, around, ranking, hidden)
        if not hits:  # no date, or nothing said then: the whole window
            hits, withheld = self._hits(query, terms, window, limit, around, ranking, hidden)
        digests = self._visible_digests(window, terms.required)[:1]
        notes = (hidden_note(withheld),) if withheld else ()
        return SearchResult(query, (*hits, *(_digest_hit(d) for d in digests)), notes)

    def _hits(
        self,
        query: str,
        terms: Terms,
        window: Window,
        limit: int,
        around: int,
        ranking: Ranking,
        hidden: frozenset[MessageKey],
    ) -> tuple[list[Hit], int]:
        """The hits, and how many matching messages were left out as forgotten."""
        if ranking.weighted_terms:
            words = content_terms(query) or terms.loose
            total, frequencies = self.frequencies(words) if ranking.bm25 else (0, {})
            # The rare words find the candidates (a word in a large share of the archive would
            # bring thousands of matches to rank and adds little); every word scores them.
            rare = [t for t in words if frequencies.get(t, 0) <= ranking.common_matches]
            if total and not rare and words:
                rare = [min(words, key=lambda t: frequencies.get(t, 0))]
            found = rare if total else list(words)
            candidates = self.match(found, True, window, max(ranking.candidates, limit))
            if ranking.bm25:
                candidates = self._rescored(words, candidates, ranking, total, frequencies)
        else:
            candidates = self.match(terms.required, False, window, limit * OVERFETCH)
            if not candidates and terms.loose:
                candidates = self.match(terms.loose, True, window, limit * OVERFETCH)
            if candidates and all(m.ref in hidden for m, _ in candidates) and terms.loose:
                candidates += self.match(terms.loose, True, window, limit * OVERFETCH)
        withheld = len({m.ref for m, _ in candidates if m.ref in hidden})
        candidates = [(m, score) for m, score in candidates if m.ref not in hidden]
        if ranking.context > 0:
            candidates = self._with_context(candidates, window, ranking, hidden)
        if ranking.embedder is not None:
            candidates = reranked(query, candidates, ranking)
        return self._pick(candidates, window, limit, around, hidden), withheld

    def _rescored(
        self,
        words: Sequence[str],
        candidates: list[tuple[ArchivedMessage, float]],
        ranking: Ranking,
        total: int,
        frequencies: dict[str, int],
    ) -> list[tuple[ArchivedMessage, float]]:
        documents = [tokenize(m.content) for m, _ in candidates]
        if not total:
            frequencies = {t: sum(t in set(d) for d in documents) for t in words}
        scores = bm25_scores(words, documents, frequencies, total, ranking)
        pairs = [(m, score) for (m, _), score in zip(candidates, scores, strict=True)]
        return sorted(pairs, key=lambda pair: (-pair[1], -pair[0].timestamp))

    def _with_context(
        self,
        candidates: list[tuple[ArchivedMessage, float]],
        window: Window,
        ranking: Ranking,
        hidden: frozenset[MessageKey],
    ) -> list[tuple[ArchivedMessage, float]]:
        """Each message's score plus `context` times the best score of the messages right
        before and after it; the neighbours of the best candidates join them."""
        own = {_mark(m): (m, score) for m, score in candidates}
        nearby: dict[tuple[str, str, str], float] = {}
        around: dict[tuple[str, str, str], list[tuple[str, str, str]]] = {}
        for message, score in candidates[: ranking.context_of]:
            keys = around.setdefault(_mark(message), [])
            for neighbour in self.neighbours(message, 1, 1):
                if neighbour.ref in hidden or not window.sees(
                    neighbour.thread_id, neighbour.checkpoint_id
                ):
                    continue
                key = _mark(neighbour)
                keys.append(key)
                own.setdefault(key, (neighbour, 0.0))
                nearby[key] = max(nearby.get(key, 0.0), score)
        for mark, keys in around.items():  # a neighbour that matched on its own counts too
            for key in keys:
                nearby[mark] = max(nearby.get(mark, 0.0), own[key][1])
        scored = [
            (message, score + ranking.context * nearby.get(key, 0.0))
            for key, (message, score) in own.items()
        ]
        return sorted(scored, key=lambda pair: (-pair[1], -pair[0].timestamp))

    def _pick(
        self,
        candidates: Sequence[tuple[ArchivedMessage, float]],
        window: Window,
        limit: int,
        around: int,
        hidden: frozenset[MessageKey],
    ) -> list[Hit]:
        hits: list[Hit] = []
        shown: set[tuple[str, str]] = set()  # (thread, text): a copy is shown once
        for message, score in candidates:
            mark = (message.thread_id, message.content_hash)
            if mark in shown or not window.sees(message.thread_id, message.checkpoint_id):
                continue  # a sibling branch's message, or a copy already shown
            context = [
                m
                for m in self.neighbours(message, around * 3, around * 3)
                if window.sees(m.thread_id, m.checkpoint_id)
                and (m.thread_id, m.content_hash) != mark
                and m.ref not in hidden
            ]
            before = [m for m in context if _order(m) < _order(message)][-around:]
            after = [m for m in context if _order(m) > _order(message)][:around]
            shown.update((m.thread_id, m.content_hash) for m in (message, *before, *after))
            hits.append(Hit(message.thread_id, message, (*before, *after), score))
            if len(hits) >= limit:
                break
        return hits

    def _visible_digests(self, window: Window, terms: Sequence[str] = ()) -> list[Digest]:
        """Digests of the window's days; a day on which the current thread has messages this
        branch may not see (a sibling branch's) is left out, since its digest covers them."""
        found = self.digests(window.since, window.until, terms)
        lineage = window.lineage
        if lineage is None or not found:
            return found
        visible = []
        for digest in found:
            start, end = day_bounds(digest.day, self.zone)
            day = self.messages(lineage.thread_id, start, end)
            if all(window.sees(m.thread_id, m.checkpoint_id) for m in day):
                visible.append(digest)
        return visible

    def _broad(
        self, query: str, window: Window, limit: int, hidden: frozenset[MessageKey]
    ) -> SearchResult:
        digests = self._visible_digests(window)
        if digests:
            return SearchResult(query, tuple(_digest_hit(d) for d in digests[: limit * 3]))
        recent = [
            m
            for m in self.messages(window.thread_id, window.since, window.until)
            if window.sees(m.thread_id, m.checkpoint_id)
            and m.role == "user"
            and m.ref not in hidden
        ][-limit * 3 :]
        hits = tuple(Hit(m.thread_id, m) for m in reversed(recent))
        return SearchResult(query, hits, ("no digest covers this period yet: latest messages",))


def hidden_note(count: int) -> str:
    """What a search result says about the matches it left out as forgotten."""
    return f"{count} matching message(s) hidden: they carried a memory the user asked to forget"


def _mark(message: ArchivedMessage) -> tuple[str, str, str]:
    return (message.thread_id, message.checkpoint_id, message.message_id)


def _order(message: ArchivedMessage) -> tuple[float, str, int]:
    return (message.timestamp, message.checkpoint_id, message.position)


def _digest_hit(digest: Digest) -> Hit:
    anchor = ArchivedMessage(
        digest.user_id, "", "", f"digest:{digest.day}", "digest", digest.text,
        digest.last_timestamp,
    )  # fmt: skip
    return Hit("", anchor, (), 0.0, digest)
