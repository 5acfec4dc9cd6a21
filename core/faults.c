/* faults.c: injected message faults (faults.h). */
#include "core/faults.h"

#include <math.h>

#include "core/run.h"

bool faults_on(const fault_spec *s)
{
    return s->latency > 0 || s->jitter > 0 || s->drop > 0 || s->duplicate > 0;
}

void faults_init(faults *f, const fault_spec *s, uint64_t seed, uint64_t stream)
{
    *f = (faults){.spec = *s, .r = rng_derive(seed, RNG_FAULTS, stream)};
}

int faults_copies(faults *f)
{
    if (f->spec.drop > 0 && rng_uniform(&f->r) < f->spec.drop) {
        f->dropped++;
        return 0;
    }
    if (f->spec.duplicate > 0 && rng_uniform(&f->r) < f->spec.duplicate) {
        f->duplicated++;
        return 2;
    }
    return 1;
}

void faults_hold(faults *f)
{
    double t = f->spec.latency;
    if (f->spec.jitter > 0) {
        t = fmax(0, t + f->spec.jitter * rng_normal(&f->r));
    }
    if (t > 0) {
        run_sleep(t);
    }
}
