/* backend.c: choosing and opening a backend by name. */
#include "core/backend/backend.h"

#include <stdlib.h>

static const char *const s_devices[] = {"cpu", "cuda", "auto", NULL};

int backend_spec_configure(backend_spec *s, config *c, error *err)
{
    if (config_get_enum(c, "backend", "device", "cpu", s_devices, &s->device, err) < 0 ||
        config_get_int(c, "backend", "threads", 1, 0, 1024, &s->threads, err) < 0) {
        return -1;
    }
    return 0;
}

backend *backend_new(const backend_spec *s, error *err)
{
    if (s->device == BACKEND_CUDA) {
        error_set(err, ERROR_USAGE, "backend.device = cuda: this build has no "
                  "CUDA backend; use device = cpu or auto");
        return NULL;
    }
    backend *b = calloc(1, sizeof *b);
    if (!b) {
        error_set(err, ERROR_RUNTIME, "backend: out of memory");
        return NULL;
    }
    b->threads = (int)s->threads;
    if (backend_cpu_open(b, err) < 0) {
        free(b);
        return NULL;
    }
    return b;
}

void backend_destroy(backend **pb)
{
    free(*pb);
    *pb = NULL;
}
