/* image.c - see image.h. */
#include <string.h>
#include <unistd.h>

#include "../shmloader.h"
#include "image.h"

/* Copies a name into a zeroed field of n bytes, keeping a terminating NUL. */
static void put_name(char *dst, size_t n, const char *src) {
  memcpy(dst, src, strnlen(src, n - 1));
}

static uint64_t roundup(uint64_t v, uint64_t to) { return (v + to - 1) / to * to; }

int img_plan(const struct img_spec *s, struct img_plan *p) {
  if (s->ntensors < 1 || s->ntensors > IMG_MAX_TENSORS) return -1;
  memset(p, 0, sizeof *p);
  p->header_size = (uint32_t)roundup(SHML__SCHEMA_OFFSET + SHML__TENSOR_BYTES * s->ntensors,
                                     SHML__PAGE);
  uint64_t at = SHML__SLOT_HEADER_BYTES;
  for (uint32_t i = 0; i < s->ntensors; i++) {
    const struct img_tensor *t = &s->tensors[i];
    uint64_t row = shml_dtype_size(t->dtype);
    for (uint32_t d = 0; d < t->ndim; d++) row *= t->shape[d];
    p->offset[i] = at;
    p->row_bytes[i] = row;
    p->nbytes[i] = row * s->batch_capacity;
    at = roundup(at + p->nbytes[i], 64);
  }
  p->slot_size = roundup(at, SHML__PAGE);
  p->total_size = p->header_size + (uint64_t)s->slot_count * p->slot_size;
  return 0;
}

void img_write(void *base, const struct img_spec *s, const struct img_plan *p) {
  struct shml__header *h = base;
  memcpy(h->magic, SHML__MAGIC, 8);
  h->header_size = p->header_size;
  h->total_size = p->total_size;
  h->slot_size = p->slot_size;
  h->slot_count = s->slot_count;
  h->schema_count = s->ntensors;
  h->schema_offset = SHML__SCHEMA_OFFSET;
  h->rank = s->rank;
  h->ranks = s->ranks;
  h->nodes = 1;
  h->node_rank = 0;
  /* Without a run (steps_per_epoch 0) the tests seek anywhere. */
  h->global_batches = s->steps_per_epoch * s->ranks;
  h->elastic_limit = s->steps_per_epoch ? h->global_batches : UINT64_MAX;
  h->steps_per_epoch = s->steps_per_epoch ? s->steps_per_epoch : UINT64_MAX;
  h->epochs = s->epochs;
  h->plan_version = IMG_PLAN_VERSION;
  h->producer_pid = (int32_t)getpid();
  h->producer_start = 12345;
  h->batch_capacity = s->batch_capacity;
  h->slot_header_size = SHML__SLOT_HEADER_BYTES;
  h->config_hash = 0x0123456789abcdefULL;
  put_name(h->job, sizeof h->job, s->job);
  __atomic_store_n(&h->state, SHML__RUNNING, __ATOMIC_RELEASE);
  for (uint32_t i = 0; i < s->ntensors; i++) {
    struct shml__tensor_entry *e =
        (struct shml__tensor_entry *)((uint8_t *)base + SHML__SCHEMA_OFFSET) + i;
    const struct img_tensor *t = &s->tensors[i];
    put_name(e->name, sizeof e->name, t->name);
    e->dtype = (uint32_t)t->dtype;
    e->ndim = t->ndim;
    memcpy(e->shape, t->shape, sizeof e->shape);
    e->offset = p->offset[i];
    e->row_bytes = p->row_bytes[i];
    e->nbytes = p->nbytes[i];
  }
  __atomic_store_n(&h->version, SHML_PROTOCOL_VERSION, __ATOMIC_RELEASE); /* [HDR] */
}
