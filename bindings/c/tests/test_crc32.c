/* test_crc32 - the tools' CRC-32 is the IEEE one of zlib.crc32 and Go's hash/crc32. */
#include <string.h>

#include "../tools/crc32.h"
#include "check.h"

int main(void) {
  struct check t = {0, 0};
  struct crc32_table tab;
  crc32_init(&tab);
  const char *s = "123456789";
  CHECK(&t, crc32_update(&tab, 0, s, 9) == 0xCBF43926u, "crc32(\"123456789\") == cbf43926");
  CHECK(&t, crc32_update(&tab, 0, "", 0) == 0, "crc32 of nothing is 0");
  CHECK(&t, crc32_update(&tab, 0, "The quick brown fox jumps over the lazy dog", 43) == 0x414FA339u,
        "crc32 of the fox sentence == 414fa339");
  uint32_t part = crc32_update(&tab, crc32_update(&tab, 0, s, 4), s + 4, 5);
  CHECK(&t, part == 0xCBF43926u, "crc32 continued over a split equals crc32 of the whole");
  return check_done(&t, "test_crc32");
}
