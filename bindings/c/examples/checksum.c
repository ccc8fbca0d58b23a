/*
 * checksum.c - read a whole shmloader stream from C and checksum every tensor.
 *
 * A complete trainer-side program over the public ABI only (shmloader.h and
 * libshmloader.so). It attaches to one rank of a job that `shmloader serve` is serving,
 * prints the ring's geometry and the schema, then takes every batch of every epoch until
 * the end of the stream. Per epoch it prints the batches and rows this rank received and,
 * per tensor, a CRC-32 of the tensor's bytes over the epoch's batches in delivery order
 * (the value Python's zlib.crc32 gives over the epoch's arrays concatenated); at the end,
 * the totals and the throughput.
 *
 *   shml-checksum JOB [RANK] [--dir DIR] [--timeout SEC]
 *
 * Exit status: 0 at the end of the stream, 1 on an error (producer gone, nothing within
 * the timeout, ...), 2 on bad arguments.
 *
 * The call sequence is the one every consumer follows:
 *   shml_abi_version check -> shml_attach_dir -> shml_info_get
 *   -> { shml_next -> use the views -> shml_release }* -> shml_detach
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shmloader.h"

#define EXIT_ERROR 1
#define EXIT_USAGE 2

struct options {
  const char *job;
  int rank;
  const char *dir;  /* NULL: $SHMLOADER_SHM_DIR, else /dev/shm */
  int timeout_ms;   /* for attach and for each batch */
  double timeout_s; /* the same, as given, for messages */
};

/* CRC-32 (IEEE 802.3, as zlib and Go's hash/crc32), table-driven, a byte at a time. */
struct crc32 {
  uint32_t table[256];
};

static void crc32_init(struct crc32 *k) {
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int bit = 0; bit < 8; bit++) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    k->table[i] = c;
  }
}

/* Continues crc (0 to start) over n bytes: the CRC of a then b is update(update(0, a), b). */
static uint32_t crc32_update(const struct crc32 *k, uint32_t crc, const void *data, size_t n) {
  const unsigned char *p = data;
  uint32_t c = ~crc;
  for (size_t i = 0; i < n; i++) c = k->table[(c ^ p[i]) & 0xff] ^ (c >> 8);
  return ~c;
}

/* Running sums of one tensor over the current epoch. */
struct tensor_sum {
  uint32_t crc;
  uint64_t bytes;
};

struct reader {
  struct crc32 crc;
  shml_info info;
  struct tensor_sum *sums; /* info.ntensors entries, in schema order */
  char **names;            /* the schema's names, copied from the first batch */
  int have_schema;
  uint64_t epoch;          /* of the last batch taken */
  uint64_t epoch_batches, epoch_rows;
  uint64_t batches, rows, bytes, epochs;
  double first_batch_s, epoch_start_s;
};

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The synopsis; with full, what it does and the options too. */
static void usage(FILE *f, int full) {
  fprintf(f, "usage: shml-checksum JOB [RANK] [--dir DIR] [--timeout SEC]\n");
  if (!full) {
    fprintf(f, "       shml-checksum -h  for help\n");
    return;
  }
  fprintf(f,
          "\n"
          "Attach to rank RANK (default 0) of the shmloader job JOB, read every batch of\n"
          "every epoch until the end of the stream, and print per epoch the batches, rows\n"
          "and a CRC-32 of each tensor's bytes; at the end, totals and throughput.\n"
          "\n"
          "  --dir DIR      segment directory (default $SHMLOADER_SHM_DIR, else /dev/shm)\n"
          "  --timeout SEC  wait at most SEC seconds for the producer to appear and for\n"
          "                 each batch (default 30)\n"
          "  -h, --help     this text\n");
}

/* Parses argv into o. Returns 0, 1 for -h (usage on stdout), or -1 (bad arguments). */
static int parse_args(int argc, char **argv, struct options *o) {
  o->job = NULL;
  o->rank = -1;
  o->dir = NULL;
  o->timeout_s = 30.0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) return 1;
    if (strcmp(a, "--dir") == 0 || strcmp(a, "--timeout") == 0) {
      if (i + 1 >= argc) {
        fprintf(stderr, "shml-checksum: %s needs a value\n", a);
        return -1;
      }
      const char *v = argv[++i];
      if (strcmp(a, "--dir") == 0) {
        o->dir = v;
        continue;
      }
      char *end;
      double s = strtod(v, &end);
      /* The library takes milliseconds as an int; the comparisons also reject NaN. */
      if (end == v || *end != '\0' || !(s > 0 && s <= INT_MAX / 1000)) {
        fprintf(stderr, "shml-checksum: --timeout %s: want seconds, > 0\n", v);
        return -1;
      }
      o->timeout_s = s;
    } else if (a[0] == '-' && a[1] != '\0') {
      fprintf(stderr, "shml-checksum: unknown option %s\n", a);
      return -1;
    } else if (o->job == NULL) {
      o->job = a; /* shml_attach checks the name */
    } else if (o->rank < 0) {
      char *end;
      long r = strtol(a, &end, 10);
      if (end == a || *end != '\0' || r < 0 || r > INT_MAX) {
        fprintf(stderr, "shml-checksum: RANK %s: want an integer >= 0\n", a);
        return -1;
      }
      o->rank = (int)r;
    } else {
      fprintf(stderr, "shml-checksum: unexpected argument %s\n", a);
      return -1;
    }
  }
  if (o->job == NULL) {
    fprintf(stderr, "shml-checksum: no JOB given\n");
    return -1;
  }
  if (o->rank < 0) o->rank = 0;
  o->timeout_ms = (int)(o->timeout_s * 1000 + 0.5);
  if (o->timeout_ms < 1) o->timeout_ms = 1;
  return 0;
}

/* Reports a library error with its name and explanation (and errno for SHML_ESYS). */
static void report(shml_consumer *c, const char *op, int rc) {
  fprintf(stderr, "shml-checksum: %s: %s: %s", op, shml_errname(rc), shml_strerror(rc));
  if (rc == SHML_ESYS && c != NULL) fprintf(stderr, " (%s)", strerror(shml_errno(c)));
  fputc('\n', stderr);
}

static void print_info(const struct options *o, const shml_info *in) {
  printf("job %s rank %" PRIu32 " of %" PRIu32 " (node %" PRIu32 " of %" PRIu32
         "), producer pid %d, config 0x%016" PRIx64 "\n",
         o->job, in->rank, in->ranks, in->node_rank, in->nodes, (int)in->producer_pid,
         in->config_hash);
  printf("ring: %" PRIu32 " slots of %" PRIu64 " bytes, up to %" PRIu32 " rows per batch, %" PRIu32
         " tensors\n",
         in->slot_count, in->slot_size, in->batch_capacity, in->ntensors);
  /* The whole mapping, page-aligned: a CUDA trainer pins it once, right after attach,
   *   cudaHostRegister(in->base, in->size, cudaHostRegisterDefault);
   * so that copies from any slot are async DMA (release a batch only once its copies
   * have completed), and calls cudaHostUnregister(in->base) before shml_detach unmaps
   * it. Never register per batch. */
  printf("mapping: %zu bytes at %p\n", in->size, in->base);
}

/* The schema is fixed for the ring's life; every batch carries it in its descriptors
 * (shape[0] is that batch's row count, the rest the per-row shape). Returns 0, or -1 if
 * out of memory. */
static int learn_schema(struct reader *r, const shml_batch *b) {
  printf("schema:\n");
  for (uint32_t i = 0; i < b->ntensors; i++) {
    const shml_tensor *t = &b->tensors[i];
    size_t row_bytes = shml_dtype_size(t->dtype);
    char shape[128] = "["; /* room for SHML_MAX_DIMS - 1 numbers of 20 digits */
    size_t n = 1;
    for (int32_t d = 1; d < t->ndim && n < sizeof shape; d++) {
      row_bytes *= (size_t)t->shape[d];
      n += (size_t)snprintf(shape + n, sizeof shape - n, "%s%" PRId64, d > 1 ? ", " : "",
                            t->shape[d]);
    }
    if (n < sizeof shape) snprintf(shape + n, sizeof shape - n, "]");
    printf("  %-16s %-8s %-16s %zu bytes per row\n", t->name, shml_dtype_name(t->dtype), shape,
           row_bytes);
    /* Like the views, the descriptors are only promised until the batch is released. */
    r->names[i] = strdup(t->name);
    if (r->names[i] == NULL) return -1;
  }
  r->have_schema = 1;
  return 0;
}

/* Folds one held batch into the epoch's sums. */
static void add_batch(struct reader *r, const shml_batch *b) {
  r->epoch = b->epoch;
  for (uint32_t i = 0; i < b->ntensors; i++) {
    const shml_tensor *t = &b->tensors[i];
    /* t->data views the slot in shared memory: no copy. nbytes covers the batch's rows
     * (rows * bytes per row), not the slot's whole capacity. */
    r->sums[i].crc = crc32_update(&r->crc, r->sums[i].crc, t->data, t->nbytes);
    r->sums[i].bytes += t->nbytes;
    r->bytes += t->nbytes;
  }
  r->epoch_batches++;
  r->epoch_rows += b->rows;
  r->batches++;
  r->rows += b->rows;
}

static void end_epoch(struct reader *r, uint64_t epoch, const char *how) {
  double now = now_s();
  printf("epoch %" PRIu64 "%s: %" PRIu64 " batches, %" PRIu64 " rows, %.3f s\n", epoch, how,
         r->epoch_batches, r->epoch_rows, r->epoch_batches ? now - r->epoch_start_s : 0.0);
  for (uint32_t i = 0; r->have_schema && i < r->info.ntensors; i++)
    printf("  %-16s crc32 %08" PRIx32 " %12" PRIu64 " bytes\n", r->names[i], r->sums[i].crc,
           r->sums[i].bytes);
  fflush(stdout);
  memset(r->sums, 0, r->info.ntensors * sizeof *r->sums);
  r->epoch_batches = 0;
  r->epoch_rows = 0;
  r->epochs++;
  r->epoch_start_s = now;
}

static void print_totals(const struct reader *r) {
  double secs = r->batches ? now_s() - r->first_batch_s : 0.0;
  printf("total: %" PRIu64 " epochs, %" PRIu64 " batches, %" PRIu64 " rows, %.1f MB in %.3f s",
         r->epochs, r->batches, r->rows, (double)r->bytes / 1e6, secs);
  if (secs > 0)
    printf(": %.0f rows/s, %.1f MB/s (checksumming included)", (double)r->rows / secs,
           (double)r->bytes / 1e6 / secs);
  printf("\n");
}

/* Reads to the end of the stream. Returns the exit status. */
static int read_stream(const struct options *o, shml_consumer *c, struct reader *r) {
  for (;;) {
    shml_batch b;
    int rc = shml_next(c, o->timeout_ms, &b);
    switch (rc) {
    case SHML_OK:
      break;
    case SHML_EEPOCH: /* b.epoch ended: no rows, no tensors, nothing to release */
      end_epoch(r, b.epoch, "");
      continue;
    case SHML_EEOS: /* end of stream; every later shml_next says so too */
      if (r->epoch_batches) end_epoch(r, r->epoch, " (no end-of-epoch marker)");
      print_totals(r);
      return 0;
    case SHML_EGONE: /* killed, or stopped by a signal: what it had published was drained */
      fprintf(stderr,
              "shml-checksum: the producer (pid %d) died or was stopped before the end of "
              "the stream, after %" PRIu64 " batches: %s\n",
              (int)r->info.producer_pid, r->batches, shml_strerror(rc));
      return EXIT_ERROR;
    case SHML_ETIMEOUT: /* the producer is alive but published nothing in time */
      fprintf(stderr,
              "shml-checksum: no batch within %g s (the producer, pid %d, is alive), after "
              "%" PRIu64 " batches: %s\n",
              o->timeout_s, (int)r->info.producer_pid, r->batches, shml_strerror(rc));
      return EXIT_ERROR;
    default:
      report(c, "next", rc);
      return EXIT_ERROR;
    }

    /* Every batch has the schema's tensors, in schema order. */
    if (b.ntensors != r->info.ntensors) {
      fprintf(stderr, "shml-checksum: batch %" PRIu64 " has %" PRIu32 " tensors, the ring %" PRIu32
              "\n", b.seq, b.ntensors, r->info.ntensors);
      return EXIT_ERROR;
    }
    if (!r->have_schema) {
      if (learn_schema(r, &b) != 0) {
        shml_release(c, &b);
        report(c, "schema", SHML_ENOMEM);
        return EXIT_ERROR;
      }
      r->first_batch_s = r->epoch_start_s = now_s();
    }
    add_batch(r, &b);

    /* Hand the slot back as soon as possible: the producer refills slots in order, so a
     * held batch stalls it once the ring wraps around. The views die here. */
    rc = shml_release(c, &b);
    if (rc != SHML_OK) {
      report(c, "release", rc);
      return EXIT_ERROR;
    }
  }
}

int main(int argc, char **argv) {
  struct options o;
  int p = parse_args(argc, argv, &o);
  if (p == 1) {
    usage(stdout, 1);
    return 0;
  }
  if (p != 0) {
    usage(stderr, 0);
    return EXIT_USAGE;
  }

  /* The library loaded at run time must speak the ABI this program was compiled for. */
  if (shml_abi_version() != SHML_ABI_VERSION) {
    fprintf(stderr, "shml-checksum: libshmloader has ABI %d, this program was built for %d\n",
            shml_abi_version(), SHML_ABI_VERSION);
    return EXIT_ERROR;
  }

  /* Waits up to the timeout for a live producer to create and publish the ring. */
  shml_consumer *c = NULL;
  int rc = shml_attach_dir(o.dir, o.job, o.rank, o.timeout_ms, &c);
  if (rc == SHML_ETIMEOUT) {
    fprintf(stderr,
            "shml-checksum: no producer for job %s rank %d within %g s (is `shmloader serve "
            "--job %s` running%s%s?)\n",
            o.job, o.rank, o.timeout_s, o.job, o.dir ? " with --dir " : "", o.dir ? o.dir : "");
    return EXIT_ERROR;
  }
  if (rc != SHML_OK) {
    report(NULL, "attach", rc);
    return EXIT_ERROR;
  }

  struct reader r;
  memset(&r, 0, sizeof r);
  crc32_init(&r.crc);
  rc = shml_info_get(c, &r.info);
  if (rc != SHML_OK) {
    report(c, "info", rc);
    shml_detach(c);
    return EXIT_ERROR;
  }
  print_info(&o, &r.info);
  fflush(stdout);

  r.sums = calloc(r.info.ntensors, sizeof *r.sums);
  r.names = calloc(r.info.ntensors, sizeof *r.names);
  int status;
  if (r.sums == NULL || r.names == NULL) {
    report(c, "attach", SHML_ENOMEM);
    status = EXIT_ERROR;
  } else {
    status = read_stream(&o, c, &r);
  }
  for (uint32_t i = 0; r.names != NULL && i < r.info.ntensors; i++) free(r.names[i]);
  free(r.sums);
  free(r.names);
  /* Releases anything still held, drops the consumer lock and unmaps. */
  shml_detach(c);
  return status;
}
