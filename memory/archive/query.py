"""Archive queries: the terms a query must match, as the bilingual tokenizer splits text."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from memory.store.branch import Lineage
from memory.text.language import CJK_CLASS
from memory.text.tokenize import ENGLISH_STOP_WORDS, normalize, stem, tokenize

_RUN = re.compile(rf"[{CJK_CLASS}]+|[a-z0-9]+")
_CJK = re.compile(rf"[{CJK_CLASS}]+")
# Words of a broad question about a period ("what happened today?", "这周我们聊了什么"): with
# nothing else in the query, the period's daily digests answer it.
BROAD_WORDS = frozenset(
    """happen happened talk talked discuss discussed say said chat chatted today yesterday week
    month recently lately anything everything summary summarize recap about""".split()  # noqa: SIM905
)
BROAD_CJK = re.compile(
    r"今天|昨天|前天|这周|本周|上周|这个月|最近|聊了|说了|谈了|讨论|发生|什么|哪些|总结|回顾|我们|一下"
)


def index_text(text: str) -> str:
    """The text as the full-text index stores it: its tokens, space separated (English stemmed,
    Chinese as characters and bigrams), so a two-character Chinese word is one indexed term."""
    return " ".join(tokenize(text))


@dataclass(frozen=True)
class Terms:
    """`required`: every one must match (English words, Chinese bigrams); `loose`: any may
    match, the fallback when nothing has them all. Both empty: a broad question."""

    required: tuple[str, ...]
    loose: tuple[str, ...]

    @property
    def broad(self) -> bool:
        return not self.required


def query_terms(text: str) -> Terms:
    """The terms of a query. Words of a broad question about a period count for nothing."""
    required: list[str] = []
    for run in _RUN.findall(normalize(BROAD_CJK.sub(" ", text))):
        if _CJK.fullmatch(run):
            pairs = [a + b for a, b in itertools.pairwise(run)]
            required.extend(pairs or [run])
        elif run not in ENGLISH_STOP_WORDS and run not in BROAD_WORDS:
            required.append(run if run.isdigit() else stem(run))
    loose = [t for t in tokenize(text) if len(t) > 1 or not t.isascii()]
    return Terms(tuple(dict.fromkeys(required)), tuple(dict.fromkeys(loose)))


@dataclass(frozen=True)
class Window:
    """Which messages a search may see: a time window, one thread, and the current branch (in
    the current thread only the ancestors of the current checkpoint)."""

    since: float | None = None
    until: float | None = None
    thread_id: str | None = None
    lineage: Lineage | None = None

    def sees(self, thread_id: str, checkpoint_id: str) -> bool:
        """Whether a message of `thread_id` archived at `checkpoint_id` is visible."""
        if self.thread_id is not None and thread_id != self.thread_id:
            return False
        lineage = self.lineage
        if lineage is None or thread_id != lineage.thread_id or not checkpoint_id:
            return True
        return checkpoint_id in lineage.checkpoint_ids

    def sql(
        self, placeholder: str, prefix: str = "", column: str = "ts"
    ) -> tuple[str, list[object]]:
        """The time and thread bounds as `AND ...` clauses for either archive's SQL (SQLite
        `?`, PostgreSQL `%s`) on the table aliased `prefix`, with their parameters. The
        branch (`lineage`) is checked per row with `sees`."""
        clauses: list[str] = []
        params: list[object] = []
        if self.since is not None:
            clauses.append(f"AND {prefix}{column} >= {placeholder}")
            params.append(self.since)
        if self.until is not None:
            clauses.append(f"AND {prefix}{column} < {placeholder}")
            params.append(self.until)
        if self.thread_id is not None:
            clauses.append(f"AND {prefix}thread_id = {placeholder}")
            params.append(self.thread_id)
        return " ".join(clauses), params


def parse_day(value: str | None, *, end: bool = False, tz: object = None) -> float | None:
    """A `since`/`until` bound from 'YYYY-MM-DD' or an ISO date-time ('' or None: no bound).
    A bare date is the start of that local day (`end`: of the next day, so that an `until`
    day is included). ValueError with the accepted forms otherwise."""
    if value is None or not str(value).strip():
        return None
    text = str(value).strip()
    local = datetime.now().astimezone().tzinfo if tz is None else tz
    try:
        if len(text) == 10:
            day = date.fromisoformat(text) + timedelta(days=1 if end else 0)
            return datetime.combine(day, time(), tzinfo=local).timestamp()  # type: ignore[arg-type]
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(
            f"{text!r} is not a date: use YYYY-MM-DD (a local day) or an ISO date-time"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=local)  # type: ignore[arg-type]
    return moment.astimezone(UTC).timestamp()
