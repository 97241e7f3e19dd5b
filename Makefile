# parasim: the two quick-start commands are `make demo` and `make test`.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=

.PHONY: deps build demo test bench goldens asan-test tsan-test clean

deps:
	@bash scripts/install-deps.sh

build/build.ninja: CMakeLists.txt | deps
	cmake --preset default $(CMAKE_FLAGS)

build: deps build/build.ninja
	cmake --build build -j $(JOBS)

demo: build
	./build/parasim plan --model llama2-7b --cluster dgx-h100 --nodes 32 --global-batch 512 --seq-len 4096 --top 8 --explain --emit megatron

test: build
	cd build && ctest --output-on-failure -j $(JOBS)

bench: deps build/build.ninja
	cmake --build build -j $(JOBS)
	@for b in build/bench/*_bench; do echo "== $$b"; $$b --benchmark_min_time=0.2; done

# Rewrites tests/golden/*.tesh from the built parasim (review the diff).
goldens: build
	bash scripts/update-goldens.sh build

asan-test: deps
	cmake --preset asan $(CMAKE_FLAGS)
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j $(JOBS)

# ThreadSanitizer: only the tests labelled `tsan` (concurrency and library use).
tsan-test: deps
	cmake --preset tsan $(CMAKE_FLAGS)
	cmake --build build-tsan -j $(JOBS) --target tsan_tests
	cd build-tsan && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 ctest --output-on-failure -L tsan -j $(JOBS)

clean:
	rm -rf build build-asan build-tsan build-debug
