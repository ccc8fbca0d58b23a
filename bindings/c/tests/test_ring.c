/*
 * test_ring - the data path against a producer in another process (tests/fakeprod.c,
 * forked): delivery order and contents, release order and tail, EHELD, markers, seek
 * (answered, and unanswered by a finished producer), the consumer lock, and an SPSC stress run in which every batch is seen exactly once,
 * in order, intact.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "ringtest.h"

static int wait_head(const shml_consumer *c, uint64_t want) {
  for (int i = 0; i < 2000; i++) {
    if (__atomic_load_n(&rt_hdr(c)->head, __ATOMIC_ACQUIRE) == want) return 1;
    rt_sleep_ms(1);
  }
  return 0;
}

/* The header of a segment, mapped by the test itself. */
static struct shml__header *map_header(struct ctx *x, const char *job) {
  char path[256];
  snprintf(path, sizeof path, "%s/shmloader-%u-%s-r1", x->dir, (unsigned)getuid(), job);
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) return NULL;
  void *p = mmap(NULL, SHML__HEADER_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  return p == MAP_FAILED ? NULL : p;
}

static uint64_t rnd(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

static void test_order(struct ctx *x) {
  struct check *t = &x->t;
  shml_consumer *c;
  shml_batch b;
  struct fp_plan pl = rt_plan(x, "order");
  pl.epochs = 2;
  pl.var_rows = 1;
  pl.eos = 1;
  pl.drain_ms = 5000;
  pid_t pid = rt_spawn(&pl, 0);
  int rc = rt_attach(x, "order", 5000, &c);
  CHECK_RC(t, rc, SHML_OK, "attach waits for the producer to create the ring");
  if (rc != SHML_OK) return rt_stop(pid);
  int bad = 0;
  uint64_t seq = 0;
  for (uint64_t e = 0; e < 2; e++) {
    for (uint64_t s = 0; s < 5; s++, seq++) {
      rc = shml_next(c, 5000, &b);
      if (rc != SHML_OK || !rt_batch_ok(x, &pl, c, &b, seq, e, s)) bad++;
      if (rc == SHML_OK && shml_release(c, &b) != SHML_OK) bad++;
    }
    if (shml_next(c, 5000, &b) != SHML_EEPOCH || b.seq != seq || b.epoch != e || b.rows != 0 ||
        b.ntensors != 0 || b.tensors != NULL)
      bad++;
    seq++;
  }
  CHECK(t, bad == 0, "2 epochs of 5 batches in order, right tensors/shapes/pointers/data, "
                     "SHML_EEPOCH after each epoch with the marker's seq and epoch, rows 0");
  CHECK_RC(t, shml_next(c, 5000, &b), SHML_EEOS, "END_OF_STREAM marker");
  CHECK(t, b.seq == seq && b.rows == 0 && b.ntensors == 0, "... reported with its seq");
  CHECK_RC(t, shml_next(c, 0, &b), SHML_EEOS, "... and every later next");
  CHECK_RC(t, shml_release(c, &b), SHML_EINVAL, "a marker cannot be released");
  CHECK(t, shml_seek(c, 0, 0) == SHML_OK && shml_next(c, 100, &b) == SHML_ESEEK,
        "after the end of the stream a seek is not answered: SHML_ESEEK, not SHML_EEOS");
  CHECK_RC(t, shml_next(c, 0, &b), SHML_ESEEK, "... and every later next");
  CHECK(t, shml_held(c) == 0 && rt_tail(c) == seq + 1, "every slot released, markers too");
  shml_detach(c);
  CHECK(t, rt_reap(pid) == 0, "producer saw its ring drained");
}

static void test_release(struct ctx *x) {
  struct check *t = &x->t;
  shml_consumer *c;
  shml_batch b[8], one;
  struct fp_plan pl = rt_plan(x, "release");
  pl.depth = 8;
  pl.batches = 30;
  pl.eos = 1;
  pl.drain_ms = 5000;
  pid_t pid = rt_spawn(&pl, 0);
  if (rt_attach(x, "release", 5000, &c) != SHML_OK) {
    CHECK(t, 0, "attach");
    return rt_stop(pid);
  }
  int bad = 0;
  for (int i = 0; i < 5; i++)
    if (shml_next(c, 5000, &b[i]) != SHML_OK || !rt_batch_ok(x, &pl, c, &b[i], i, 0, i)) bad++;
  CHECK(t, bad == 0 && shml_held(c) == 5 && rt_tail(c) == 0, "5 batches held, tail 0");
  shml_release(c, &b[2]);
  CHECK(t, rt_tail(c) == 0 && shml_held(c) == 4, "release seq 2 first: tail stays 0");
  shml_release(c, &b[0]);
  CHECK(t, rt_tail(c) == 1, "release seq 0: tail 1");
  shml_release(c, &b[1]);
  CHECK(t, rt_tail(c) == 3, "release seq 1: tail jumps to 3 over released seq 2");
  shml_release(c, &b[4]);
  CHECK(t, rt_tail(c) == 3, "release seq 4: tail stays 3");
  CHECK(t, rt_batch_ok(x, &pl, c, &b[3], 3, 0, 3), "seq 3 still intact while held");
  CHECK_RC(t, shml_release(c, &b[2]), SHML_EINVAL, "release of an already released batch");
  shml_release(c, &b[3]);
  CHECK(t, rt_tail(c) == 5 && shml_held(c) == 0, "release seq 3: tail 5, nothing held");
  CHECK_RC(t, shml_release(c, &b[3]), SHML_EINVAL, "double release");
  one = b[0];
  one.seq = 6;
  CHECK_RC(t, shml_release(c, &one), SHML_EINVAL, "release of a batch not yet taken");
  one.seq = 1000;
  CHECK_RC(t, shml_release(c, &one), SHML_EINVAL, "release of a forged batch");
  CHECK_RC(t, shml_release(c, NULL), SHML_EINVAL, "release(NULL)");

  bad = 0;
  for (int i = 0; i < 7; i++)
    if (shml_next(c, 5000, &b[i]) != SHML_OK || b[i].seq != 5 + (uint64_t)i) bad++;
  int64_t t0 = shml__now_ns();
  CHECK(t, bad == 0 && shml_held(c) == 7, "7 batches held (slot_count - 1)");
  CHECK_RC(t, shml_next(c, 5000, &one), SHML_EHELD, "next while holding slot_count-1");
  CHECK(t, rt_ms_since(t0) < 100, "... at once");
  shml_release(c, &b[3]);
  CHECK(t, shml_next(c, 5000, &b[3]) == SHML_OK && rt_batch_ok(x, &pl, c, &b[3], 12, 0, 12),
        "after releasing one (out of order) the next batch is seq 12");
  CHECK_RC(t, shml_next(c, 5000, &one), SHML_EHELD, "EHELD again at 7 held");
  int order[7] = {6, 0, 5, 2, 3, 1, 4};
  for (int i = 0; i < 7; i++) shml_release(c, &b[order[i]]);
  CHECK(t, rt_tail(c) == 13 && shml_held(c) == 0, "shuffled release of all: tail 13");

  /* Hold only the oldest: once everything after it is taken, the ring is full. */
  bad = 0;
  shml_batch first;
  if (shml_next(c, 5000, &first) != SHML_OK) bad++;
  for (int i = 0; i < 7; i++)
    if (shml_next(c, 5000, &one) != SHML_OK || shml_release(c, &one) != SHML_OK) bad++;
  t0 = shml__now_ns();
  CHECK(t, bad == 0 && shml_held(c) == 1, "hold seq 13, take and release 14..20");
  CHECK_RC(t, shml_next(c, 5000, &one), SHML_EHELD, "next when the one held batch blocks the ring");
  CHECK(t, rt_ms_since(t0) < 100 && rt_tail(c) == 13, "... at once, tail 13");
  shml_release(c, &first);
  CHECK(t, rt_tail(c) == 21, "releasing it moves tail to 21");

  bad = 0;
  for (uint64_t s = 21; s < 30; s++)
    if (shml_next(c, 5000, &one) != SHML_OK || !rt_batch_ok(x, &pl, c, &one, s, 0, s) ||
        shml_release(c, &one) != SHML_OK)
      bad++;
  CHECK(t, bad == 0, "the rest of the epoch in order");
  CHECK_RC(t, shml_next(c, 5000, &one), SHML_EEPOCH, "end of epoch");
  CHECK_RC(t, shml_next(c, 5000, &one), SHML_EEOS, "end of stream");
  shml_detach(c);
  CHECK(t, rt_reap(pid) == 0, "producer saw its ring drained");
}

static void test_seek(struct ctx *x) {
  struct check *t = &x->t;
  shml_consumer *c;
  shml_batch held, b;
  struct fp_plan pl = rt_plan(x, "seek");
  pl.batches = 100;
  pl.epochs = 10;
  pid_t pid = rt_spawn(&pl, 0);
  if (rt_attach(x, "seek", 5000, &c) != SHML_OK) {
    CHECK(t, 0, "attach");
    return rt_stop(pid);
  }
  struct shml__header *h = rt_hdr(c);
  CHECK(t, shml_next(c, 5000, &held) == SHML_OK && rt_batch_ok(x, &pl, c, &held, 0, 0, 0),
        "first batch (0, 0)");
  CHECK(t, wait_head(c, 4), "producer filled the ring");
  CHECK_RC(t, shml_seek(c, 5, 7), SHML_OK, "seek to (5, 7)");
  CHECK(t, h->seek_seq == 2 && h->seek_epoch == 5 && h->seek_step == 7 && h->seek_base == 0,
        "seek fields: seek_seq 2 (even, generation 1), epoch 5, step 7, base 0");
  CHECK(t, shml_held(c) == 0 && shml_release(c, &held) == SHML_EINVAL,
        "seek released the held batch first");
  /* The release let the producer publish one more old slot (seq 4) if it woke before
   * the request was complete; the answer is at seq 4 or 5. */
  int rc = shml_next(c, 5000, &b);
  uint64_t at = b.seq;
  CHECK(t, rc == SHML_OK && (at == 4 || at == 5) && rt_batch_ok(x, &pl, c, &b, at, 5, 7),
        "next after the seek: (5, 7) at seq %llu; older generation slots skipped",
        (unsigned long long)at);
  CHECK(t, rt_tail(c) == at && shml_held(c) == 1, "skipped slots released");
  CHECK(t, __atomic_load_n(&h->seek_ack, __ATOMIC_ACQUIRE) == 1, "producer acknowledged");
  shml_release(c, &b);
  CHECK(t, shml_next(c, 5000, &b) == SHML_OK && rt_batch_ok(x, &pl, c, &b, at + 1, 5, 8),
        "then (5, 8)");
  shml_release(c, &b);
  CHECK_RC(t, shml_seek(c, 0, 2), SHML_OK, "seek back to (0, 2)");
  CHECK(t, h->seek_seq == 4, "seek_seq 4");
  rc = shml_next(c, 5000, &b);
  CHECK(t, rc == SHML_OK && b.epoch == 0 && b.step == 2 && rt_batch_ok(x, &pl, c, &b, b.seq, 0, 2),
        "next after the second seek: (0, 2)");
  shml_detach(c);
  rt_stop(pid);

  /* A consumer died writing a seek request (seek_seq odd). */
  pl = rt_plan(x, "oddseek");
  pl.batches = 100;
  pl.seek_seq = 3;
  pl.seek_epoch = 9;
  pl.seek_step = 9;
  pid = rt_spawn(&pl, 0);
  if (rt_attach(x, "oddseek", 5000, &c) != SHML_OK) {
    CHECK(t, 0, "attach");
    return rt_stop(pid);
  }
  CHECK(t, rt_hdr(c)->seek_seq == 2, "attach resets an odd seek_seq 3 to 2");
  CHECK(t, shml_next(c, 5000, &b) == SHML_OK && rt_batch_ok(x, &pl, c, &b, 0, 0, 0),
        "the stream goes on in generation 1 from (0, 0)");
  shml_release(c, &b);
  shml_seek(c, 0, 50);
  CHECK(t, rt_hdr(c)->seek_seq == 4 && shml_next(c, 5000, &b) == SHML_OK && b.step == 50,
        "a later seek works (seek_seq 4, step 50)");
  shml_detach(c);
  rt_stop(pid);
}

/* A ring that names its run: shml_info reports it, a seek beyond it is SHML_ERANGE and
 * changes nothing, and the handle's counters and the header's observer counters count
 * what was taken and waited for. */
static void test_range_and_stats(struct ctx *x) {
  struct check *t = &x->t;
  shml_consumer *c;
  shml_batch b;
  struct fp_plan pl = rt_plan(x, "ranged");
  pl.batches = 6;
  pl.epochs = 2;
  pl.ranged = 1;
  pl.interval_us = 20000; /* the consumer waits for every batch */
  pid_t pid = rt_spawn(&pl, 0);
  if (rt_attach(x, "ranged", 5000, &c) != SHML_OK) {
    CHECK(t, 0, "attach");
    return rt_stop(pid);
  }
  shml_info info;
  CHECK_RC(t, shml_info_get(c, &info), SHML_OK, "info");
  CHECK(t, info.steps_per_epoch == 6 && info.epochs == 2 &&
               info.global_batches == 6 * pl.ranks,
        "info: 6 steps per epoch, 2 epochs, %llu global batches",
        (unsigned long long)info.global_batches);
  struct shml__header *h = rt_hdr(c);
  CHECK_RC(t, shml_seek(c, 2, 0), SHML_ERANGE, "seek to epoch 2 of 2: SHML_ERANGE");
  CHECK_RC(t, shml_seek(c, 0, 7), SHML_ERANGE, "seek to step 7 of 6: SHML_ERANGE");
  CHECK(t, shml_seek_base(c, 0, 0, info.elastic_limit + 1) == SHML_ERANGE,
        "base past elastic_limit %llu: SHML_ERANGE", (unsigned long long)info.elastic_limit);
  CHECK(t, h->seek_seq == 0, "refused seeks wrote nothing");
  shml_stats st;
  CHECK_RC(t, shml_stats_get(c, &st), SHML_OK, "stats");
  CHECK(t, st.batches == 0 && st.rows == 0, "stats start at 0");
  uint64_t rows = 0;
  for (int i = 0; i < 3; i++) {
    CHECK(t, shml_next(c, 5000, &b) == SHML_OK && b.step == (uint64_t)i, "batch (0, %d)", i);
    rows += b.rows;
    shml_release(c, &b);
  }
  CHECK_RC(t, shml_stats_get(c, &st), SHML_OK, "stats");
  CHECK(t, st.batches == 3 && st.rows == rows,
        "stats: 3 batches, %llu rows", (unsigned long long)rows);
  CHECK(t, st.wait_ns >= 10 * 1000000ull && st.wait_ns < 5000 * 1000000ull,
        "stats: waited %.1f ms for a producer publishing every 20 ms", st.wait_ns / 1e6);
  CHECK(t, __atomic_load_n(&h->cons_rows, __ATOMIC_RELAXED) == rows &&
               __atomic_load_n(&h->cons_epoch, __ATOMIC_RELAXED) == 0 &&
               __atomic_load_n(&h->cons_step, __ATOMIC_RELAXED) == 3 &&
               __atomic_load_n(&h->cons_wait_ns, __ATOMIC_RELAXED) == st.wait_ns,
        "header counters: rows, position (0, 3), wait as the handle's");
  CHECK_RC(t, shml_seek(c, 1, 6), SHML_OK, "seek to the end of the last epoch (1, 6)");
  CHECK_RC(t, shml_next(c, 5000, &b), SHML_EEPOCH, "... gives its end");
  shml_detach(c);
  rt_stop(pid);
}

/* Publishes (0, step) with data, from the producer in this process. */
static void publish_step(struct fp *p, uint64_t step) {
  fp_fill(p, 0, step, fp_rows(p->pl, step));
  fp_publish(p, 0, step, fp_rows(p->pl, step), 0);
}

/* A seek the producer never answers must not read as the end of the stream. The producer
 * runs in this process, so every interleaving below is fixed. */
static void test_seek_unanswered(struct ctx *x) {
  struct check *t = &x->t;
  struct fp p;
  shml_consumer *c;
  shml_batch b;
  struct fp_plan pl = rt_plan(x, "noseek");

  /* (a) The stream is finished and the producer never polled the request. */
  if (fp_create(&p, &pl) != 0 || rt_attach(x, "noseek", 1000, &c) != SHML_OK) {
    CHECK(t, 0, "create and attach");
    return fp_close(&p, 1);
  }
  for (uint64_t s = 0; s < 2; s++) publish_step(&p, s);
  fp_publish(&p, 0, 0, 0, SHML__END_OF_STREAM);
  fp_state(&p, SHML__FINISHED);
  CHECK(t, shml_next(c, 1000, &b) == SHML_OK && rt_batch_ok(x, &pl, c, &b, 0, 0, 0),
        "finished producer: first batch (0, 0)");
  CHECK_RC(t, shml_seek(c, 0, 0), SHML_OK, "seek back to (0, 0)");
  CHECK_RC(t, shml_next(c, 1000, &b), SHML_ESEEK,
           "the producer finished without answering: SHML_ESEEK, not SHML_EEOS "
           "(stale batch and END_OF_STREAM marker skipped)");
  CHECK(t, rt_tail(c) == 3 && shml_held(c) == 0, "... every stale slot released");
  CHECK_RC(t, shml_next(c, 0, &b), SHML_ESEEK, "... and again on the next call");
  CHECK(t, __atomic_load_n(&p.h->seek_ack, __ATOMIC_ACQUIRE) == 0 && p.h->seek_seq == 2,
        "seek_ack 0 below the consumer's generation 1");
  shml_detach(c);
  fp_close(&p, 1);

  /* (b) The same, but the producer answers before it finishes. */
  if (fp_create(&p, &pl) != 0 || rt_attach(x, "noseek", 1000, &c) != SHML_OK) {
    CHECK(t, 0, "create and attach");
    return fp_close(&p, 1);
  }
  for (uint64_t s = 0; s < 3; s++) publish_step(&p, s);
  CHECK(t, shml_next(c, 1000, &b) == SHML_OK && rt_batch_ok(x, &pl, c, &b, 0, 0, 0),
        "answering producer: first batch (0, 0)");
  CHECK_RC(t, shml_seek(c, 0, 0), SHML_OK, "seek back to (0, 0)");
  uint64_t e = 9, st = 9;
  CHECK(t, fp_poll_seek(&p, &e, &st) == 1 && e == 0 && st == 0 && p.gen == 1 &&
               __atomic_load_n(&p.h->seek_ack, __ATOMIC_ACQUIRE) == 1,
        "the producer applies the request: seek_ack 1, generation 1");
  publish_step(&p, 0); /* seq 3, generation 1 */
  fp_publish(&p, 0, 0, 0, SHML__END_OF_STREAM);
  fp_state(&p, SHML__FINISHED);
  CHECK(t, shml_next(c, 1000, &b) == SHML_OK && rt_batch_ok(x, &pl, c, &b, 3, 0, 0),
        "the answer (0, 0) at seq 3; seq 1 and 2 skipped");
  shml_release(c, &b);
  CHECK_RC(t, shml_next(c, 1000, &b), SHML_EEOS, "then a normal end of stream");
  CHECK_RC(t, shml_next(c, 0, &b), SHML_EEOS, "... and every later next");
  shml_detach(c);
  fp_close(&p, 1);

  /* (c) Answered, finished by state 2 alone (no marker): SHML_EEOS; a later seek that
   * nobody answers: SHML_ESEEK from the state path. */
  if (fp_create(&p, &pl) != 0 || rt_attach(x, "noseek", 1000, &c) != SHML_OK) {
    CHECK(t, 0, "create and attach");
    return fp_close(&p, 1);
  }
  publish_step(&p, 0);
  fp_state(&p, SHML__FINISHED);
  CHECK(t, shml_next(c, 1000, &b) == SHML_OK && shml_release(c, &b) == SHML_OK &&
               shml_next(c, 1000, &b) == SHML_EEOS,
        "state 2 without a marker, no seek: SHML_EEOS");
  CHECK(t, shml_seek(c, 0, 0) == SHML_OK && shml_next(c, 0, &b) == SHML_ESEEK,
        "state 2 without a marker, seek after it: SHML_ESEEK");
  shml_detach(c);
  fp_close(&p, 1);
}

static void test_busy(struct ctx *x) {
  struct check *t = &x->t;
  shml_consumer *c1, *c2;
  shml_batch b;
  struct fp_plan pl = rt_plan(x, "busy");
  pl.batches = 1000;
  pid_t pid = rt_spawn(&pl, 0);
  if (rt_attach(x, "busy", 5000, &c1) != SHML_OK) {
    CHECK(t, 0, "attach");
    return rt_stop(pid);
  }
  struct shml__header *h = map_header(x, "busy");
  if (!CHECK(t, h != NULL, "map the header")) return rt_stop(pid);
  CHECK(t, h->consumer_pid == getpid(), "consumer_pid is ours");
  CHECK_RC(t, rt_attach(x, "busy", 100, &c2), SHML_EBUSY, "second attach to the rank");
  for (int i = 0; i < 3; i++) shml_next(c1, 5000, &b);
  CHECK(t, shml_held(c1) == 3, "3 held");
  shml_detach(c1);
  CHECK(t, h->consumer_pid == 0 && h->tail == 3, "detach: consumer_pid 0, held slots released");
  CHECK_RC(t, rt_attach(x, "busy", 1000, &c2), SHML_OK, "attach after the first detached");
  CHECK(t, shml_next(c2, 5000, &b) == SHML_OK && rt_batch_ok(x, &pl, c2, &b, 3, 0, 3),
        "it continues at seq 3");
  shml_detach(c2);

  fflush(stdout);
  pid_t dead = fork();
  if (dead == 0) {
    shml_consumer *c3;
    if (rt_attach(x, "busy", 1000, &c3) == SHML_OK) {
      shml_next(c3, 5000, &b);
      shml_next(c3, 5000, &b);
    }
    raise(SIGKILL);
  }
  CHECK(t, rt_reap(dead) == 128 + SIGKILL, "a consumer holding 2 batches is killed");
  CHECK_RC(t, rt_attach(x, "busy", 1000, &c2), SHML_OK, "its rank can be attached again");
  CHECK(t, shml_next(c2, 5000, &b) == SHML_OK && b.seq == 4,
        "and its unreleased batches are delivered again (seq 4)");
  shml_detach(c2);
  munmap(h, SHML__HEADER_BYTES);
  rt_stop(pid);
}

static void test_stress(struct ctx *x) {
  struct check *t = &x->t;
  shml_consumer *c;
  shml_batch held[4], b;
  struct fp_plan pl = rt_plan(x, "stress");
  pl.depth = 8;
  pl.rows = 8;
  pl.row_bytes = 16;
  pl.batches = 5000;
  pl.epochs = 2;
  pl.var_rows = 1;
  pl.eos = 1;
  pl.drain_ms = 20000;
  pid_t pid = rt_spawn(&pl, 0);
  if (rt_attach(x, "stress", 5000, &c) != SHML_OK) {
    CHECK(t, 0, "attach");
    return rt_stop(pid);
  }
  uint64_t seed = 42, seq = 0, epoch = 0, step = 0, seen = 0;
  int nheld = 0, bad = 0, rc, full = 0;
  while ((rc = shml_next(c, 10000, &b)) != SHML_EEOS) {
    if (rc == SHML_EHELD) {
      /* The oldest held batch blocks the ring: hand it back. */
      int old = 0;
      for (int i = 1; i < nheld; i++)
        if (held[i].seq < held[old].seq) old = i;
      if (nheld == 0 || shml_release(c, &held[old]) != SHML_OK) {
        bad++;
        break;
      }
      held[old] = held[--nheld];
      full++;
      continue;
    }
    if (rc == SHML_EEPOCH) {
      if (step != pl.batches) bad++;
      epoch++, step = 0, seq++;
      continue;
    }
    if (rc != SHML_OK || !rt_batch_ok(x, &pl, c, &b, seq, epoch, step)) {
      bad++;
      break;
    }
    seq++, step++, seen++;
    held[nheld++] = b;
    while (nheld > (int)(rnd(&seed) % 4)) {
      int i = (int)(rnd(&seed) % (uint64_t)nheld);
      if (shml_release(c, &held[i]) != SHML_OK) bad++;
      held[i] = held[--nheld];
    }
  }
  CHECK(t, bad == 0 && seen == 10000 && epoch == 2,
        "SPSC stress: 10000 batches, each seen once, in order, intact, released in random "
        "order (%llu seen, %d times the oldest held blocked the ring)",
        (unsigned long long)seen, full);
  shml_detach(c);
  CHECK(t, rt_reap(pid) == 0, "producer saw its ring drained");
}

int main(void) {
  struct ctx x;
  if (rt_init(&x, "test_ring") != 0) {
    printf("not ok - mkdtemp under /dev/shm\n");
    return 1;
  }
  test_order(&x);
  test_release(&x);
  test_seek(&x);
  test_range_and_stats(&x);
  test_seek_unanswered(&x);
  test_busy(&x);
  test_stress(&x);
  rt_cleanup(&x);
  return check_done(&x.t, "test_ring");
}
