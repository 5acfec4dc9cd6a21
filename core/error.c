/* error.c: filling a struct error. */
#include "core/error.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* The length of the valid UTF-8 sequence (2 to 4 bytes) at s, or 0. */
static int s_utf8_length(const unsigned char *s)
{
    int len = s[0] > 0xf4 ? 0 : s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0;
    for (int i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) {
            return 0;
        }
    }
    return len;
}

/* Copies raw into out (n bytes) with every byte that would not print
 * escaped as \xNN: control characters and bytes outside valid UTF-8. */
static void s_printable(char *out, size_t n, const char *raw)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    for (const unsigned char *s = (const unsigned char *)raw; *s && o + 1 < n;) {
        int len = *s >= 0x80 ? s_utf8_length(s) : (*s >= 0x20 && *s != 0x7f);
        if (len > 0 && o + (size_t)len < n) {
            for (int i = 0; i < len; i++) {
                out[o++] = (char)*s++;
            }
            continue;
        }
        if (len > 0 || o + 4 >= n) {
            break;   /* no room for the rest */
        }
        out[o++] = '\\';
        out[o++] = 'x';
        out[o++] = hex[*s >> 4];
        out[o++] = hex[*s & 15];
        s++;
    }
    out[o] = '\0';
}

int error_set(error *err, int status, const char *fmt, ...)
{
    if (err) {
        char raw[sizeof err->msg];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(raw, sizeof raw, fmt, ap);
        va_end(ap);
        s_printable(err->msg, sizeof err->msg, raw);
        err->status = status;
    }
    return -1;
}
