/* faults.c: injected message faults (faults.h). */
#include "core/faults.h"

#include <math.h>


bool faults_on(const fault_spec *s)
{
    return s->latency > 0 || s->jitter > 0 || s->drop > 0 || s->duplicate > 0;
}

void faults_init(faults *f, const fault_spec *s, uint64_t seed, uint64_t stream)
{
    *f = (faults){.spec = *s, .r = rng_derive(seed, RNG_FAULTS, stream)};
}

/* One draw decides: [0, drop) lost, [drop, drop + duplicate) sent twice,
 * so that each rate is the share of all messages the config says (a
 * second draw for the messages not lost made 1% duplication 0.95% under
 * 5% loss, and 50% 25% under 50%). */
int faults_copies(faults *f)
{
    if (f->spec.drop <= 0 && f->spec.duplicate <= 0) {
        return 1;
    }
    double u = rng_uniform(&f->r);
    if (u < f->spec.drop) {
        f->dropped++;
        return 0;
    }
    if (u < f->spec.drop + f->spec.duplicate) {
        f->duplicated++;
        return 2;
    }
    return 1;
}

double faults_delay(faults *f)
{
    double t = f->spec.latency;
    if (f->spec.jitter > 0) {
        t = fmax(0, t + f->spec.jitter * rng_normal(&f->r));
    }
    return t;
}
