/*
 * shml-bench - consumer-side latency and throughput of one rank's stream, the C
 * counterpart of `shmloader debug-consume` and bench/handoff.py (same output keys).
 *
 * Latency of a batch is CLOCK_MONOTONIC when shml_next returns it minus the producer's
 * stamp in row 0 of the int64 tensor 't_ns' (taken just before publish; both processes
 * share the clock). op_* is the time spent inside shml_next + shml_release, waiting
 * included. With --touch every byte of every tensor is read (as uint64 words), so
 * bytes_per_s is what a consumer that reads its data gets; without it, what the ring
 * hands out. --spin polls shml_next with timeout 0 instead of sleeping in it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../shmloader.h"

struct opts {
  const char *job;
  const char *dir;
  int rank;
  long long batches;
  long long warmup;
  int spin;
  int touch;
  int timeout_ms;
};

struct stats {
  int64_t *lat;
  int64_t *op;
  size_t n;
  uint64_t bytes;
  uint64_t sink;
  int64_t start;
  int64_t end;
};

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* The p-th percentile as debug-consume takes it: v[n*p/100] of the sorted values. */
static int64_t pct(int64_t *v, size_t n, size_t p) {
  if (n == 0) return 0;
  qsort(v, n, sizeof *v, cmp_i64);
  return v[n * p / 100];
}

static int parse(int argc, char **argv, struct opts *o) {
  memset(o, 0, sizeof *o);
  o->batches = 100000;
  o->warmup = 1000;
  o->timeout_ms = 30000;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--spin") == 0) {
      o->spin = 1;
    } else if (strcmp(a, "--touch") == 0) {
      o->touch = 1;
    } else if (i + 1 < argc && strcmp(a, "--job") == 0) {
      o->job = argv[++i];
    } else if (i + 1 < argc && strcmp(a, "--dir") == 0) {
      o->dir = argv[++i];
    } else if (i + 1 < argc && strcmp(a, "--rank") == 0) {
      o->rank = atoi(argv[++i]);
    } else if (i + 1 < argc && strcmp(a, "--batches") == 0) {
      o->batches = atoll(argv[++i]);
    } else if (i + 1 < argc && strcmp(a, "--warmup") == 0) {
      o->warmup = atoll(argv[++i]);
    } else if (i + 1 < argc && strcmp(a, "--timeout-ms") == 0) {
      o->timeout_ms = atoi(argv[++i]);
    } else {
      return -1;
    }
  }
  return o->job == NULL || o->rank < 0 || o->batches < 1 || o->warmup < 0 ? -1 : 0;
}

static int take(shml_consumer *c, const struct opts *o, shml_batch *b) {
  if (!o->spin) return shml_next(c, o->timeout_ms, b);
  int64_t end = now_ns() + (int64_t)o->timeout_ms * 1000000LL;
  int rc;
  while ((rc = shml_next(c, 0, b)) == SHML_ETIMEOUT && now_ns() < end) {
  }
  return rc;
}

static uint64_t touch(const shml_batch *b) {
  uint64_t sum = 0;
  for (uint32_t t = 0; t < b->ntensors; t++) {
    const uint8_t *p = b->tensors[t].data;
    size_t n = b->tensors[t].nbytes, i = 0;
    for (; i + 8 <= n; i += 8) {
      uint64_t w;
      memcpy(&w, p + i, 8);
      sum += w;
    }
    for (; i < n; i++) sum += p[i];
  }
  return sum;
}

static int64_t stamp(const shml_batch *b) {
  for (uint32_t t = 0; t < b->ntensors; t++) {
    const shml_tensor *x = &b->tensors[t];
    if (strcmp(x->name, "t_ns") == 0 && x->dtype == SHML_INT64 && b->rows > 0)
      return *(const int64_t *)x->data;
  }
  return -1;
}

/* Consumes warmup + batches data batches (fewer at the end of the stream). */
static int run(shml_consumer *c, const struct opts *o, struct stats *s) {
  long long seen = 0;
  while (seen < o->warmup + o->batches) {
    shml_batch b;
    int64_t t0 = now_ns();
    int rc = take(c, o, &b);
    int64_t t1 = now_ns();
    if (rc == SHML_EEPOCH) continue;
    if (rc == SHML_EEOS) return SHML_OK;
    if (rc != SHML_OK) return rc;
    int64_t ts = stamp(&b);
    if (ts < 0) {
      fprintf(stderr, "shml-bench: no int64 't_ns' tensor with a row\n");
      return SHML_EINVAL;
    }
    int measured = seen++ >= o->warmup;
    if (measured && s->n == 0) s->start = t0;
    if (measured) {
      s->lat[s->n] = t1 - ts;
      if (o->touch) s->sink += touch(&b);
      for (uint32_t t = 0; t < b.ntensors; t++) s->bytes += b.tensors[t].nbytes;
    }
    int64_t t2 = now_ns();
    rc = shml_release(c, &b);
    int64_t t3 = now_ns();
    if (measured) {
      s->op[s->n++] = (t1 - t0) + (t3 - t2);
      s->end = t3;
    }
    if (rc != SHML_OK) return rc;
  }
  return SHML_OK;
}

int main(int argc, char **argv) {
  struct opts o;
  shml_consumer *c = NULL;
  if (parse(argc, argv, &o) != 0) {
    fprintf(stderr, "usage: shml-bench --job J [--rank R] [--dir D] [--batches N] "
                    "[--warmup N] [--spin] [--touch] [--timeout-ms T]\n");
    return 2;
  }
  struct stats s = {.lat = calloc((size_t)o.batches, sizeof(int64_t)),
                    .op = calloc((size_t)o.batches, sizeof(int64_t))};
  int rc = s.lat && s.op ? shml_attach_dir(o.dir, o.job, o.rank, o.timeout_ms, &c) : SHML_ENOMEM;
  if (rc == SHML_OK) rc = run(c, &o, &s);
  shml_detach(c);
  if (rc != SHML_OK) {
    fprintf(stderr, "shml-bench: %s: %s\n", shml_errname(rc), shml_strerror(rc));
    free(s.lat);
    free(s.op);
    return 1;
  }
  double secs = s.end > s.start ? (double)(s.end - s.start) / 1e9 : 0;
  int64_t med = pct(s.lat, s.n, 50), p99 = pct(s.lat, s.n, 99);
  int64_t omed = pct(s.op, s.n, 50), op99 = pct(s.op, s.n, 99);
  printf("consumer=c batches=%zu median_ns=%" PRId64 " p99_ns=%" PRId64
         " ns_per_batch=%.0f bytes_per_s=%.0f op_median_ns=%" PRId64 " op_p99_ns=%" PRId64
         " sink=%" PRIu64 "\n",
         s.n, med, p99, s.n ? secs * 1e9 / (double)s.n : 0.0,
         secs > 0 ? (double)s.bytes / secs : 0.0, omed, op99, s.sink & 1);
  free(s.lat);
  free(s.op);
  return 0;
}
