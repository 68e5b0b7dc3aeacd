"""load_chat_model: a chat model from "provider/model", loaded lazily; offline with no key."""

from __future__ import annotations

import logging
import os
from typing import Any

from langchain_core.language_models import BaseChatModel

from memory.integration.context import MemoryContext
from memory.integration.settings import Settings

logger = logging.getLogger(__name__)

OFFLINE_PROVIDER = "offline"
# Any OpenAI-compatible server accepts a dummy key; the client library insists on having one.
PLACEHOLDER_API_KEY = "not-needed"

_cache: dict[tuple[Any, ...], BaseChatModel] = {}


def split_model_name(fully_specified_name: str) -> tuple[str, str]:
    """("openai", "gpt-4o-mini") from "openai/gpt-4o-mini"; no provider means OpenAI."""
    if not isinstance(fully_specified_name, str) or not fully_specified_name.strip():
        raise ValueError("model must be a non-empty 'provider/model' string")
    provider, sep, model = fully_specified_name.strip().partition("/")
    if not sep:
        return "openai", provider
    if not model:
        raise ValueError(f"model {fully_specified_name!r} names no model after the provider")
    return provider.lower(), model


def has_credentials(provider: str) -> bool:
    """True when a real model can be reached: a provider key, or an OpenAI-compatible base URL."""
    if provider == OFFLINE_PROVIDER:
        return False
    if provider == "openai" and os.environ.get("OPENAI_BASE_URL"):
        return True
    return bool(os.environ.get(f"{provider.upper()}_API_KEY"))


def load_chat_model(
    fully_specified_name: str, *, timeout: float | None = None, max_retries: int | None = None
) -> BaseChatModel:
    """The chat model named `provider/model`.

    - `openai/<model>` with `OPENAI_BASE_URL` set: any OpenAI-compatible endpoint (vLLM, Ollama,
      DeepSeek, Qwen, ...), with `OPENAI_API_KEY` or a placeholder key when the server needs none.
    - no key for the provider and no base URL: the offline rule-based model (logged as such).
    - otherwise LangChain's `init_chat_model` for the provider.

    `timeout` (seconds per call) and `max_retries` go to the client when given.
    """
    provider, model = split_model_name(fully_specified_name)
    base_url = (os.environ.get("OPENAI_BASE_URL") or None) if provider == "openai" else None
    key = (provider, model, base_url, has_credentials(provider), timeout, max_retries)
    if key not in _cache:
        options = {"timeout": timeout, "max_retries": max_retries}
        _cache[key] = _build(
            provider, model, base_url, {k: v for k, v in options.items() if v is not None}
        )
    return _cache[key]


def is_offline(model: BaseChatModel) -> bool:
    """Whether `model` is the offline stand-in (it never ranks memories)."""
    from memory.integration.models.offline import OfflineChatModel

    return isinstance(model, OfflineChatModel)


def check_model_allowed(field: str, name: str, settings: Settings, custom_auth: bool) -> None:
    """PermissionError naming `field` when the deployment does not let a run use model `name`:
    GULFSTREAM_ALLOWED_MODELS lists the allowed ones ('*': any); unset, any model is allowed
    without custom auth, and only the default models (GULFSTREAM_MODEL, GULFSTREAM_WRITER_MODEL)
    with it, so a signed-in user cannot spend the deployment's keys on another model."""
    allowed = set(settings.allowed_models)
    if "*" in allowed or (not allowed and not custom_auth):
        return
    context = (
        MemoryContext()
    )  # the deployment's defaults: GULFSTREAM_MODEL, GULFSTREAM_WRITER_MODEL
    defaults = {context.model, context.writer_model}
    if name not in (allowed or defaults):
        raise PermissionError(
            f"Context.{field} {name!r} is not allowed on this deployment; allowed: "
            f"{', '.join(sorted(allowed or defaults - {''}))} (GULFSTREAM_ALLOWED_MODELS)"
        )


def _build(
    provider: str, model: str, base_url: str | None, options: dict[str, Any]
) -> BaseChatModel:
    if not has_credentials(provider):
        from memory.integration.models.offline import OfflineChatModel

        if provider != OFFLINE_PROVIDER:
            logger.warning(
                "No %s_API_KEY and no OPENAI_BASE_URL: using the OFFLINE rule-based model "
                "instead of %s/%s. Its replies are labelled; set a key for real answers.",
                provider.upper(),
                provider,
                model,
            )
        return OfflineChatModel()
    if base_url:
        from langchain_openai import ChatOpenAI

        api_key = os.environ.get("OPENAI_API_KEY") or PLACEHOLDER_API_KEY
        # stream_usage: a streamed answer reports its tokens too (the cost accounting reads them)
        return ChatOpenAI(
            model=model,
            base_url=base_url,
            api_key=api_key,  # type: ignore[arg-type]
            stream_usage=True,
            **options,
        )
    from langchain.chat_models import init_chat_model

    return init_chat_model(model, model_provider=provider, **options)
