/* gnuplot.h: a figure's gnuplot script and a real gnuplot to draw it.
 *
 * A script is a prologue of gnuplot variables that asgd plot writes (the
 * terminal, the output, the data files' stem, the groups and their titles,
 * each kind's labels) followed by templates: plots/templates/style.gp,
 * then the kind's own NAME.gp. The templates are gnuplot text, embedded in
 * the binary when it is built, so the script beside a figure redraws it
 * with gnuplot alone. */
#ifndef ASGD_GNUPLOT_H
#define ASGD_GNUPLOT_H

#include <stdbool.h>
#include <stdio.h>

#include "core/error.h"

typedef struct gnuplot_template {
    const char *name;         /* the file's name without .gp */
    const char *text;
} gnuplot_template;

/* Every template, ending with {NULL, NULL} (generated at build time). */
extern const gnuplot_template gnuplot_templates[];

/* The template NAME's text; NULL when there is none. */
const char *gnuplot_template_text(const char *name);

/* A gnuplot string literal of text (quotes and backslashes escaped) into
 * out. */
void gnuplot_quote(char *out, size_t n, const char *text);

/* Whether a gnuplot is on the PATH. */
bool gnuplot_available(void);

/* Runs gnuplot on script (a file name in dir) from dir. */
int gnuplot_draw(const char *dir, const char *script, error *err);

#endif
