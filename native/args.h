/*
 * Argument checks shared by the addon's functions (blas.c, ops.c): each helper reads one argument,
 * and the first one that is wrong throws a JS error naming the function and the argument
 * ("native.matmul: a must be a Float32Array"); later helpers then do nothing, so a function checks
 * `a.failed` once after reading all its arguments.
 */
#ifndef ATTENTION_DEBUGGER_ARGS_H
#define ATTENTION_DEBUGGER_ARGS_H
#include <node_api.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef struct {
  napi_env env;
  const char *fn;
  bool failed;
} args_t;

static inline void fail(args_t *a, const char *what) {
  if (a->failed) return;
  char message[160];
  snprintf(message, sizeof message, "native.%s: %s", a->fn, what);
  napi_throw_error(a->env, NULL, message);
  a->failed = true;
}

static inline void *typed(args_t *a, napi_value v, napi_typedarray_type want, size_t *length, const char *name) {
  bool is_typed = false;
  napi_typedarray_type type;
  void *data = NULL;
  if (a->failed) return NULL;
  if (napi_is_typedarray(a->env, v, &is_typed) != napi_ok || !is_typed ||
      napi_get_typedarray_info(a->env, v, &type, length, &data, NULL, NULL) != napi_ok || type != want) {
    char message[96];
    snprintf(message, sizeof message, "%s must be a%s", name, want == napi_float32_array ? " Float32Array" : "n Int32Array");
    fail(a, message);
    return NULL;
  }
  return data;
}

static inline float *floats(args_t *a, napi_value v, size_t need, const char *name) {
  size_t length = 0;
  float *p = typed(a, v, napi_float32_array, &length, name);
  if (p && length < need) {
    char message[96];
    snprintf(message, sizeof message, "%s has %zu values, needs %zu", name, length, need);
    fail(a, message);
    return NULL;
  }
  return p;
}

static inline int64_t count(args_t *a, napi_value v, const char *name) {
  int64_t n = -1;
  if (a->failed) return 0;
  if (napi_get_value_int64(a->env, v, &n) != napi_ok || n < 0 || n > INT32_MAX) {
    char message[96];
    snprintf(message, sizeof message, "%s must be a non-negative int32", name);
    fail(a, message);
    return 0;
  }
  return n;
}

static inline double number(args_t *a, napi_value v, const char *name) {
  double x = 0;
  if (a->failed) return 0;
  if (napi_get_value_double(a->env, v, &x) != napi_ok) {
    char message[96];
    snprintf(message, sizeof message, "%s must be a number", name);
    fail(a, message);
  }
  return x;
}

static inline bool get_args(args_t *a, napi_callback_info info, napi_value *argv, size_t want) {
  size_t argc = want;
  if (napi_get_cb_info(a->env, info, &argc, argv, NULL, NULL) != napi_ok || argc != want) {
    char message[64];
    snprintf(message, sizeof message, "expected %zu arguments", want);
    fail(a, message);
    return false;
  }
  return true;
}

static inline bool flag(args_t *a, napi_value v, const char *name) {
  bool x = false;
  if (a->failed) return false;
  if (napi_get_value_bool(a->env, v, &x) != napi_ok) {
    char message[96];
    snprintf(message, sizeof message, "%s must be true or false", name);
    fail(a, message);
  }
  return x;
}

#endif
