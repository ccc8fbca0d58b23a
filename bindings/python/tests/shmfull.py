"""Serve in a tmpfs of a given size, inside the mount namespace this process runs in.

test_shm_exhaustion.py runs it under `unshare --mount` (or, without root, under
`unshare --user --map-root-user --mount`), so the tmpfs it mounts is gone with it, even
if it dies. It prints one JSON line with what happened:

  start   serve, on a tmpfs smaller than its rings: its exit status, its error, the
          names left in the tmpfs;
  fill    serve and one trainer per rank, on a tmpfs just large enough; once every
          trainer holds a batch, a file fills the tmpfs to the last byte; then every
          process's exit status (a signal as a negative number), the rows each trainer
          got, and the names left once the filler is removed.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import servekit  # noqa: E402


def fill(path: Path) -> int:
    """Writes path until the file system is full; returns the bytes written."""
    chunk = b"\xa5" * (64 << 10)
    n = 0
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        while True:
            try:
                w = os.write(fd, chunk)
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
                if len(chunk) == 1:
                    return n
                chunk = chunk[: len(chunk) // 2]  # down to the last byte
                continue
            n += w
    finally:
        os.close(fd)


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--config", required=True)
    p.add_argument("--dir", required=True, help="mount point (an empty directory)")
    p.add_argument("--tmp", required=True, help="for the processes' logs and results")
    p.add_argument("--size", required=True, help="tmpfs size, as mount takes it")
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("mode", choices=["start", "fill"])
    a = p.parse_args()
    shm, tmp = Path(a.dir), Path(a.tmp)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={a.size},mode=0700", "tmpfs", str(shm)],
                   check=True, timeout=30)  # fmt: skip
    out: dict[str, object] = {"mode": a.mode}
    with servekit.Group(Path(a.bin), shm, tmp) as g:
        if a.mode == "start":
            serve = g.serve(Path(a.config), "tiny", "--epochs", "1")
            out["serve_rc"] = serve.wait(60)
            out["stderr"] = serve.stderr[-3000:]
            out["left"] = sorted(os.listdir(shm))
        else:
            ready = [tmp / f"ready{r}" for r in range(a.ranks)]
            cons = [g.consume("full", r, f"full-r{r}", "--keep", "ids", "--slow", "0.005",
                              "--ready", str(ready[r])) for r in range(a.ranks)]  # fmt: skip
            serve = g.serve(Path(a.config), "full", "--epochs", "1")
            deadline = time.monotonic() + 60
            while not all(r.exists() for r in ready):
                if time.monotonic() > deadline or serve.popen.poll() is not None:
                    print(json.dumps({"mode": a.mode, "error": "trainers never started",
                                      "serve": serve.describe()}))  # fmt: skip
                    return 1
                time.sleep(0.01)
            filler = shm / "filler"
            out["filled"] = fill(filler)
            st = os.statvfs(shm)
            out["free_after_fill"] = st.f_bavail * st.f_frsize
            out["consumer_rc"] = [c.wait(120) for c in cons]
            out["serve_rc"] = serve.wait(60)
            out["ids"] = [
                servekit.Result.load(c.prefix).tensors["id"].tolist()
                if c.popen.returncode == 0
                else []
                for c in cons
            ]
            out["serve_results"] = {str(k): v for k, v in serve.results().items()}
            out["stderr"] = serve.stderr[-3000:]
            filler.unlink()
            out["left"] = sorted(os.listdir(shm))
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
