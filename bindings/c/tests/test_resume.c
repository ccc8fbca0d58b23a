/*
 * test_resume - shml_resume and shml_seek_check: the rules, their messages, and agreement
 * with Go's Plan.Resume on every case of producer/plan/testdata/resume.golden.
 * Usage: test_resume PATH/TO/resume.golden
 */
#include <stdio.h>
#include <string.h>

#include "../src/internal.h"
#include "check.h"

#define HASH 0x946f27e1cfaff21cULL
#define PLAN 2u

/* A handle with only the geometry these calls read: ranks x nodes trainers, rank 1. */
static shml_consumer geom(uint32_t ranks, uint32_t nodes, uint64_t limit, uint64_t steps,
                          uint64_t global, uint64_t epochs) {
  shml_consumer c;
  memset(&c, 0, sizeof c);
  c.g.rank = 1;
  c.g.ranks = ranks;
  c.g.nodes = nodes;
  c.g.elastic_limit = limit;
  c.g.steps_per_epoch = steps;
  c.g.global_batches = global;
  c.g.epochs = epochs;
  c.g.config_hash = HASH;
  c.g.plan_version = PLAN;
  return c;
}

static shml_state saved(uint64_t epoch, uint64_t step, uint64_t base, uint64_t world) {
  return (shml_state){.epoch = epoch, .step = step, .base = base, .world = world,
                      .config_hash = HASH, .plan_version = PLAN};
}

static int has(const char *s, const char *part) { return strstr(s, part) != NULL; }

static void rules(struct check *t) {
  /* 2 ranks x 2 nodes; 100 global batches per epoch, 25 steps a rank (drop_last). */
  shml_consumer c = geom(2, 2, 100, 25, 100, 3);
  shml_state s, out;
  char why[512];

  s = saved(1, 7, 0, 4);
  CHECK(t, shml_resume(&c, &s, &out, why, sizeof why) == SHML_OK && out.epoch == 1 &&
               out.step == 7 && out.base == 0 && out.world == 4 && out.config_hash == HASH &&
               out.plan_version == PLAN && why[0] == '\0',
        "the same world keeps the position; out is the state this job saves there");
  s.world = 0;
  CHECK(t, shml_resume(&c, &s, &out, NULL, 0) == SHML_OK && out.step == 7 && out.base == 0,
        "world 0 is this job's (why may be NULL)");
  s = saved(0, 6, 0, 2); /* global batch 12: step 3 of 4 trainers */
  CHECK(t, shml_resume(&c, &s, &out, why, sizeof why) == SHML_OK && out.step == 3 &&
               out.base == 0 && out.world == 4,
        "2 trainers at step 6 (global batch 12) -> step 3 under 4");
  s = saved(0, 5, 0, 3); /* global batch 15: 4 does not divide it */
  CHECK(t, shml_resume(&c, &s, &out, why, sizeof why) == SHML_OK && out.step == 0 &&
               out.base == 15,
        "3 trainers at step 5 (global batch 15) -> step 0 of an epoch started at 15");
  s = saved(0, 1, 15, 3); /* from base 15: global batch 18 */
  CHECK(t, shml_resume(&c, &s, &out, why, sizeof why) == SHML_OK && out.step == 0 &&
               out.base == 18,
        "a resumed epoch resumed again: base 15 + 1 x 3 = 18");
  s = saved(0, 34, 0, 3); /* global batch 102, past the limit 100 */
  CHECK(t, shml_resume(&c, &s, &out, why, sizeof why) == SHML_EINVAL &&
               has(why, "saved at global batch 102, among the last uneven batches") &&
               has(why, "(3 trainers; this job has 4)"),
        "past elastic_limit under another world: SHML_EINVAL, saying why: %s", why);
  s = saved(0, UINT64_MAX / 2, 0, 3);
  CHECK(t, shml_resume(&c, &s, &out, why, sizeof why) == SHML_ERANGE && has(why, "past every epoch"),
        "a step whose global batch overflows: SHML_ERANGE: %s", why);

  s = saved(0, 3, 0, 4);
  s.plan_version = 1;
  CHECK(t, shml_resume(&c, &s, &out, why, sizeof why) == SHML_EINVAL &&
               has(why, "saved with plan version 1; this shmloader serves plan version 2"),
        "another plan version: SHML_EINVAL: %s", why);
  s.plan_version = 0;
  CHECK(t, shml_resume(&c, &s, &out, why, sizeof why) == SHML_EINVAL &&
               has(why, "no plan_version (a shmloader before plan version 2)"),
        "no plan version but a config hash: an old state, SHML_EINVAL: %s", why);
  s.config_hash = 0;
  CHECK(t, shml_resume(&c, &s, &out, why, sizeof why) == SHML_OK && out.step == 3,
        "neither (a state written by hand): taken as this producer's");
  s = saved(0, 3, 0, 4);
  s.config_hash = 0x1234;
  CHECK(t, shml_resume(&c, &s, &out, why, sizeof why) == SHML_EINVAL &&
               has(why, "saved for config 0x1234, the producer runs config 0x946f27e1cfaff21c"),
        "another config: SHML_EINVAL naming both: %s", why);

  s = saved(3, 0, 0, 4);
  CHECK(t, shml_resume(&c, &s, &out, why, sizeof why) == SHML_ERANGE &&
               has(why, "epoch 3 is past the run: the producer serves epochs 0..2"),
        "an epoch past the run: SHML_ERANGE: %s", why);
  s = saved(0, 26, 0, 4);
  CHECK(t, shml_resume(&c, &s, &out, why, sizeof why) == SHML_ERANGE &&
               has(why, "step 26 is past the epoch: rank 1 has steps 0..24 per epoch (step 25 "
                        "is the epoch's end)"),
        "a step past the epoch: SHML_ERANGE: %s", why);
  s = saved(0, 25, 0, 4);
  CHECK(t, shml_resume(&c, &s, &out, why, sizeof why) == SHML_OK && out.step == 25,
        "step == steps_per_epoch is the epoch's end");

  /* drop_last: false, 2 x 1 trainers, 21 global batches: rank 0 has 11, rank 1 has 10. */
  c = geom(2, 1, 20, 10, 21, 0);
  s = saved(4, 11, 0, 2);
  CHECK(t, shml_resume(&c, &s, &out, why, sizeof why) == SHML_OK && out.step == 10 &&
               out.epoch == 4,
        "rank 0's state after its extra last batch (step 11) is rank 1's epoch end (step 10)");
  s.step = 12;
  CHECK_RC(t, shml_resume(&c, &s, &out, why, sizeof why), SHML_ERANGE, "step 12: past both");
  c.g.global_batches = 20; /* every rank 10: no rank has an extra batch */
  s.step = 11;
  CHECK_RC(t, shml_resume(&c, &s, &out, why, sizeof why), SHML_ERANGE,
           "step 11 where no rank has 11 steps");

  char small[8];
  s = saved(0, 3, 0, 4);
  s.config_hash = 1;
  CHECK(t, shml_resume(&c, &s, &out, small, sizeof small) == SHML_EINVAL && strlen(small) == 7,
        "why is truncated to its size, NUL-terminated");
  CHECK_RC(t, shml_resume(NULL, &s, &out, why, sizeof why), SHML_EINVAL, "NULL handle");
  CHECK_RC(t, shml_resume(&c, NULL, &out, why, sizeof why), SHML_EINVAL, "NULL state");
  CHECK_RC(t, shml_resume(&c, &s, NULL, why, sizeof why), SHML_EINVAL, "NULL out");

  c = geom(2, 2, 100, 25, 100, 3);
  CHECK(t, shml_seek_check(&c, 2, 25, 100, why, sizeof why) == SHML_OK && why[0] == '\0',
        "seek check: the last epoch's end from the elastic limit is within the run");
  CHECK(t, shml_seek_check(&c, 0, 0, 101, why, sizeof why) == SHML_ERANGE &&
               has(why, "no epoch starts at global batch 101: the last one an epoch may start "
                        "at is 100"),
        "seek check: a base past elastic_limit: %s", why);
  CHECK(t, shml_seek_check(&c, 5, 0, 0, NULL, 0) == SHML_ERANGE, "seek check, why NULL");
  c.g.epochs = 0;
  CHECK_RC(t, shml_seek_check(&c, 1000000, 0, 0, why, sizeof why), SHML_OK,
           "seek check: any epoch of an endless run");
  CHECK_RC(t, shml_seek_check(NULL, 0, 0, 0, why, sizeof why), SHML_EINVAL, "seek check, NULL");
}

/* Every case of the table Go wrote: where Go's Plan.Resume gives a position within this
 * rank's epoch, shml_resume gives the same; where Go refuses, shml_resume refuses too. A
 * kept position past this rank's steps (saved by a rank with more) is the consumer's
 * business: its epoch end, or SHML_ERANGE. */
static void table(struct check *t, const char *path) {
  FILE *f = fopen(path, "r");
  if (!CHECK(t, f != NULL, "open %s", path)) return;
  char line[256];
  int cases = 0, moved = 0, refused = 0, kept = 0, beyond = 0, bad = 0;
  while (fgets(line, sizeof line, f) != NULL) {
    unsigned long long wa, ba, sa, ranks, nodes, limit, spe, gb, base, step;
    if (line[0] == '#' || line[0] == '\n') continue;
    int n = sscanf(line, "%llu %llu %llu %llu %llu %llu %llu %llu -> %llu %llu", &wa, &ba, &sa,
                   &ranks, &nodes, &limit, &spe, &gb, &base, &step);
    int go_refused = n == 8 && strstr(line, "-> refused") != NULL;
    if (n != 10 && !go_refused) {
      CHECK(t, 0, "table line parses: %s", line);
      bad++;
      continue;
    }
    cases++;
    shml_consumer c = geom((uint32_t)ranks, (uint32_t)nodes, limit, spe, gb, 0);
    shml_state s = saved(9, sa, ba, wa), out;
    char why[512];
    int rc = shml_resume(&c, &s, &out, why, sizeof why);
    int ok;
    if (go_refused) {
      refused++;
      ok = rc == SHML_EINVAL && has(why, "uneven");
    } else if (step <= spe) {
      wa == ranks * nodes ? kept++ : moved++;
      ok = rc == SHML_OK && out.epoch == 9 && out.base == base && out.step == step;
    } else {
      beyond++;
      ok = wa == ranks * nodes &&
           ((step == spe + 1 && gb > spe * ranks * nodes && rc == SHML_OK && out.step == spe) ||
            rc == SHML_ERANGE);
    }
    if (!ok && bad++ < 10)
      printf("#   %s#   shml_resume: %s, base %llu step %llu (%s)\n", line, shml_errname(rc),
             (unsigned long long)out.base, (unsigned long long)out.step, why);
  }
  fclose(f);
  CHECK(t, bad == 0, "shml_resume agrees with Go's Plan.Resume on %d cases (%d moved to another "
                     "world, %d refused, %d kept, %d past the rank's epoch): %d differ",
        cases, moved, refused, kept, beyond, bad);
  CHECK(t, moved >= 500 && refused >= 20 && kept >= 100, "the table covers every kind");
}

int main(int argc, char **argv) {
  struct check t = {0, 0};
  if (!CHECK(&t, argc == 2, "usage: test_resume resume.golden")) return 1;
  rules(&t);
  table(&t, argv[1]);
  CHECK(&t, shml_protocol_version() == SHML_PROTOCOL_VERSION && shml_abi_version() == SHML_ABI_VERSION,
        "shml_protocol_version and shml_abi_version are the header's");
  return check_done(&t, "test_resume");
}
