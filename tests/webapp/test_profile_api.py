"""The profile a user owns, over real HTTP against a real editor process and YAML files: GET and
PUT /memories/api/profile with the guard every write has, a hand-written `human` the writer no
longer rewrites, and export/import carrying it."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from tests.webapp.test_api import Editor

pytestmark = pytest.mark.slow


def test_the_profile_is_read_edited_and_pinned(base_url: str, data_dir: Path) -> None:
    editor = Editor(base_url, f"p-{uuid.uuid4().hex[:8]}", data_dir)
    empty = editor.get("profile")
    assert empty.status_code == 200
    assert {k: empty.json()[k] for k in ("persona", "human")} == {"persona": "", "human": ""}
    assert not editor.store.path.exists()  # reading created nothing

    # The writer seeds "human" from the memories; the page shows what the prompt gets.
    editor.store.seed_core_context(human="User lives in Oslo")
    assert editor.get("profile").json()["human"] == "User lives in Oslo"

    body = {"persona": "You are Ada's terse research aide.", "human": "Ada, a botanist in Oslo."}
    # The same guard as every write: no CSRF header, a form body, an unknown field.
    forged = editor.http.put(
        "profile", content=json.dumps(body), headers={"Content-Type": "application/json"}
    )
    assert forged.status_code == 403
    assert (
        editor.send("PUT", "profile", "persona=x", **{"Content-Type": "text/plain"}).status_code
        == 415
    )
    assert editor.send("PUT", "profile", {"goal": "x"}).json()["field"] == "goal"
    assert editor.send("PUT", "profile", {"human": 3}).json()["field"] == "human"
    assert editor.get("profile").json()["human"] == "User lives in Oslo"

    saved = editor.send("PUT", "profile", body)
    assert saved.status_code == 200 and saved.json()["human"] == body["human"]
    assert editor.get("profile").json()["persona"] == body["persona"]
    # Pinned: the writer's next seeding leaves the user's own words alone.
    editor.store.seed_core_context(human="User lives in Bergen")
    assert editor.get("profile").json()["human"] == body["human"]
    # A part left out stays as it is.
    editor.send("PUT", "profile", {"persona": ""})
    assert editor.get("profile").json() | {"updated_at": ""} == {
        "persona": "", "human": body["human"], "updated_at": "", "private_threads": []
    }  # fmt: skip
    # A conversation kept off the record is named by its id, and nothing else of it.
    editor.store.mark_private("thread-7")
    assert editor.get("profile").json()["private_threads"] == ["thread-7"]


def test_export_and_import_carry_the_profile_without_overwriting(
    base_url: str, data_dir: Path
) -> None:
    alice = Editor(base_url, f"a-{uuid.uuid4().hex[:8]}", data_dir)
    alice.send("POST", "memories", {"description": "User likes jasmine tea", "theme": "taste"})
    alice.send("PUT", "profile", {"persona": "Speak like a ship's captain.", "human": "Alice."})
    exported = alice.get("export").json()
    assert exported["profile"] == {"persona": "Speak like a ship's captain.", "human": "Alice."}

    fresh = Editor(base_url, f"f-{uuid.uuid4().hex[:8]}", data_dir)
    done = fresh.send("POST", "import", exported).json()
    assert done["profile"] == ["human", "persona"] and len(done["added"]) == 1
    assert {k: fresh.get("profile").json()[k] for k in ("persona", "human")} == exported["profile"]

    kept = Editor(base_url, f"k-{uuid.uuid4().hex[:8]}", data_dir)
    kept.send("PUT", "profile", {"human": "Kim, who wrote this herself."})
    assert kept.send("POST", "import", exported).json()["profile"] == ["persona"]
    assert kept.get("profile").json()["human"] == "Kim, who wrote this herself."
    bad = kept.send("POST", "import", {**exported, "profile": {"goal": "x"}})
    assert bad.status_code == 400 and bad.json()["field"] == "profile"
