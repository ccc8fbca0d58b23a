/* errors.c - error texts and dtype names. */
#include "internal.h"

SHML_API int shml_abi_version(void) { return SHML_ABI_VERSION; }

SHML_API int shml_protocol_version(void) { return SHML_PROTOCOL_VERSION; }

SHML_API const char *shml_strerror(int err) {
  switch (err) {
  case SHML_OK: return "success";
  case SHML_ETIMEOUT: return "timed out (no batch, or no live producer to attach to, in time)";
  case SHML_EGONE: return "the producer died or stopped";
  case SHML_EEOS: return "end of stream: the producer finished";
  case SHML_EEPOCH: return "end of epoch";
  case SHML_EMAGIC: return "not a shmloader ring (bad magic)";
  case SHML_EVERSION: return "ring protocol version differs from this library's";
  case SHML_ESIZE: return "ring geometry inconsistent with itself or the file size";
  case SHML_EOFFSET: return "a tensor extent lies outside its slot or overlaps another";
  case SHML_ESCHEMA: return "a schema entry is malformed";
  case SHML_ECORRUPT: return "a slot header, counter or identity field is inconsistent";
  case SHML_EBUSY: return "rank already has a consumer";
  case SHML_EHELD:
    return "too many batches held (slot_count-1, or the oldest held one blocks the ring): "
           "release one first";
  case SHML_EINVAL: return "invalid argument";
  case SHML_EPERM: return "segment is not a 0600 regular file owned by this user";
  case SHML_ENOMEM: return "out of memory";
  case SHML_ESYS: return "a system call failed (see shml_errno)";
  case SHML_ESEEK:
    return "seek not answered: the producer finished its stream before it saw the request";
  case SHML_ERANK: return "no such rank: the job's live producer serves fewer ranks";
  case SHML_ERANGE:
    return "seek beyond the run: epoch past the run's epochs, or step past the epoch's steps";
  default: return "unknown shmloader error";
  }
}

SHML_API const char *shml_errname(int err) {
  switch (err) {
  case SHML_OK: return "SHML_OK";
  case SHML_ETIMEOUT: return "SHML_ETIMEOUT";
  case SHML_EGONE: return "SHML_EGONE";
  case SHML_EEOS: return "SHML_EEOS";
  case SHML_EEPOCH: return "SHML_EEPOCH";
  case SHML_EMAGIC: return "SHML_EMAGIC";
  case SHML_EVERSION: return "SHML_EVERSION";
  case SHML_ESIZE: return "SHML_ESIZE";
  case SHML_EOFFSET: return "SHML_EOFFSET";
  case SHML_ESCHEMA: return "SHML_ESCHEMA";
  case SHML_ECORRUPT: return "SHML_ECORRUPT";
  case SHML_EBUSY: return "SHML_EBUSY";
  case SHML_EHELD: return "SHML_EHELD";
  case SHML_EINVAL: return "SHML_EINVAL";
  case SHML_EPERM: return "SHML_EPERM";
  case SHML_ENOMEM: return "SHML_ENOMEM";
  case SHML_ESYS: return "SHML_ESYS";
  case SHML_ESEEK: return "SHML_ESEEK";
  case SHML_ERANK: return "SHML_ERANK";
  case SHML_ERANGE: return "SHML_ERANGE";
  default: return "SHML_UNKNOWN";
  }
}

SHML_API size_t shml_dtype_size(int32_t dtype) {
  switch (dtype) {
  case SHML_BOOL: case SHML_UINT8: case SHML_INT8: return 1;
  case SHML_UINT16: case SHML_INT16: case SHML_FLOAT16: case SHML_BFLOAT16: return 2;
  case SHML_UINT32: case SHML_INT32: case SHML_FLOAT32: return 4;
  case SHML_UINT64: case SHML_INT64: case SHML_FLOAT64: return 8;
  default: return 0;
  }
}

SHML_API const char *shml_dtype_name(int32_t dtype) {
  switch (dtype) {
  case SHML_BOOL: return "bool";
  case SHML_UINT8: return "uint8";
  case SHML_INT8: return "int8";
  case SHML_UINT16: return "uint16";
  case SHML_INT16: return "int16";
  case SHML_UINT32: return "uint32";
  case SHML_INT32: return "int32";
  case SHML_UINT64: return "uint64";
  case SHML_INT64: return "int64";
  case SHML_FLOAT16: return "float16";
  case SHML_BFLOAT16: return "bfloat16";
  case SHML_FLOAT32: return "float32";
  case SHML_FLOAT64: return "float64";
  default: return "unknown";
  }
}
