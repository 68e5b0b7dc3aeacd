"""One-off codemod of issue #33: move modules into packages and rewrite every reference.

Run from the repository root on a clean tree: `python scripts/restructure.py`. It `git mv`s each
module of MOVES, then rewrites dotted names (`memory.yaml_manager`) in import lines, string
literals and comments of Python files and in notebooks, and both dotted names and paths
(`memory/yaml_manager.py`) in docs and configuration. Code that merely reads an attribute
(`memory.manager.apply(...)` on a LongTermMemory) is left alone: only import lines, strings and
comments are rewritten. Deleted before the change lands.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import tokenize
from pathlib import Path

MOVES = {
    # memory/store: what is stored, how a manager changes it, and where it lives
    "memory.item": "memory.store.item",
    "memory.document": "memory.store.document",
    "memory.operations": "memory.store.operations",
    "memory.manager": "memory.store.manager",
    "memory.core_context": "memory.store.core_context",
    "memory.repair": "memory.store.repair",
    "memory.branch": "memory.store.branch",
    "memory.factory": "memory.store.factory",
    "memory.snapshot": "memory.store.snapshots",
    "memory.stored_snapshots": "memory.store.snapshot_rows",
    "memory.state_db": "memory.store.state_db",
    "memory.atomic_file": "memory.store.atomic_file",
    "memory.locking": "memory.store.locking",
    "memory.postgres": "memory.store.postgres",
    "memory.writer.sqlite_file": "memory.store.sqlite_file",
    "memory.yaml_manager": "memory.store.backends.yaml_files",
    "memory.sqlite_manager": "memory.store.backends.sqlite_db",
    "memory.sqlite_rows": "memory.store.backends.sqlite_rows",
    "memory.sqlite_check": "memory.store.backends.sqlite_check",
    "memory.store_manager": "memory.store.backends.langgraph_store",
    "memory.store_changes": "memory.store.backends.store_changes",
    # memory/text: text handling without I/O
    "memory.tokenize": "memory.text.tokenize",
    "memory.language": "memory.text.language",
    "memory.statement_kinds": "memory.text.statement_kinds",
    "memory.fencing": "memory.text.fencing",
    "memory.messages": "memory.text.messages",
    "memory.entities": "memory.text.entities",
    "memory.entity_lexicon": "memory.text.entity_lexicon",
    "memory.episodic": "memory.text.episodic",
    # memory/usage: model calls and tokens
    "memory.usage": "memory.usage.counts",
    "memory.metering": "memory.usage.metering",
    # memory/retrieval: the read side, its ranking and its log
    "memory.hotness": "memory.retrieval.hotness",
    "memory.ranking": "memory.retrieval.ranking",
    "memory.recall_log": "memory.retrieval.recall_log",
    "memory.retrieval.mechanical": "memory.retrieval.bm25",
    # memory/upkeep: what keeps memory clean over time
    "memory.upkeep": "memory.upkeep.memory_upkeep",
    "memory.consolidation": "memory.upkeep.consolidation",
    "memory.consolidating": "memory.upkeep.consolidating",
    "memory.topics": "memory.upkeep.topics",
    "memory.topical": "memory.upkeep.topical",
    # memory/forget: what a user asked to forget, and erasure
    "memory.forgetting": "memory.forget.forgotten",
    "memory.fingerprint": "memory.forget.fingerprint",
    "memory.erasure": "memory.forget.erasure",
    "memory.archive.forgetting": "memory.archive.reconcile",
    # memory/writer
    "memory.turn": "memory.writer.turn",
    "memory.writer.budget": "memory.writer.listing",
    # graph/models: chat models and embeddings
    "graph.models": "graph.models.loading",
    "graph.offline_model": "graph.models.offline",
    "graph.offline_rules": "graph.models.offline_rules",
    "graph.embeddings": "graph.models.embeddings",
    # graph/writing: a finished turn on its way to the writer
    "graph.handoff": "graph.writing.ltm_write",
    "graph.memory_writer": "graph.writing.writer_graph",
    "graph.memory_consolidator": "graph.writing.consolidator_graph",
    "graph.pending": "graph.writing.pending",
    "graph.pending_mirror": "graph.writing.pending_mirror",
    "graph.said_recently": "graph.writing.said_recently",
    "graph.write_now": "graph.writing.write_now",
    "graph.admitting": "graph.writing.admission",
    # graph/archive: the archive from the graph's side
    "graph.archiving": "graph.archive.archiving",
    "graph.archive_tools": "graph.archive.search_tool",
    "graph.digests": "graph.archive.digests",
}

if len(sys.argv) > 1:  # a later pass: its moves in a JSON file, {old: new}
    MOVES = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
ROOT = Path.cwd()
DOTTED = re.compile(
    r"(?<![\w.])("
    + "|".join(re.escape(k) for k in sorted(MOVES, key=len, reverse=True))
    + r")(?!\w)"
)


def path_of(module: str) -> str:
    return module.replace(".", "/")


PATHS = {}
for old, new in MOVES.items():
    if (ROOT / path_of(old)).is_dir():
        PATHS[path_of(old)] = path_of(new)
    else:
        PATHS[path_of(old) + ".py"] = path_of(new) + ".py"
SLASHED = re.compile(
    r"(?<![\w/.])("
    + "|".join(re.escape(k) for k in sorted(PATHS, key=len, reverse=True))
    + r")(?![\w])"
)


def dotted(text: str) -> str:
    return DOTTED.sub(lambda m: MOVES[m.group(1)], text)


def slashed(text: str) -> str:
    return SLASHED.sub(lambda m: PATHS[m.group(1)], text)


IMPORT_LINE = re.compile(r"^\s*(from|import)\s+(memory|graph)\b")


def rewrite_python(source: str) -> str:
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    spans: list[tuple[int, int]] = []  # strings and comments, as offsets into the source
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type in (tokenize.STRING, tokenize.COMMENT) or (
                sys.version_info >= (3, 12) and token.type == tokenize.FSTRING_MIDDLE
            ):
                (r0, c0), (r1, c1) = token.start, token.end
                spans.append((starts[r0 - 1] + c0, starts[r1 - 1] + c1))
    except (tokenize.TokenError, IndentationError):
        pass
    for begin, end in reversed(spans):
        source = source[:begin] + slashed(dotted(source[begin:end])) + source[end:]
    lines = source.splitlines(keepends=True)
    return "".join(dotted(line) if IMPORT_LINE.match(line) else line for line in lines)


def rewrite_notebook(text: str) -> str:
    book = json.loads(text)
    for cell in book.get("cells", []):
        source = "".join(cell.get("source", []))
        new = rewrite_python(source) if cell.get("cell_type") == "code" else slashed(dotted(source))
        if new != source:
            cell["source"] = new.splitlines(keepends=True)
    return json.dumps(book, indent=1, ensure_ascii=False) + "\n"


def main() -> int:
    for old, new in MOVES.items():
        source, target = ROOT / path_of(old), ROOT / path_of(new)
        if not source.is_dir():
            source, target = source.with_suffix(".py"), target.with_suffix(".py")
        if not source.exists():
            print(f"missing: {source}")
            return 1
    # a module that becomes a package of the same name: out of the way first
    staged = {}
    for old, new in MOVES.items():
        if new.startswith(old + "."):
            temporary = ROOT / (path_of(old) + "_moving.py")
            subprocess.run(["git", "mv", path_of(old) + ".py", str(temporary)], check=True)
            staged[old] = temporary
    for old, new in sorted(MOVES.items(), key=lambda kv: -kv[0].count(".")):
        source = staged.get(old) or ROOT / path_of(old)
        target = ROOT / path_of(new)
        if old not in staged and not source.is_dir():
            source = source.with_suffix(".py")
        if not (ROOT / path_of(old)).is_dir() or old in staged:
            target = target.with_suffix(".py")
        target.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "mv", str(source), str(target)], check=True)
    files = subprocess.run(["git", "ls-files"], capture_output=True, text=True, check=True)
    for name in files.stdout.splitlines():
        path = ROOT / name
        if not path.is_file() or name == "scripts/restructure.py":
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        if path.suffix == ".py":
            new = rewrite_python(text)
        elif path.suffix == ".ipynb":
            new = rewrite_notebook(text)
        elif path.suffix in (
            ".md",
            ".json",
            ".toml",
            ".txt",
            ".cfg",
            ".ini",
            ".yml",
            ".yaml",
            ".sh",
            ".html",
            ".js",
            ".jinja",
        ) or path.name in ("Makefile",):
            new = slashed(dotted(text))
        else:
            continue
        if new != text:
            path.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
