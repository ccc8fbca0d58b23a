/* ringtest.c - see ringtest.h. */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ringtest.h"

int rt_init(struct ctx *x, const char *name) {
  memset(x, 0, sizeof *x);
  snprintf(x->dir, sizeof x->dir, "/dev/shm/shml-%s-XXXXXX", name);
  crc32_init(&x->crc);
  return mkdtemp(x->dir) != NULL ? 0 : -1;
}

void rt_cleanup(struct ctx *x) {
  DIR *d = opendir(x->dir);
  struct dirent *e;
  char path[512];
  while (d != NULL && (e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    snprintf(path, sizeof path, "%s/%s", x->dir, e->d_name);
    unlink(path);
  }
  if (d != NULL) closedir(d);
  rmdir(x->dir);
}

struct fp_plan rt_plan(struct ctx *x, const char *job) {
  struct fp_plan pl = {.dir = x->dir, .job = job, .rank = 1, .ranks = 2, .depth = 4, .rows = 8,
                       .row_bytes = 32, .batches = 5, .epochs = 1, .bad_crc_step = -1};
  return pl;
}

void rt_sleep_ms(int ms) {
  struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Runs the plan in a child process, after delay_ms. */
pid_t rt_spawn(const struct fp_plan *pl, int delay_ms) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    struct fp_result r;
    if (delay_ms > 0) rt_sleep_ms(delay_ms);
    _exit(fp_run(pl, &r));
  }
  return pid;
}

/* Exit code of a child, 128 + signal if killed. */
int rt_reap(pid_t pid) {
  int st;
  if (waitpid(pid, &st, 0) != pid) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

void rt_stop(pid_t pid) {
  kill(pid, SIGKILL);
  rt_reap(pid);
}

struct shml__header *rt_hdr(const shml_consumer *c) {
  shml_info i;
  shml_info_get(c, &i);
  return i.base;
}

uint64_t rt_tail(const shml_consumer *c) {
  return __atomic_load_n(&rt_hdr(c)->tail, __ATOMIC_ACQUIRE);
}

int64_t rt_ms_since(int64_t t0) { return (shml__now_ns() - t0) / 1000000; }

/* Everything about a delivered batch: position, tensors, shapes, pointers, contents. */
int rt_batch_ok(struct ctx *x, const struct fp_plan *pl, const shml_consumer *c,
                    const shml_batch *b, uint64_t seq, uint64_t epoch, uint64_t step) {
  struct img_tensor ts[FP_NT];
  struct img_spec spec;
  struct img_plan ip;
  shml_info info;
  fp_layout(pl, ts, &spec, &ip);
  shml_info_get(c, &info);
  uint32_t rows = fp_rows(pl, step);
  uint8_t *slot = (uint8_t *)info.base + ip.header_size + (seq % pl->depth) * ip.slot_size;
  const char *why = NULL;
  if (b->seq != seq || b->epoch != epoch || b->step != step)
    why = "seq, epoch or step";
  else if (b->rows != rows || b->ntensors != FP_NT)
    why = "rows or ntensors";
  for (int i = 0; why == NULL && i < FP_NT; i++) {
    const shml_tensor *t = &b->tensors[i];
    if (strcmp(t->name, ts[i].name) != 0 || t->dtype != ts[i].dtype ||
        t->ndim != (int32_t)ts[i].ndim + 1)
      why = "name, dtype or ndim";
    else if (t->shape[0] != rows || t->nbytes != rows * ip.row_bytes[i])
      why = "shape[0] or nbytes";
    else if (t->data != slot + ip.offset[i])
      why = "data pointer";
    for (uint32_t d = 0; why == NULL && d + 1 < SHML_MAX_DIMS; d++)
      if (t->shape[d + 1] != (d < ts[i].ndim ? (int64_t)ts[i].shape[d] : 0)) why = "shape";
  }
  if (why == NULL) {
    const int64_t *id = b->tensors[FP_ID].data;
    const uint8_t *pay = b->tensors[FP_PAYLOAD].data;
    const uint32_t *crc = b->tensors[FP_CRC].data;
    const float *xs = b->tensors[FP_X].data;
    for (uint32_t r = 0; why == NULL && r < rows; r++) {
      const uint8_t *row = pay + r * pl->row_bytes;
      if (id[r] != (int64_t)fp_id(pl, epoch, step, r)) why = "id";
      for (uint64_t j = 0; why == NULL && j < pl->row_bytes; j++)
        if (row[j] != fp_byte((uint64_t)id[r], j)) why = "payload";
      if (why == NULL && crc[r] != crc32_update(&x->crc, 0, row, pl->row_bytes)) why = "crc";
      for (int j = 0; why == NULL && j < 6; j++)
        if (xs[r * 6 + j] != (float)(id[r] + j)) why = "x";
    }
  }
  if (why != NULL)
    printf("#   batch seq=%llu epoch=%llu step=%llu: wrong %s\n", (unsigned long long)b->seq,
           (unsigned long long)b->epoch, (unsigned long long)b->step, why);
  return why == NULL;
}

int rt_attach(struct ctx *x, const char *job, int timeout_ms, shml_consumer **c) {
  return shml_attach_dir(x->dir, job, 1, timeout_ms, c);
}
