"""load_chat_model: a chat model from "provider/model"; offline only for the unnamed default."""

from __future__ import annotations

import logging
import os
from typing import Any

from langchain_core.language_models import BaseChatModel

from memory.integration.context import DEFAULT_MODEL, MemoryContext
from memory.integration.models.providers import OFFLINE_PROVIDER as OFFLINE_PROVIDER
from memory.integration.models.providers import ModelUnavailable as ModelUnavailable
from memory.integration.models.providers import check_model_available
from memory.integration.models.providers import has_credentials as has_credentials
from memory.integration.settings import ENV_PREFIX, Settings

logger = logging.getLogger(__name__)

# The variables by which a deployment names its models.
DEPLOYMENT_MODEL_VARIABLES = (f"{ENV_PREFIX}MODEL", f"{ENV_PREFIX}WRITER_MODEL")
# Any OpenAI-compatible server accepts a dummy key; the client library insists on having one.
PLACEHOLDER_API_KEY = "not-needed"

_cache: dict[tuple[Any, ...], BaseChatModel] = {}
_told_offline = False


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


def load_chat_model(
    fully_specified_name: str, *, timeout: float | None = None, max_retries: int | None = None
) -> BaseChatModel:
    """The chat model named `provider/model`.

    - `offline/<anything>`, or the default model that nobody named (GULFSTREAM_MODEL,
      GULFSTREAM_WRITER_MODEL) with neither `OPENAI_API_KEY` nor `OPENAI_BASE_URL` set: the
      offline rule-based model (logged once per process).
    - any other model whose package or key is missing: ModelUnavailable (a ValueError) naming
      what to install or set, never a silent stand-in.
    - `openai/<model>` with `OPENAI_BASE_URL` set: any OpenAI-compatible endpoint (vLLM, Ollama,
      DeepSeek, Qwen, ...), with `OPENAI_API_KEY` or a placeholder key when the server needs none.
    - otherwise LangChain's `init_chat_model` for the provider.

    `timeout` (seconds per call) and `max_retries` go to the client when given.
    """
    provider, model = split_model_name(fully_specified_name)
    if _answered_offline(provider, model):
        return _offline(provider, model)
    check_model_available(provider, f"model {provider}/{model}")
    base_url = (os.environ.get("OPENAI_BASE_URL") or None) if provider == "openai" else None
    key = (provider, model, base_url, timeout, max_retries)
    if key not in _cache:
        options = {"timeout": timeout, "max_retries": max_retries}
        _cache[key] = _build(
            provider, model, base_url, {k: v for k, v in options.items() if v is not None}
        )
    return _cache[key]


def deployment_models() -> dict[str, str]:
    """The models the deployment names, by variable: GULFSTREAM_MODEL, GULFSTREAM_WRITER_MODEL."""
    named = {name: os.environ.get(name, "").strip() for name in DEPLOYMENT_MODEL_VARIABLES}
    return {name: value for name, value in named.items() if value}


def check_deployment_models() -> None:
    """ModelUnavailable for the first model the deployment names that cannot be built: a
    process (the CLI, the server importing the graph) checks them as it starts, so a missing
    package or key is one line then, not a traceback at the first message."""
    for variable, name in deployment_models().items():
        check_model_available(split_model_name(name)[0], f"{variable}={name}")


def check_run_models(context: MemoryContext) -> None:
    """ModelUnavailable when the run's model or writer model cannot be built: the run fails as
    it starts, before any model call (and before its turn is queued for a writer that would
    fail on it in the background)."""
    for field in ("model", "writer_model"):
        name = getattr(context, field)
        provider, model = split_model_name(name)
        if not _answered_offline(provider, model):
            check_model_available(provider, f"Context.{field}={name}")


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


def _answered_offline(provider: str, model: str) -> bool:
    """Whether the offline model answers for `provider/model`: `offline/…`, or the default
    model, named by no deployment variable, with no OpenAI key or base URL to reach it with."""
    if provider == OFFLINE_PROVIDER:
        return True
    name = f"{provider}/{model}"
    return (
        name == DEFAULT_MODEL
        and not has_credentials(provider)
        and name not in deployment_models().values()
    )


def _offline(provider: str, model: str) -> BaseChatModel:
    """The offline model, said in the log the first time it stands in for a real one."""
    global _told_offline
    from memory.integration.models.offline import OfflineChatModel

    if provider != OFFLINE_PROVIDER and not _told_offline:
        _told_offline = True  # once per process: every node of every turn would say the same
        logger.warning(
            "No OPENAI_API_KEY and no OPENAI_BASE_URL: the OFFLINE rule-based model answers "
            "instead of %s/%s. Its replies are labelled; set a key, or name a model with "
            "GULFSTREAM_MODEL, for real answers.",
            provider,
            model,
        )
    if (OFFLINE_PROVIDER,) not in _cache:
        _cache[(OFFLINE_PROVIDER,)] = OfflineChatModel()
    return _cache[(OFFLINE_PROVIDER,)]


def _build(
    provider: str, model: str, base_url: str | None, options: dict[str, Any]
) -> BaseChatModel:
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
