"""Finding and loading libshmloader.so, and the ctypes mirror of bindings/c/shmloader.h.

The library is looked up, in order, at:

1. ``$SHMLOADER_LIB``, when set (and then only there: an explicit path is never second-guessed);
2. ``libshmloader.so`` next to this file (``make c-build`` copies it there);
3. ``build/lib/libshmloader.so`` of the source tree this package sits in.

It is loaded once, on first use, so ``import shmloader`` works without it.
"""

from __future__ import annotations

import ctypes
import functools
import os
from pathlib import Path

from .errors import LibraryNotFound

LIB_NAME = "libshmloader.so"

# Mirrors of the #defines and enums in shmloader.h. The ring protocol version and
# everything about a producer's plan are the library's to tell (shml_protocol_version,
# shml_info.plan_version), not copied here.
ABI_VERSION = 5
MAX_DIMS = 5

OK = 0
ETIMEOUT = -1
EGONE = -2
EEOS = -3
EEPOCH = -4
EMAGIC = -5
EVERSION = -6
ESIZE = -7
EOFFSET = -8
ESCHEMA = -9
ECORRUPT = -10
EBUSY = -11
EHELD = -12
EINVAL = -13
EPERM = -14
ENOMEM = -15
ESYS = -16
ESEEK = -17
ERANK = -18
ERANGE = -19

# SHML_STOP_*: why a producer stopped (shml_stop_reason) -> ProducerGone.stop.
STOP_KINDS: dict[int, str] = {
    0: "none",
    1: "signal",
    2: "done",
    3: "idle",
    4: "abandoned",
    5: "unattached",
    6: "error",
    7: "died",
}

# dtype code -> (protocol name, numpy typestr). numpy has no bfloat16: it is exposed as
# little-endian uint16 holding the raw bits.
DTYPES: dict[int, tuple[str, str]] = {
    1: ("bool", "|b1"),
    2: ("uint8", "|u1"),
    3: ("int8", "|i1"),
    4: ("uint16", "<u2"),
    5: ("int16", "<i2"),
    6: ("uint32", "<u4"),
    7: ("int32", "<i4"),
    8: ("uint64", "<u8"),
    9: ("int64", "<i8"),
    10: ("float16", "<f2"),
    11: ("bfloat16", "<u2"),
    12: ("float32", "<f4"),
    13: ("float64", "<f8"),
}


class Tensor(ctypes.Structure):
    """shml_tensor."""

    _fields_ = [
        ("name", ctypes.c_char_p),
        ("dtype", ctypes.c_int32),
        ("ndim", ctypes.c_int32),
        ("shape", ctypes.c_int64 * MAX_DIMS),
        ("data", ctypes.c_void_p),
        ("nbytes", ctypes.c_size_t),
    ]


class BatchDesc(ctypes.Structure):
    """shml_batch."""

    _fields_ = [
        ("seq", ctypes.c_uint64),
        ("epoch", ctypes.c_uint64),
        ("step", ctypes.c_uint64),
        ("rows", ctypes.c_uint32),
        ("ntensors", ctypes.c_uint32),
        ("tensors", ctypes.POINTER(Tensor)),
        ("epoch_base", ctypes.c_uint64),
    ]


class InfoDesc(ctypes.Structure):
    """shml_info."""

    _fields_ = [
        ("base", ctypes.c_void_p),
        ("size", ctypes.c_size_t),
        ("slot_count", ctypes.c_uint32),
        ("slot_size", ctypes.c_uint64),
        ("batch_capacity", ctypes.c_uint32),
        ("rank", ctypes.c_uint32),
        ("ranks", ctypes.c_uint32),
        ("ntensors", ctypes.c_uint32),
        ("producer_pid", ctypes.c_int32),
        ("config_hash", ctypes.c_uint64),
        ("nodes", ctypes.c_uint32),
        ("node_rank", ctypes.c_uint32),
        ("elastic_limit", ctypes.c_uint64),
        ("steps_per_epoch", ctypes.c_uint64),
        ("epochs", ctypes.c_uint64),
        ("global_batches", ctypes.c_uint64),
        ("plan_version", ctypes.c_uint32),
    ]


class StateDesc(ctypes.Structure):
    """shml_state: a saved position, for shml_resume."""

    _fields_ = [
        ("epoch", ctypes.c_uint64),
        ("step", ctypes.c_uint64),
        ("base", ctypes.c_uint64),
        ("world", ctypes.c_uint64),
        ("config_hash", ctypes.c_uint64),
        ("plan_version", ctypes.c_uint32),
    ]


class SegmentDesc(ctypes.Structure):
    """shml_segment: what a segment's header says (shml_peek_segment)."""

    _fields_ = [
        ("version", ctypes.c_uint32),
        ("producer_alive", ctypes.c_int32),
        ("rank", ctypes.c_uint32),
        ("ranks", ctypes.c_uint32),
        ("producer_pid", ctypes.c_int32),
        ("sys_errno", ctypes.c_int32),
    ]


class StatsDesc(ctypes.Structure):
    """shml_stats."""

    _fields_ = [
        ("batches", ctypes.c_uint64),
        ("rows", ctypes.c_uint64),
        ("wait_ns", ctypes.c_uint64),
    ]


_c_consumer_p = ctypes.c_void_p

_SIGNATURES: dict[str, tuple[object, list[object]]] = {
    "shml_abi_version": (ctypes.c_int, []),
    "shml_protocol_version": (ctypes.c_int, []),
    "shml_attach": (
        ctypes.c_int,
        [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.POINTER(_c_consumer_p)],
    ),
    "shml_attach_dir": (
        ctypes.c_int,
        [
            ctypes.c_char_p,
            ctypes.c_char_p,
            ctypes.c_int,
            ctypes.c_int,
            ctypes.POINTER(_c_consumer_p),
        ],
    ),
    "shml_next": (ctypes.c_int, [_c_consumer_p, ctypes.c_int, ctypes.POINTER(BatchDesc)]),
    "shml_release": (ctypes.c_int, [_c_consumer_p, ctypes.POINTER(BatchDesc)]),
    "shml_seek": (ctypes.c_int, [_c_consumer_p, ctypes.c_uint64, ctypes.c_uint64]),
    "shml_seek_base": (
        ctypes.c_int,
        [_c_consumer_p, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64],
    ),
    "shml_seek_check": (
        ctypes.c_int,
        [
            _c_consumer_p,
            ctypes.c_uint64,
            ctypes.c_uint64,
            ctypes.c_uint64,
            ctypes.c_char_p,
            ctypes.c_size_t,
        ],
    ),
    "shml_resume": (
        ctypes.c_int,
        [
            _c_consumer_p,
            ctypes.POINTER(StateDesc),
            ctypes.POINTER(StateDesc),
            ctypes.c_char_p,
            ctypes.c_size_t,
        ],
    ),
    "shml_peek_segment": (
        ctypes.c_int,
        [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(SegmentDesc)],
    ),
    "shml_detach": (ctypes.c_int, [_c_consumer_p]),
    "shml_done": (ctypes.c_int, [_c_consumer_p]),
    "shml_stop_reason": (
        ctypes.c_int,
        [_c_consumer_p, ctypes.POINTER(ctypes.c_int), ctypes.c_char_p, ctypes.c_size_t],
    ),
    "shml_stall_reason": (ctypes.c_int, [_c_consumer_p, ctypes.c_char_p, ctypes.c_size_t]),
    "shml_info_get": (ctypes.c_int, [_c_consumer_p, ctypes.POINTER(InfoDesc)]),
    "shml_stats_get": (ctypes.c_int, [_c_consumer_p, ctypes.POINTER(StatsDesc)]),
    "shml_held": (ctypes.c_uint32, [_c_consumer_p]),
    "shml_errno": (ctypes.c_int, [_c_consumer_p]),
    "shml_strerror": (ctypes.c_char_p, [ctypes.c_int]),
    "shml_errname": (ctypes.c_char_p, [ctypes.c_int]),
    "shml_dtype_size": (ctypes.c_size_t, [ctypes.c_int32]),
    "shml_dtype_name": (ctypes.c_char_p, [ctypes.c_int32]),
}


def candidates() -> list[Path]:
    """The paths tried, in order."""
    env = os.environ.get("SHMLOADER_LIB")
    if env:
        return [Path(env)]
    here = Path(__file__).resolve().parent
    return [here / LIB_NAME, here.parent.parent.parent / "build" / "lib" / LIB_NAME]


@functools.cache
def lib() -> ctypes.CDLL:
    """The loaded library with every function's argtypes and restype declared."""
    tried: list[str] = []
    for path in candidates():
        if not path.is_file():
            tried.append(f"{path} (not found)")
            continue
        try:
            handle = ctypes.CDLL(str(path))
        except OSError as exc:
            tried.append(f"{path} ({exc})")
            continue
        missing = [name for name in _SIGNATURES if not hasattr(handle, name)]
        if missing:
            tried.append(f"{path} (lacks {', '.join(missing)})")
            continue
        for name, (restype, argtypes) in _SIGNATURES.items():
            fn = getattr(handle, name)
            fn.restype = restype
            fn.argtypes = argtypes
        abi = handle.shml_abi_version()
        if abi != ABI_VERSION:
            tried.append(f"{path} (ABI {abi}; this package speaks ABI {ABI_VERSION})")
            continue
        return handle
    raise LibraryNotFound(
        "cannot load libshmloader.so; tried: "
        + "; ".join(tried)
        + ". Build it with `make build` (or `make c-build`) from the repository root, "
        "or point $SHMLOADER_LIB at it."
    )


def strerror(code: int) -> str:
    """shml_strerror, usable before the library is found."""
    try:
        text = lib().shml_strerror(code)
    except LibraryNotFound:
        return f"error {code}"
    return text.decode("utf-8", "replace") if text else f"error {code}"


# Room for a reason the library writes (shml_resume, shml_seek_check): more than any needs.
WHY_BYTES = 1024


def peek_segment(dir: str | None, job: str, rank: int) -> tuple[int, SegmentDesc]:
    """shml_peek_segment: (code, what the header of ``rank``'s segment says), read without
    attaching; ``dir`` None: where attach looks."""
    out = SegmentDesc()
    c_dir = os.fsencode(dir) if dir is not None else None
    rc = lib().shml_peek_segment(c_dir, job.encode("utf-8"), rank, ctypes.byref(out))
    return int(rc), out
