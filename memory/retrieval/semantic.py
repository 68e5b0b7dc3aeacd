"""SemanticChannel: one user's memory vectors, in step with the BM25 index, ranked by cosine.

Long because keeping vectors in step with the store (sync, bulk loads, status) and ranking by them
share one cache.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from memory.retrieval.bm25_index import Bm25Index, IndexedMemory
from memory.retrieval.embedder import TextEmbeddings, embeddings_name
from memory.retrieval.vector_store import StoredVector, VectorStore

logger = logging.getLogger(__name__)

# A memory closer to the query than this (cosine, unit vectors) counts as related. Measured with
# bench/semantic_recall.py on the labelled sets: chit-chat ("ok", "thanks", "🎹", "哈哈") stays
# under 0.08 with the offline model, while 90% of relevant memories are above 0.15.
MIN_SIMILARITY = 0.15
# A search box shows memories by meaning alone only when no word matched, for a query that is
# not a broad one ("everything", "lately"), and only when they are this close: "what music do
# I like?" is 0.22 from "plays jazz piano" with the offline model, chit-chat stays under 0.08.
SEARCH_MIN_SIMILARITY = 0.2
SEARCH_RELATED_LIMIT = 5
# Up to this many missing vectors are made inside the query (a new memory costs about 1 ms with
# the offline model); more (a first start on a large store, a new model) go to a background
# thread while queries use the vectors already made.
INLINE_LIMIT = 64
BATCH = 64
# An import or a restore embeds before it returns when at most this many vectors are missing
# (about 1 ms each in batches with the offline model: a few seconds); more are left to the
# background thread, and the editor's status says retrieval is BM25 only for them meanwhile.
EMBED_BEFORE_RETURN = 3000
MAX_DEAD_SHARE = 0.25


def embedded_text(entry: IndexedMemory) -> str:
    """What is embedded: the theme and the description (the theme helped on the labelled set)."""
    return f"{entry.theme}: {entry.description}"


@dataclass(frozen=True)
class ChannelStatus:
    """How far the vectors are: `embedded` of `live` memories have one; `pending` are being made."""

    model: str
    live: int
    embedded: int
    pending: int
    error: str = ""


class SemanticChannel:
    """Vectors of one user's live memories under one embedding model.

    Vectors are kept per memory version (content hash) in `store` and loaded once; a changed
    memory gets a new vector, a tombstoned or removed one loses its vector. Rows live in one
    growing float32 matrix, so a query is one matrix-vector product over the store.
    """

    def __init__(self, embeddings: TextEmbeddings, store: VectorStore) -> None:
        self.embeddings = embeddings
        self.model = embeddings_name(embeddings)
        self.store = store
        self.embedded_count = 0  # vectors made by this channel (tests and benchmarks read it)
        self.on_progress: Callable[[ChannelStatus], None] | None = None
        self._lock = threading.RLock()
        self._matrix: npt.NDArray[np.float32] = np.zeros((0, 0), dtype=np.float32)
        self._size = 0  # rows in use
        self._alive: npt.NDArray[np.bool_] = np.zeros(0, dtype=bool)
        self._row_ids: list[str] = []
        self._rows: dict[str, tuple[int, str]] = {}  # memory id → (row, content hash)
        # The index entry each row was checked against: the index keeps an unchanged memory's
        # entry object from revision to revision, so a sync after one write hashes one text.
        self._checked: dict[str, IndexedMemory] = {}
        self._kept: dict[str, StoredVector] | None = None  # what the store held, until used
        self._revision: str | None = None
        self._pending: dict[str, str] = {}  # memory id → text waiting to be embedded
        self._expected: dict[str, str] = {}  # memory id → hash of the version to embed
        self._worker: threading.Thread | None = None
        self._in_flight = 0  # taken from `_pending` by the worker, being embedded
        self._error = ""

    # ── ranking ─────────────────────────────────────────────────────────

    def similar(
        self, index: Bm25Index, query: str, depth: int, min_similarity: float = MIN_SIMILARITY
    ) -> list[int]:
        """Positions in `index` of the `depth` live memories closest to `query`, best first, at
        least `min_similarity` close (a query about nothing stored finds nothing). Memories
        whose vector is not made yet are left out (BM25 still sees them)."""
        return [position for position, _ in self.similar_scores(index, query, depth,
                                                                 min_similarity)]  # fmt: skip

    def similar_scores(
        self, index: Bm25Index, query: str, depth: int, min_similarity: float = MIN_SIMILARITY
    ) -> list[tuple[int, float]]:
        """`similar` with each memory's cosine to the query: `(position, cosine)`, best first."""
        self.sync(index)
        if depth <= 0 or self._size == 0:
            return []
        query_vector = np.asarray(self.embeddings.embed_query(query), dtype=np.float32)
        return self.similar_to_vector(index, query_vector, depth, min_similarity)

    def similar_to_vector(
        self,
        index: Bm25Index,
        vector: npt.NDArray[np.float32],
        depth: int,
        min_similarity: float = MIN_SIMILARITY,
    ) -> list[tuple[int, float]]:
        """`similar_scores` for a query already embedded (a dialogue's weighted mean vector)."""
        self.sync(index)
        with self._lock:
            size, matrix, alive, row_ids = self._size, self._matrix, self._alive, self._row_ids
        if size == 0 or depth <= 0:
            return []
        query_vector = _unit(np.asarray(vector, dtype=np.float32))
        if query_vector.shape[0] != matrix.shape[1]:
            return []  # a model answering with another dimension than its stored vectors
        scores = matrix[:size] @ query_vector
        scores[~alive[:size]] = -np.inf
        count = min(depth, size)
        top = np.argpartition(-scores, count - 1)[:count]
        top = top[np.argsort(-scores[top], kind="stable")]
        found = []
        for row in top.tolist():
            if scores[row] < min_similarity:
                break
            position = index.positions.get(row_ids[row])
            if position is not None:
                found.append((position, float(scores[row])))
        return found

    # ── keeping the vectors in step with the store ──────────────────────

    def sync(self, index: Bm25Index) -> None:
        """Bring the vectors to `index`'s revision: load kept ones, make missing ones (inline when
        few, else in the background), drop those of memories no longer live."""
        if index.revision == self._revision:
            return
        with self._lock:
            if index.revision == self._revision:
                return
            if self._kept is None:
                self._kept = {v.memory_id: v for v in self.store.load() if v.model == self.model}
            wanted: dict[str, str] = {}  # id → text of what is missing
            checked = self._checked
            for memory_id, position in index.positions.items():
                entry = index.entries[position]
                if checked.get(memory_id) is entry:
                    continue
                checked[memory_id] = entry
                text = embedded_text(entry)
                digest = _hash_text(text)
                current = self._rows.get(memory_id)
                if current is not None and current[1] == digest:
                    continue
                kept = self._kept.pop(memory_id, None)
                if kept is not None and kept.content_hash == digest and kept.vector.size:
                    self._set_row(memory_id, digest, kept.vector)
                else:
                    wanted[memory_id] = text
            gone = [i for i in self._rows if i not in index.positions]
            for memory_id in gone:
                self._kill_row(memory_id)
            if len(checked) > len(index.positions):
                self._checked = {i: e for i, e in checked.items() if i in index.positions}
            stale = [i for i in self._kept if i not in index.positions]
            self._kept = {i: v for i, v in self._kept.items() if i in index.positions}
            if gone or stale:
                self.store.drop(gone + stale)  # tombstones and removed memories lose their vector
            self._pending = {i: t for i, t in self._pending.items() if i in index.positions}
            self._pending.update(wanted)
            self._expected = {i: _hash_text(t) for i, t in self._pending.items()}
            self._compact_if_sparse()
            self._revision = index.revision
            if len(self._pending) <= INLINE_LIMIT and not self._running():
                texts, self._pending = self._pending, {}
                self._embed(texts)
                return
            self._start_worker()

    def vectors_of(self, texts: dict[str, str], complete: bool = False) -> npt.NDArray[np.float32]:
        """Unit vectors of `texts` (memory id → the text of its current version), in order: the
        kept vector of each version that has one, the rest embedded now and kept (consolidation
        keeps one such channel of descriptions and embeds only what changed since its last pass).
        `complete`: `texts` holds every memory to keep a vector of; the others' are dropped."""
        ids = list(texts)
        digests = {i: _hash_text(t) for i, t in texts.items()}
        found: dict[str, npt.NDArray[np.float32]] = {}
        with self._lock:
            if self._kept is None:
                self._kept = {v.memory_id: v for v in self.store.load() if v.model == self.model}
            for memory_id in ids:
                row = self._rows.get(memory_id)
                kept = self._kept.get(memory_id)
                if row is not None and row[1] == digests[memory_id]:
                    found[memory_id] = self._matrix[row[0]].copy()
                elif kept is not None and kept.content_hash == digests[memory_id]:
                    found[memory_id] = kept.vector
        missing = [i for i in ids if i not in found]
        if complete:
            with self._lock:
                gone = [i for i in self._kept if i not in texts] if self._kept else []
                for memory_id in gone:
                    del self._kept[memory_id]
            if gone:
                self.store.drop(gone)  # merged, deleted or branch memories: no vector kept
        made = []
        for start in range(0, len(missing), BATCH):
            part = missing[start : start + BATCH]
            raw = self.embeddings.embed_documents([texts[i] for i in part])
            for memory_id, values in zip(part, raw, strict=True):
                found[memory_id] = _unit(np.asarray(values, dtype=np.float32))
                made.append(StoredVector(memory_id, self.model, digests[memory_id],
                                         found[memory_id]))  # fmt: skip
        with self._lock:
            self.embedded_count += len(made)
            for stored in made:  # retrieval uses them too instead of embedding them again
                if self._expected.get(stored.memory_id) == stored.content_hash:
                    del self._expected[stored.memory_id]  # was waiting for the background
                    self._pending.pop(stored.memory_id, None)
                    self._set_row(stored.memory_id, stored.content_hash, stored.vector)
                elif self._kept is not None:
                    self._kept[stored.memory_id] = stored  # the next sync finds it kept
        self.store.put(made)
        if not ids:
            return np.zeros((0, 1), dtype=np.float32)
        return np.vstack([found[i] for i in ids]).astype(np.float32)

    def _embed(self, texts: dict[str, str]) -> None:
        """Embed `texts` (id → text) and keep the vectors, unless the memory changed meanwhile."""
        if not texts:
            return
        ids = list(texts)
        vectors = self.embeddings.embed_documents([texts[i] for i in ids])
        made = []
        with self._lock:
            for memory_id, raw in zip(ids, vectors, strict=True):
                digest = _hash_text(texts[memory_id])
                if self._expected.get(memory_id) != digest:
                    continue  # edited or deleted while it was being embedded
                del self._expected[memory_id]
                vector = _unit(np.asarray(raw, dtype=np.float32))
                self._set_row(memory_id, digest, vector)
                made.append(StoredVector(memory_id, self.model, digest, vector))
            self.embedded_count += len(made)
        self.store.put(made)

    def _running(self) -> bool:
        return self._worker is not None and self._worker.is_alive()

    def _start_worker(self) -> None:
        if self._running() or not self._pending:
            return
        logger.info(
            "embedding %d memories with %s in the background; retrieval uses the %d vectors "
            "already made meanwhile", len(self._pending), self.model, self._live_rows(),
        )  # fmt: skip
        self._worker = threading.Thread(target=self._work, name="memory-embeddings", daemon=True)
        self._worker.start()

    def _work(self) -> None:
        while True:
            with self._lock:
                batch = dict(list(self._pending.items())[:BATCH])
                for memory_id in batch:
                    del self._pending[memory_id]
                self._in_flight = len(batch)
            if not batch:
                break
            try:
                self._embed(batch)
            except Exception as exc:  # a failing provider: BM25 goes on, the error is shown
                self._error = f"{type(exc).__name__}: {exc}"
                logger.exception("background embedding with %s failed", self.model)
                with self._lock:  # still missing: counted as pending, made at the next change
                    self._pending.update((i, t) for i, t in batch.items() if i in self._expected)
                return
            finally:
                self._in_flight = 0
            status = self.status()
            logger.info("embedded %d of %d memories with %s", status.embedded, status.live,
                        self.model)  # fmt: skip
            if self.on_progress is not None:
                self.on_progress(status)
        self._error = ""

    def catch_up(self, index: Bm25Index, max_missing: int = EMBED_BEFORE_RETURN,
                 timeout: float | None = None) -> bool:  # fmt: skip
        """Bring the vectors to `index`'s revision and, when at most `max_missing` are missing,
        wait until they are made (after a bulk load, so that the next query is fused). True
        when nothing is pending on return."""
        self.sync(index)
        if self.status().pending > max_missing:
            return False
        return self.wait(timeout)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the background embedding (tests, benchmarks); True when nothing is pending."""
        worker = self._worker
        if worker is not None:
            worker.join(timeout)
        return not self._running() and not self._pending

    def status(self) -> ChannelStatus:
        with self._lock:
            live, pending = self._live_rows(), len(self._pending) + self._in_flight
            return ChannelStatus(self.model, live + pending, live, pending,
                                 self._error)  # fmt: skip

    @property
    def nbytes(self) -> int:
        """Bytes held by the vectors (the matrix, spare rows included)."""
        return int(self._matrix.nbytes)

    # ── rows ────────────────────────────────────────────────────────────

    def _live_rows(self) -> int:
        return int(self._alive[: self._size].sum())

    def _set_row(self, memory_id: str, digest: str, vector: npt.NDArray[np.float32]) -> None:
        if self._matrix.shape[1] != vector.shape[0]:
            if self._size:  # another dimension than the rows so far: start over with this one
                self._rows.clear()
                self._row_ids.clear()
                self._size = 0
            self._matrix = np.zeros((0, vector.shape[0]), dtype=np.float32)
            self._alive = np.zeros(0, dtype=bool)
        self._kill_row(memory_id)
        if self._size == self._matrix.shape[0]:  # grow by a quarter: appends stay amortised O(1)
            capacity = max(1024, self._size + self._size // 4)
            matrix = np.zeros((capacity, self._matrix.shape[1]), dtype=np.float32)
            matrix[: self._size] = self._matrix[: self._size]
            alive = np.zeros(capacity, dtype=bool)
            alive[: self._size] = self._alive[: self._size]
            self._matrix, self._alive = matrix, alive
        row = self._size
        self._matrix[row] = vector
        self._alive[row] = True
        self._row_ids.append(memory_id)
        self._rows[memory_id] = (row, digest)
        self._size += 1

    def _kill_row(self, memory_id: str) -> None:
        current = self._rows.pop(memory_id, None)
        if current is not None:
            self._alive[current[0]] = False

    def _compact_if_sparse(self) -> None:
        if self._size == 0 or self._size - self._live_rows() <= MAX_DEAD_SHARE * self._size:
            return
        keep = np.flatnonzero(self._alive[: self._size])
        vectors = self._matrix[keep].copy()
        ids = [self._row_ids[row] for row in keep.tolist()]
        digests = [self._rows[memory_id][1] for memory_id in ids]
        self._matrix = np.zeros((0, vectors.shape[1]), dtype=np.float32)
        self._alive, self._row_ids, self._rows, self._size = np.zeros(0, bool), [], {}, 0
        for memory_id, digest, vector in zip(ids, digests, vectors, strict=True):
            self._set_row(memory_id, digest, vector)


def _unit(vector: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else vector


def _hash_text(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]
