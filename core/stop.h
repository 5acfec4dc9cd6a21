/* stop.h: turning SIGINT and SIGTERM into a flag that loops check, so that
 * every process stops at a clean point and leaves its files readable. */
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
