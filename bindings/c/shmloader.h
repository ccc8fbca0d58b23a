/*
 * shmloader.h - consumer side of the shmloader shared-memory rings.
 *
 * A trainer process attaches to the ring of its local rank, takes batches with
 * shml_next, reads (or writes) the tensors in place, and hands each batch back with
 * shml_release. The wire format is ring/PROTOCOL.md.
 *
 * Plain C11: no threads, no signal handlers, no global state; every call returns an
 * error code (0 or a negative SHML_E* value) and shml_strerror explains it. Descriptors
 * are opened O_CLOEXEC. After fork, use a handle in one process only.
 */
#ifndef SHMLOADER_H
#define SHMLOADER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ABI of this header; bumped on any incompatible change. */
#define SHML_ABI_VERSION 5 /* 5: shml_info.plan_version, shml_state, shml_resume,
                              shml_seek_check, shml_segment, shml_peek_segment,
                              shml_protocol_version; 4: shml_done, shml_stop_reason, shml_stall_reason, SHML_STOP_*;
                              3: shml_info steps_per_epoch/epochs/global_batches, shml_stats,
                              SHML_ERANGE; 2: shml_batch.epoch_base, shml_info nodes/node_rank/
                              elastic_limit, shml_seek_base */
/* Ring protocol version this library speaks (PROTOCOL.md). */
#define SHML_PROTOCOL_VERSION 5

/* Error codes. 0 is success; everything else is negative. */
enum {
  SHML_OK = 0,
  SHML_ETIMEOUT = -1,  /* the wait ran past its timeout */
  SHML_EGONE = -2,     /* the producer died or stopped */
  SHML_EEOS = -3,      /* end of stream: the producer finished */
  SHML_EEPOCH = -4,    /* end of an epoch (not an error; see shml_next) */
  SHML_EMAGIC = -5,    /* segment magic is wrong: not a shmloader ring */
  SHML_EVERSION = -6,  /* protocol version differs from this library's */
  SHML_ESIZE = -7,     /* geometry inconsistent with itself or the file size */
  SHML_EOFFSET = -8,   /* a tensor extent lies outside its slot or overlaps another */
  SHML_ESCHEMA = -9,   /* a schema entry is malformed */
  SHML_ECORRUPT = -10, /* a slot header or counter is inconsistent */
  SHML_EBUSY = -11,    /* the ring already has a consumer */
  SHML_EHELD = -12,    /* holding slot_count-1 slots already: release one first */
  SHML_EINVAL = -13,   /* bad argument (job name, rank, batch not held, ...) */
  SHML_EPERM = -14,    /* segment not a 0600 regular file owned by this user */
  SHML_ENOMEM = -15,   /* out of memory */
  SHML_ESYS = -16,     /* a system call failed; see shml_errno */
  SHML_ESEEK = -17,    /* seek not answered: the producer finished its stream first */
  SHML_ERANK = -18,    /* no such rank: the job's live producer serves fewer ranks */
  SHML_ERANGE = -19,   /* seek beyond the run (epoch >= epochs, or step > steps) */
};

/* Why a producer stopped (shml_stop_reason). */
enum {
  SHML_STOP_NONE = 0,       /* running, or finished its stream (SHML_EEOS) */
  SHML_STOP_SIGNAL = 1,     /* SIGINT or SIGTERM, or its launcher went away */
  SHML_STOP_DONE = 2,       /* a trainer said the job is done (shml_done) */
  SHML_STOP_IDLE = 3,       /* every trainer detached and none came back in time */
  SHML_STOP_ABANDONED = 4,  /* a rank's trainer left and none came back in time */
  SHML_STOP_UNATTACHED = 5, /* a rank no trainer attached to in time */
  SHML_STOP_ERROR = 6,      /* an error: a damaged file, a full disk, ... */
  SHML_STOP_DIED = 7,       /* it died without a word: killed (kill -9, the OOM killer) or crashed */
};

/* dtype codes (PROTOCOL.md, "dtypes"). */
enum {
  SHML_BOOL = 1,
  SHML_UINT8 = 2,
  SHML_INT8 = 3,
  SHML_UINT16 = 4,
  SHML_INT16 = 5,
  SHML_UINT32 = 6,
  SHML_INT32 = 7,
  SHML_UINT64 = 8,
  SHML_INT64 = 9,
  SHML_FLOAT16 = 10,
  SHML_BFLOAT16 = 11,
  SHML_FLOAT32 = 12,
  SHML_FLOAT64 = 13,
};

#define SHML_MAX_DIMS 5 /* batch dimension + up to 4 per-row dimensions */

typedef struct shml_consumer shml_consumer;

/* One tensor of a held batch. data points into shared memory and stays valid until the
 * batch is released; shape[0] is the batch's row count. */
typedef struct {
  const char *name;
  int32_t dtype;
  int32_t ndim; /* 1 + per-row dimensions */
  int64_t shape[SHML_MAX_DIMS];
  void *data;
  size_t nbytes; /* rows * row_bytes */
} shml_tensor;

/* A held batch. Owned by the consumer; valid until shml_release or shml_detach. */
typedef struct {
  uint64_t seq;   /* position in this ring's stream */
  uint64_t epoch;
  uint64_t step;  /* batch index within the epoch for this rank */
  uint32_t rows;
  uint32_t ntensors;
  const shml_tensor *tensors;
  uint64_t epoch_base; /* global batch at which this epoch started: 0 unless it was
                          resumed under another world size (shml_seek_base) */
} shml_batch;

/* Ring geometry, for diagnostics and for pinning (cudaHostRegister on base/size). */
typedef struct {
  void *base;
  size_t size;
  uint32_t slot_count;
  uint64_t slot_size;
  uint32_t batch_capacity;
  uint32_t rank;
  uint32_t ranks;
  uint32_t ntensors;
  int32_t producer_pid;
  uint64_t config_hash;
  uint32_t nodes;         /* hosts of the job: the world is ranks * nodes trainers */
  uint32_t node_rank;     /* this host's index */
  uint64_t elastic_limit; /* the latest global batch an epoch may start at */
  uint64_t steps_per_epoch; /* this rank's batches in an epoch started at global batch 0 */
  uint64_t epochs;          /* epochs the run serves; 0: endless */
  uint64_t global_batches;  /* batches of an epoch over every rank of every node */
  uint32_t plan_version;    /* the producer's plan version (producer/plan): the rules a
                               position follows; 0 for a producer without a plan */
} shml_info;

/* A trainer's saved position, as a binding keeps it in a checkpoint (Python's
 * loader.state_dict()): the next batch is step `step` of `epoch`, in an epoch that started
 * at global batch `base`, in a job of `world` trainers. */
typedef struct {
  uint64_t epoch;
  uint64_t step;
  uint64_t base;         /* 0 unless the epoch was resumed under another world size */
  uint64_t world;        /* trainers of the job that saved it (ranks * nodes); 0: this job's */
  uint64_t config_hash;  /* shml_info.config_hash when it was saved; 0: not known */
  uint32_t plan_version; /* shml_info.plan_version when it was saved; 0: not known */
} shml_state;

/* What a segment's header says, read without attaching (shml_peek_segment). */
typedef struct {
  uint32_t version;       /* the segment's ring protocol version; 0 while being written */
  int32_t producer_alive; /* 1 while a producer holds the segment (its byte-0 lock) */
  /* From the identity line, where version is SHML_PROTOCOL_VERSION and the header names
   * the job and rank asked for; else 0. */
  uint32_t rank;
  uint32_t ranks;         /* rings of the job on this host */
  int32_t producer_pid;
  int32_t sys_errno;      /* errno of a SHML_ESYS */
} shml_segment;

/* This handle's counters since attach: what the trainer took and how long it waited. */
typedef struct {
  uint64_t batches; /* batches taken (markers not counted) */
  uint64_t rows;    /* rows of those batches */
  uint64_t wait_ns; /* time spent inside shml_next waiting for a batch */
} shml_stats;

/* Attach to ring `rank` of `job` in $SHMLOADER_SHM_DIR (default /dev/shm), waiting up to
 * timeout_ms (< 0: forever) for a live producer to create it. */
int shml_attach(const char *job, int rank, int timeout_ms, shml_consumer **out);
/* The same, in an explicit directory (NULL: as shml_attach). */
int shml_attach_dir(const char *dir, const char *job, int rank, int timeout_ms,
                    shml_consumer **out);

/* Take the next batch, waiting up to timeout_ms (< 0: forever). Returns SHML_OK with *out
 * filled, SHML_EEPOCH once at the end of each epoch (then the next epoch follows; *out
 * holds the marker's seq and the epoch that ended, with rows 0 and no tensors),
 * SHML_EEOS at the end of the stream (and on every later call), or an error.
 * A seek issued after the producer finished is reported as SHML_ESEEK, never as a
 * silent end of stream: where the stream ends before the producer acknowledged this
 * handle's last shml_seek, this call (and every later one) returns SHML_ESEEK instead
 * of SHML_EEOS. */
int shml_next(shml_consumer *c, int timeout_ms, shml_batch *out);

/* Hand a held batch back to the producer. Batches may be released in any order. */
int shml_release(shml_consumer *c, const shml_batch *b);

/* Reposition this rank's stream: the next batch delivered is (epoch, step). Every held
 * batch is released first (PROTOCOL.md "Seek"). SHML_ERANGE, with nothing changed, when
 * the position lies beyond the run: epoch >= shml_info.epochs (unless endless) or
 * step > steps_per_epoch (step == steps_per_epoch is the epoch's end). Only a running producer answers a seek:
 * a seek issued after the producer finished is reported as SHML_ESEEK, never as a silent
 * end of stream (shml_next returns SHML_ESEEK where it would have returned SHML_EEOS). */
int shml_seek(shml_consumer *c, uint64_t epoch, uint64_t step);
/* shml_seek to step of an epoch started at global batch base (<= elastic_limit, else
 * SHML_ERANGE): where a position saved under another world size continues
 * (producer/plan/doc.go). */
int shml_seek_base(shml_consumer *c, uint64_t epoch, uint64_t step, uint64_t base);

/* SHML_OK when shml_seek_base(c, epoch, step, base) lies within the run; else SHML_ERANGE,
 * and why says which bound the position crosses and the valid range (NUL-terminated,
 * truncated to size bytes; why may be NULL). */
int shml_seek_check(const shml_consumer *c, uint64_t epoch, uint64_t step, uint64_t base,
                    char *why, size_t size);

/* Where a saved state continues on this handle's rank (the one implementation of the rule
 * on the trainer side; `shmloader serve --resume` applies the same, producer/plan/doc.go).
 * Fills *out with the position to pass to shml_seek_base, and with this job's world,
 * config_hash and plan_version: what a state saved right after the seek holds.
 * - The saved world consumed the epoch's global batches [base, base + step * world). Under
 *   this job's W trainers it continues at global batch g = base + step * world: at step
 *   g / W of an epoch started at 0 when W divides g, else at step 0 of one started at g.
 *   A g past elastic_limit (the last uneven batches of an epoch, drop_last: false)
 *   resumes only under the world that saved it: SHML_EINVAL.
 * - Under the same world the position is kept, except that step steps_per_epoch + 1
 *   (saved by a rank with one batch more than this one, drop_last: false) is this rank's
 *   epoch end.
 * - SHML_EINVAL for a state of another plan version or config hash (a state with neither
 *   is taken as this producer's; one with a config hash but no plan version came from a
 *   shmloader before plan version 2), SHML_ERANGE for a position beyond the run
 *   (shml_seek_check).
 * why (may be NULL) gets the reason, NUL-terminated and truncated to size bytes; "" on
 * success. */
int shml_resume(const shml_consumer *c, const shml_state *saved, shml_state *out, char *why,
                size_t size);

/* Tell the producer the job is done (training stopped before the end of the stream): it
 * stops as soon as no trainer reads any more, removes its segments and exits 0
 * (shmloader serve); a rank whose trainer still reads is never cut off, and no grace is
 * waited once the last one detaches. Each rank may say it at its end. */
int shml_done(shml_consumer *c);

/* Why the producer stopped, in its own words: the error that ended it (naming the file,
 * row group and column, and what to do), the signal, or the rule that ended the job.
 * Sets *kind to a SHML_STOP_* value and writes the text, NUL-terminated and truncated to
 * size bytes, into buf (size 0: only *kind). A producer still running, or one that
 * finished its stream, is SHML_STOP_NONE with ""; one that died without writing a reason
 * is SHML_STOP_DIED with "". Call it after SHML_EGONE. */
int shml_stop_reason(const shml_consumer *c, int *kind, char *buf, size_t size);

/* Why this rank has no batch now, as the producer last said it (refreshed about once a
 * second while the rank waits), e.g. "rank 1 has had no trainer for 42 s (...)"; "" when
 * the producer is not holding this rank back or said nothing. NUL-terminated, truncated to
 * size bytes. Call it after SHML_ETIMEOUT. */
int shml_stall_reason(const shml_consumer *c, char *buf, size_t size);

/* Release everything, drop the consumer lock, unmap. c is freed; NULL is allowed. */
int shml_detach(shml_consumer *c);

int shml_info_get(const shml_consumer *c, shml_info *out);
/* This handle's counters (shml_stats). The ring's header also carries them for observers
 * (`shmloader status`, metrics), summed over every consumer the ring has had. */
int shml_stats_get(const shml_consumer *c, shml_stats *out);
/* Number of batches currently held. */
uint32_t shml_held(const shml_consumer *c);
/* errno of the last SHML_ESYS from this handle (0 if none). */
int shml_errno(const shml_consumer *c);
/* Reads the header of segment `rank` of `job` in dir (NULL: as shml_attach_dir) without
 * mapping, locking or changing anything: for messages about a segment a trainer cannot
 * use (the protocol version a refused segment speaks, the ranks a job serves, the pid of a
 * producer that left a segment behind). SHML_OK with *out filled; SHML_EINVAL (bad job or
 * rank), SHML_ESYS (cannot open or read it: sys_errno, ENOENT where there is none),
 * SHML_EPERM (not a 0600 regular file of this user), SHML_ESIZE (shorter than a header),
 * SHML_EMAGIC, or SHML_ECORRUPT (a header of this version naming another job or rank); a
 * failure after the file was opened still fills producer_alive. */
int shml_peek_segment(const char *dir, const char *job, int rank, shml_segment *out);
/* SHML_PROTOCOL_VERSION of the library actually loaded. */
int shml_protocol_version(void);
/* SHML_ABI_VERSION of the library actually loaded: a binding compares it with the one it
 * was written for before using anything else. */
int shml_abi_version(void);
/* Human-readable explanation of an error code; never NULL. */
const char *shml_strerror(int err);
/* The code's name ("SHML_EGONE", ...), "SHML_UNKNOWN" if unknown; never NULL. */
const char *shml_errname(int err);
/* Item size in bytes of a dtype code, 0 if unknown. */
size_t shml_dtype_size(int32_t dtype);
/* Name of a dtype code ("float32", ...), "unknown" if unknown. */
const char *shml_dtype_name(int32_t dtype);

#ifdef __cplusplus
}
#endif
#endif /* SHMLOADER_H */
