# cartsim: `make run` builds and runs the main job, `make test` the suite.
# Both install missing Debian packages first (see `deps`).

CC      ?= cc
BUILD   ?= build
PREFIX  ?= /usr/local
DESTDIR ?=

CUDA_HOME ?= /usr/local/cuda
DEB_PACKAGES = build-essential pkg-config libcriterion-dev libinih-dev libsdl2-dev libstb-dev librandom123-dev \
               libopenmpi-dev openmpi-bin fonts-dejavu-core python3 python3-venv

WARN    = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wno-unused-parameter
# CFLAGS is the user's (optimization, sanitizers); CS_CFLAGS is what the
# project needs whatever CFLAGS says.
CFLAGS  ?= -O2 -g
CS_CFLAGS = -std=c11 -D_GNU_SOURCE -fPIC -fvisibility=hidden $(WARN) -ffp-contract=off -I. -Ijit -Isim -Iagents -Itrain -I$(BUILD)/gen
LDLIBS  = -lm -ldl -lpthread

# A short build, a line per file ("  CC      jit/emit.c"), as the Linux kernel
# prints it; `make V=1` shows the whole commands.
ifeq ($(V),1)
Q =
say =
else
Q = @
say = @printf '  %-7s %s\n' '$(1)' '$(2)';
endif

# The CUDA headers are optional: without them the cuda backend builds as "unavailable".
ifneq ($(wildcard $(CUDA_HOME)/include/cuda.h),)
CS_CFLAGS += -DCS_HAVE_CUDA_HEADERS -I$(CUDA_HOME)/include
endif

# SDL2 is optional too, and only the program's viewer (view/) and the tests
# use it: the library never links it. Without it `cartsim view` builds as
# "unavailable" and says how to get it. sdl2-config, else pkg-config,
# decides; `make SDL2=no` leaves it out.
SDL2 ?= auto
VIEW_CFLAGS =
VIEW_LIBS   =
ifneq ($(SDL2),no)
SDL2_LIBS   := $(shell sdl2-config --libs 2>/dev/null || pkg-config --libs sdl2 2>/dev/null)
SDL2_CFLAGS := $(shell sdl2-config --cflags 2>/dev/null || pkg-config --cflags sdl2 2>/dev/null)
ifneq ($(SDL2_LIBS),)
VIEW_CFLAGS = -DCS_HAVE_SDL2 $(SDL2_CFLAGS)
VIEW_LIBS   = $(SDL2_LIBS)
endif
endif

# inih and stb are optional for the same reason (bench/gpu.sh builds on a bare
# GPU machine): without ini.h configuration files, without stb_image_write.h
# PNG frames answer CS_ERR_UNAVAILABLE with the package to install.
# `make INIH=no STB=no` leaves them out; `make test` installs both first.
has_header = $(shell printf '\043include <$(1)>\n' | $(CC) $(CFLAGS) -E -x c - >/dev/null 2>&1 && echo yes)
INIH ?= auto
ifneq ($(INIH),no)
ifeq ($(call has_header,ini.h),yes)
CS_CFLAGS += -DCS_HAVE_INIH
LDLIBS    += -linih
endif
endif
STB ?= auto
ifneq ($(STB),no)
ifeq ($(call has_header,stb/stb_image_write.h),yes)
CS_CFLAGS += -DCS_HAVE_STB
endif
endif

# The floors (DESIGN.md): the library is jit/, agents/, sim/, train/ and render/; the
# program (cli/, with its SDL2 window in view/) sits on top of it.
LIB_SRC  = $(wildcard jit/*.c) $(wildcard sim/*.c) $(wildcard agents/*.c) $(wildcard train/*.c) $(wildcard render/*.c)
CLI_SRC  = $(wildcard cli/*.c)
VIEW_SRC = $(wildcard view/*.c)
TEST_SRC = $(wildcard tests/test_*.c)
PRELUDE  = jit/lanes.h jit/philox.h jit/rng.h jit/mathf.h jit/mathd.h jit/mathi.h

# Open MPI is optional too, and the program's alone (cli/dist.c): the library
# links no MPI. Without it `mpirun -n K build/cartsim` is refused. `make MPI=no`.
MPI ?= auto
ifneq ($(MPI),no)
MPI_CFLAGS := $(shell mpicc --showme:compile 2>/dev/null)
MPI_LIBS   := $(shell mpicc --showme:link 2>/dev/null)
endif
ifneq ($(MPI_LIBS),)
CLI_LDLIBS = $(MPI_LIBS)
$(BUILD)/cli/dist.o: CS_CFLAGS += -DCS_HAVE_MPI $(MPI_CFLAGS)
endif

LIB_OBJ  = $(LIB_SRC:%.c=$(BUILD)/%.o) $(BUILD)/gen/prelude.o $(BUILD)/gen/builtin_envs.o $(BUILD)/gen/ppo_update.o
CLI_OBJ  = $(CLI_SRC:%.c=$(BUILD)/%.o)
VIEW_OBJ = $(VIEW_SRC:%.c=$(BUILD)/%.o)
TEST_OBJ = $(TEST_SRC:%.c=$(BUILD)/%.o)

.PHONY: print-ldlibs all run test check pytest torch-venv ppo-peers-venv asan deps install clean bench gpu-carry bench-arrays bench-ppo-blas bench-mathd bench-sincos-near bench-sleef fuzz fuzz-build golden-suite FORCE

# The shared library's version and SONAME come from cartsim.h's CS_VERSION_*:
# libcartsim.so -> libcartsim.so.MAJOR (the SONAME) -> libcartsim.so.MAJOR.MINOR.PATCH.
cs_version_part = $(shell sed -n 's/^\#define CS_VERSION_$(1) \([0-9]*\)$$/\1/p' sim/cartsim.h)
CS_VERSION := $(call cs_version_part,MAJOR).$(call cs_version_part,MINOR).$(call cs_version_part,PATCH)
SONAME     := libcartsim.so.$(call cs_version_part,MAJOR)

all: $(BUILD)/libcartsim.a $(BUILD)/libcartsim.so $(BUILD)/cartsim $(BUILD)/example

# run and test install the packages first, then build in a second make, which
# reads this file again and so finds the optional libraries just installed.
# The second make builds in parallel, a job per core.
NPROC := $(shell nproc 2>/dev/null || echo 2)

run: deps
	@$(MAKE) --no-print-directory -j$(NPROC) all
	$(BUILD)/cartsim --envs 2048 --steps 10000 --unroll 10

# The Python tests need an uninstrumented libcartsim.so (python3 is not built with ASan).
test: deps
	@$(MAKE) --no-print-directory -j$(NPROC) $(BUILD)/libcartsim.a $(BUILD)/libcartsim.so $(BUILD)/cartsim $(BUILD)/example $(BUILD)/test_suite
	@$(MAKE) --no-print-directory check
	@case "$(CFLAGS)" in *-fsanitize*) echo "pytest: not run under sanitizers";; \
		*) $(MAKE) --no-print-directory pytest;; esac

# The suite without the package check; its kernels go to a cache of its own
# under $(BUILD), not the user's.
check: $(BUILD)/libcartsim.a $(BUILD)/libcartsim.so $(BUILD)/cartsim $(BUILD)/example $(BUILD)/test_suite
	@mkdir -p -m 700 $(BUILD)/test-cache
	$(call say,TEST,$(BUILD)/test_suite)
	$(Q)XDG_CACHE_HOME=$(CURDIR)/$(BUILD)/test-cache CARTSIM_ROOT=$(CURDIR) CARTSIM_BIN=$(CURDIR)/$(BUILD)/cartsim CARTSIM_GOLDEN=$(CURDIR)/../shared/golden \
		CARTSIM_EXAMPLE=$(CURDIR)/$(BUILD)/example CARTSIM_LIB=$(CURDIR)/$(BUILD)/libcartsim.so \
		$(BUILD)/test_suite --jobs 2 $(TEST_ARGS)

# The Python package's tests (python/tests) in a virtual environment of their
# own, with the pinned packages of python/tests/requirements.txt from PyPI; a
# failed pip stops here. The package finds build/libcartsim.so from the checkout;
# its kernels go to the C suite's cache under $(BUILD), not the user's.
PY_VENV = $(BUILD)/py-venv
$(PY_VENV)/installed: python/tests/requirements.txt
	rm -rf $(PY_VENV)
	python3 -m venv $(PY_VENV)
	$(PY_VENV)/bin/pip install --disable-pip-version-check -q -r python/tests/requirements.txt
	touch $@

pytest: $(BUILD)/libcartsim.so $(BUILD)/cartsim $(PY_VENV)/installed
	$(call say,PYTEST,python/tests)
	@mkdir -p -m 700 $(BUILD)/test-cache
	$(Q)XDG_CACHE_HOME=$(CURDIR)/$(BUILD)/test-cache CARTSIM_LIBRARY=$(CURDIR)/$(BUILD)/libcartsim.so CARTSIM_BIN=$(CURDIR)/$(BUILD)/cartsim CARTSIM_HEADER=$(CURDIR)/sim/cartsim.h PYTHONPATH=$(CURDIR)/python \
		$(PY_VENV)/bin/python -m pytest -q -rs -p no:cacheprovider python/tests $(PYTEST_ARGS)

# Opt-in: a Python with PyTorch for tests/test_ppo.c's reference test (one
# PPO update against CleanRL's loss in PyTorch), kept out of the default test
# venv (it is large). Debian's CPU-only python3-torch, seen from a venv of
# the system Python; without it the reference test is skipped, loudly.
TORCH_VENV = $(BUILD)/torch-venv
torch-venv:
	@dpkg-query -W -f='$${Status}' python3-torch 2>/dev/null | grep -q "ok installed" || \
		$(APT_GET) install -y --no-install-recommends python3-torch python3-numpy
	/usr/bin/python3 -m venv --system-site-packages $(TORCH_VENV)
	$(TORCH_VENV)/bin/python -c "import torch, numpy; print('torch', torch.__version__)"

# Opt-in, not part of `make test`: the Python for bench/ppo_bench.py's peers (issue 29):
# PyTorch from its CPU-only index (no CUDA libraries; where that index cannot be reached,
# PyPI's, CUDA libraries and all), then python/examples/ppo.py's imports,
# Stable-Baselines3 and rejax (JAX PPO on gymnax) at the pins of
# bench/ppo_peers_requirements.txt. `make bench` uses it for the peers when it exists.
PPO_PEERS_VENV = $(BUILD)/ppo-peers-venv
PPO_PEERS_TORCH = 2.15.0
$(PPO_PEERS_VENV)/installed: bench/ppo_peers_requirements.txt
	rm -rf $(PPO_PEERS_VENV)
	python3 -m venv $(PPO_PEERS_VENV)
	$(PPO_PEERS_VENV)/bin/pip install --disable-pip-version-check -q --retries 1 --timeout 20 \
		--index-url https://download.pytorch.org/whl/cpu torch==$(PPO_PEERS_TORCH)+cpu || { \
		echo "ppo-peers-venv: PyTorch's CPU-only index is out of reach: PyPI's torch, CUDA libraries and all" >&2; \
		$(PPO_PEERS_VENV)/bin/pip install --disable-pip-version-check -q torch==$(PPO_PEERS_TORCH); }
	$(PPO_PEERS_VENV)/bin/pip install --disable-pip-version-check -q -r bench/ppo_peers_requirements.txt
	$(PPO_PEERS_VENV)/bin/python -c "import torch, gymnasium, stable_baselines3, rejax; print('torch', torch.__version__)"
	touch $@

ppo-peers-venv: $(PPO_PEERS_VENV)/installed

# The whole suite under AddressSanitizer and UndefinedBehaviorSanitizer.
asan: deps
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 $(MAKE) BUILD=build-asan CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
		LDFLAGS="-fsanitize=address,undefined" test TEST_ARGS="$(TEST_ARGS)"

# Install what the build needs from Debian, as root or through sudo; otherwise
# stop with the exact command to run. Another apt or dpkg at work holds the
# lock: wait for it (up to APT_LOCK_WAIT seconds) rather than fail.
APT_LOCK_WAIT ?= 600
APT_GET = apt-get -o DPkg::Lock::Timeout=$(APT_LOCK_WAIT)
# apt-get update takes the package lists' lock without waiting (apt 2.6 honours
# the timeout for dpkg's lock only): it tries again while another apt holds it.
# $(1) is "sudo" or nothing. Any other failure is said and the install goes on.
apt_update = w=0; while ! out=$$($(1) $(APT_GET) update -qq 2>&1); do \
		case "$$out" in *lock*) [ $$w -lt $(APT_LOCK_WAIT) ] || break; sleep 5; w=$$((w + 5));; \
		*) echo "$$out" >&2; break;; esac; done
deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		cmd="$(APT_GET) install -y --no-install-recommends$$missing"; \
		if [ "$$(id -u)" = 0 ]; then echo "installing:$$missing"; \
			$(call apt_update,); DEBIAN_FRONTEND=noninteractive $$cmd >/dev/null || exit 1; \
		elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then \
			$(call apt_update,sudo); sudo DEBIAN_FRONTEND=noninteractive $$cmd >/dev/null || exit 1; \
		else echo "cartsim needs:$$missing"; echo "run: sudo apt-get update && sudo $$cmd"; exit 1; fi; \
	fi

# Only what draws the window (and the tests that drive it) sees SDL2.
$(VIEW_OBJ) $(TEST_OBJ): CS_CFLAGS += $(VIEW_CFLAGS)

# The configuration the objects were compiled with (compiler, flags, which
# optional libraries were found), rewritten only when it changes: objects
# depend on it, so a build after `make test` installed SDL2 or inih, or with
# other CFLAGS, compiles everything again instead of keeping stale objects.
# The build folder's own path is left out: BUILD=build and BUILD=$(CURDIR)/build
# (the install test's) are the same build. Expanded here, once: a target's
# own flags (cli/dist.o's MPI) must not leak into it.
BUILD_CONFIG := $(CC) $(filter-out -I$(BUILD)/gen,$(CS_CFLAGS)) $(CFLAGS) $(LDFLAGS) $(LDLIBS) $(MPI_CFLAGS) $(CLI_LDLIBS) \
                $(VIEW_CFLAGS) $(VIEW_LIBS)
$(BUILD)/gen/flags: FORCE
	@mkdir -p $(dir $@)
	@echo '$(BUILD_CONFIG)' | cmp -s - $@ || echo '$(BUILD_CONFIG)' > $@

FORCE:

$(BUILD)/%.o: %.c $(BUILD)/gen/flags
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) $(CS_CFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/gen/%.o: $(BUILD)/gen/%.c $(BUILD)/gen/flags
	$(call say,CC,$<)
	$(Q)$(CC) $(CS_CFLAGS) $(CFLAGS) -c $< -o $@

# Text as the lines of a C string literal (the embedded sources below).
C_STRING_LINES = sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/'

# The headers every generated kernel starts with, as one string.
$(BUILD)/gen/prelude.c: $(PRELUDE)
	@mkdir -p $(dir $@)
	$(call say,GEN,$@)
	@{ echo '/* generated from $(PRELUDE) */'; echo 'const char cs_prelude_text[] ='; \
	   cat $(PRELUDE) | $(C_STRING_LINES); echo ';'; } > $@

# PPO's update kernels (train/ppo_cuda.c compiles them with NVRTC): the
# struct they share with the host, then the kernels, as one string.
PPO_UPDATE_SRC = train/ppo_update.h train/ppo_update.cu
$(BUILD)/gen/ppo_update.c: $(PPO_UPDATE_SRC)
	@mkdir -p $(dir $@)
	$(call say,GEN,$@)
	@{ echo '/* generated from $(PPO_UPDATE_SRC) */'; echo 'const char cs_ppo_update_source[] ='; \
	   cat $(PPO_UPDATE_SRC) | $(C_STRING_LINES); echo ';'; } > $@

# Every envs/*.env, compiled in so `--env NAME` works from anywhere.
$(BUILD)/gen/builtin_envs.c: $(wildcard envs/*.env)
	@mkdir -p $(dir $@)
	$(call say,GEN,$@)
	@{ echo '/* generated from the files in envs/ */'; echo '#include "builtin_envs.h"'; \
	   echo 'const cs_builtin_env cs_builtin_envs[] = {'; \
	   for f in $^; do n=$$(basename $$f .env); echo "{\"$$n\","; \
	     $(C_STRING_LINES) $$f; echo '},'; done; \
	   echo '{0, 0}};'; } > $@

# Rebuilt from scratch: `ar r` would keep the member of a source file since removed.
$(BUILD)/libcartsim.a: $(LIB_OBJ)
	$(call say,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/libcartsim.so.$(CS_VERSION): $(LIB_OBJ)
	$(call say,LD,$@)
	$(Q)$(CC) -shared -Wl,-soname,$(SONAME) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/libcartsim.so: $(BUILD)/libcartsim.so.$(CS_VERSION)
	$(Q)ln -sf libcartsim.so.$(CS_VERSION) $(BUILD)/$(SONAME)
	$(Q)ln -sf $(SONAME) $@

$(BUILD)/cartsim: $(CLI_OBJ) $(VIEW_OBJ) $(BUILD)/libcartsim.a
	$(call say,LD,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(CLI_LDLIBS) $(VIEW_LIBS)

# The example of cartsim.h and README.md, built against the installed layout.
$(BUILD)/example: tests/example.c $(BUILD)/libcartsim.a
	$(call say,CC,$<)
	$(Q)$(CC) $(CS_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libcartsim.a $(LDLIBS)

$(BUILD)/test_suite: $(TEST_OBJ) $(VIEW_OBJ) $(BUILD)/libcartsim.a
	$(call say,LD,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ -lcriterion $(LDLIBS) $(VIEW_LIBS)

install: $(BUILD)/libcartsim.a $(BUILD)/libcartsim.so $(BUILD)/cartsim
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include \
		$(DESTDIR)$(PREFIX)/share/cartsim/envs
	install -m 755 $(BUILD)/cartsim $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(BUILD)/libcartsim.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(BUILD)/libcartsim.so.$(CS_VERSION) $(DESTDIR)$(PREFIX)/lib/
	ln -sf libcartsim.so.$(CS_VERSION) $(DESTDIR)$(PREFIX)/lib/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(PREFIX)/lib/libcartsim.so
	install -m 644 sim/cartsim.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 envs/*.env $(DESTDIR)$(PREFIX)/share/cartsim/envs/
	sed -e 's|@LIBS@|$(LDLIBS)|' -e 's|@VERSION@|$(CS_VERSION)|' \
		sim/cartsim.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/cartsim.pc

# The benchmark suite (not part of `make test`): the seed paper's experiments, the
# peers (in build/bench-venv), plots and bench/RESULTS.md; BENCH_ARGS=--quick for a smoke run.
# Then PPO's time to solve (bench/ppo_bench.py; PPO_BENCH_ARGS=--quick: cartsim alone, 3 seeds;
# its Python peers need a Python with torch and gymnasium: --python PY, $PPO_BENCH_PYTHON).
bench: all
	python3 bench/bench.py $(BENCH_ARGS)
	python3 bench/ppo_bench.py $(if $(wildcard $(PPO_PEERS_VENV)/installed),--python $(PPO_PEERS_VENV)/bin/python) $(PPO_BENCH_ARGS)

# What bench/gpu_session.sh runs on a lent GPU machine, which has no Criterion:
# the program and the test suite built without the optional libraries, and
# the suite's shared libraries beside them, in .gpu/ (the device tool's carry).
GPU_BUILD = build-gpu
gpu-carry:
	@$(MAKE) --no-print-directory -j$(NPROC) BUILD=$(GPU_BUILD) SDL2=no MPI=no INIH=no STB=no \
		$(GPU_BUILD)/cartsim $(GPU_BUILD)/test_suite
	rm -rf .gpu && mkdir -p .gpu/lib
	cp $(GPU_BUILD)/cartsim $(GPU_BUILD)/test_suite .gpu/
	ldd $(GPU_BUILD)/test_suite | awk '/=> \// { print $$3 }' | grep -v -E '/lib(c|m|resolv|pthread|dl)\.so' | \
		xargs -r -I{} cp -L {} .gpu/lib/
	@du -sh .gpu

# A 10x10x4-state program (MinAtar's Breakout in outline, bench/compile_arrays.c):
# cold compile time from the program to a loaded kernel at unroll 1 and 10, the
# generated C's size, and its rate; a 20x20x4 grid beside it shows the size
# does not grow with the arrays' elements (not part of `make test`).
bench-arrays: $(BUILD)/libcartsim.a
	@mkdir -p $(BUILD)/bench
	$(CC) $(CS_CFLAGS) $(CFLAGS) bench/compile_arrays.c -o $(BUILD)/bench/compile_arrays $(BUILD)/libcartsim.a $(LDLIBS)
	$(BUILD)/bench/compile_arrays

# The environment suite's golden data (tests/golden_suite/, docs/suite.md): written by
# the references' own code (Gymnasium 1.4.0, gymnax 1.0.1), each pip-installed from PyPI
# into a pinned venv under build/golden-suite; not part of `make test`, and the files
# are committed. GOLDEN_SUITE_ARGS="--only Taxi-v4,Breakout-MinAtar" for some of them.
golden-suite:
	python3 tests/golden_suite/generate.py $(GOLDEN_SUITE_ARGS)

# The math benchmarks (not part of `make test` either), built with the cpu
# backend's flags (jit/backend_cpu.c's cc_flags) so that their loops are the
# code a kernel runs: the fast f64 functions' errors (jit/mathd.h), and
# SLEEF against cartsim's own functions (only where libsleef-dev is
# installed: SLEEF is not a dependency, bench/RESULTS.md says why).
BENCH_MATH_CFLAGS = -std=c11 -O3 -march=native -ffp-contract=off -fno-math-errno -fno-trapping-math \
                    -fno-tree-slp-vectorize -fvect-cost-model=unlimited -Wall -Wextra -Ijit
bench-mathd:
	@mkdir -p $(BUILD)/bench
	$(CC) $(BENCH_MATH_CFLAGS) bench/mathd_accuracy.c -o $(BUILD)/bench/mathd_accuracy -lm
	$(BUILD)/bench/mathd_accuracy

# The exact mode's near f64 sin and cos (jit/mathf.h) against glibc on 1e8
# arguments (must be 0 mismatches) and against __float128 (the error bounds).
bench-sincos-near:
	@mkdir -p $(BUILD)/bench
	$(CC) $(BENCH_MATH_CFLAGS) bench/sincos_near.c -o $(BUILD)/bench/sincos_near -lquadmath -lm
	$(BUILD)/bench/sincos_near

bench-sleef:
	@if ! pkg-config --exists sleef; then \
	    echo "bench-sleef: SLEEF is not installed (apt-get install libsleef-dev); nothing to compare"; \
	else \
	    mkdir -p $(BUILD)/bench && \
	    $(CC) $(BENCH_MATH_CFLAGS) $$(pkg-config --cflags sleef) bench/sleef_vs_own.c -o $(BUILD)/bench/sleef_vs_own \
	        $$(pkg-config --libs sleef) -lm && \
	    $(BUILD)/bench/sleef_vs_own; \
	fi

# PPO's dense layers: train/mlp.c's loops against OpenBLAS's sgemm (Debian's
# libopenblas-dev, one thread), built with the library's flags.
bench-ppo-blas: $(BUILD)/libcartsim.a
	@mkdir -p $(BUILD)/bench
	$(CC) $(CS_CFLAGS) $(CFLAGS) -I/usr/include/x86_64-linux-gnu/openblas-pthread bench/ppo_blas.c -o $(BUILD)/bench/ppo_blas \
		$(BUILD)/libcartsim.a -lopenblas $(LDLIBS)
	taskset -c 0 $(BUILD)/bench/ppo_blas

# What a program linking libcartsim.a needs besides it (bench/bench.py asks).
print-ldlibs:
	@echo $(LDLIBS)

# libFuzzer targets (tests/fuzz/fuzz_*.c), built with clang into build-fuzz/
# and run one after the other, FUZZ_SECONDS each, from the seed corpus in
# tests/fuzz/corpus/TARGET with the dictionary tests/fuzz/TARGET.dict if there
# is one; what they learn goes to build-fuzz/corpus/TARGET,
# a crash to build-fuzz/crash-TARGET-*, the run's log to build-fuzz/fuzz_TARGET.log.
# fuzz_differential compiles a kernel per input: 120 s per input instead of 10.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_SAN      = -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CLI_OBJ  = $(filter-out $(BUILD)/cli/main.o,$(CLI_OBJ)) $(VIEW_OBJ)

fuzz:
	@command -v $(FUZZ_CC) >/dev/null || { echo "make fuzz needs clang and its libFuzzer:"; \
		echo "run: sudo apt-get install clang libclang-rt-14-dev"; exit 1; }
	$(MAKE) BUILD=build-fuzz CC=$(FUZZ_CC) LDFLAGS="$(FUZZ_SAN)" \
		CFLAGS="-O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link $(FUZZ_SAN)" fuzz-build
	@for t in $(FUZZ_TARGETS); do \
		mkdir -p build-fuzz/corpus/$$t; \
		echo "fuzz_$$t: $(FUZZ_SECONDS) s from tests/fuzz/corpus/$$t"; \
		build-fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -timeout=$$([ $$t = differential ] && echo 120 || echo 10) \
			-print_final_stats=1 -close_fd_mask=2 \
			$$([ -f tests/fuzz/$$t.dict ] && echo -dict=tests/fuzz/$$t.dict) \
			-artifact_prefix=build-fuzz/crash-$$t- $(FUZZ_ARGS) build-fuzz/corpus/$$t tests/fuzz/corpus/$$t \
			> build-fuzz/fuzz_$$t.log 2>&1; rc=$$?; \
		grep -E '(DONE|INITED) |^stat::' build-fuzz/fuzz_$$t.log; \
		if [ $$rc != 0 ]; then tail -40 build-fuzz/fuzz_$$t.log; exit $$rc; fi; \
	done

fuzz-build: $(FUZZ_TARGETS:%=$(BUILD)/fuzz_%)

# An archive, so that a target links only the CLI pieces it calls.
$(BUILD)/libcartsim-cli.a: $(FUZZ_CLI_OBJ)
	ar rcs $@ $^

$(BUILD)/fuzz_%: tests/fuzz/fuzz_%.c $(BUILD)/libcartsim-cli.a $(BUILD)/libcartsim.a
	$(CC) $(CS_CFLAGS) -Icli $(CFLAGS) -fsanitize=fuzzer $(LDFLAGS) -o $@ $^ $(LDLIBS) $(CLI_LDLIBS) $(VIEW_LIBS)

clean:
	rm -rf build build-asan build-fuzz

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
