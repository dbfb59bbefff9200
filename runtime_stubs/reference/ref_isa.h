/* ref_isa.h: which instruction sets the reference backend's kernels are compiled for. */
#ifndef ODLA_REFERENCE_REF_ISA_H_
#define ODLA_REFERENCE_REF_ISA_H_

#include <stdint.h> /* on glibc, defines __GLIBC__ */

/* One library for every x86-64, at full speed on newer ones (the build targets the baseline
 * instruction set; docs/backends.md, "Instruction sets"):
 * - REF_HOT marks the functions whose loops run most of a model's time. GCC 11 or later on
 *   glibc compiles each three times, for AVX-512 (x86-64-v4), AVX2 with FMA (x86-64-v3) and
 *   the build's target, and the dynamic loader picks the best one the CPU has (an indirect
 *   function). Elsewhere it is empty: the build's target is what runs. (Clang 14's clones of
 *   an x86-64-vN level pick the wrong one, so it is not used there.)
 * - REF_X86_TARGETS: the compiler takes per-function x86 targets (GCC and Clang), for the
 *   kernels written per instruction set (ops_gemm.c's register tile, qgemm.c), which choose
 *   by ref_cpu_has(). */
#if defined(__x86_64__) && defined(__GNUC__)
#define REF_X86_TARGETS 1
#define ref_cpu_has(feature) (__builtin_cpu_init(), __builtin_cpu_supports(feature))
#else
#define REF_X86_TARGETS 0
#endif
#if REF_X86_TARGETS && !defined(__clang__) && __GNUC__ >= 11 && defined(__GLIBC__)
#define REF_HOT __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define REF_HOT
#endif

/* REF_NOINLINE keeps a function out of its callers where the compiler would inline it. */
#if defined(__GNUC__)
#define REF_NOINLINE __attribute__((noinline))
#else
#define REF_NOINLINE
#endif

#endif /* ODLA_REFERENCE_REF_ISA_H_ */
