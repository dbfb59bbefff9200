/* odla_ext.h: what odlac adds beyond ODLA 0.5. Not part of the standard: generated code
 * includes it only when the chosen backend's manifest declares the extension, and code
 * generated for the core profile never uses it. */
#ifndef _ODLA_EXT_H_
#define _ODLA_EXT_H_

#include <ODLA/odla_common.h>
#include <ODLA/odla_compute.h>

/* Element types beyond ODLA 0.5's (8-bit floats, 4- and 2-bit types). */
#include <ODLA/ext/odla_ext_types.h>
/* Extension ops, one header per op family. Their functions are named odla_Ext<Op>. */
#include <ODLA/ext/odla_ext_binary.h>
#include <ODLA/ext/odla_ext_data.h>
#include <ODLA/ext/odla_ext_fused.h>
#include <ODLA/ext/odla_ext_indexing.h>
#include <ODLA/ext/odla_ext_memory.h> /* memory the application gives */
#include <ODLA/ext/odla_ext_misc.h>
#include <ODLA/ext/odla_ext_nn.h>
#include <ODLA/ext/odla_ext_normalization.h>
#include <ODLA/ext/odla_ext_profiler.h> /* reading device traces */
#include <ODLA/ext/odla_ext_quant.h>
#include <ODLA/ext/odla_ext_recurrent.h>
#include <ODLA/ext/odla_ext_reduce.h>
#include <ODLA/ext/odla_ext_string.h>
#include <ODLA/ext/odla_ext_transformer.h>
#include <ODLA/ext/odla_ext_tree.h>
#include <ODLA/ext/odla_ext_unary.h>
/* Custom ops: kernels the application registers, called through odla_CustomOp. */
#include <ODLA/ext/odla_ext_custom.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version of this extension header; backends report the version they implement. */
#define ODLA_EXT_VERSION 1

/* Item keys. ODLA 0.5's odla_item_type ends at ODLA_ASYNC_CALLBACK_ARG (27). odlac's items
 * start at ODLA_EXT_ITEM_BASE (0x1000). ODLA_EXT_VENDOR_ITEM_FIRST (0x10000) up to
 * ODLA_EXT_VENDOR_ITEM_LAST (0x1FFFF), inclusive, is left to vendors' own items, for
 * odla_SetComputationItem and odla_SetContextItem: odlac and this header never define one
 * there, and a vendor documents its own (value type, when it may be set). A backend given an
 * item it does not know, vendor item or not, changes nothing and returns
 * ODLA_UNSUPPORTED_DATATYPE (the reference backend also logs a warning naming the item), so
 * an application may set one vendor's items on any backend and treat that status as "not
 * this backend's", never as a failure of the computation or context. */
#define ODLA_EXT_ITEM_BASE 0x1000
#define ODLA_EXT_VENDOR_ITEM_FIRST 0x10000
#define ODLA_EXT_VENDOR_ITEM_LAST 0x1FFFF

/* Context item: a caller-provided activation arena. The value is a pointer to an
 * odla_ext_arena; the memory must stay valid while the context is used and hold at least
 * the bytes odla_ExtGetArenaBytes reports. With it, execution allocates nothing. */
#define ODLA_EXT_ITEM_ARENA ((odla_item_type)(ODLA_EXT_ITEM_BASE + 0))
typedef struct {
  odla_void *base; /* aligned to 64 bytes */
  odla_size_t bytes;
} odla_ext_arena;

/* Computation item, set before the ops are built: a pointer to an odla_bool; true makes the
 * builders choose kernels that need the least scratch memory in the arena (direct
 * convolutions, no packed panels) over faster ones that need more, for targets where memory
 * is scarcer than time (a microcontroller: odlac --memory=least). Backends without the choice
 * return ODLA_UNSUPPORTED_DATATYPE. */
#define ODLA_EXT_ITEM_LEAST_MEMORY ((odla_item_type)(ODLA_EXT_ITEM_BASE + 1))

/* Computation item, set before the ops are built: a pointer to an odla_bool; true promises
 * that every value id this computation's builders are given is a string that outlives the
 * computation (a literal, as generated code's are), which the backend then keeps by pointer
 * instead of copying: less memory where memory is scarce (odlac --no-heap sets it). Backends
 * without the choice return ODLA_UNSUPPORTED_DATATYPE. */
#define ODLA_EXT_ITEM_STATIC_IDS ((odla_item_type)(ODLA_EXT_ITEM_BASE + 2))

/* Computation item: a pointer to an odla_ext_arena (any alignment) of memory the backend may
 * use for temporaries while it compiles the computation (odla_CompileComputation, or
 * odla_ExtGetArenaBytes when that compiles it), all of them gone when the call returns; the
 * memory is the caller's at every other time. odlac --no-heap code gives the room of its
 * activation arena, which no context uses yet: the planner's lists then take none of the
 * instance's memory. What does not fit is allocated as usual. Backends without the choice
 * return ODLA_UNSUPPORTED_DATATYPE. */
#define ODLA_EXT_ITEM_COMPILE_SCRATCH ((odla_item_type)(ODLA_EXT_ITEM_BASE + 3))

/* Bytes of activation memory (one arena) that one context needs to execute a computation.
 * Compiles the computation if it is not compiled yet. */
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_ExtGetArenaBytes(odla_computation computation,
                                                                       odla_size_t *bytes);

/* The arena plan of a compiled computation, for tools that explain memory use
 * (odlac --print-memory-plan). Nodes are the backend's, in execution order. */
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_ExtGetNumNodes(odla_computation computation,
                                                                     odla_int32 *num_nodes);
/* The node's op name (without "odla_"), its first result, and its scratch memory. */
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_ExtGetNodeInfo(
    odla_computation computation, odla_int32 node, const odla_char **op_name,
    odla_value *first_result, odla_size_t *scratch_offset, odla_size_t *scratch_bytes);
/* Where a value lives in the arena and the nodes of its first and last use; values outside
 * the arena (arguments, constants, bound outputs, empty tensors) give ODLA_INVALID_PARAM. */
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_ExtGetValuePlacement(odla_value value,
                                                                           odla_size_t *offset,
                                                                           odla_size_t *bytes,
                                                                           odla_int32 *first_node,
                                                                           odla_int32 *last_node);

/* Bytes odla_StoreExecutable writes for this executable: the size of the buffer to pass
 * with an ODLA_LOCATION_MEMORY location. */
extern ODLA_API_EXPORT odla_status ODLA_API_CALL
odla_ExtGetStoredExecutableBytes(odla_executable executable, odla_size_t *bytes);

/* Sets the key (at least 16 bytes, copied; NULL and 0 clear it) that authenticates stored
 * executables, stored computations and constants arrays, for the whole process: while one is
 * set, odla_StoreExecutable, odla_StoreComputation and odla_StoreConstantsArray sign what they
 * write (HMAC-SHA256), and the matching loaders refuse, before reading anything else of it, a
 * file that is not signed with this key (ODLA_INVALID_PARAM, logged). Without a key, files
 * load whether signed or not: a file's checksum detects corruption, not an attacker. */
extern ODLA_API_EXPORT odla_status ODLA_API_CALL odla_ExtSetExecutableKey(const odla_void *key,
                                                                          odla_size_t key_bytes);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* _ODLA_EXT_H_ */
