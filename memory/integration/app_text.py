"""AppText: what an app hands the memory library once at start (its memory sections and the
writer's instructions), never imported by the library: `AppText(...).use()` in the app,
`current_app_text()` where it is read."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from memory.prompts.writer import DEFAULT_SECTIONS, MemorySection, SectionKind
from memory.prompts.writer_instructions import DEFAULT_WRITER_INSTRUCTIONS


@dataclass(frozen=True)
class AppText:
    """The app's text the memory reads: `sections` per language ("en", "zh"), each a tuple of
    `MemorySection(name, hint, kind)`; the writer files memories under them, the offline model
    and the core context find them by kind, the LLM retriever's examples name them.
    `writer_instructions` per language: what the writer keeps and how it writes a memory, the
    rules both of its protocols send. `AppText()` holds the library's own of both."""

    sections: Mapping[str, tuple[MemorySection, ...]] = field(
        default_factory=lambda: DEFAULT_SECTIONS
    )
    writer_instructions: Mapping[str, str] = field(
        default_factory=lambda: DEFAULT_WRITER_INSTRUCTIONS
    )

    def use(self) -> AppText:
        """Hand the library this text (once, when the app is imported); returns it."""
        return use_app_text(self)

    def section_name(self, kind: SectionKind, language: str) -> str:
        """The first section of `kind` in `language` ("en" or "zh"): where a fact of that kind
        goes when nothing more specific is known (the offline model files its memories so)."""
        chosen = "zh" if language == "zh" else "en"
        sections = self.sections[chosen]
        found = next((s.name for s in sections if s.kind == kind), None)
        if found is None and kind == "instruction":  # read by kind: never filed under another
            found = next(s.name for s in DEFAULT_SECTIONS[chosen] if s.kind == kind)
        return found or sections[0].name

    def instruction_themes(self) -> frozenset[str]:
        """The names of the sections of kind "instruction", every language's, and the
        library's own (a fork without one still finds what the offline model filed there):
        their memories are the user's standing instructions, in every reply's prompt."""
        every = [*self.sections.values(), *DEFAULT_SECTIONS.values()]
        return frozenset(s.name for group in every for s in group if s.kind == "instruction")


_app_text = AppText()


def use_app_text(text: AppText) -> AppText:
    """Hand the library the app's text (once, when the app is imported); returns it."""
    global _app_text
    _app_text = text
    return text


def current_app_text() -> AppText:
    """The app's text, or the library's defaults when no app handed any (a bare library user)."""
    return _app_text
