/* info.c - read-only accessors of a consumer handle. */
#include "internal.h"

SHML_API int shml_info_get(const shml_consumer *c, shml_info *out) {
  if (c == NULL || out == NULL) return SHML_EINVAL;
  out->base = c->base;
  out->size = c->size;
  out->slot_count = c->g.slot_count;
  out->slot_size = c->g.slot_size;
  out->batch_capacity = c->g.batch_capacity;
  out->rank = c->g.rank;
  out->ranks = c->g.ranks;
  out->ntensors = c->g.schema_count;
  out->producer_pid = c->g.producer_pid;
  out->config_hash = c->g.config_hash;
  out->nodes = c->g.nodes;
  out->node_rank = c->g.node_rank;
  out->elastic_limit = c->g.elastic_limit;
  out->steps_per_epoch = c->g.steps_per_epoch;
  out->epochs = c->g.epochs;
  out->global_batches = c->g.global_batches;
  out->plan_version = c->g.plan_version;
  return SHML_OK;
}

SHML_API int shml_stats_get(const shml_consumer *c, shml_stats *out) {
  if (c == NULL || out == NULL) return SHML_EINVAL;
  *out = c->stats;
  return SHML_OK;
}

SHML_API uint32_t shml_held(const shml_consumer *c) {
  return c == NULL ? 0 : c->nheld;
}

SHML_API int shml_errno(const shml_consumer *c) {
  return c == NULL ? 0 : c->err;
}
