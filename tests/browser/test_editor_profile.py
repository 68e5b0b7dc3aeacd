"""The editor's Profile form in Debian's Chromium: it shows the core context every reply starts
from, saves the user's own words (which the memory writer then leaves alone), and a request without
the CSRF header is refused while the page's own save works."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory.store.backends.yaml_files import YamlMemoryManager

try:
    from playwright import sync_api
except ImportError:
    sync_api = None

pytestmark = pytest.mark.slow


def test_the_profile_form_shows_and_saves_the_core_context(page, data_dir: Path, user: str) -> None:
    store = YamlMemoryManager(data_dir, user)
    store.seed_core_context(human="User lives in Oslo")
    store.add("User grows tomatoes", "identity", "seed")
    page.reload()
    # Each card says when its memory was last given to a reply.
    card = page.locator(".card", has_text="User grows tomatoes")
    sync_api.expect(card.locator(".last-used")).to_have_text("Last given to a reply never")
    page.locator("#profile").click()
    form = page.locator("dialog form")
    sync_api.expect(form.locator("textarea[name=human]")).to_have_value("User lives in Oslo")
    sync_api.expect(form.locator("textarea[name=persona]")).to_have_value("")
    form.locator("textarea[name=persona]").fill("You are a calm gardening coach.")
    form.locator("textarea[name=human]").fill("Mei, a gardener in Oslo; 叫她小梅。")
    form.locator("button[type=submit]").click()
    sync_api.expect(page.locator("#toast")).to_contain_text("Profile saved")
    block = store.get_core_context()
    assert block["persona"] == "You are a calm gardening coach."
    assert block["human"] == "Mei, a gardener in Oslo; 叫她小梅。"
    store.seed_core_context(human="User lives in Bergen")  # the writer's next refresh
    assert store.get_core_context()["human"] == "Mei, a gardener in Oslo; 叫她小梅。"

    # From the page's own origin, a PUT without the CSRF header is refused and changes nothing.
    status = page.evaluate(
        """async () => (await fetch("api/profile?user=" + new URLSearchParams(location.search)
          .get("user"), {method: "PUT", headers: {"Content-Type": "application/json",
          "X-Gulfstream-User": new URLSearchParams(location.search).get("user")},
          body: JSON.stringify({human: "forged"})})).status"""
    )
    assert status == 403
    assert store.get_core_context()["human"] == "Mei, a gardener in Oslo; 叫她小梅。"
    page.reload()
    page.locator("#profile").click()
    sync_api.expect(page.locator("dialog textarea[name=human]")).to_have_value(
        "Mei, a gardener in Oslo; 叫她小梅。"
    )
