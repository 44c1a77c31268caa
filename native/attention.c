/*
 * Scaled dot-product attention over whole sequences (eq. 1, §3.2.2), forward and backward, reading
 * each head's columns of the projected rows in place: no [B, h, T, dk] copies.
 *
 *   attention(q, kv, mask, out, dims)
 *   attentionBackward(dout, q, kv, mask, dq, dkv, dims)
 *
 * dims = [B, T, S, h, dk, qWidth, qOffset, kvWidth, kOffset, vOffset, maskB, maskT, masked]:
 *   head j's query of row (b, t) is q[(b·T + t)·qWidth + qOffset + j·dk …], its key and value of
 *   row (b, s) kv[(b·S + s)·kvWidth + kOffset (vOffset) + j·dk …]; for self-attention q and kv are
 *   one [B, T, 3d] array (offsets 0, d, 2d), for cross-attention q [B, T, d] and kv [B, S, 2d];
 *   mask: additive, mask[b·maskB + t·maskT + s] (strides 0 broadcast), when masked;
 *   out [B, T, h·dk] (the heads concatenated, ready for W^O).
 * Per (b, j): P = softmax(Q·Kᵀ · 1/√dk + mask), out = P·V. The backward pass recomputes P (T·S per
 * head) and, with dO its rows of dout: dV = Pᵀ·dO, dP = dO·Vᵀ, dS = P ⊙ (dP − Σ_s dP ⊙ P),
 * dQ = dS·K/√dk, dK = dSᵀ·Q/√dk, written into the same places of dq and dkv (which may be the same
 * array, as q and kv may: the blocks do not overlap).
 */
#include <math.h>
#include <string.h>

#include "args.h"
#include "blas.h"
#include "vec.h"

typedef struct {
  int64_t b, t, s, h, dk, q_width, q_offset, kv_width, k_offset, v_offset, mask_b, mask_t;
  bool masked;
  float scale;
} dims_t;

static bool read_dims(args_t *a, napi_value v, dims_t *d) {
  napi_value item;
  int64_t x[13];
  uint32_t length = 0;
  static const char *names[] = {"B",       "T",       "S",       "h",     "dk",    "qWidth", "qOffset",
                                "kvWidth", "kOffset", "vOffset", "maskB", "maskT", "masked"};
  if (a->failed) return false;
  if (napi_get_array_length(a->env, v, &length) != napi_ok || length != 13) {
    fail(a, "dims must be an array of 13 counts");
    return false;
  }
  for (uint32_t i = 0; i < 13; i++) {
    if (napi_get_element(a->env, v, i, &item) != napi_ok) return false;
    x[i] = count(a, item, names[i]);
  }
  *d = (dims_t){x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8], x[9], x[10], x[11], x[12] != 0, 0};
  d->scale = d->dk > 0 ? 1.0f / sqrtf((float)d->dk) : 1.0f;
  const int64_t width = d->h * d->dk;
  if (!a->failed && (d->q_offset + width > d->q_width || d->k_offset + width > d->kv_width || d->v_offset + width > d->kv_width))
    fail(a, "a head's columns lie outside q or kv's rows");
  return !a->failed;
}

/* A row of scores → its softmax in place: e^(x − max) (exp4; exactly 0 where x is −∞) over their
   sum. A row all −∞ becomes NaN, as in tfjs. */
static void softmax_row(float *row, int64_t n) {
  const float m = row_max(row, n);
  if (m == -INFINITY) {
    for (int64_t s = 0; s < n; s++) row[s] = NAN;
    return;
  }
  v4f lanes = splat(0);
  int64_t s = 0;
  for (; s + 4 <= n; s += 4) {
    const v4f x = load4(row + s);
    const v4f e = (v4f)((v4i)exp4(x - m) & (x != splat(-INFINITY)));
    store4(row + s, e);
    lanes += e;
  }
  float total = hsum4(lanes);
  for (; s < n; s++) total += (row[s] = row[s] == -INFINITY ? 0.0f : expf(row[s] - m));
  for (s = 0; s < n; s++) row[s] /= total;
}

/* P [T, S] of batch row b, head j: scores, mask, softmax per row (tfjs's order: product · scale + mask). */
static void weights(const dims_t *d, const float *q, const float *kv, const float *mask, int64_t b, int64_t j, float *p) {
  const float *qh = q + b * d->t * d->q_width + d->q_offset + j * d->dk;
  const float *kh = kv + b * d->s * d->kv_width + d->k_offset + j * d->dk;
  gemm(false, true, (int)d->t, (int)d->s, (int)d->dk, d->scale, qh, (int)d->q_width, kh, (int)d->kv_width, 0.0f, p, (int)d->s);
  for (int64_t t = 0; t < d->t; t++) {
    float *row = p + t * d->s;
    if (d->masked) {
      const float *mrow = mask + b * d->mask_b + t * d->mask_t;
      for (int64_t s = 0; s < d->s; s++) row[s] += mrow[s];
    }
    softmax_row(row, d->s);
  }
}

/* Reads q, kv, mask, dims at argv[q_at…] and checks their sizes. */
static bool read_inputs(args_t *a, napi_value *argv, dims_t *d, const float **q, const float **kv, const float **mask) {
  if (!read_dims(a, argv[3], d)) return false;
  *q = floats(a, argv[0], (size_t)(d->b * d->t * d->q_width), "q");
  *kv = floats(a, argv[1], (size_t)(d->b * d->s * d->kv_width), "kv");
  const size_t mask_need = d->masked ? (size_t)((d->b - 1) * d->mask_b + (d->t - 1) * d->mask_t + d->s) : 0;
  *mask = floats(a, argv[2], d->b * d->t * d->s > 0 ? mask_need : 0, "mask");
  return !a->failed;
}

napi_value native_attention(napi_env env, napi_callback_info info) {
  args_t a = {env, "attention", false};
  napi_value argv[5], dims_arg;
  if (!get_args(&a, info, argv, 5)) return NULL;
  // Call order: q, kv, mask, out, dims; read_inputs expects dims at argv[3].
  dims_arg = argv[4];
  argv[4] = argv[3];
  argv[3] = dims_arg;
  dims_t d;
  const float *q, *kv, *mask;
  if (!read_inputs(&a, argv, &d, &q, &kv, &mask)) return NULL;
  const int64_t width = d.h * d.dk;
  float *out = floats(&a, argv[4], (size_t)(d.b * d.t * width), "out");
  float *p = a.failed ? NULL : scratch((size_t)(d.t * d.s > 0 ? d.t * d.s : 1));
  if (!a.failed && !p) fail(&a, "out of memory");
  if (a.failed || d.b * d.t * width == 0) return NULL;
  const int saved = gemm_threads_begin((double)d.t * (double)d.s * (double)d.dk);
  for (int64_t b = 0; b < d.b; b++)
    for (int64_t j = 0; j < d.h; j++) {
      weights(&d, q, kv, mask, b, j, p);
      const float *vh = kv + b * d.s * d.kv_width + d.v_offset + j * d.dk;
      gemm(false, false, (int)d.t, (int)d.dk, (int)d.s, 1.0f, p, (int)d.s, vh, (int)d.kv_width, 0.0f,
           out + b * d.t * width + j * d.dk, (int)width);
    }
  gemm_threads_end(saved);
  return NULL;
}

napi_value native_attention_backward(napi_env env, napi_callback_info info) {
  args_t a = {env, "attentionBackward", false};
  napi_value argv[7];
  if (!get_args(&a, info, argv, 7)) return NULL;
  // Call order: dout, q, kv, mask, dq, dkv, dims.
  napi_value in[4] = {argv[1], argv[2], argv[3], argv[6]};
  dims_t d;
  const float *q, *kv, *mask;
  if (!read_inputs(&a, in, &d, &q, &kv, &mask)) return NULL;
  const int64_t width = d.h * d.dk;
  const float *dout = floats(&a, argv[0], (size_t)(d.b * d.t * width), "dout");
  float *dq = floats(&a, argv[4], (size_t)(d.b * d.t * d.q_width), "dq");
  float *dkv = floats(&a, argv[5], (size_t)(d.b * d.s * d.kv_width), "dkv");
  const size_t ts = (size_t)(d.t * d.s > 0 ? d.t * d.s : 1);
  float *p = a.failed ? NULL : scratch(2 * ts), *dp = p ? p + ts : NULL;
  if (!a.failed && !p) fail(&a, "out of memory");
  if (a.failed || d.b * d.h == 0) return NULL;
  const int saved = gemm_threads_begin((double)d.t * (double)d.s * (double)d.dk);
  for (int64_t b = 0; b < d.b; b++)
    for (int64_t j = 0; j < d.h; j++) {
      weights(&d, q, kv, mask, b, j, p);
      const int64_t qh = b * d.t * d.q_width + d.q_offset + j * d.dk;
      const int64_t kh = b * d.s * d.kv_width + d.k_offset + j * d.dk;
      const int64_t vh = b * d.s * d.kv_width + d.v_offset + j * d.dk;
      const float *doh = dout + b * d.t * width + j * d.dk;
      const int t = (int)d.t, s = (int)d.s, dk = (int)d.dk, qw = (int)d.q_width, kvw = (int)d.kv_width;
      gemm(true, false, s, dk, t, 1.0f, p, s, doh, (int)width, 0.0f, dkv + vh, kvw);  // dV = Pᵀ·dO
      gemm(false, true, t, s, dk, 1.0f, doh, (int)width, kv + vh, kvw, 0.0f, dp, s); // dP = dO·Vᵀ
      for (int64_t r = 0; r < d.t; r++) {
        float *pr = p + r * d.s, *dpr = dp + r * d.s, dot = 0;
        for (int64_t c = 0; c < d.s; c++) dot += dpr[c] * pr[c];
        for (int64_t c = 0; c < d.s; c++) dpr[c] = pr[c] * (dpr[c] - dot); // dS
      }
      gemm(false, false, t, dk, s, d.scale, dp, s, kv + kh, kvw, 0.0f, dq + qh, qw); // dQ = dS·K/√dk
      gemm(true, false, s, dk, t, d.scale, dp, s, q + qh, qw, 0.0f, dkv + kh, kvw);  // dK = dSᵀ·Q/√dk
    }
  gemm_threads_end(saved);
  return NULL;
}
