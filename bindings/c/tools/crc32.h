/* crc32.h - CRC-32 (IEEE 802.3, as zlib.crc32 and Go's crc32.ChecksumIEEE), table-driven. */
#ifndef SHML_TOOLS_CRC32_H
#define SHML_TOOLS_CRC32_H

#include <stddef.h>
#include <stdint.h>

struct crc32_table {
  uint32_t t[256];
};

void crc32_init(struct crc32_table *tab);
/* Continue crc (0 to start) over n bytes, like zlib.crc32(data, crc). */
uint32_t crc32_update(const struct crc32_table *tab, uint32_t crc, const void *data, size_t n);

#endif
