/* fakeprod.c - see fakeprod.h. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../src/internal.h"
#include "fakeprod.h"

#define SLICE_NS 50000000LL

uint64_t fp_id(const struct fp_plan *pl, uint64_t epoch, uint64_t step, uint32_t row) {
  return ((epoch * pl->batches + step) * pl->ranks + pl->rank) * pl->rows + row;
}

uint8_t fp_byte(uint64_t id, uint64_t j) {
  uint64_t x = id * 0x9E3779B97F4A7C15ULL + j * 0xBF58476D1CE4E5B9ULL;
  return (uint8_t)(x >> 56);
}

uint32_t fp_rows(const struct fp_plan *pl, uint64_t step) {
  return pl->var_rows ? 1 + (uint32_t)(step % pl->rows) : pl->rows;
}

int fp_layout(const struct fp_plan *pl, struct img_tensor tensors[FP_NT], struct img_spec *spec,
              struct img_plan *plan) {
  const struct img_tensor std[FP_NT] = {
      {"id", SHML_INT64, 0, {0}},
      {"payload", SHML_UINT8, 1, {pl->row_bytes}},
      {"crc", SHML_UINT32, 0, {0}},
      {"t_ns", SHML_INT64, 0, {0}},
      {"x", SHML_FLOAT32, 2, {2, 3}},
  };
  memcpy(tensors, std, sizeof std);
  *spec = (struct img_spec){pl->job,  pl->rank, pl->ranks, pl->depth, pl->rows, FP_NT, tensors,
                            pl->ranged ? pl->batches : 0, pl->ranged ? pl->epochs : 0};
  return img_plan(spec, plan);
}

int fp_create(struct fp *p, const struct fp_plan *pl) {
  memset(p, 0, sizeof *p);
  p->fd = -1;
  p->pl = pl;
  crc32_init(&p->crc);
  if (fp_layout(pl, p->tensors, &p->spec, &p->plan) != 0) return -1;
  snprintf(p->path, sizeof p->path, "%s/shmloader-%u-%s-r%u", pl->dir, (unsigned)getuid(),
           pl->job, pl->rank);
  unlink(p->path);
  p->fd = open(p->path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (p->fd < 0) return -1;
  p->size = p->plan.total_size;
  if (ftruncate(p->fd, (off_t)p->size) != 0) return -1;
  void *base = mmap(NULL, p->size, PROT_READ | PROT_WRITE, MAP_SHARED, p->fd, 0);
  if (base == MAP_FAILED) return -1;
  p->base = base;
  p->h = base;
  struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
  if (fcntl(p->fd, F_OFD_SETLK, &fl) != 0) return -1;
  /* As if this producer had applied every complete request before. */
  p->gen = pl->seek_seq / 2;
  p->h->seek_seq = pl->seek_seq;
  p->h->seek_epoch = pl->seek_epoch;
  p->h->seek_step = pl->seek_step;
  p->h->seek_ack = p->gen;
  img_write(p->base, &p->spec, &p->plan); /* version last [HDR] */
  return 0;
}

void *fp_data(const struct fp *p, uint64_t seq, int tensor) {
  return p->base + p->plan.header_size + (seq % p->spec.slot_count) * p->plan.slot_size +
         p->plan.offset[tensor];
}

int fp_wait_space(struct fp *p, int timeout_ms) {
  struct shml__header *h = p->h;
  int64_t deadline = shml__deadline(timeout_ms);
  int err = 0;
  for (;;) {
    if (p->head - __atomic_load_n(&h->tail, __ATOMIC_ACQUIRE) < p->spec.slot_count) /* [REL] */
      return 0;
    if (deadline >= 0 && shml__now_ns() >= deadline) return -1;
    uint32_t bell = __atomic_load_n(&h->tail_bell, __ATOMIC_ACQUIRE);
    __atomic_store_n(&h->prod_waiting, 1, __ATOMIC_SEQ_CST);
    uint64_t tail = __atomic_load_n(&h->tail, __ATOMIC_SEQ_CST); /* [REL] */
    if (p->head - tail >= p->spec.slot_count)
      shml__futex_wait(&h->tail_bell, bell, SLICE_NS, &err);
    __atomic_store_n(&h->prod_waiting, 0, __ATOMIC_SEQ_CST);
  }
}

static int wait_drain(struct fp *p, int timeout_ms) {
  int64_t deadline = shml__deadline(timeout_ms);
  while (__atomic_load_n(&p->h->tail, __ATOMIC_ACQUIRE) != p->head) { /* [REL] */
    if (shml__now_ns() >= deadline) return -1;
    usleep(1000);
  }
  return 0;
}

void fp_fill(struct fp *p, uint64_t epoch, uint64_t step, uint32_t rows) {
  uint64_t seq = p->head, row_bytes = p->plan.row_bytes[FP_PAYLOAD];
  int64_t *id = fp_data(p, seq, FP_ID);
  uint8_t *pay = fp_data(p, seq, FP_PAYLOAD);
  uint32_t *crc = fp_data(p, seq, FP_CRC);
  int64_t *tns = fp_data(p, seq, FP_TNS);
  float *x = fp_data(p, seq, FP_X);
  for (uint32_t r = 0; r < rows; r++) {
    id[r] = (int64_t)fp_id(p->pl, epoch, step, r);
    uint8_t *row = pay + r * row_bytes;
    for (uint64_t j = 0; j < row_bytes; j++) row[j] = fp_byte((uint64_t)id[r], j);
    crc[r] = crc32_update(&p->crc, 0, row, row_bytes);
    tns[r] = 0;
    for (int j = 0; j < 6; j++) x[r * 6 + j] = (float)(id[r] + j);
  }
  if (rows > 0) tns[0] = shml__now_ns();
}

void fp_publish_raw(struct fp *p, const struct shml__slot_header *s) {
  struct shml__header *h = p->h;
  uint8_t *slot =
      p->base + p->plan.header_size + (p->head % p->spec.slot_count) * p->plan.slot_size;
  memcpy(slot, s, sizeof *s);
  p->head++;
  /* [PUB] release, and sequentially consistent with the load of cons_waiting */
  __atomic_store_n(&h->head, p->head, __ATOMIC_SEQ_CST);
  if (__atomic_load_n(&h->cons_waiting, __ATOMIC_SEQ_CST) != 0) {
    __atomic_fetch_add(&h->head_bell, 1, __ATOMIC_SEQ_CST);
    shml__futex_wake(&h->head_bell);
  }
}

void fp_publish(struct fp *p, uint64_t epoch, uint64_t step, uint32_t rows, uint32_t flags) {
  struct shml__slot_header s;
  memset(&s, 0, sizeof s);
  s.seq = p->head;
  s.epoch = epoch;
  s.step = step;
  s.rows = rows;
  s.flags = flags;
  s.gen = p->gen;
  fp_publish_raw(p, &s);
}

void fp_state(struct fp *p, uint32_t state) {
  __atomic_store_n(&p->h->state, state, __ATOMIC_SEQ_CST); /* [STATE] release */
  if (__atomic_load_n(&p->h->cons_waiting, __ATOMIC_SEQ_CST) != 0) {
    __atomic_fetch_add(&p->h->head_bell, 1, __ATOMIC_SEQ_CST);
    shml__futex_wake(&p->h->head_bell);
  }
}

int fp_poll_seek(struct fp *p, uint64_t *epoch, uint64_t *step) {
  struct shml__header *h = p->h;
  uint64_t s = __atomic_load_n(&h->seek_seq, __ATOMIC_SEQ_CST); /* [SEEK] */
  if ((s & 1) || s / 2 == p->gen) return 0;
  uint64_t e = __atomic_load_n(&h->seek_epoch, __ATOMIC_SEQ_CST);
  uint64_t st = __atomic_load_n(&h->seek_step, __ATOMIC_SEQ_CST);
  if (__atomic_load_n(&h->seek_seq, __ATOMIC_SEQ_CST) != s) return 0; /* [SEEK] rewritten */
  p->gen = s / 2;
  *epoch = e;
  *step = st;
  __atomic_store_n(&h->seek_ack, p->gen, __ATOMIC_RELEASE);
  return 1;
}

void fp_close(struct fp *p, int unlink_it) {
  if (unlink_it) unlink(p->path);
  if (p->base != NULL) munmap(p->base, p->size);
  if (p->fd >= 0) close(p->fd);
  p->base = NULL;
  p->fd = -1;
}

static void pause_us(int us) {
  struct timespec ts = {.tv_sec = us / 1000000, .tv_nsec = (long)(us % 1000000) * 1000};
  nanosleep(&ts, NULL);
}

static int marker(struct fp *p, uint64_t epoch, uint32_t flags) {
  if (fp_wait_space(p, 30000) != 0) return 1;
  fp_publish(p, epoch, 0, 0, flags);
  return 0;
}

int fp_run(const struct fp_plan *pl, struct fp_result *res) {
  struct fp p;
  memset(res, 0, sizeof *res);
  if (fp_create(&p, pl) != 0) return 1;
  int rc = 0;
  uint64_t epoch = 0, step = 0;
  while (rc == 0 && (pl->epochs == 0 || epoch < pl->epochs)) {
    if (fp_wait_space(&p, 30000) != 0) {
      rc = 1;
      break;
    }
    if (!pl->no_seek) fp_poll_seek(&p, &epoch, &step);
    if (step >= pl->batches) {
      rc = marker(&p, epoch, SHML__END_OF_EPOCH);
      epoch++;
      step = 0;
      continue;
    }
    uint32_t rows = fp_rows(pl, step);
    if (pl->interval_us > 0) pause_us(pl->interval_us);
    fp_fill(&p, epoch, step, rows);
    uint64_t n = rows * p.plan.row_bytes[FP_PAYLOAD];
    res->crc = crc32_update(&p.crc, res->crc, fp_data(&p, p.head, FP_PAYLOAD), n);
    if (epoch == 0 && (int64_t)step == pl->bad_crc_step)
      ((uint32_t *)fp_data(&p, p.head, FP_CRC))[0] ^= 1;
    fp_publish(&p, epoch, step, rows, 0);
    res->batches++;
    res->rows += rows;
    step++;
  }
  if (rc == 0 && pl->eos) {
    rc = marker(&p, epoch, SHML__END_OF_STREAM);
    fp_state(&p, SHML__FINISHED);
  } else if (rc == 0 && pl->end_state != 0) {
    fp_state(&p, pl->end_state);
  }
  if (rc == 0 && pl->drain_ms > 0 && wait_drain(&p, pl->drain_ms) != 0) rc = 1;
  if (pl->linger_ms < 0)
    for (;;) pause();
  if (pl->linger_ms > 0) pause_us(pl->linger_ms * 1000);
  fp_close(&p, !pl->keep_file);
  return rc;
}
