/* c_check.h: the C API tests' one check (c_api_edges.c, c_api_paths.c, c_api_recipients.c): on a
 * false condition, one line naming the line, what was checked and gc_last_error(), and one more
 * failure counted; the test exits 1 when `failures` is not 0. */
#ifndef GPUCRYPT_TESTS_C_CHECK_H
#define GPUCRYPT_TESTS_C_CHECK_H
#include <stdio.h>

#include "gpucrypt/gpucrypt.h"

static int failures = 0;

#define CHECK(cond, ...)                                                              \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      fprintf(stderr, "FAIL line %d: ", __LINE__);                                    \
      fprintf(stderr, __VA_ARGS__);                                                   \
      fprintf(stderr, " [%s] (last error: %s)\n", #cond, gc_last_error());            \
      ++failures;                                                                     \
    }                                                                                 \
  } while (0)

#endif
