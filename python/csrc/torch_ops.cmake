# liblnlinear_torch.so: the C++ autograd op (lnlinear_torch.cpp), built next to
# liblnlinear.so where python/lnlinear/_cpp.py looks for it.
#
# LNL_BUILD_TORCH_OPS: AUTO builds it when the Python interpreter imports torch (and not
# in sanitizer or fuzz builds: torch is not built for them); ON makes a missing torch an
# error; OFF never builds it. Paths and the C++ ABI come from torch itself rather than
# find_package(Torch), whose CMake files look for CUDA and cuDNN the op does not use.
# Not linked to liblnlinear (the Python package hands it the library's functions) nor to
# CUDA or Python: torch_cpu and c10 only, already loaded when torch is imported.

set(LNL_BUILD_TORCH_OPS AUTO CACHE STRING "Build the PyTorch C++ autograd op: AUTO, ON or OFF")
set_property(CACHE LNL_BUILD_TORCH_OPS PROPERTY STRINGS AUTO ON OFF)

set(LNL_HAVE_TORCH_OPS OFF)
if(LNL_BUILD_TORCH_OPS STREQUAL "AUTO" AND (LNL_SANITIZE OR LNL_TSAN OR LNL_FUZZ))
  message(STATUS "lnlinear: torch op skipped in sanitizer/fuzz builds")
elseif(NOT LNL_BUILD_TORCH_OPS STREQUAL "OFF")
  # scikit-build-core passes Python3_EXECUTABLE (the pip interpreter); else the first found.
  if(NOT Python3_EXECUTABLE)
    find_package(Python3 COMPONENTS Interpreter)
  endif()
  set(_lnl_torch_rc 1)
  if(Python3_EXECUTABLE)
    # Not cached: a configure after `pip install torch` finds it.
    execute_process(
      COMMAND ${Python3_EXECUTABLE} -c
        "import torch, torch.utils.cpp_extension as e; print(','.join(e.include_paths())); print(','.join(e.library_paths())); print(int(torch._C._GLIBCXX_USE_CXX11_ABI)); print(torch.__version__)"
      OUTPUT_VARIABLE _lnl_torch_out RESULT_VARIABLE _lnl_torch_rc ERROR_QUIET
      OUTPUT_STRIP_TRAILING_WHITESPACE)
  endif()
  if(_lnl_torch_rc EQUAL 0)
    string(REPLACE "\n" ";" _lnl_torch_lines "${_lnl_torch_out}")
    list(GET _lnl_torch_lines 0 _lnl_torch_inc)
    list(GET _lnl_torch_lines 1 _lnl_torch_libdir)
    string(REPLACE "," ";" _lnl_torch_libdir "${_lnl_torch_libdir}")
    list(GET _lnl_torch_lines 2 _lnl_torch_abi)
    list(GET _lnl_torch_lines 3 _lnl_torch_version)
    string(REPLACE "," ";" _lnl_torch_inc "${_lnl_torch_inc}")
    set(LNL_HAVE_TORCH_OPS ON)
  elseif(LNL_BUILD_TORCH_OPS STREQUAL "ON")
    message(FATAL_ERROR "lnlinear: LNL_BUILD_TORCH_OPS=ON but '${Python3_EXECUTABLE}' cannot import torch")
  endif()
endif()
message(STATUS "lnlinear: torch op ${LNL_HAVE_TORCH_OPS} ${_lnl_torch_version}")

if(LNL_HAVE_TORCH_OPS)
  enable_language(CXX)
  find_library(LNL_TORCH_CPU torch_cpu PATHS ${_lnl_torch_libdir} NO_DEFAULT_PATH REQUIRED)
  find_library(LNL_C10 c10 PATHS ${_lnl_torch_libdir} NO_DEFAULT_PATH REQUIRED)
  add_library(lnlinear_torch SHARED ${PROJECT_SOURCE_DIR}/python/csrc/lnlinear_torch.cpp)
  # torch 2.15's headers need C++20 (older ones compile under it too)
  target_compile_features(lnlinear_torch PRIVATE cxx_std_20)
  target_compile_definitions(lnlinear_torch PRIVATE _GLIBCXX_USE_CXX11_ABI=${_lnl_torch_abi})
  # SYSTEM: warnings are ours to fix, not torch's
  target_include_directories(lnlinear_torch SYSTEM PRIVATE ${_lnl_torch_inc})
  target_include_directories(lnlinear_torch PRIVATE ${PROJECT_SOURCE_DIR}/include)
  target_link_libraries(lnlinear_torch PRIVATE ${LNL_TORCH_CPU} ${LNL_C10} ${CMAKE_DL_LIBS})
  set_target_properties(lnlinear_torch PROPERTIES
    LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}
    BUILD_RPATH "${_lnl_torch_libdir}"
    # installed into site-packages/lnlinear, beside site-packages/torch
    INSTALL_RPATH "$ORIGIN/../torch/lib")
  if(SKBUILD)
    install(TARGETS lnlinear_torch LIBRARY DESTINATION lnlinear)
  endif()
endif()
