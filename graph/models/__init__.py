"""Chat models and embeddings from "provider/model": the loader, and the offline rule-based model
that lets every command run without a key. Imports graph.settings, graph.context, prompts/ and
memory/ only."""

from typing import TYPE_CHECKING

from memory.lazy import lazy_exports

# What `graph.models` (a module until 0.2) offered, still importable from the package.
_LOADING = ("load_chat_model", "split_model_name", "has_credentials", "is_offline")
if not TYPE_CHECKING:  # to mypy only the new paths exist
    __getattr__ = lazy_exports(
        __name__,
        dict.fromkeys(
            (*_LOADING, "check_model_allowed", "OFFLINE_PROVIDER", "PLACEHOLDER_API_KEY"),
            "graph.models.loading",
        ),
    )
