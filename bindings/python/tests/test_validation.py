"""A segment that cannot be trusted is refused with the matching exception, at once.

The segments here are forged by the test, with the producer's liveness lock (an OFD lock
on byte 0, PROTOCOL.md) held so that the library inspects them instead of waiting for a
live producer."""

from __future__ import annotations

import fcntl
import os
import struct
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import shmloader


@pytest.fixture
def forge(job: str, shm_dir: Path, library: None) -> Iterator:
    fds: list[int] = []

    def forge_(data: bytes, mode: int = 0o600) -> Path:
        path = shm_dir / f"shmloader-{os.getuid()}-{job}-r0"
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, mode)
        fds.append(fd)
        os.fchmod(fd, mode)
        os.write(fd, data)
        lock = struct.pack("hhqqi4x", fcntl.F_WRLCK, os.SEEK_SET, 0, 1, 0)  # struct flock
        fcntl.fcntl(fd, fcntl.F_OFD_SETLK, lock)
        return path

    yield forge_
    for fd in fds:
        os.close(fd)


def header(magic: bytes = b"SHMLRING", version: int = 5) -> bytes:
    return (magic + struct.pack("<I", version)).ljust(8192, b"\0")


@pytest.mark.parametrize(
    "data,mode,cls,code_name",
    [
        (header(magic=b"NOTARING"), 0o600, shmloader.Corrupt, "SHML_EMAGIC"),
        (header(version=4), 0o600, shmloader.VersionMismatch, "SHML_EVERSION"),
        (header(version=6), 0o600, shmloader.VersionMismatch, "SHML_EVERSION"),
        (header(), 0o644, shmloader.PermissionDenied, "SHML_EPERM"),
        (header()[:100], 0o600, shmloader.Corrupt, "SHML_ESIZE"),
    ],
    ids=["magic", "older version", "newer version", "mode", "size"],
)
def test_untrusted_segment_is_refused(forge, job, shm_dir, data, mode, cls, code_name):
    forge(data, mode)
    start = time.monotonic()
    with pytest.raises(cls) as info:
        shmloader.attach(job, 0, timeout=5, dir=shm_dir)
    assert time.monotonic() - start < 1.0  # refused, not waited on
    assert info.value.code_name == code_name
    assert f"job={job!r} rank=0" in str(info.value)
    if code_name == "SHML_EVERSION":  # names both versions
        theirs = struct.unpack("<I", data[8:12])[0]
        assert f"speaks ring protocol version {theirs}, this library 5" in str(info.value)


def test_bad_job_name_is_invalid_argument(shm_dir, library):
    for bad in ("../etc", "a b", "-x", "x" * 41):
        with pytest.raises(shmloader.InvalidArgument) as info:
            shmloader.attach(bad, 0, timeout=5, dir=shm_dir)
        assert "[A-Za-z0-9_.-]" in str(info.value) and repr(bad) in str(info.value)
    with pytest.raises(shmloader.InvalidArgument):
        shmloader.attach("ok", -1, dir=shm_dir)


def test_python_mirror_of_the_header_matches_the_library(library):
    from shmloader import _lib
    from shmloader.errors import CODE_NAMES

    lib = _lib.lib()
    for code, name in CODE_NAMES.items():
        assert lib.shml_errname(code).decode() == name
        assert lib.shml_strerror(code)
    assert lib.shml_errname(-99).decode() == "SHML_UNKNOWN"
    for code, (name, typestr) in _lib.DTYPES.items():
        assert lib.shml_dtype_name(code).decode() == name
        assert lib.shml_dtype_size(code) == int(typestr[2:])
    assert lib.shml_dtype_size(99) == 0
