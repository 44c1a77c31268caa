/*
 * A Node-API addon that hands matrix products to the machine's OpenBLAS (the BLAS PyTorch uses on
 * Debian), for the engine's BatchMatMul kernel on the wasm backend. WebAssembly's 128-bit SIMD has
 * no fused multiply-add and tfjs runs it on one thread under Node: ~15 GFLOP/s against OpenBLAS's
 * ~80+ on this project's 2-core machine. OpenBLAS is opened at load time with dlopen, so building
 * needs only Node's headers; without OpenBLAS the addon fails to load and the engine stays on wasm.
 *
 *   matmul(a, b, c, batch, m, n, k, transA, transB, strideA, strideB)
 *     a, b, c: Float32Array (views into the wasm heap); C[i] = op(A[i]) · op(B[i]) for i < batch,
 *     row-major, op = transpose when the flag is set; A[i] starts at i·strideA (0 broadcasts).
 *   info() → { library, config, threads }
 *   setThreads(n)
 *   linear(x, w, b, y, n, in, out, relu)
 *     y [n, out] = x [n, in] · wᵀ + b (w [out, in], as PyTorch stores it), then max(y, 0) when relu:
 *     b copied into every row of y, then one sgemm with beta = 1 (PyTorch's addmm does the same).
 *   Products with m·n·k < 2^22 run on one OpenBLAS thread (SINGLE_THREAD_BELOW).
 * and the kernels of ops.c (sum, gatherRows, smoothedXent, adam, logSoftmax, greedyPick, addLayerNorm,
 * attendOne).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "blas.h"

enum { ROW_MAJOR = 101, NO_TRANS = 111, TRANS = 112 };
#define SINGLE_THREAD_BELOW (1 << 22) /* m·n·k below which a product runs on one OpenBLAS thread */

typedef void (*sgemm_fn)(int order, int trans_a, int trans_b, int m, int n, int k, float alpha, const float *a, int lda,
                         const float *b, int ldb, float beta, float *c, int ldc);
typedef char *(*config_fn)(void);
typedef int (*threads_fn)(void);
typedef void (*set_threads_fn)(int);

static sgemm_fn sgemm;
static config_fn get_config;
static threads_fn get_threads;
static set_threads_fn set_threads;
static const char *library;

#define CHECK(call)                                                                                                    \
  do {                                                                                                                 \
    if ((call) != napi_ok) {                                                                                           \
      napi_throw_error(env, NULL, "native: Node-API call failed: " #call);                                            \
      return NULL;                                                                                                     \
    }                                                                                                                  \
  } while (0)

/* The last element a batch of matrices touches must lie inside the array. */
static bool fits(int64_t batch, int64_t stride, int64_t size, size_t length) {
  return size == 0 || batch == 0 || (batch - 1) * stride + size <= (int64_t)length;
}

void gemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float *a, int lda, const float *b,
          int ldb, float beta, float *c, int ldc) {
  sgemm(ROW_MAJOR, trans_a ? TRANS : NO_TRANS, trans_b ? TRANS : NO_TRANS, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

int gemm_threads_begin(double work) {
  const int threads = get_threads ? get_threads() : 1;
  if (!set_threads || threads <= 1 || work >= SINGLE_THREAD_BELOW) return 0;
  set_threads(1);
  return threads;
}

void gemm_threads_end(int saved) {
  if (saved > 0) set_threads(saved);
}

float *scratch(size_t n) {
  static float *buffer;
  static size_t size;
  if (n > size) {
    float *grown = realloc(buffer, n * sizeof(float));
    if (!grown) return NULL;
    buffer = grown;
    size = n;
  }
  return buffer;
}

static napi_value matmul(napi_env env, napi_callback_info info) {
  args_t a = {env, "matmul", false};
  napi_value argv[11];
  if (!get_args(&a, info, argv, 11)) return NULL;
  size_t la = 0, lb = 0, lc = 0;
  const float *pa = typed(&a, argv[0], napi_float32_array, &la, "a");
  const float *pb = typed(&a, argv[1], napi_float32_array, &lb, "b");
  float *pc = typed(&a, argv[2], napi_float32_array, &lc, "c");
  const int64_t batch = count(&a, argv[3], "batch"), m = count(&a, argv[4], "m"), n = count(&a, argv[5], "n"), k = count(&a, argv[6], "k");
  const bool trans_a = flag(&a, argv[7], "transA"), trans_b = flag(&a, argv[8], "transB");
  const int64_t stride_a = count(&a, argv[9], "strideA"), stride_b = count(&a, argv[10], "strideB");
  if (a.failed) return NULL;
  if (!fits(batch, stride_a, m * k, la) || !fits(batch, stride_b, k * n, lb) || !fits(batch, m * n, m * n, lc)) {
    fail(&a, "a, b or c is shorter than batch, m, n, k and the strides say");
    return NULL;
  }
  if (m * n == 0) return NULL;
  if (k == 0) {
    memset(pc, 0, (size_t)(batch * m * n) * sizeof(float));
    return NULL;
  }
  const int lda = trans_a ? (int)m : (int)k;
  const int ldb = trans_b ? (int)k : (int)n;
  const int saved = gemm_threads_begin((double)m * (double)n * (double)k);
  for (int64_t i = 0; i < batch; i++)
    gemm(trans_a, trans_b, (int)m, (int)n, (int)k, 1.0f, pa + i * stride_a, lda, pb + i * stride_b, ldb, 0.0f,
         pc + i * m * n, (int)n);
  gemm_threads_end(saved);
  return NULL;
}

static napi_value linear(napi_env env, napi_callback_info info) {
  args_t a = {env, "linear", false};
  napi_value argv[8];
  if (!get_args(&a, info, argv, 8)) return NULL;
  const int64_t n = count(&a, argv[4], "n"), in = count(&a, argv[5], "in"), out = count(&a, argv[6], "out");
  const bool relu = flag(&a, argv[7], "relu");
  const float *x = floats(&a, argv[0], (size_t)(n * in), "x"), *w = floats(&a, argv[1], (size_t)(out * in), "w");
  const float *b = floats(&a, argv[2], (size_t)out, "b");
  float *y = floats(&a, argv[3], (size_t)(n * out), "y");
  if (a.failed || n * out == 0) return NULL;
  for (int64_t i = 0; i < n; i++) memcpy(y + i * out, b, (size_t)out * sizeof(float));
  if (in > 0) {
    const int saved = gemm_threads_begin((double)n * (double)out * (double)in);
    gemm(false, true, (int)n, (int)out, (int)in, 1.0f, x, (int)in, w, (int)in, 1.0f, y, (int)out);
    gemm_threads_end(saved);
  }
  if (relu) // a store on every element (no branch): vectorised, and no mispredicted signs
    for (int64_t i = 0; i < n * out; i++) y[i] = y[i] < 0 ? 0.0f : y[i]; // NaN stays NaN, as in tfjs's Relu
  return NULL;
}

/* dy [n, out] of y = act(x·wᵀ + b) → dx [n, in] = dz·w, dw [out, in] = dzᵀ·x, db [out] = Σ rows of dz,
   dz = dy ⊙ (y > 0) with relu, else dy. */
static napi_value linear_backward(napi_env env, napi_callback_info info) {
  args_t a = {env, "linearBackward", false};
  napi_value argv[11];
  if (!get_args(&a, info, argv, 11)) return NULL;
  const int64_t n = count(&a, argv[7], "n"), in = count(&a, argv[8], "in"), out = count(&a, argv[9], "out");
  const bool relu = flag(&a, argv[10], "relu");
  const float *dy = floats(&a, argv[0], (size_t)(n * out), "dy"), *x = floats(&a, argv[1], (size_t)(n * in), "x");
  const float *w = floats(&a, argv[2], (size_t)(out * in), "w"), *y = floats(&a, argv[3], relu ? (size_t)(n * out) : 0, "y");
  float *dx = floats(&a, argv[4], (size_t)(n * in), "dx"), *dw = floats(&a, argv[5], (size_t)(out * in), "dw");
  float *db = floats(&a, argv[6], (size_t)out, "db");
  if (a.failed) return NULL;
  const float *dz = dy;
  if (relu) {
    float *masked = scratch((size_t)(n * out));
    if (!masked) {
      fail(&a, "out of memory");
      return NULL;
    }
    for (int64_t i = 0; i < n * out; i++) masked[i] = y[i] > 0 ? dy[i] : 0.0f; // tfjs's ReLU gradient: 0 at 0
    dz = masked;
  }
  memset(db, 0, (size_t)out * sizeof(float));
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < out; j++) db[j] += dz[i * out + j];
  if (out == 0 || in == 0 || n == 0) {
    memset(dx, 0, (size_t)(n * in) * sizeof(float));
    memset(dw, 0, (size_t)(out * in) * sizeof(float));
    return NULL;
  }
  const int saved = gemm_threads_begin((double)n * (double)out * (double)in);
  gemm(false, false, (int)n, (int)in, (int)out, 1.0f, dz, (int)out, w, (int)in, 0.0f, dx, (int)in);
  gemm(true, false, (int)out, (int)in, (int)n, 1.0f, dz, (int)out, x, (int)in, 0.0f, dw, (int)in);
  gemm_threads_end(saved);
  return NULL;
}

static napi_value info(napi_env env, napi_callback_info cb) {
  (void)cb;
  napi_value result, value;
  CHECK(napi_create_object(env, &result));
  CHECK(napi_create_string_utf8(env, library, NAPI_AUTO_LENGTH, &value));
  CHECK(napi_set_named_property(env, result, "library", value));
  CHECK(napi_create_string_utf8(env, get_config ? get_config() : "", NAPI_AUTO_LENGTH, &value));
  CHECK(napi_set_named_property(env, result, "config", value));
  CHECK(napi_create_int32(env, get_threads ? get_threads() : 1, &value));
  CHECK(napi_set_named_property(env, result, "threads", value));
  return result;
}

static napi_value threads(napi_env env, napi_callback_info info) {
  args_t a = {env, "setThreads", false};
  napi_value argv[1];
  if (!get_args(&a, info, argv, 1)) return NULL;
  const int64_t n = count(&a, argv[0], "n");
  if (!a.failed && n < 1) fail(&a, "n must be at least 1");
  if (!a.failed && set_threads) set_threads((int)n);
  return NULL;
}

napi_value native_sum(napi_env, napi_callback_info);
napi_value native_gather_rows(napi_env, napi_callback_info);
napi_value native_smoothed_xent(napi_env, napi_callback_info);
napi_value native_adam(napi_env, napi_callback_info);
napi_value native_log_softmax(napi_env, napi_callback_info);
napi_value native_add_layer_norm(napi_env, napi_callback_info);
napi_value native_add_layer_norm_backward(napi_env, napi_callback_info);
napi_value native_dropout(napi_env, napi_callback_info);
napi_value native_attention(napi_env, napi_callback_info);
napi_value native_attention_backward(napi_env, napi_callback_info);
napi_value native_attend_one(napi_env, napi_callback_info);
napi_value native_greedy_pick(napi_env, napi_callback_info);

NAPI_MODULE_INIT() {
  /* ATTENTION_DEBUGGER_BLAS_PATH names the library to open instead of the usual names (a path, or a
     name the loader searches); pointing it at nothing hides OpenBLAS, as on a machine without it. */
  static const char *candidates[] = {"libopenblas.so.0", "libopenblas.so", "libopenblas.dylib"};
  const char *forced = getenv("ATTENTION_DEBUGGER_BLAS_PATH");
  void *handle = NULL;
  if (forced && *forced) {
    handle = dlopen(forced, RTLD_NOW | RTLD_LOCAL);
    library = forced;
  }
  for (size_t i = 0; i < sizeof candidates / sizeof *candidates && !handle && !(forced && *forced); i++) {
    handle = dlopen(candidates[i], RTLD_NOW | RTLD_LOCAL);
    if (handle) library = candidates[i];
  }
  if (!handle || !(sgemm = (sgemm_fn)dlsym(handle, "cblas_sgemm"))) {
    /* The code lets the engine tell a missing OpenBLAS (its fallback and the fix) from a broken addon. */
    char why[512];
    snprintf(why, sizeof why, "OpenBLAS (%s with cblas_sgemm) not found", forced && *forced ? forced : candidates[0]);
    napi_throw_error(env, "OPENBLAS_NOT_FOUND", why);
    return NULL;
  }
  get_config = (config_fn)dlsym(handle, "openblas_get_config");
  get_threads = (threads_fn)dlsym(handle, "openblas_get_num_threads");
  set_threads = (set_threads_fn)dlsym(handle, "openblas_set_num_threads");
  napi_property_descriptor props[] = {
      {"matmul", NULL, matmul, NULL, NULL, NULL, napi_enumerable, NULL},
      {"info", NULL, info, NULL, NULL, NULL, napi_enumerable, NULL},
      {"setThreads", NULL, threads, NULL, NULL, NULL, napi_enumerable, NULL},
      {"sum", NULL, native_sum, NULL, NULL, NULL, napi_enumerable, NULL},
      {"gatherRows", NULL, native_gather_rows, NULL, NULL, NULL, napi_enumerable, NULL},
      {"smoothedXent", NULL, native_smoothed_xent, NULL, NULL, NULL, napi_enumerable, NULL},
      {"adam", NULL, native_adam, NULL, NULL, NULL, napi_enumerable, NULL},
      {"linear", NULL, linear, NULL, NULL, NULL, napi_enumerable, NULL},
      {"linearBackward", NULL, linear_backward, NULL, NULL, NULL, napi_enumerable, NULL},
      {"dropout", NULL, native_dropout, NULL, NULL, NULL, napi_enumerable, NULL},
      {"addLayerNormBackward", NULL, native_add_layer_norm_backward, NULL, NULL, NULL, napi_enumerable, NULL},
      {"attention", NULL, native_attention, NULL, NULL, NULL, napi_enumerable, NULL},
      {"attentionBackward", NULL, native_attention_backward, NULL, NULL, NULL, napi_enumerable, NULL},
      {"logSoftmax", NULL, native_log_softmax, NULL, NULL, NULL, napi_enumerable, NULL},
      {"addLayerNorm", NULL, native_add_layer_norm, NULL, NULL, NULL, napi_enumerable, NULL},
      {"attendOne", NULL, native_attend_one, NULL, NULL, NULL, napi_enumerable, NULL},
      {"greedyPick", NULL, native_greedy_pick, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  if (napi_define_properties(env, exports, sizeof props / sizeof *props, props) != napi_ok) return NULL;
  return exports;
}
