"""Model calls and tokens by purpose (chat, retrieval, writer, summary): the meter and the
figures it keeps. Imports nothing else of memory/."""

from typing import TYPE_CHECKING

from memory.lazy import lazy_exports

# What `memory.usage` (a module until 0.2) offered, still importable from the package.
_COUNTS = ("Usage", "UsageMeter", "ByPurpose", "PURPOSES", "add_up", "as_dicts", "from_dicts")
if not TYPE_CHECKING:  # to mypy only the new paths exist
    __getattr__ = lazy_exports(
        __name__, dict.fromkeys((*_COUNTS, "describe"), "memory.usage.counts")
    )
