/*
 * test_ring_fail - failures and time against a producer in another process: kill -9,
 * stop and finish states, timeouts, wakeups, stale and late segments, and corrupt slot
 * headers and counters.
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

static int64_t cpu_ms(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000LL +
         (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000;
}

static int cmp64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static void test_kill(struct ctx *x) {
  struct check *t = &x->t;
  shml_consumer *c;
  shml_batch b;
  struct fp_plan pl = rt_plan(x, "kill");
  pl.depth = 8;
  pl.epochs = 0;
  pl.batches = 1000;
  pl.interval_us = 2000;
  pid_t pid = rt_spawn(&pl, 0);
  if (rt_attach(x, "kill", 5000, &c) != SHML_OK) {
    CHECK(t, 0, "attach");
    return rt_stop(pid);
  }
  int bad = 0;
  for (uint64_t s = 0; s < 10; s++) {
    if (shml_next(c, 5000, &b) != SHML_OK || !rt_batch_ok(x, &pl, c, &b, s, 0, s)) bad++;
    shml_release(c, &b);
  }
  CHECK(t, bad == 0, "10 batches from an endless producer");
  kill(pid, SIGKILL);
  rt_reap(pid);
  int64_t t0 = shml__now_ns();
  int rc, n = 0;
  while ((rc = shml_next(c, 10000, &b)) == SHML_OK && n++ < 100) shml_release(c, &b);
  int64_t ms = rt_ms_since(t0);
  CHECK_RC(t, rc, SHML_EGONE, "producer killed with SIGKILL mid-stream");
  CHECK(t, ms < 2000, "... noticed within 2 s (%lld ms, %d batches drained)", (long long)ms, n);
  shml_detach(c);
}

static void test_states(struct ctx *x) {
  struct check *t = &x->t;
  shml_consumer *c;
  shml_batch b;
  const struct {
    const char *job;
    uint32_t state;
    int want;
  } cases[] = {{"stopped", SHML__STOPPED, SHML_EGONE}, {"finished", SHML__FINISHED, SHML_EEOS}};
  for (int i = 0; i < 2; i++) {
    struct fp_plan pl = rt_plan(x, cases[i].job);
    pl.batches = 3;
    pl.end_state = cases[i].state;
    pl.linger_ms = -1;
    pid_t pid = rt_spawn(&pl, 0);
    if (rt_attach(x, cases[i].job, 5000, &c) != SHML_OK) {
      CHECK(t, 0, "attach");
      rt_stop(pid);
      continue;
    }
    while (__atomic_load_n(&rt_hdr(c)->state, __ATOMIC_ACQUIRE) != cases[i].state) rt_sleep_ms(1);
    int bad = 0;
    for (uint64_t s = 0; s < 3; s++) {
      if (shml_next(c, 5000, &b) != SHML_OK || !rt_batch_ok(x, &pl, c, &b, s, 0, s)) bad++;
      shml_release(c, &b);
    }
    if (shml_next(c, 5000, &b) != SHML_EEPOCH) bad++;
    CHECK(t, bad == 0, "state %u: what was published before is drained first", cases[i].state);
    int64_t t0 = shml__now_ns();
    CHECK_RC(t, shml_next(c, 5000, &b), cases[i].want,
             cases[i].state == SHML__STOPPED ? "state 3 (stopped), drained"
                                             : "state 2 (finished) without a marker, drained");
    CHECK(t, rt_ms_since(t0) < 500 && kill(pid, 0) == 0, "... at once, producer still alive");
    shml_detach(c);
    rt_stop(pid);
  }
}

static void test_timeout(struct ctx *x) {
  struct check *t = &x->t;
  shml_consumer *c;
  shml_batch b;
  struct fp_plan pl = rt_plan(x, "idle");
  pl.batches = 1;
  pl.linger_ms = -1;
  pid_t pid = rt_spawn(&pl, 0);
  if (rt_attach(x, "idle", 5000, &c) != SHML_OK) {
    CHECK(t, 0, "attach");
    return rt_stop(pid);
  }
  CHECK(t, shml_next(c, 5000, &b) == SHML_OK && shml_release(c, &b) == SHML_OK &&
               shml_next(c, 5000, &b) == SHML_EEPOCH,
        "one batch and an epoch marker");
  int64_t t0 = shml__now_ns(), cpu0 = cpu_ms();
  CHECK_RC(t, shml_next(c, 300, &b), SHML_ETIMEOUT, "live producer, nothing published");
  int64_t ms = rt_ms_since(t0), cpu = cpu_ms() - cpu0;
  CHECK(t, ms >= 300 && ms < 700, "... after 300 ms (%lld ms)", (long long)ms);
  CHECK(t, cpu < 60, "... sleeping, not spinning (%lld ms CPU)", (long long)cpu);
  t0 = shml__now_ns();
  CHECK_RC(t, shml_next(c, 0, &b), SHML_ETIMEOUT, "timeout 0");
  CHECK(t, rt_ms_since(t0) < 50, "... returns at once");
  CHECK_RC(t, shml_next(NULL, 0, &b), SHML_EINVAL, "next(NULL)");
  CHECK_RC(t, shml_next(c, 0, NULL), SHML_EINVAL, "next without a batch");
  CHECK_RC(t, shml_seek(NULL, 0, 0), SHML_EINVAL, "seek(NULL)");
  CHECK(t, shml_held(NULL) == 0 && shml_errno(c) == 0 && shml_info_get(c, NULL) == SHML_EINVAL,
        "held(NULL), errno, info(NULL)");
  shml_detach(c);
  rt_stop(pid);
}

static void test_wake(struct ctx *x) {
  struct check *t = &x->t;
  shml_consumer *c;
  shml_batch b;
  int64_t lat[30];
  struct fp_plan pl = rt_plan(x, "wake");
  pl.batches = 30;
  pl.interval_us = 20000;
  pl.eos = 1;
  pl.drain_ms = 5000;
  pid_t pid = rt_spawn(&pl, 0);
  if (rt_attach(x, "wake", 5000, &c) != SHML_OK) {
    CHECK(t, 0, "attach");
    return rt_stop(pid);
  }
  int n = 0;
  while (n < 30 && shml_next(c, 5000, &b) == SHML_OK) {
    lat[n++] = shml__now_ns() - *(const int64_t *)b.tensors[FP_TNS].data;
    shml_release(c, &b);
  }
  qsort(lat, (size_t)n, sizeof lat[0], cmp64);
  CHECK(t, n == 30 && lat[n / 2] < 10000000,
        "a sleeping consumer is woken by the publish (median latency %lld us over %d batches "
        "20 ms apart)",
        n ? (long long)lat[n / 2] / 1000 : -1LL, n);
  shml_detach(c);
  rt_reap(pid);
}

static void test_stale(struct ctx *x) {
  struct check *t = &x->t;
  shml_consumer *c;
  shml_batch b;
  struct fp_plan pl = rt_plan(x, "stale");
  pl.batches = 1;
  pl.keep_file = 1;
  pl.eos = 1;
  CHECK(t, rt_reap(rt_spawn(&pl, 0)) == 0, "a producer exits and leaves its segment behind");
  int64_t t0 = shml__now_ns();
  CHECK_RC(t, rt_attach(x, "stale", 300, &c), SHML_EGONE, "attach to a stale segment");
  int64_t ms = rt_ms_since(t0);
  CHECK(t, ms >= 300 && ms < 1000, "... at the timeout (%lld ms)", (long long)ms);

  pl.keep_file = 0;
  pl.drain_ms = 5000;
  pid_t pid = rt_spawn(&pl, 200);
  CHECK_RC(t, rt_attach(x, "stale", 5000, &c), SHML_OK, "attach waits past a stale segment");
  if (c == NULL) return rt_stop(pid);
  shml_info info;
  shml_info_get(c, &info);
  CHECK(t, info.producer_pid == pid, "... for the restarted producer");
  CHECK(t, shml_next(c, 5000, &b) == SHML_OK && rt_batch_ok(x, &pl, c, &b, 0, 0, 0) &&
               shml_release(c, &b) == SHML_OK && shml_next(c, 5000, &b) == SHML_EEPOCH &&
               shml_next(c, 5000, &b) == SHML_EEOS,
        "... and reads its stream");
  shml_detach(c);
  CHECK(t, rt_reap(pid) == 0, "restarted producer saw its ring drained");

  pl = rt_plan(x, "late");
  pl.batches = 1;
  pl.linger_ms = -1;
  pid = rt_spawn(&pl, 300);
  t0 = shml__now_ns();
  CHECK_RC(t, rt_attach(x, "late", 5000, &c), SHML_OK, "attach before the producer starts");
  CHECK(t, rt_ms_since(t0) >= 250, "... returns once it has");
  shml_detach(c);
  rt_stop(pid);
}

/* Bad slot headers and counters, with the producer in this process. */
static void test_corrupt(struct ctx *x) {
  struct check *t = &x->t;
  const struct {
    const char *what;
    uint64_t seq_delta;
    uint32_t rows, flags;
  } cases[] = {
      {"slot seq != cursor", 1, 1, 0},
      {"rows > batch_capacity", 0, 9, 0},
      {"unknown flag bit", 0, 1, 4},
      {"marker with rows", 0, 1, SHML__END_OF_EPOCH},
      {"two marker bits", 0, 0, SHML__END_OF_EPOCH | SHML__END_OF_STREAM},
  };
  struct fp_plan pl = rt_plan(x, "corrupt");
  for (size_t i = 0; i < sizeof cases / sizeof cases[0] + 2; i++) {
    struct fp p;
    shml_consumer *c;
    shml_batch b;
    if (fp_create(&p, &pl) != 0 || rt_attach(x, "corrupt", 1000, &c) != SHML_OK) {
      CHECK(t, 0, "create and attach");
      fp_close(&p, 1);
      continue;
    }
    const char *what;
    if (i < sizeof cases / sizeof cases[0]) {
      struct shml__slot_header s = {.seq = cases[i].seq_delta, .rows = cases[i].rows,
                                    .flags = cases[i].flags};
      fp_publish_raw(&p, &s);
      what = cases[i].what;
    } else if (i == sizeof cases / sizeof cases[0]) {
      __atomic_store_n(&p.h->head, pl.depth + 1, __ATOMIC_RELEASE);
      what = "head - tail > slot_count";
    } else {
      __atomic_store_n(&p.h->state, 7, __ATOMIC_RELEASE);
      what = "unknown state";
    }
    CHECK_RC(t, shml_next(c, 1000, &b), SHML_ECORRUPT, what);
    shml_detach(c);
    fp_close(&p, 1);
  }
}

int main(void) {
  struct ctx x;
  if (rt_init(&x, "test_ring_fail") != 0) {
    printf("not ok - mkdtemp under /dev/shm\n");
    return 1;
  }
  test_kill(&x);
  test_states(&x);
  test_timeout(&x);
  test_wake(&x);
  test_stale(&x);
  test_corrupt(&x);
  rt_cleanup(&x);
  return check_done(&x.t, "test_ring_fail");
}
