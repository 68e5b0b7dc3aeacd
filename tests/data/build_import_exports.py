"""Build the chat-export fixtures of `make import-chats` from public dialogues.

Run: `.venv/bin/python tests/data/build_import_exports.py [SPC_GIT_DIR]` (default: the mirror
of github.com/google-research-datasets/Synthetic-Persona-Chat fetched into /work/.mirror). It
reads `data/Synthetic-Persona-Chat_test.csv` at the mirror's HEAD and writes, from dialogues
chosen by a hash, one export per format (tests/data/import_chatgpt.json, import_claude.json,
import_chats.jsonl: four dialogues each, dated over 2025) and the dialogue pool the benchmark
repeats (import_dialogues.jsonl). "User 1" is the user, "User 2" the assistant; the text is
unchanged; dialogues with a placeholder ("[user 1's name]", "[name]") are left out. Source,
licence and layout: tests/data/README.md.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
MIRROR = "/work/.mirror/google-research-datasets+Synthetic-Persona-Chat/repo"
SOURCE = "data/Synthetic-Persona-Chat_test.csv"
PER_EXPORT = 4
POOL = 60  # dialogues the benchmark repeats into a 10,000-message export
START = datetime(2025, 1, 6, 18, 0, tzinfo=UTC)
PLACEHOLDER = re.compile(r"\[[^\]]{1,40}\]")
LINE = re.compile(r"^User ([12]):\s*(.*)$")


def dialogues(git_dir: str) -> tuple[str, list[list[tuple[str, str]]]]:
    """The source commit and every dialogue as (role, text), in the file's order."""

    def git(*args: str) -> str:
        return subprocess.run(["git", f"--git-dir={git_dir}", *args], check=True,
                              capture_output=True, text=True).stdout  # fmt: skip

    commit = git("rev-parse", "HEAD").strip()
    rows = csv.DictReader(io.StringIO(git("show", f"HEAD:{SOURCE}")))
    found = []
    for row in rows:
        said: list[tuple[str, str]] = []
        for line in row["Best Generated Conversation"].splitlines():
            match = LINE.match(line.strip())
            if match is None:
                continue
            text = match.group(2)
            said.append(("user" if match.group(1) == "1" else "assistant", text))
        placeholder = any(PLACEHOLDER.search(text) for _, text in said)
        if len(said) >= 6 and said[0][0] == "user" and not placeholder:
            found.append(said)
    return commit, found


def chosen(
    found: list[list[tuple[str, str]]], count: int, salt: str
) -> list[list[tuple[str, str]]]:
    """`count` dialogues ordered by a hash of their first line (stable whatever the file order)."""
    key = lambda d: hashlib.sha1(f"{salt}:{d[0][1]}".encode()).hexdigest()  # noqa: E731
    return sorted(found, key=key)[:count]


def timed(dialogue: list[tuple[str, str]], index: int) -> list[tuple[str, str, datetime]]:
    """A dialogue dated `index` × 11 weeks after START, a message every 90 seconds."""
    begin = START + timedelta(weeks=11 * index, hours=index % 5)
    return [
        (role, text, begin + timedelta(seconds=90 * n)) for n, (role, text) in enumerate(dialogue)
    ]


def chatgpt(dialogues_: list[list[tuple[str, str]]]) -> list[dict]:
    """ChatGPT's layout: a root, a hidden system message, then the messages as a chain of
    nodes; the first conversation also holds a regenerated reply the user did not keep."""
    conversations = []
    for index, dialogue in enumerate(dialogues_):
        said = timed(dialogue, index)
        uid = f"c{index}"
        mapping: dict[str, dict] = {
            f"{uid}-root": {
                "id": f"{uid}-root",
                "message": None,
                "parent": None,
                "children": [f"{uid}-sys"],
            }
        }
        mapping[f"{uid}-sys"] = node(f"{uid}-sys", "system", "", None, f"{uid}-root")
        parent = f"{uid}-sys"
        for n, (role, text, when) in enumerate(said):
            node_id = f"{uid}-m{n}"
            mapping[node_id] = node(node_id, role, text, when.timestamp(), parent)
            mapping[parent]["children"].append(node_id)
            parent = node_id
        if index == 0:  # a reply regenerated away: on a branch current_node does not descend to
            dropped = node(f"{uid}-m1-old", "assistant", "An answer the user regenerated.",
                           said[1][2].timestamp(), f"{uid}-m0")  # fmt: skip
            mapping[dropped["id"]] = dropped
            mapping[f"{uid}-m0"]["children"].insert(0, dropped["id"])
        conversations.append({
            "title": said[0][1][:40], "create_time": said[0][2].timestamp(),
            "update_time": said[-1][2].timestamp(), "mapping": mapping,
            "current_node": parent, "conversation_id": f"spc-chatgpt-{index}",
            "id": f"spc-chatgpt-{index}",
        })  # fmt: skip
    return conversations


def node(node_id: str, role: str, text: str, when: float | None, parent: str) -> dict:
    message = {"id": node_id, "author": {"role": role, "name": None, "metadata": {}},
               "create_time": when, "content": {"content_type": "text", "parts": [text]},
               "status": "finished_successfully", "metadata": {}}  # fmt: skip
    return {"id": node_id, "message": message, "parent": parent, "children": []}


def claude(dialogues_: list[list[tuple[str, str]]]) -> list[dict]:
    """Claude's layout: `chat_messages` with `sender` human/assistant and text blocks."""
    conversations = []
    for index, dialogue in enumerate(dialogues_):
        said = timed(dialogue, index + 1)
        messages = [
            {"uuid": f"spc-claude-{index}-{n}", "sender": "human" if role == "user" else role,
             "text": text, "created_at": when.isoformat().replace("+00:00", "Z"),
             "content": [{"type": "text", "text": text}], "attachments": [], "files": []}
            for n, (role, text, when) in enumerate(said)
        ]  # fmt: skip
        conversations.append({
            "uuid": f"spc-claude-{index}", "name": said[0][1][:40],
            "created_at": messages[0]["created_at"], "updated_at": messages[-1]["created_at"],
            "chat_messages": messages,
        })  # fmt: skip
    return conversations


def jsonl(dialogues_: list[list[tuple[str, str]]]) -> str:
    """One `{thread, role, text, time}` per line; even threads in epoch seconds, odd in ISO."""
    lines = []
    for index, dialogue in enumerate(dialogues_):
        for role, text, when in timed(dialogue, index + 2):
            stamp: object = int(when.timestamp()) if index % 2 == 0 else when.isoformat()
            record = {"thread": f"spc-jsonl-{index}", "role": role, "text": text, "time": stamp}
            lines.append(json.dumps(record, ensure_ascii=False))
    return "\n".join(lines) + "\n"


def main() -> None:
    commit, found = dialogues(sys.argv[1] if len(sys.argv) > 1 else MIRROR)
    picked = chosen(found, 3 * PER_EXPORT, "export")
    write = lambda name, text: (HERE / name).write_text(text, encoding="utf-8")  # noqa: E731
    write("import_chatgpt.json", json.dumps(chatgpt(picked[:PER_EXPORT]), indent=1) + "\n")
    write("import_claude.json",
          json.dumps(claude(picked[PER_EXPORT : 2 * PER_EXPORT]), indent=1) + "\n")  # fmt: skip
    write("import_chats.jsonl", jsonl(picked[2 * PER_EXPORT :]))
    pool = chosen(found, POOL, "bench")
    write("import_dialogues.jsonl", "".join(
        json.dumps([{"role": r, "text": t} for r, t in d], ensure_ascii=False) + "\n" for d in pool
    ))  # fmt: skip
    print(f"from {SOURCE} at {commit}: {len(found)} dialogues, {3 * PER_EXPORT} exported, "
          f"{POOL} in the pool")  # fmt: skip


if __name__ == "__main__":
    main()
