/*
 * test_notes - the ring's words (PROTOCOL.md "Stop reasons and stall notes"): a
 * trainer reads why its producer stopped and why its rank waits, bounded and
 * NUL-terminated whatever the producer wrote, and shml_done reaches the producer. The
 * producer runs in this process, so every interleaving is fixed.
 */
#include <string.h>

#include "ringtest.h"

static void put_stall(struct fp *p, const char *text) {
  uint64_t s = __atomic_load_n(&p->h->stall_seq, __ATOMIC_RELAXED);
  __atomic_store_n(&p->h->stall_seq, s + 1, __ATOMIC_SEQ_CST); /* [NOTE] odd */
  memset(p->h->stall_text, 0, sizeof p->h->stall_text);
  memcpy(p->h->stall_text, text, strlen(text));
  __atomic_store_n(&p->h->stall_seq, s + 2, __ATOMIC_RELEASE); /* [NOTE] even */
}

static void stop(struct fp *p, uint32_t kind, const char *text) {
  memset(p->h->stop_text, 0, sizeof p->h->stop_text);
  memcpy(p->h->stop_text, text, strlen(text));
  __atomic_store_n(&p->h->stop_kind, kind, __ATOMIC_RELAXED);
  fp_state(p, SHML__STOPPED); /* [STATE] release */
}

static void test_stall(struct ctx *x) {
  struct check *t = &x->t;
  struct fp p;
  shml_consumer *c;
  shml_batch b;
  char buf[1024];
  struct fp_plan pl = rt_plan(x, "stall");
  if (fp_create(&p, &pl) != 0 || rt_attach(x, "stall", 1000, &c) != SHML_OK) {
    CHECK(t, 0, "create and attach");
    return fp_close(&p, 1);
  }
  CHECK(t, shml_stall_reason(c, buf, sizeof buf) == SHML_OK && buf[0] == '\0',
        "no stall note: \"\"");
  const char *why = "rank 0 waits: rank 1 has had no trainer for 42 s (its windows hold 3 of 4)";
  put_stall(&p, why);
  CHECK_RC(t, shml_next(c, 30, &b), SHML_ETIMEOUT, "no batch: SHML_ETIMEOUT");
  CHECK(t, shml_stall_reason(c, buf, sizeof buf) == SHML_OK && strcmp(buf, why) == 0,
        "then the producer's note: %s", buf);
  CHECK(t, shml_stall_reason(c, buf, 8) == SHML_OK && strcmp(buf, "rank 0 ") == 0,
        "a small buffer gets the text cut, NUL-terminated: '%s'", buf);
  memset(p.h->stall_text, 'x', sizeof p.h->stall_text); /* no NUL at all */
  memset(buf, 'y', sizeof buf);
  int rc = shml_stall_reason(c, buf, sizeof buf);
  size_t n = strnlen(buf, sizeof buf);
  CHECK(t, rc == SHML_OK && n == sizeof p.h->stall_text,
        "a field without a NUL: read up to its end and no further, NUL-terminated (%zu)", n);
  __atomic_store_n(&p.h->stall_seq, 7, __ATOMIC_RELEASE); /* a writer that never finishes */
  CHECK(t, shml_stall_reason(c, buf, sizeof buf) == SHML_OK && buf[0] == '\0',
        "a note being rewritten all the while: \"\", never a torn text");
  CHECK_RC(t, shml_stall_reason(c, buf, 0), SHML_EINVAL, "size 0: SHML_EINVAL");
  int kind = -1;
  CHECK(t, shml_stop_reason(c, &kind, buf, sizeof buf) == SHML_OK && kind == SHML_STOP_NONE &&
               buf[0] == '\0',
        "a running producer: SHML_STOP_NONE, \"\"");
  CHECK(t, __atomic_load_n(&p.h->cons_done, __ATOMIC_ACQUIRE) == 0, "cons_done starts at 0");
  CHECK_RC(t, shml_done(c), SHML_OK, "shml_done");
  CHECK(t, __atomic_load_n(&p.h->cons_done, __ATOMIC_ACQUIRE) == 1, "sets cons_done [DONE]");
  shml_detach(c);
  CHECK(t, __atomic_load_n(&p.h->cons_done, __ATOMIC_ACQUIRE) == 1, "detach leaves it set");
  if (rt_attach(x, "stall", 1000, &c) == SHML_OK) {
    CHECK(t, __atomic_load_n(&p.h->cons_done, __ATOMIC_ACQUIRE) == 0,
          "a new consumer of the rank clears it: its predecessor's done is not its");
    shml_detach(c);
  }
  fp_close(&p, 1);
}

static void test_stop(struct ctx *x) {
  struct check *t = &x->t;
  struct fp p;
  shml_consumer *c;
  shml_batch b;
  char buf[2048];
  int kind = -1;
  struct fp_plan pl = rt_plan(x, "stop");
  if (fp_create(&p, &pl) != 0 || rt_attach(x, "stop", 1000, &c) != SHML_OK) {
    CHECK(t, 0, "create and attach");
    return fp_close(&p, 1);
  }
  fp_fill(&p, 0, 0, fp_rows(&pl, 0));
  fp_publish(&p, 0, 0, fp_rows(&pl, 0), 0);
  const char *why = "data/part-3.parquet: row group 5, column f017, page 2: snappy: corrupt input";
  stop(&p, SHML_STOP_ERROR, why);
  CHECK(t, shml_next(c, 1000, &b) == SHML_OK && b.step == 0, "what was published comes first");
  shml_release(c, &b);
  CHECK_RC(t, shml_next(c, 1000, &b), SHML_EGONE, "then SHML_EGONE");
  CHECK(t, shml_stop_reason(c, &kind, buf, sizeof buf) == SHML_OK && kind == SHML_STOP_ERROR &&
               strcmp(buf, why) == 0,
        "with the producer's reason: kind %d, '%s'", kind, buf);
  CHECK(t, shml_stop_reason(c, &kind, NULL, 0) == SHML_OK && kind == SHML_STOP_ERROR,
        "the kind alone (buf NULL, size 0)");
  CHECK_RC(t, shml_stop_reason(c, NULL, buf, sizeof buf), SHML_EINVAL, "kind NULL: SHML_EINVAL");
  __atomic_store_n(&p.h->stop_kind, 99, __ATOMIC_RELAXED);
  memset(p.h->stop_text, 'z', sizeof p.h->stop_text);
  memset(buf, 'y', sizeof buf);
  int rc = shml_stop_reason(c, &kind, buf, sizeof buf);
  size_t n = strnlen(buf, sizeof buf);
  CHECK(t, rc == SHML_OK && kind == SHML_STOP_ERROR && n == sizeof p.h->stop_text,
        "an unknown kind reads as SHML_STOP_ERROR; a text without NUL is bounded (%zu)", n);
  shml_detach(c);
  fp_close(&p, 1);

  /* Finished: nothing to explain. */
  if (fp_create(&p, &pl) != 0 || rt_attach(x, "stop", 1000, &c) != SHML_OK) {
    CHECK(t, 0, "create and attach");
    return fp_close(&p, 1);
  }
  fp_state(&p, SHML__FINISHED);
  CHECK(t, shml_next(c, 1000, &b) == SHML_EEOS &&
               shml_stop_reason(c, &kind, buf, sizeof buf) == SHML_OK &&
               kind == SHML_STOP_NONE && buf[0] == '\0',
        "a finished stream: SHML_EEOS, SHML_STOP_NONE");
  shml_detach(c);
  fp_close(&p, 1);

  /* Died without a word: its lock is gone, its state still says running. */
  if (fp_create(&p, &pl) != 0 || rt_attach(x, "stop", 1000, &c) != SHML_OK) {
    CHECK(t, 0, "create and attach");
    return fp_close(&p, 1);
  }
  fp_close(&p, 0); /* drops the byte-0 lock, as a kill -9 does */
  CHECK(t, shml_next(c, 1000, &b) == SHML_EGONE &&
               shml_stop_reason(c, &kind, buf, sizeof buf) == SHML_OK &&
               kind == SHML_STOP_DIED && buf[0] == '\0',
        "a producer that died: SHML_EGONE, SHML_STOP_DIED, \"\"");
  shml_detach(c);
}

int main(void) {
  struct ctx x;
  if (rt_init(&x, "test_notes") != 0) {
    printf("not ok - mkdtemp under /dev/shm\n");
    return 1;
  }
  test_stall(&x);
  test_stop(&x);
  rt_cleanup(&x);
  return check_done(&x.t, "test_notes");
}
