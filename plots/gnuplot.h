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

/* A gnuplot string literal of text into out, for a script: single-quoted
 * (a quote doubled), so that nothing in it is run or read as an escape (in
 * double quotes gnuplot runs what is between backquotes: a run's label
 * could run a command when its folder was plotted). A line break becomes a
 * space; a script breaks a line by joining strings ('a'."\n".'b'). */
void gnuplot_quote(char *out, size_t n, const char *text);
/* The same for a column of a data file, which gnuplot reads double-quoted
 * to the next '"' with no escapes (a '"' in text becomes a '\''; no
 * substitution is made there). */
void gnuplot_data_quote(char *out, size_t n, const char *text);

/* Whether a gnuplot is on the PATH. */
bool gnuplot_available(void);

/* Runs gnuplot on script (a file name in dir) from dir, its data files'
 * stem and its figure's file given (the script takes them where they are
 * not: the names it is kept under), so that a figure is drawn from and
 * into temporary files, renamed once whole. A stop asked meanwhile
 * (stop.h) stops gnuplot, and the draw fails. */
int gnuplot_draw(const char *dir, const char *script, const char *stem, const char *figure,
                 error *err);

#endif
