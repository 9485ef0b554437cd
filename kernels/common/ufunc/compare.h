/* The scalar functions of the comparison operators eq, ne, lt, le, gt, ge (`Generic:
 * compare.<name>`, `ufunc_meta: comparison`): the inputs promoted to their common dtype and
 * compared in its compute type (integers as int64_t, exact beyond 2^53; float16 and bfloat16
 * as float), the result bool. NaN compares unequal to everything, so only ne is true for it. */
#ifndef TG_UFUNC_COMPARE_H
#define TG_UFUNC_COMPARE_H

#include <stdbool.h>
#include <stdint.h>

#include "tg_hd.h"

static inline TG_HD bool tg__pw_eq_f32(float a, float b) { return a == b; }
static inline TG_HD bool tg__pw_eq_f64(double a, double b) { return a == b; }
static inline TG_HD bool tg__pw_eq_i64(int64_t a, int64_t b) { return a == b; }
static inline TG_HD bool tg__pw_ne_f32(float a, float b) { return !(a == b); }
static inline TG_HD bool tg__pw_ne_f64(double a, double b) { return !(a == b); }
static inline TG_HD bool tg__pw_ne_i64(int64_t a, int64_t b) { return a != b; }
static inline TG_HD bool tg__pw_lt_f32(float a, float b) { return a < b; }
static inline TG_HD bool tg__pw_lt_f64(double a, double b) { return a < b; }
static inline TG_HD bool tg__pw_lt_i64(int64_t a, int64_t b) { return a < b; }
static inline TG_HD bool tg__pw_le_f32(float a, float b) { return a <= b; }
static inline TG_HD bool tg__pw_le_f64(double a, double b) { return a <= b; }
static inline TG_HD bool tg__pw_le_i64(int64_t a, int64_t b) { return a <= b; }
static inline TG_HD bool tg__pw_gt_f32(float a, float b) { return a > b; }
static inline TG_HD bool tg__pw_gt_f64(double a, double b) { return a > b; }
static inline TG_HD bool tg__pw_gt_i64(int64_t a, int64_t b) { return a > b; }
static inline TG_HD bool tg__pw_ge_f32(float a, float b) { return a >= b; }
static inline TG_HD bool tg__pw_ge_f64(double a, double b) { return a >= b; }
static inline TG_HD bool tg__pw_ge_i64(int64_t a, int64_t b) { return a >= b; }

#endif
