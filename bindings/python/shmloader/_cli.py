"""The ``shmloader`` console script: runs the producer binary in this process's place.

``os.execv`` replaces the Python process with the binary (same pid, same argv, same stdio),
so exit statuses and signals (SIGTERM to stop ``serve``, SIGINT from a terminal) reach the
binary exactly as if it had been started directly.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import NoReturn

from ._binary import find_binary
from .errors import BinaryNotFound


def main() -> NoReturn:
    """Exec the producer binary with this process's arguments."""
    try:
        path = find_binary()
    except BinaryNotFound as exc:
        sys.stderr.write(f"shmloader: {exc}\n")
        raise SystemExit(127) from None
    # CPython starts with SIGPIPE and SIGXFSZ ignored, and an ignored signal stays ignored
    # across exec: give the binary the dispositions it would have had from a shell.
    for sig in (signal.SIGPIPE, signal.SIGXFSZ):
        signal.signal(sig, signal.SIG_DFL)
    try:
        os.execv(path, [sys.argv[0] or path, *sys.argv[1:]])
    except OSError as exc:
        sys.stderr.write(f"shmloader: cannot run {path}: {exc}\n")
        raise SystemExit(126) from None
