/* simfiber.h: the simulator's coroutine switch.
 *
 * A switch saves the callee-saved registers (and the floating-point control
 * words) on the current stack, stores its stack pointer, and loads the
 * other's: no system call. glibc's swapcontext also saves and restores the
 * signal mask with a system call each time, and with it took half of the
 * simulator's time at 1,024 workers (bench/RESULTS.md). On x86-64 the
 * switch is a few instructions of assembly; elsewhere, or built with
 * -DASGD_SIM_UCONTEXT (where shadow stacks forbid a switch by `ret`), it is
 * ucontext's.
 *
 * AddressSanitizer's fiber annotations stay with the caller (simworker.c),
 * around each switch. */
#ifndef ASGD_SIMFIBER_H
#define ASGD_SIMFIBER_H

#include <stddef.h>

#if defined(__x86_64__) && !defined(ASGD_SIM_UCONTEXT)
#define SIM_FIBER_ASM 1
#else
#include <ucontext.h>
#endif

typedef struct sim_fiber {
#ifdef SIM_FIBER_ASM
    void *sp;                /* its saved stack pointer, while switched away */
#else
    ucontext_t ctx;
    void (*entry)(void *);   /* what its first switch runs (makecontext passes ints) */
    void *arg;
#endif
} sim_fiber;

/* Prepares f to run entry(arg) on [stack, stack + size) from its first
 * switch. entry must never return: it ends by switching away for good. */
void sim_fiber_make(sim_fiber *f, void *stack, size_t size, void (*entry)(void *), void *arg);

/* Saves the running code into from and resumes to. */
void sim_fiber_switch(sim_fiber *from, sim_fiber *to);

#endif
