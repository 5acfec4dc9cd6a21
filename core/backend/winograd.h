/* winograd.h: the CPU's Winograd F(4 x 4, k x k) transforms, the
 * winograd_ operations of backend.h (whose contract they follow).
 *
 * The matrices come from Toom-Cook at the points 0, 1, -1, 2, -2, 1/2,
 * -1/2 and infinity for k = 5 (a = 8; 0, 1, -1, 2, -2 and infinity for
 * k = 3, a = 6): exact in binary but for B's fractions, so that a
 * convolution differs from im2col's by float rounding, larger than
 * im2col's own (measured in test_backend against double loops). */
#ifndef ASGD_WINOGRAD_H
#define ASGD_WINOGRAD_H

#include "core/backend/backend.h"

void winograd_filter(backend *b, float *u, const float *w, int c, int oc, int k);
void winograd_filter_grad(backend *b, float *dw, const float *du, int c, int oc, int k);
void winograd_input(backend *b, float *v, const float *in, int n, int h, int w, int c,
                    int k, int pad);
void winograd_input_grad(backend *b, float *din, const float *dv, int n, int h, int w,
                         int c, int k, int pad);
void winograd_output(backend *b, float *out, const float *m, int n, int ho, int wo, int oc,
                     int k);
void winograd_output_grad(backend *b, float *dm, const float *dout, int n, int ho, int wo,
                          int oc, int k);

#endif
