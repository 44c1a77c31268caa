/*
 * Dropout (§5.4), alone and inside the residual connection and LayerNorm of a post-LN sublayer
 * (§3.1), forward and backward:
 *
 *   dropout(x, y, n, rate, seed)   y = x ⊙ m; its backward pass is the same call on dy
 *   addLayerNorm(x, r, gain, bias, y, n, d, eps, residual, rate, seed)
 *       z = x + r ⊙ m (z = x unless residual), y = (z − μ) · 1/√(σ² + ε) · gain + bias per row,
 *       σ² biased
 *   addLayerNormBackward(dy, x, r, gain, dx, dr, dgain, dbias, n, d, eps, residual, rate, seed)
 *       with x̂ = (z − μ)/√(σ² + ε) and g = dy ⊙ gain, per row:
 *       dz = (g − mean(g) − x̂ · mean(g ⊙ x̂)) / √(σ² + ε); dx = dz; dr = dz ⊙ m;
 *       dgain = Σ rows dy ⊙ x̂; dbias = Σ rows dy
 * where m = 1/(1 − rate) where element i's draw under `seed` is ≥ rate and 0 elsewhere (m = 1 when
 * rate is 0). The draws are counter-based, so a backward pass draws its forward pass's mask again,
 * and recomputes z, μ and σ² from its inputs instead of keeping them: a row is d values, so this
 * costs one more pass and keeps no [n, d] buffers alive between the passes.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "args.h"
#include "blas.h"

/* A seed's key: splitmix64's finaliser folded to 32 bits, so that nearby seeds get unrelated keys. */
static uint32_t dropout_key(uint64_t seed) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return (uint32_t)(z ^ (z >> 32));
}

/* Element i's draw in [0, 1): murmur3's 32-bit finaliser of i·φ + key, its top 24 bits. Two keys
   give the same sequence shifted by a distance that is near-uniform over 2^32, so two masks of
   2^18 elements (a [1024, 256] activation) overlap in ~1 in 16,000 places. Integer-only, so a loop
   of draws vectorises. */
static inline float dropout_draw(uint32_t key, uint32_t i) {
  uint32_t h = i * 0x9E3779B9u + key;
  h ^= h >> 16;
  h *= 0x85EBCA6Bu;
  h ^= h >> 13;
  h *= 0xC2B2AE35u;
  h ^= h >> 16;
  return (float)(h >> 8) * 0x1p-24f;
}

/* m[j] for elements start … start + n − 1: scale where the draw is ≥ rate, else 0. */
static void draw_mask(uint32_t key, uint32_t start, int64_t n, float rate, float scale, float *restrict m) {
  for (int64_t j = 0; j < n; j++) m[j] = dropout_draw(key, start + (uint32_t)j) >= rate ? scale : 0.0f;
}

typedef struct {
  const float *x, *r, *gain;
  int64_t d;
  float eps, rate, scale; /* scale = 1/(1 − rate), as tfjs's dropout divides by the keep probability */
  bool residual;
  uint32_t key;
  float *m; /* a row of the dropout mask (scratch), when residual and rate > 0 */
} norm_t;

/* Row i: the dropout mask's row (into p->m) and z (into z); returns 1/√(σ² + ε) with *mean_out = μ. */
static float row_z(const norm_t *p, int64_t i, float *restrict z, float *mean_out) {
  const float *xi = p->x + i * p->d, *ri = p->r + i * p->d;
  if (p->m) draw_mask(p->key, (uint32_t)(i * p->d), p->d, p->rate, p->scale, p->m);
  double total = 0;
  for (int64_t j = 0; j < p->d; j++) {
    z[j] = p->residual ? xi[j] + (p->m ? ri[j] * p->m[j] : ri[j]) : xi[j];
    total += z[j];
  }
  const float mean = (float)(total / (double)p->d);
  double dev = 0;
  for (int64_t j = 0; j < p->d; j++) dev += (double)((z[j] - mean) * (z[j] - mean));
  *mean_out = mean;
  return 1.0f / sqrtf((float)(dev / (double)p->d) + p->eps);
}

/* Reads the arguments both passes share: x, r, gain (at argv[0..2]) and n, d, eps, residual, rate, seed. */
static bool read_norm(args_t *a, napi_value *argv, const int at[6], norm_t *p, int64_t *n) {
  *n = count(a, argv[at[0]], "n");
  p->d = count(a, argv[at[1]], "d");
  p->eps = (float)number(a, argv[at[2]], "eps");
  p->residual = flag(a, argv[at[3]], "residual");
  p->rate = (float)number(a, argv[at[4]], "rate");
  const double seed = number(a, argv[at[5]], "seed");
  if (!a->failed && !(p->rate >= 0 && p->rate < 1)) fail(a, "rate must be in [0, 1)");
  p->key = dropout_key((uint64_t)(seed >= 0 ? seed : -seed));
  p->scale = 1.0f / (1.0f - p->rate);
  p->m = NULL;
  if (!a->failed && p->residual && p->rate > 0 && !(p->m = scratch((size_t)(p->d > 0 ? p->d : 1))))
    fail(a, "out of memory");
  const size_t size = (size_t)(*n * p->d);
  p->x = floats(a, argv[0], size, "x");
  p->r = floats(a, argv[1], p->residual ? size : 0, "r");
  p->gain = floats(a, argv[2], (size_t)p->d, "gain");
  return !a->failed;
}

napi_value native_add_layer_norm(napi_env env, napi_callback_info info) {
  args_t a = {env, "addLayerNorm", false};
  napi_value argv[11];
  if (!get_args(&a, info, argv, 11)) return NULL;
  norm_t p;
  int64_t n;
  if (!read_norm(&a, argv, (const int[]){5, 6, 7, 8, 9, 10}, &p, &n)) return NULL;
  const float *bias = floats(&a, argv[3], (size_t)p.d, "bias");
  float *y = floats(&a, argv[4], (size_t)(n * p.d), "y");
  if (a.failed || p.d == 0) return NULL;
  for (int64_t i = 0; i < n; i++) {
    float *restrict z = y + i * p.d, mean;
    const float inv = row_z(&p, i, z, &mean);
    for (int64_t j = 0; j < p.d; j++) z[j] = (z[j] - mean) * inv * p.gain[j] + bias[j];
  }
  return NULL;
}

napi_value native_add_layer_norm_backward(napi_env env, napi_callback_info info) {
  args_t a = {env, "addLayerNormBackward", false};
  napi_value argv[14];
  if (!get_args(&a, info, argv, 14)) return NULL;
  norm_t p;
  int64_t n;
  // dy comes first in the call; read_norm reads x, r, gain from argv[0..2], so shift by one.
  if (!read_norm(&a, argv + 1, (const int[]){7, 8, 9, 10, 11, 12}, &p, &n)) return NULL;
  const size_t size = (size_t)(n * p.d);
  const float *dy = floats(&a, argv[0], size, "dy");
  float *dx = floats(&a, argv[4], size, "dx"), *dr = floats(&a, argv[5], p.residual ? size : 0, "dr");
  float *dgain = floats(&a, argv[6], (size_t)p.d, "dgain"), *dbias = floats(&a, argv[7], (size_t)p.d, "dbias");
  if (a.failed) return NULL;
  memset(dgain, 0, (size_t)p.d * sizeof(float));
  memset(dbias, 0, (size_t)p.d * sizeof(float));
  for (int64_t i = 0; i < n; i++) {
    float *restrict xhat = dx + i * p.d, mean; // x̂ first, then overwritten by dz
    const float inv = row_z(&p, i, xhat, &mean);
    const float *dyi = dy + i * p.d;
    double g_sum = 0, gx_sum = 0;
    for (int64_t j = 0; j < p.d; j++) {
      xhat[j] = (xhat[j] - mean) * inv;
      const float g = dyi[j] * p.gain[j];
      g_sum += g;
      gx_sum += (double)(g * xhat[j]);
      dgain[j] += dyi[j] * xhat[j];
      dbias[j] += dyi[j];
    }
    const float g_mean = (float)(g_sum / (double)p.d), gx_mean = (float)(gx_sum / (double)p.d);
    for (int64_t j = 0; j < p.d; j++) {
      const float dz = (dyi[j] * p.gain[j] - g_mean - xhat[j] * gx_mean) * inv;
      xhat[j] = dz;
      if (p.residual) dr[i * p.d + j] = p.m ? dz * p.m[j] : dz;
    }
  }
  return NULL;
}

napi_value native_dropout(napi_env env, napi_callback_info info) {
  args_t a = {env, "dropout", false};
  napi_value argv[5];
  if (!get_args(&a, info, argv, 5)) return NULL;
  const int64_t n = count(&a, argv[2], "n");
  const float rate = (float)number(&a, argv[3], "rate");
  const double seed = number(&a, argv[4], "seed");
  if (!a.failed && !(rate >= 0 && rate < 1)) fail(&a, "rate must be in [0, 1)");
  const float *x = floats(&a, argv[0], (size_t)n, "x");
  float *y = floats(&a, argv[1], (size_t)n, "y");
  if (a.failed) return NULL;
  const uint32_t key = dropout_key((uint64_t)(seed >= 0 ? seed : -seed));
  const float scale = 1.0f / (1.0f - rate);
  for (int64_t i = 0; i < n; i++) y[i] = dropout_draw(key, (uint32_t)i) >= rate ? x[i] * scale : 0.0f;
  return NULL;
}
