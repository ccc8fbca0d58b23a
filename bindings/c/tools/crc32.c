/* crc32.c - see crc32.h. */
#include "crc32.h"

void crc32_init(struct crc32_table *tab) {
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    tab->t[i] = c;
  }
}

uint32_t crc32_update(const struct crc32_table *tab, uint32_t crc, const void *data, size_t n) {
  const uint8_t *p = data;
  uint32_t c = ~crc;
  for (size_t i = 0; i < n; i++) c = tab->t[(c ^ p[i]) & 0xff] ^ (c >> 8);
  return ~c;
}
