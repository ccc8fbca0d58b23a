/* image.h - builds valid segment images (PROTOCOL.md layout) for the tests. */
#ifndef SHML_TEST_IMAGE_H
#define SHML_TEST_IMAGE_H

#include <stdint.h>

#include "../src/layout.h"

#define IMG_MAX_TENSORS 16
/* The plan version the images name: none that serve has, so that a test telling it
 * proves it was read from the header. */
#define IMG_PLAN_VERSION 7u

struct img_tensor {
  const char *name;
  int32_t dtype;
  uint32_t ndim;
  uint64_t shape[SHML__ROW_DIMS];
};

struct img_spec {
  const char *job;
  uint32_t rank;
  uint32_t ranks;
  uint32_t slot_count;
  uint32_t batch_capacity;
  uint32_t ntensors;
  const struct img_tensor *tensors;
  uint64_t steps_per_epoch; /* 0: no range (UINT64_MAX in the header) */
  uint64_t epochs;          /* 0: endless */
};

struct img_plan {
  uint32_t header_size;
  uint64_t slot_size;
  uint64_t total_size;
  uint64_t offset[IMG_MAX_TENSORS];
  uint64_t row_bytes[IMG_MAX_TENSORS];
  uint64_t nbytes[IMG_MAX_TENSORS];
};

/* Lays tensors out one after another, 64-aligned, after the slot header. */
int img_plan(const struct img_spec *s, struct img_plan *p);
/* Writes header and schema into a zeroed image of p->total_size bytes; version (1) is
 * stored last, with release [HDR]. */
void img_write(void *base, const struct img_spec *s, const struct img_plan *p);

#endif
