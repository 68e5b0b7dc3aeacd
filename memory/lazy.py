"""Lazy and moved exports: names a package offers but imports on first use (so heavy or optional
dependencies load only for whoever needs them), and old import paths kept for one release."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import Any

MOVED_IN = "0.2"  # the release that moved them; the next one drops the old paths


def lazy_exports(package: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` that imports `names[name]` (a module path) on first access."""

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    return __getattr__


def moved_names(module: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` for names that moved to another module (`names[name]`): still
    importable from `module`, with a DeprecationWarning that says where they went."""

    def __getattr__(name: str) -> Any:
        target = names.get(name)
        if target is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        warnings.warn(
            f"{module}.{name} moved to {target}.{name} in {MOVED_IN}; the old name goes in the "
            "next release",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(target), name)

    return __getattr__


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """`import old.path` of a module that moved gives the module at its new path (the same
    object), with a DeprecationWarning. Asked last: a module that exists is always found first."""

    def __init__(self, moves: Mapping[str, str]) -> None:
        self.moves = dict(moves)
        self._specs: dict[str, importlib.machinery.ModuleSpec | None] = {}

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.moves:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        new = self.moves[spec.name]
        warnings.warn(
            f"module {spec.name} moved to {new} in {MOVED_IN}; the old path goes in the next "
            "release",
            DeprecationWarning,
            stacklevel=2,
        )
        module = importlib.import_module(new)
        self._specs[spec.name] = module.__spec__  # the import system writes the old one on it
        return module

    def exec_module(self, module: ModuleType) -> None:
        old = module.__spec__.name if module.__spec__ is not None else ""
        module.__spec__ = self._specs.pop(old, module.__spec__)


def keep_moved_modules(moves: Mapping[str, str]) -> None:
    """Let `import old` work for each `old → new` of `moves` (see `_MovedModules`), once."""
    if not any(isinstance(f, _MovedModules) and f.moves == moves for f in sys.meta_path):
        sys.meta_path.append(_MovedModules(moves))
