/* simcpu.c: the simulator's cores. Every piece of work a process does (a
 * worker's minibatch and its messages' work, a shard's handling of a
 * message, an evaluation, a worker's start-up) is a job of its owner,
 * which does one job at a time; a message in an I/O thread's hands is a
 * job of its own, done in one turn. With [sim] cores = C > 0 the jobs
 * share C cores: a job waits, first come first served, for a free one
 * (an idle core takes [sim] wakeup to start it), and keeps it until it is
 * done or, with [sim] timeslice, for at most that long while others wait
 * (then it goes to the back of the line), as a kernel's scheduler runs
 * short steps whole and slices a long evaluation among them. With cores =
 * 0 every owner has a core of its own. */
#include <math.h>

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

/* who's turn on a core, from now, or from when an idle core has woken
 * (`waking`): the whole job, or a slice of it while others wait; a
 * message's turn is its whole work (in `back`). */
static void s_turn(sim *s, sim_event who, double waking)
{
    const sim_spec *spec = &s->e->sim;
    double now = s->now + waking;
    if (who.io) {
        who.t = now + who.back;
        who.kind = EV_CPU;
        sim_schedule(s, who);
        return;
    }
    sim_job *j = s_job(s, &who);
    double end;
    if (j->left < 0) {   /* a minibatch: drawn as it starts, after any pause */
        sim_worker *sw = &s->workers[who.worker];
        double start = sim_after_pauses(spec, who.worker, fmax(now, sw->compute_start));
        double compute = sim_compute_time(spec, who.worker, &sw->compute_rng);
        end = start + compute;
        j->left = end - now;
    } else {
        end = now + j->left;
    }
    j->whole = !(spec->cores > 0 && spec->timeslice > 0 && j->left > spec->timeslice);
    if (!j->whole) {
        end = now + spec->timeslice;
    }
    who.t = end;
    who.kind = EV_CPU;
    who.tag = j->seq;
    sim_schedule(s, who);
}

/* A core has come free: to the first live job in line, or idle. */
static void s_next(sim *s)
{
    while (s->core_count > 0) {
        sim_event next = s->core_queue[s->core_head++];
        if (--s->core_count == 0) {
            s->core_head = 0;
        }
        if (s_current(s, &next, next.tag)) {
            s_turn(s, next, 0);   /* the core passes on, awake; cores_busy is unchanged */
            return;
        }
    }
    s->cores_busy--;
}

static int s_wait(sim *s, sim_event who)
{
    if (!who.io) {   /* a message keeps its own tag */
        who.tag = s_job(s, &who)->seq;
    }
    if (sim_queue_add(&s->core_queue, &s->core_count, &s->core_cap, &s->core_head, who) < 0) {
        s->failed = true;
        return error_set(s->err, ERROR_RUNTIME, "sim: out of memory");
    }
    return 0;
}

int sim_cpu_io(sim *s, sim_event e, double work)
{
    e.back = work;
    if (s->e->sim.cores > 0 && s->cores_busy == s->e->sim.cores) {
        return s_wait(s, e);
    }
    s->cores_busy++;
    s_turn(s, e, s->e->sim.cores > 0 ? s->e->sim.wakeup : 0);
    return 0;
}

int sim_cpu_run(sim *s, sim_event who, double work)
{
    sim_job *j = s_job(s, &who);
    j->left = work;
    j->seq++;
    long cores = s->e->sim.cores;
    if (cores > 0 && s->cores_busy == cores) {
        return s_wait(s, who);
    }
    s->cores_busy++;
    s_turn(s, who, cores > 0 ? s->e->sim.wakeup : 0);   /* an idle core wakes first */
    return 0;
}

bool sim_cpu_turn_ended(sim *s, const sim_event *e)
{
    if (e->io) {
        s_next(s);
        return true;
    }
    if (!s_current(s, e, e->tag)) {
        s_next(s);   /* a job its owner's failure ended: only its core is left to free */
        return false;
    }
    sim_job *j = s_job(s, e);
    if (j->whole) {
        j->left = 0;
        s_next(s);
        return true;
    }
    j->left -= s->e->sim.timeslice;
    if (s->core_count == 0) {   /* nobody waits: it goes on */
        s_turn(s, *e, 0);
        return false;
    }
    sim_event who = *e;
    if (s_wait(s, who) == 0) {
        s_next(s);
    }
    return false;
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
