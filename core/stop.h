/* stop.h: turning SIGINT, SIGTERM and SIGHUP into a flag that loops check,
 * so that every process stops at a clean point and leaves its files
 * readable. A SIGHUP ignored when stop_install runs (nohup) stays ignored. */
#ifndef ASGD_STOP_H
#define ASGD_STOP_H

#include <stdbool.h>

/* Installs the handlers (and clears the flag). Calls nest: one within
 * another installed keeps the handlers and the flag as they are (a
 * process that installs them first thing loses no signal that comes
 * while it starts: as PID 1 in a container, one without a handler was
 * ignored). */
void stop_install(void);
/* The signal that asked to stop, or 0. */
int stop_requested(void);
/* Undoes one stop_install: the last restores the handlers it replaced. */
void stop_uninstall(void);

#endif
