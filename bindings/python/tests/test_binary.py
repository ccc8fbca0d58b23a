"""shmloader._binary.find_binary: where the producer binary is looked for, in which order,
and that it never returns the package's own console script."""

from __future__ import annotations

from pathlib import Path

import pytest

import shmloader._binary as binary
from shmloader.errors import BinaryNotFound

CONSOLE_SCRIPT = """\
#!/usr/bin/python3
# -*- coding: utf-8 -*-
import re
import sys
from shmloader._cli import main
if __name__ == '__main__':
    sys.exit(main())
"""


def executable(path: Path, content: bytes = b"\x7fELF\x02\x01\x01") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    path.chmod(0o755)
    return path


@pytest.fixture
def nothing_local(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No $SHMLOADER_BIN, no bundled binary, no source tree, an empty $PATH."""
    monkeypatch.delenv("SHMLOADER_BIN", raising=False)
    monkeypatch.setattr(binary, "bundled", lambda: tmp_path / "pkg" / "bin" / "shmloader")
    monkeypatch.setattr(binary, "source_tree", lambda: None)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    return tmp_path


def test_env_first(nothing_local: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    executable(nothing_local / "pkg" / "bin" / "shmloader")
    chosen = executable(nothing_local / "chosen" / "shmloader")
    monkeypatch.setenv("SHMLOADER_BIN", str(chosen))
    assert binary.find_binary() == str(chosen)


def test_env_missing_is_an_error(nothing_local: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    executable(nothing_local / "pkg" / "bin" / "shmloader")
    monkeypatch.setenv("SHMLOADER_BIN", str(nothing_local / "nope"))
    with pytest.raises(BinaryNotFound, match="SHMLOADER_BIN"):
        binary.find_binary()


def test_bundled_before_path(nothing_local: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bundled = executable(nothing_local / "pkg" / "bin" / "shmloader")
    executable(nothing_local / "path" / "shmloader")
    monkeypatch.setenv("PATH", str(nothing_local / "path"))
    assert binary.find_binary() == str(bundled)


def test_path_skips_console_script(nothing_local: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wrapper = executable(nothing_local / "venv" / "bin" / "shmloader", CONSOLE_SCRIPT.encode())
    real = executable(nothing_local / "usr" / "bin" / "shmloader")
    monkeypatch.setenv("PATH", f"{wrapper.parent}:{real.parent}")
    assert binary.find_binary() == str(real)


def test_none_says_how_to_get_one(nothing_local: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wrapper = executable(nothing_local / "venv" / "bin" / "shmloader", CONSOLE_SCRIPT.encode())
    monkeypatch.setenv("PATH", str(wrapper.parent))
    with pytest.raises(BinaryNotFound) as exc:
        binary.find_binary()
    assert isinstance(exc.value, FileNotFoundError)
    message = str(exc.value)
    assert "make build" in message and "make wheel" in message, message


def test_source_tree_of_this_checkout() -> None:
    # This package sits in the repository: its build/bin/shmloader is a candidate.
    src = binary.source_tree()
    assert src is not None and src.parts[-3:] == ("build", "bin", "shmloader"), src
    assert (src.parents[2] / "go.mod").is_file()
