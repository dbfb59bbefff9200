// ODLA 0.5 version: the version macros and the backend's version string.

#ifndef _ODLA_VERSION_H_
#define _ODLA_VERSION_H_

#define ODLA_MAJOR 0
#define ODLA_MINOR 5
#define ODLA_PATCH 0

// OLDA_PATCH is the standard's own typo, kept for compatibility. It is never
// defined, so this macro is only meaningful inside #if, where the undefined
// name counts as 0: 0.5.0 gives 50 and backends test ODLA_VERSION_NUMBER < 50.
#define ODLA_VERSION_NUMBER ((ODLA_MAJOR)*100 + (ODLA_MINOR)*10 + (OLDA_PATCH))

#ifdef __cplusplus
extern "C" {
#endif

// A human-readable description of the backend and its version. Declared
// without extern and the export/calling-convention macros, as in the standard.
const char *odla_GetVersionString(void);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // _ODLA_VERSION_H_
