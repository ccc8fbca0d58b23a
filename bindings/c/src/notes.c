/*
 * notes.c - the ring's words for people (PROTOCOL.md "Stop reasons and stall notes"):
 * why the producer stopped, why this rank has no batch, and the trainer's "done".
 *
 * The texts are written by the producer; they are copied out bounded by their field and
 * NUL-terminated here, whatever bytes the field holds.
 */
#include <string.h>

#include "internal.h"

/* Copy the NUL-terminated text of field (n bytes) into buf of size bytes. */
static void copy_text(const volatile char *field, size_t n, char *buf, size_t size) {
  if (buf == NULL || size == 0) return;
  size_t i = 0;
  for (; i + 1 < size && i < n; i++) {
    char ch = field[i];
    if (ch == '\0') break;
    buf[i] = ch;
  }
  buf[i] = '\0';
}

SHML_API int shml_done(shml_consumer *c) {
  if (c == NULL) return SHML_EINVAL;
  __atomic_store_n(&c->hdr->cons_done, 1, __ATOMIC_SEQ_CST); /* [DONE] */
  /* The producer may be asleep on a full ring. */
  __atomic_fetch_add(&c->hdr->tail_bell, 1, __ATOMIC_SEQ_CST);
  shml__futex_wake(&c->hdr->tail_bell);
  return SHML_OK;
}

SHML_API int shml_stop_reason(const shml_consumer *c, int *kind, char *buf, size_t size) {
  if (c == NULL || kind == NULL || (buf == NULL && size != 0)) return SHML_EINVAL;
  const struct shml__header *h = c->hdr;
  if (size != 0) buf[0] = '\0';
  uint32_t state = __atomic_load_n(&h->state, __ATOMIC_ACQUIRE); /* [STATE] */
  if (state == SHML__STOPPED) {
    uint32_t k = __atomic_load_n(&h->stop_kind, __ATOMIC_RELAXED); /* before [STATE] */
    *kind = k <= SHML_STOP_ERROR ? (int)k : SHML_STOP_ERROR;
    copy_text(h->stop_text, sizeof h->stop_text, buf, size);
    return SHML_OK;
  }
  *kind = SHML_STOP_NONE;
  if (state == SHML__FINISHED) return SHML_OK;
  int err = 0;
  int alive = shml__producer_alive(c->fd, &err);
  if (alive < 0) return alive;
  if (!alive) *kind = SHML_STOP_DIED;
  return SHML_OK;
}

SHML_API int shml_stall_reason(const shml_consumer *c, char *buf, size_t size) {
  if (c == NULL || buf == NULL || size == 0) return SHML_EINVAL;
  const struct shml__header *h = c->hdr;
  for (int tries = 0; tries < 100; tries++) {
    uint64_t s1 = __atomic_load_n(&h->stall_seq, __ATOMIC_ACQUIRE); /* [NOTE] */
    if (s1 % 2 != 0) continue; /* being rewritten */
    copy_text(h->stall_text, sizeof h->stall_text, buf, size);
    __atomic_thread_fence(__ATOMIC_ACQUIRE); /* the copy above happens before the re-load */
    if (__atomic_load_n(&h->stall_seq, __ATOMIC_RELAXED) == s1) return SHML_OK;
  }
  buf[0] = '\0'; /* rewritten all the while: say nothing rather than a torn text */
  return SHML_OK;
}
