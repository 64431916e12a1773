/* Argument validation shared by every public entry point. Each function records a
 * message naming the offending argument (prefixed by the calling function's name)
 * and returns a status; nothing here touches a caller's buffer. */
#ifndef LNL_VALIDATE_H
#define LNL_VALIDATE_H

#include "internal.h"

/* Sizes, enums, eps and threads of p; also rejects products that overflow. */
lnl_status lnl_validate_problem(const char *fn, const lnl_problem *p);

/* lnl_validate_problem, then whether this build/device can serve p. */
lnl_status lnl_validate_and_check(const char *fn, const lnl_problem *p);

/* Element sizes: of the storage dtype, and of mean/rstd (the accumulation type). */
size_t lnl_acc_size(lnl_dtype dtype);

/* One caller buffer: its name as spelled in the header, address and extent. */
typedef struct lnl_buffer {
    const char *name;
    const void *ptr;
    size_t bytes;
    size_t align; /* required alignment (the element size) */
    int is_output;
} lnl_buffer;

/* Alignment of every non-NULL buffer, then no output overlapping any other buffer. */
lnl_status lnl_validate_buffers(const char *fn, const lnl_buffer *b, int n);

#endif
