/*
 * OpenBLAS as the addon's C files reach it (blas.c opens the library): row-major sgemm, and the
 * rule that a small product runs on one thread (waking OpenBLAS's other threads costs more than
 * they save, and on a busy machine their spin-waiting costs far more).
 */
#ifndef ATTENTION_DEBUGGER_BLAS_H
#define ATTENTION_DEBUGGER_BLAS_H
#include <stdbool.h>
#include <stddef.h>

/* C [m, n] = alpha · op(A) · op(B) + beta · C, op = transpose when the flag is set; lda, ldb, ldc
   are row strides, so a head's columns of a [rows, h·dk] matrix are read in place. */
void gemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float *a, int lda, const float *b,
          int ldb, float beta, float *c, int ldc);

/* Before products totalling `work` multiply-adds each: one OpenBLAS thread when they are small.
   Returns what gemm_threads_end needs to restore. */
int gemm_threads_begin(double work);
void gemm_threads_end(int saved);

/* A buffer of at least n floats, kept and reused across calls (grown when needed; NULL when out of
   memory). One per addon: a kernel must not hold it across another kernel's call. */
float *scratch(size_t n);

#endif
