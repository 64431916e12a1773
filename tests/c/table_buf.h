/*
 * Guarded test buffers that live on the host or on a CUDA device, with a host
 * mirror: the table test writes the mirror, pushes it, runs, pulls it back
 * (guard bytes included) and checks it on the host.
 */
#ifndef LNL_TABLE_BUF_H
#define LNL_TABLE_BUF_H

#include <stddef.h>

typedef struct {
    unsigned char *ptr;  /* what the library gets: host memory or a device pointer */
    unsigned char *host; /* mirror; equals ptr on the host; TU_GUARD bytes follow */
    size_t bytes;
    int on_device;
} tbuf;

tbuf tb_new(size_t bytes, int on_device);
void tb_free(tbuf *b);
void tb_push(tbuf *b); /* mirror -> device (data bytes only) */
void tb_pull(tbuf *b); /* device -> mirror (data and guard bytes) */
/* device -> mirror, the guard bytes alone: for scratch buffers (the workspace) whose
 * data bytes may be legitimately unwritten, which compute-sanitizer's initcheck
 * would flag if we copied them back. */
void tb_pull_guard(tbuf *b);
int tb_guard_ok(const tbuf *b); /* after tb_pull or tb_pull_guard */

#endif /* LNL_TABLE_BUF_H */
