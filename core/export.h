/* export.h: the trained model kept in the run folder, readable without
 * asgd:
 *   model.npy   the centre's parameters: NumPy's format 1.0, a header
 *               padded to 128 bytes, then little-endian float32 values,
 *               the flat vector in asgd's order;
 *   model.json  what each stretch of that vector is: per layer its name,
 *               kind, shapes, offsets into the vector and the formula it
 *               computes (a dense layer: y = x W + b, W row-major [in,
 *               out]), and the input's normalisation. With the two files
 *               and NumPy alone the network computes the same outputs (the
 *               README has the format; tests/eval_npy.py does it).
 * asgd eval reads model.npy back (export_read). */
#ifndef ASGD_EXPORT_H
#define ASGD_EXPORT_H

#include <stddef.h>

#include "core/data.h"
#include "core/error.h"
#include "core/model.h"

/* Writes DIR/model.npy and DIR/model.json for model m with the parameters
 * params (host memory, m->nparams), trained on data normalised as d
 * records; each file written whole or not at all. */
int export_model(const model *m, const float *params, const dataset *d, const char *dir,
                 error *err);

/* Reads DIR/model.npy into params, which holds n values: a float32 vector
 * of exactly n is required. */
int export_read(const char *dir, float *params, size_t n, error *err);

#endif
