/* handover.h: telling ThreadSanitizer of a hand-over between threads that
 * it cannot see, because it goes through ZeroMQ (built without it): the
 * side that hands data over marks it HANDED_OVER after its last write, the
 * side that takes it marks it TAKEN_OVER before its first read. Outside
 * the TSan build (ASGD_TSAN) both are nothing. */
#ifndef ASGD_HANDOVER_H
#define ASGD_HANDOVER_H

#ifdef ASGD_TSAN
#include <sanitizer/tsan_interface.h>
#define HANDED_OVER(a) __tsan_release(a)
#define TAKEN_OVER(a) __tsan_acquire(a)
#else
#define HANDED_OVER(a) ((void)(a))
#define TAKEN_OVER(a) ((void)(a))
#endif

#endif
