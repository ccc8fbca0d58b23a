/*
 * validate.c - attach-time validation of a segment image (PROTOCOL.md "Validation",
 * steps 2-6; step 1, the fstat checks, is in attach.c).
 *
 * Every field is copied out of shared memory once and checked on the copy, so a
 * producer that rewrites the header concurrently cannot make a checked value differ
 * from a used one. The order of checks fixes which error a broken image gets.
 */
#include <string.h>

#include "internal.h"

int shml__job_ok(const char *job) {
  if (job == NULL) return 0;
  size_t n = strnlen(job, SHML__JOB_MAX + 1);
  if (n == 0 || n > SHML__JOB_MAX || job[0] == '.' || job[0] == '-') return 0;
  for (size_t i = 0; i < n; i++) {
    char ch = job[i];
    int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
             ch == '_' || ch == '.' || ch == '-';
    if (!ok) return 0;
  }
  return 1;
}

static int name_char_ok(char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
         ch == '_' || ch == '.' || ch == ':' || ch == '/' || ch == '-';
}

static int all_zero(const void *p, size_t n) {
  const uint8_t *b = p;
  for (size_t i = 0; i < n; i++)
    if (b[i] != 0) return 0;
  return 1;
}

/* Step 3. */
static int check_geometry(const struct shml__header *h, size_t len) {
  uint64_t slots_bytes, total;
  if (h->total_size != (uint64_t)len) return SHML_ESIZE;
  if (h->schema_offset != SHML__SCHEMA_OFFSET) return SHML_ESIZE;
  if (h->slot_header_size != SHML__SLOT_HEADER_BYTES) return SHML_ESIZE;
  if (h->schema_count < 1 || h->schema_count > SHML__MAX_SCHEMA) return SHML_ESIZE;
  if (h->header_size % SHML__PAGE != 0 ||
      h->header_size < SHML__SCHEMA_OFFSET + SHML__TENSOR_BYTES * h->schema_count)
    return SHML_ESIZE;
  if (h->slot_size % SHML__PAGE != 0 || h->slot_size <= SHML__SLOT_HEADER_BYTES)
    return SHML_ESIZE;
  if (h->slot_count < SHML__MIN_SLOTS || h->slot_count > SHML__MAX_SLOTS) return SHML_ESIZE;
  if (__builtin_mul_overflow((uint64_t)h->slot_count, h->slot_size, &slots_bytes) ||
      __builtin_add_overflow((uint64_t)h->header_size, slots_bytes, &total) ||
      total != h->total_size)
    return SHML_ESIZE;
  if (h->batch_capacity < 1) return SHML_ESIZE;
  if (h->rank >= h->ranks) return SHML_ESIZE;
  if (h->node_rank >= h->nodes) return SHML_ESIZE;
  return SHML_OK;
}

/* Step 4. */
int shml__check_identity(const struct shml__header *h, const char *job, int rank) {
  char want[SHML__JOB_BYTES];
  memset(want, 0, sizeof want);
  size_t n = strnlen(job, SHML__JOB_BYTES);
  if (n >= SHML__JOB_BYTES) return SHML_ECORRUPT;
  memcpy(want, job, n);
  if (memcmp(want, h->job, sizeof want) != 0) return SHML_ECORRUPT;
  if (rank < 0 || h->rank != (uint32_t)rank) return SHML_ECORRUPT;
  return SHML_OK;
}

/* Step 5, one entry; prev holds the entries already accepted. */
static int check_entry(const struct shml__tensor_entry *e, uint32_t batch_capacity,
                       const struct shml__tensor_geom *prev, uint32_t nprev,
                       struct shml__tensor_geom *out) {
  const char *nul = memchr(e->name, '\0', sizeof e->name);
  if (nul == NULL || nul == e->name) return SHML_ESCHEMA;
  size_t n = (size_t)(nul - e->name);
  for (size_t i = 0; i < n; i++)
    if (!name_char_ok(e->name[i])) return SHML_ESCHEMA;
  if (!all_zero(nul, sizeof e->name - n)) return SHML_ESCHEMA;
  for (uint32_t i = 0; i < nprev; i++)
    if (strcmp(prev[i].name, e->name) == 0) return SHML_ESCHEMA;

  if (e->dtype > INT32_MAX) return SHML_ESCHEMA;
  uint64_t row = shml_dtype_size((int32_t)e->dtype);
  if (row == 0) return SHML_ESCHEMA;
  if (e->ndim > SHML__ROW_DIMS) return SHML_ESCHEMA;
  for (uint32_t i = 0; i < SHML__ROW_DIMS; i++) {
    if (i < e->ndim && e->shape[i] < 1) return SHML_ESCHEMA;
    if (i >= e->ndim && e->shape[i] != 0) return SHML_ESCHEMA;
    if (i < e->ndim && __builtin_mul_overflow(row, e->shape[i], &row)) return SHML_ESCHEMA;
  }
  if (e->row_bytes != row) return SHML_ESCHEMA;
  uint64_t nbytes;
  if (__builtin_mul_overflow((uint64_t)batch_capacity, row, &nbytes) || e->nbytes != nbytes)
    return SHML_ESCHEMA;
  if (!all_zero(e->reserved, sizeof e->reserved)) return SHML_ESCHEMA;

  memcpy(out->name, e->name, sizeof out->name);
  out->dtype = (int32_t)e->dtype;
  out->ndim = e->ndim;
  memcpy(out->shape, e->shape, sizeof out->shape);
  out->offset = e->offset;
  out->row_bytes = e->row_bytes;
  out->nbytes = e->nbytes;
  return SHML_OK;
}

/* Step 6. */
static int check_extents(const struct shml__geom *g) {
  for (uint32_t i = 0; i < g->schema_count; i++) {
    const struct shml__tensor_geom *a = &g->tensors[i];
    uint64_t end;
    if (a->offset % 64 != 0 || a->offset < SHML__SLOT_HEADER_BYTES) return SHML_EOFFSET;
    if (__builtin_add_overflow(a->offset, a->nbytes, &end) || end > g->slot_size)
      return SHML_EOFFSET;
    for (uint32_t j = 0; j < i; j++) {
      const struct shml__tensor_geom *b = &g->tensors[j];
      if (a->offset < b->offset + b->nbytes && b->offset < end) return SHML_EOFFSET;
    }
  }
  return SHML_OK;
}

int shml__validate(const void *base, size_t len, const char *job, int rank,
                   struct shml__geom *out) {
  const struct shml__header *sh = base;
  struct shml__header h;
  if (base == NULL || job == NULL || out == NULL) return SHML_EINVAL;
  if (len < SHML__HEADER_BYTES) return SHML_ESIZE;

  /* Acquire: the identity line is complete once version is nonzero. */
  uint32_t version = __atomic_load_n(&sh->version, __ATOMIC_ACQUIRE); /* [HDR] */
  memset(&h, 0, sizeof h);
  memcpy(&h, base, offsetof(struct shml__header, head));
  /* The rest of the identity (line 3), also written before version. */
  h.nodes = sh->nodes;
  h.node_rank = sh->node_rank;
  h.elastic_limit = sh->elastic_limit;
  h.steps_per_epoch = sh->steps_per_epoch;
  h.epochs = sh->epochs;
  h.global_batches = sh->global_batches;
  h.plan_version = sh->plan_version;
  if (memcmp(h.magic, SHML__MAGIC, sizeof h.magic) != 0) {
    /* A header still being written may not have its magic yet. */
    if (version == 0 && all_zero(h.magic, sizeof h.magic)) return SHML__NOTREADY;
    return SHML_EMAGIC;
  }
  if (version == 0) return SHML__NOTREADY;
  if (version != SHML_PROTOCOL_VERSION) return SHML_EVERSION;

  int rc = check_geometry(&h, len);
  if (rc != SHML_OK) return rc;
  rc = shml__check_identity(&h, job, rank);
  if (rc != SHML_OK) return rc;

  memset(out, 0, sizeof *out);
  out->total_size = h.total_size;
  out->slot_size = h.slot_size;
  out->producer_start = h.producer_start;
  out->config_hash = h.config_hash;
  out->header_size = h.header_size;
  out->slot_count = h.slot_count;
  out->schema_count = h.schema_count;
  out->rank = h.rank;
  out->ranks = h.ranks;
  out->nodes = h.nodes;
  out->node_rank = h.node_rank;
  out->elastic_limit = h.elastic_limit;
  out->steps_per_epoch = h.steps_per_epoch;
  out->epochs = h.epochs;
  out->global_batches = h.global_batches;
  out->plan_version = h.plan_version;
  out->batch_capacity = h.batch_capacity;
  out->producer_pid = h.producer_pid;

  const uint8_t *table = (const uint8_t *)base + SHML__SCHEMA_OFFSET;
  for (uint32_t i = 0; i < h.schema_count; i++) {
    struct shml__tensor_entry e;
    memcpy(&e, table + (size_t)i * SHML__TENSOR_BYTES, sizeof e);
    rc = check_entry(&e, h.batch_capacity, out->tensors, i, &out->tensors[i]);
    if (rc != SHML_OK) return rc;
  }
  return check_extents(out);
}
