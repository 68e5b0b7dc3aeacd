"""One contract for every memory backend: the same calls give the same results on each."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from memory.errors import MemoryNotFound
from memory.long_term import LongTermMemory
from memory.store.backends import langgraph_store as store_manager
from memory.store.item import MAX_DESCRIPTION_CHARS
from memory.store.manager import BaseMemoryManager, Change
from webapp.views import waterfall  # feature: editor

from .conftest import OpenManager

CHINESE = "用户喜欢在周末去西湖边骑自行车，讨厌下雨天。"
ENGLISH = "The user is allergic to peanuts and prefers tea over coffee."


def _snapshot(manager: BaseMemoryManager) -> dict[str, object]:
    """Everything a user could look at, to compare before/after or across a reopen."""
    return {
        "show": sorted(manager.show(), key=lambda row: row["id"]),
        "items": {i: item.to_dict() for i, item in manager.list_items().items()},
        "deleted": {i: item.to_dict() for i, item in manager.deleted_items().items()},
        "revision": manager.revision,
    }


def test_add_show_get_round_trip_chinese_and_english(manager: BaseMemoryManager) -> None:
    zh = manager.add(CHINESE, "爱好", "用户自己说的")
    en = manager.add(ENGLISH, "health")
    assert zh != en
    shown = {row["id"]: row for row in manager.show()}
    assert shown == {
        zh: {"id": zh, "description": CHINESE, "theme": "爱好"},
        en: {"id": en, "description": ENGLISH, "theme": "health"},
    }
    item = manager.get(zh)
    assert (item.description, item.theme, item.hit, item.deleted) == (CHINESE, "爱好", 0, False)
    assert item.history[0]["action"] == "create"
    assert item.history[0]["reason"] == "用户自己说的"
    assert item.latest_update_time == item.history[0]["time"]
    assert set(manager.list_items()) == {zh, en}


def test_user_ids_with_dots_and_at_signs_work(open_manager: OpenManager, unique_user: str) -> None:
    user = f"ann.lee+{unique_user}@example.com".replace("+", "-")
    manager = open_manager(user)
    memory_id = manager.add(ENGLISH, "health")
    assert open_manager(user).get(memory_id).description == ENGLISH


def test_users_do_not_see_each_other(open_manager: OpenManager, unique_user: str) -> None:
    alice, bob = open_manager(unique_user + "-a"), open_manager(unique_user + "-b")
    alice_id = alice.add("alice likes jazz", "music")
    bob.add("bob likes metal", "music")
    assert [row["description"] for row in bob.show()] == ["bob likes metal"]
    with pytest.raises(MemoryNotFound):
        bob.get(alice_id)


def test_user_ids_differing_only_in_case_never_share_memories(
    open_manager: OpenManager, unique_user: str
) -> None:
    # On macOS and Windows `Bob.yaml` and `bob.yaml` would be one file; the stems differ.
    lower, upper = open_manager(unique_user + "-bob"), open_manager(unique_user + "-Bob")
    lower.add("bob likes jazz", "music")
    upper.add("Bob likes metal", "music")
    assert [row["description"] for row in lower.show()] == ["bob likes jazz"]
    assert [row["description"] for row in upper.show()] == ["Bob likes metal"]


def test_yaml_file_names_stay_distinct_without_case(tmp_path: Path) -> None:
    from memory.store.backends.yaml_files import YamlMemoryManager
    from memory.store.manager import file_stem

    names = {YamlMemoryManager(tmp_path, user).path.name for user in ["bob", "Bob", "BOB", "bOb"]}
    assert len({name.casefold() for name in names}) == 4
    assert file_stem("Alice.Smith@x") == "^alice.^smith@x"


def test_update_records_history_newest_first(manager: BaseMemoryManager) -> None:
    memory_id = manager.add("likes green tea", "food")
    manager.update(memory_id, "user changed taste", new_description="likes black tea")
    manager.update(memory_id, "better label", new_theme="drinks")
    item = manager.get(memory_id)
    assert (item.description, item.theme) == ("likes black tea", "drinks")
    history = manager.show_description_history(memory_id)
    assert [entry["action"] for entry in history] == ["update", "update", "create"]
    assert history[0]["reason"] == "better label"
    assert history[0]["previous_theme"] == "food"
    assert history[1]["previous_description"] == "likes green tea"
    assert history[1]["description"] == "likes black tea"
    assert [entry["time"] for entry in history] == sorted(
        (entry["time"] for entry in history), reverse=True
    )


def test_delete_is_a_tombstone_that_restore_undoes(manager: BaseMemoryManager) -> None:
    keep = manager.add("keep me", "misc")
    gone = manager.add("我住在杭州", "住处")
    assert manager.delete(gone, "用户说搬家了") == "我住在杭州"
    assert [row["id"] for row in manager.show()] == [keep]
    assert set(manager.list_items()) == {keep}
    assert set(manager.deleted_items()) == {gone}
    with pytest.raises(MemoryNotFound, match=gone):
        manager.get(gone)
    tombstone = manager.get(gone, include_deleted=True)
    assert tombstone.deleted and tombstone.description == "我住在杭州"
    assert manager.show_description_history(gone)[0]["action"] == "delete"
    with pytest.raises(MemoryNotFound, match=gone):
        manager.delete(gone)
    with pytest.raises(MemoryNotFound, match=gone):
        manager.hit(gone)

    manager.restore(gone, "mistake")
    assert {row["id"] for row in manager.show()} == {keep, gone}
    assert manager.deleted_items() == {}
    actions = [entry["action"] for entry in manager.show_description_history(gone)]
    assert actions == ["restore", "delete", "create"]
    with pytest.raises(ValueError, match="not deleted"):
        manager.restore(keep)


def test_merge_keeps_both_histories_and_tombstones_the_second(manager: BaseMemoryManager) -> None:
    first = manager.add("likes tea", "food", "said at breakfast")
    second = manager.add("喜欢喝茶", "饮食", "说过")
    manager.hit(first)
    manager.hit(second)
    manager.hit(second)
    manager.update(second, "typo", new_description="很喜欢喝茶")
    manager.merge(first, second, "loves tea (很喜欢喝茶)", "food", "same fact twice")

    merged = manager.get(first)
    assert (merged.description, merged.theme, merged.hit) == ("loves tea (很喜欢喝茶)", "food", 3)
    history = manager.show_description_history(first)
    assert history[0]["action"] == "merge"
    assert history[0]["merged_description"] == "很喜欢喝茶"
    reasons = {entry["reason"] for entry in history}
    assert {"said at breakfast", "说过", "typo", "same fact twice"} <= reasons
    assert [e["via"] for e in history if e.get("reason") in ("说过", "typo")] == ["merge"] * 2

    assert [row["id"] for row in manager.show()] == [first]
    absorbed = manager.deleted_items()[second]
    assert absorbed.history[-1]["action"] == "merged_into"
    assert absorbed.history[-1]["into"] == first
    with pytest.raises(ValueError, match="two different ids"):
        manager.merge(first, first, "x", "food", "r")
    with pytest.raises(MemoryNotFound, match=second):
        manager.merge(first, second, "x", "food", "r")


def test_hit_counts_and_purge_really_removes(manager: BaseMemoryManager) -> None:
    memory_id = manager.add("counts", "misc")
    assert [manager.hit(memory_id) for _ in range(3)] == [1, 2, 3]
    assert manager.get(memory_id).hit == 3
    tombstone = manager.add("old", "misc")
    manager.delete(tombstone)
    manager.purge(tombstone)
    manager.purge(memory_id)
    assert manager.show() == [] and manager.deleted_items() == {}
    for gone in (memory_id, tombstone):
        with pytest.raises(MemoryNotFound, match=gone):
            manager.get(gone, include_deleted=True)
        with pytest.raises(MemoryNotFound, match=gone):
            manager.purge(gone)


@pytest.mark.uses("editor")
def test_grouped_by_theme_newest_first_without_tombstones(manager: BaseMemoryManager) -> None:
    # The editor's waterfall (what `get_memories_grouped` gave before the redesign).
    old = manager.add("plays go", "爱好")
    other = manager.add("lives in Hangzhou", "place")
    new = manager.add("reads sci-fi", "爱好")
    hidden = manager.add("deleted hobby", "爱好")
    manager.delete(hidden)
    view = waterfall(LongTermMemory(manager))
    grouped = {group["theme"]: group["cards"] for group in view["groups"]}
    assert set(grouped) == {"爱好", "place"}
    assert [row["id"] for row in grouped["爱好"]] == [new, old]
    assert [row["id"] for row in grouped["place"]] == [other]
    assert (view["total"], view["themes"]) == (3, {"爱好": 2, "place": 1})
    place = grouped["place"][0]
    # A card says what the listing said, and leaves the history to the card's own view.
    assert {"id", "description", "theme", "hit", "latest_update_time"} <= set(place)
    assert "history" not in place
    item = manager.get(other)
    assert (place["description"], place["theme"], place["hit"], place["deleted"]) == (
        "lives in Hangzhou", "place", 0, False
    )  # fmt: skip
    assert place["latest_update_time"] == item.latest_update_time


def test_revision_changes_on_every_write_and_only_then(manager: BaseMemoryManager) -> None:
    seen = [manager.revision]

    def changed() -> bool:
        seen.append(manager.revision)
        return seen[-1] != seen[-2]

    first = manager.add("a", "t")
    assert changed()
    second = manager.add("b", "t")
    assert changed()
    manager.show(), manager.list_items(), manager.get(first), manager.read_document()
    manager.all_items(), manager.deleted_items(), manager.live_count(), manager.change_token()
    manager.get_core_context(), manager.has_applied("turn-1")
    waterfall(LongTermMemory(manager))  # feature: editor
    assert not changed()
    manager.update(first, "r", new_description="a2")
    assert changed()
    manager.hit(first)
    assert changed()
    manager.delete(second)
    assert changed()
    manager.restore(second)
    assert changed()
    manager.merge(first, second, "ab", "t", "r")
    assert changed()
    with pytest.raises(MemoryNotFound):
        manager.hit("missing")
    assert not changed()
    manager.apply([Change("hit", id=first)], "turn-1")
    assert changed()
    manager.apply([Change("hit", id=first)], "turn-1")
    assert not changed()
    manager.purge(second)
    assert changed()
    assert len(set(seen)) == 10


def test_apply_is_all_or_nothing(manager: BaseMemoryManager) -> None:
    kept = manager.add("stays as it is", "misc")
    before = _snapshot(manager)
    failing_batches = [
        ([Change("add", description="new one", theme="t"),
          Change("update", id=kept, description="changed", reason="r"),
          Change("hit", id="no-such-id"),
          Change("add", description="never", theme="t")], MemoryNotFound, "no-such-id"),
        ([Change("delete", id=kept),
          Change("add", description="", theme="t")], ValueError, "description"),
        ([Change("add", id="chosen", description="x", theme="t"),
          Change("add", id="chosen", description="y", theme="t")], ValueError, "chosen"),
        ([Change("hit", id=kept), Change("merge", id=kept, description="m", theme="t")],
         ValueError, "other_id"),
    ]  # fmt: skip
    for number, (changes, error, named) in enumerate(failing_batches):
        with pytest.raises(error, match=named):
            manager.apply(changes, f"bad-{number}")
        assert _snapshot(manager) == before
        assert not manager.has_applied(f"bad-{number}")


def test_apply_is_idempotent_per_turn(manager: BaseMemoryManager) -> None:
    target = manager.add("likes cats", "pets")
    changes = [
        Change("add", id="turn1-a", description="有一只猫叫咪咪", theme="宠物", reason="told"),
        Change("update", id=target, description="likes cats a lot", reason="emphasis"),
        Change("hit", id=target),
    ]
    assert not manager.has_applied("turn-1")
    first = manager.apply(changes, "turn-1")
    assert first.applied and first.results == ["turn1-a", None, 1]
    assert manager.has_applied("turn-1")
    after = _snapshot(manager)
    again = manager.apply(changes, "turn-1")
    assert not again.applied and again.results == []
    assert _snapshot(manager) == after
    assert manager.get("turn1-a").description == "有一只猫叫咪咪"
    assert manager.get(target).hit == 1
    with pytest.raises(ValueError, match="turn_id"):
        manager.apply(changes, "")


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.get("ghost-1"),
        lambda m: m.update("ghost-1", "r", new_description="x"),
        lambda m: m.delete("ghost-1"),
        lambda m: m.restore("ghost-1"),
        lambda m: m.hit("ghost-1"),
        lambda m: m.purge("ghost-1"),
        lambda m: m.show_description_history("ghost-1"),
        lambda m: m.merge(m.add("real", "t"), "ghost-1", "x", "t", "r"),
    ],
    ids=["get", "update", "delete", "restore", "hit", "purge", "history", "merge"],
)
def test_unknown_id_is_memory_not_found_naming_it(  # type: ignore[no-untyped-def]
    manager: BaseMemoryManager, call
) -> None:
    with pytest.raises(MemoryNotFound) as caught:
        call(manager)
    assert caught.value.memory_id == "ghost-1"
    assert "ghost-1" in str(caught.value)


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda m, i, j: m.add("", "t"), "description"),
        (lambda m, i, j: m.add("   ", "t"), "description"),
        (lambda m, i, j: m.add("x" * (MAX_DESCRIPTION_CHARS + 1), "t"), "description"),
        (lambda m, i, j: m.add("x", "two\nlines"), "theme"),
        (lambda m, i, j: m.add("x", "a theme that is far too long to be a label"), "theme"),
        (lambda m, i, j: m.add("x", ""), "theme"),
        (lambda m, i, j: m.update(i, "r", new_description=""), "new_description"),
        (lambda m, i, j: m.update(i, "r", new_theme="x" * 100), "new_theme"),
        (lambda m, i, j: m.update(i, "r"), "new_description or new_theme"),
        (lambda m, i, j: m.merge(i, j, "", "t", "r"), "merged_description"),
        (lambda m, i, j: m.merge(i, j, "ok", "a\nb", "r"), "merged_theme"),
        (lambda m, i, j: m.update(i, "r" * 5000, new_description="x"), "reason"),
    ],
)
def test_bad_fields_are_value_errors_naming_the_field(  # type: ignore[no-untyped-def]
    manager: BaseMemoryManager, call, field
) -> None:
    first, second = manager.add("existing", "t"), manager.add("another", "t")
    before = _snapshot(manager)
    with pytest.raises(ValueError, match=field) as caught:
        call(manager, first, second)
    assert not isinstance(caught.value, MemoryNotFound)
    assert _snapshot(manager) == before


@pytest.mark.parametrize(
    "hostile", ["../../etc", "..", "a/b", "a\\b", "", " ", "x" * 200, "用户", "-x", ".hidden", None]
)
def test_hostile_user_ids_are_refused(
    open_manager: OpenManager, tmp_path: Path, hostile: object
) -> None:
    before = sorted(p.name for p in tmp_path.parent.iterdir())
    with pytest.raises(ValueError, match="user_id"):
        open_manager(hostile)
    assert sorted(p.name for p in tmp_path.parent.iterdir()) == before
    assert not (tmp_path / "etc.yaml").exists()


def test_reopening_sees_everything(open_manager: OpenManager, unique_user: str) -> None:
    manager = open_manager(unique_user)
    a = manager.add(CHINESE, "爱好")
    b = manager.add(ENGLISH, "health")
    c = manager.add("temporary", "misc")
    manager.update(a, "更正", new_description=CHINESE + "（更正）")
    manager.hit(b)
    manager.delete(c, "no longer true")
    manager.apply([Change("add", id="from-turn", description="turn fact", theme="t")], "turn-7")
    before = _snapshot(manager)
    assert manager.self_check().status == "OK"

    reopened = open_manager(unique_user)
    assert _snapshot(reopened) == before
    assert reopened.has_applied("turn-7")
    assert reopened.show_description_history(a) == manager.show_description_history(a)
    report = reopened.self_check()
    assert (report.status, report.item_count) == ("OK", 3)


def test_listing_reads_past_one_search_page(
    manager: BaseMemoryManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_manager, "PAGE_SIZE", 3)  # stores return results in pages
    ids = [manager.add(f"第{n}条 memory {n}", "t") for n in range(8)]
    manager.delete(ids[0])
    for n in range(4):
        manager.apply([Change("hit", id=ids[1])], f"turn-{n}")
    assert {row["id"] for row in manager.show()} == set(ids[1:])
    assert list(manager.list_items()) == ids[1:]  # creation order on every backend
    assert set(manager.deleted_items()) == {ids[0]}
    document = manager._load_all()
    assert set(document.items) == set(ids)
    assert document.applied_turns == [f"turn-{n}" for n in range(4)]


def test_threads_sharing_one_manager_lose_no_write(manager: BaseMemoryManager) -> None:
    target = manager.add("shared by threads", "t")
    errors: list[BaseException] = []

    def work(number: int) -> None:
        try:
            for n in range(20):
                manager.hit(target)
                manager.add(f"thread {number} item {n}", "t")
        except BaseException as exc:  # surfaced below: a thread's exception is otherwise lost
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(number,)) for number in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == []
    assert manager.get(target).hit == 80
    assert len(manager.list_items()) == 81


def test_the_factory_opens_each_backend_by_spec(
    backend: str, tmp_path: Path, unique_user: str
) -> None:

    from memory.store.backends.langgraph_store import StoreMemoryManager
    from memory.store.backends.sqlite_db import SqliteMemoryManager
    from memory.store.backends.yaml_files import YamlMemoryManager
    from memory.store.factory import open_memory_manager

    from .conftest import POSTGRES_URL, _Stores

    specs = {
        "yaml": (f"yaml:{tmp_path}", YamlMemoryManager),
        "sqlite": (f"sqlite:{tmp_path / 'm.db'}", SqliteMemoryManager),
        "store-inmemory": ("store", StoreMemoryManager),
        "store-sqlite": ("store", StoreMemoryManager),
        "store-postgres": (f"postgres:{POSTGRES_URL}", StoreMemoryManager),
    }
    spec, kind = specs[backend]
    # `store` is whatever LangGraph store the server (or the compiled graph) passes in.
    store = _Stores(backend, tmp_path).open() if spec == "store" else None
    manager = open_memory_manager(spec, unique_user, store)
    assert isinstance(manager, kind)
    assert manager.self_check().status == "OK"
    memory_id = manager.add("opened by spec", "t")
    reopened = open_memory_manager(spec, unique_user, store)
    assert reopened.get(memory_id).description == "opened by spec"
    manager.purge(memory_id)  # Postgres is shared between runs
    with pytest.raises(ValueError, match="unknown memory backend"):
        open_memory_manager("mongo:x", unique_user)


def test_the_store_backend_without_a_store_is_refused_not_silently_in_memory(
    unique_user: str,
) -> None:
    """`GULFSTREAM_MEMORY_BACKEND=store` outside the server would forget everything at exit."""
    from memory.store.backends.langgraph_store import StoreMemoryManager
    from memory.store.factory import open_memory_manager

    with pytest.raises(ValueError, match=r"needs the LangGraph server.s store.*sqlite:"):
        open_memory_manager("store", unique_user)
    with pytest.raises(ValueError, match="unknown memory backend"):
        open_memory_manager("store:elsewhere", unique_user)
    throwaway = open_memory_manager("store:memory", unique_user)  # explicit, for tests
    assert isinstance(throwaway, StoreMemoryManager)
    throwaway.add("kept only in this process", "t")
    assert open_memory_manager("store:memory", unique_user).show() == []  # a new, empty store


def test_read_document_sees_the_core_context_seeded_after_it_was_read(
    manager: BaseMemoryManager,
) -> None:
    """The read cache is keyed on the revision, which core-context writes do not move: a
    snapshot written after the writer seeded the block must still carry it."""
    manager.add("User's name is Ada", "identity")
    assert manager.read_document().core_context == {}  # cached at this revision
    manager.seed_core_context(persona="helper", human="User's name is Ada")
    assert manager.read_document().core_context["human"] == "User's name is Ada"
