"""Waiting turns: what a user said that no writer has applied yet, ranked like their memories."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from memory.admission.signals import NOT_A_FORGET, TASK
from memory.admission.text import Message
from memory.retrieval.bm25_index import Bm25Index
from memory.retrieval.query import read_query
from memory.store.branch import Lineage, overfetch_k
from memory.store.item import MemoryItem
from memory.text.statement_kinds import topics_of
from memory.text.tokenize import tokenize
from memory.writer.turn import Turn

WAITING_LIMIT = 3  # at most this many waiting turns enter the prompt
# Unmatched turns said this recently fill the places left: what was "just said" in another
# thread is worth a line even when its words differ from the question's ("I moved to Porto" /
# "where do I live now?"), as BM25 alone would miss it until the writer rephrases it.
RECENT_FILL_SECONDS = 600.0
RECENT_FILL = 2
MAX_TEXT_CHARS = 500  # a reminder, not the record: the writer files the whole turn
# "forget where I live" → "where I live"; "忘掉我住哪" → "我住哪".
_FORGET = re.compile(
    r"\b(?:forget|delete|erase|remove)\b(?:\s+(?:about|that))?\s*(.*)|(?:忘掉|忘记|别记着|删掉|删除)(.*)",
    re.I | re.S,
)
_EVERYTHING = frozenset({"everyth", "all", "全部", "所有", "一切"})
_TOPIC_FILLER = frozenset({"forget", "pleas", "what", "said", "told", "just", "now", "memori"})


@dataclass(frozen=True)
class Forget:
    """A forget request: what it names (its words, and the kinds of statement those cover, see
    `memory.text.statement_kinds`; neither: everything said before it in its thread; `everything`:
    all said before it), and where and when it was said."""

    tokens: frozenset[str]
    everything: bool
    thread_id: str
    said_at: str
    topics: frozenset[str] = frozenset()

    def hides(
        self,
        said_at: str,
        thread_id: str,
        tokens: frozenset[str],
        topics: frozenset[str] = frozenset(),
    ) -> bool:
        """Whether it hides a turn said at `said_at` (UTC ISO) in `thread_id` with `tokens`
        and `topics`: a shared word, or a statement of a kind it names ("forget where I live"
        hides "I moved to Porto", which shares no word with it)."""
        if said_at > self.said_at:
            return False
        if self.everything:
            return True
        if not self.tokens and not self.topics:
            return thread_id == self.thread_id
        return bool(self.tokens & tokens or self.topics & topics)


def forget_of(text: str, thread_id: str = "", said_at: str = "") -> Forget | None:
    """The forget request in `text`, or None ("don't forget …" asks for the opposite)."""
    match = _FORGET.search(NOT_A_FORGET.sub(" ", text))
    if match is None:
        return None
    topic = match.group(1) if match.group(1) is not None else match.group(2) or ""
    tokens = frozenset(tokenize(topic)) - _TOPIC_FILLER
    said_at = _stamp(said_at) if said_at else datetime.now(UTC).isoformat()
    everything = bool(tokens & _EVERYTHING)
    return Forget(tokens - _EVERYTHING, everything, thread_id, said_at, topics_of(topic))


def user_text(turn: Turn) -> str:
    """What the user said in the turn (the replies are the assistant's, not news about them)."""
    said = [str(m.get("content", "")) for m in turn.messages if m.get("role") == "user"]
    return "\n".join(part.strip() for part in said if part.strip())


def is_branch_bound(turn: Turn) -> bool:
    """Whether the turn's memories will be its branch's only (so a waiting one is read only
    below its own checkpoint): the scope policy says so, or (the writer deciding by the scope
    rule) the admission scorer sees a task's set-up."""
    if turn.scope_policy != "auto":
        return turn.scope_policy == "branch"
    if turn.admission is not None and "task_setup" in turn.admission.reasons:
        return True
    return TASK(Message.of(user_text(turn)))


def may_read(
    turn: Turn, thread_id: str, lineage: Lineage | None, branch_bound: bool | None = None
) -> bool:
    """Whether a run of `thread_id` with `lineage` may read the waiting `turn`. Never its own
    thread's: a turn of its branch is in the conversation already, one of another branch is not
    its to see. A task's turn (`branch_bound`, else `is_branch_bound`) only below its own
    checkpoint; anything else everywhere."""
    if thread_id and turn.thread_id == thread_id:
        return False
    if lineage is None:
        return True  # no checkpoints, no branches to tell apart (as for memories)
    if is_branch_bound(turn) if branch_bound is None else branch_bound:
        return bool(turn.checkpoint_id) and turn.checkpoint_id in lineage.checkpoint_ids
    return True


@dataclass(frozen=True)
class SaidRecently:
    """A waiting turn handed to the prompt."""

    turn_id: str
    thread_id: str
    text: str
    said_at: str

    def as_dict(self) -> dict[str, str]:
        return {"turn_id": self.turn_id, "thread_id": self.thread_id, "text": self.text,
                "said_at": self.said_at}  # fmt: skip


@dataclass(frozen=True)
class _Entry:
    """What reading needs of one waiting turn, worked out once when it arrives."""

    turn: Turn
    tokens: frozenset[str]
    said_at: str  # UTC ISO: sorts and compares as text
    branch_bound: bool
    forget: Forget | None
    topics: frozenset[str]  # the kinds of statement it makes, for forget requests to match

    @classmethod
    def of(cls, turn: Turn) -> _Entry:
        text = user_text(turn)
        said_at = _stamp(turn.enqueued_at)
        forget = forget_of(text, turn.thread_id, said_at or "0")
        tokens, topics = frozenset(tokenize(text)), topics_of(text)
        return cls(turn, tokens, said_at, is_branch_bound(turn), forget, topics)


class WaitingIndex:
    """BM25 over one user's waiting turns (their user text), updated by what changed since the
    last `update`: a turn that arrives is read once, one that leaves is marked dead."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._version = 0
        self._index = Bm25Index.build("0", {})
        self._entries: dict[str, _Entry] = {}  # oldest first (by when said)
        self._turns: dict[str, Turn] = {}
        self._forgets: dict[str, Forget] = {}  # the waiting forget requests by turn id

    @property
    def turns(self) -> dict[str, Turn]:
        """The waiting turns by id, as of the last `update` (do not change it)."""
        return self._turns

    def update(self, turns: Iterable[Turn]) -> None:
        """Make `turns` the waiting ones; costs one pass over them plus what changed."""
        with self._lock:
            entries = self._entries
            ids: set[str] = set()
            added: list[Turn] = []
            for turn in turns:
                ids.add(turn.turn_id)
                if turn.turn_id not in entries:
                    added.append(turn)
            gone = entries.keys() - ids
            if not added and not gone:
                return
            changed = {i: MemoryItem("", "", deleted=True) for i in gone}
            for turn_id in gone:
                del entries[turn_id]
                del self._turns[turn_id]
                self._forgets.pop(turn_id, None)
            newest = next(reversed(entries.values())).said_at if entries else ""
            new = sorted((_Entry.of(t) for t in added), key=_said_at)
            for entry in new:
                turn_id = entry.turn.turn_id
                entries[turn_id], self._turns[turn_id] = entry, entry.turn
                if entry.forget is not None:
                    self._forgets[turn_id] = entry.forget
                text = user_text(entry.turn)
                changed[turn_id] = MemoryItem(text, "", latest_update_time=entry.said_at)
            if new and new[0].said_at < newest:  # not all newer than what waits: order again
                self._entries = dict(sorted(entries.items(), key=lambda item: item[1].said_at))
            self._version += 1
            self._index = self._index.with_changes(str(self._version), changed)

    def read(
        self,
        query: str,
        thread_id: str,
        lineage: Lineage | None,
        *,
        limit: int = WAITING_LIMIT,
        applied: Callable[[str], bool] | None = None,
        now: datetime | None = None,
    ) -> list[SaidRecently]:
        """The best `limit` waiting turns for `query` that this run may read, best first: BM25
        matches (the most recent for a broad question), then unmatched ones said in the last
        `RECENT_FILL_SECONDS`. A forget request said after a turn, or in `query` itself, hides
        the turns it names; `applied(turn_id)` leaves out a turn a writer applied meanwhile
        (it is read as memories now)."""
        with self._lock:  # updates change the entries in place
            return self._read(query, thread_id, lineage, limit, applied, now)

    def _read(
        self,
        query: str,
        thread_id: str,
        lineage: Lineage | None,
        limit: int,
        applied: Callable[[str], bool] | None,
        now: datetime | None,
    ) -> list[SaidRecently]:
        index, entries, forget_turns = self._index, self._entries, self._forgets
        if not entries or limit <= 0 or not query.strip():
            return []
        newest = reversed(entries.values())
        now = now or datetime.now(UTC)
        asked = forget_of(query, thread_id, now.isoformat())
        forgets = [*forget_turns.values(), *([asked] if asked is not None else [])]

        def wanted(entry: _Entry) -> bool:
            turn = entry.turn
            if entry.forget is not None or not may_read(
                turn, thread_id, lineage, entry.branch_bound
            ):
                return False
            if any(
                f.hides(entry.said_at, turn.thread_id, entry.tokens, entry.topics) for f in forgets
            ):
                return False
            return applied is None or not applied(turn.turn_id)

        reading = read_query(query)
        chosen: list[_Entry] = []
        if reading.broad:
            ranked: Iterable[_Entry] = newest
        else:
            window = min(overfetch_k(limit), index.size)
            ranked = [entries[index.entries[p].id] for p in index.search(reading.tokens, window)]
        for entry in ranked:
            if len(chosen) >= limit:
                break
            if wanted(entry):
                chosen.append(entry)
        if asked is None and len(chosen) < limit:
            chosen += _recent_fill(reversed(entries.values()), chosen, wanted, limit, now)
        return [_said(entry.turn) for entry in chosen]


def _said_at(entry: _Entry) -> str:
    return entry.said_at


def _recent_fill(
    newest: Iterable[_Entry],
    chosen: list[_Entry],
    wanted: Callable[[_Entry], bool],
    limit: int,
    now: datetime,
) -> list[_Entry]:
    cutoff = datetime.fromtimestamp(now.timestamp() - RECENT_FILL_SECONDS, UTC).isoformat()
    room = min(RECENT_FILL, limit - len(chosen))
    taken = {entry.turn.turn_id for entry in chosen}
    fill: list[_Entry] = []
    for entry in newest:
        if len(fill) >= room or entry.said_at < cutoff:
            break
        if entry.turn.turn_id not in taken and wanted(entry):
            fill.append(entry)
    return fill


def _stamp(value: str) -> str:
    """A time in UTC ISO form, so that times compare as text ("" when unreadable)."""
    try:
        stamp = datetime.fromisoformat(value)
    except ValueError:
        return ""
    return (stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)).astimezone(UTC).isoformat()


def _said(turn: Turn) -> SaidRecently:
    text = user_text(turn)
    if len(text) > MAX_TEXT_CHARS:
        text = text[: MAX_TEXT_CHARS - 1] + "…"
    return SaidRecently(turn.turn_id, turn.thread_id, text, turn.enqueued_at)
