/*
 * test_layout - the C structures agree with ring/testdata/layout.golden, line by line.
 * Usage: test_layout PATH/TO/layout.golden
 */
#include <stdio.h>
#include <string.h>

#include "../src/layout.h"
#include "check.h"

struct field {
  const char *st;
  const char *name;
  size_t off;
  size_t size;
};

#define F(kind, type, f) {kind, #f, offsetof(struct type, f), sizeof(((struct type *)0)->f)}
#define SZ(kind, type) {kind, "SIZE", 0, sizeof(struct type)}

static const struct field *lookup(const struct field *fs, size_t n, const char *st,
                                  const char *name) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(fs[i].st, st) == 0 && strcmp(fs[i].name, name) == 0) return &fs[i];
  return NULL;
}

int main(int argc, char **argv) {
  struct check t = {0, 0};
  const struct field fs[] = {
      F("header", shml__header, magic), F("header", shml__header, version),
      F("header", shml__header, header_size), F("header", shml__header, total_size),
      F("header", shml__header, slot_size), F("header", shml__header, slot_count),
      F("header", shml__header, schema_count), F("header", shml__header, schema_offset),
      F("header", shml__header, rank), F("header", shml__header, ranks),
      F("header", shml__header, producer_pid), F("header", shml__header, producer_start),
      F("header", shml__header, batch_capacity), F("header", shml__header, slot_header_size),
      F("header", shml__header, config_hash), F("header", shml__header, job),
      F("header", shml__header, head), F("header", shml__header, head_bell),
      F("header", shml__header, state), F("header", shml__header, seek_ack),
      F("header", shml__header, prod_wait_ns), F("header", shml__header, rows_out),
      F("header", shml__header, pub_epoch), F("header", shml__header, pub_step),
      F("header", shml__header, tail), F("header", shml__header, tail_bell),
      F("header", shml__header, consumer_pid), F("header", shml__header, cons_wait_ns),
      F("header", shml__header, cons_rows), F("header", shml__header, cons_epoch),
      F("header", shml__header, cons_step), F("header", shml__header, cons_waiting),
      F("header", shml__header, prod_waiting), F("header", shml__header, seek_seq),
      F("header", shml__header, seek_epoch), F("header", shml__header, seek_step),
      F("header", shml__header, seek_base), F("header", shml__header, nodes),
      F("header", shml__header, node_rank), F("header", shml__header, elastic_limit),
      F("header", shml__header, steps_per_epoch), F("header", shml__header, epochs),
      F("header", shml__header, global_batches), F("header", shml__header, cons_done),
      F("header", shml__header, stop_kind), F("header", shml__header, stall_seq),
      F("header", shml__header, plan_version),
      F("header", shml__header, stall_text), F("header", shml__header, stop_text),
      SZ("header", shml__header),
      F("tensor", shml__tensor_entry, name), F("tensor", shml__tensor_entry, dtype),
      F("tensor", shml__tensor_entry, ndim), F("tensor", shml__tensor_entry, shape),
      F("tensor", shml__tensor_entry, offset), F("tensor", shml__tensor_entry, row_bytes),
      F("tensor", shml__tensor_entry, nbytes), SZ("tensor", shml__tensor_entry),
      F("slot", shml__slot_header, seq), F("slot", shml__slot_header, epoch),
      F("slot", shml__slot_header, step), F("slot", shml__slot_header, rows),
      F("slot", shml__slot_header, flags), F("slot", shml__slot_header, gen),
      F("slot", shml__slot_header, base),
      SZ("slot", shml__slot_header),
  };
  size_t nf = sizeof fs / sizeof fs[0];
  int used[sizeof fs / sizeof fs[0]] = {0};

  if (!CHECK(&t, argc == 2, "usage: test_layout layout.golden")) return 1;
  FILE *f = fopen(argv[1], "r");
  if (!CHECK(&t, f != NULL, "open %s", argv[1])) return 1;
  char line[256];
  int lines = 0;
  while (fgets(line, sizeof line, f) != NULL) {
    char st[64], name[64];
    size_t off, size;
    if (line[0] == '#' || line[0] == '\n') continue;
    if (sscanf(line, "%63s %63s %zu %zu", st, name, &off, &size) != 4) {
      CHECK(&t, 0, "golden line parses: %s", line);
      continue;
    }
    lines++;
    const struct field *x = lookup(fs, nf, st, name);
    if (!CHECK(&t, x != NULL, "%s.%s has a C counterpart", st, name)) continue;
    used[x - fs] = 1;
    if (strcmp(name, "SIZE") == 0)
      CHECK(&t, x->size == size, "sizeof %s == %zu (C: %zu)", st, size, x->size);
    else
      CHECK(&t, x->off == off && x->size == size, "%s.%s at %zu size %zu (C: %zu size %zu)", st,
            name, off, size, x->off, x->size);
  }
  fclose(f);
  CHECK(&t, lines > 0, "golden file has entries (%d)", lines);
  size_t missing = 0;
  for (size_t i = 0; i < nf; i++)
    if (!used[i]) {
      printf("#   %s.%s is not in the golden file\n", fs[i].st, fs[i].name);
      missing++;
    }
  CHECK(&t, missing == 0, "every C field is in the golden file (%zu missing)", missing);
  return check_done(&t, "test_layout");
}
