/*
 * next.c - taking, releasing and seeking (PROTOCOL.md "Publishing and reading", "Seek").
 *
 * The consumer reads slots in ring order at its private cursor. Slots in [tail, cursor)
 * are either held by the caller or released and waiting for every older slot to be
 * released too: tail only ever moves over a leading run of released slots.
 */
#include <string.h>

#include "internal.h"

#define SKIPPED 1 /* take(): slot of an older seek generation, released unseen */

static uint8_t *slot_at(const shml_consumer *c, uint64_t seq) {
  return c->base + c->g.header_size + (size_t)(seq % c->g.slot_count) * c->g.slot_size;
}

/* Wake the producer if it may be sleeping on a full ring. */
static void ring_tail_bell(shml_consumer *c) {
  /* Sequentially consistent after the store of tail or seek_seq, pairing with the
   * producer's store of prod_waiting and re-load of tail. */
  if (__atomic_load_n(&c->hdr->prod_waiting, __ATOMIC_SEQ_CST) == 0) return;
  __atomic_fetch_add(&c->hdr->tail_bell, 1, __ATOMIC_SEQ_CST);
  shml__futex_wake(&c->hdr->tail_bell);
}

void shml__advance_tail(shml_consumer *c) {
  uint64_t t = c->tail;
  while (t < c->cursor && !c->held[t % c->g.slot_count]) t++;
  if (t == c->tail) return;
  c->tail = t;
  /* Release (and sequentially consistent: see ring_tail_bell). */
  __atomic_store_n(&c->hdr->tail, t, __ATOMIC_SEQ_CST); /* [REL] */
  ring_tail_bell(c);
}

void shml__release_all(shml_consumer *c) {
  memset(c->held, 0, c->g.slot_count);
  c->nheld = 0;
  shml__advance_tail(c);
}

static void fill(shml_consumer *c, const struct shml__slot_header *s, shml_batch *out) {
  uint32_t idx = (uint32_t)(s->seq % c->g.slot_count);
  uint8_t *slot = slot_at(c, s->seq);
  shml_tensor *ts = &c->tensors[(size_t)idx * c->g.schema_count];
  for (uint32_t i = 0; i < c->g.schema_count; i++) {
    const struct shml__tensor_geom *tg = &c->g.tensors[i];
    shml_tensor *t = &ts[i];
    memset(t, 0, sizeof *t);
    t->name = tg->name;
    t->dtype = tg->dtype;
    t->ndim = (int32_t)tg->ndim + 1;
    t->shape[0] = s->rows;
    for (uint32_t d = 0; d < tg->ndim; d++) t->shape[d + 1] = (int64_t)tg->shape[d];
    t->data = slot + tg->offset;
    t->nbytes = (size_t)s->rows * tg->row_bytes;
  }
  out->seq = s->seq;
  out->epoch = s->epoch;
  out->step = s->step;
  out->epoch_base = s->base;
  out->rows = s->rows;
  out->ntensors = c->g.schema_count;
  out->tensors = ts;
}

/* Where the stream ends: SHML_EEOS, or SHML_ESEEK if the producer finished before it
 * applied our last seek (PROTOCOL.md "Seek"). A resume must never look like a finished
 * stream. The acquire pairs with the producer's store of seek_ack, which precedes both
 * its publish of the END_OF_STREAM marker [PUB] and its store of state 2 [STATE]. */
static int end_of_stream(const shml_consumer *c) {
  if (__atomic_load_n(&c->hdr->seek_ack, __ATOMIC_ACQUIRE) < c->gen) return SHML_ESEEK;
  return SHML_EEOS;
}

/* Read the slot at the cursor (published: cursor < head). */
static int take(shml_consumer *c, shml_batch *out) {
  struct shml__slot_header s;
  memcpy(&s, slot_at(c, c->cursor), sizeof s);
  uint32_t markers = s.flags & (SHML__END_OF_EPOCH | SHML__END_OF_STREAM);
  if (s.seq != c->cursor || s.rows > c->g.batch_capacity || s.flags != markers ||
      (markers != 0 && s.rows != 0) || markers == (SHML__END_OF_EPOCH | SHML__END_OF_STREAM) ||
      s.base > c->g.elastic_limit)
    return SHML_ECORRUPT;
  c->cursor++;
  if (s.gen != c->gen || markers != 0) {
    shml__advance_tail(c); /* released unseen: held[] is already 0 */
    if (s.gen != c->gen) return SKIPPED;
    /* A marker: report its position and epoch, with no rows and no tensors. */
    memset(out, 0, sizeof *out);
    out->seq = s.seq;
    out->epoch = s.epoch;
    out->step = s.step;
    if (markers == SHML__END_OF_EPOCH) return SHML_EEPOCH;
    c->eos = 1;
    return end_of_stream(c);
  }
  c->held[s.seq % c->g.slot_count] = 1;
  c->nheld++;
  fill(c, &s, out);
  c->stats.batches++;
  c->stats.rows += s.rows;
  /* Observer counters (PROTOCOL.md): atomic for status readers, ordered by nothing. */
  __atomic_fetch_add(&c->hdr->cons_rows, (uint64_t)s.rows, __ATOMIC_RELAXED);
  __atomic_store_n(&c->hdr->cons_epoch, s.epoch, __ATOMIC_RELAXED);
  __atomic_store_n(&c->hdr->cons_step, s.step + 1, __ATOMIC_RELAXED);
  return SHML_OK;
}

/* Add the time since waited_from (0: no wait) to the wait counters; returns rc. */
static int waited(shml_consumer *c, int64_t waited_from, int rc) {
  if (waited_from == 0) return rc;
  int64_t ns = shml__now_ns() - waited_from;
  if (ns <= 0) return rc;
  c->stats.wait_ns += (uint64_t)ns;
  __atomic_fetch_add(&c->hdr->cons_wait_ns, (uint64_t)ns, __ATOMIC_RELAXED);
  return rc;
}

SHML_API int shml_next(shml_consumer *c, int timeout_ms, shml_batch *out) {
  if (c == NULL || out == NULL) return SHML_EINVAL;
  if (c->nheld >= c->g.slot_count - 1) return SHML_EHELD;
  if (c->eos) return end_of_stream(c);
  struct shml__header *h = c->hdr;
  int64_t deadline = shml__deadline(timeout_ms);
  int64_t waited_from = 0; /* when this call first found nothing to take */
  for (;;) {
    /* The oldest held slot is slot_count behind the cursor: the ring is full of slots
     * we have not handed back, so the producer cannot publish until that one is. */
    if (c->cursor - c->tail >= c->g.slot_count) return waited(c, waited_from, SHML_EHELD);
    uint64_t head = __atomic_load_n(&h->head, __ATOMIC_ACQUIRE); /* [PUB] acquire */
    if (head < c->cursor || head - c->tail > c->g.slot_count)
      return waited(c, waited_from, SHML_ECORRUPT);
    if (c->cursor < head) {
      /* A skipped END_OF_STREAM marker of an older generation ends nothing here: the
       * producer never answered our seek, and the state check below says so. */
      int rc = take(c, out);
      if (rc == SKIPPED) continue;
      return waited(c, waited_from, rc);
    }
    uint32_t state = __atomic_load_n(&h->state, __ATOMIC_ACQUIRE); /* [STATE] acquire */
    if (state >= SHML__FINISHED) {
      /* Everything published before the state store is visible now: drain it first. */
      if (__atomic_load_n(&h->head, __ATOMIC_ACQUIRE) != c->cursor) continue; /* [PUB] */
      if (state == SHML__FINISHED) return waited(c, waited_from, end_of_stream(c));
      if (state == SHML__STOPPED) return waited(c, waited_from, SHML_EGONE);
      return waited(c, waited_from, SHML_ECORRUPT);
    }
    if (waited_from == 0) waited_from = shml__now_ns();
    int rc = shml__wait_head(c, deadline);
    if (rc != SHML_OK) return waited(c, waited_from, rc);
  }
}

SHML_API int shml_release(shml_consumer *c, const shml_batch *b) {
  if (c == NULL || b == NULL) return SHML_EINVAL;
  uint64_t seq = b->seq;
  uint32_t idx = (uint32_t)(seq % c->g.slot_count);
  if (seq < c->tail || seq >= c->cursor || !c->held[idx]) return SHML_EINVAL;
  c->held[idx] = 0;
  c->nheld--;
  shml__advance_tail(c);
  return SHML_OK;
}

SHML_API int shml_seek(shml_consumer *c, uint64_t epoch, uint64_t step) {
  return shml_seek_base(c, epoch, step, 0);
}

SHML_API int shml_seek_base(shml_consumer *c, uint64_t epoch, uint64_t step, uint64_t base) {
  if (c == NULL) return SHML_EINVAL;
  int rc = shml__check_position(c, epoch, step, base); /* beyond the run: nothing written */
  if (rc != SHML_OK) return rc;
  struct shml__header *h = c->hdr;
  /* A held slot would pin tail; on a full ring of slots published before the request
   * the producer could then never publish the answer. */
  shml__release_all(c);
  /* We are the only writer of seek_seq, and attach left it even. */
  uint64_t s = __atomic_load_n(&h->seek_seq, __ATOMIC_RELAXED) & ~(uint64_t)1; /* [SEEK] */
  __atomic_store_n(&h->seek_seq, s + 1, __ATOMIC_SEQ_CST); /* [SEEK] odd: writing */
  __atomic_store_n(&h->seek_epoch, epoch, __ATOMIC_SEQ_CST); /* [SEEK] */
  __atomic_store_n(&h->seek_step, step, __ATOMIC_SEQ_CST);   /* [SEEK] */
  __atomic_store_n(&h->seek_base, base, __ATOMIC_SEQ_CST);   /* [SEEK] */
  __atomic_store_n(&h->seek_seq, s + 2, __ATOMIC_SEQ_CST); /* [SEEK] even: complete */
  c->gen = (s + 2) / 2;
  /* A producer may still answer after its END_OF_STREAM marker (PROTOCOL.md, "Seek"):
   * wait for it. One that has finished leaves seek_ack below c->gen, and next returns
   * SHML_ESEEK. The producer may be waiting on a full ring. */
  c->eos = 0;
  __atomic_fetch_add(&h->tail_bell, 1, __ATOMIC_SEQ_CST);
  shml__futex_wake(&h->tail_bell);
  return SHML_OK;
}
