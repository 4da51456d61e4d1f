# cartsim: `make run` builds and runs the main job, `make test` the suite.
# Both install missing Debian packages first (see `deps`).

CC      ?= cc
BUILD   ?= build
PREFIX  ?= /usr/local
DESTDIR ?=

CUDA_HOME ?= /usr/local/cuda
DEB_PACKAGES = build-essential pkg-config libcriterion-dev libinih-dev libsdl2-dev libstb-dev librandom123-dev \
               libopenmpi-dev openmpi-bin

WARN    = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wno-unused-parameter
# CFLAGS is the user's (optimization, sanitizers); CS_CFLAGS is what the
# project needs whatever CFLAGS says.
CFLAGS  ?= -O2 -g
CS_CFLAGS = -std=c11 -D_GNU_SOURCE -fPIC $(WARN) -ffp-contract=off -I. -Ijit -Isim -Iagents -I$(BUILD)/gen
LDLIBS  = -lm -ldl -lpthread

# The CUDA headers are optional: without them the cuda backend builds as "unavailable".
ifneq ($(wildcard $(CUDA_HOME)/include/cuda.h),)
CS_CFLAGS += -DCS_HAVE_CUDA_HEADERS -I$(CUDA_HOME)/include
endif

# SDL2 is optional too: without it render/ builds as "unavailable" and says how
# to get it. sdl2-config, else pkg-config, decides; `make SDL2=no` leaves it out.
SDL2 ?= auto
ifneq ($(SDL2),no)
SDL2_LIBS   := $(shell sdl2-config --libs 2>/dev/null || pkg-config --libs sdl2 2>/dev/null)
SDL2_CFLAGS := $(shell sdl2-config --cflags 2>/dev/null || pkg-config --cflags sdl2 2>/dev/null)
ifneq ($(SDL2_LIBS),)
CS_CFLAGS += -DCS_HAVE_SDL2 $(SDL2_CFLAGS)
LDLIBS    += $(SDL2_LIBS)
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

# The floors (DESIGN.md): the library is jit/, sim/, agents/ and render/; the
# program (cli/) sits on top of it.
LIB_SRC  = $(wildcard jit/*.c) $(wildcard sim/*.c) $(wildcard agents/*.c) $(wildcard render/*.c)
CLI_SRC  = $(wildcard cli/*.c)
TEST_SRC = $(wildcard tests/test_*.c)
PRELUDE  = jit/lanes.h jit/philox.h jit/rng.h jit/mathf.h

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

LIB_OBJ  = $(LIB_SRC:%.c=$(BUILD)/%.o) $(BUILD)/gen/prelude.o $(BUILD)/gen/builtin_envs.o
CLI_OBJ  = $(CLI_SRC:%.c=$(BUILD)/%.o)
TEST_OBJ = $(TEST_SRC:%.c=$(BUILD)/%.o)

.PHONY: all run test check asan deps install clean bench fuzz fuzz-build

all: $(BUILD)/libcartsim.a $(BUILD)/libcartsim.so $(BUILD)/cartsim $(BUILD)/example

# run and test install the packages first, then build in a second make, which
# reads this file again and so finds the optional libraries just installed.
run: deps
	@$(MAKE) --no-print-directory all
	$(BUILD)/cartsim --envs 2048 --steps 10000 --unroll 10

test: deps
	@$(MAKE) --no-print-directory check

# The suite without the package check; its kernels go to a cache of its own
# under $(BUILD), not the user's.
check: $(BUILD)/libcartsim.a $(BUILD)/cartsim $(BUILD)/example $(BUILD)/test_suite
	@mkdir -p -m 700 $(BUILD)/test-cache
	XDG_CACHE_HOME=$(CURDIR)/$(BUILD)/test-cache CARTSIM_ROOT=$(CURDIR) CARTSIM_BIN=$(CURDIR)/$(BUILD)/cartsim CARTSIM_GOLDEN=$(CURDIR)/../shared/golden \
		CARTSIM_EXAMPLE=$(CURDIR)/$(BUILD)/example \
		$(BUILD)/test_suite --jobs 2 $(TEST_ARGS)

# The whole suite under AddressSanitizer and UndefinedBehaviorSanitizer.
asan: deps
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 $(MAKE) BUILD=build-asan CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
		LDFLAGS="-fsanitize=address,undefined" test TEST_ARGS="$(TEST_ARGS)"

# Install what the build needs from Debian, as root or through sudo; otherwise
# stop with the exact command to run.
deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		cmd="apt-get install -y --no-install-recommends$$missing"; \
		if [ "$$(id -u)" = 0 ]; then echo "installing:$$missing"; \
			(apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$cmd) >/dev/null || exit 1; \
		elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then \
			sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive $$cmd >/dev/null || exit 1; \
		else echo "cartsim needs:$$missing"; echo "run: sudo apt-get update && sudo $$cmd"; exit 1; fi; \
	fi

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CS_CFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/gen/%.o: $(BUILD)/gen/%.c
	$(CC) $(CS_CFLAGS) $(CFLAGS) -c $< -o $@

# The headers every generated kernel starts with, as one string.
$(BUILD)/gen/prelude.c: $(PRELUDE)
	@mkdir -p $(dir $@)
	@{ echo '/* generated from $(PRELUDE) */'; echo 'const char cs_prelude_text[] ='; \
	   cat $(PRELUDE) | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/'; echo ';'; } > $@

# Every envs/*.env, compiled in so `--env NAME` works from anywhere.
$(BUILD)/gen/builtin_envs.c: $(wildcard envs/*.env)
	@mkdir -p $(dir $@)
	@{ echo '/* generated from the files in envs/ */'; echo '#include "builtin_envs.h"'; \
	   echo 'const cs_builtin_env cs_builtin_envs[] = {'; \
	   for f in $^; do n=$$(basename $$f .env); echo "{\"$$n\","; \
	     sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $$f; echo '},'; done; \
	   echo '{0, 0}};'; } > $@

$(BUILD)/libcartsim.a: $(LIB_OBJ)
	ar rcs $@ $^

$(BUILD)/libcartsim.so: $(LIB_OBJ)
	$(CC) -shared $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/cartsim: $(CLI_OBJ) $(BUILD)/libcartsim.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(CLI_LDLIBS)

# The example of cartsim.h and README.md, built against the installed layout.
$(BUILD)/example: tests/example.c $(BUILD)/libcartsim.a
	$(CC) $(CS_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libcartsim.a $(LDLIBS)

$(BUILD)/test_suite: $(TEST_OBJ) $(BUILD)/libcartsim.a
	$(CC) $(LDFLAGS) -o $@ $^ -lcriterion $(LDLIBS)

install: $(BUILD)/libcartsim.a $(BUILD)/libcartsim.so $(BUILD)/cartsim
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include \
		$(DESTDIR)$(PREFIX)/share/cartsim/envs
	install -m 755 $(BUILD)/cartsim $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(BUILD)/libcartsim.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(BUILD)/libcartsim.so $(DESTDIR)$(PREFIX)/lib/
	install -m 644 sim/cartsim.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 envs/*.env $(DESTDIR)$(PREFIX)/share/cartsim/envs/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBS@|$(LDLIBS)|' -e 's|@VERSION@|$(shell sed -n 's/.*CS_VERSION_STRING "\(.*\)"/\1/p' sim/cartsim.h)|' \
		sim/cartsim.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/cartsim.pc

# The benchmark suite (not part of `make test`): the seed paper's experiments, the
# peers (in build/bench-venv), plots and bench/RESULTS.md; BENCH_ARGS=--quick for a smoke run.
bench: all
	python3 bench/bench.py $(BENCH_ARGS)

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
FUZZ_CLI_OBJ  = $(filter-out $(BUILD)/cli/main.o,$(CLI_OBJ))

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
	$(CC) $(CS_CFLAGS) -Icli $(CFLAGS) -fsanitize=fuzzer $(LDFLAGS) -o $@ $^ $(LDLIBS) $(CLI_LDLIBS)

clean:
	rm -rf build build-asan build-fuzz

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
