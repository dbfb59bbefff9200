// api.cpp: the computation, context and execution functions libodla_dnnl overrides: each
// compiles the computation for oneDNN first (compile.cpp), then does what the reference
// backend does; ODLA_PROCESSOR_NUM sets the OpenMP threads oneDNN uses (and the reference
// kernels' worker threads).
#include "dnnl_backend.h"

#include <chrono>

#include <sys/resource.h>

namespace {

/* ODLA_PROCESSOR_NUM's value: a pointer to a positive odla_int32. */
int processorNum(odla_item_value value) {
  const auto *n = reinterpret_cast<const odla_int32 *>(value);
  return n && *n > 0 ? *n : 0;
}

} // namespace

extern "C" {

const char *odla_GetVersionString(void) { return "odla_dnnl 0.1.0 (ODLA 0.5, oneDNN 2.x)"; }

/* The reference device functions, built into this library, would report their own version. */
odla_status odla_GetDeviceInfo(odla_device device, odla_device_info info_type,
                               odla_scalar_value *info_value) {
  odla_status s = odla_ref_GetDeviceInfo(device, info_type, info_value);
  if (s == ODLA_SUCCESS && info_type == ODLA_DEVICE_INFO_ODLA_LIB_VERSION)
    info_value->val_str = odla_GetVersionString();
  return s;
}

/* Memory regions (odla_ext_memory.h, --no-heap code) are the reference backend's, for
 * microcontrollers: this backend's compiler keeps its nodes, values and primitives on the C++
 * heap, which cannot free or grow a region's blocks. Clearing the current region is harmless. */
odla_status odla_ExtSetMemory(odla_void *base, odla_size_t bytes) {
  if (!base)
    return odla_ref_ExtSetMemory(base, bytes);
  odla_dnnl::logError("ExtSetMemory", "odla_dnnl does not build in memory regions (--no-heap "
                                      "code runs on the reference backend)");
  return ODLA_UNSUPPORTED_OP;
}

odla_status odla_DestroyComputation(odla_computation comp) {
  if (!comp)
    return ODLA_INVALID_PARAM;
  odla_dnnl::forget(comp);
  return odla_ref_DestroyComputation(comp);
}

odla_status odla_SetComputationItem(odla_computation comp, odla_item_type type,
                                    odla_item_value value) {
  if (!comp)
    return ODLA_INVALID_PARAM;
  // The values this backend adds while compiling own copies of their ids (compile.cpp), which
  // a computation of the caller's ids would not free: that item, for scarce memory, is not
  // this backend's.
  if (type == ODLA_EXT_ITEM_STATIC_IDS)
    return ODLA_UNSUPPORTED_DATATYPE;
  if (type != ODLA_PROCESSOR_NUM)
    return odla_ref_SetComputationItem(comp, type, value);
  int threads = processorNum(value);
  if (!threads)
    return ODLA_INVALID_PARAM;
  // The reference kernels of ops oneDNN does not run take the same count (its worker pool).
  odla_status s = odla_ref_SetComputationItem(comp, type, value);
  if (s != ODLA_SUCCESS)
    return s;
  odla_dnnl::setComputationThreads(comp, threads);
  return ODLA_SUCCESS;
}

odla_status odla_CompileComputation(const odla_computation computation, const odla_device device,
                                    odla_executable *executable) {
  if (!computation || !executable)
    return ODLA_INVALID_PARAM;
  odla_status s = odla_dnnl::compile(computation);
  return s != ODLA_SUCCESS ? s : odla_ref_CompileComputation(computation, device, executable);
}

odla_status odla_ExecuteComputation(const odla_computation computation, const odla_context context,
                                    const odla_compute_mode mode, odla_device device) {
  if (!computation || !context)
    return ODLA_INVALID_PARAM;
  odla_status s = odla_dnnl::compile(computation);
  if (s != ODLA_SUCCESS)
    return s;
  int threads = odla_dnnl::contextThreads(context);
  if (!threads)
    threads = odla_dnnl::computationThreads(computation);
  if (threads || !odla_dnnl::chosenThreads()) {
    odla_dnnl::ThreadScope scope(threads ? threads : odla_dnnl::defaultThreads());
    return odla_ref_ExecuteComputation(computation, context, mode, device);
  }
  const bool one = odla_dnnl::oneThreadNext(computation);
  /* one thread chosen: the large products' column blocks still run on the default count */
  const int default_threads =
      odla_dnnl::defaultThreads() ? odla_dnnl::defaultThreads() : omp_get_max_threads();
  odla_dnnl::ThreadScope scope(one ? 1 : odla_dnnl::defaultThreads());
  rusage before{}, after{}; /* a default-count run's preemptions (ThreadChooser) */
  if (!one)
    getrusage(RUSAGE_SELF, &before);
  const auto start = std::chrono::steady_clock::now();
  {
    odla_dnnl::PooledScope pooled(one ? default_threads : 0); /* (its end is part of the run) */
    s = odla_ref_ExecuteComputation(computation, context, mode, device);
  }
  const auto end = std::chrono::steady_clock::now();
  if (!one)
    getrusage(RUSAGE_SELF, &after);
  if (s == ODLA_SUCCESS)
    odla_dnnl::recordRun(computation, one, std::chrono::duration<double>(end - start).count(),
                         after.ru_nivcsw - before.ru_nivcsw);
  return s;
}

odla_status odla_LaunchExecutable(odla_executable executable, odla_context context) {
  if (!executable || !context)
    return ODLA_INVALID_PARAM;
  return odla_ExecuteComputation(executable->comp, context, ODLA_COMPUTE_INFERENCE, nullptr);
}

odla_status odla_ExtGetArenaBytes(odla_computation computation, odla_size_t *bytes) {
  if (!computation || !bytes)
    return ODLA_INVALID_PARAM;
  odla_status s = odla_dnnl::compile(computation);
  return s != ODLA_SUCCESS ? s : odla_ref_ExtGetArenaBytes(computation, bytes);
}

odla_status odla_ExtGetNumNodes(odla_computation computation, odla_int32 *num_nodes) {
  if (!computation || !num_nodes)
    return ODLA_INVALID_PARAM;
  odla_status s = odla_dnnl::compile(computation);
  return s != ODLA_SUCCESS ? s : odla_ref_ExtGetNumNodes(computation, num_nodes);
}

odla_status odla_ExtGetNodeInfo(odla_computation computation, odla_int32 node,
                                const odla_char **op_name, odla_value *first_result,
                                odla_size_t *scratch_offset, odla_size_t *scratch_bytes) {
  if (!computation)
    return ODLA_INVALID_PARAM;
  odla_status s = odla_dnnl::compile(computation);
  return s != ODLA_SUCCESS ? s
                           : odla_ref_ExtGetNodeInfo(computation, node, op_name, first_result,
                                                     scratch_offset, scratch_bytes);
}

/* Stored executables hold the calls that built a computation, replayed through the reference
 * builders when loaded; oneDNN primitives are made by this backend's own builders and
 * compilation, so this backend runs in compile mode only. */
odla_status odla_StoreExecutable(odla_resource_location location, odla_executable executable) {
  (void)location;
  (void)executable;
  odla_dnnl::logError("StoreExecutable",
                      "odla_dnnl does not store executables (compile mode only)");
  return ODLA_UNSUPPORTED_OP;
}

odla_status odla_ExtGetStoredExecutableBytes(odla_executable executable, odla_size_t *bytes) {
  (void)executable;
  (void)bytes;
  odla_dnnl::logError("ExtGetStoredExecutableBytes",
                      "odla_dnnl does not store executables (compile mode only)");
  return ODLA_UNSUPPORTED_OP;
}

odla_status odla_LoadExecutable(odla_resource_location location, odla_device device,
                                odla_executable *executable) {
  (void)location;
  (void)device;
  if (executable)
    *executable = nullptr;
  odla_dnnl::logError("LoadExecutable", "odla_dnnl does not load executables (compile mode only)");
  return ODLA_UNSUPPORTED_OP;
}

/* Asynchronous runs: compiled for oneDNN here, on the caller's thread; the reference worker
 * then runs the rewritten nodes (with the OpenMP thread count of OMP_NUM_THREADS). A constants
 * array cannot replace weights that compiling reordered into oneDNN's layouts. */
odla_status odla_AsyncExecuteComputation(const odla_computation computation,
                                         const odla_context context, const odla_compute_mode mode,
                                         odla_device device) {
  if (!computation || !context)
    return ODLA_INVALID_PARAM;
  odla_status s = odla_dnnl::compile(computation);
  return s != ODLA_SUCCESS ? s
                           : odla_ref_AsyncExecuteComputation(computation, context, mode, device);
}

odla_status odla_AsyncLaunchExecutable(const odla_executable executable,
                                       const odla_constants_array constants_array,
                                       const odla_context context, const odla_compute_mode mode,
                                       odla_device device) {
  if (!executable || !context)
    return ODLA_INVALID_PARAM;
  if (constants_array) {
    odla_dnnl::logError("AsyncLaunchExecutable",
                        "odla_dnnl cannot replace constants its compilation reordered for "
                        "oneDNN: pass a NULL constants array");
    return ODLA_UNSUPPORTED_OP;
  }
  odla_status s = odla_dnnl::compile(executable->comp);
  return s != ODLA_SUCCESS
             ? s
             : odla_ref_AsyncLaunchExecutable(executable, nullptr, context, mode, device);
}

/* Stored computations hold the calls that built them, which this backend does not record
 * (its builders are its own): compile mode only, as for executables. */
odla_status odla_StoreComputation(odla_resource_location location, odla_computation computation) {
  (void)location;
  (void)computation;
  odla_dnnl::logError("StoreComputation",
                      "odla_dnnl does not store computations (compile mode only)");
  return ODLA_UNSUPPORTED_OP;
}

odla_status odla_LoadComputation(odla_resource_location location, odla_computation *computation) {
  (void)location;
  if (computation)
    *computation = nullptr;
  odla_dnnl::logError("LoadComputation",
                      "odla_dnnl does not load computations (compile mode only)");
  return ODLA_UNSUPPORTED_OP;
}

odla_status odla_CreateConstantsArray(odla_constants_array *constants_array) {
  odla_computation comp = ref_current();
  if (comp && odla_dnnl::rewritten(comp)) {
    odla_dnnl::logError("CreateConstantsArray",
                        "the current computation is compiled for oneDNN (its constants may be "
                        "reordered): create the array before compiling or executing it");
    return ODLA_UNSUPPORTED_OP;
  }
  return odla_ref_CreateConstantsArray(constants_array);
}

odla_status odla_SetContextItem(odla_context context, odla_item_type type, odla_item_value value) {
  if (!context)
    return ODLA_INVALID_PARAM;
  if (type != ODLA_PROCESSOR_NUM)
    return odla_ref_SetContextItem(context, type, value);
  int threads = processorNum(value);
  if (!threads)
    return ODLA_INVALID_PARAM;
  odla_status s = odla_ref_SetContextItem(context, type, value); // as SetComputationItem
  if (s != ODLA_SUCCESS)
    return s;
  odla_dnnl::setContextThreads(context, threads);
  return ODLA_SUCCESS;
}

odla_status odla_DestroyContext(odla_context context) {
  if (!context)
    return ODLA_INVALID_PARAM;
  odla_dnnl::forgetContext(context);
  return odla_ref_DestroyContext(context);
}

} // extern "C"
