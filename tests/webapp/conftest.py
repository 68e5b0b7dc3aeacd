"""Fixtures of the editor's HTTP tests."""

from tests.webapp.editor_process import base_url, data_dir

__all__ = ["base_url", "data_dir"]
