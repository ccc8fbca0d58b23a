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
    "log_level", "cpuprofile", "detach_grace", "start_grace",
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
        log_fd: int,
        binary: str,
        echo: IO[str] | None,
        config_path: str = "",
    ) -> None:
        self._proc = proc
        self._control: socket.socket | None = control
        self._log_fd = log_fd  # serve's stdout and stderr: an unlinked file, read with pread
        self._binary = binary
        self._config_path = config_path
        # Dropped without stop(): the socket's close stops serve as the end of a with
        # block would; the descriptors go with the object.
        self._finalizer = weakref.finalize(self, _drop, control, log_fd)
        self._echo_stop = threading.Event()
        self._echo: threading.Thread | None = None
        if echo is not None:
            self._echo = threading.Thread(target=self._tail, args=(echo,), daemon=True)
            self._echo.start()
        self.pid = proc.pid
        self._loaders: weakref.WeakSet[Loader] = weakref.WeakSet()  # attach()'s, for wait()
        self.job, self.dir, self.ranks, self.metrics = "", "", 0, None
        self._final_output: str | None = None  # read before the log is closed

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
            error = str(msg.get("error", "failed"))
            if self._config_path.startswith("/proc/self/fd/"):
                error = error.replace(self._config_path, "<config dict>")
            raise ServeFailed(f"shmloader serve: {error}", returncode=rc, output=self.output())
        self.job, self.dir, self.ranks = str(msg["job"]), str(msg["dir"]), int(msg["ranks"])
        self.metrics = msg.get("metrics") or None

    # -- while it runs -------------------------------------------------------------------

    @property
    def returncode(self) -> int | None:
        """Exit status once it ended, else None."""
        return self._proc.poll()

    @property
    def running(self) -> bool:
        """True while serve runs."""
        return self._proc.poll() is None

    def output(self, limit: int | None = None) -> str:
        """What serve wrote (its log and result lines), the last ``limit`` characters."""
        text = self._final_output
        if text is None:
            text = _read_all(self._log_fd).decode(errors="replace") if self._log_fd >= 0 else ""
        if self._config_path.startswith("/proc/self/fd/"):  # a config given as a dict
            text = text.replace(self._config_path, "<config dict>")
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
        loader = _attach(self.job, rank, **kwargs)
        self._loaders.add(loader)
        return loader

    def wait(self, timeout: float | None = None) -> int:
        """Wait for serve to finish its epochs (its trainers having read them); the exit
        status. Raises :class:`~shmloader.Timeout` past ``timeout``. A loader from
        :meth:`attach` that has finished the last epoch reads the end of its stream first
        (:meth:`Loader.read_end`), so serve is not left waiting for it."""
        for loader in list(self._loaders):
            if not loader.closed:
                loader.read_end()
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
        memory and close the log."""
        if self._control is not None:
            self._control.close()
            self._control = None
        self._echo_stop.set()
        if self._echo is not None and self._echo is not threading.current_thread():
            self._echo.join(timeout=2)
        if self._final_output is None:
            self._final_output = self.output()
        if self._log_fd >= 0:
            os.close(self._log_fd)
            self._log_fd = -1
        self._finalizer.detach()

    def _tail(self, out: IO[str]) -> None:
        at = 0
        while True:
            fd = self._log_fd
            chunk = os.pread(fd, 65536, at) if fd >= 0 else b""
            if chunk:
                at += len(chunk)
                out.write(chunk.decode(errors="replace"))
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


def _drop(control: socket.socket, log_fd: int) -> None:
    control.close()
    if log_fd >= 0:
        os.close(log_fd)


def _read_all(fd: int) -> bytes:
    parts, at = [], 0
    while chunk := os.pread(fd, 1 << 20, at):
        parts.append(chunk)
        at += len(chunk)
    return b"".join(parts)


def _config_file(config: str | os.PathLike[str] | Mapping[str, Any]) -> tuple[str, int]:
    """A config for serve: the path given (and -1), or the mapping written (JSON is YAML),
    with relative paths made absolute against this process's cwd, to a memory file that
    serve reads as /proc/self/fd/N: no file on disk, whatever happens to either process."""
    if isinstance(config, Mapping):
        cfg = dict(config)
        if isinstance(cfg.get("dataset"), str) and not os.path.isabs(cfg["dataset"]):
            cfg["dataset"] = os.path.abspath(cfg["dataset"])
        cache = cfg.get("cache")
        if isinstance(cache, Mapping) and isinstance(cache.get("dir"), str) and cache["dir"]:
            cfg["cache"] = {**cache, "dir": os.path.abspath(cache["dir"])}
        fd = os.memfd_create("shmloader-config.yaml")
        os.write(fd, json.dumps(cfg).encode())
        return f"/proc/self/fd/{fd}", fd
    path = os.fspath(config)
    if not os.path.isfile(path):
        raise InvalidArgument(f"serve: config {path!r} is not a file (relative to {os.getcwd()})")
    return path, -1


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

    Serve stops when this process goes, and, as any serve, once every trainer has
    detached and none attached again within ``detach_grace`` (60 s): in a notebook that
    pauses longer between loaders, pass ``detach_grace="none"``.

    Raises :class:`ServeFailed` (with serve's message) if it cannot start, and
    :class:`~shmloader.Timeout` if it does not serve within ``timeout`` seconds.
    """
    unknown = sorted(set(overrides) - _FLAGS)
    if unknown:
        raise InvalidArgument(
            f"serve: unknown override {', '.join(unknown)}; known: {', '.join(sorted(_FLAGS))}"
        )
    path, config_fd = _config_file(config)
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
    # serve's output goes to a file unlinked at once: readable here, gone with both ends.
    log_fd, log_name = tempfile.mkstemp(prefix="shmloader-serve-", suffix=".log")
    os.unlink(log_name)
    parent, child = socket.socketpair()
    argv[4:4] = ["--control-fd", str(child.fileno())]
    passed = [child.fileno()] + ([config_fd] if config_fd >= 0 else [])
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=log_fd,
            stderr=log_fd,
            pass_fds=passed,
            start_new_session=True,
        )
    except BaseException:
        parent.close()
        os.close(log_fd)
        raise
    finally:
        child.close()
        if config_fd >= 0:
            os.close(config_fd)
    out = (sys.stderr if echo is True else echo) or None
    server = Server(proc, parent, log_fd, argv[0], out, path)
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
