"""Which LangChain package a model provider needs and which variables its key is read from."""

from __future__ import annotations

import importlib.util
import os

OFFLINE_PROVIDER = "offline"

# provider -> (the modules init_chat_model may import for it, the first one the package to
# install; the variables that package reads its key from). The names are those of the packages'
# own sources, not "<PROVIDER>_API_KEY": langchain-google-genai reads GOOGLE_API_KEY, never
# GOOGLE_GENAI_API_KEY. No variable: the package finds its credentials itself (the AWS chain,
# Google's application default credentials, a local server; huggingface's default backend runs
# the model locally), so nothing is checked here and its own error is the one you see.
PROVIDERS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "openai": (("langchain_openai",), ("OPENAI_API_KEY",)),
    "anthropic": (("langchain_anthropic",), ("ANTHROPIC_API_KEY",)),
    "google_genai": (("langchain_google_genai",), ("GOOGLE_API_KEY", "GEMINI_API_KEY")),
    "mistralai": (("langchain_mistralai",), ("MISTRAL_API_KEY",)),
    "groq": (("langchain_groq",), ("GROQ_API_KEY",)),
    "fireworks": (("langchain_fireworks",), ("FIREWORKS_API_KEY",)),
    "together": (("langchain_together",), ("TOGETHER_API_KEY",)),
    "huggingface": (("langchain_huggingface",), ()),
    "google_vertexai": (("langchain_google_vertexai",), ()),
    "bedrock": (("langchain_aws",), ()),
    "bedrock_converse": (("langchain_aws",), ()),
    # init_chat_model falls back to langchain-community's ChatOllama
    "ollama": (("langchain_ollama", "langchain_community"), ()),
}


class ModelUnavailable(ValueError):
    """A named model that cannot be built here: its package is missing, or its key unset."""


def credential_variables(provider: str) -> tuple[str, ...]:
    """The variables `provider`'s package reads its key from (none: it finds its own)."""
    return PROVIDERS.get(provider, ((), ()))[1]


def has_credentials(provider: str) -> bool:
    """True when a real model can be reached: a key its package reads, an OpenAI-compatible
    base URL, or a provider whose package finds its credentials itself."""
    if provider == OFFLINE_PROVIDER:
        return False
    if provider == "openai" and os.environ.get("OPENAI_BASE_URL"):
        return True
    variables = credential_variables(provider)
    return not variables or any(os.environ.get(name) for name in variables)


def check_model_available(provider: str, label: str) -> None:
    """ModelUnavailable, one line naming what to install or set, when a model of `provider`
    cannot be built; `label` names the model and who named it ("GULFSTREAM_MODEL=…")."""
    if provider == OFFLINE_PROVIDER:
        return
    modules = _modules(provider)
    if modules is None:
        raise ModelUnavailable(f"{label}: LangChain knows no model provider {provider!r}")
    package = modules[0].split(".")[0].replace("_", "-") if modules else provider
    if modules and not any(importlib.util.find_spec(m.split(".")[0]) for m in modules):
        raise ModelUnavailable(f"{label} needs the {package} package: pip install {package}")
    if not has_credentials(provider):
        wanted = " or ".join(credential_variables(provider) + _base_url(provider))
        raise ModelUnavailable(f"{label} needs {wanted} set (read by {package})")


def _modules(provider: str) -> tuple[str, ...] | None:
    """The modules that can serve `provider`: ours, else init_chat_model's own map; () when
    that map cannot be read (a newer langchain: init_chat_model then decides); None: unknown."""
    if provider in PROVIDERS:
        return PROVIDERS[provider][0]
    try:
        from langchain.chat_models.base import _BUILTIN_PROVIDERS
    except ImportError:
        return ()
    known = _BUILTIN_PROVIDERS.get(provider)
    return (known[0],) if known else None


def _base_url(provider: str) -> tuple[str, ...]:
    return ("OPENAI_BASE_URL",) if provider == "openai" else ()
