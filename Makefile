# SPDX-License-Identifier: MIT
# rdma-testbed: kernel-bypass RDMA testbed with orchestration and fault injection.
#   make            build everything into build/
#   make deps       install the Debian packages (idempotent, root)
#   make test       unit tests + SoftRoCE tests in the VM testbed
#   make demo       bring up the default testbed and run the first experiment
#   make install PREFIX=/usr/local
#   V=1             show full commands
VERSION := 0.1.0
# building alone (make, make all, make demo) uses every CPU unless -j says
# otherwise; the test goals keep their one job at a time
ifeq ($(filter-out all demo,$(MAKECMDGOALS)),)
ifeq ($(filter -j%,$(MAKEFLAGS)),)
MAKEFLAGS += -j$(shell nproc)
endif
endif
BUILD   ?= build
OBJ     := $(BUILD)/obj
BIN     := $(BUILD)/bin
LIBEXEC := $(BUILD)/libexec/rdma-testbed
BPFDIR  := $(BUILD)/lib/rdma-testbed/bpf
PREFIX  ?= /usr/local
DESTDIR ?=

CC      ?= gcc
CLANG   ?= clang
BPFTOOL ?= bpftool
ARCH    := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')
MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)

PKG_CONFIG ?= pkg-config
# the user's knobs: CFLAGS (optimisation, sanitizers), LDFLAGS, EXTRA_CFLAGS
CFLAGS  ?= -O2 -g
# what the build needs whatever CFLAGS says (make CFLAGS=-O0 keeps them)
pc_cflags = $(shell $(PKG_CONFIG) --cflags $(1) 2>/dev/null)
pc_libs   = $(shell $(PKG_CONFIG) --libs $(1) 2>/dev/null || echo $(2))
RTB_CFLAGS := -I. -I$(OBJ)/ebpf $(call pc_cflags,libnl-route-3.0 libibverbs) -std=gnu11 \
	   -Wall -Wextra -Werror -Wshadow -Wno-missing-field-initializers -Wno-format-truncation \
	   -D_GNU_SOURCE -DRTB_VERSION='"$(VERSION)"' -MMD -MP
ALL_CFLAGS = $(RTB_CFLAGS) $(CFLAGS) $(EXTRA_CFLAGS)
# libraries every program gets with lib/: JSON (jansson), erasure coding (ISA-L), YAML,
# zlib, and OpenSSL's libcrypto (the control channel's HMAC-SHA256)
LDLIBS_LIB := $(call pc_libs,jansson,-ljansson) $(call pc_libs,libisal,-lisal) \
	      $(call pc_libs,yaml-0.1,-lyaml) $(call pc_libs,zlib,-lz) \
	      $(call pc_libs,libcrypto,-lcrypto)
LIBS_VERBS := $(call pc_libs,libibverbs,-libverbs)
LIBS_CURSES := $(call pc_libs,ncursesw,-lncursesw)
BPF_CFLAGS := -O2 -g -Wall -Werror -target bpf -D__TARGET_ARCH_$(ARCH) -I/usr/include/$(MULTIARCH)

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

.DELETE_ON_ERROR:
.PHONY: all clean deps test test-unit test-softroce test-switch-xdp test-scale test-asan fuzz fuzz-long demo docs bench bench-stacks bench-search bench-doctor install format lint \
	sanitize-objs asan-build fuzz-objs
# the BPF object is an input of the skeleton and of the installed copy: keep
# it, or every second make rebuilds both (make -q after make must say "done")
.SECONDARY:

LIB_SRC  := $(wildcard lib/*.c)
WL_SRC   := $(wildcard workloads/*.c)
AGENT_SRC := $(wildcard agent/*.c)
CTL_SRC  := $(wildcard ctl/*.c ctl/*/*.c)
CTL_LIB_OBJ = $(filter-out $(OBJ)/ctl/main.o,$(call obj,$(CTL_SRC)))
INJ_SRC  := $(wildcard injector/*.c)
UNIT_SRC := $(wildcard tests/unit/*.c)
BPFT_SRC := $(wildcard tests/bpf/*.c)
INJLIB_OBJ = $(filter-out $(OBJ)/injector/main.o,$(call obj,$(INJ_SRC)))
SCRIPTS  := $(wildcard testbed/*.sh)

obj = $(patsubst %.c,$(OBJ)/%.o,$(1))

LIB_OBJ := $(call obj,$(LIB_SRC))
WL_OBJ  := $(call obj,$(WL_SRC))

PROGS := $(BIN)/rdmactl $(BIN)/rdma-agent $(BIN)/rdma-inject $(BIN)/rdma-run
BPF_OBJS := $(BPFDIR)/inject.bpf.o $(BPFDIR)/forward.bpf.o
LIBEXEC_FILES := $(patsubst testbed/%,$(LIBEXEC)/%,$(SCRIPTS))
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRC)) \
	     $(patsubst tests/bpf/%.c,$(BUILD)/tests/bpf_%,$(BPFT_SRC))
LIBS_INJ := $(call pc_libs,libbpf,-lbpf -lelf -lz) $(call pc_libs,libnl-route-3.0,-lnl-route-3 -lnl-3) \
	    $(LDLIBS_LIB) -lm

MANS := $(addprefix $(BUILD)/man/,rdmactl.1 rdma-inject.1 rdma-agent.1 rdma-run.1)

# examples/mpi: Open MPI's mpicc (make deps), staged into the VM image
MPICC := $(shell command -v mpicc 2>/dev/null)
MPI_PROGS := $(if $(MPICC),$(BIN)/rdmatb-mpi-bench)

all: $(PROGS) $(BPF_OBJS) $(LIBEXEC_FILES) $(MANS) $(MPI_PROGS)

$(BIN)/rdmatb-mpi-bench: examples/mpi/mpi_bench.c
	$(call msg,MPICC,$@)
	@mkdir -p $(@D)
	$(Q)$(MPICC) -O2 -Wall -Wextra -Werror $< -o $@

# man pages from the programs' own help (scripts/mkman.sh)
$(MANS) &: $(PROGS) scripts/mkman.sh
	$(call msg,MAN,$(BUILD)/man)
	$(Q)bash scripts/mkman.sh $(BIN) $(BUILD)/man

$(OBJ)/%.o: %.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

# --- report.html's chart library, inlined into rdmactl (ctl/report/assets.c):
# Debian's libjs-dygraphs without its source-map line; one holding
# "</script" would end the page's script early and is refused
DYGRAPHS ?= /usr/share/javascript/dygraphs
ASSETS   := $(OBJ)/assets
$(ASSETS)/dygraph.min.%: $(DYGRAPHS)/dygraph.min.%
	$(call msg,GEN,$@)
	@mkdir -p $(@D)
	$(Q)! grep -qi '</script' $< || { echo "$<: holds </script" >&2; exit 1; }
	$(Q)grep -v 'sourceMappingURL=' $< > $@

$(DYGRAPHS)/dygraph.min.js $(DYGRAPHS)/dygraph.min.css:
	@echo "$@: missing: report.html's chart library is Debian's libjs-dygraphs (make deps)" >&2
	@exit 1

$(OBJ)/ctl/report/assets.o: ALL_CFLAGS += -DRTB_ASSETS='"$(ASSETS)"'
$(OBJ)/ctl/report/assets.o: $(ASSETS)/dygraph.min.js $(ASSETS)/dygraph.min.css \
	ctl/report/charts.js ctl/report/charts.css

# --- eBPF: .bpf.c -> .bpf.o -> skeleton header
$(OBJ)/ebpf/%.bpf.o: ebpf/%.bpf.c
	$(call msg,BPF,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MMD -MP -c $< -o $@

$(OBJ)/ebpf/%.skel.h: $(OBJ)/ebpf/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

$(BPFDIR)/%.bpf.o: $(OBJ)/ebpf/%.bpf.o
	@mkdir -p $(@D)
	$(Q)cp $< $@

$(call obj,$(INJ_SRC)): $(OBJ)/ebpf/inject.skel.h $(OBJ)/ebpf/forward.skel.h

# --- programs
$(BIN)/rdma-agent: $(call obj,$(AGENT_SRC)) $(WL_OBJ) $(LIB_OBJ)
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ $(LIBS_VERBS) $(LDLIBS_LIB) -lpthread -lm

# rdmactl checks profiles against the workloads' option tables and
# rdma-inject's rule grammar: it links both, and no data path (no
# libibverbs: the workloads run in the agents)
$(BIN)/rdmactl: $(call obj,$(CTL_SRC)) $(OBJ)/workloads/opts.o $(OBJ)/injector/rule.o $(LIB_OBJ)
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ $(LDLIBS_LIB) $(LIBS_CURSES) -lpthread -lm

$(BIN)/rdma-inject: $(call obj,$(INJ_SRC)) $(LIB_OBJ)
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ $(LIBS_INJ)

# the node's side of exec workloads: libc only, so that it runs on any host
$(BIN)/rdma-run: $(OBJ)/runner/main.o $(OBJ)/lib/listen.o
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@

$(LIBEXEC)/%.sh: testbed/%.sh
	@mkdir -p $(@D)
	$(Q)install -m 0755 $< $@

# --- tests
$(BUILD)/tests/%: tests/unit/%.c $(LIB_OBJ) $(WL_OBJ)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	@mkdir -p $(OBJ)/tests
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -MF $(OBJ)/tests/$*.d $^ -o $@ $(LIBS_VERBS) $(LDLIBS_LIB) -lpthread -lm

# controller unit tests: the controller's rooms without its main(), no VM
$(BUILD)/tests/test_ctl_%: tests/unit/test_ctl_%.c $(CTL_LIB_OBJ) $(OBJ)/injector/rule.o $(WL_OBJ) $(LIB_OBJ)
	$(call msg,CC,$@)
	@mkdir -p $(@D) $(OBJ)/tests
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -MF $(OBJ)/tests/test_ctl_$*.d $^ -o $@ $(LIBS_VERBS) \
		$(LDLIBS_LIB) $(LIBS_CURSES) -lpthread -lm

# the decoder fuzz test runs under ASan and UBSan, its sources compiled in
FUZZ_SRC := lib/proto.c lib/hist.c lib/opt.c lib/num.c lib/log.c workloads/verbs.c
$(BUILD)/tests/test_fuzz_decode: tests/unit/test_fuzz_decode.c $(FUZZ_SRC)
	$(call msg,CC,$@)
	@mkdir -p $(@D) $(OBJ)/tests
	$(Q)$(CC) $(ALL_CFLAGS) -O1 -fsanitize=address,undefined -fno-sanitize-recover=all \
		-MF $(OBJ)/tests/test_fuzz_decode.d $^ -o $@ $(LIBS_VERBS) $(LDLIBS_LIB) -lm

$(BUILD)/tests/bpf_%: tests/bpf/%.c $(INJLIB_OBJ) $(LIB_OBJ) | $(OBJ)/ebpf/inject.skel.h
	$(call msg,CC,$@)
	@mkdir -p $(@D) $(OBJ)/tests
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -MF $(OBJ)/tests/bpf_$*.d $(filter %.c %.o,$^) -o $@ $(LIBS_INJ)

$(BUILD)/bench/inject_cost: bench/inject_cost.c $(INJLIB_OBJ) $(LIB_OBJ) | $(OBJ)/ebpf/inject.skel.h
	$(call msg,CC,$@)
	@mkdir -p $(@D) $(OBJ)/bench
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -MF $(OBJ)/bench/inject_cost.d $(filter %.c %.o,$^) -o $@ $(LIBS_INJ)

# the forwarding bench: its own programs (sinks, stamps, plain XDP) and the injector's
$(OBJ)/bench/%.bpf.o: bench/%.bpf.c
	$(call msg,BPF,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MMD -MP -c $< -o $@

$(OBJ)/bench/%.skel.h: $(OBJ)/bench/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

$(BUILD)/bench/fwd_bench: bench/fwd_bench.c $(INJLIB_OBJ) $(LIB_OBJ) | $(OBJ)/bench/fwd_bench.skel.h
	$(call msg,CC,$@)
	@mkdir -p $(@D) $(OBJ)/bench
	$(Q)$(CC) $(ALL_CFLAGS) -I$(OBJ)/bench $(LDFLAGS) -MF $(OBJ)/bench/fwd_bench.d $(filter %.c %.o,$^) -o $@ $(LIBS_INJ)

# --- sanitized builds: the same sources again, in their own build trees.
# build/asan: gcc, ASan + UBSan (every unit test and a testbed run use it);
# build/fuzz: clang's libFuzzer instrumentation + ASan + UBSan, and four
# harnesses (tests/fuzz/) linked against it
ASAN_BUILD := $(BUILD)/asan
FUZZ_BUILD := $(BUILD)/fuzz
ASAN_FLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_FLAGS := -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined \
	      -Wno-error -w
FUZZ_NAMES := profile frame rule report trace
fuzz_objs = $(patsubst $(OBJ)/%,$(FUZZ_BUILD)/obj/%,$(CTL_LIB_OBJ) $(OBJ)/injector/rule.o $(WL_OBJ) \
	    $(LIB_OBJ))
FUZZ_BINS := $(patsubst %,$(FUZZ_BUILD)/fuzz_%,$(FUZZ_NAMES))

# what a sanitized tree needs: the programs, the unit tests, the libraries' objects
sanitize-objs: all $(UNIT_BINS) $(CTL_LIB_OBJ) $(OBJ)/injector/rule.o $(WL_OBJ) $(LIB_OBJ)

asan-build:
	$(Q)$(MAKE) --no-print-directory BUILD=$(ASAN_BUILD) CFLAGS="$(ASAN_FLAGS)" \
		LDFLAGS="-fsanitize=address,undefined" sanitize-objs

# (phony: the sub-make decides what is out of date; the harnesses relink)
fuzz-objs:
	$(Q)$(MAKE) --no-print-directory BUILD=$(FUZZ_BUILD) CC=clang CFLAGS="$(FUZZ_FLAGS)" \
		$(fuzz_objs)

$(FUZZ_BINS): $(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c fuzz-objs
	$(call msg,FUZZ,$@)
	$(Q)clang $(RTB_CFLAGS) -I$(FUZZ_BUILD)/obj/ebpf $(FUZZ_FLAGS) -fsanitize=fuzzer -MF $@.d $< \
		$(fuzz_objs) -o $@ $(LIBS_VERBS) $(LDLIBS_LIB) $(LIBS_CURSES) -lpthread -lm

fuzz: $(FUZZ_BINS)

# the unit tests and one testbed run under ASan + UBSan
test-asan: all asan-build
	$(Q)ASAN_BUILD=$(ASAN_BUILD) TESTS=asan bash tests/run.sh

# the one test command (README, CI): unit tests, the sanitized and fuzzed
# builds, then the SoftRoCE suites
test: all $(UNIT_BINS) asan-build $(FUZZ_BINS)
	$(Q)bash tests/run.sh

# the fuzz harnesses for longer than make test's 10 s each
fuzz-long: all $(FUZZ_BINS)
	$(Q)FUZZ_SECONDS=$${FUZZ_SECONDS:-300} TESTS=fuzz bash tests/run.sh

test-unit: all $(UNIT_BINS)
	$(Q)TESTS=unit bash tests/run.sh

test-softroce: all
	$(Q)TESTS=softroce bash tests/run.sh

# the injection suite on per-node VMs whose switch is rdma-inject forward
test-switch-xdp: all
	$(Q)TESTS=switch-xdp bash tests/run.sh

# 256 agents on one rdmactl, an allreduce on a 16-node VM testbed
test-scale: all
	$(Q)TESTS=scale bash tests/run.sh

deps:
	$(Q)bash scripts/deps.sh

demo: all
	$(Q)bash scripts/demo.sh

# the generated parts of docs/ (docs/report.md: a sample report, the metric
# table's columns); make test fails when they are stale
docs: all
	$(Q)bash scripts/mkdocs.sh

$(BUILD)/bench/hist_record: bench/hist_record.c lib/hist.c
	$(call msg,CC,$@)
	@mkdir -p $(@D) $(OBJ)/bench
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -MF $(OBJ)/bench/hist_record.d $^ -o $@ $(LDLIBS_LIB) -lm

$(BUILD)/bench/fwht: bench/fwht.c lib/fwht.c
	$(call msg,CC,$@)
	@mkdir -p $(@D) $(OBJ)/bench
	$(Q)$(CC) $(ALL_CFLAGS) -O3 $(LDFLAGS) -MF $(OBJ)/bench/fwht.d $^ -o $@ -lm

bench: all $(BUILD)/bench/inject_cost $(BUILD)/bench/fwd_bench $(BUILD)/bench/hist_record $(BUILD)/bench/fwht
	$(Q)$(BUILD)/bench/hist_record
	$(Q)$(BUILD)/bench/fwht
	$(Q)$(BUILD)/bench/inject_cost
	$(Q)$(BUILD)/bench/fwd_bench
	$(Q)bash bench/p2p_vs_perftest.sh
	$(Q)bash bench/piece_size.sh
	$(Q)bash bench/hadamard_block.sh
	$(Q)bash bench/kv_log_cost.sh
	$(Q)bash bench/train_tta.sh

# rdmactl search, random against guided on its three known answers (~45 min)
bench-search: all
	$(Q)bash bench/search_compare.sh

# rdmactl doctor on 8 nodes: false and true namings over RUNS sweeps, the cost (~2 min a run)
bench-doctor: all
	$(Q)bash bench/doctor.sh

# NVMe-oF over RDMA and TCP under faults: docs/stacks.md's table (~15 min)
bench-stacks: all
	$(Q)bash bench/storage.sh
	$(Q)STACK=nfs bash bench/storage.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/libexec/rdma-testbed \
		$(DESTDIR)$(PREFIX)/lib/rdma-testbed/bpf
	install -m 0755 $(PROGS) $(DESTDIR)$(PREFIX)/bin/
	install -m 0755 $(LIBEXEC_FILES) $(DESTDIR)$(PREFIX)/libexec/rdma-testbed/
	install -m 0644 $(BPF_OBJS) $(DESTDIR)$(PREFIX)/lib/rdma-testbed/bpf/
	install -d $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions
	install -m 0644 $(MANS) $(DESTDIR)$(PREFIX)/share/man/man1/
	for p in rdmactl rdma-inject rdma-agent; do \
		install -m 0644 scripts/completion.bash \
			$(DESTDIR)$(PREFIX)/share/bash-completion/completions/$$p || exit 1; \
	done

# .clang-format over every C file of ours: format rewrites them, lint lists
# the files that differ (exit 1)
FMT_SRC = $(shell git ls-files '*.c' '*.h' 2>/dev/null)
format:
	$(Q)clang-format -i $(FMT_SRC)

lint:
	$(Q)bad=0; for f in $(FMT_SRC); do clang-format --dry-run --Werror $$f >/dev/null 2>&1 || \
		{ echo "  $$f: not formatted (make format)"; bad=1; }; done; exit $$bad

clean:
	rm -rf $(BUILD)

-include $(shell find $(OBJ) -name '*.d' 2>/dev/null)
