/* Status names, this thread's last error message, and the version. */
#include <stdio.h>

#include "internal.h"

/* One message per thread, so concurrent callers never see each other's errors. */
static _Thread_local char last_error[512];

lnl_status lnl_set_error(lnl_status status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return status;
}

const char *lnl_last_error(void) { return last_error; }

const char *lnl_status_string(lnl_status status) {
    switch (status) {
    case LNL_STATUS_SUCCESS: return "success";
    case LNL_STATUS_INVALID_ARGUMENT: return "invalid argument";
    case LNL_STATUS_UNSUPPORTED: return "unsupported";
    case LNL_STATUS_OUT_OF_MEMORY: return "out of memory";
    case LNL_STATUS_WORKSPACE_TOO_SMALL: return "workspace too small";
    case LNL_STATUS_DEVICE_ERROR: return "device error";
    }
    return "unknown status";
}

void lnl_version(int *major, int *minor, int *patch) {
    if (major) *major = LNL_VERSION_MAJOR;
    if (minor) *minor = LNL_VERSION_MINOR;
    if (patch) *patch = LNL_VERSION_PATCH;
}
