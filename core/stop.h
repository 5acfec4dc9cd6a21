/* stop.h: turning SIGINT, SIGTERM and SIGHUP into a flag that loops check,
 * so that every process stops at a clean point and leaves its files
 * readable. A SIGHUP ignored when stop_install runs (nohup) stays ignored. */
#ifndef ASGD_STOP_H
#define ASGD_STOP_H

#include <stdbool.h>

/* Installs the handlers (and clears the flag). */
void stop_install(void);
/* The signal that asked to stop, or 0. */
int stop_requested(void);
/* Restores the handlers stop_install replaced. */
void stop_uninstall(void);

#endif
