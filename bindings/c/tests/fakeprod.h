/*
 * fakeprod.h - a minimal producer for the tests, written from PROTOCOL.md: it creates a
 * segment, holds its byte-0 lock and publishes with the protocol's atomics. Its schema
 * is the one `shmloader debug-produce` uses (id, payload, crc, t_ns) plus a float32
 * [2, 3] tensor 'x' to exercise multi-dimensional shapes.
 */
#ifndef SHML_TEST_FAKEPROD_H
#define SHML_TEST_FAKEPROD_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "../tools/crc32.h"
#include "image.h"

enum { FP_ID, FP_PAYLOAD, FP_CRC, FP_TNS, FP_X, FP_NT };

/* What fp_run does. Zero values are sensible defaults except where noted. */
struct fp_plan {
  const char *dir;
  const char *job;
  uint32_t rank;
  uint32_t ranks;      /* >= 1 */
  uint32_t depth;      /* slot_count, >= 2 */
  uint32_t rows;       /* batch_capacity, >= 1 */
  uint64_t row_bytes;  /* payload bytes per row, >= 1 */
  uint64_t batches;    /* per epoch */
  uint64_t epochs;     /* 0: endless */
  int ranged;          /* the header names batches and epochs (seek range checks) */
  int var_rows;        /* rows of step s: 1 + s % rows, instead of rows */
  int eos;             /* finish with END_OF_STREAM and state 2 */
  uint32_t end_state;  /* without eos: state stored at the end (0: none) */
  int drain_ms;        /* then wait up to this long for the ring to drain */
  int linger_ms;       /* then stay alive, lock held (-1: until killed) */
  int interval_us;     /* pause before each publish */
  int keep_file;       /* exit without unlinking the segment (a stale one) */
  int64_t bad_crc_step; /* < 0: none; else epoch 0 step's row 0 gets a wrong crc */
  int no_seek;         /* never poll seek requests (a producer that never sees them) */
  uint64_t seek_seq;   /* initial seek fields, as a previous consumer left them */
  uint64_t seek_epoch;
  uint64_t seek_step;
};

struct fp {
  int fd;
  uint8_t *base;
  size_t size;
  struct shml__header *h;
  const struct fp_plan *pl;
  struct img_tensor tensors[FP_NT];
  struct img_spec spec;
  struct img_plan plan;
  uint64_t head;
  uint64_t gen;
  char path[PATH_MAX];
  struct crc32_table crc;
};

struct fp_result {
  uint64_t batches;
  uint64_t rows;
  uint32_t crc; /* CRC-32 of every payload byte published */
};

/* The segment layout a plan produces. */
int fp_layout(const struct fp_plan *pl, struct img_tensor tensors[FP_NT], struct img_spec *spec,
              struct img_plan *plan);
/* Creates the segment of the plan in its dir, replacing a stale one. 0 or -1. */
int fp_create(struct fp *p, const struct fp_plan *pl);
void *fp_data(const struct fp *p, uint64_t seq, int tensor);
/* Waits until the ring has a free slot: 0, or -1 at the timeout. */
int fp_wait_space(struct fp *p, int timeout_ms);
/* Fills the slot at head (see fp_id, fp_byte); t_ns row 0 = now. */
void fp_fill(struct fp *p, uint64_t epoch, uint64_t step, uint32_t rows);
/* Writes the slot header at head and publishes it [PUB]. */
void fp_publish(struct fp *p, uint64_t epoch, uint64_t step, uint32_t rows, uint32_t flags);
/* Publishes a slot header as given, whatever it says. */
void fp_publish_raw(struct fp *p, const struct shml__slot_header *s);
/* Stores state [STATE] and wakes the consumer. */
void fp_state(struct fp *p, uint32_t state);
/* Applies a pending seek request: 1 (and *epoch, *step set) if one was new. */
int fp_poll_seek(struct fp *p, uint64_t *epoch, uint64_t *step);
void fp_close(struct fp *p, int unlink_it);
/* Runs the whole plan. 0, or 1 if the ring never had room or never drained. */
int fp_run(const struct fp_plan *pl, struct fp_result *res);

/* id of a row: the debug-produce formula ((epoch*batches + step)*ranks + rank)*rows + row */
uint64_t fp_id(const struct fp_plan *pl, uint64_t epoch, uint64_t step, uint32_t row);
/* Payload byte j of the row with this id. */
uint8_t fp_byte(uint64_t id, uint64_t j);
uint32_t fp_rows(const struct fp_plan *pl, uint64_t step);

#endif
