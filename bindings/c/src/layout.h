/*
 * layout.h - the shared-memory structures of ring/PROTOCOL.md, version 5.
 *
 * Every field is naturally aligned, so the structs need no packing attribute; the
 * asserts below pin every offset and size to the protocol (and tests/test_layout.c pins
 * them to ring/testdata/layout.golden). Fields marked atomic are only touched with
 * __atomic builtins; the tag in brackets names the publish/acquire pair.
 */
#ifndef SHML_LAYOUT_H
#define SHML_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#define SHML__MAGIC "SHMLRING"
#define SHML__HEADER_BYTES 2048u
#define SHML__SCHEMA_OFFSET 2048u
#define SHML__STALL_TEXT 512u
#define SHML__STOP_TEXT 1024u
#define SHML__TENSOR_BYTES 128u
#define SHML__SLOT_HEADER_BYTES 64u
#define SHML__PAGE 4096u
#define SHML__MAX_SCHEMA 256u
#define SHML__MIN_SLOTS 2u
#define SHML__MAX_SLOTS 65536u
#define SHML__NAME_BYTES 48u
#define SHML__JOB_BYTES 48u
#define SHML__JOB_MAX 40u
#define SHML__ROW_DIMS 4u

/* slot flags */
#define SHML__END_OF_EPOCH 1u
#define SHML__END_OF_STREAM 2u

/* header state */
#define SHML__RUNNING 1u
#define SHML__FINISHED 2u
#define SHML__STOPPED 3u

struct shml__header {
  /* line 0: identity, written before version and never changed after */
  char magic[8];              /* P "SHMLRING" */
  uint32_t version;           /* P atomic [HDR]: 5 stored last with release */
  uint32_t header_size;       /* P offset of slot 0 */
  uint64_t total_size;        /* P file size */
  uint64_t slot_size;         /* P bytes per slot */
  uint32_t slot_count;        /* P ring depth */
  uint32_t schema_count;      /* P tensors per slot */
  uint32_t schema_offset;     /* P always 2048 */
  uint32_t rank;              /* P */
  uint32_t ranks;             /* P */
  int32_t producer_pid;       /* P */
  uint64_t producer_start;    /* P */
  uint32_t batch_capacity;    /* P rows per slot */
  uint32_t slot_header_size;  /* P always 64 */
  uint64_t config_hash;       /* P opaque */
  char job[SHML__JOB_BYTES];  /* P NUL-padded */
  /* line 1: producer hot line */
  uint64_t head;              /* P atomic [PUB]: slots published */
  uint32_t head_bell;         /* P atomic futex word */
  uint32_t state;             /* P atomic [STATE] */
  uint64_t seek_ack;          /* P atomic, diagnostics */
  uint64_t prod_wait_ns;      /* P atomic counter: producer waited for a free slot */
  uint64_t rows_out;          /* P atomic counter: rows published */
  uint64_t pub_epoch;         /* P atomic counter: epoch of the last batch published */
  uint64_t pub_step;          /* P atomic counter: step after it */
  uint8_t pad1[72];
  /* line 2: consumer hot line */
  uint64_t tail;              /* C atomic [REL]: slots released */
  uint32_t tail_bell;         /* C atomic futex word */
  int32_t consumer_pid;       /* C atomic */
  uint64_t cons_wait_ns;      /* C atomic counter: consumers waited in next */
  uint64_t cons_rows;         /* C atomic counter: rows of the batches taken */
  uint64_t cons_epoch;        /* C atomic counter: epoch of the last batch taken */
  uint64_t cons_step;         /* C atomic counter: step after it */
  uint8_t pad2[80];
  /* line 3: control */
  uint32_t cons_waiting;      /* C atomic */
  uint32_t prod_waiting;      /* P atomic */
  uint64_t seek_seq;          /* C atomic [SEEK] seqlock */
  uint64_t seek_epoch;        /* C atomic, valid when seek_seq is even */
  uint64_t seek_step;         /* C atomic, valid when seek_seq is even */
  uint64_t seek_base;         /* C atomic, valid when seek_seq is even */
  uint32_t nodes;             /* P identity: hosts of the job, >= 1 */
  uint32_t node_rank;         /* P identity: < nodes */
  uint64_t elastic_limit;     /* P identity: latest global batch an epoch may start at */
  uint64_t steps_per_epoch;   /* P identity: this rank's steps of an epoch started at 0 */
  uint64_t epochs;            /* P identity: epochs the run serves, 0 endless */
  uint64_t global_batches;    /* P identity: global batches per epoch, whole job */
  uint32_t cons_done;         /* C atomic [DONE]: nonzero once a consumer said the job is done */
  uint32_t stop_kind;         /* P atomic: why the producer stopped, stored before [STATE] 3 */
  uint64_t stall_seq;         /* P atomic [NOTE] seqlock over stall_text: odd while rewritten */
  uint32_t plan_version;      /* P identity: the plan whose rules the positions follow; 0 none */
  uint8_t reserved[28];
  /* lines 4-15: words for people */
  char stall_text[SHML__STALL_TEXT]; /* P why this rank has no batch now; NUL-padded */
  char stop_text[SHML__STOP_TEXT];   /* P why the producer stopped; before [STATE] 3 */
};

struct shml__tensor_entry {
  char name[SHML__NAME_BYTES]; /* NUL-terminated, NUL-padded */
  uint32_t dtype;
  uint32_t ndim;               /* per-row dimensions, 0..4 */
  uint64_t shape[SHML__ROW_DIMS];
  uint64_t offset;             /* start in the slot */
  uint64_t row_bytes;
  uint64_t nbytes;             /* batch_capacity * row_bytes */
  uint8_t reserved[16];
};

struct shml__slot_header {
  uint64_t seq;
  uint64_t epoch;
  uint64_t step;
  uint32_t rows;
  uint32_t flags;
  uint64_t gen;
  uint64_t base;              /* global batch this batch's epoch started at */
  uint8_t reserved[16];
};

#define SHML__AT(type, field, off) \
  _Static_assert(offsetof(struct type, field) == (off), #type "." #field " offset")

SHML__AT(shml__header, magic, 0);
SHML__AT(shml__header, version, 8);
SHML__AT(shml__header, header_size, 12);
SHML__AT(shml__header, total_size, 16);
SHML__AT(shml__header, slot_size, 24);
SHML__AT(shml__header, slot_count, 32);
SHML__AT(shml__header, schema_count, 36);
SHML__AT(shml__header, schema_offset, 40);
SHML__AT(shml__header, rank, 44);
SHML__AT(shml__header, ranks, 48);
SHML__AT(shml__header, producer_pid, 52);
SHML__AT(shml__header, producer_start, 56);
SHML__AT(shml__header, batch_capacity, 64);
SHML__AT(shml__header, slot_header_size, 68);
SHML__AT(shml__header, config_hash, 72);
SHML__AT(shml__header, job, 80);
SHML__AT(shml__header, head, 128);
SHML__AT(shml__header, head_bell, 136);
SHML__AT(shml__header, state, 140);
SHML__AT(shml__header, seek_ack, 144);
SHML__AT(shml__header, prod_wait_ns, 152);
SHML__AT(shml__header, rows_out, 160);
SHML__AT(shml__header, pub_epoch, 168);
SHML__AT(shml__header, pub_step, 176);
SHML__AT(shml__header, tail, 256);
SHML__AT(shml__header, tail_bell, 264);
SHML__AT(shml__header, consumer_pid, 268);
SHML__AT(shml__header, cons_wait_ns, 272);
SHML__AT(shml__header, cons_rows, 280);
SHML__AT(shml__header, cons_epoch, 288);
SHML__AT(shml__header, cons_step, 296);
SHML__AT(shml__header, cons_waiting, 384);
SHML__AT(shml__header, prod_waiting, 388);
SHML__AT(shml__header, seek_seq, 392);
SHML__AT(shml__header, seek_epoch, 400);
SHML__AT(shml__header, seek_step, 408);
SHML__AT(shml__header, seek_base, 416);
SHML__AT(shml__header, nodes, 424);
SHML__AT(shml__header, node_rank, 428);
SHML__AT(shml__header, elastic_limit, 432);
SHML__AT(shml__header, steps_per_epoch, 440);
SHML__AT(shml__header, epochs, 448);
SHML__AT(shml__header, global_batches, 456);
SHML__AT(shml__header, cons_done, 464);
SHML__AT(shml__header, stop_kind, 468);
SHML__AT(shml__header, stall_seq, 472);
SHML__AT(shml__header, plan_version, 480);
SHML__AT(shml__header, reserved, 484);
SHML__AT(shml__header, stall_text, 512);
SHML__AT(shml__header, stop_text, 1024);
_Static_assert(sizeof(struct shml__header) == SHML__HEADER_BYTES, "header size");

SHML__AT(shml__tensor_entry, name, 0);
SHML__AT(shml__tensor_entry, dtype, 48);
SHML__AT(shml__tensor_entry, ndim, 52);
SHML__AT(shml__tensor_entry, shape, 56);
SHML__AT(shml__tensor_entry, offset, 88);
SHML__AT(shml__tensor_entry, row_bytes, 96);
SHML__AT(shml__tensor_entry, nbytes, 104);
SHML__AT(shml__tensor_entry, reserved, 112);
_Static_assert(sizeof(struct shml__tensor_entry) == SHML__TENSOR_BYTES, "tensor entry size");

SHML__AT(shml__slot_header, seq, 0);
SHML__AT(shml__slot_header, epoch, 8);
SHML__AT(shml__slot_header, step, 16);
SHML__AT(shml__slot_header, rows, 24);
SHML__AT(shml__slot_header, flags, 28);
SHML__AT(shml__slot_header, gen, 32);
SHML__AT(shml__slot_header, base, 40);
SHML__AT(shml__slot_header, reserved, 48);
_Static_assert(sizeof(struct shml__slot_header) == SHML__SLOT_HEADER_BYTES, "slot header size");

#undef SHML__AT

#endif /* SHML_LAYOUT_H */
