# odlac_add_model(<target> MODEL <model.onnx> [BACKEND <name>] [NAME <id>] [OPTIONS <flags>...])
#
# Compiles an ONNX model with odlac at build time into a static library target <target> that
# exposes <NAME>.h (NAME defaults to <target>) and links the backend odlac::odla_<BACKEND>
# (default: reference; dnnl when libodla_dnnl is installed). The model is recompiled when it,
# its external data or odlac change (odlac's depfile). The weights are written as an object
# for the C compiler's target (--weights=obj), so large weights never go through the C
# compiler; OPTIONS may pass --weights=c, other odlac flags (-O3, --input-shape ...), and
# --weights=bin, in which case the target's ODLAC_WEIGHTS_FILE property names the blob the
# program loads at run time.
include_guard(GLOBAL)

# The triple of the C compiler CMake uses (cross toolchains included), for --target.
function(_odlac_target_triple out)
  if(CMAKE_C_COMPILER_TARGET)
    set(${out} ${CMAKE_C_COMPILER_TARGET} PARENT_SCOPE)
    return()
  endif()
  if(NOT CMAKE_C_COMPILER)
    message(FATAL_ERROR "odlac_add_model: enable the C language first (project(... C))")
  endif()
  execute_process(COMMAND ${CMAKE_C_COMPILER} -dumpmachine OUTPUT_VARIABLE triple
                  OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR triple STREQUAL "")
    message(FATAL_ERROR "odlac_add_model: '${CMAKE_C_COMPILER} -dumpmachine' gives no target "
                        "triple; set CMAKE_C_COMPILER_TARGET")
  endif()
  set(${out} ${triple} PARENT_SCOPE)
endfunction()

function(odlac_add_model target)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "MODEL;BACKEND;NAME" "OPTIONS")
  set(where "odlac_add_model(${target})")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "${where}: unknown arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_MODEL)
    message(FATAL_ERROR "${where}: needs MODEL <model.onnx>")
  endif()
  if(NOT ARG_BACKEND)
    set(ARG_BACKEND reference)
  endif()
  if(NOT ARG_NAME)
    set(ARG_NAME ${target})
  endif()
  if(NOT ARG_NAME MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "${where}: NAME '${ARG_NAME}' is not a C identifier")
  endif()
  if(NOT TARGET odlac::odla_${ARG_BACKEND})
    message(FATAL_ERROR "${where}: backend '${ARG_BACKEND}' is not installed (no "
                        "libodla_${ARG_BACKEND} in ${ODLAC_LIBRARY_DIR}; installed: ${ODLAC_BACKENDS})")
  endif()
  get_filename_component(model "${ARG_MODEL}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(NOT EXISTS "${model}")
    message(FATAL_ERROR "${where}: MODEL '${model}' does not exist")
  endif()

  set(weights obj)
  foreach(opt IN LISTS ARG_OPTIONS)
    if(opt MATCHES "^--weights=(c|bin|obj)$")
      set(weights ${CMAKE_MATCH_1})
    elseif(opt MATCHES "^(-o|--name|--backend|--emit|--weights|-MD|-MF)")
      message(FATAL_ERROR "${where}: OPTIONS may not contain '${opt}'; odlac_add_model sets it")
    endif()
  endforeach()

  set(out "${CMAKE_CURRENT_BINARY_DIR}/${target}.odlac")
  set(n "${ARG_NAME}")
  set(flags --name ${n} --backend ${ARG_BACKEND})
  set(sources "${out}/${n}.c")
  set(extra "")
  if(weights STREQUAL "obj")
    _odlac_target_triple(triple)
    list(APPEND flags --weights=obj --target=${triple})
    list(APPEND sources "${out}/${n}_weights.o")
    set_source_files_properties("${out}/${n}_weights.o" PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
  elseif(weights STREQUAL "c")
    list(APPEND sources "${out}/${n}_weights.c")
  else()
    set(extra "${out}/${n}.weights.bin")
  endif()

  add_custom_command(
    OUTPUT "${out}/${n}.h" ${sources} ${extra} "${out}/${n}.json"
    COMMAND odlac::odlac "${model}" -o "${out}" ${flags} ${ARG_OPTIONS} -MD -MF "${out}/${n}.d"
    DEPENDS "${model}" odlac::odlac
    DEPFILE "${out}/${n}.d"
    COMMENT "odlac: compiling ${ARG_MODEL} into ${n}"
    VERBATIM)
  add_library(${target} STATIC "${out}/${n}.h" ${sources})
  set_target_properties(${target} PROPERTIES C_STANDARD 99 POSITION_INDEPENDENT_CODE ON
                                             ODLAC_WEIGHTS_FILE "${extra}")
  target_include_directories(${target} PUBLIC "${out}")
  target_link_libraries(${target} PUBLIC odlac::odla_${ARG_BACKEND})
endfunction()
