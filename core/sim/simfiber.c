/* simfiber.c: the coroutine switch (simfiber.h). */
#include "core/sim/simfiber.h"

#include <stdint.h>

#ifdef SIM_FIBER_ASM

/* sim_fiber_switch(from = rdi, to = rsi): push the System V callee-saved
 * registers and the SSE and x87 control words, swap stack pointers, pop
 * the other's and return into it. sim_fiber_start is where a new fiber's
 * first switch returns: entry (r12) called with arg (r13); it never
 * returns. */
__asm__(".text\n"
        ".globl sim_fiber_switch\n"
        ".type sim_fiber_switch, @function\n"
        "sim_fiber_switch:\n"
        "    pushq %rbp\n"
        "    pushq %rbx\n"
        "    pushq %r12\n"
        "    pushq %r13\n"
        "    pushq %r14\n"
        "    pushq %r15\n"
        "    subq $8, %rsp\n"
        "    stmxcsr (%rsp)\n"
        "    fnstcw 4(%rsp)\n"
        "    movq %rsp, (%rdi)\n"
        "    movq (%rsi), %rsp\n"
        "    ldmxcsr (%rsp)\n"
        "    fldcw 4(%rsp)\n"
        "    addq $8, %rsp\n"
        "    popq %r15\n"
        "    popq %r14\n"
        "    popq %r13\n"
        "    popq %r12\n"
        "    popq %rbx\n"
        "    popq %rbp\n"
        "    ret\n"
        ".size sim_fiber_switch, .-sim_fiber_switch\n"
        ".type sim_fiber_start, @function\n"
        "sim_fiber_start:\n"
        "    movq %r13, %rdi\n"
        "    callq *%r12\n"
        "    ud2\n"
        ".size sim_fiber_start, .-sim_fiber_start\n");

void sim_fiber_start(void);

void sim_fiber_make(sim_fiber *f, void *stack, size_t size, void (*entry)(void *), void *arg)
{
    /* from the top, 16-byte aligned: sim_fiber_start as the return
     * address (so that entry is called on an aligned stack), rbp, rbx,
     * r12 = entry, r13 = arg, r14, r15, and the control words */
    uintptr_t top = ((uintptr_t)stack + size) & ~(uintptr_t)15;
    uint64_t *sp = (uint64_t *)top;
    uint32_t mxcsr;
    uint16_t fpucw;
    __asm__ volatile("stmxcsr %0\n\tfnstcw %1" : "=m"(mxcsr), "=m"(fpucw));
    *--sp = (uint64_t)(uintptr_t)sim_fiber_start;
    *--sp = 0;                             /* rbp */
    *--sp = 0;                             /* rbx */
    *--sp = (uint64_t)(uintptr_t)entry;    /* r12 */
    *--sp = (uint64_t)(uintptr_t)arg;      /* r13 */
    *--sp = 0;                             /* r14 */
    *--sp = 0;                             /* r15 */
    *--sp = (uint64_t)mxcsr | (uint64_t)fpucw << 32;
    f->sp = sp;
}

#else

/* makecontext passes ints: the fiber itself travels as two, and its entry
 * and argument in it (the stack stays the caller's, whole). */
static void s_start(int hi, int lo)
{
    sim_fiber *f = (sim_fiber *)(uintptr_t)((uint64_t)(uint32_t)hi << 32 | (uint32_t)lo);
    f->entry(f->arg);
}

void sim_fiber_make(sim_fiber *f, void *stack, size_t size, void (*entry)(void *), void *arg)
{
    f->entry = entry;
    f->arg = arg;
    getcontext(&f->ctx);
    f->ctx.uc_stack.ss_sp = stack;
    f->ctx.uc_stack.ss_size = size;
    f->ctx.uc_link = NULL;
    uint64_t p = (uint64_t)(uintptr_t)f;
    makecontext(&f->ctx, (void (*)(void))s_start, 2, (int)(uint32_t)(p >> 32), (int)(uint32_t)p);
}

void sim_fiber_switch(sim_fiber *from, sim_fiber *to)
{
    swapcontext(&from->ctx, &to->ctx);
}

#endif
