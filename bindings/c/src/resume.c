/*
 * resume.c - where a saved position continues, and whether a position lies within the run.
 *
 * The trainer side's one home of these rules (bindings ask rather than repeat them). The
 * translation to another world size is producer/plan's Plan.Resume, which `shmloader
 * serve --resume` applies; tests/test_resume.c checks the two against a table of random
 * cases that Go writes (producer/plan/testdata/resume.golden).
 */
#include <stdarg.h>
#include <stdio.h>

#include "internal.h"

/* The reason, NUL-terminated and truncated to size bytes; nothing when why is NULL. */
__attribute__((format(printf, 3, 4))) static void say(char *why, size_t size, const char *fmt,
                                                      ...) {
  if (why == NULL || size == 0) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, size, fmt, ap);
  va_end(ap);
}

static unsigned long long ull(uint64_t v) { return (unsigned long long)v; }

/* The last index of a count as text: "0..N-1", or "none" for a count of 0. */
static void range_text(char *buf, size_t n, uint64_t count) {
  if (count == 0)
    snprintf(buf, n, "none");
  else
    snprintf(buf, n, "0..%llu", ull(count - 1));
}

static int check_position(const struct shml__geom *g, uint64_t epoch, uint64_t step,
                          uint64_t base, char *why, size_t size) {
  char valid[48];
  if (g->epochs != 0 && epoch >= g->epochs) {
    range_text(valid, sizeof valid, g->epochs);
    say(why, size, "epoch %llu is past the run: the producer serves epochs %s", ull(epoch),
        valid);
    return SHML_ERANGE;
  }
  if (base > g->elastic_limit) {
    say(why, size,
        "no epoch starts at global batch %llu: the last one an epoch may start at is %llu",
        ull(base), ull(g->elastic_limit));
    return SHML_ERANGE;
  }
  /* An epoch resumed at a later base has no more steps than one started at 0, so
   * steps_per_epoch bounds every step. */
  if (step > g->steps_per_epoch) {
    range_text(valid, sizeof valid, g->steps_per_epoch);
    say(why, size,
        "step %llu is past the epoch: rank %u has steps %s per epoch (step %llu is the epoch's "
        "end)",
        ull(step), g->rank, valid, ull(g->steps_per_epoch));
    return SHML_ERANGE;
  }
  say(why, size, "%s", "");
  return SHML_OK;
}

int shml__check_position(const shml_consumer *c, uint64_t epoch, uint64_t step, uint64_t base) {
  return check_position(&c->g, epoch, step, base, NULL, 0);
}

SHML_API int shml_seek_check(const shml_consumer *c, uint64_t epoch, uint64_t step,
                             uint64_t base, char *why, size_t size) {
  if (c == NULL) return SHML_EINVAL;
  return check_position(&c->g, epoch, step, base, why, size);
}

/* What the saved state's plan version and config say about resuming here. */
static int check_origin(const struct shml__geom *g, const shml_state *s, char *why, size_t size) {
  /* A state without a plan version is accepted only without a config hash too: one a
   * person wrote by hand, not one an older shmloader saved. */
  if (s->plan_version != g->plan_version && (s->plan_version != 0 || s->config_hash != 0)) {
    char saved[64];
    if (s->plan_version == 0)
      snprintf(saved, sizeof saved, "no plan_version (a shmloader before plan version 2)");
    else
      snprintf(saved, sizeof saved, "plan version %u", s->plan_version);
    say(why, size,
        "the state was saved with %s; this shmloader serves plan version %u, in which a step "
        "names other rows: resuming would not reproduce the batches (start the epoch again "
        "with seek(epoch, 0))",
        saved, g->plan_version);
    return SHML_EINVAL;
  }
  if (s->config_hash != 0 && g->config_hash != 0 && s->config_hash != g->config_hash) {
    say(why, size, "state was saved for config %#llx, the producer runs config %#llx",
        ull(s->config_hash), ull(g->config_hash));
    return SHML_EINVAL;
  }
  return SHML_OK;
}

SHML_API int shml_resume(const shml_consumer *c, const shml_state *saved, shml_state *out,
                         char *why, size_t size) {
  say(why, size, "%s", "");
  if (c == NULL || saved == NULL || out == NULL) return SHML_EINVAL;
  const struct shml__geom *g = &c->g;
  uint64_t here = (uint64_t)g->ranks * g->nodes;
  uint64_t world = saved->world != 0 ? saved->world : here;
  uint64_t epoch = saved->epoch, step = saved->step, base = saved->base, all;
  int rc = check_origin(g, saved, why, size);
  if (rc != SHML_OK) return rc;
  if (world != here) {
    /* producer/plan/doc.go "Assignment": the world consumed [base, base + step * world). */
    uint64_t at;
    if (__builtin_mul_overflow(step, world, &at) || __builtin_add_overflow(at, base, &at)) {
      say(why, size,
          "the state's step %llu of %llu trainers from global batch %llu lies past every "
          "epoch",
          ull(step), ull(world), ull(base));
      return SHML_ERANGE;
    }
    if (at > g->elastic_limit) {
      say(why, size,
          "the state was saved at global batch %llu, among the last uneven batches of an "
          "epoch (drop_last: false, past batch %llu): it resumes only under the world size it "
          "was saved with (%llu trainers; this job has %llu), or from the start of the next "
          "epoch",
          ull(at), ull(g->elastic_limit), ull(world), ull(here));
      return SHML_EINVAL;
    }
    if (at % here == 0) {
      base = 0;
      step = at / here;
    } else {
      base = at;
      step = 0;
    }
  } else if (g->steps_per_epoch != UINT64_MAX && step == g->steps_per_epoch + 1 &&
             !__builtin_mul_overflow(g->steps_per_epoch, here, &all) &&
             g->global_batches > all) {
    /* Some rank has one batch more per epoch than this one (drop_last: false): a state
     * that it saved after its extra last batch is this rank's epoch end. */
    step = g->steps_per_epoch;
  }
  rc = check_position(g, epoch, step, base, why, size);
  if (rc != SHML_OK) return rc;
  *out = (shml_state){.epoch = epoch,
                      .step = step,
                      .base = base,
                      .world = here,
                      .config_hash = g->config_hash,
                      .plan_version = g->plan_version};
  return SHML_OK;
}
