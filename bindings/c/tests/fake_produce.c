/*
 * shml-fakeprod - the test producer as a program, for tests/consume.sh. One rank;
 * flags follow `shmloader debug-produce`. Prints the same summary line.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakeprod.h"

int main(int argc, char **argv) {
  struct fp_plan pl = {.dir = "/dev/shm", .ranks = 1, .depth = 8, .rows = 16, .row_bytes = 256,
                       .batches = 100, .epochs = 1, .eos = 1, .drain_ms = 30000,
                       .bad_crc_step = -1};
  for (int i = 1; i + 1 < argc; i += 2) {
    const char *a = argv[i], *v = argv[i + 1];
    long long n = atoll(v);
    if (strcmp(a, "--dir") == 0) pl.dir = v;
    else if (strcmp(a, "--job") == 0) pl.job = v;
    else if (strcmp(a, "--rank") == 0) pl.rank = (uint32_t)n;
    else if (strcmp(a, "--ranks") == 0) pl.ranks = (uint32_t)n;
    else if (strcmp(a, "--depth") == 0) pl.depth = (uint32_t)n;
    else if (strcmp(a, "--rows") == 0) pl.rows = (uint32_t)n;
    else if (strcmp(a, "--row-bytes") == 0) pl.row_bytes = (uint64_t)n;
    else if (strcmp(a, "--batches") == 0) pl.batches = (uint64_t)n;
    else if (strcmp(a, "--epochs") == 0) pl.epochs = (uint64_t)n;
    else if (strcmp(a, "--interval-us") == 0) pl.interval_us = (int)n;
    else if (strcmp(a, "--drain-ms") == 0) pl.drain_ms = (int)n;
    else if (strcmp(a, "--var-rows") == 0) pl.var_rows = (int)n;
    else if (strcmp(a, "--bad-crc-step") == 0) pl.bad_crc_step = n;
    else if (strcmp(a, "--no-seek") == 0) pl.no_seek = (int)n;
    else {
      fprintf(stderr, "shml-fakeprod: unknown flag %s\n", a);
      return 2;
    }
  }
  if (pl.job == NULL || pl.ranks <= pl.rank || pl.batches == 0) {
    fprintf(stderr, "usage: shml-fakeprod --job J [--rank R] [--dir D] ... (see fake_produce.c)\n");
    return 2;
  }
  struct fp_result res;
  int rc = fp_run(&pl, &res);
  printf("rank=%" PRIu32 " batches=%" PRIu64 " rows=%" PRIu64 " crc32=%08x\n", pl.rank,
         res.batches, res.rows, res.crc);
  return rc;
}
