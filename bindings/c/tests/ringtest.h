/*
 * ringtest.h - what the ring tests share: a temp directory, a forked fake producer
 * (tests/fakeprod.c) and a full check of a delivered batch.
 */
#ifndef SHML_TEST_RINGTEST_H
#define SHML_TEST_RINGTEST_H

#include <sys/types.h>

#include "../src/internal.h"
#include "check.h"
#include "fakeprod.h"

struct ctx {
  struct check t;
  char dir[64];
  struct crc32_table crc;
};

/* A temp directory under /dev/shm; 0 or -1. */
int rt_init(struct ctx *x, const char *name);
/* Removes the directory and whatever is left in it. */
void rt_cleanup(struct ctx *x);
/* A small plan for job in x's directory: rank 1 of 2, depth 4, 8 rows, 5 batches. */
struct fp_plan rt_plan(struct ctx *x, const char *job);
/* Runs the plan in a child process, after delay_ms. */
pid_t rt_spawn(const struct fp_plan *pl, int delay_ms);
/* Exit code of a child, 128 + signal if killed. */
int rt_reap(pid_t pid);
void rt_stop(pid_t pid);
int rt_attach(struct ctx *x, const char *job, int timeout_ms, shml_consumer **c);
struct shml__header *rt_hdr(const shml_consumer *c);
uint64_t rt_tail(const shml_consumer *c);
int64_t rt_ms_since(int64_t t0);
void rt_sleep_ms(int ms);
/* Everything about a delivered batch: position, tensors, shapes, pointers, contents. */
int rt_batch_ok(struct ctx *x, const struct fp_plan *pl, const shml_consumer *c,
                const shml_batch *b, uint64_t seq, uint64_t epoch, uint64_t step);

#endif
