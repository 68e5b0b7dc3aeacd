"""The fenced code blocks of the docs, and what each kind of block names (for test_doc_blocks.py):
commands of shell blocks, paths, `file.py:name` references, code names and graph chains of
diagrams and trees."""

from __future__ import annotations

import ast
import itertools
import json
import re
import shlex
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from tests.integration.test_docs_name_real_files import PATH_NAME, ROOT, documents

# The opening or closing line of a fence: its indent, its backticks or tildes, its info string.
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
# `<!-- doc-test: skip (needs a provider key) -->` on the line before a fence.
MARKER = re.compile(r"<!--\s*doc-test:(?P<directive>.*?)-->")
SKIP = re.compile(r"^\s*skip\s*(?:\((?P<reason>[^)]*)\))?\s*$")
LANGUAGES = {
    "python": "python", "py": "python", "pycon": "pycon", "json": "json",
    "bash": "shell", "sh": "shell", "shell": "shell", "console": "shell",
    "text": "text", "txt": "text",
}  # fmt: skip
# The first word of a command line a reader types (an unlabelled block of these is shell).
COMMAND_WORDS = ("make", "python", "python3", ".venv/bin/", "curl", "langgraph", "export", "$ ")
SOURCE_PACKAGES = ("graph", "memory", "prompts", "webapp")


def doc_files() -> list[Path]:
    """Every document whose blocks are checked: the newcomer's documents and the changelog."""
    readme, *others = documents()
    return [readme, ROOT / "CHANGELOG.md", *others]


@dataclass(frozen=True)
class Block:
    """One fenced block: `doc` relative to the root, `number` counted from 1 in its doc."""

    doc: str
    number: int
    line: int
    language: str  # the info string's first word, lowercased ("" when unlabelled)
    text: str
    skip: str | None  # the reason of a skip marker before the fence ("" when none is given)

    @property
    def id(self) -> str:
        return f"{self.doc}#{self.number}"

    @property
    def kind(self) -> str:
        """python, pytest (a block defining tests), pycon, json, shell or text; "" when no
        checker knows the language."""
        kind = LANGUAGES.get(self.language, "" if self.language else "text")
        if kind == "text" and not self.language and looks_like_commands(self.text):
            return "shell"
        if kind == "python" and re.search(r"^(async )?def test_", self.text, re.M):
            return "pytest"
        return kind


def looks_like_commands(text: str) -> bool:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    commands = [line for line in lines if not line.startswith("#")]
    return bool(commands) and all(
        line.startswith(COMMAND_WORDS) or re.match(r"[A-Z_]+=", line) for line in commands
    )


def blocks_of(path: Path) -> list[Block]:
    """The fenced blocks of one Markdown file, dedented by their fence's indent."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        fence, indent = opening["fence"], len(opening["indent"])
        end = index + 1
        while end < len(lines) and not lines[end].strip().startswith(fence):
            end += 1
        body = [
            line[indent:] if line[:indent].isspace() else line for line in lines[index + 1 : end]
        ]
        found.append(
            Block(
                doc=path.relative_to(ROOT).as_posix(),
                number=len(found) + 1,
                line=index + 1,
                language=(opening["info"].split() or [""])[0].lower(),
                text="\n".join(body) + "\n",
                skip=skip_reason(lines[:index]),
            )
        )
        index = end + 1
    return found


def skip_reason(before: list[str]) -> str | None:
    """The reason given by a skip marker on the last non-blank line before a fence, else None."""
    previous = next((line for line in reversed(before) if line.strip()), "")
    marker = MARKER.search(previous)
    skip = SKIP.match(marker["directive"]) if marker else None
    return None if skip is None else (skip["reason"] or "").strip()


def stray_markers() -> list[str]:
    """Markers that are not a skip right before a fence: a misspelt one would skip nothing."""
    stray = []
    for path in doc_files():
        lines = path.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines):
            for marker in MARKER.finditer(line):
                following = next((later for later in lines[number + 1 :] if later.strip()), "")
                if not SKIP.match(marker["directive"]) or not FENCE.match(following):
                    stray.append(f"{path.relative_to(ROOT)}:{number + 1}: {line.strip()}")
    return stray


def all_blocks() -> list[Block]:
    return [block for path in doc_files() if path.exists() for block in blocks_of(path)]


# ── shell ────────────────────────────────────────────────────────────────


def command_lines(text: str) -> list[str]:
    """The block's commands: continuation lines joined, comment lines and `$ ` prompts dropped."""
    joined = re.sub(r"\s*\\\n\s*", " ", text)
    lines = (line.strip().removeprefix("$ ") for line in joined.splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def split_command(line: str) -> tuple[dict[str, str], list[str]]:
    """`A=1 B=2 make chat  # note` → ({A: 1, B: 2}, [make, chat]); `export A=1` → ({A: 1}, [])."""
    words = shlex.split(line, comments=True)
    if words[:1] == ["export"]:
        words = words[1:]
    assignments: dict[str, str] = {}
    while words and re.fullmatch(r"[A-Za-z_]\w*=.*", words[0]):
        name, _, value = words.pop(0).partition("=")
        assignments[name] = value
    return assignments, words


def make_arguments(argv: list[str]) -> tuple[list[str], dict[str, str]]:
    """`make import-chats FILE=x USER=ada` → ([import-chats], {FILE: x, USER: ada})."""
    targets = [word for word in argv[1:] if "=" not in word and not word.startswith("-")]
    variables = dict(word.split("=", 1) for word in argv[1:] if "=" in word)
    return targets, variables


def module_and_flags(argv: list[str]) -> tuple[str, list[str]]:
    """`python -m memory.x --file f --user ada` → ("memory.x", ["--file", "--user"])."""
    module = argv[argv.index("-m") + 1]
    after = argv[argv.index("-m") + 2 :]
    return module, [word.split("=")[0] for word in after if word.startswith("--")]


@cache
def project_source() -> str:
    """The app's and the library's Python sources and the Makefile, as one text to search."""
    files = [path for package in SOURCE_PACKAGES for path in sorted((ROOT / package).rglob("*.py"))]
    return "\n".join(path.read_text(encoding="utf-8") for path in [*files, ROOT / "Makefile"])


def names_in_source(name: str) -> bool:
    return re.search(rf"\b{re.escape(name)}\b", project_source()) is not None


# ── json ─────────────────────────────────────────────────────────────────


def parse_json(text: str) -> Any:
    """A whole JSON document, or a fragment of an object's keys (`"http": {...}, "auth": ...`)."""
    stripped = text.strip()
    if stripped.startswith('"'):
        return json.loads("{" + stripped.rstrip(",") + "}")
    return json.loads(stripped)


def langgraph_references(config: dict[str, Any]) -> list[str]:
    """The `./file.py:name` values of a langgraph.json: graphs, the http app, auth."""
    found = list(config.get("graphs", {}).values())
    found += [part["app"] for part in [config.get("http", {})] if "app" in part]
    found += [part["path"] for part in [config.get("auth", {})] if "path" in part]
    return found


def extends(real: Any, doc: Any, where: str = "") -> list[str]:
    """What the doc's JSON drops or changes of the project's: every key of `real` must be in
    `doc` with the same value (a dict may add keys)."""
    if isinstance(real, dict) and isinstance(doc, dict):
        return [
            problem
            for key, value in real.items()
            for problem in (
                extends(value, doc[key], f"{where}.{key}") if key in doc else [f"{where}.{key}"]
            )
        ]
    return [] if real == doc else [f"{where}: {doc!r} instead of {real!r}"]


# ── python definitions ───────────────────────────────────────────────────


def defines(path: Path, name: str) -> bool:
    """Whether the module at `path` binds `name` at its top level (read, not imported)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bound: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            bound |= {target.id for target in targets if isinstance(target, ast.Name)}
        elif isinstance(node, ast.Import | ast.ImportFrom):
            bound |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    return name in bound


def reference_problem(reference: str) -> str | None:
    """None when `./graph/agent.py:graph` (or `graph/agent.py:graph`) names a file that
    defines the name; else what is wrong."""
    file, _, name = reference.removeprefix("./").partition(":")
    if not ((ROOT / file).is_dir() if file.endswith("/") else (ROOT / file).is_file()):
        return f"{reference}: no {file}"
    if name and not defines(ROOT / file, name):
        return f"{reference}: {file} does not define {name}"
    return None


# ── diagrams and trees ───────────────────────────────────────────────────

ROOT_PATH = re.compile(rf"(?<![\w/.-]){PATH_NAME}")
# A file or folder as trees show them: `agent.py`, `writing/`, `memory_backup/`.
BARE_NAME = re.compile(r"^[\w-]+(?:\.(?:py|json|toml|md|ipynb|sh|yaml|jinja)|/)$")
PATHLIKE = re.compile(
    r"(?<![\w/.-])([\w-]+(?:/[\w.-]+)+/?|[\w-]+/|[\w-]+\.(?:py|json|toml|md|ipynb))"
)
# A name in code (`retrieve_memory`, `LongTermMemory`), not a file name (`memory_graphs.py`).
CODE_NAME = re.compile(
    r"(?<![\w./-])([a-z][a-z0-9]*(?:_[a-z0-9]+)+|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+)\b(?!\.\w|/)"
)


def tree_problems(text: str) -> list[str]:
    """The files a tree or diagram shows that do not exist. A line starting at column 0 with a
    folder opens it; names at the start of an indented line are its entries (`agent.py
    nodes.py`); other names in the text must exist under the open folder or from the root."""
    problems: list[str] = []
    folder: str | None = None
    for line in text.splitlines():
        for reference in root_paths(line):  # graph/agent.py, memory/integration/auth.py:auth
            problems += filter(None, [reference_problem(reference)])
        line = ROOT_PATH.sub(lambda m: m[0] if is_top(m[1]) else " ", line)
        words = line.split()
        column = []
        for word in words:
            if word == "…" or BARE_NAME.match(word):
                column.append(word)
            else:
                break
        names = [word for word in column if word != "…"]
        if names and not line[:1].isspace():
            folder = names[0] if names[0].endswith("/") else None
            paths = [names[0], *(f"{folder or ''}{name}" for name in names[1:])]
            problems += [f"{path}: not found" for path in paths if not (ROOT / path).exists()]
        elif names and folder:
            problems += [
                f"{folder}{name}: not found"
                for name in names
                if not (ROOT / folder / name).exists()
            ]
        prose = " ".join(words[len(column) :])
        for match in PATHLIKE.finditer(prose):
            name = match.group(1)
            head = name.split("/")[0]
            if (
                "/" in name.rstrip("/")
                and not (ROOT / head).is_dir()
                and not (folder and any((ROOT / folder).rglob(head)))
            ):
                continue  # prose such as "who/what", not a path
            if not found_under(folder, name.rstrip("/")):
                problems.append(f"{name} (under {folder or 'the root'}): not found")
    return problems


def is_top(path: str) -> bool:
    """`graph/` alone: a tree's folder, not a path into it."""
    return "/" not in path.rstrip("/")


def root_paths(text: str) -> list[str]:
    """The paths from the root that `text` names, with their `:name` when they have one."""
    found = [match[0].rstrip(".,;") for match in ROOT_PATH.finditer(text) if not is_top(match[1])]
    return [path for path in found if "*" not in path and "<" not in path]


def found_under(folder: str | None, name: str) -> bool:
    if (ROOT / name).exists():
        return True
    base = ROOT / folder if folder else ROOT
    return any(path.as_posix().endswith("/" + name) for path in base.rglob(name.split("/")[-1]))


def code_names(text: str) -> set[str]:
    """snake_case and CamelCase names a diagram shows (`retrieve_memory`, `LongTermMemory`)."""
    return {match[1] for match in CODE_NAME.finditer(ROOT_PATH.sub(" ", text))}


def chains(text: str) -> list[list[tuple[list[str], bool]]]:
    """`START → retrieve_memory → [compact] → agent ⇄ tools → END` as steps: the nodes of each
    step (`agent ⇄ tools` is one step of two) and whether it is optional (`[compact]`)."""
    found = []
    for line in text.splitlines():
        match = re.search(r"\bSTART\b.*?\bEND\b", line)
        if not match:
            continue
        steps = []
        for part in match.group(0).split("→"):
            part = part.strip()
            optional = part.startswith("[") and part.endswith("]")
            nodes = [node.strip() for node in part.strip("[]").split("⇄")]
            nodes = ["__start__" if n == "START" else "__end__" if n == "END" else n for n in nodes]
            steps.append((nodes, optional))
        found.append(steps)
    return found


def chain_problem(steps: list[tuple[list[str], bool]], edges: set[tuple[str, str]]) -> str | None:
    """None when each step leads to the next by an edge of the graph (`a ⇄ b` needs both
    edges); optional steps may all be there or all be skipped."""
    for keep_optional in (True, False):
        kept = [nodes for nodes, optional in steps if keep_optional or not optional]
        loops = all(
            (a, b) in edges and (b, a) in edges
            for nodes in kept
            for a, b in itertools.pairwise(nodes)
        )
        links = all(
            any((a, b) in edges for a in before for b in after)
            for before, after in itertools.pairwise(kept)
        )
        if loops and links:
            return None
    return " → ".join(" ⇄ ".join(nodes) for nodes, _ in steps) + ": not the graph's edges"
