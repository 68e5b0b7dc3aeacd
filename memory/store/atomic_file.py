"""Writing a small file whole or not at all: beside it, fsync, rename, fsync the folder."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO


@contextmanager
def replaced_atomically(path: Path, *, prefix: str | None = None) -> Iterator[BinaryIO]:
    """A binary handle on a temporary file beside `path` (named `prefix`, default the file's
    name) that replaces `path` when the block ends without error, so that a crash leaves the old
    file or the new one, never half of either; removed when anything fails."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(
        prefix=prefix if prefix is not None else path.name, suffix=".tmp", dir=path.parent
    )
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    fsync_directory(path.parent)


def write_text_atomically(path: Path, text: str, *, prefix: str | None = None) -> None:
    """Replace `path` with `text` (UTF-8), whole or not at all (`replaced_atomically`)."""
    with replaced_atomically(path, prefix=prefix) as handle:
        handle.write(text.encode("utf-8"))


def fsync_directory(directory: Path) -> None:
    """Make a rename itself durable (POSIX); a no-op where directories cannot be opened."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
