// ODLA 0.5 control flow ops: loops and if/else regions in the current computation.
//
// Both constructs are bracketed: ops built between odla_BeginLoop and
// odla_EndLoop form the loop body; ops built after odla_EnterBranchBody(1) and
// odla_EnterBranchBody(0) form the then and else branches of the innermost
// odla_BeginIf, closed by odla_EndIf. Several parameters are unnamed in the
// standard and stay unnamed here.

#ifndef _ODLA_OPERATOR_OPS_LOOP_H_
#define _ODLA_OPERATOR_OPS_LOOP_H_

#include <ODLA/odla_common.h>
#include <ODLA/odla_value.h>

#ifdef __cplusplus
extern "C" {
#endif

// What odla_EndLoop returns for each loop output: the value after the last
// iteration, or the values of every iteration stacked forward or in reverse,
// taken before or after the iteration's update.
typedef enum {
  ODLA_LOOP_LAST_VALUE,
  ODLA_LOOP_FWD_BEFORE,
  ODLA_LOOP_FWD_AFTER,
  ODLA_LOOP_REV_BEFORE,
  ODLA_LOOP_REV_AFTER,
} odla_loop_output_mode;

// Loops. A loop variable carries a value from one iteration to the next.
// flags has one entry per output value.
extern ODLA_API_EXPORT odla_value ODLA_API_CALL odla_CreateLoopVariable(odla_value init_value,
                                                                        odla_value_id value_id);
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_BeginLoop(odla_value trip_count,
                                                                odla_value_id value_id);
extern ODLA_API_EXPORT odla_values ODLA_API_CALL odla_EndLoop(odla_value condition,
                                                              odla_values output_values,
                                                              const odla_loop_output_mode *flags,
                                                              odla_value_ids);

// If/else. odla_EnterBranchBody is declared without ODLA_API_CALL, as in the
// standard. odla_EndIf returns the branch results.
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_BeginIf(odla_value condition, odla_value_id);
extern ODLA_API_EXPORT odla_status odla_EnterBranchBody(odla_bool true_branch);
extern ODLA_API_EXPORT odla_values ODLA_API_CALL odla_EndIf(odla_value_ids);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // _ODLA_OPERATOR_OPS_LOOP_H_
