# SPDX-License-Identifier: Apache-2.0
#
# Makefile - one non-recursive GNU make file for the whole tree.
#
# Needs GNU make itself (a minimal Debian has none: `apt-get install
# make`, or run scripts/install-deps.sh, which installs make and
# everything else). Every target below installs what else is missing
# through scripts/install-deps.sh (sudo, or as root) on first use.
#
#   make all              all programs (debug build, build/debug/bin/);
#                         the default, so plain `make` too
#   make test             everything that must pass (ASan+UBSan build):
#                         lint, unit tests, fuzz-corpus replay,
#                         integration tests, the image check; fails on
#                         any sanitizer report
#   make run              quickstart: a local API server with Job and
#                         JobSet simulators, the controller, four Jobs
#                         and a JobSet queued, admitted and finished; a
#                         banner says how to reach it, Ctrl-C stops it;
#                         MULTIKUEUE=1: a manager and two workers, each
#                         with its controller, Jobs dispatched and
#                         finished on the workers (scripts/mk-quickstart.py)
#   make image            the controller image (build/image/*.tar)
#   make image-check      build it and check it (part of make test)
#   make image-rootfs     only the image's root file system
#   make release          build/release/cueue.yaml, the install manifest
#                         (IMAGE=, RELEASE_PIN=1, JOBSET_CRD=0)
#   make release-bin      the release cueue-controller in build/release/
#   make bench            benchmarks (never part of make test)
#   make bench-large      Kueue's large-scale scheduler-perf config
#   make bench-moonshot   1,000,000 pending Workloads in 10,000
#                         ClusterQueues on one controller (MOONSHOT_*)
#   make soak             crash, leader-failover and API-fault soaks
#                         (ASan build, about 15 minutes, at most 20)
#   make fuzz             libFuzzer targets, FUZZ_SECONDS each (clang)
#   make valgrind         unit tests under memcheck
#   make lint             format check, module dependencies
#                         (tests/lint/deps.sh), file and function sizes
#                         and internal names (tests/lint/size.sh), banned
#                         functions, raw allocation, references outside
#                         the repository and the file map of
#                         docs/architecture.md (scripts/check-refs.sh),
#                         cppcheck, this help naming every target
#   make format           reformat every source file in place
#   make format-check     only check the formatting (part of lint)
#   make install          the release cueue-controller and kubectl-cueue
#                         (hardened) into $(DESTDIR)$(PREFIX)/bin,
#                         PREFIX=/usr/local
#   make install-dev      every program of the current BUILD (controller,
#                         kubectl-cueue, cueue-apiserver, cueue-bench) into
#                         the same place
#   make deps             install the Debian packages that are missing
#                         (scripts/install-deps.sh)
#   make clean            remove build/
#   make help             this text
#   make help-check       fail unless this text names every target
#                         (part of lint)
#
# Parts of make test, in the current BUILD (make BUILD=asan unit ...):
#   make test-run         lint unit fuzz-replay integration image-check,
#                         without the dependency check
#   make unit             every tests/unit/*_test.c (Criterion)
#   make fuzz-replay      every fuzz target over its saved corpus
#   make integration      tests/integration/run.sh, INT_JOBS=3 files at a
#                         time (longest first); ONLY=t_faith_b runs the
#                         files whose name contains it, CASE=F-B3 the
#                         named cases of a case file
#   make soak-run         the soaks in the current BUILD
#
#   BUILD=debug|release|asan|cov   build flavour (build/$(BUILD)/)
#   BUILDDIR=DIR               override the output directory
#   TEST_BUILD, SOAK_BUILD     flavour of make test / make soak (asan)
#   FUZZ_SECONDS=N             seconds per fuzz target (30)
#   V=1                        show full command lines
#
# New files need no edit here: every <module>/*.c goes into libcueue.a,
# every tests/unit/*_test.c is a Criterion binary (linked with the
# shared fixtures, the other tests/unit/*.c), every tests/fuzz/*_fuzz.c
# is a fuzz target whose corpus tests/fuzz/corpus/<name>/ is replayed by
# make test.

BUILD    ?= debug
BUILDDIR ?= build/$(BUILD)
O        := $(BUILDDIR)
CC       ?= cc
CLANG    ?= clang
Q        := $(if $(V),,@)
PREFIX   ?= /usr/local
VERSION  := $(shell cat VERSION 2>/dev/null || echo 0.0.0)

ifeq ($(filter $(BUILD),debug release asan cov),)
$(error BUILD must be one of: debug release asan cov)
endif

# One output directory holds one build flavour: mixing ASan and plain
# objects links into confusing failures, so say so instead.
FLAVOR_FILE := $(O)/.flavor
ifneq ($(wildcard $(FLAVOR_FILE)),)
ifneq ($(shell cat $(FLAVOR_FILE)),$(BUILD))
$(error $(O) holds a $(shell cat $(FLAVOR_FILE)) build, not $(BUILD): use another BUILDDIR or make clean)
endif
endif


# Libraries with a .pc file go through pkg-config (recursive variables, so
# nothing is evaluated before scripts/install-deps.sh had its chance);
# libev ships none on Debian and is linked by name.
PKGS       := libcurl jansson sqlite3 yaml-0.1 libmicrohttpd gnutls openssl zlib
PKG_CFLAGS  = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS    = $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lev -lm
# GnuTLS (libmicrohttpd's TLS) lets unit tests inspect TLS priorities.
TEST_LIBS   = $(shell pkg-config --libs criterion 2>/dev/null || echo -lcriterion) \
              $(shell pkg-config --libs gnutls 2>/dev/null || echo -lgnutls)

STD   := -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE
WARN  := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
         -Wmissing-prototypes -Wpointer-arith -Wwrite-strings \
         -Wformat=2 -Wvla -Wimplicit-fallthrough -Wundef
SAN   := -fsanitize=address,undefined -fno-omit-frame-pointer \
         -fno-sanitize-recover=all

# Release hardening: PIE, full RELRO with BIND_NOW, a non-executable
# stack, the strong stack protector, and where the compiler has them
# stack-clash protection, control-flow protection (x86 CET) and
# _FORTIFY_SOURCE=3 (glibc 2.34+ with __builtin_dynamic_object_size, gcc
# 12 / clang 9), else 2. Probed only for a release build.
ifeq ($(BUILD),release)
cc_flag = $(shell $(CC) -Werror $(1) -E -x c /dev/null >/dev/null 2>&1 && echo $(1))
H := \#
FORTIFY_LEVEL := $(shell printf '$(H)include <stdio.h>\n$(H)if !defined(__USE_FORTIFY_LEVEL) || __USE_FORTIFY_LEVEL < 3\n$(H)error\n$(H)endif\n' | \
  $(CC) -O2 -U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=3 -E -x c - >/dev/null 2>&1 && echo 3 || echo 2)
HARDEN := -U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=$(FORTIFY_LEVEL) \
  -fstack-protector-strong $(call cc_flag,-fstack-clash-protection) \
  $(call cc_flag,-fcf-protection)
endif

CFLAGS_debug    := -O0 -g3 -DCUEUE_CHECK_INVARIANTS
CFLAGS_release  := -O2 -g $(HARDEN) -fPIE
LDFLAGS_release := -pie -Wl,-z,relro,-z,now,-z,noexecstack
CFLAGS_asan     := -O1 -g $(SAN) -DCUEUE_CHECK_INVARIANTS
LDFLAGS_asan    := $(SAN)
CFLAGS_cov      := -O0 -g --coverage -DCUEUE_CHECK_INVARIANTS
LDFLAGS_cov     := --coverage

ALL_CFLAGS  = $(STD) $(WARN) $(CFLAGS_$(BUILD)) $(PKG_CFLAGS) -I. \
              -DCUEUE_VERSION='"$(VERSION)"' $(EXTRA_CFLAGS)
ALL_LDFLAGS = $(LDFLAGS_$(BUILD)) $(EXTRA_LDFLAGS)

MODULES  := lib api cel namespaces queues tas admission webhook store reconcile controller cli
LIB_SRC  := $(filter-out controller/main.c cli/main.c,$(wildcard $(addsuffix /*.c,$(MODULES))))
LIB_OBJ  := $(LIB_SRC:%.c=$(O)/%.o)
LIBCUEUE := $(O)/libcueue.a

# Programs. cueue-apiserver and cueue-bench live under tests/
# (docs/architecture.md, "Layout").
CTL_SRC    := controller/main.c
# kubectl-cueue, the kubectl plugin (cli/).
CLI_SRC    := cli/main.c
APISRV_SRC := $(wildcard tests/apiserver/*.c)
# cueue-apiserver's protobuf messages: tests/apiserver/*.proto through
# protoc-c into C at build time (the same for every flavour, build/gen/),
# with libprotobuf-c as their runtime; the "zero kept" marks become
# kube_marks.inc. Only cueue-apiserver and what links its library use them.
PROTO_SRC  := $(wildcard tests/apiserver/*.proto)
GEN        := build/gen
PROTO_C    := $(PROTO_SRC:%.proto=$(GEN)/%.pb-c.c)
PROTO_H    := $(PROTO_C:.c=.h) $(GEN)/tests/apiserver/kube_marks.inc
PROTO_CFLAGS = -I$(GEN)/tests/apiserver \
               $(shell pkg-config --cflags libprotobuf-c 2>/dev/null)
PROTO_LIBS   = $(shell pkg-config --libs libprotobuf-c 2>/dev/null || echo -lprotobuf-c)
# The server's internals (all but main) as a library, so that unit tests
# and fuzz targets can drive its handlers in-process.
APISRV_LIB_SRC := $(filter-out tests/apiserver/main.c,$(APISRV_SRC))
LIBAPISRV  := $(O)/libapiserver.a
BENCH_SRC  := $(wildcard tests/bench/*.c)
PROGRAMS   := $(O)/bin/cueue-controller $(O)/bin/kubectl-cueue \
              $(O)/bin/cueue-apiserver \
              $(if $(BENCH_SRC),$(O)/bin/cueue-bench)

UNIT_SRC   := $(wildcard tests/unit/*_test.c)
UNIT_FIX_SRC := $(filter-out $(UNIT_SRC),$(wildcard tests/unit/*.c))
UNIT_BIN   := $(UNIT_SRC:tests/unit/%.c=$(O)/tests/unit/%)
FUZZ_SRC   := $(wildcard tests/fuzz/*_fuzz.c)
FUZZ_NAMES := $(FUZZ_SRC:tests/fuzz/%_fuzz.c=%)
FUZZ_REPLAY:= $(FUZZ_NAMES:%=$(O)/tests/fuzz/%_replay)
ALL_SRC    := $(LIB_SRC) $(CTL_SRC) $(CLI_SRC) $(APISRV_SRC) $(BENCH_SRC) $(UNIT_SRC) \
              $(FUZZ_SRC) tests/fuzz/replay.c $(UNIT_FIX_SRC)
FORMAT_SRC := $(ALL_SRC) $(wildcard */*.h tests/*/*.h)

# Criterion 2.4 reports a leaking test as passed; every log is scanned.
SAN_PATTERN := ERROR: (Address|Leak)Sanitizer|runtime error:|SUMMARY: (Address|UndefinedBehavior)Sanitizer

.PHONY: all test test-run unit fuzz-replay integration run bench bench-large \
        bench-moonshot fuzz \
        valgrind lint format format-check install install-dev clean help deps \
        help-check

all: deps-quiet $(PROGRAMS)

deps:
	@scripts/install-deps.sh --check 2>/dev/null || scripts/install-deps.sh

deps-quiet:
	@pkg-config --exists $(PKGS) || scripts/install-deps.sh

$(FLAVOR_FILE):
	@mkdir -p $(@D) && echo $(BUILD) > $@

$(O)/%.o: %.c | $(FLAVOR_FILE)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(LIBCUEUE): $(LIB_OBJ)
	$(if $(Q),@echo "  AR      $@")
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(O)/bin/cueue-controller: $(CTL_SRC:%.c=$(O)/%.o) $(LIBCUEUE)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(PKG_LIBS) -o $@

$(O)/bin/kubectl-cueue: $(CLI_SRC:%.c=$(O)/%.o) $(LIBCUEUE)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(PKG_LIBS) -o $@

$(GEN)/%.pb-c.c $(GEN)/%.pb-c.h: %.proto
	@command -v protoc-c >/dev/null && pkg-config --exists libprotobuf-c || \
	  scripts/install-deps.sh
	@mkdir -p $(@D)
	$(if $(Q),@echo "  PROTOC  $<")
	$(Q)protoc-c --proto_path=$(<D) --c_out=$(@D) $<

$(GEN)/tests/apiserver/kube_marks.inc: tests/apiserver/kube.proto
	@mkdir -p $(@D)
	$(Q)awk '/^message /{m=$$2} \
	  /\/\/ zero kept$$/{print "{\"" m "." $$3 "\", MARK_ZERO_KEPT},"} \
	  /\/\/ inline$$/{print "{\"" m "." $$3 "\", MARK_INLINE},"}' $< | \
	  LC_ALL=C sort > $@.tmp && mv $@.tmp $@

# Generated code: the project's warnings are not its author's.
$(O)/gen/%.pb-c.o: $(GEN)/%.pb-c.c | $(FLAVOR_FILE)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(STD) $(CFLAGS_$(BUILD)) $(PROTO_CFLAGS) -w -c $< -o $@

$(APISRV_LIB_SRC:%.c=$(O)/%.o): | $(PROTO_H)
$(APISRV_LIB_SRC:%.c=$(O)/%.o): ALL_CFLAGS += $(PROTO_CFLAGS)

$(LIBAPISRV): $(APISRV_LIB_SRC:%.c=$(O)/%.o) $(PROTO_SRC:%.proto=$(O)/gen/%.pb-c.o)
	$(if $(Q),@echo "  AR      $@")
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(O)/bin/cueue-apiserver: $(O)/tests/apiserver/main.o $(LIBAPISRV) $(LIBCUEUE)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(PKG_LIBS) $(PROTO_LIBS) -o $@

$(O)/bin/cueue-bench: $(BENCH_SRC:%.c=$(O)/%.o) $(LIBCUEUE)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(PKG_LIBS) -o $@

$(O)/tests/unit/%: $(O)/tests/unit/%.o $(UNIT_FIX_SRC:%.c=$(O)/%.o) \
    $(LIBAPISRV) $(LIBCUEUE)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(TEST_LIBS) $(PKG_LIBS) $(PROTO_LIBS) -o $@

$(O)/tests/fuzz/%_replay: $(O)/tests/fuzz/%_fuzz.o $(O)/tests/fuzz/replay.o $(LIBAPISRV) $(LIBCUEUE)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(PKG_LIBS) $(PROTO_LIBS) -o $@

# ---- make test -------------------------------------------------------

TEST_BUILD ?= asan
test: deps
	@$(MAKE) --no-print-directory BUILD=$(TEST_BUILD) test-run

test-run: lint unit fuzz-replay integration image-check
	@echo "make test: all suites passed"

unit: $(UNIT_BIN)
	@mkdir -p $(O)/logs; fail=0; \
	for t in $(UNIT_BIN); do \
	  n=$$(basename $$t); log=$(O)/logs/unit-$$n.log; \
	  ASAN_OPTIONS=detect_leaks=1 $$t --jobs=2 > $$log 2>&1; rc=$$?; \
	  tail -n 1 $$log | sed "s/^/  $$n: /"; \
	  if [ $$rc -ne 0 ]; then cat $$log; echo "FAIL: $$n (exit $$rc)"; fail=1; fi; \
	  if grep -qE '$(SAN_PATTERN)' $$log; then cat $$log; \
	    echo "FAIL: $$n: sanitizer report in $$log"; fail=1; fi; \
	done; exit $$fail

fuzz-replay: $(FUZZ_REPLAY)
	@mkdir -p $(O)/logs; fail=0; \
	for n in $(FUZZ_NAMES); do \
	  log=$(O)/logs/fuzz-$$n.log; \
	  $(O)/tests/fuzz/$${n}_replay tests/fuzz/corpus/$$n > $$log 2>&1; rc=$$?; \
	  tail -n 1 $$log | sed "s/^/  fuzz $$n: /"; \
	  if [ $$rc -ne 0 ] || grep -qE '$(SAN_PATTERN)' $$log; then \
	    cat $$log; echo "FAIL: fuzz replay $$n"; fail=1; fi; \
	done; exit $$fail

integration: $(PROGRAMS)
	@CUEUE_BIN=$(abspath $(O)/bin) CUEUE_LOGS=$(abspath $(O)/logs) \
	  SAN_PATTERN='$(SAN_PATTERN)' tests/integration/run.sh

# ---- other entry points ----------------------------------------------

run: deps
	@$(MAKE) --no-print-directory all
ifeq ($(MULTIKUEUE),1)
	@CUEUE_BIN=$(abspath $(O)/bin) /usr/bin/python3 scripts/mk-quickstart.py
else
	@CUEUE_BIN=$(abspath $(O)/bin) scripts/quickstart.sh
endif

bench: deps
	@$(MAKE) --no-print-directory BUILD=release all
	@CUEUE_BIN=$(abspath build/release/bin) tests/bench/run.sh
	@echo "== MultiKueue: 1 manager, 3 workers, 3,000 Jobs"
	@CUEUE_BIN=$(abspath build/release/bin) /usr/bin/python3 tests/bench/mk_bench.py

bench-large: deps
	@$(MAKE) --no-print-directory BUILD=release all
	@BENCH_ONLY=large CUEUE_BIN=$(abspath build/release/bin) tests/bench/run.sh

bench-moonshot: deps
	@$(MAKE) --no-print-directory BUILD=release all
	@CUEUE_BIN=$(abspath build/release/bin) /usr/bin/python3 tests/bench/moonshot.py

# Long soaks (tests/soak/): 100+ SIGKILLs of the controller during a
# scaled-down scheduler-perf run, repeated leader kills and pauses, and
# the API fault soak; a summary at the end. Never part of make test.
SOAK_BUILD ?= asan
.PHONY: soak soak-run
soak: deps
	@$(MAKE) --no-print-directory BUILD=$(SOAK_BUILD) soak-run

soak-run: $(PROGRAMS)
	@CUEUE_BIN=$(abspath $(O)/bin) CUEUE_LOGS=$(abspath $(O)/logs/soak) \
	  SAN_PATTERN='$(SAN_PATTERN)' tests/soak/run.sh

# make fuzz: every tests/fuzz/*_fuzz.c under libFuzzer (clang, ASan and
# UBSan), FUZZ_SECONDS each. The library sources are compiled once with
# coverage instrumentation into build/fuzz/. A finding does not stop the
# run: every target runs, a summary table follows (executions, new corpus
# units, findings), and the exit status is non-zero if any target found
# something or failed to build. Findings are in build/fuzz/artifacts/<name>/;
# copy each into tests/fuzz/corpus/<name>/ (replayed by make test) with
# its fix. New units stay in build/fuzz/corpus-<name>/.
FUZZ_SECONDS ?= 30
FUZZ_TARGETS ?= $(FUZZ_NAMES)
FUZZ_DIR   := build/fuzz
FUZZ_FLAGS := $(STD) -g -O1 -fsanitize=fuzzer-no-link,address,undefined \
              -fno-sanitize-recover=undefined -fno-omit-frame-pointer -I. \
              -DCUEUE_VERSION='"$(VERSION)"'
FUZZ_LIB_OBJ := $(patsubst %.c,$(FUZZ_DIR)/obj/%.o,$(LIB_SRC) $(APISRV_LIB_SRC)) \
                $(PROTO_SRC:%.proto=$(FUZZ_DIR)/obj/gen/%.pb-c.o)

$(FUZZ_DIR)/obj/%.o: %.c | $(PROTO_H)
	@mkdir -p $(@D)
	$(if $(Q),@echo "  FUZZCC  $<")
	$(Q)$(CLANG) $(FUZZ_FLAGS) $(PKG_CFLAGS) $(PROTO_CFLAGS) -MMD -MP -c $< -o $@

$(FUZZ_DIR)/obj/gen/%.pb-c.o: $(GEN)/%.pb-c.c
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_FLAGS) $(PROTO_CFLAGS) -w -c $< -o $@

$(FUZZ_DIR)/libcueue-fuzz.a: $(FUZZ_LIB_OBJ)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(FUZZ_DIR)/bin/%: tests/fuzz/%_fuzz.c $(FUZZ_DIR)/libcueue-fuzz.a
	@mkdir -p $(@D)
	$(if $(Q),@echo "  FUZZLD  $@")
	$(Q)$(CLANG) $(FUZZ_FLAGS) -fsanitize=fuzzer $(PKG_CFLAGS) $< \
	  $(FUZZ_DIR)/libcueue-fuzz.a $(PKG_LIBS) $(PROTO_LIBS) -o $@

fuzz: deps
	@$(MAKE) --no-print-directory -k $(FUZZ_TARGETS:%=$(FUZZ_DIR)/bin/%) || true
	@mkdir -p $(FUZZ_DIR); sum=$(FUZZ_DIR)/summary.txt; fail=0; \
	printf '%-14s %12s %9s %9s\n' target executions new-units findings > $$sum; \
	for n in $(FUZZ_TARGETS); do \
	  b=$(FUZZ_DIR)/bin/$$n; a=$(FUZZ_DIR)/artifacts/$$n; log=$(FUZZ_DIR)/$$n.log; \
	  if [ ! -x $$b ]; then \
	    printf '%-14s %12s %9s %9s\n' $$n - - build-failed >> $$sum; fail=1; continue; fi; \
	  echo "  FUZZ    $$n ($(FUZZ_SECONDS)s)"; \
	  rm -rf $$a; mkdir -p $$a $(FUZZ_DIR)/corpus-$$n; \
	  $$b -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
	    -print_final_stats=1 -artifact_prefix=$$a/ \
	    $(FUZZ_DIR)/corpus-$$n tests/fuzz/corpus/$$n > $$log 2>&1; \
	  ex=$$(sed -n 's/^stat::number_of_executed_units: *//p' $$log | tail -1); \
	  nu=$$(sed -n 's/^stat::new_units_added: *//p' $$log | tail -1); \
	  fi=$$(ls $$a | wc -l); \
	  if [ $$fi -gt 0 ]; then fail=1; \
	    grep -m1 -E 'ERROR: |SUMMARY: |runtime error:|deadly signal' $$log | sed "s/^/    $$n: /"; fi; \
	  printf '%-14s %12s %9s %9s\n' $$n "$${ex:-?}" "$${nu:-?}" $$fi >> $$sum; \
	done; echo; cat $$sum; \
	if [ $$fail -ne 0 ]; then \
	  echo "fuzz: findings in $(FUZZ_DIR)/artifacts/<target>/ (logs: $(FUZZ_DIR)/<target>.log);"; \
	  echo "      copy each into tests/fuzz/corpus/<target>/ and fix it"; exit 1; fi

valgrind:
	@$(MAKE) --no-print-directory BUILD=debug $(UNIT_SRC:tests/unit/%.c=build/debug/tests/unit/%)
	@rm -rf build/debug/vg && mkdir -p build/debug/vg; fail=0; \
	for t in $(UNIT_SRC:tests/unit/%.c=build/debug/tests/unit/%); do \
	  valgrind -q --trace-children=yes --leak-check=full \
	    --errors-for-leak-kinds=definite,indirect --error-exitcode=99 \
	    --log-file=build/debug/vg/%p.log $$t --jobs=1 >/dev/null 2>&1 || fail=1; \
	done; \
	if grep -lE 'ERROR SUMMARY: [1-9]|definitely lost: [1-9]' build/debug/vg/*.log; then fail=1; fi; \
	exit $$fail

format-check:
	@clang-format --dry-run --Werror $(FORMAT_SRC) && echo "  format: clean"

format:
	clang-format -i $(FORMAT_SRC)

BANNED := \b(strcpy|strcat|sprintf|vsprintf|gets|strtok|atoi|atol|system)\s*\(
lint: format-check help-check
	@tests/lint/deps.sh
	@tests/lint/size.sh
	@if grep -nE '$(BANNED)' $(ALL_SRC); then echo "banned function"; exit 1; fi
	@if grep -nE '\b(malloc|calloc|realloc|strdup|free)\s*\(' $(filter-out lib/mem.c,$(ALL_SRC)) | grep -v 'cu_\|json_\|curl_\|sqlite3_\|yaml_\|MHD_\|OPENSSL\|X509\|EVP\|BIO\|BN_\|ASN1' ; then \
	  echo "raw allocation outside lib/mem.c"; exit 1; fi
	@scripts/check-refs.sh
	cppcheck -q --error-exitcode=1 --enable=warning,portability --inline-suppr \
	  -I. --suppress=missingIncludeSystem $(LIB_SRC) $(CTL_SRC) $(CLI_SRC) $(APISRV_SRC) \
	  $(BENCH_SRC)

# make install: what a user runs, the hardened release controller and
# the kubectl plugin, built
# in its own directory whatever BUILD says. make install-dev: every
# program of the current BUILD, for test harnesses outside the tree.
RELEASE_DIR ?= build/release
install: deps-quiet
	@$(MAKE) --no-print-directory BUILD=release BUILDDIR=$(RELEASE_DIR) \
	  $(RELEASE_DIR)/bin/cueue-controller $(RELEASE_DIR)/bin/kubectl-cueue
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(RELEASE_DIR)/bin/cueue-controller \
	  $(RELEASE_DIR)/bin/kubectl-cueue $(DESTDIR)$(PREFIX)/bin/

install-dev: all
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(PROGRAMS) $(DESTDIR)$(PREFIX)/bin/

# ---- image and release manifest ----------------------------------------
#
# make image: the release controller in a distroless-style image assembled
# from this machine's Debian packages by scripts/image.sh with umoci and
# skopeo (no daemon, no registry): build/image/cueue-controller-oci.tar
# (oci-archive) and build/image/cueue-controller-docker.tar (docker load,
# kind load image-archive). make image-check: unpacks and inspects it,
# runs its entrypoint in a chroot (root or an unprivileged user
# namespace), there also against cueue-apiserver of this BUILD until
# ready (tests/image/check.py). make release: build/release/cueue.yaml,
# everything a cluster needs in one file, with IMAGE (and the digest of
# make image when it was built; RELEASE_PIN=1 pins the image by that
# digest; JOBSET_CRD=0 leaves out cueue's JobSet CRD where JobSet is
# installed). IMAGE_SOURCE: the image's source label (default: this
# clone's git remote as an https URL, `scripts/image.sh source`).
IMAGE        ?= cueue-controller:$(VERSION)
IMAGE_DIR    ?= build/image
IMAGE_SOURCE ?=
RELEASE_OUT  ?= build/release/cueue.yaml
IMAGE_ENV     = VERSION='$(VERSION)' IMAGE='$(IMAGE)' SOURCE='$(IMAGE_SOURCE)' \
                REVISION=$$(git rev-parse HEAD 2>/dev/null || echo unknown)
.PHONY: image image-rootfs image-check release release-bin

release-bin: deps-quiet
	@$(MAKE) --no-print-directory BUILD=release BUILDDIR=$(RELEASE_DIR) \
	  $(RELEASE_DIR)/bin/cueue-controller

image-rootfs: release-bin
	@$(IMAGE_ENV) scripts/image.sh rootfs $(RELEASE_DIR)/bin/cueue-controller $(IMAGE_DIR)

image: release-bin
	@$(IMAGE_ENV) scripts/image.sh image $(RELEASE_DIR)/bin/cueue-controller $(IMAGE_DIR)

image-check: image $(O)/bin/cueue-apiserver
	@$(IMAGE_ENV) IMAGE_DIR=$(IMAGE_DIR) APISERVER=$(abspath $(O)/bin/cueue-apiserver) \
	  /usr/bin/python3 tests/image/check.py

release:
	@IMAGE='$(IMAGE)' RELEASE_PIN='$(RELEASE_PIN)' JOBSET_CRD='$(JOBSET_CRD)' \
	  DIGEST_FILE=$(IMAGE_DIR)/digest /usr/bin/python3 scripts/release.py $(RELEASE_OUT)

clean:
	rm -rf build

# The comment block at the top of this file, whole.
help:
	@awk 'NR > 2 && !/^#/ { exit } NR > 2 { sub(/^# ?/, ""); print }' Makefile

# Every .PHONY target is named in that text as "make <target>".
help-check:
	@targets=$$(sed -e ':a' -e '/\\$$/N; s/\\\n//; ta' Makefile | \
	  sed -n 's/^\.PHONY://p'); \
	text=$$($(MAKE) --no-print-directory help); \
	for t in $$targets; do \
	  echo "$$text" | grep -E "^  make $$t( |,|$$)" >/dev/null || \
	  { echo "make help does not name make $$t"; exit 1; }; \
	done

.SECONDARY:

-include $(shell find $(O) -name '*.d' 2>/dev/null)
ifneq ($(filter fuzz $(FUZZ_DIR)/%,$(MAKECMDGOALS)),)
-include $(shell find $(FUZZ_DIR)/obj -name '*.d' 2>/dev/null)
endif
