#include "table_buf.h"

#include "cudart_shim.h"
#include "testutil.h"

tbuf tb_new(size_t bytes, int on_device) {
    tbuf b;
    b.bytes = bytes;
    b.on_device = on_device;
    b.host = tu_galloc(bytes);
    if (on_device) {
        b.ptr = cu_malloc(bytes + TU_GUARD);
        cu_upload(b.ptr + bytes, tu_guard_pattern(), TU_GUARD);
    } else {
        b.ptr = b.host;
    }
    return b;
}

void tb_free(tbuf *b) {
    if (b->on_device) cu_free(b->ptr);
    tu_gfree(b->host);
    b->ptr = b->host = NULL;
}

void tb_push(tbuf *b) {
    if (b->on_device) cu_upload(b->ptr, b->host, b->bytes);
}

void tb_pull(tbuf *b) {
    if (b->on_device) cu_download(b->host, b->ptr, b->bytes + TU_GUARD);
}

void tb_pull_guard(tbuf *b) {
    if (b->on_device) cu_download(b->host + b->bytes, b->ptr + b->bytes, TU_GUARD);
}

int tb_guard_ok(const tbuf *b) { return tu_guard_ok(b->host, b->bytes); }
