"""`make import-chats` reads ChatGPT, Claude and JSONL exports into one neutral form: every
user and assistant message of the kept branch, in order, at the time it was said; what it
leaves out it names, with where and why."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memory.integration.importing.formats import UnreadableExport, read_export
from memory.integration.importing.records import ParsedExport, thread_id_for
from memory.integration.importing.turns import turns_of

DATA = Path(__file__).parents[1] / "data"
FIXTURES = {"chatgpt": "import_chatgpt.json", "claude": "import_claude.json",
            "jsonl": "import_chats.jsonl"}  # fmt: skip


def source_messages(name: str) -> list[list[tuple[str, str, float]]]:
    """The fixture's messages as the file lists them (role, text, epoch), per conversation."""
    if name == "jsonl":
        threads: dict[str, list[tuple[str, str, float]]] = {}
        for line in (DATA / FIXTURES[name]).read_text().splitlines():
            r = json.loads(line)
            stamp = r["time"]
            when = stamp if isinstance(stamp, int) else datetime.fromisoformat(stamp).timestamp()
            threads.setdefault(r["thread"], []).append((r["role"], r["text"], float(when)))
        return list(threads.values())
    data = json.loads((DATA / FIXTURES[name]).read_text())
    if name == "claude":
        return [[("user" if m["sender"] == "human" else "assistant", m["text"],
                  datetime.fromisoformat(m["created_at"]).timestamp())
                 for m in c["chat_messages"]] for c in data]  # fmt: skip
    found = []
    for c in data:
        chain, node = [], c["current_node"]
        while node is not None:
            message = c["mapping"][node]["message"]
            if message and message["author"]["role"] in ("user", "assistant"):
                chain.append((message["author"]["role"], message["content"]["parts"][0],
                              message["create_time"]))  # fmt: skip
            node = c["mapping"][node]["parent"]
        found.append(chain[::-1])
    return found


@pytest.mark.parametrize("name", FIXTURES)
def test_each_format_gives_every_message_in_order_at_its_time(name: str) -> None:
    export = read_export(DATA / FIXTURES[name])
    assert export.format == name
    expected = source_messages(name)
    assert [[(m.role, m.text, m.time) for m in c.messages] for c in export.conversations] == (
        expected
    )
    assert len(export.conversations) == 4 and export.message_count > 90
    times = [m.time for c in export.conversations for m in c.messages]
    first, last = (datetime.fromtimestamp(t, UTC) for t in (min(times), max(times)))
    assert (last - first).days > 150  # spread over the year
    assert all(len(c.thread_id) == len("import-") + 16 for c in export.conversations)


def test_chatgpt_keeps_the_branch_the_user_kept() -> None:
    export = read_export(DATA / FIXTURES["chatgpt"])
    texts = [m.text for c in export.conversations for m in c.messages]
    assert "An answer the user regenerated." not in texts
    # The hidden system message of each conversation is left out, and said so.
    assert [s.reason for s in export.skipped_messages] == ["system or tool message"] * 4


def test_the_format_can_be_named_and_a_wrong_one_is_refused(tmp_path: Path) -> None:
    assert read_export(DATA / FIXTURES["claude"], "claude").format == "claude"
    with pytest.raises(UnreadableExport, match="JSON list"):
        read_export(DATA / FIXTURES["jsonl"], "chatgpt")


def test_turns_are_user_messages_with_their_replies_context_and_time() -> None:
    conversation = read_export(DATA / FIXTURES["claude"]).conversations[0]
    turns = list(turns_of(conversation))
    users = [m for m in conversation.messages if m.role == "user"]
    assert [t.user_text for t in turns] == [m.text for m in users]
    assert [t.said_at for t in turns] == [m.said_at for m in users]
    second = turns[1]
    assert second.context[-1] == {"role": "assistant", "content": conversation.messages[1].text}
    assert second.turn_id == f"import:{conversation.thread_id}:{users[1].message_id}"
    assert [t.turn_id for t in turns] == [t.turn_id for t in turns_of(conversation)]  # stable


def write(tmp_path: Path, name: str, content: object) -> Path:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


def reasons(export: ParsedExport) -> list[tuple[str, str]]:
    return [(s.where, s.reason) for s in export.skipped_messages]


def test_messages_left_out_are_named_with_their_reason(tmp_path: Path) -> None:
    lines = [
        {"thread": "a", "role": "user", "text": "I grow tomatoes.", "time": "2025-05-01T10:00:00Z"},
        {"thread": "a", "role": "user", "text": "   ", "time": 1746093700},
        {"thread": "a", "role": "narrator", "text": "Later that day", "time": 1746093800},
        {"thread": "a", "role": "user", "text": "I grow basil.", "time": "last tuesday"},
        {"thread": "a", "role": "user", "text": "I grow tomatoes.", "time": 1746093600},
    ]
    text = "\n".join(json.dumps(line) for line in lines) + "\n{not json\n"
    export = read_export(write(tmp_path, "chats.jsonl", text))
    [conversation] = export.conversations
    assert [m.text for m in conversation.messages] == ["I grow tomatoes."]
    assert conversation.thread_id == thread_id_for("a")
    assert reasons(export) == [
        ("thread 'a', line 2", "empty text"),
        ("thread 'a', line 3", "unknown role 'narrator'"),
        ("thread 'a', line 4", "unreadable time 'last tuesday'"),
        ("thread 'a', line 5", "duplicate"),
        ("line 6", "not JSON (Expecting property name enclosed in double quotes)"),
    ]


def test_a_malformed_conversation_is_skipped_by_name_and_the_rest_read(tmp_path: Path) -> None:
    good = json.loads((DATA / FIXTURES["chatgpt"]).read_text())[1]
    broken = {**good, "title": "Broken one", "current_node": "nowhere"}
    export = read_export(write(tmp_path, "conversations.json", [broken, "junk", good]))
    assert len(export.conversations) == 1
    assert [(s.where, s.reason) for s in export.skipped_conversations] == [
        ("conversation #1 'Broken one'", "current_node 'nowhere' is not in its mapping"),
        ("conversation #2", "not a JSON object"),
    ]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot be read"),
        ('[{"title": "x", "mapping": {', "broken JSON at line 1, column 29"),
        ("[]", "no conversations"),
        ('[{"title": "x"}]', "neither 'mapping'"),
        ("hello, world\n", "not a ChatGPT or Claude"),
        ("PK\x03\x04", "zip archive"),
    ],
)
def test_a_file_that_is_no_export_is_refused_naming_it(
    tmp_path: Path, content: str | None, message: str
) -> None:
    path = tmp_path / "export.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(UnreadableExport, match=message) as raised:
        read_export(path)
    assert str(path) in str(raised.value)
