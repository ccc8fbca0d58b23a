/*
 * internal.h - the consumer handle and the functions the source files share.
 * Names with two underscores (shml__*) are hidden from the shared library.
 */
#ifndef SHML_INTERNAL_H
#define SHML_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "../shmloader.h"
#include "layout.h"

#define SHML_API __attribute__((visibility("default")))

/* Not an error: the segment exists but its header is still being written. */
#define SHML__NOTREADY 1

/* One schema entry, copied out of shared memory after validation. */
struct shml__tensor_geom {
  char name[SHML__NAME_BYTES];
  int32_t dtype;
  uint32_t ndim;
  uint64_t shape[SHML__ROW_DIMS];
  uint64_t offset;
  uint64_t row_bytes;
  uint64_t nbytes;
};

/* The validated geometry. Read once at attach; shared memory is never re-read for it. */
struct shml__geom {
  uint64_t total_size;
  uint64_t slot_size;
  uint64_t producer_start;
  uint64_t config_hash;
  uint64_t elastic_limit;
  uint64_t steps_per_epoch;
  uint64_t epochs;
  uint64_t global_batches;
  uint32_t nodes;
  uint32_t node_rank;
  uint32_t plan_version;
  uint32_t header_size;
  uint32_t slot_count;
  uint32_t schema_count;
  uint32_t rank;
  uint32_t ranks;
  uint32_t batch_capacity;
  int32_t producer_pid;
  struct shml__tensor_geom tensors[SHML__MAX_SCHEMA];
};

struct shml_consumer {
  int fd;
  uint8_t *base;
  size_t size;
  struct shml__header *hdr;
  struct shml__geom g;
  uint64_t cursor;        /* next seq to read */
  uint64_t tail;          /* our copy of hdr->tail (we are its only writer) */
  uint64_t gen;           /* current seek generation */
  uint8_t *held;          /* per slot index: 1 while handed out and not released */
  uint32_t nheld;
  int eos;                /* END_OF_STREAM seen: every later next is SHML_EEOS */
  int err;                /* errno of the last SHML_ESYS */
  int64_t live_checked_ns;
  int64_t spin_ns;        /* busy-poll this long before sleeping ($SHMLOADER_SPIN_US) */
  shml_stats stats;       /* this handle's counters since attach */
  shml_tensor *tensors;   /* slot_count x schema_count descriptors */
};

/* validate.c: steps 2-6 of PROTOCOL.md "Validation" over a mapped image of len bytes.
 * Returns SHML_OK (and fills *out), SHML__NOTREADY while version is 0, or the error. */
int shml__validate(const void *base, size_t len, const char *job, int rank,
                   struct shml__geom *out);
/* Step 4 (identity): SHML_OK if the header names job and rank, else SHML_ECORRUPT. */
int shml__check_identity(const struct shml__header *h, const char *job, int rank);
/* Job name rule of PROTOCOL.md "Files": 1 if valid. */
int shml__job_ok(const char *job);

/* wait.c */
int64_t shml__now_ns(void);
/* The spin before a sleep: $SHMLOADER_SPIN_US if it is a whole number of microseconds in
 * 0..1000000, else the default (100 us, as ring.SpinFor). */
int64_t shml__spin_ns(void);
int64_t shml__deadline(int timeout_ms); /* -1: none */
/* SHML_OK when woken, timed out or the word differed; SHML_ESYS (errno in *err). */
int shml__futex_wait(uint32_t *word, uint32_t expect, int64_t timeout_ns, int *err);
void shml__futex_wake(uint32_t *word);
/* 1 if a producer holds the byte-0 lock of fd, 0 if not, SHML_ESYS (errno in *err). */
int shml__producer_alive(int fd, int *err);
/* Block until head moves past cursor, the state leaves running, the deadline passes
 * (SHML_ETIMEOUT) or the producer dies (SHML_EGONE). SHML_OK means "look again". */
int shml__wait_head(shml_consumer *c, int64_t deadline);

/* resume.c: SHML_OK, or SHML_ERANGE for a position beyond the run (shml_seek_check). */
int shml__check_position(const shml_consumer *c, uint64_t epoch, uint64_t step, uint64_t base);

/* next.c: advance tail over the leading run of released slots and wake the producer. */
void shml__advance_tail(shml_consumer *c);
/* Release every held slot. */
void shml__release_all(shml_consumer *c);

#endif /* SHML_INTERNAL_H */
