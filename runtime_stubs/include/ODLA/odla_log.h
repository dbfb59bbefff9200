// ODLA 0.5 logging: log levels and a replaceable logger callback.

#ifndef _ODLA_LOG_H_
#define _ODLA_LOG_H_

#include <ODLA/odla_common.h>

#ifdef __cplusplus
extern "C" {
#endif

// From quietest (OFF) to most verbose (TRACE). At a given level the backend
// logs messages of that level and of every quieter one.
typedef enum {
  ODLA_LOG_LEVEL_OFF,
  ODLA_LOG_LEVEL_FATAL,
  ODLA_LOG_LEVEL_ERROR,
  ODLA_LOG_LEVEL_WARN,
  ODLA_LOG_LEVEL_INFO,
  ODLA_LOG_LEVEL_DEBUG,
  ODLA_LOG_LEVEL_TRACE,
} odla_log_level;

// Receives each message the backend logs, with its source location and level.
typedef void (*odla_logging_func)(const char *file_name, int line, const char *func_name,
                                  odla_log_level level, const char *msg);

extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_SetLogLevel(odla_log_level level);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_SetLogger(odla_logging_func logger);
extern ODLA_API_EXPORT odla_logging_func ODLA_API_CALL odla_GetLogger(void);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // _ODLA_LOG_H_
