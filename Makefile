# The two commands of the README. Both install what they need on a fresh Debian
# machine of this project's kind (2 cores, root, Debian packages and PyPI reachable).
#   make bench   build and run lnl-bench on its embedded default problems
#   make test    build and run the whole test suite (C, sanitizers, fuzz, threads, Python)

JOBS      ?= 2
BUILD     ?= build
PYTHON    ?= python3
FUZZ_SECS ?= 60
CMAKE_GEN := $(shell command -v ninja >/dev/null 2>&1 && echo "-G Ninja")

.PHONY: all build bench test deps-build deps-bench deps-python test-c test-asan test-tsan \
        test-fuzz test-python clean

all: build

deps-build:
	@command -v cmake >/dev/null 2>&1 && command -v cc >/dev/null 2>&1 || \
	  (apt-get update -qq && apt-get install -y -qq cmake build-essential)

# OpenBLAS is the benchmark's CPU baseline only; the library never links it.
deps-bench: deps-build
	@ls /usr/lib/x86_64-linux-gnu/libopenblas.so >/dev/null 2>&1 || \
	  ls /usr/lib/*/libopenblas.so >/dev/null 2>&1 || \
	  (apt-get update -qq && apt-get install -y -qq libopenblas-dev) || \
	  echo "make: libopenblas-dev unavailable; lnl-bench runs without its GEMM baseline"

# torch, pytest and transformers go into the machine's Python (never a venv in the
# checkout): a CI clone then finds them instead of downloading several GB again.
# matplotlib draws bench/compare.py's plots; without it their test only skips.
deps-python:
	@$(PYTHON) -c "import torch, pytest, transformers, numpy, matplotlib" 2>/dev/null || \
	  $(PYTHON) -m pip install -q torch pytest transformers numpy matplotlib

build: deps-build
	cmake -S . -B $(BUILD) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=Release
	cmake --build $(BUILD) -j $(JOBS)

bench: deps-bench build
	@# OpenBLAS picks its AVX-512 kernels only with these two unset: unset them for
	@# this one process, never for the tests.
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $(BUILD)/bench/lnl-bench

test: test-c test-asan test-tsan test-fuzz test-python
	@echo "make test: all suites passed"

test-c: build
	cd $(BUILD) && ctest --output-on-failure -j 1

# AddressSanitizer + UBSan over the same C tests (CPU-only build: nothing CUDA can run here).
test-asan: deps-build
	cmake -S . -B $(BUILD)-asan $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DLNL_ENABLE_CUDA=OFF -DLNL_SANITIZE=ON -DLNL_BUILD_BENCH=OFF
	cmake --build $(BUILD)-asan -j $(JOBS)
	cd $(BUILD)-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j 1

# ThreadSanitizer: 8 threads calling forward and backward at once.
test-tsan: deps-build
	cmake -S . -B $(BUILD)-tsan $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DLNL_ENABLE_CUDA=OFF -DLNL_TSAN=ON -DLNL_BUILD_BENCH=OFF
	cmake --build $(BUILD)-tsan -j $(JOBS) --target test_threads
	cd $(BUILD)-tsan && TSAN_OPTIONS=halt_on_error=1 ./tests/test_threads

# libFuzzer over the C API with ASan + UBSan, from the committed seed corpus.
test-fuzz: deps-build
	CC=clang cmake -S . -B $(BUILD)-fuzz $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DLNL_ENABLE_CUDA=OFF -DLNL_SANITIZE=ON -DLNL_FUZZ=ON -DLNL_BUILD_BENCH=OFF
	cmake --build $(BUILD)-fuzz -j $(JOBS) --target lnl-fuzz
	rm -rf $(BUILD)-fuzz/corpus && mkdir -p $(BUILD)-fuzz/corpus
	$(BUILD)-fuzz/tests/lnl-fuzz -max_total_time=$(FUZZ_SECS) -print_final_stats=1 \
	  $(BUILD)-fuzz/corpus tests/fuzz/corpus

# The Python package against the library just built (pip install . is exercised
# on the GPU machine; here it would compile everything a second time). Configured again
# once torch is surely there, so the C++ autograd op (LNL_BUILD_TORCH_OPS=AUTO) is built
# beside the library; LNLINEAR_EXPECT_CPP makes its absence a failure, not a skip.
test-python: build deps-python
	cmake -S . -B $(BUILD) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=Release -DLNL_BUILD_TORCH_OPS=ON
	cmake --build $(BUILD) -j $(JOBS)
	LNLINEAR_LIBRARY=$(CURDIR)/$(BUILD)/liblnlinear.so PYTHONPATH=$(CURDIR)/python \
	  LNLINEAR_EXPECT_CPP=1 $(PYTHON) -m pytest -q tests/python

clean:
	rm -rf $(BUILD) $(BUILD)-asan $(BUILD)-tsan $(BUILD)-fuzz
