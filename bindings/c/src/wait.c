/*
 * wait.c - clocks, futexes and the producer liveness check.
 *
 * The futex words live in a file mapping shared by two processes, so the calls use the
 * shared operations (no FUTEX_PRIVATE_FLAG). Sleeps last at most one 50 ms slice, after
 * which the state and the producer lock are checked again, so a producer killed with
 * SIGKILL is noticed within a slice even though it never wakes anyone.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define SPIN_NS 100000LL     /* default spin before the first sleep (ring.SpinFor) */
#define SPIN_MAX_NS 1000000000LL
#define SLICE_NS 50000000LL  /* longest single futex sleep */

int64_t shml__now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int64_t shml__spin_ns(void) {
  const char *v = getenv("SHMLOADER_SPIN_US");
  if (v == NULL || *v < '0' || *v > '9') return SPIN_NS; /* also: no sign, no blanks */
  char *end = NULL;
  errno = 0;
  long long us = strtoll(v, &end, 10);
  if (errno != 0 || *end != '\0' || us < 0 || us * 1000LL > SPIN_MAX_NS) return SPIN_NS;
  return us * 1000LL;
}

int64_t shml__deadline(int timeout_ms) {
  if (timeout_ms < 0) return -1;
  return shml__now_ns() + (int64_t)timeout_ms * 1000000LL;
}

int shml__futex_wait(uint32_t *word, uint32_t expect, int64_t timeout_ns, int *err) {
  struct timespec ts = {.tv_sec = timeout_ns / 1000000000LL, .tv_nsec = timeout_ns % 1000000000LL};
  if (syscall(SYS_futex, word, FUTEX_WAIT, expect, &ts, NULL, 0) == 0) return SHML_OK;
  if (errno == EAGAIN || errno == EINTR || errno == ETIMEDOUT) return SHML_OK;
  *err = errno;
  return SHML_ESYS;
}

void shml__futex_wake(uint32_t *word) {
  syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

int shml__producer_alive(int fd, int *err) {
  struct flock fl = {.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
  if (fcntl(fd, F_OFD_GETLK, &fl) != 0) {
    *err = errno;
    return SHML_ESYS;
  }
  return fl.l_type != F_UNLCK;
}

static void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* Something for next to look at: a new slot or a final state. */
static int moved(const shml_consumer *c) {
  if (__atomic_load_n(&c->hdr->head, __ATOMIC_ACQUIRE) != c->cursor) return 1; /* [PUB] */
  return __atomic_load_n(&c->hdr->state, __ATOMIC_ACQUIRE) >= SHML__FINISHED; /* [STATE] */
}

static int check_live(shml_consumer *c, int64_t now) {
  c->live_checked_ns = now;
  int alive = shml__producer_alive(c->fd, &c->err);
  if (alive < 0) return alive;
  return alive ? SHML_OK : SHML_EGONE;
}

int shml__wait_head(shml_consumer *c, int64_t deadline) {
  struct shml__header *h = c->hdr;
  int64_t now = shml__now_ns();
  int64_t spin_end = now + c->spin_ns;
  if (deadline >= 0 && spin_end > deadline) spin_end = deadline;
  while (now < spin_end) {
    for (int i = 0; i < 64; i++) {
      if (moved(c)) return SHML_OK;
      cpu_relax();
    }
    now = shml__now_ns();
  }
  for (;;) {
    now = shml__now_ns();
    if (deadline >= 0 && now >= deadline) {
      /* A dead producer is SHML_EGONE, not a timeout; callers polling with timeout 0
       * pay for the lock check at most once per slice. */
      if (now - c->live_checked_ns >= SLICE_NS) {
        int rc = check_live(c, now);
        if (rc != SHML_OK) return rc;
      }
      return SHML_ETIMEOUT;
    }
    int64_t slice = SLICE_NS;
    if (deadline >= 0 && deadline - now < slice) slice = deadline - now;

    uint32_t bell = __atomic_load_n(&h->head_bell, __ATOMIC_ACQUIRE);
    /* Sequentially consistent with the re-load of head below, pairing with the producer's
     * store of head and load of cons_waiting: either we see the new head or it sees
     * cons_waiting != 0 and bumps the bell after our read of it. */
    __atomic_store_n(&h->cons_waiting, 1, __ATOMIC_SEQ_CST);
    uint64_t head = __atomic_load_n(&h->head, __ATOMIC_SEQ_CST); /* [PUB] */
    int rc = SHML_OK;
    if (head == c->cursor && !moved(c)) rc = shml__futex_wait(&h->head_bell, bell, slice, &c->err);
    __atomic_store_n(&h->cons_waiting, 0, __ATOMIC_SEQ_CST);
    if (rc != SHML_OK) return rc;
    if (moved(c)) return SHML_OK;
    rc = check_live(c, shml__now_ns());
    if (rc != SHML_OK) return rc;
  }
}
