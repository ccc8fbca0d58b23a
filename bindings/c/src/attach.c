/*
 * attach.c - finding, validating and claiming a ring; detaching from it.
 *
 * Attach polls until the segment exists, its producer lock (byte 0) is held and its
 * version is nonzero. A segment whose producer lock is free belongs to a dead producer;
 * a restarted producer replaces it, so attach keeps waiting and only reports SHML_EGONE
 * at the deadline if nothing else was ever seen.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define POLL_NS 10000000LL /* attach re-checks the directory every 10 ms */

#define SEEN_STALE 1
#define SEEN_LIVE 2

static int seg_path(char *buf, size_t n, const char *dir, const char *job, int rank) {
  if (dir == NULL || dir[0] == '\0') dir = getenv("SHMLOADER_SHM_DIR");
  if (dir == NULL || dir[0] == '\0') dir = "/dev/shm";
  int len = snprintf(buf, n, "%s/shmloader-%u-%s-r%d", dir, (unsigned)getuid(), job, rank);
  return (len < 0 || (size_t)len >= n) ? SHML_EINVAL : SHML_OK;
}

static void unmap_close(shml_consumer *c) {
  if (c->base != NULL) munmap(c->base, c->size);
  if (c->fd >= 0) close(c->fd);
  c->base = NULL;
  c->hdr = NULL;
  c->fd = -1;
}

static void destroy(shml_consumer *c) {
  unmap_close(c);
  free(c->held);
  free(c->tensors);
  free(c);
}

static int claim(int fd, int *err) {
  struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 1, .l_len = 1};
  if (fcntl(fd, F_OFD_SETLK, &fl) == 0) return SHML_OK;
  if (errno == EAGAIN || errno == EACCES) return SHML_EBUSY;
  *err = errno;
  return SHML_ESYS;
}

/* One look at the path: SHML_OK with c mapped, validated and claimed; SHML__NOTREADY to
 * look again later (*seen says what was found); or a final error. */
static int probe(shml_consumer *c, const char *path, const char *job, int rank, int *seen) {
  struct stat st;
  c->fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
  if (c->fd < 0) {
    if (errno == ENOENT) return SHML__NOTREADY;
    if (errno == ELOOP || errno == EACCES || errno == EISDIR) return SHML_EPERM;
    c->err = errno;
    return SHML_ESYS;
  }
  if (fstat(c->fd, &st) != 0) {
    c->err = errno;
    return SHML_ESYS;
  }
  if (!S_ISREG(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 07777) != 0600)
    return SHML_EPERM;
  int alive = shml__producer_alive(c->fd, &c->err);
  if (alive < 0) return alive;
  if (!alive) {
    *seen |= SEEN_STALE;
    unmap_close(c);
    return SHML__NOTREADY;
  }
  *seen |= SEEN_LIVE;
  if (st.st_size < (off_t)SHML__HEADER_BYTES) return SHML_ESIZE;
  c->size = (size_t)st.st_size;
  /* MAP_POPULATE: fault the pages in now, not on the first touch of each batch. */
  void *base = mmap(NULL, c->size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, c->fd, 0);
  if (base == MAP_FAILED) {
    c->err = errno;
    return SHML_ESYS;
  }
  c->base = base;
  c->hdr = base;
  int rc = shml__validate(c->base, c->size, job, rank, &c->g);
  if (rc == SHML__NOTREADY) unmap_close(c);
  if (rc != SHML_OK) return rc;
  return claim(c->fd, &c->err);
}

/* The ring is ours: start at tail, publish our pid, settle the seek generation. */
static int adopt(shml_consumer *c) {
  struct shml__header *h = c->hdr;
  size_t n = c->g.slot_count;
  c->held = calloc(n, 1);
  c->tensors = calloc(n * c->g.schema_count, sizeof *c->tensors);
  if (c->held == NULL || c->tensors == NULL) return SHML_ENOMEM;
  c->tail = __atomic_load_n(&h->tail, __ATOMIC_ACQUIRE); /* [REL] a previous consumer's */
  c->cursor = c->tail;
  uint64_t head = __atomic_load_n(&h->head, __ATOMIC_ACQUIRE); /* [PUB] */
  if (c->tail > head || head - c->tail > c->g.slot_count) return SHML_ECORRUPT;
  __atomic_store_n(&h->consumer_pid, (int32_t)getpid(), __ATOMIC_RELAXED);
  /* A new trainer of the rank reads: a done its predecessor said is not its. [DONE] */
  __atomic_store_n(&h->cons_done, 0, __ATOMIC_SEQ_CST);
  /* An odd seek_seq is a request its consumer died writing: drop it. */
  uint64_t s = __atomic_load_n(&h->seek_seq, __ATOMIC_SEQ_CST); /* [SEEK] */
  if (s & 1) {
    s--;
    __atomic_store_n(&h->seek_seq, s, __ATOMIC_SEQ_CST); /* [SEEK] */
  }
  c->gen = s / 2;
  c->live_checked_ns = shml__now_ns();
  c->spin_ns = shml__spin_ns();
  return SHML_OK;
}

/* shml_peek_segment on an open segment: the checks of attach's first steps, read-only. */
static int peek_fd(int fd, const char *job, int rank, shml_segment *out) {
  struct stat st;
  /* The identity line (line 0), written before version and never changed. */
  struct shml__header h;
  size_t want = offsetof(struct shml__header, head);
  int err = 0;
  if (fstat(fd, &st) != 0) {
    out->sys_errno = errno;
    return SHML_ESYS;
  }
  if (!S_ISREG(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 07777) != 0600)
    return SHML_EPERM;
  int alive = shml__producer_alive(fd, &err);
  if (alive < 0) {
    out->sys_errno = err;
    return alive;
  }
  out->producer_alive = alive;
  memset(&h, 0, sizeof h);
  ssize_t n = pread(fd, &h, want, 0);
  if (n < 0) {
    out->sys_errno = errno;
    return SHML_ESYS;
  }
  if ((size_t)n < want) return SHML_ESIZE;
  if (memcmp(h.magic, SHML__MAGIC, sizeof h.magic) != 0) {
    static const char zero[sizeof h.magic];
    /* Magic and version are written in that order: a zero magic is a header being written. */
    return memcmp(h.magic, zero, sizeof zero) == 0 ? SHML_OK : SHML_EMAGIC;
  }
  /* Offsets 0 and 8 hold magic and version in every protocol version; the rest only in
   * this one. */
  out->version = h.version;
  if (h.version != SHML_PROTOCOL_VERSION) return SHML_OK;
  if (shml__check_identity(&h, job, rank) != SHML_OK) return SHML_ECORRUPT;
  out->rank = h.rank;
  out->ranks = h.ranks;
  out->producer_pid = h.producer_pid;
  return SHML_OK;
}

SHML_API int shml_peek_segment(const char *dir, const char *job, int rank, shml_segment *out) {
  char path[PATH_MAX];
  if (out == NULL) return SHML_EINVAL;
  memset(out, 0, sizeof *out);
  if (!shml__job_ok(job) || rank < 0) return SHML_EINVAL;
  int rc = seg_path(path, sizeof path, dir, job, rank);
  if (rc != SHML_OK) return rc;
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ELOOP) return SHML_EPERM;
    out->sys_errno = errno;
    return SHML_ESYS;
  }
  rc = peek_fd(fd, job, rank, out);
  close(fd);
  return rc;
}

/* For a rank whose segment does not exist: 1 if rank 0 of the job has a live producer whose
 * published header says the job has fewer ranks (a launch and a config that disagree,
 * worth saying at once rather than at the timeout), else 0. */
static int rank_missing(const char *dir, const char *job, int rank) {
  shml_segment s;
  return rank != 0 && shml_peek_segment(dir, job, 0, &s) == SHML_OK && s.producer_alive &&
         s.version == SHML_PROTOCOL_VERSION && s.ranks >= 1 && (uint32_t)rank >= s.ranks;
}

static void sleep_until(int64_t deadline) {
  int64_t ns = POLL_NS;
  int64_t left = deadline >= 0 ? deadline - shml__now_ns() : ns;
  if (left < ns) ns = left;
  if (ns <= 0) return;
  struct timespec ts = {.tv_sec = ns / 1000000000LL, .tv_nsec = ns % 1000000000LL};
  nanosleep(&ts, NULL);
}

SHML_API int shml_attach_dir(const char *dir, const char *job, int rank, int timeout_ms,
                             shml_consumer **out) {
  char path[PATH_MAX];
  if (out == NULL) return SHML_EINVAL;
  *out = NULL;
  if (!shml__job_ok(job) || rank < 0) return SHML_EINVAL;
  int rc = seg_path(path, sizeof path, dir, job, rank);
  if (rc != SHML_OK) return rc;
  shml_consumer *c = calloc(1, sizeof *c);
  if (c == NULL) return SHML_ENOMEM;
  c->fd = -1;
  int64_t deadline = shml__deadline(timeout_ms);
  int seen = 0;
  for (;;) {
    rc = probe(c, path, job, rank, &seen);
    if (rc != SHML__NOTREADY) break;
    if (seen == 0 && rank_missing(dir, job, rank)) {
      rc = SHML_ERANK;
      break;
    }
    if (deadline >= 0 && shml__now_ns() >= deadline) {
      rc = seen == SEEN_STALE ? SHML_EGONE : SHML_ETIMEOUT;
      break;
    }
    sleep_until(deadline);
  }
  if (rc == SHML_OK) rc = adopt(c);
  if (rc != SHML_OK) {
    destroy(c);
    return rc;
  }
  *out = c;
  return SHML_OK;
}

SHML_API int shml_attach(const char *job, int rank, int timeout_ms, shml_consumer **out) {
  return shml_attach_dir(NULL, job, rank, timeout_ms, out);
}

SHML_API int shml_detach(shml_consumer *c) {
  if (c == NULL) return SHML_OK;
  __atomic_store_n(&c->hdr->consumer_pid, 0, __ATOMIC_RELAXED);
  shml__release_all(c);
  destroy(c);
  return SHML_OK;
}
