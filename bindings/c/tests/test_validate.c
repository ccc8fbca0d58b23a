/*
 * test_validate - attach-time validation: a valid image passes; each kind of damage gets
 * its own error; no corruption of header or schema bytes makes the validator read
 * outside the image (ASan) or return anything but a validation result.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../src/internal.h"
#include "check.h"
#include "image.h"

#define JOB "valjob"
#define RANK 1

struct img {
  uint8_t *buf; /* pristine image */
  size_t len;
  size_t table_end; /* end of the schema table */
  struct img_plan plan;
};

static const struct img_tensor TENSORS[] = {
    {"id", SHML_INT64, 0, {0}},
    {"payload", SHML_UINT8, 1, {100}},
    {"x:a/b-c.d_e", SHML_FLOAT32, 2, {2, 3}},
};

static int make_image(struct img *im) {
  struct img_spec s = {JOB, RANK, 2, 4, 8, 3, TENSORS, 0, 0};
  if (img_plan(&s, &im->plan) != 0) return -1;
  im->len = im->plan.total_size;
  im->buf = calloc(1, im->len);
  if (im->buf == NULL) return -1;
  img_write(im->buf, &s, &im->plan);
  im->table_end = SHML__SCHEMA_OFFSET + 3 * SHML__TENSOR_BYTES;
  return 0;
}

/* Validates a copy of the image, mutated by fn, in a buffer of exactly len bytes. */
static int validate_copy(const struct img *im, size_t len, void (*fn)(uint8_t *), int rank) {
  struct shml__geom g;
  uint8_t *b = malloc(len ? len : 1);
  if (b == NULL) return SHML_ENOMEM;
  memcpy(b, im->buf, len < im->len ? len : im->len);
  if (fn != NULL) fn(b);
  int rc = shml__validate(b, len, JOB, rank, &g);
  free(b);
  return rc;
}

static struct shml__header *H(uint8_t *b) { return (struct shml__header *)b; }
static struct shml__tensor_entry *E(uint8_t *b, int i) {
  return (struct shml__tensor_entry *)(b + SHML__SCHEMA_OFFSET) + i;
}

static void bad_magic(uint8_t *b) { b[3] = 'X'; }
static void version2(uint8_t *b) { H(b)->version = 2; }
static void version3(uint8_t *b) { H(b)->version = 3; }
static void version4(uint8_t *b) { H(b)->version = 4; }
static void version6(uint8_t *b) { H(b)->version = 6; }
static void nodes0(uint8_t *b) { H(b)->nodes = 0; }
static void node_rank1(uint8_t *b) { H(b)->node_rank = 1; }
static void version0(uint8_t *b) { H(b)->version = 0; }
static void zero_all(uint8_t *b) { memset(b, 0, SHML__HEADER_BYTES); }
static void total_off(uint8_t *b) { H(b)->total_size += 4096; }
static void slots1(uint8_t *b) { H(b)->slot_count = 1; }
static void slots_big(uint8_t *b) { H(b)->slot_count = 65537; }
static void schema_off(uint8_t *b) { H(b)->schema_offset = 1024; }
static void slot_hdr(uint8_t *b) { H(b)->slot_header_size = 128; }
static void schema0(uint8_t *b) { H(b)->schema_count = 0; }
static void schema257(uint8_t *b) { H(b)->schema_count = 257; }
static void hdr_unaligned(uint8_t *b) { H(b)->header_size = 4000; }
static void slot_unaligned(uint8_t *b) { H(b)->slot_size = 4097; }
static void overflow(uint8_t *b) { H(b)->slot_size = 1ULL << 62; }
static void cap0(uint8_t *b) { H(b)->batch_capacity = 0; }
static void rank_ge(uint8_t *b) { H(b)->ranks = 1; }
static void wrong_job(uint8_t *b) { memcpy(H(b)->job, "other", 6); }
static void job_suffix(uint8_t *b) { H(b)->job[strlen(JOB)] = 'x'; }
static void dtype99(uint8_t *b) { E(b, 0)->dtype = 99; }
static void ndim5(uint8_t *b) { E(b, 1)->ndim = 5; }
static void unterminated(uint8_t *b) { memset(E(b, 1)->name, 'a', 48); }
static void empty_name(uint8_t *b) { memset(E(b, 1)->name, 0, 48); }
static void bad_char(uint8_t *b) { E(b, 1)->name[2] = ' '; }
static void junk_after(uint8_t *b) { E(b, 0)->name[40] = 'z'; }
static void duplicate(uint8_t *b) { memcpy(E(b, 2)->name, "id\0\0\0\0\0\0\0\0\0\0", 12); }
static void row_bytes(uint8_t *b) { E(b, 1)->row_bytes += 1; }
static void nbytes(uint8_t *b) { E(b, 1)->nbytes += 8; }
static void dim0(uint8_t *b) { E(b, 2)->shape[1] = 0; }
static void dim_above(uint8_t *b) { E(b, 2)->shape[3] = 1; }
static void reserved(uint8_t *b) { E(b, 2)->reserved[15] = 1; }
static void dim_overflow(uint8_t *b) { E(b, 2)->shape[0] = 1ULL << 62; }
static void past_end(uint8_t *b) { E(b, 2)->offset = H(b)->slot_size - 64; }
static void overlap(uint8_t *b) { E(b, 2)->offset = E(b, 1)->offset + 64; }
static void unaligned(uint8_t *b) { E(b, 2)->offset += 8; }
static void in_header(uint8_t *b) { E(b, 0)->offset = 0; }
static void wraps(uint8_t *b) { E(b, 2)->offset = UINT64_MAX - 63; }

struct mutation {
  const char *what;
  void (*fn)(uint8_t *);
  int want;
};

static void targeted(struct check *t, const struct img *im) {
  const struct mutation ms[] = {
      {"bad magic", bad_magic, SHML_EMAGIC},
      {"version 2 (before steps per epoch and counters)", version2, SHML_EVERSION},
      {"version 3 (before stop reasons and stall notes)", version3, SHML_EVERSION},
      {"version 4 (before the plan version)", version4, SHML_EVERSION},
      {"version 6", version6, SHML_EVERSION},
      {"nodes 0", nodes0, SHML_ESIZE},
      {"node_rank not below nodes", node_rank1, SHML_ESIZE},
      {"version 0 (being written)", version0, SHML__NOTREADY},
      {"all-zero header (being written)", zero_all, SHML__NOTREADY},
      {"total_size != file size", total_off, SHML_ESIZE},
      {"slot_count 1", slots1, SHML_ESIZE},
      {"slot_count 65537", slots_big, SHML_ESIZE},
      {"schema_offset 1024", schema_off, SHML_ESIZE},
      {"slot_header_size 128", slot_hdr, SHML_ESIZE},
      {"schema_count 0", schema0, SHML_ESIZE},
      {"schema_count 257", schema257, SHML_ESIZE},
      {"header_size not page-aligned", hdr_unaligned, SHML_ESIZE},
      {"slot_size not page-aligned", slot_unaligned, SHML_ESIZE},
      {"slot_count * slot_size overflows", overflow, SHML_ESIZE},
      {"batch_capacity 0", cap0, SHML_ESIZE},
      {"rank >= ranks", rank_ge, SHML_ESIZE},
      {"wrong job", wrong_job, SHML_ECORRUPT},
      {"job with a suffix", job_suffix, SHML_ECORRUPT},
      {"dtype 99", dtype99, SHML_ESCHEMA},
      {"ndim 5", ndim5, SHML_ESCHEMA},
      {"unterminated name", unterminated, SHML_ESCHEMA},
      {"empty name", empty_name, SHML_ESCHEMA},
      {"name with a space", bad_char, SHML_ESCHEMA},
      {"name not NUL-padded", junk_after, SHML_ESCHEMA},
      {"duplicate name", duplicate, SHML_ESCHEMA},
      {"row_bytes mismatch", row_bytes, SHML_ESCHEMA},
      {"nbytes mismatch", nbytes, SHML_ESCHEMA},
      {"dimension 0 below ndim", dim0, SHML_ESCHEMA},
      {"dimension set above ndim", dim_above, SHML_ESCHEMA},
      {"reserved bytes set", reserved, SHML_ESCHEMA},
      {"row_bytes overflows", dim_overflow, SHML_ESCHEMA},
      {"tensor past slot end", past_end, SHML_EOFFSET},
      {"tensors overlap", overlap, SHML_EOFFSET},
      {"offset not 64-aligned", unaligned, SHML_EOFFSET},
      {"offset inside the slot header", in_header, SHML_EOFFSET},
      {"offset + nbytes overflows", wraps, SHML_EOFFSET},
  };
  for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++)
    CHECK_RC(t, validate_copy(im, im->len, ms[i].fn, RANK), ms[i].want, ms[i].what);
  CHECK_RC(t, validate_copy(im, im->len, NULL, 0), SHML_ECORRUPT, "wrong rank requested");
  CHECK_RC(t, validate_copy(im, im->len - 4096, NULL, RANK), SHML_ESIZE, "truncated image");
  CHECK_RC(t, validate_copy(im, 511, NULL, RANK), SHML_ESIZE, "image shorter than the fixed header");
  CHECK_RC(t, validate_copy(im, 0, NULL, RANK), SHML_ESIZE, "empty image");
}

static int is_validation_result(int rc) {
  return rc == SHML_OK || rc == SHML__NOTREADY || rc == SHML_EMAGIC || rc == SHML_EVERSION ||
         rc == SHML_ESIZE || rc == SHML_EOFFSET || rc == SHML_ESCHEMA || rc == SHML_ECORRUPT;
}

/* Identity and geometry bytes that every change must break (a smaller schema_count, and
 * other ranks, producer_pid, producer_start and config_hash, may be valid). */
static int must_fail(size_t off) {
  return off < 36 || (off >= 40 && off < 48) || (off >= 64 && off < 72) ||
         (off >= 80 && off < 128);
}

static void corruption_loop(struct check *t, const struct img *im) {
  struct shml__geom g;
  uint8_t *b = malloc(im->len);
  if (b == NULL) return;
  memcpy(b, im->buf, im->len);
  const struct {
    const char *what;
    int xor_;
    uint8_t v;
  } pats[] = {{"xor 0x01", 1, 0x01}, {"xor 0x80", 1, 0x80}, {"xor 0xff", 1, 0xff},
              {"set 0x00", 0, 0x00}, {"set 0xff", 0, 0xff}, {"set 0x7f", 0, 0x7f}};
  for (size_t p = 0; p < sizeof pats / sizeof pats[0]; p++) {
    size_t bad = 0, runs = 0;
    for (size_t off = 0; off < im->table_end; off++) {
      uint8_t old = b[off];
      b[off] = pats[p].xor_ ? old ^ pats[p].v : pats[p].v;
      if (b[off] == old) continue;
      runs++;
      int rc = shml__validate(b, im->len, JOB, RANK, &g);
      int ok = is_validation_result(rc);
      if (off < 8) ok = ok && rc == SHML_EMAGIC;
      else if (must_fail(off)) ok = ok && rc != SHML_OK;
      else if (off >= 428 && off < 432) ok = ok && rc == SHML_ESIZE; /* node_rank 0 of 1 */
      else if (off >= 424 && off < 428) ok = ok && (rc == SHML_OK || rc == SHML_ESIZE); /* nodes */
      else if (off >= 128 && off < SHML__HEADER_BYTES) ok = ok && rc == SHML_OK;
      if (!ok && bad++ < 5) printf("#   byte %zu -> %s\n", off, shml_errname(rc));
      b[off] = old;
    }
    CHECK(t, bad == 0, "corrupt each header/schema byte (%s, %zu images): expected result",
          pats[p].what, runs);
  }
  free(b);
}

static uint64_t next_rand(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* SHML_CORRUPTIONS (default 4000) corrupted images from SHML_CORRUPTION_SEED: make soak
 * runs many more than make test. */
static long env_long(const char *name, long def) {
  const char *v = getenv(name);
  char *end;
  long n = v ? strtol(v, &end, 0) : def;
  return v && (*end != '\0' || n <= 0) ? def : n;
}

static void random_loop(struct check *t, const struct img *im) {
  struct shml__geom g;
  long iters = env_long("SHML_CORRUPTIONS", 4000);
  uint64_t seed = (uint64_t)env_long("SHML_CORRUPTION_SEED", 0x5eed5eed12345L);
  long bad = 0, counts[18] = {0};
  for (long it = 0; it < iters; it++) {
    size_t len = im->len;
    if (next_rand(&seed) % 8 == 0) len = next_rand(&seed) % im->len;
    uint8_t *b = malloc(len ? len : 1);
    if (b == NULL) break;
    memcpy(b, im->buf, len);
    int n = 1 + (int)(next_rand(&seed) % 8);
    size_t span = len < im->table_end ? len : im->table_end;
    for (int k = 0; k < n && span > 0; k++) {
      uint64_t r = next_rand(&seed);
      b[r % span] = (uint8_t)(r >> 32);
    }
    int rc = shml__validate(b, len, JOB, RANK, &g);
    free(b);
    if (!is_validation_result(rc)) bad++;
    counts[rc == SHML__NOTREADY ? 17 : -rc]++;
  }
  CHECK(t, bad == 0, "random multi-byte corruptions give validation results");
  printf("#   %ld corruptions: OK %ld, not-ready %ld, EMAGIC %ld, EVERSION %ld, ESIZE %ld, "
         "EOFFSET %ld, ESCHEMA %ld, ECORRUPT %ld\n", iters,
         counts[0], counts[17], counts[5], counts[6], counts[7],
         counts[8], counts[9], counts[10]);
}

/* ---- real files, through shml_attach_dir ---- */

struct dir {
  char path[64];
  char seg[256];
  int lock_fd; /* holds the byte-0 producer lock, as a live producer would */
};

static int write_seg(struct dir *d, const struct img *im, void (*fn)(uint8_t *), mode_t mode) {
  uint8_t *b = malloc(im->len);
  if (b == NULL) return -1;
  memcpy(b, im->buf, im->len);
  if (fn != NULL) fn(b);
  unlink(d->seg);
  if (d->lock_fd >= 0) close(d->lock_fd);
  d->lock_fd = -1;
  int fd = open(d->seg, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  int rc = fd >= 0 && write(fd, b, im->len) == (ssize_t)im->len && fchmod(fd, mode) == 0 ? 0 : -1;
  free(b);
  if (fd < 0) return -1;
  d->lock_fd = fd;
  return rc;
}

static int lock_seg(struct dir *d) {
  struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
  return fcntl(d->lock_fd, F_OFD_SETLK, &fl);
}

static int attach_rc(struct dir *d, const char *job, int rank, int timeout_ms) {
  shml_consumer *c = NULL;
  int rc = shml_attach_dir(d->path, job, rank, timeout_ms, &c);
  if ((rc == SHML_OK) != (c != NULL)) return 99;
  shml_detach(c);
  return rc;
}

/* shml_peek_segment's code, with its fields checked for the ones it must leave 0. */
static int peek(struct dir *d, const char *job, int rank, shml_segment *s) {
  int rc = shml_peek_segment(d->path, job, rank, s);
  int identity = s->rank != 0 || s->ranks != 0 || s->producer_pid != 0;
  if (identity && (rc != SHML_OK || s->version != SHML_PROTOCOL_VERSION)) return 99;
  return rc;
}

static void files(struct check *t, const struct img *im) {
  struct dir d = {.lock_fd = -1};
  shml_consumer *c = NULL;
  snprintf(d.path, sizeof d.path, "/dev/shm/shml-test-XXXXXX");
  if (!CHECK(t, mkdtemp(d.path) != NULL, "mkdtemp under /dev/shm")) return;
  snprintf(d.seg, sizeof d.seg, "%s/shmloader-%u-%s-r%d", d.path, (unsigned)getuid(), JOB, RANK);

  write_seg(&d, im, NULL, 0600);
  lock_seg(&d);
  int rc = shml_attach_dir(d.path, JOB, RANK, 1000, &c);
  CHECK_RC(t, rc, SHML_OK, "valid segment file attaches");
  if (c != NULL) {
    shml_info info;
    shml_info_get(c, &info);
    CHECK(t, info.size == im->len && info.slot_count == 4 && info.ntensors == 3 &&
                 info.batch_capacity == 8 && info.rank == RANK && info.ranks == 2 &&
                 info.slot_size == im->plan.slot_size && info.config_hash == 0x0123456789abcdefULL &&
                 info.plan_version == IMG_PLAN_VERSION,
          "shml_info matches the image (the plan version from the header)");
    shml_detach(c);
  }
  shml_segment s;
  CHECK(t, peek(&d, JOB, RANK, &s) == SHML_OK && s.version == SHML_PROTOCOL_VERSION &&
               s.producer_alive == 1 && s.rank == RANK && s.ranks == 2 &&
               s.producer_pid == getpid(),
        "peek: version, a live producer, rank, ranks and pid");
  setenv("SHMLOADER_SHM_DIR", d.path, 1);
  CHECK(t, shml_peek_segment(NULL, JOB, RANK, &s) == SHML_OK && s.ranks == 2,
        "peek finds $SHMLOADER_SHM_DIR");
  rc = shml_attach(JOB, RANK, 1000, &c);
  CHECK_RC(t, rc, SHML_OK, "shml_attach finds $SHMLOADER_SHM_DIR (and two peeks left no lock)");
  shml_detach(c);
  unsetenv("SHMLOADER_SHM_DIR");

  write_seg(&d, im, NULL, 0644);
  lock_seg(&d);
  CHECK_RC(t, attach_rc(&d, JOB, RANK, 100), SHML_EPERM, "mode 0644");
  CHECK_RC(t, peek(&d, JOB, RANK, &s), SHML_EPERM, "peek: mode 0644");
  write_seg(&d, im, NULL, 0400);
  lock_seg(&d);
  CHECK_RC(t, attach_rc(&d, JOB, RANK, 100), SHML_EPERM, "mode 0400");
  if (geteuid() == 0) {
    write_seg(&d, im, NULL, 0600);
    lock_seg(&d);
    CHECK(t, fchown(d.lock_fd, 1, 1) == 0, "chown to uid 1");
    CHECK_RC(t, attach_rc(&d, JOB, RANK, 100), SHML_EPERM, "owned by another uid");
  }
  write_seg(&d, im, NULL, 0600);
  lock_seg(&d);
  CHECK(t, ftruncate(d.lock_fd, (off_t)(im->len - 4096)) == 0, "truncate");
  CHECK_RC(t, attach_rc(&d, JOB, RANK, 100), SHML_ESIZE, "truncated file");
  CHECK(t, ftruncate(d.lock_fd, 100) == 0, "truncate to 100 bytes");
  CHECK_RC(t, attach_rc(&d, JOB, RANK, 100), SHML_ESIZE, "file shorter than 512 bytes");
  CHECK(t, peek(&d, JOB, RANK, &s) == SHML_ESIZE && s.producer_alive == 1,
        "peek: file shorter than the identity line, producer_alive still told");
  write_seg(&d, im, total_off, 0600);
  lock_seg(&d);
  CHECK_RC(t, attach_rc(&d, JOB, RANK, 100), SHML_ESIZE, "total_size != file size");
  write_seg(&d, im, bad_magic, 0600);
  lock_seg(&d);
  CHECK_RC(t, attach_rc(&d, JOB, RANK, 100), SHML_EMAGIC, "bad magic file");
  CHECK_RC(t, peek(&d, JOB, RANK, &s), SHML_EMAGIC, "peek: bad magic");
  write_seg(&d, im, version2, 0600);
  lock_seg(&d);
  CHECK_RC(t, attach_rc(&d, JOB, RANK, 100), SHML_EVERSION, "version 2 file (an older producer)");
  CHECK(t, peek(&d, JOB, RANK, &s) == SHML_OK && s.version == 2 && s.ranks == 0,
        "peek: version 2, and nothing read from the rest of its header");
  write_seg(&d, im, wrong_job, 0600);
  lock_seg(&d);
  CHECK_RC(t, attach_rc(&d, JOB, RANK, 100), SHML_ECORRUPT, "file of another job");
  CHECK_RC(t, peek(&d, JOB, RANK, &s), SHML_ECORRUPT, "peek: file of another job");
  write_seg(&d, im, dtype99, 0600);
  lock_seg(&d);
  CHECK_RC(t, attach_rc(&d, JOB, RANK, 100), SHML_ESCHEMA, "file with dtype 99");
  write_seg(&d, im, overlap, 0600);
  lock_seg(&d);
  CHECK_RC(t, attach_rc(&d, JOB, RANK, 100), SHML_EOFFSET, "file with overlapping tensors");

  /* The file of rank 0 holding the header of rank 1. */
  char seg0[256];
  snprintf(seg0, sizeof seg0, "%s/shmloader-%u-%s-r0", d.path, (unsigned)getuid(), JOB);
  write_seg(&d, im, NULL, 0600);
  lock_seg(&d);
  CHECK(t, rename(d.seg, seg0) == 0, "rename to rank 0");
  CHECK_RC(t, attach_rc(&d, JOB, 0, 100), SHML_ECORRUPT, "file of another rank");
  CHECK_RC(t, peek(&d, JOB, 0, &s), SHML_ECORRUPT, "peek: file of another rank");
  unlink(seg0);

  write_seg(&d, im, version0, 0600);
  lock_seg(&d);
  int64_t t0 = shml__now_ns();
  CHECK(t, peek(&d, JOB, RANK, &s) == SHML_OK && s.version == 0 && s.producer_alive == 1,
        "peek: a header being written (version 0)");
  CHECK_RC(t, attach_rc(&d, JOB, RANK, 150), SHML_ETIMEOUT, "live producer, version 0");
  CHECK(t, shml__now_ns() - t0 >= 150000000LL, "... after the timeout");

  write_seg(&d, im, NULL, 0600); /* not locked: its producer is dead */
  CHECK(t, peek(&d, JOB, RANK, &s) == SHML_OK && s.producer_alive == 0 &&
               s.producer_pid == getpid(),
        "peek: a dead producer's segment names its pid");
  t0 = shml__now_ns();
  CHECK_RC(t, attach_rc(&d, JOB, RANK, 150), SHML_EGONE, "stale segment (producer lock free)");
  int64_t el = shml__now_ns() - t0;
  CHECK(t, el >= 150000000LL && el < 1000000000LL, "... at the timeout (%lld ms)",
        (long long)(el / 1000000));

  unlink(d.seg);
  CHECK(t, symlink(seg0, d.seg) == 0, "symlink");
  CHECK_RC(t, attach_rc(&d, JOB, RANK, 100), SHML_EPERM, "segment is a symlink");
  CHECK_RC(t, peek(&d, JOB, RANK, &s), SHML_EPERM, "peek: a symlink");
  unlink(d.seg);
  CHECK(t, mkdir(d.seg, 0700) == 0, "mkdir");
  CHECK_RC(t, attach_rc(&d, JOB, RANK, 100), SHML_EPERM, "segment is a directory");
  CHECK_RC(t, peek(&d, JOB, RANK, &s), SHML_EPERM, "peek: a directory");
  rmdir(d.seg);
  CHECK_RC(t, attach_rc(&d, JOB, RANK, 100), SHML_ETIMEOUT, "no segment at all");
  CHECK_RC(t, attach_rc(&d, JOB, RANK, 0), SHML_ETIMEOUT, "no segment, timeout 0");
  CHECK(t, peek(&d, JOB, RANK, &s) == SHML_ESYS && s.sys_errno == ENOENT,
        "peek: no segment is SHML_ESYS with ENOENT");
  CHECK_RC(t, peek(&d, "a b", RANK, &s), SHML_EINVAL, "peek: invalid job name");
  CHECK_RC(t, peek(&d, JOB, -1, &s), SHML_EINVAL, "peek: negative rank");
  CHECK_RC(t, shml_peek_segment(d.path, JOB, RANK, NULL), SHML_EINVAL, "peek: NULL out");

  const char *bad_jobs[] = {"", ".job", "-job", "a b", "a/b", "j\xc3\xa9",
                            "a1234567890123456789012345678901234567890"};
  for (size_t i = 0; i < sizeof bad_jobs / sizeof bad_jobs[0]; i++)
    CHECK_RC(t, attach_rc(&d, bad_jobs[i], RANK, 0), SHML_EINVAL, "invalid job name");
  CHECK_RC(t, attach_rc(&d, "a12345678901234567890123456789012345678_", RANK, 0), SHML_ETIMEOUT,
           "40-character job name is valid");
  CHECK_RC(t, attach_rc(&d, JOB, -1, 0), SHML_EINVAL, "negative rank");
  CHECK_RC(t, shml_attach_dir(d.path, JOB, RANK, 0, NULL), SHML_EINVAL, "NULL out");
  CHECK_RC(t, attach_rc(&d, NULL, RANK, 0), SHML_EINVAL, "NULL job");

  if (d.lock_fd >= 0) close(d.lock_fd);
  unlink(d.seg);
  CHECK(t, rmdir(d.path) == 0, "temp dir left empty");
}

static void misc(struct check *t) {
  int named = 1;
  for (int e = SHML_OK; e >= SHML_ERANGE; e--) {
    if (strcmp(shml_strerror(e), shml_strerror(-99)) == 0 ||
        strcmp(shml_errname(e), "SHML_UNKNOWN") == 0)
      named = 0;
    for (int f = SHML_OK; f > e; f--)
      if (strcmp(shml_strerror(e), shml_strerror(f)) == 0 ||
          strcmp(shml_errname(e), shml_errname(f)) == 0)
        named = 0;
  }
  CHECK(t, named, "every error code has its own text and name");
  CHECK(t, strcmp(shml_errname(SHML_ESEEK), "SHML_ESEEK") == 0 && SHML_ESEEK == -17 &&
               strcmp(shml_errname(SHML_ERANK), "SHML_ERANK") == 0 && SHML_ERANK == -18 &&
               strcmp(shml_errname(SHML_ERANGE), "SHML_ERANGE") == 0 && SHML_ERANGE == -19 &&
               strcmp(shml_strerror(-20), shml_strerror(-99)) == 0,
        "SHML_ESEEK is -17, SHML_ERANK -18, SHML_ERANGE -19, all named; -20 is unknown");
  size_t sizes[] = {0, 1, 1, 1, 2, 2, 4, 4, 8, 8, 2, 2, 4, 8, 0};
  int ok = 1;
  for (int d = 0; d <= 14; d++)
    if (shml_dtype_size(d) != sizes[d] ||
        (sizes[d] != 0) != (strcmp(shml_dtype_name(d), "unknown") != 0))
      ok = 0;
  CHECK(t, ok, "dtype sizes and names follow PROTOCOL.md");
  CHECK(t, strcmp(shml_dtype_name(SHML_BFLOAT16), "bfloat16") == 0, "bfloat16 name");
  CHECK(t, shml_detach(NULL) == SHML_OK, "shml_detach(NULL)");
}

int main(void) {
  struct check t = {0, 0};
  struct img im;
  if (!CHECK(&t, make_image(&im) == 0, "build image")) return 1;
  struct shml__geom g;
  CHECK_RC(&t, shml__validate(im.buf, im.len, JOB, RANK, &g), SHML_OK, "valid image");
  CHECK(&t, g.slot_count == 4 && g.schema_count == 3 && g.header_size == 4096 &&
                g.tensors[1].offset == im.plan.offset[1] && g.tensors[2].ndim == 2 &&
                strcmp(g.tensors[2].name, "x:a/b-c.d_e") == 0 && g.tensors[1].row_bytes == 100,
        "validated geometry copied out");
  targeted(&t, &im);
  corruption_loop(&t, &im);
  random_loop(&t, &im);
  files(&t, &im);
  misc(&t);
  free(im.buf);
  return check_done(&t, "test_validate");
}
