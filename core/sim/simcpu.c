/* simcpu.c: the simulator's cores. Every piece of work a process does (a
 * worker's minibatch and its messages' work, a shard's handling of a
 * message, an evaluation, a worker's start-up) is a job of its owner,
 * which does one job at a time; a message in an I/O thread's hands is a
 * job of its own, done in one turn. With [sim] cores = C > 0 the jobs
 * share C cores: a job takes the core its owner last ran on if that is
 * idle, else another idle one (an idle core takes [sim] wakeup to start
 * it), else it waits, first come first served within its line; it keeps
 * its core until it is done or, with [sim] timeslice, for at most that
 * long while others wait (then it goes to the back of its line), as a
 * kernel's scheduler runs short steps whole and slices a long evaluation
 * among them. With [sim] placement = core (the default) an owner that has
 * run waits in the line of the core it last ran on, as the kernel queues
 * a woken task on its CPU's runqueue when no CPU is idle: a core serves
 * its own line and the shared one (owners that never ran, and messages),
 * and takes from another core's line only when both are empty (the
 * kernel's balancing as a CPU goes idle); with placement = shared an
 * owner waits in the shared line once cold. With [sim] migration, an
 * owner that ran on a core less than that long ago is cache-hot there: it
 * waits for that core even while another is idle, and an idle core takes
 * it only once it is cold (a core that frees, or the balancing at the next
 * tick), as the kernel's sched_migration_cost keeps a task on its CPU.
 * A worker's minibatch that would start within its [sim] pause asks for a
 * core only when the pause ends (EV_RESUME): the pause holds none; one
 * under way when a pause starts gives its core back then, and goes on
 * once the pause ends (with cores = 0 it just stops for the pause). A
 * finished turn's effects (its messages, its owner's next job, the jobs
 * it makes ready) are placed while its core is still taken, and only then
 * does the core go to the next in line, as the kernel wakes a task while
 * its waker still runs: a job so made ready takes another idle core, or
 * waits (a hot owner in this core's line, which the core then serves),
 * where it once found this core idle. With cores = 0 every owner has a
 * core of its own. */
#include <math.h>
#include <stdlib.h>

#include "core/sim/simstate.h"
#include "core/simtime.h"

sim_event sim_who_worker(const sim_worker *sw)
{
    return (sim_event){.worker = sw->w.id, .shard = -1, .incarnation = sw->incarnation};
}

sim_event sim_who_shard(int k)
{
    return (sim_event){.worker = -1, .shard = k};
}

sim_event sim_who_evaluator(void)
{
    return (sim_event){.worker = -1, .shard = -1};
}

/* The job state of who's owner (not of a message: see s_turn). */
static sim_job *s_job(sim *s, const sim_event *who)
{
    return who->worker >= 0 ? &s->workers[who->worker].job
           : who->shard >= 0 ? &s->shards[who->shard].job
                             : &s->eval_job;
}

/* Whether who's job is the one `seq` numbers: not a job of an earlier
 * life of a worker, nor one a failure ended; a message's always is. */
static bool s_current(sim *s, const sim_event *who, uint64_t seq)
{
    if (who->io) {
        return true;
    }
    if (s_job(s, who)->seq != seq) {
        return false;
    }
    return who->worker < 0 || sim_worker_alive(s, who->worker, who->incarnation);
}

static void s_next(sim *s, long c);

/* who's turn on core c (-1: cores = 0, each owner on a core of its own),
 * from now, or from when an idle core has woken (`waking`): the whole job,
 * or a slice of it while others wait; a message's turn is its whole work
 * (in `back`). */
static void s_turn(sim *s, sim_event who, long c, double waking)
{
    const sim_spec *spec = &s->e->sim;
    double now = s->now + waking;
    who.core = (int)c;
    who.kind = EV_CPU;
    if (who.io) {
        who.t = now + who.back;
        sim_schedule(s, who);
        return;
    }
    sim_job *j = s_job(s, &who);
    if (j->minibatch && c >= 0) {   /* a paused worker holds no shared core: it asks again
                                     * when the pause ends (its core idled through it) */
        double start = sim_after_pauses(spec, who.worker,
                                        j->left < 0 ? fmax(now, s->workers[who.worker].compute_start)
                                                    : now);
        if (start > now) {
            who.kind = EV_RESUME;
            who.t = start;
            who.tag = j->seq;
            sim_schedule(s, who);
            s_next(s, c);
            return;
        }
    }
    j->core = (int)c + 1;
    double end, computes = now;   /* from when it computes */
    if (j->left < 0) {   /* a minibatch: drawn as it starts, after any pause */
        sim_worker *sw = &s->workers[who.worker];
        double start = sim_after_pauses(spec, who.worker, fmax(now, sw->compute_start));
        computes = start;
        double compute = sim_compute_time(spec, who.worker, &sw->compute_rng);
        end = start + compute;
        /* the pauses it runs into stop it: with a core of its own, it goes
         * on after each (it once computed straight through them) */
        for (double from; c < 0 && (from = sim_next_pause(spec, who.worker, start)) < end;) {
            double after = sim_after_pauses(spec, who.worker, from);
            end += after - from;
            start = after;
        }
        j->left = end - now;
    } else {
        end = now + j->left;
    }
    j->whole = !(spec->cores > 0 && spec->timeslice > 0 && j->left > spec->timeslice);
    if (!j->whole) {
        end = now + spec->timeslice;
    }
    /* on a shared core its turn ends where a pause starts: it gives the
     * core back, and asks again when the pause ends (above) */
    double pause = j->minibatch && c >= 0 ? sim_next_pause(spec, who.worker, computes)
                                          : INFINITY;
    if (pause < end) {
        end = pause;
        j->whole = false;
    }
    j->turn = end - now;
    who.t = end;
    who.tag = j->seq;
    sim_schedule(s, who);
}

/* When who's owner goes cold on the core of its last turn: [sim]
 * migration after that turn ended. */
static double s_cold_at(sim *s, const sim_event *who)
{
    const sim_job *j = s_job(s, who);
    return j->ran_until + s->e->sim.migration;
}

/* Whether who's owner is still cache-hot on its last core: it had a turn
 * there less than [sim] migration ago (a message's I/O turn never is). */
static bool s_hot(sim *s, const sim_event *who)
{
    if (who->io || s->e->sim.migration <= 0 || s_job(s, who)->core == 0) {
        return false;
    }
    return s->now < s_cold_at(s, who);
}

static int s_line_add(sim *s, sim_line *l, sim_event e)
{
    if (sim_queue_add(&l->buf, &l->count, &l->cap, &l->head, e) < 0) {
        s->failed = true;
        return error_set(s->err, ERROR_RUNTIME, "sim: out of memory");
    }
    return 0;
}

static sim_event s_line_pop(sim *s, sim_line *l)
{
    sim_event e = sim_queue_pop(l->buf, &l->count, &l->head);
    if (l != &s->shared) {
        s->waiting_own--;
    }
    return e;
}

/* Line l's first live job (stale ones, of a job its owner's failure
 * ended, are dropped), or NULL. */
static const sim_event *s_front(sim *s, sim_line *l)
{
    while (l->count > 0 && !s_current(s, &l->buf[l->head], l->buf[l->head].tag)) {
        s_line_pop(s, l);
    }
    return l->count > 0 ? &l->buf[l->head] : NULL;
}

/* Core c's own line has a first job: a balancing (EV_BALANCE) at the
 * first tick (timeslice) at or after it goes cold, unless one is due
 * already. */
static int s_balance_later(sim *s, long c)
{
    const sim_event *first = s_front(s, &s->cores[c].line);
    if (!first || s->cores[c].balancing) {
        return 0;
    }
    const sim_spec *spec = &s->e->sim;
    double cold = s_cold_at(s, first);
    double t = spec->timeslice > 0 ? ceil(cold / spec->timeslice) * spec->timeslice : cold;
    s->cores[c].balancing = true;
    return sim_schedule(s, (sim_event){.t = fmax(fmax(t, cold), s->now), .kind = EV_BALANCE,
                                       .worker = -1, .shard = -1, .core = (int)c});
}

/* Whether who waits in its last core's line: it has run on a core, and
 * placement = core puts it there or it is still hot there. */
static bool s_waits_on_its_core(sim *s, const sim_event *who)
{
    if (who->io || s_job(s, who)->core == 0) {
        return false;
    }
    return s->e->sim.placement == SIM_PLACE_CORE || s_hot(s, who);
}

/* who waits for a core: in its last core's own line (s_waits_on_its_core),
 * else in the line every core serves; its t is when it joined. */
static int s_wait(sim *s, sim_event who)
{
    if (!who.io) {   /* a message keeps its own tag */
        who.tag = s_job(s, &who)->seq;
    }
    who.t = s->now;
    if (!s_waits_on_its_core(s, &who)) {
        return s_line_add(s, &s->shared, who);
    }
    long c = s_job(s, &who)->core - 1;
    s->waiting_own++;
    if (s_line_add(s, &s->cores[c].line, who) < 0) {
        return -1;
    }
    return s_balance_later(s, c);
}

static void s_idle_push(sim *s, long c)
{
    s->cores[c].busy = false;
    s->idle_at[c] = s->nidle;
    s->idle[s->nidle++] = c;
}

static void s_idle_take(sim *s, long c)
{
    long at = s->idle_at[c], last = s->idle[--s->nidle];
    s->idle[at] = last;
    s->idle_at[last] = at;
    s->idle_at[c] = -1;
    s->cores[c].busy = true;
}

enum { LINE_NONE = -2, LINE_SHARED = -1 };

/* Core k's own line, or the shared one (LINE_SHARED). */
static sim_line *s_line(sim *s, long k)
{
    return k == LINE_SHARED ? &s->shared : &s->cores[k].line;
}

/* The line core c serves next: of its own line, the shared one and
 * another core's whose first job has gone cold, the one whose first job
 * has waited longest (ties: in that order), where with placement = core
 * another core's line counts only when the first two are empty: a core's
 * index, LINE_SHARED, or LINE_NONE when no live job waits. */
static long s_pick(sim *s, long c)
{
    long cores = s->e->sim.cores, best = LINE_NONE;
    double since = 0;
    const sim_event *first = s_front(s, &s->cores[c].line);
    if (first) {
        best = c;
        since = first->t;
    }
    first = s_front(s, &s->shared);
    if (first && (best == LINE_NONE || first->t < since)) {
        best = LINE_SHARED;
        since = first->t;
    }
    if (best != LINE_NONE && s->e->sim.placement == SIM_PLACE_CORE) {
        return best;
    }
    for (long k = 1; s->waiting_own > s->cores[c].line.count && k < cores; k++) {
        long other = (c + k) % cores;
        first = s_front(s, &s->cores[other].line);
        if (first && s_hot(s, first)) {   /* a front s_front uncovered: balanced when cold */
            s_balance_later(s, other);
        } else if (first && (best == LINE_NONE || first->t < since)) {
            best = other;
            since = first->t;
        }
    }
    return best;
}

/* Whether a job waits that core c runs before it goes on with the turn
 * that has just ended: with placement = core, one in its own line or the
 * shared one (another core's line is taken only by a core with nothing
 * else to run); with shared, any that s_pick finds. */
static bool s_someone_waits(sim *s, long c)
{
    long k = s_pick(s, c);
    if (s->e->sim.placement == SIM_PLACE_CORE) {
        return k == c || k == LINE_SHARED;
    }
    return k != LINE_NONE;
}

/* Core c takes the first job of line k (live: s_pick or s_front found
 * it); a core's line left with a first job gets its balancing. */
static void s_take(sim *s, long k, long c, double waking)
{
    sim_event next = s_line_pop(s, s_line(s, k));
    s_turn(s, next, c, waking);
    if (k != LINE_SHARED) {
        s_balance_later(s, k);
    }
}

/* Core c's turn has ended: it passes on, awake, to the first job of the
 * line s_pick chooses, or idles. */
static void s_next(sim *s, long c)
{
    long k = s_pick(s, c);
    if (k == LINE_NONE) {
        s_idle_push(s, c);
        return;
    }
    s_take(s, k, c, 0);
}

void sim_cpu_balance(sim *s, const sim_event *e)
{
    long k = e->core;
    s->cores[k].balancing = false;
    const sim_event *first;
    while (s->nidle > 0 && (first = s_front(s, &s->cores[k].line)) && !s_hot(s, first)) {
        long c = s->idle[s->nidle - 1];
        s_idle_take(s, c);
        s_take(s, k, c, s->e->sim.wakeup);
    }
    first = s_front(s, &s->cores[k].line);
    if (first && s_hot(s, first)) {   /* cold with no core idle: a freeing core takes it */
        s_balance_later(s, k);
    }
}

/* who's job has come: to the core its owner last ran on if that is idle;
 * while its owner is hot on that busy core, in that core's line; else to
 * the idle core that went idle last (each wakes first), or in line. */
static int s_place(sim *s, sim_event who)
{
    if (!s->cores) {
        s_turn(s, who, -1, 0);
        return 0;
    }
    int last = who.io ? 0 : s_job(s, &who)->core;
    long c;
    if (last > 0 && !s->cores[last - 1].busy) {
        c = last - 1;
    } else if (s->nidle > 0 && !s_hot(s, &who)) {
        c = s->idle[s->nidle - 1];
    } else {
        return s_wait(s, who);
    }
    s_idle_take(s, c);
    s_turn(s, who, c, s->e->sim.wakeup);
    return 0;
}

void sim_cpu_resume(sim *s, const sim_event *e)
{
    if (s_current(s, e, e->tag)) {
        s_place(s, *e);
    }
}

int sim_cpu_init(sim *s)
{
    long cores = s->e->sim.cores;
    if (cores == 0) {
        return 0;
    }
    s->cores = calloc((size_t)cores, sizeof *s->cores);
    s->idle = malloc((size_t)cores * sizeof *s->idle);
    s->idle_at = malloc((size_t)cores * sizeof *s->idle_at);
    if (!s->cores || !s->idle || !s->idle_at) {
        return error_set(s->err, ERROR_RUNTIME, "sim: out of memory");
    }
    for (long c = cores - 1; c >= 0; c--) {   /* core 0 is taken first */
        s_idle_push(s, c);
    }
    return 0;
}

void sim_cpu_free(sim *s)
{
    for (long c = 0; s->cores && c < s->e->sim.cores; c++) {
        free(s->cores[c].line.buf);
    }
    free(s->cores);
    free(s->idle);
    free(s->idle_at);
    free(s->shared.buf);
}

/* The I/O thread whose turn e is: the sender's as it leaves, the
 * receiver's as it arrives (a worker's to a shard and back). */
static sim_io_thread *s_io_thread(sim *s, const sim_event *e)
{
    bool to_shard = e->msg_kind == EV_ARRIVE_PULL || e->msg_kind == EV_ARRIVE_PUSH;
    bool worker_side = (e->io == SIM_IO_LEAVING) == to_shard;
    return worker_side ? &s->workers[e->worker].io : &s->shards[e->shard].io;
}

int sim_cpu_io(sim *s, sim_event e, double work)
{
    e.back = work;
    sim_io_thread *t = s_io_thread(s, &e);
    if (t->busy) {   /* one turn at a time: it once ran on two cores at once */
        if (sim_queue_add(&t->waiting.buf, &t->waiting.count, &t->waiting.cap,
                          &t->waiting.head, e) < 0) {
            s->failed = true;
            return error_set(s->err, ERROR_RUNTIME, "sim: out of memory");
        }
        return 0;
    }
    t->busy = true;
    return s_place(s, e);
}

/* The I/O thread whose turn e has just ended takes its next, if any. */
static void s_io_next(sim *s, const sim_event *e)
{
    sim_io_thread *t = s_io_thread(s, e);
    t->busy = false;
    if (t->waiting.count > 0) {
        sim_event next = sim_queue_pop(t->waiting.buf, &t->waiting.count, &t->waiting.head);
        t->busy = true;
        s_place(s, next);
    }
}

int sim_cpu_run(sim *s, sim_event who, double work)
{
    sim_job *j = s_job(s, &who);
    j->left = work;
    j->minibatch = work < 0;
    j->seq++;
    return s_place(s, who);
}

bool sim_cpu_turn_ended(sim *s, const sim_event *e)
{
    long c = e->core;
    if (e->io) {
        s->ending_core = c + 1;
        s_io_next(s, e);
        return true;
    }
    sim_job *j = s_job(s, e);
    if (!s_current(s, e, e->tag)) {
        if (c >= 0) {
            s_next(s, c);   /* a job its owner's failure ended: only its core is left to free */
        }
        return false;
    }
    j->ran_until = s->now;
    if (j->whole) {
        j->left = 0;
        s->ending_core = c + 1;
        return true;
    }
    j->left -= j->turn;
    if (!s_someone_waits(s, c)) {   /* it goes on (or, paused, gives the core back) */
        s_turn(s, *e, c, 0);
        return false;
    }
    if (s_wait(s, *e) == 0) {
        s_next(s, c);
    }
    return false;
}

void sim_cpu_release(sim *s)
{
    long c = s->ending_core - 1;
    s->ending_core = 0;
    if (c >= 0) {
        s_next(s, c);
    }
}

/* Whether messages pass through I/O threads that take turns on the
 * shared cores. */
static bool s_io(const sim *s)
{
    return s->e->sim.cores > 0 && s->e->sim.message_cpu > 0;
}

double sim_message_work(const sim *s)
{
    return s_io(s) ? s->e->sim.message_cpu / 2 : s->e->sim.message_cpu;
}

int sim_send(sim *s, sim_event e, double bytes)
{
    e.bytes = (uint64_t)bytes;
    if (!s_io(s)) {
        bool to_shard = e.kind == EV_ARRIVE_PULL || e.kind == EV_ARRIVE_PUSH;
        e.t = sim_arrival(s, e.worker, e.shard, to_shard, bytes);
        return sim_schedule(s, e);
    }
    e.msg_kind = e.kind;
    e.io = SIM_IO_LEAVING;
    return sim_cpu_io(s, e, s->e->sim.message_cpu / 2);
}

bool sim_io_done(sim *s, sim_event *e)
{
    if (e->io == SIM_IO_LEAVING) {   /* on the wire, to the receiver's I/O thread */
        sim_event m = *e;
        bool to_shard = m.msg_kind == EV_ARRIVE_PULL || m.msg_kind == EV_ARRIVE_PUSH;
        m.t = sim_arrival(s, m.worker, m.shard, to_shard, (double)m.bytes);
        m.kind = EV_IO_ARRIVE;
        m.io = SIM_IO_ARRIVING;
        sim_schedule(s, m);
        return false;
    }
    e->kind = e->msg_kind;
    e->io = 0;
    return true;
}
