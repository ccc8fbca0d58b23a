"""Finding the ``shmloader`` producer binary: ``$SHMLOADER_BIN``, else the one bundled in
the wheel (``shmloader/bin/shmloader``), else ``build/bin/shmloader`` of the source tree this
package sits in, else ``shmloader`` on ``$PATH``."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from .errors import ShmloaderError

_HERE = Path(__file__).resolve().parent


def find_binary() -> str:
    """The path of the producer binary, or :class:`ShmloaderError` saying how to get one."""
    env = os.environ.get("SHMLOADER_BIN")
    if env:
        if not (os.path.isfile(env) and os.access(env, os.X_OK)):
            raise ShmloaderError(f"$SHMLOADER_BIN is {env!r}, which is not an executable file")
        return env
    for path in (_HERE / "bin" / "shmloader", _HERE.parent.parent.parent / "build" / "bin" / "shmloader"):
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    found = shutil.which("shmloader")
    if found and _is_go_binary(found):
        return found
    raise ShmloaderError(
        "cannot find the shmloader binary: install the wheel (make wheel; pip install "
        "build/dist/shmloader-*.whl), build it with `make build`, or set $SHMLOADER_BIN"
    )


def _is_go_binary(path: str) -> bool:
    """True for an ELF executable (not the wheel's Python console script, which would
    only find this package again)."""
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False
