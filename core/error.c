/* error.c: filling a struct error. */
#include "core/error.h"

#include <stdarg.h>
#include <stdio.h>

int error_set(error *err, int status, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->status = status;
    }
    return -1;
}
