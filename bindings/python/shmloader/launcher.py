"""``shmloader.serve``: the producer as a child process, for a single script, a notebook or
a test::

    import shmloader

    with shmloader.serve("train.yaml", epochs=1, ranks=1) as server:
        with shmloader.attach(server.job) as loader:
            for batch in loader.epoch():
                ...

The child is ``shmloader serve`` with a control socket: it writes one line when trainers may
attach (``serve`` returns then), and stops, removing its segments, as soon as the socket
closes: at the end of the ``with`` block, at :meth:`Server.stop`, or when this process
dies, even by SIGKILL. It runs in its own session, so a Ctrl-C in a terminal or notebook
reaches this process, whose teardown then stops it cleanly.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from ._binary import find_binary
from .errors import InvalidArgument, ShmloaderError, Timeout
from .loader import Loader
from .loader import attach as _attach

# Keyword overrides and the serve flags they become (each overrides a config key, or is
# one of serve's own options).
_FLAGS = {
    "dataset", "ranks", "node_rank", "node_count", "workers", "prefetch", "cache_dir",
    "cache_size", "partitions", "seed", "epochs", "batch_size", "depth", "progress",
    "drain_timeout", "start_epoch", "start_step", "resume", "metrics", "log_format",
    "log_level", "cpuprofile",
}  # fmt: skip


class ServeFailed(ShmloaderError):
    """The producer could not start, or ended with an error. ``returncode`` is its exit
    status (None while it runs); ``output`` the end of what it wrote."""

    def __init__(self, message: str, *, returncode: int | None, output: str) -> None:
        super().__init__(message)
        self.returncode = returncode
        self.output = output


class Server:
    """A running ``shmloader serve`` child. Create it with :func:`shmloader.serve`."""

    job: str
    dir: str
    ranks: int
    pid: int
    metrics: str | None
    """``host:port`` of its Prometheus endpoint (``/metrics``), or None."""

    def __init__(
        self,
        proc: subprocess.Popen[bytes],
        control: socket.socket,
        log_path: Path,
        cleanup: list[Path],
        binary: str,
        echo: IO[str] | None,
    ) -> None:
        self._proc = proc
        self._control: socket.socket | None = control
        self._log_path = log_path
        self._cleanup = cleanup
        self._binary = binary
        self._echo_stop = threading.Event()
        self._echo: threading.Thread | None = None
        if echo is not None:
            self._echo = threading.Thread(target=self._tail, args=(echo,), daemon=True)
            self._echo.start()
        self.pid = proc.pid
        self.job, self.dir, self.ranks, self.metrics = "", "", 0, None
        self._final_output: str | None = None  # read before the log file is removed

    # -- start-up ------------------------------------------------------------------------

    def _wait_ready(self, timeout: float | None) -> None:
        deadline = None if timeout is None else time.monotonic() + timeout
        control = self._control
        assert control is not None
        buf = b""
        while b"\n" not in buf:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                self.stop()
                raise Timeout(
                    f"shmloader serve did not start serving within {timeout:g} s "
                    f"(reading the dataset?)\n{self.output(2000)}"
                )
            ready, _, _ = select.select([control], [], [], 0.1 if left is None else min(0.1, left))
            if not ready:
                continue
            chunk = control.recv(65536)
            if not chunk:  # serve exited before it was ready
                rc = self._proc.wait()
                self._close()
                raise ServeFailed(
                    f"shmloader serve exited with status {rc} before serving:\n{self.output(4000)}",
                    returncode=rc,
                    output=self.output(),
                )
            buf += chunk
        msg = json.loads(buf.split(b"\n", 1)[0])
        if not msg.get("ready"):
            rc = self._proc.wait()
            self._close()
            raise ServeFailed(
                f"shmloader serve: {msg.get('error', 'failed')}",
                returncode=rc,
                output=self.output(),
            )
        self.job, self.dir, self.ranks = str(msg["job"]), str(msg["dir"]), int(msg["ranks"])
        self.metrics = msg.get("metrics") or None

    # -- while it runs -------------------------------------------------------------------

    @property
    def returncode(self) -> int | None:
        """Exit status once it ended, else None."""
        return self._proc.poll()

    @property
    def running(self) -> bool:
        return self._proc.poll() is None

    def output(self, limit: int | None = None) -> str:
        """What serve wrote (its log and result lines), the last ``limit`` characters."""
        text = self._final_output
        if text is None:
            try:
                text = self._log_path.read_text(errors="replace")
            except OSError:
                return ""
        return text if limit is None else text[-limit:]

    def check(self) -> None:
        """Raise :class:`ServeFailed` if serve ended with an error."""
        rc = self._proc.poll()
        if rc not in (None, 0):
            raise ServeFailed(
                f"shmloader serve ended with status {rc}:\n{self.output(4000)}",
                returncode=rc,
                output=self.output(),
            )

    def attach(self, rank: int | None = None, **kwargs: Any) -> Loader:
        """:func:`shmloader.attach` to this server's job and directory."""
        self.check()
        kwargs.setdefault("dir", self.dir)
        return _attach(self.job, rank, **kwargs)

    def wait(self, timeout: float | None = None) -> int:
        """Wait for serve to finish its epochs (its trainers having read them); the exit
        status. Raises :class:`~shmloader.Timeout` past ``timeout``."""
        try:
            rc = self._proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise Timeout(
                f"shmloader serve (pid {self.pid}) still running after {timeout} s"
            ) from None
        self._close()
        return rc

    # -- teardown ------------------------------------------------------------------------

    def stop(self, timeout: float = 10.0) -> int:
        """Stop serve (closing the control socket, as SIGTERM would) and wait for it: its
        segments are removed. Escalates to SIGTERM, then SIGKILL (and removes what it
        left) if it does not end in ``timeout`` seconds. Returns its exit status."""
        if self._control is not None:
            self._control.close()
            self._control = None
        try:
            rc = self._proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self._proc.send_signal(signal.SIGTERM)
            try:
                rc = self._proc.wait(5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                rc = self._proc.wait()
                self._clean_segments()
        self._close()
        return rc

    def _clean_segments(self) -> None:
        if self.dir:
            subprocess.run(
                [self._binary, "clean", "--dir", self.dir], capture_output=True, timeout=30
            )

    def _close(self) -> None:
        """Once serve has ended: close the socket, stop the echo, keep the output in
        memory and remove the temporary files."""
        if self._control is not None:
            self._control.close()
            self._control = None
        self._echo_stop.set()
        if self._echo is not None and self._echo is not threading.current_thread():
            self._echo.join(timeout=2)
        if self._final_output is None:
            self._final_output = self.output()
        for path in self._cleanup:
            path.unlink(missing_ok=True)
        self._cleanup = []

    def _tail(self, out: IO[str]) -> None:
        with open(self._log_path, errors="replace") as f:
            while True:
                line = f.readline()
                if line:
                    out.write(line)
                    out.flush()
                    continue
                if self._echo_stop.is_set():
                    return
                time.sleep(0.05)

    def __enter__(self) -> Server:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        rc = self.stop()
        if exc_type is None and rc not in (0, None):
            self.check()

    def __repr__(self) -> str:
        state = "running" if self.running else f"exited {self.returncode}"
        return (
            f"<shmloader.Server job={self.job!r} ranks={self.ranks} pid={self.pid} {state}"
            + (f" metrics=http://{self.metrics}/metrics" if self.metrics else "")
            + ">"
        )


def _config_file(config: str | os.PathLike[str] | Mapping[str, Any]) -> tuple[str, Path | None]:
    """A config file for serve: the path given, or the mapping written to a temporary
    file (JSON is YAML) with relative paths made absolute against this process's cwd."""
    if isinstance(config, Mapping):
        cfg = dict(config)
        if isinstance(cfg.get("dataset"), str) and not os.path.isabs(cfg["dataset"]):
            cfg["dataset"] = os.path.abspath(cfg["dataset"])
        cache = cfg.get("cache")
        if isinstance(cache, Mapping) and isinstance(cache.get("dir"), str) and cache["dir"]:
            cfg["cache"] = {**cache, "dir": os.path.abspath(cache["dir"])}
        fd, name = tempfile.mkstemp(prefix="shmloader-config-", suffix=".yaml")
        with os.fdopen(fd, "w") as f:
            json.dump(cfg, f)
        return name, Path(name)
    path = os.fspath(config)
    if not os.path.isfile(path):
        raise InvalidArgument(f"serve: config {path!r} is not a file (relative to {os.getcwd()})")
    return path, None


def serve(
    config: str | os.PathLike[str] | Mapping[str, Any],
    *,
    job: str | None = None,
    dir: str | os.PathLike[str] | None = None,
    timeout: float | None = 120.0,
    echo: bool | IO[str] = False,
    binary: str | None = None,
    **overrides: Any,
) -> Server:
    """Start ``shmloader serve`` as a child process and return once trainers may attach.

    ``config`` is a YAML file or a dict of config keys (``shmloader serve --print-config``
    documents them). ``overrides`` set keys by their flag names (``epochs=1``,
    ``ranks=2``, ``cache_dir="/tmp/c"``, ``batch_size=1024``, ``metrics="off"`` ...). ``job``
    defaults to the config's, or to a fresh unique name for a dict without one; ``dir`` to
    ``$SHMLOADER_SHM_DIR`` or ``/dev/shm``. ``echo=True`` copies serve's log to
    ``sys.stderr`` (or to the stream given).

    Raises :class:`ServeFailed` (with serve's message) if it cannot start, and
    :class:`~shmloader.Timeout` if it does not serve within ``timeout`` seconds.
    """
    unknown = sorted(set(overrides) - _FLAGS)
    if unknown:
        raise InvalidArgument(
            f"serve: unknown override {', '.join(unknown)}; known: {', '.join(sorted(_FLAGS))}"
        )
    path, temp = _config_file(config)
    cleanup = [temp] if temp else []
    if job is None and isinstance(config, Mapping) and not config.get("job"):
        job = f"py{os.getpid()}-{uuid.uuid4().hex[:8]}"
    argv = [binary or find_binary(), "serve", "--config", path]
    if job is not None:
        argv += ["--job", job]
    if dir is not None:
        argv += ["--dir", os.fspath(dir)]
    for key, value in overrides.items():
        if isinstance(value, bool):
            value = str(value).lower()
        argv += [f"--{key.replace('_', '-')}", str(value)]
    fd, log_name = tempfile.mkstemp(prefix="shmloader-serve-", suffix=".log")
    log_path = Path(log_name)
    cleanup.append(log_path)
    parent, child = socket.socketpair()
    argv[4:4] = ["--control-fd", str(child.fileno())]
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=fd,
            stderr=fd,
            pass_fds=[child.fileno()],
            start_new_session=True,
        )
    except BaseException:
        parent.close()
        for p in cleanup:
            p.unlink(missing_ok=True)
        raise
    finally:
        child.close()
        os.close(fd)
    out = (sys.stderr if echo is True else echo) or None
    server = Server(proc, parent, log_path, cleanup, argv[0], out)
    _servers.add(server)
    try:
        server._wait_ready(timeout)
    except BaseException:
        if server.running:
            server.stop()
        raise
    return server


# A forked child (a DataLoader worker, say) must not keep its parent's servers alive: it
# closes its copies of their control sockets, so serve still sees the end when the parent
# goes, whatever the children do.
_servers: weakref.WeakSet[Server] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for server in list(_servers):
        control, server._control = server._control, None
        if control is not None:
            control.close()


os.register_at_fork(after_in_child=_after_fork_in_child)
