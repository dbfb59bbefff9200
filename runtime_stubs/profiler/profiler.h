/* profiler.h: what the generated forwarders (prof_forward.c, from gen_forwarders.py) call in
 * the hand-written half of libodla_profiler (profiler.c). */
#ifndef ODLA_PROFILER_PROFILER_H_
#define ODLA_PROFILER_PROFILER_H_

#include <ODLA/odla.h>

/* The ODLA functions are the library's only exports (it is built with hidden visibility). */
#define PROF_EXPORT __attribute__((visibility("default")))

/* Loads the backend on first use; nonzero when it is loaded. */
int prof_loaded(void);
/* Reports that the backend lacks `fn`; returns 0. */
int prof_missing(const char *fn);
/* Whether the backend is loaded and has `fn` (reported when it lacks it). */
#define PROF_READY(fn) (prof_loaded() && (prof_real_##fn != NULL || prof_missing(#fn)))
/* A builder `fn` returned `v` (or `vs`): remembered as a value of the current computation
 * whose range the profiler records. */
void prof_note_value(const char *fn, odla_value v);
void prof_note_values(const char *fn, odla_values vs);

#endif /* ODLA_PROFILER_PROFILER_H_ */
