/*
 * shml-consume - read one rank's stream and print a CRC of everything delivered.
 *
 * Used by cross-language tests: its summary line has the same form as the one
 * `shmloader debug-produce` prints, so the two can be compared verbatim. Every row's
 * payload is checked against the producer's per-row crc tensor.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../shmloader.h"
#include "crc32.h"

#define EXIT_ERR 1
#define EXIT_USAGE 2
#define EXIT_GONE 3
#define EXIT_TIMEOUT 4
#define EXIT_CRC 5

struct opts {
  const char *job;
  const char *dir;
  int rank;
  int timeout_ms;
  long long max_batches; /* < 0: no limit */
  long long hold;
  int seek;
  uint64_t seek_epoch;
  uint64_t seek_step;
  long long sleep_us;
  int each;
};

struct totals {
  uint64_t batches;
  uint64_t rows;
  uint32_t crc;
};

static int usage(void) {
  fprintf(stderr,
          "usage: shml-consume --job J --rank R [--dir D] [--timeout-ms T] [--max-batches N]\n"
          "                    [--hold N] [--seek EPOCH STEP] [--sleep-us U] [--each]\n");
  return EXIT_USAGE;
}

static int num(const char *s, long long lo, long long *out) {
  char *end;
  if (s == NULL || *s == '\0') return -1;
  long long v = strtoll(s, &end, 10);
  if (*end != '\0' || v < lo) return -1;
  *out = v;
  return 0;
}

static int parse(int argc, char **argv, struct opts *o) {
  long long v;
  memset(o, 0, sizeof *o);
  o->rank = -1;
  o->timeout_ms = 10000;
  o->max_batches = -1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *next = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--each") == 0) {
      o->each = 1;
      continue;
    }
    if (next == NULL) return -1;
    i++;
    if (strcmp(a, "--job") == 0) {
      o->job = next;
    } else if (strcmp(a, "--dir") == 0) {
      o->dir = next;
    } else if (strcmp(a, "--rank") == 0) {
      if (num(next, 0, &v) || v > 1 << 30) return -1;
      o->rank = (int)v;
    } else if (strcmp(a, "--timeout-ms") == 0) {
      if (num(next, -1, &v) || v > 1 << 30) return -1;
      o->timeout_ms = (int)v;
    } else if (strcmp(a, "--max-batches") == 0) {
      if (num(next, 0, &o->max_batches)) return -1;
    } else if (strcmp(a, "--hold") == 0) {
      if (num(next, 0, &o->hold) || o->hold > 65536) return -1;
    } else if (strcmp(a, "--sleep-us") == 0) {
      if (num(next, 0, &o->sleep_us)) return -1;
    } else if (strcmp(a, "--seek") == 0) {
      long long e, s;
      if (num(next, 0, &e) || i + 1 >= argc || num(argv[i + 1], 0, &s)) return -1;
      i++;
      o->seek = 1;
      o->seek_epoch = (uint64_t)e;
      o->seek_step = (uint64_t)s;
    } else {
      return -1;
    }
  }
  return o->job == NULL || o->rank < 0 ? -1 : 0;
}

/* Prints the code and exits: 3 producer gone, 4 timeout, 1 anything else (SHML_ESEEK,
 * a seek the producer finished without answering, included: it is not an end of stream). */
static int fail(shml_consumer *c, int rc) {
  fprintf(stderr, "shml-consume: %s: %s\n", shml_errname(rc), shml_strerror(rc));
  shml_detach(c);
  if (rc == SHML_EGONE) return EXIT_GONE;
  if (rc == SHML_ETIMEOUT) return EXIT_TIMEOUT;
  return EXIT_ERR;
}

static const shml_tensor *find(const shml_batch *b, const char *name, int32_t dtype,
                               int32_t ndim) {
  for (uint32_t i = 0; i < b->ntensors; i++) {
    const shml_tensor *t = &b->tensors[i];
    if (strcmp(t->name, name) == 0 && t->dtype == dtype && t->ndim == ndim) return t;
  }
  return NULL;
}

/* Check every row against its crc and fold the payload into the totals. */
static int verify(const struct crc32_table *tab, const shml_batch *b, struct totals *tot,
                  int each) {
  const shml_tensor *pay = find(b, "payload", SHML_UINT8, 2);
  const shml_tensor *crc = find(b, "crc", SHML_UINT32, 1);
  if (pay == NULL || crc == NULL) {
    fprintf(stderr, "shml-consume: schema has no uint8 [rows, n] 'payload' and uint32 "
                    "[rows] 'crc' tensors\n");
    return EXIT_ERR;
  }
  size_t row_bytes = (size_t)pay->shape[1];
  const uint8_t *p = pay->data;
  const uint32_t *want = crc->data;
  for (uint32_t r = 0; r < b->rows; r++) {
    uint32_t got = crc32_update(tab, 0, p + (size_t)r * row_bytes, row_bytes);
    if (got != want[r]) {
      fprintf(stderr,
              "shml-consume: crc mismatch: epoch=%" PRIu64 " step=%" PRIu64 " row=%" PRIu32
              ": payload crc32=%08x, crc tensor=%08x\n",
              b->epoch, b->step, r, got, want[r]);
      return EXIT_CRC;
    }
  }
  tot->crc = crc32_update(tab, tot->crc, p, pay->nbytes);
  tot->batches++;
  tot->rows += b->rows;
  if (each)
    printf("batch epoch=%" PRIu64 " step=%" PRIu64 " rows=%" PRIu32 " crc32=%08x\n", b->epoch,
           b->step, b->rows, crc32_update(tab, 0, p, pay->nbytes));
  return 0;
}

static int run(const struct opts *o, shml_consumer *c, shml_batch *q) {
  struct crc32_table tab;
  struct totals tot = {0, 0, 0};
  size_t qlen = (size_t)o->hold + 1, first = 0, n = 0;
  crc32_init(&tab);
  while (o->max_batches < 0 || tot.batches < (uint64_t)o->max_batches) {
    shml_batch *b = &q[(first + n) % qlen];
    int rc = shml_next(c, o->timeout_ms, b);
    if (rc == SHML_EEPOCH) continue;
    if (rc == SHML_EEOS) break;
    if (rc != SHML_OK) return fail(c, rc);
    n++;
    int bad = verify(&tab, b, &tot, o->each);
    if (bad) {
      shml_detach(c);
      return bad;
    }
    if (o->sleep_us > 0) usleep((useconds_t)o->sleep_us);
    while (n > (size_t)o->hold) {
      rc = shml_release(c, &q[first]);
      if (rc != SHML_OK) return fail(c, rc);
      first = (first + 1) % qlen;
      n--;
    }
  }
  printf("rank=%d batches=%" PRIu64 " rows=%" PRIu64 " crc32=%08x\n", o->rank, tot.batches,
         tot.rows, tot.crc);
  fflush(stdout);
  shml_detach(c);
  return 0;
}

int main(int argc, char **argv) {
  struct opts o;
  shml_consumer *c = NULL;
  if (parse(argc, argv, &o) != 0) return usage();
  setvbuf(stdout, NULL, _IOLBF, 0); /* --each lines reach a reading pipe as they happen */
  int rc = shml_attach_dir(o.dir, o.job, o.rank, o.timeout_ms, &c);
  if (rc != SHML_OK) return fail(NULL, rc);
  if (o.seek) {
    rc = shml_seek(c, o.seek_epoch, o.seek_step);
    if (rc != SHML_OK) return fail(c, rc);
  }
  shml_batch *q = calloc((size_t)o.hold + 1, sizeof *q);
  if (q == NULL) return fail(c, SHML_ENOMEM);
  int code = run(&o, c, q);
  free(q);
  return code;
}
