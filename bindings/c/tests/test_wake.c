/*
 * test_wake - wake-ups must not be lost, in either direction. A sleeper re-checks at the
 * end of every 50 ms slice, so a lost wake does not hang anything; it only costs time.
 * These tests measure that time and fail if a wake is lost:
 *   - consumer wake: a consumer asleep in shml_next on head_bell is woken by the publish
 *     (its cons_waiting must reach the producer);
 *   - producer wake: a producer asleep on tail_bell, waiting for space, is woken by
 *     shml_release (the library must bump and FUTEX_WAKE tail_bell).
 * Each is measured ROUNDS times; the median must be below LIMIT_NS (a lost consumer wake
 * costs about 20 ms here, a lost producer wake the child's whole 1 s wait).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ringtest.h"

#define ROUNDS 9
#define LIMIT_NS 5000000LL   /* median wake latency */
#define ASLEEP_MS 30         /* how long the other side waits before waking the sleeper */
#define CHILD_WAIT_NS 1000000000LL

static int cmp64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static int64_t median(int64_t *v, int n) {
  qsort(v, (size_t)n, sizeof v[0], cmp64);
  return n > 0 ? v[n / 2] : -1;
}

/* The producer of the consumer-wake test: for each round, once the consumer has released
 * everything (and so is back in shml_next), give it ASLEEP_MS to spin and fall asleep on
 * head_bell, then publish one batch. fp_fill stamps CLOCK_MONOTONIC into t_ns row 0 as
 * its last write; fp_publish stores head (seq-cst), then reads cons_waiting and bumps and
 * wakes head_bell if it is set (PROTOCOL.md "Publishing and reading", step 3). */
static int produce_rounds(const struct fp_plan *pl) {
  struct fp p;
  if (fp_create(&p, pl) != 0) return 1;
  int rc = 0;
  for (uint64_t s = 0; rc == 0 && s <= ROUNDS; s++) {
    int64_t deadline = shml__now_ns() + 5000000000LL;
    while (__atomic_load_n(&p.h->tail, __ATOMIC_ACQUIRE) != p.head) { /* [REL] */
      if (shml__now_ns() > deadline) {
        rc = 1;
        break;
      }
      usleep(100);
    }
    if (rc != 0) break;
    rt_sleep_ms(ASLEEP_MS);
    if (s == ROUNDS) {
      fp_publish(&p, 0, 0, 0, SHML__END_OF_STREAM);
      fp_state(&p, SHML__FINISHED);
      break;
    }
    fp_fill(&p, 0, s, pl->rows);
    fp_publish(&p, 0, s, pl->rows, 0);
  }
  /* Let the consumer finish reading before the segment goes. */
  int64_t deadline = shml__now_ns() + 5000000000LL;
  while (rc == 0 && __atomic_load_n(&p.h->tail, __ATOMIC_ACQUIRE) != p.head &&
         shml__now_ns() < deadline)
    usleep(1000);
  fp_close(&p, 1);
  return rc;
}

static void test_consumer_wake(struct ctx *x) {
  struct check *t = &x->t;
  shml_consumer *c;
  shml_batch b;
  int64_t lat[ROUNDS];
  struct fp_plan pl = rt_plan(x, "conswake");
  pl.batches = ROUNDS;
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) _exit(produce_rounds(&pl));
  if (rt_attach(x, "conswake", 5000, &c) != SHML_OK) {
    CHECK(t, 0, "attach");
    return rt_stop(pid);
  }
  int n = 0, bad = 0;
  while (n < ROUNDS) {
    int rc = shml_next(c, 5000, &b);
    int64_t now = shml__now_ns();
    if (rc != SHML_OK || !rt_batch_ok(x, &pl, c, &b, (uint64_t)n, 0, (uint64_t)n)) {
      bad++;
      break;
    }
    lat[n++] = now - *(const int64_t *)b.tensors[FP_TNS].data;
    shml_release(c, &b);
  }
  CHECK_RC(t, shml_next(c, 5000, &b), SHML_EEOS, "consumer wake: end of stream after the rounds");
  int64_t med = median(lat, n);
  CHECK(t, bad == 0 && n == ROUNDS && med < LIMIT_NS,
        "consumer asleep in shml_next %d ms is woken by the publish: median latency %lld us "
        "over %d rounds (limit %lld us; a lost wake costs ~20 ms)",
        ASLEEP_MS, (long long)med / 1000, n, LIMIT_NS / 1000);
  shml_detach(c);
  CHECK(t, rt_reap(pid) == 0, "consumer wake: producer saw its ring drained");
}

/* Shared between the test and the child playing the waiting producer. */
struct pw_shared {
  int64_t stamp;   /* CLOCK_MONOTONIC just before shml_release */
  int64_t latency; /* child: when it saw tail move - stamp (-1: it never did) */
};

/* A producer waiting for space on a full ring (PROTOCOL.md: the producer's wait sleeps on
 * tail_bell the same way the consumer's does): read tail_bell, store prod_waiting = 1
 * (seq-cst), re-check tail (seq-cst), FUTEX_WAIT on tail_bell (shared), for up to 1 s in
 * all. Reports when it woke relative to the parent's stamp. */
static int wait_space(struct shml__header *h, uint32_t slot_count, struct pw_shared *sh) {
  uint64_t head = __atomic_load_n(&h->head, __ATOMIC_ACQUIRE);
  int64_t end = shml__now_ns() + CHILD_WAIT_NS;
  int err = 0, moved = 0;
  for (;;) {
    uint32_t bell = __atomic_load_n(&h->tail_bell, __ATOMIC_ACQUIRE);
    __atomic_store_n(&h->prod_waiting, 1, __ATOMIC_SEQ_CST);
    uint64_t tail = __atomic_load_n(&h->tail, __ATOMIC_SEQ_CST); /* [REL] */
    if (head - tail < slot_count) {
      moved = 1;
      break;
    }
    int64_t left = end - shml__now_ns();
    if (left <= 0) break;
    if (shml__futex_wait(&h->tail_bell, bell, left, &err) != SHML_OK) break;
  }
  int64_t now = shml__now_ns();
  __atomic_store_n(&h->prod_waiting, 0, __ATOMIC_SEQ_CST);
  sh->latency = moved ? now - __atomic_load_n(&sh->stamp, __ATOMIC_ACQUIRE) : -1;
  return 0;
}

static void test_producer_wake(struct ctx *x) {
  struct check *t = &x->t;
  struct fp p;
  shml_consumer *c;
  shml_batch b;
  int64_t lat[ROUNDS];
  struct fp_plan pl = rt_plan(x, "prodwake");
  pl.batches = 1000;
  struct pw_shared *sh =
      mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (!CHECK(t, sh != MAP_FAILED, "map a shared page")) return;
  if (fp_create(&p, &pl) != 0 || rt_attach(x, "prodwake", 1000, &c) != SHML_OK) {
    CHECK(t, 0, "create and attach");
    fp_close(&p, 1);
    munmap(sh, sizeof *sh);
    return;
  }
  int n = 0, bad = 0;
  for (int r = 0; r < ROUNDS && bad == 0; r++) {
    /* Fill the ring and hold the oldest batch: the producer has no room. */
    while (p.head - __atomic_load_n(&p.h->tail, __ATOMIC_ACQUIRE) < pl.depth) {
      fp_fill(&p, 0, p.head, pl.rows);
      fp_publish(&p, 0, p.head, pl.rows, 0);
    }
    if (shml_next(c, 1000, &b) != SHML_OK || b.seq != rt_tail(c)) {
      bad++;
      break;
    }
    memset(sh, 0, sizeof *sh);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) _exit(wait_space(p.h, pl.depth, sh));
    /* Wait until the child announced itself, then give it time to fall asleep. */
    int64_t deadline = shml__now_ns() + 5000000000LL;
    while (__atomic_load_n(&p.h->prod_waiting, __ATOMIC_SEQ_CST) == 0 &&
           shml__now_ns() < deadline)
      usleep(100);
    rt_sleep_ms(ASLEEP_MS);
    __atomic_store_n(&sh->stamp, shml__now_ns(), __ATOMIC_RELEASE);
    if (shml_release(c, &b) != SHML_OK) bad++;
    if (rt_reap(pid) != 0 || sh->latency < 0) bad++;
    lat[n++] = sh->latency;
  }
  int64_t med = median(lat, n);
  CHECK(t, bad == 0 && n == ROUNDS && med < LIMIT_NS,
        "producer asleep on a full ring %d ms is woken by shml_release: median latency %lld us "
        "over %d rounds (limit %lld us; a lost wake costs the child's whole 1 s wait)",
        ASLEEP_MS, (long long)med / 1000, n, LIMIT_NS / 1000);
  CHECK(t, __atomic_load_n(&p.h->prod_waiting, __ATOMIC_ACQUIRE) == 0,
        "producer wake: prod_waiting back to 0");
  shml_detach(c);
  fp_close(&p, 1);
  munmap(sh, sizeof *sh);
}

int main(void) {
  struct ctx x;
  if (rt_init(&x, "test_wake") != 0) {
    printf("not ok - mkdtemp under /dev/shm\n");
    return 1;
  }
  test_consumer_wake(&x);
  test_producer_wake(&x);
  rt_cleanup(&x);
  return check_done(&x.t, "test_wake");
}
