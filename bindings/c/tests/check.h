/*
 * check.h - the test harness: each check prints "ok - ..." or "not ok - ..."; the
 * Makefile counts those lines, and a test binary exits nonzero if any check failed.
 */
#ifndef SHML_TEST_CHECK_H
#define SHML_TEST_CHECK_H

#include <stdarg.h>
#include <stdio.h>

#include "../shmloader.h"

struct check {
  int pass;
  int fail;
};

__attribute__((format(printf, 5, 6))) static inline int
check_(struct check *t, int ok, const char *file, int line, const char *fmt, ...) {
  va_list ap;
  printf("%s - ", ok ? "ok" : "not ok");
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  printf("\n");
  if (!ok) printf("#   at %s:%d\n", file, line);
  fflush(stdout);
  if (ok)
    t->pass++;
  else
    t->fail++;
  return ok;
}

#define CHECK(t, cond, ...) check_((t), !!(cond), __FILE__, __LINE__, __VA_ARGS__)

/* An error-code check that names both codes when they differ. */
#define CHECK_RC(t, got, want, what)                                                       \
  do {                                                                                     \
    int got_ = (got), want_ = (want);                                                      \
    check_((t), got_ == want_, __FILE__, __LINE__, "%s: %s%s%s", (what), shml_errname(want_), \
           got_ == want_ ? "" : ", got ", got_ == want_ ? "" : shml_errname(got_));        \
  } while (0)

static inline int check_done(const struct check *t, const char *name) {
  printf("# %s: %d passed, %d failed\n", name, t->pass, t->fail);
  return t->fail == 0 ? 0 : 1;
}

#endif
