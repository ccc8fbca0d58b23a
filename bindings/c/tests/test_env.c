/* test_env - $SHMLOADER_SPIN_US: a whole number of microseconds in 0..1000000 sets the
 * spin before a sleep; anything else keeps the default (100 us), as in Go's ring.SpinFor. */
#include <stdlib.h>

#include "../src/internal.h"
#include "check.h"

static int64_t spin_with(const char *v) {
  if (v == NULL)
    unsetenv("SHMLOADER_SPIN_US");
  else
    setenv("SHMLOADER_SPIN_US", v, 1);
  return shml__spin_ns();
}

int main(void) {
  struct check t = {0, 0};
  CHECK(&t, spin_with(NULL) == 100000, "unset: 100 us");
  CHECK(&t, spin_with("") == 100000, "empty: 100 us");
  CHECK(&t, spin_with("0") == 0, "0: no spin");
  CHECK(&t, spin_with("250") == 250000, "250: 250 us");
  CHECK(&t, spin_with("1000000") == 1000000000, "1000000: 1 s, the most");
  const char *bad[] = {"-1", "1000001", "12x", "x", " 5", "99999999999999999999"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    CHECK(&t, spin_with(bad[i]) == 100000, "%s: ignored, 100 us", bad[i]);
  return check_done(&t, "test_env");
}
