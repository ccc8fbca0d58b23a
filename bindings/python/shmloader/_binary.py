"""Finding the ``shmloader`` producer binary (the Go command that ``serve``s).

It is looked up, in order, at:

1. ``$SHMLOADER_BIN``, when set (and then only there: an explicit path is never second-guessed);
2. ``bin/shmloader`` inside this package, where the wheel (``make wheel``) bundles it;
3. ``build/bin/shmloader`` of the source tree this package sits in (``make build``), so an
   editable install of a checkout finds the binary built next to it;
4. ``shmloader`` on ``$PATH``, skipping this package's own console script of that name,
   which runs this lookup itself: finding it would exec it in a loop.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from .errors import BinaryNotFound

BIN_NAME = "shmloader"
ENV = "SHMLOADER_BIN"

_PACKAGE = Path(__file__).resolve().parent


def bundled() -> Path:
    """Where the wheel puts the binary (absent from an editable install)."""
    return _PACKAGE / "bin" / BIN_NAME


def source_tree() -> Path | None:
    """``build/bin/shmloader`` of the checkout this package is part of, if it is in one."""
    repo = _PACKAGE.parent.parent.parent
    if (repo / "go.mod").is_file() and (repo / "cmd" / BIN_NAME).is_dir():
        return repo / "build" / "bin" / BIN_NAME
    return None


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _is_console_script(path: Path) -> bool:
    """``path`` is the ``shmloader`` entry point pip writes for this package (a Python
    script calling ``shmloader._cli``), not the producer."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    return not head.startswith(b"\x7fELF") and b"shmloader._cli" in head


def _on_path() -> Path | None:
    """The first ``shmloader`` on ``$PATH`` that is not the console script."""
    seen: set[str] = set()
    for entry in os.environ.get("PATH", os.defpath).split(os.pathsep):
        if not entry or entry in seen:
            continue
        seen.add(entry)
        found = shutil.which(BIN_NAME, path=entry)
        if found and not _is_console_script(Path(found)):
            return Path(found)
    return None


def find_binary() -> str:
    """The path of the ``shmloader`` producer binary to run.

    Raises :class:`~shmloader.errors.BinaryNotFound` when ``$SHMLOADER_BIN`` names no
    executable file, or when none of the places above has one; the message says how to get
    one.
    """
    env = os.environ.get(ENV)
    if env:
        if not _executable(Path(env)):
            raise BinaryNotFound(f"${ENV} is {env!r}, which is not an executable file")
        return env
    tried = [bundled()]
    src = source_tree()
    if src is not None:
        tried.append(src)
    for path in tried:
        if _executable(path):
            return str(path)
    found = _on_path()
    if found is not None:
        return str(found)
    raise BinaryNotFound(
        "cannot find the shmloader producer binary; tried: "
        + ", ".join(f"{p} (not found)" for p in tried)
        + f", and ${{PATH}} (no {BIN_NAME} besides this package's console script). "
        "Build it with `make build` from the repository root (build/bin/shmloader) and put "
        f"it on $PATH or point ${ENV} at it, or install the wheel (`make wheel`, then "
        "`pip install build/dist/shmloader-*.whl`), which bundles it."
    )
