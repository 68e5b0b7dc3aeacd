"""Bm25Index: an inverted index of the live memories, updated per store revision, never mutated.

Long because building, updating and scoring share one immutable layout (positions, postings, norms)
that splitting would expose.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property

import numpy as np
import numpy.typing as npt

from memory.retrieval.date_cue import month_day, planned_days
from memory.retrieval.query import is_bare_question, theme_key
from memory.store.item import MemoryItem
from memory.text.episodic import memory_kind
from memory.text.language import has_cjk
from memory.text.preferences import states_preference
from memory.text.tokenize import tokenize

K1 = 1.5
B = 0.75
RECENCY_HALF_LIFE_DAYS = 7.0
# How much a question about the current value lifts the newest answer (`Bm25Index.newness`):
# chosen among 0.3, 0.5 and 1.0 on the tuning splits of the knowledge-update sets
# (bench/recall_kinds.py, bench/recall_updates.py).
NEWNESS_LIFT = 1.0
# An update appends changed items and marks their old positions dead; past this share of dead
# positions the next revision is indexed from scratch.
MAX_DEAD_SHARE = 0.25

Posting = tuple[npt.NDArray[np.int32], npt.NDArray[np.float32]]  # positions, term frequencies
HotnessOf = Callable[[list[int]], list[float]]  # the hotness of these positions, in order


@dataclass(frozen=True)
class IndexedMemory:
    """What retrieval needs of one live item, copied so the index never sees later edits."""

    id: str
    description: str
    theme: str
    latest_update_time: str
    updated_at: float  # epoch seconds; 0 when the time is missing or unreadable
    hit: int
    stale_since: float = 0.0  # epoch seconds consolidation marked it stale; 0: current
    thread_id: str = ""  # the conversation that wrote it (its origin); "" unknown
    created_time: str = ""  # its creation as stored (the day it was said, for an import)

    @classmethod
    def of(cls, memory_id: str, item: MemoryItem) -> IndexedMemory:
        hit = item.hit if isinstance(item.hit, int) else 0
        origin = item.origin if isinstance(item.origin, dict) else {}
        return cls(memory_id, item.description, item.theme, item.latest_update_time,
                   _epoch(item.latest_update_time), hit, item.stale_since,
                   str(origin.get("thread_id") or ""),
                   item.created_time or item.latest_update_time)  # fmt: skip

    @cached_property
    def created_at(self) -> float:
        """Epoch seconds of its creation (0 when unknown): its place in its conversation."""
        return _epoch(self.created_time)

    @cached_property
    def only_asks(self) -> bool:
        """Whether the text is only a short question (`query.is_bare_question`): read once per
        memory version, not on every query that finds it."""
        return is_bare_question(self.description)

    @cached_property
    def states_preference(self) -> bool:
        """Whether the text says what the user likes or avoids (`preferences.states_preference`),
        read once per memory version."""
        return states_preference(self.description)

    @cached_property
    def planned(self) -> frozenset[int]:
        """The days its text names with a date (`date_cue.planned_days`, ordinals): a plan's
        day, read once per memory version."""
        return planned_days(self.description, self.created_time)

    @cached_property
    def episodic(self) -> bool:
        """Whether hotness decays with age (a plan, an event, a dated fact)."""
        return memory_kind(self) == "episodic"

    def as_result(self) -> dict[str, str]:
        """The shape retrieval returns: `{id, description, theme, created_time,
        latest_update_time}` (stored times: when it was first said, when it last changed)."""
        return {"id": self.id, "description": self.description, "theme": self.theme,
                "created_time": self.created_time,
                "latest_update_time": self.latest_update_time}  # fmt: skip


@dataclass
class Bm25Index:
    """Postings per term; BM25 weights are computed at query time for the query's terms only.

    A query's cost grows with the postings of its own terms, not with the size of the store. An
    update costs what changed: the entries list, the id → position map and the postings are
    shared with the index it was made from and only appended to (positions at or beyond an
    index's `count` belong to later indexes: queries cut them off); the small per-position
    arrays are the index's own. A reader holding an older index is never disturbed. Only the
    newest index of a line is updated in place like this; updating an older one rebuilds.
    """

    revision: str
    entries: list[IndexedMemory]  # by position; dead positions included (see `alive`); shared
    positions: dict[str, int]  # live id → position, of the newest index of the line; shared
    postings: dict[str, Posting]  # shared; arrays sorted by position
    lengths: npt.NDArray[np.float64]
    alive: npt.NDArray[np.bool_]  # this index's positions: `count` of them
    updated_at: npt.NDArray[np.float64]
    total_length: float
    total_chars: int  # characters of the live descriptions and themes (hybrid's budget)
    theme_counts: dict[str, int] = field(default_factory=dict)  # theme key → live items
    live: int = 0  # how many live memories
    generation: int = 0
    tip: list[int] = field(default_factory=lambda: [0])  # the line's newest generation; shared
    # The calendar day each position was written (month * 100 + day; 0 unknown), for queries
    # that name a day ("what did I say on May 2nd").
    days: npt.NDArray[np.int16] = field(default_factory=lambda: np.zeros(0, dtype=np.int16))
    # thread id → the positions its memories were indexed at (dead ones included); shared
    conversations: dict[str, list[int]] = field(default_factory=dict)
    created_at: npt.NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    _conversations_sorted: dict[str, npt.NDArray[np.intp]] = field(
        default_factory=dict, repr=False, compare=False
    )

    @classmethod
    def build(
        cls,
        revision: str,
        items: Mapping[str, MemoryItem],
        entries: list[IndexedMemory] | None = None,
    ) -> Bm25Index:
        """Index every live item (or the given `entries`) from scratch."""
        empty = cls(revision, [], {}, {}, np.zeros(0), np.zeros(0, dtype=bool), np.zeros(0),
                    0.0, 0, {})  # fmt: skip
        entries = entries if entries is not None else [
            IndexedMemory.of(i, item) for i, item in items.items()
        ]  # fmt: skip
        return empty._with(revision, entries, [])

    @property
    def count(self) -> int:
        """Positions this index covers, dead ones included."""
        return len(self.alive)

    def updated(self, revision: str, items: Mapping[str, MemoryItem]) -> Bm25Index:
        """The index of `items` at `revision`, re-tokenizing only what was added or changed."""
        if self.tip[0] != self.generation:
            return Bm25Index.build(revision, items)
        added: list[IndexedMemory] = []
        gone: list[int] = []
        refreshed: dict[int, IndexedMemory] = {}
        for memory_id, item in items.items():
            position = self.positions.get(memory_id)
            if position is None:
                added.append(IndexedMemory.of(memory_id, item))
                continue
            old = self.entries[position]
            if old.description != item.description or old.theme != item.theme:
                gone.append(position)
                added.append(IndexedMemory.of(memory_id, item))
            elif (old.hit, old.latest_update_time, old.stale_since) != (
                item.hit, item.latest_update_time, item.stale_since
            ):  # fmt: skip
                refreshed[position] = IndexedMemory.of(memory_id, item)
        if len(items) - len(added) + len(gone) < self.live:  # some ids disappeared
            gone += [p for i, p in self.positions.items() if i not in items]
        dead = self.count - self.live + len(gone)
        if dead > MAX_DEAD_SHARE * (self.count + len(added)):
            return Bm25Index.build(revision, items)
        return self._with(revision, added, gone, refreshed)

    def with_changes(self, revision: str, changed: Mapping[str, MemoryItem]) -> Bm25Index:
        """The index at `revision` from the items written since this index's revision only
        (tombstones included: they leave it), as a manager's `changes_since` gives them: the
        update costs what changed, and the store is not read again."""
        added: list[IndexedMemory] = []
        gone: list[int] = []
        refreshed: dict[int, IndexedMemory] = {}
        for memory_id, item in changed.items():
            position = self.positions.get(memory_id) if self.tip[0] == self.generation else None
            if item.deleted:
                gone += [position] if position is not None else []
            elif position is None:
                added.append(IndexedMemory.of(memory_id, item))
            elif (self.entries[position].description, self.entries[position].theme) != (
                item.description,
                item.theme,
            ):
                gone.append(position)
                added.append(IndexedMemory.of(memory_id, item))
            else:
                refreshed[position] = IndexedMemory.of(memory_id, item)
        dead = self.count - self.live + len(gone)
        if self.tip[0] != self.generation or dead > MAX_DEAD_SHARE * (self.count + len(added)):
            # An older index of the line, or too many dead positions: build afresh from what
            # this index holds and what changed.
            kept = {entry.id: entry for entry in self.live_entries() if entry.id not in changed}
            kept.update({entry.id: entry for entry in [*refreshed.values(), *added]})
            return Bm25Index.build(revision, {}, entries=list(kept.values()))
        return self._with(revision, added, gone, refreshed)

    def _with(
        self,
        revision: str,
        added: list[IndexedMemory],
        gone: list[int],
        refreshed: dict[int, IndexedMemory] | None = None,
    ) -> Bm25Index:
        entries, positions, postings = self.entries, self.positions, self.postings
        conversations = self.conversations
        alive = np.concatenate([self.alive, np.ones(len(added), dtype=bool)])
        updated_at = self.updated_at.copy()
        days = self.days.copy()
        total_length, total_chars = self.total_length, self.total_chars
        theme_counts = dict(self.theme_counts)
        live = self.live - len(gone) + len(added)
        for position in gone:
            entry = entries[position]
            alive[position] = False
            positions.pop(entry.id, None)
            total_length -= self.lengths[position]
            total_chars -= len(entry.description) + len(entry.theme)
            key = theme_key(entry.theme)
            theme_counts[key] -= 1
            if theme_counts[key] <= 0:
                del theme_counts[key]
        for position, entry in (refreshed or {}).items():
            entries[position] = entry  # the same text: older readers see a fresher hit count
            updated_at[position] = entry.updated_at
            days[position] = month_day(entry.latest_update_time)
        new_postings: dict[str, list[tuple[int, int]]] = {}
        new_lengths: list[float] = []
        for entry in added:
            position = len(entries)
            entries.append(entry)
            positions[entry.id] = position
            if entry.thread_id:
                conversations.setdefault(entry.thread_id, []).append(position)
            counts = Counter(tokenize(f"{entry.theme} {entry.description}"))
            for term, count in counts.items():
                new_postings.setdefault(term, []).append((position, count))
            new_lengths.append(float(sum(counts.values())))
            total_chars += len(entry.description) + len(entry.theme)
            key = theme_key(entry.theme)
            theme_counts[key] = theme_counts.get(key, 0) + 1
        for term, pairs in new_postings.items():
            docs = np.fromiter((p for p, _ in pairs), dtype=np.int32, count=len(pairs))
            freqs = np.fromiter((c for _, c in pairs), dtype=np.float32, count=len(pairs))
            if term in postings:
                old_docs, old_freqs = postings[term]
                docs, freqs = np.concatenate([old_docs, docs]), np.concatenate([old_freqs, freqs])
            postings[term] = (docs, freqs)  # one assignment: a reader sees old or new arrays
        self.tip[0] = self.generation + 1
        return Bm25Index(
            revision=revision,
            entries=entries,
            positions=positions,
            postings=postings,
            lengths=np.concatenate([self.lengths, np.asarray(new_lengths, dtype=np.float64)]),
            alive=alive,
            updated_at=np.concatenate([updated_at, [entry.updated_at for entry in added]]),
            total_length=total_length + sum(new_lengths),
            total_chars=total_chars,
            theme_counts=theme_counts,
            live=live,
            generation=self.generation + 1,
            tip=self.tip,
            days=np.concatenate([days, np.fromiter(
                (month_day(entry.latest_update_time) for entry in added), np.int16, len(added)
            )]),
            conversations=conversations,
            created_at=np.concatenate([self.created_at, [entry.created_at for entry in added]]),
        )  # fmt: skip

    @property
    def size(self) -> int:
        """How many live memories the index holds."""
        return self.live

    @cached_property
    def live_positions(self) -> list[int]:
        """This index's live positions, in order."""
        return [int(p) for p in np.flatnonzero(self.alive)]

    def live_entries(self) -> list[IndexedMemory]:
        """The live memories, in position order."""
        return [self.entries[p] for p in self.live_positions]

    def search(
        self,
        tokens: list[str],
        limit: int,
        favour_recent: bool = False,
        *,
        newest_first: bool = False,
        hotness: HotnessOf | None = None,
        min_score: float = 0.0,
    ) -> list[int]:
        """Positions of the best `limit` entries for these tokens, best first. Equal scores go
        to the hotter entry (`hotness(positions)`, asked only about ties, only when there are),
        then to the more recent, then to the earlier position. With `min_score`, entries
        scoring below that fraction of the best are left out (the best never is)."""
        if limit <= 0:
            return []
        candidates, scores = self._score(tokens, favour_recent, newest_first)
        if min_score > 0 and len(scores):
            strong = scores >= min_score * scores.max()
            candidates, scores = candidates[strong], scores[strong]
        # Rounded so that two texts scoring the same are equal whatever the float noise.
        scores = np.round(scores, 9)
        if len(candidates) > limit:
            # The `limit` best and everything tied with the last of them: ties are decided
            # below, not by where argpartition happened to cut.
            cut = -np.partition(-scores, limit - 1)[limit - 1]
            top = np.flatnonzero(scores >= cut)
        else:
            top = np.arange(len(candidates))
        hot: dict[int, float] = {}
        if hotness is not None and len(np.unique(scores[top])) < len(top):
            values, counts = np.unique(scores[top], return_counts=True)
            tied = [int(i) for i in top if counts[np.searchsorted(values, scores[i])] > 1]
            hot = dict(zip(tied, hotness([int(candidates[i]) for i in tied]), strict=True))
        ranked = sorted(
            top.tolist(),
            key=lambda i: (
                -scores[i],
                -hot.get(i, 0.0),
                -self.updated_at[candidates[i]],
                candidates[i],
            ),
        )
        return [int(candidates[i]) for i in ranked[:limit]]

    def scored(
        self, tokens: list[str], favour_recent: bool = False, newest_first: bool = False
    ) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float64]]:
        """Every live match: positions and their BM25 scores (unordered), for a fusion that
        weighs scores rather than ranks."""
        return self._score(tokens, favour_recent, newest_first)

    def written_on(self, days: tuple[int, ...]) -> npt.NDArray[np.intp]:
        """Live positions written on one of `days` (month * 100 + day), any year."""
        if not days:
            return np.zeros(0, dtype=np.intp)
        count = self.count
        return np.flatnonzero(np.isin(self.days[:count], days) & self.alive[:count])

    def planned_on(self, days: tuple[int, ...]) -> list[int]:
        """Live positions whose text names one of `days` (ordinals), the nearest day first,
        then the newest."""
        if not days:
            return []
        wanted = set(days)
        found = [
            (min(entry.planned & wanted), -entry.updated_at, position)
            for position, entry in enumerate(self.entries[: self.count])
            if self.alive[position] and entry.planned & wanted
        ]
        return [position for *_, position in sorted(found)]

    def planned_between(self, first: int, last: int) -> list[tuple[int, int]]:
        """(day, position) for each live memory naming a day from `first` to `last` (ordinals,
        both included), soonest first; a memory naming several such days counts at the first."""
        found = []
        for position, entry in enumerate(self.entries[: self.count]):
            if not self.alive[position] or not entry.planned:
                continue
            days = [day for day in entry.planned if first <= day <= last]
            if days:
                found.append((min(days), position))
        return sorted(found, key=lambda pair: (pair[0], -self.updated_at[pair[1]]))

    def next_in_conversation(self, position: int) -> int | None:
        """The live memory created next in the conversation (thread) that created the one at
        `position`; None when that one has no thread or is its conversation's newest."""
        thread = self.entries[position].thread_id
        if not thread:
            return None
        members = self._conversation(thread)
        at = np.flatnonzero(members == position)
        return int(members[at[0] + 1]) if len(at) and at[0] + 1 < len(members) else None

    def _conversation(self, thread: str) -> npt.NDArray[np.intp]:
        """The thread's live positions by creation time, once per index (a user who keeps one
        thread for everything has all their memories in it)."""
        members = self._conversations_sorted.get(thread)
        if members is None:
            listed = np.asarray(self.conversations.get(thread, ()), dtype=np.intp)
            listed = listed[listed < self.count]
            listed = listed[self.alive[listed]]
            members = listed[np.lexsort((listed, self.created_at[listed]))]
            self._conversations_sorted[thread] = members
        return members

    def coverage(self, tokens: list[str], position: int) -> float:
        """The IDF-weighted share of the query's distinct terms that the memory at `position`
        holds (1.0: every term; a term no memory has counts at the highest IDF): how much of
        the query BM25's best match actually answers."""
        count = self.size
        if count == 0:
            return 0.0
        total = held = 0.0
        for term in dict.fromkeys(tokens):
            posting = self.postings.get(term)
            docs = posting[0] if posting is not None else None
            frequency = 0 if docs is None else len(docs)
            idf = math.log((count - frequency + 0.5) / (frequency + 0.5) + 1.0)
            total += idf
            if docs is not None:
                at = int(np.searchsorted(docs, position))
                if at < len(docs) and docs[at] == position:
                    held += idf
        return held / total if total > 0 else 0.0

    def shares_word(self, tokens: list[str], position: int) -> bool:
        """Whether the memory at `position` holds a word of the query: any of its terms but a
        single Chinese character (a character alone is not a word: 多 of "我多大了" is in 很多,
        大 in 更大). An English term is always a word."""
        for term in dict.fromkeys(tokens):
            if len(term) == 1 and has_cjk(term):
                continue
            posting = self.postings.get(term)
            if posting is not None:
                docs = posting[0]
                at = int(np.searchsorted(docs, position))
                if at < len(docs) and docs[at] == position:
                    return True
        return False

    def scores(self, tokens: list[str]) -> dict[str, float]:
        """BM25 score of every matching live memory, by id (for tests and debugging)."""
        candidates, scores = self._score(tokens, favour_recent=False)
        return {self.entries[c].id: float(s) for c, s in zip(candidates, scores, strict=True)}

    def _score(
        self, tokens: list[str], favour_recent: bool, newest_first: bool = False
    ) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float64]]:
        count = self.size
        nothing = (np.zeros(0, dtype=np.int32), np.zeros(0))
        if count == 0:
            return nothing
        average_length = max(self.total_length / count, 1e-9)
        doc_parts, weight_parts = [], []
        for term in dict.fromkeys(tokens):
            posting = self.postings.get(term)
            if posting is None:
                continue
            docs, freqs = posting
            if len(docs) and docs[-1] >= self.count:  # positions of later indexes: not ours
                cut = int(np.searchsorted(docs, self.count))
                docs, freqs = docs[:cut], freqs[:cut]
            live = self.alive[docs]
            if not live.all():
                docs, freqs = docs[live], freqs[live]
            frequency = len(docs)
            if frequency == 0:
                continue
            # Lucene's idf: never negative, so a very common term cannot push a document down.
            idf = math.log((count - frequency + 0.5) / (frequency + 0.5) + 1.0)
            norm = K1 * (1 - B + B * self.lengths[docs] / average_length)
            doc_parts.append(docs)
            weight_parts.append(idf * freqs * (K1 + 1) / (freqs + norm))
        if not doc_parts:
            return nothing
        candidates, inverse = np.unique(np.concatenate(doc_parts), return_inverse=True)
        scores = np.bincount(inverse, weights=np.concatenate(weight_parts)).astype(np.float64)
        if newest_first:
            scores = scores * self.newness(candidates)
        if favour_recent:
            # A time cue ("上周", "lately") lifts recent items by up to 30% of the best BM25 score.
            age_days = np.maximum(time.time() - self.updated_at[candidates], 0.0) / 86400.0
            scores = scores + 0.3 * scores.max() * np.power(0.5, age_days / RECENCY_HALF_LIFE_DAYS)
        return candidates, scores

    def newness(self, positions: Sequence[int] | npt.NDArray[np.int32]) -> npt.NDArray[np.float64]:
        """For a question about the current value ("where do I live now?"): a factor of 1 to
        1 + `NEWNESS_LIFT` for each of `positions`, by its age next to the newest of them
        rather than to the clock: in an imported history every memory is months old, and "now"
        still means the later of two homes. Memories of one age get the same factor, so keep
        their order."""
        at = self.updated_at[np.asarray(positions, dtype=np.int64)]
        newest = min(float(at.max()), time.time()) if len(at) else 0.0
        age_days = np.maximum(newest - at, 0.0) / 86400.0
        return 1.0 + NEWNESS_LIFT * np.power(0.5, age_days / RECENCY_HALF_LIFE_DAYS)

    # Orders for broad queries and hybrid's extras: computed on first use, once per index.

    @cached_property
    def broad_order(self) -> list[int]:
        """Recent *and* often used first: recency rank and hit count, each scaled to 0..1, added."""
        live = sorted(self.live_positions, key=lambda p: self.updated_at[p])
        if not live:
            return []
        recency = {p: rank / max(len(live) - 1, 1) for rank, p in enumerate(live)}
        max_hit = max(max(self.entries[p].hit, 0) for p in live)
        scale = math.log1p(max_hit) if max_hit > 0 else 1.0
        score = {p: recency[p] + math.log1p(max(self.entries[p].hit, 0)) / scale for p in live}
        return sorted(live, key=lambda p: (-score[p], -self.updated_at[p]))

    @cached_property
    def recent_order(self) -> list[int]:
        return sorted(self.live_positions, key=lambda p: -self.updated_at[p])

    @cached_property
    def hit_order(self) -> list[int]:
        entries = self.entries
        return sorted(self.live_positions, key=lambda p: (-entries[p].hit, -self.updated_at[p]))

    @cached_property
    def theme_keys(self) -> frozenset[str]:
        """The loose keys of the live themes (to recognise a bare theme name as a query)."""
        return frozenset(self.theme_counts)

    @cached_property
    def themes(self) -> dict[str, list[int]]:
        """Theme key → live positions of that theme in broad order."""
        grouped: dict[str, list[int]] = {}
        for position in self.broad_order:
            grouped.setdefault(theme_key(self.entries[position].theme), []).append(position)
        return grouped


def _epoch(value: str) -> float:
    try:
        return datetime.fromisoformat(value).timestamp() if value else 0.0
    except (TypeError, ValueError):
        return 0.0
