/*
 * Element-wise and reduction kernels for the engine's wasm backend, where one training step spent
 * most of its non-matmul time (measured: tfjs-backend-wasm sums over leading axes by transposing
 * first; its Exp is a scalar loop; the label-smoothed loss takes ~15 passes over [N, V]):
 *
 *   sum(x, out, outer, mid, inner)   x [outer, mid, inner] → out [outer, inner], summed over mid
 *   gatherRows(table, ids, out, width)   out[i, :] = table[ids[i], :]; ids outside the table → 0
 *   smoothedXent(logits, targets, rowLoss, rowNll, grad, pad, confidence, spread, entropy, scale)
 *       logits [N, V], targets [N] int32 → per row KL(q‖p) and −log p(target) (0 where the target is
 *       pad) and d(Σ rowLoss · scale)/d logits = (softmax − q) · scale (label smoothing: q holds
 *       `confidence` at the target, `spread` elsewhere, 0 at pad)
 *   adam(p, g, m, v, pOut, mOut, vOut, lr, beta1, beta2, epsilon, c1, c2)   PyTorch's Adam update
 * and, for decoding only (no gradients; decode/incremental.ts, backend/inferenceOps.ts):
 *   logSoftmax(x, y, n, v)   y [N, V] = (x − max) − log Σ exp(x − max), per row
 *   greedyPick(x, out, n, v, bos, pad, eos)   per row of logits x [N, V], with logSoftmax's log-probs
 *       and BOS, PAD at −∞: out [N, 3] = (argmax, lowest id on ties; its log-prob; EOS's log-prob)
 *   (addLayerNorm, with its backward pass: norm.c)
 *   attendOne(q, k, v, mask, out, bh, heads, s, dk, scale, masked)   one query per (batch, head):
 *       q [BH, dk], k and v [BH, S, dk], mask [B, S] additive (when masked) → out [BH, dk] =
 *       softmax(q·kᵀ · scale + mask) · v
 *
 * All arrays are Float32Array views (targets and ids Int32Array) into the wasm heap; lengths are
 * checked here against the sizes given, so a wrong call throws instead of writing out of bounds.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "vec.h"

napi_value native_sum(napi_env env, napi_callback_info info) {
  args_t a = {env, "sum", false};
  napi_value argv[5];
  if (!get_args(&a, info, argv, 5)) return NULL;
  const int64_t outer = count(&a, argv[2], "outer"), mid = count(&a, argv[3], "mid"), inner = count(&a, argv[4], "inner");
  const float *x = floats(&a, argv[0], (size_t)(outer * mid * inner), "x");
  float *out = floats(&a, argv[1], (size_t)(outer * inner), "out");
  if (a.failed) return NULL;
  for (int64_t o = 0; o < outer; o++) {
    const float *xo = x + o * mid * inner;
    float *y = out + o * inner;
    if (inner == 1) {
      // A contiguous row: eight partial sums (vectorisable, and closer to pairwise summation).
      float acc[8] = {0};
      int64_t i = 0;
      for (; i + 8 <= mid; i += 8)
        for (int j = 0; j < 8; j++) acc[j] += xo[i + j];
      float s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
      for (; i < mid; i++) s += xo[i];
      y[0] = s;
    } else {
      memset(y, 0, (size_t)inner * sizeof(float));
      for (int64_t i = 0; i < mid; i++) {
        const float *row = xo + i * inner;
        for (int64_t j = 0; j < inner; j++) y[j] += row[j];
      }
    }
  }
  return NULL;
}

napi_value native_gather_rows(napi_env env, napi_callback_info info) {
  args_t a = {env, "gatherRows", false};
  napi_value argv[4];
  if (!get_args(&a, info, argv, 4)) return NULL;
  const int64_t width = count(&a, argv[3], "width");
  size_t table_len = 0, n = 0, out_len = 0;
  const float *table = typed(&a, argv[0], napi_float32_array, &table_len, "table");
  const int32_t *ids = typed(&a, argv[1], napi_int32_array, &n, "ids");
  float *out = typed(&a, argv[2], napi_float32_array, &out_len, "out");
  if (a.failed) return NULL;
  if (width == 0 || out_len < n * (size_t)width) {
    fail(&a, "out is shorter than ids × width (or width is 0)");
    return NULL;
  }
  const int64_t rows = (int64_t)table_len / width;
  for (size_t i = 0; i < n; i++) {
    float *dst = out + i * (size_t)width;
    if (ids[i] >= 0 && ids[i] < rows) memcpy(dst, table + (size_t)ids[i] * (size_t)width, (size_t)width * sizeof(float));
    else memset(dst, 0, (size_t)width * sizeof(float));
  }
  return NULL;
}

napi_value native_smoothed_xent(napi_env env, napi_callback_info info) {
  args_t a = {env, "smoothedXent", false};
  napi_value argv[12];
  if (!get_args(&a, info, argv, 12)) return NULL;
  const int64_t n = count(&a, argv[10], "n"), v = count(&a, argv[11], "v");
  const float *logits = floats(&a, argv[0], (size_t)(n * v), "logits");
  size_t n_targets = 0;
  const int32_t *targets = typed(&a, argv[1], napi_int32_array, &n_targets, "targets");
  float *row_loss = floats(&a, argv[2], (size_t)n, "rowLoss");
  float *row_nll = floats(&a, argv[3], (size_t)n, "rowNll");
  float *grad = floats(&a, argv[4], (size_t)(n * v), "grad");
  const int64_t pad = (int64_t)number(&a, argv[5], "pad");
  const double confidence = number(&a, argv[6], "confidence"), spread = number(&a, argv[7], "spread");
  const double entropy = number(&a, argv[8], "entropy"), scale = number(&a, argv[9], "scale");
  if (a.failed) return NULL;
  if (n_targets < (size_t)n) {
    fail(&a, "targets is shorter than n");
    return NULL;
  }
  for (int64_t i = 0; i < n; i++) {
    const float *restrict l = logits + i * v;
    float *restrict g = grad + i * v;
    const int64_t t = targets[i];
    if (t == pad || t < 0 || t >= v) {
      memset(g, 0, (size_t)v * sizeof(float));
      row_loss[i] = row_nll[i] = 0;
      continue;
    }
    // Four lanes at a time (exp4), the tail of the row one by one.
    const int64_t v4 = v - v % 4;
    const float m = row_max(l, v);
    v4f lane_sum = splat(0), lane_total = splat(0);
    for (int64_t j = 0; j < v4; j += 4) {
      const v4f x = load4(l + j);
      const v4f e = exp4(x - m);
      memcpy(g + j, &e, sizeof e);
      lane_sum += e;
      lane_total += x;
    }
    double s = hsum4(lane_sum), total = hsum4(lane_total);
    for (int64_t j = v4; j < v; j++) {
      const float e = expf(l[j] - m);
      g[j] = e;
      s += e;
      total += l[j];
    }
    const double lse = m + log(s);
    const double logp_t = l[t] - lse;
    const double logp_pad = (pad >= 0 && pad < v) ? l[pad] - lse : 0;
    const double others = (total - (double)v * lse) - logp_pad - logp_t; // Σ log p over non-pad, non-target classes
    row_loss[i] = (float)(-(confidence * logp_t + spread * others) - entropy);
    row_nll[i] = (float)-logp_t;
    const float inv = (float)(1.0 / s), sc = (float)scale, q = (float)(spread * scale);
    for (int64_t j = 0; j < v; j++) g[j] = g[j] * inv * sc - q;
    if (pad >= 0 && pad < v) g[pad] += q;
    g[t] += q - (float)(confidence * scale);
  }
  return NULL;
}

napi_value native_adam(napi_env env, napi_callback_info info) {
  args_t a = {env, "adam", false};
  napi_value argv[14];
  if (!get_args(&a, info, argv, 14)) return NULL;
  const int64_t size = count(&a, argv[13], "size");
  const float *p = floats(&a, argv[0], (size_t)size, "p"), *g = floats(&a, argv[1], (size_t)size, "g");
  const float *m = floats(&a, argv[2], (size_t)size, "m"), *v = floats(&a, argv[3], (size_t)size, "v");
  float *p_out = floats(&a, argv[4], (size_t)size, "pOut"), *m_out = floats(&a, argv[5], (size_t)size, "mOut");
  float *v_out = floats(&a, argv[6], (size_t)size, "vOut");
  // Each constant rounded to float32 from its double, as tfjs makes a scalar of a JS number.
  const double b1 = number(&a, argv[8], "beta1"), b2 = number(&a, argv[9], "beta2");
  const float lr = (float)number(&a, argv[7], "lr"), beta1 = (float)b1, beta2 = (float)b2, one_b1 = (float)(1 - b1), one_b2 = (float)(1 - b2);
  const float epsilon = (float)number(&a, argv[10], "epsilon");
  const float c1 = (float)number(&a, argv[11], "c1"), c2 = (float)number(&a, argv[12], "c2");
  if (a.failed) return NULL;
  // The same operations, in the same order and precision, as Adam.apply's tfjs ops.
  for (int64_t i = 0; i < size; i++) {
    const float mi = m[i] * beta1 + g[i] * one_b1;
    const float vi = v[i] * beta2 + (g[i] * g[i]) * one_b2;
    const float update = (mi / c1) / (sqrtf(vi / c2) + epsilon);
    m_out[i] = mi;
    v_out[i] = vi;
    p_out[i] = p[i] - update * lr;
  }
  return NULL;
}

/* One row's max m and log Σ exp(l − m), four lanes (logSoftmax and greedyPick share it, so that
   greedyPick's log-probs are logSoftmax's to the bit). */
static inline float row_log_sum_exp(const float *restrict l, int64_t v, float *max_out) {
  const int64_t v4 = v - v % 4;
  const float m = row_max(l, v);
  v4f lane_sum = splat(0);
  for (int64_t j = 0; j < v4; j += 4) lane_sum += exp4(load4(l + j) - m);
  float s = hsum4(lane_sum);
  for (int64_t j = v4; j < v; j++) s += expf(l[j] - m);
  *max_out = m;
  return logf(s);
}

napi_value native_log_softmax(napi_env env, napi_callback_info info) {
  args_t a = {env, "logSoftmax", false};
  napi_value argv[4];
  if (!get_args(&a, info, argv, 4)) return NULL;
  const int64_t n = count(&a, argv[2], "n"), v = count(&a, argv[3], "v");
  const float *x = floats(&a, argv[0], (size_t)(n * v), "x");
  float *y = floats(&a, argv[1], (size_t)(n * v), "y");
  if (a.failed) return NULL;
  for (int64_t i = 0; i < n; i++) {
    const float *restrict l = x + i * v;
    float *restrict o = y + i * v;
    float m;
    const float ls = row_log_sum_exp(l, v, &m);
    for (int64_t j = 0; j < v; j++) o[j] = (l[j] - m) - ls; // tfjs's order: shifted − log Σ exp(shifted)
  }
  return NULL;
}

napi_value native_greedy_pick(napi_env env, napi_callback_info info) {
  args_t a = {env, "greedyPick", false};
  napi_value argv[7];
  if (!get_args(&a, info, argv, 7)) return NULL;
  const int64_t n = count(&a, argv[2], "n"), v = count(&a, argv[3], "v");
  const int64_t bos = count(&a, argv[4], "bos"), pad = count(&a, argv[5], "pad"), eos = count(&a, argv[6], "eos");
  if (!a.failed && (bos >= v || pad >= v || eos >= v)) fail(&a, "bos, pad and eos must be below v");
  const float *x = floats(&a, argv[0], (size_t)(n * v), "x");
  float *out = floats(&a, argv[1], (size_t)(n * 3), "out");
  if (a.failed) return NULL;
  for (int64_t i = 0; i < n; i++) {
    const float *restrict l = x + i * v;
    float m;
    const float ls = row_log_sum_exp(l, v, &m);
    // As decode/greedy.ts over the full log-probs: the first index wins, then only a strictly greater one.
    int64_t best = -1;
    float best_lp = -INFINITY;
    for (int64_t j = 0; j < v; j++) {
      const float lp = j == bos || j == pad ? -INFINITY : (l[j] - m) - ls;
      if (best < 0 || lp > best_lp) {
        best = j;
        best_lp = lp;
      }
    }
    out[i * 3] = (float)best;
    out[i * 3 + 1] = best_lp;
    out[i * 3 + 2] = eos == bos || eos == pad ? -INFINITY : (l[eos] - m) - ls;
  }
  return NULL;
}

/* Σ a[c]·b[c], two four-lane sums (rows of keys are independent, so the CPU overlaps them). */
static inline float dot(const float *a, const float *b, int64_t n) {
  v4f acc0 = splat(0), acc1 = splat(0);
  int64_t c = 0;
  for (; c + 8 <= n; c += 8) {
    acc0 += load4(a + c) * load4(b + c);
    acc1 += load4(a + c + 4) * load4(b + c + 4);
  }
  float s = hsum4(acc0 + acc1);
  for (; c < n; c++) s += a[c] * b[c];
  return s;
}

napi_value native_attend_one(napi_env env, napi_callback_info info) {
  args_t a = {env, "attendOne", false};
  napi_value argv[11];
  if (!get_args(&a, info, argv, 11)) return NULL;
  const int64_t bh = count(&a, argv[5], "bh"), heads = count(&a, argv[6], "heads");
  const int64_t s = count(&a, argv[7], "s"), dk = count(&a, argv[8], "dk");
  const float scale = (float)number(&a, argv[9], "scale");
  const bool masked = flag(&a, argv[10], "masked");
  if (!a.failed && (heads == 0 || bh % heads != 0)) fail(&a, "bh must be a multiple of heads");
  const float *q = floats(&a, argv[0], (size_t)(bh * dk), "q");
  const float *k = floats(&a, argv[1], (size_t)(bh * s * dk), "k"), *v = floats(&a, argv[2], (size_t)(bh * s * dk), "v");
  const float *mask = floats(&a, argv[3], masked ? (size_t)(bh / (heads ? heads : 1) * s) : 0, "mask");
  float *out = floats(&a, argv[4], (size_t)(bh * dk), "out");
  if (a.failed || bh * dk == 0) return NULL;
  float *w = malloc((size_t)(s > 0 ? s : 1) * sizeof(float));
  if (!w) {
    fail(&a, "out of memory");
    return NULL;
  }
  for (int64_t i = 0; i < bh; i++) {
    const float *qi = q + i * dk, *ki = k + i * s * dk, *vi = v + i * s * dk;
    float m = -INFINITY;
    for (int64_t j = 0; j < s; j++) {
      w[j] = dot(qi, ki + j * dk, dk) * scale + (masked ? mask[(i / heads) * s + j] : 0.0f);
      m = w[j] > m ? w[j] : m;
    }
    float total = 0;
    for (int64_t j = 0; j < s; j++) total += (w[j] = expf(w[j] - m));
    float *o = out + i * dk;
    memset(o, 0, (size_t)dk * sizeof(float));
    for (int64_t j = 0; j < s; j++) {
      const float p = w[j] / total;
      for (int64_t c = 0; c < dk; c++) o[c] += p * vi[j * dk + c];
    }
  }
  free(w);
  return NULL;
}
