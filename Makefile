# vnuma: one Makefile for the host daemon, its CLI, the guest agent and the tests.
#
#   make            build vnumad, vnumactl, vnuma-agent into build/
#   make check      install missing Debian dependencies, build, run the whole suite
#   make demo       boot the 4-node proving ground, misplace two guests, run vnumad (README)
#   make demo-offline  the offline advisor demo (no VM; `make demo` falls back to it)
#   make install    PREFIX=/usr/local DESTDIR= (binaries, systemd units, udev rule, man pages,
#                   /etc/vnuma/vnumad.conf); make uninstall removes what it installed
#   make format     clang-format every C file
#   make proto-doc  regenerate docs/PROTOCOL.md from the message table (proto/schema.c)
#   make metrics-doc  regenerate docs/operations.md's metrics table from host/metrics.c
#   make fuzz       build the protocol fuzzer and run it FUZZ_SECONDS (default 60)
#   make valgrind   the unit tests and vnumad's offline modes under valgrind memcheck
#   SANITIZE=1      build with ASan+UBSan, into build-san/ unless BUILD is given
#                   (`make check SANITIZE=1` runs the whole suite on that build)

PREFIX   ?= /usr/local
BINDIR   ?= $(PREFIX)/bin
SBINDIR  ?= $(PREFIX)/sbin
DATADIR  ?= $(PREFIX)/share
MANDIR   ?= $(DATADIR)/man
# vnumad reads /etc/vnuma/vnumad.conf whatever the PREFIX; the units name SYSCONFDIR's copy.
SYSCONFDIR     ?= /etc
# systemd and udev also read /usr/local/lib/...; Debian 12 packages use /lib/... (debian/rules)
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
UDEVRULESDIR   ?= $(PREFIX)/lib/udev/rules.d
DESTDIR  ?=

CC       ?= cc
# Sanitized objects go to their own directory: make does not track flags, so one directory
# would mix instrumented and plain objects.
ifeq ($(SANITIZE),1)
BUILD    ?= build-san
else
BUILD    ?= build
endif
PKGS     := hwloc json-c libvirt libxml-2.0 libsystemd libcap-ng

CFLAGS_BASE := -std=gnu11 -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wno-format-nonliteral \
               -Wmissing-prototypes -Wstrict-prototypes -O2 -g -D_GNU_SOURCE
ifeq ($(SANITIZE),1)
CFLAGS_BASE += -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
LDFLAGS     += -fsanitize=address,undefined
endif
PKG_CFLAGS   = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS     = $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lvirt-qemu -lnuma -lm
CURSES_LIBS  = $(shell pkg-config --libs ncursesw 2>/dev/null)  # vnumactl top
override CFLAGS := $(CFLAGS_BASE) $(PKG_CFLAGS) $(CFLAGS)

# Include paths per folder: what a folder may include is what it can find, so crossing a
# never is a compile error (docs/ARCHITECTURE.md, "Folders"). lib/ sees only itself; proto/
# sees lib/; agent/ sees proto/ and lib/ but never host/; host/ sees proto/ and lib/.
$(BUILD)/lib/%.o:               INCS := -Ilib
$(BUILD)/proto/%.o:             INCS := -Iproto -Ilib
$(BUILD)/agent/%.o:             INCS := -Iagent -Iproto -Ilib
$(BUILD)/host/%.o:              INCS := -Ihost -Iproto -Ilib
$(BUILD)/tests/unit/%.o:        INCS := -Ihost -Iproto -Ilib -Itests/unit
$(BUILD)/tests/unit/test-agent-%.o: INCS := -Iagent -Iproto -Ilib -Itests/unit
$(BUILD)/tests/fuzz/%.o:        INCS := -Iproto -Ilib
$(BUILD)/tests/bench/%.o:       INCS := -Ihost -Iproto -Ilib
$(BUILD)/tests/e2e/ground/%.o:  INCS := -Ihost -Iproto -Ilib

# The libraries the build needs, as pkg-config names with the Debian package that has each.
# `make` checks them first and names what is missing instead of failing in the compiler.
BUILD_DEPS := hwloc:libhwloc-dev json-c:libjson-c-dev libvirt:libvirt-dev \
              libvirt-qemu:libvirt-dev libxml-2.0:libxml2-dev ncursesw:libncurses-dev \
              libsystemd:libsystemd-dev

# lib/ is the base library every program links: cleanup, clocks, checked parsing, json-c
# plumbing, the scan rule the agent shares with the host, the version. It depends on nothing
# in host/, agent/ or proto/.
LIB_SRCS   := $(wildcard lib/*.c)
LIB_OBJS   := $(LIB_SRCS:%.c=$(BUILD)/%.o)
BASE_LIB   := $(BUILD)/libvnuma-base.a

# Everything in host/ except the programs' main files is the core library.
# vnumactl's files (its subcommands, the control-socket client) link into vnumactl only.
VNUMACTL_SRCS := $(wildcard host/vnumactl*.c) host/ctl_client.c
VNUMACTL_OBJS := $(VNUMACTL_SRCS:%.c=$(BUILD)/%.o)
HOST_MAINS := host/vnumad.c host/metrics-doc.c $(VNUMACTL_SRCS)
CORE_SRCS  := $(filter-out $(HOST_MAINS),$(wildcard host/*.c))
CORE_OBJS  := $(CORE_SRCS:%.c=$(BUILD)/%.o)
CORE_LIB   := $(BUILD)/libvnuma-core.a

# proto/ is the guest protocol codec, linked by the host programs and the agent (json-c).
PROTO_MAINS := proto/proto-doc.c
PROTO_SRCS := $(filter-out $(PROTO_MAINS),$(wildcard proto/*.c))
PROTO_OBJS := $(PROTO_SRCS:%.c=$(BUILD)/%.o)
PROTO_LIB  := $(BUILD)/libvnuma-proto.a
PROTO_LIBS  = $(shell pkg-config --libs json-c 2>/dev/null)

FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_MAX_LEN ?= 32768
FUZZ_RUNS    ?= -1
FUZZ_BIN     := $(BUILD)/fuzz/fuzz-proto-host
FUZZ_DICT    := tests/fuzz/proto.dict
# No trace-cmp: libFuzzer only uses 4- and 8-byte comparison operands, as raw binary, which
# never occur in JSON text; the callbacks on the per-byte compares of the framing and text
# scanners took 40-55 % of the run time. Keys and commands still reach the mutator through the
# strcmp/memcmp hooks of the ASan interceptors, and FUZZ_DICT lists them.
FUZZ_CFLAGS  := -std=gnu11 -Wall -Wextra -Werror -g -O1 -D_GNU_SOURCE -Iproto -Ilib \
                -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
                -fno-sanitize-coverage=trace-cmp \
                $(shell pkg-config --cflags json-c 2>/dev/null)

AGENT_SRCS := $(wildcard agent/*.c)
AGENT_OBJS := $(AGENT_SRCS:%.c=$(BUILD)/%.o)
# The guest agent: agent/*.c but main.c is libvnuma-agent.a (its unit tests link it), plus
# proto/'s codec and lib/ (with the scan rule it shares with the host); json-c only (no libvirt, hwloc
# or libnuma), so `make agent-static` can link it statically for an initramfs.
AGENT_LIB   := $(BUILD)/libvnuma-agent.a
AGENT_LINK  := $(AGENT_LIB) $(PROTO_LIB) $(BASE_LIB)
# Static workload programs for the test guest (vm-images/guest/, vm-images/build-guest.sh).
GUEST_TOOLS := $(BUILD)/guest-tools/memtouch $(BUILD)/guest-tools/pft $(BUILD)/guest-tools/hostile

UNIT_SRCS  := $(wildcard tests/unit/test-*.c)
UNIT_BINS  := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
# Kept: made through a pattern chain they are intermediate files, which make deletes after a
# first build; the next make (its .d files now name them) then built every unit test again.
.SECONDARY: $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/unit/%.o)

PROGRAMS   := $(BUILD)/vnumad $(BUILD)/vnumactl $(BUILD)/vnuma-agent

.PHONY: all build-deps check deps format-check tests demo demo-offline install uninstall clean format agent-static guest-tools \
        proto-doc metrics-doc fuzz fuzz-build valgrind
all: $(PROGRAMS)

$(BUILD)/%.o: %.c | build-deps
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(INCS) $(CFLAGS) -MMD -MP -c $< -o $@

# Every library of BUILD_DEPS, and libnuma (no pkg-config file in Debian 12), or a message
# that names the missing Debian packages and how to install them.
build-deps:
	@missing=""; \
	command -v pkg-config >/dev/null 2>&1 || missing=" pkg-config"; \
	for d in $(BUILD_DEPS); do \
	    command -v pkg-config >/dev/null 2>&1 && pkg-config --exists $${d%%:*} || \
	        case "$$missing " in *" $${d#*:} "*) ;; *) missing="$$missing $${d#*:}";; esac; \
	done; \
	printf '#include <numa.h>\n' | $(CC) -E -x c - >/dev/null 2>&1 || missing="$$missing libnuma-dev"; \
	if [ -n "$$missing" ]; then \
	    echo "vnuma: missing build dependencies (Debian packages):$$missing" >&2; \
	    echo "vnuma: install them with 'apt-get install$$missing', or run 'make deps' (make check does)" >&2; \
	    exit 1; \
	fi

$(BASE_LIB): $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(CORE_LIB): $(CORE_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(PROTO_LIB): $(PROTO_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/vnumad: $(BUILD)/host/vnumad.o $(CORE_LIB) $(PROTO_LIB) $(BASE_LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

$(BUILD)/vnumactl: $(VNUMACTL_OBJS) $(CORE_LIB) $(PROTO_LIB) $(BASE_LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) $(CURSES_LIBS)

$(BUILD)/proto-doc: $(BUILD)/proto/proto-doc.o $(PROTO_LIB) $(BASE_LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(PROTO_LIBS)

$(BUILD)/metrics-doc: $(BUILD)/host/metrics-doc.o $(CORE_LIB) $(PROTO_LIB) $(BASE_LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

# docs/operations.md's metrics table is generated from host/metrics.c; test-metrics checks
# that they agree.
metrics-doc: $(BUILD)/metrics-doc
	$(BUILD)/metrics-doc docs/operations.md

# docs/PROTOCOL.md is generated from proto/schema.c; test-proto checks that they agree.
proto-doc: $(BUILD)/proto-doc
	$(BUILD)/proto-doc > docs/PROTOCOL.md.tmp && mv docs/PROTOCOL.md.tmp docs/PROTOCOL.md

# libFuzzer harness of the host-side decoder, built by clang from the sources (not from the
# gcc objects). New inputs go to $(BUILD)/fuzz/corpus; tests/fuzz/corpus is the seed corpus.
# FUZZ_SECONDS=0 FUZZ_RUNS=N: run N inputs, however long it takes (tests/fuzz/README.md).
$(FUZZ_BIN): tests/fuzz/fuzz-proto-host.c $(PROTO_SRCS) $(LIB_SRCS) $(wildcard proto/*.h lib/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ tests/fuzz/fuzz-proto-host.c $(PROTO_SRCS) $(LIB_SRCS) $(PROTO_LIBS)

fuzz-build: $(FUZZ_BIN)

fuzz: $(FUZZ_BIN)
	@mkdir -p $(BUILD)/fuzz/corpus
	$(FUZZ_BIN) -max_total_time=$(FUZZ_SECONDS) -runs=$(FUZZ_RUNS) -max_len=$(FUZZ_MAX_LEN) \
	    -dict=$(FUZZ_DICT) -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
	    -artifact_prefix=$(BUILD)/fuzz/ $(BUILD)/fuzz/corpus tests/fuzz/corpus

# The same harness without libFuzzer, built by $(CC) like the unit tests: it runs the files it
# is given once each (tests/fuzz/replay.c), for memcheck (tests/cli/valgrind.sh).
FUZZ_REPLAY_OBJS := $(BUILD)/tests/fuzz/fuzz-proto-host.o $(BUILD)/tests/fuzz/replay.o
$(BUILD)/fuzz/fuzz-proto-host-replay: $(FUZZ_REPLAY_OBJS) $(PROTO_LIB) $(BASE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(PROTO_LIBS)
-include $(FUZZ_REPLAY_OBJS:.o=.d)

# The unit tests (hostile-input cases included), vnumad's offline modes and the fuzz seed
# corpus under valgrind memcheck; make check runs the same script. Needs the normal build:
# valgrind cannot run SANITIZE=1 binaries.
valgrind: tests $(BUILD)/fuzz/fuzz-proto-host-replay
	@BUILD=$(BUILD) bash tests/cli/valgrind.sh

$(AGENT_LIB): $(filter-out $(BUILD)/agent/main.o,$(AGENT_OBJS))
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/vnuma-agent: $(BUILD)/agent/main.o $(AGENT_LINK)
	$(CC) $(LDFLAGS) -o $@ $^ -ljson-c

# STATIC=1 or `make agent-static`: a static vnuma-agent (glibc and libjson-c.a) for an initramfs.
ifeq ($(SANITIZE),1)
# ASan cannot link a static program: with SANITIZE=1 the static programs of the test guests'
# initramfs (vm-images/build-guest.sh) are built without sanitizers in $(BUILD)/plain/ and
# copied (only when they changed: tests run at once may read them). The sanitized pass tests
# the host side; the guest runs these plain ones.
$(BUILD)/vnuma-agent-static $(GUEST_TOOLS): FORCE
	@$(MAKE) --no-print-directory SANITIZE= BUILD=$(BUILD)/plain $(@:$(BUILD)/%=$(BUILD)/plain/%)
	@mkdir -p $(dir $@)
	@cmp -s $(@:$(BUILD)/%=$(BUILD)/plain/%) $@ || cp -p $(@:$(BUILD)/%=$(BUILD)/plain/%) $@
FORCE:
else
$(BUILD)/vnuma-agent-static: $(BUILD)/agent/main.o $(AGENT_LINK)
	$(CC) $(LDFLAGS) -static -o $@ $^ -ljson-c

$(BUILD)/guest-tools/%: vm-images/guest/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) -static -pthread -o $@ $< -lm
endif
agent-static: $(BUILD)/vnuma-agent-static
ifeq ($(STATIC),1)
all: $(BUILD)/vnuma-agent-static
endif
guest-tools: $(GUEST_TOOLS)

$(BUILD)/tests/test-agent-%: $(BUILD)/tests/unit/test-agent-%.o $(AGENT_LINK)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ -ljson-c

$(BUILD)/tests/%: $(BUILD)/tests/unit/%.o $(CORE_LIB) $(PROTO_LIB) $(BASE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

# vnumactl's control-socket client, which links into vnumactl only.
$(BUILD)/tests/test-ctl-client: $(BUILD)/tests/unit/test-ctl-client.o $(BUILD)/host/ctl_client.o \
                                $(CORE_LIB) $(PROTO_LIB) $(BASE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

# The whole daemon on the fake host (tests/unit/fakehost.h).
FAKEHOST_OBJS := $(BUILD)/tests/unit/fakehost.o $(BUILD)/tests/unit/fakehost_virt.o \
                 $(BUILD)/tests/unit/fakehost_daemons.o $(BUILD)/tests/unit/fakehost_qemu.o \
                 $(BUILD)/tests/unit/daemon_drive.o
FAKEHOST_TESTS := $(BUILD)/tests/test-daemon $(BUILD)/tests/test-daemon-memory \
                  $(BUILD)/tests/test-live-snapshot \
                  $(BUILD)/tests/test-daemon-poll $(BUILD)/tests/test-daemon-tenant \
                  $(BUILD)/tests/test-daemon-placed $(BUILD)/tests/test-daemon-place \
                  $(BUILD)/tests/test-daemon-carried $(BUILD)/tests/test-daemon-policy \
                  $(BUILD)/tests/test-daemon-conns
$(FAKEHOST_TESTS): $(BUILD)/tests/%: $(BUILD)/tests/unit/%.o $(FAKEHOST_OBJS) $(CORE_LIB) \
                                     $(PROTO_LIB) $(BASE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)
-include $(FAKEHOST_OBJS:.o=.d)

# Benchmarks (scripts in tests/bench/ build what they need through these rules).
$(BUILD)/bench/decide-bench: $(BUILD)/tests/bench/decide-bench.o $(CORE_LIB) $(PROTO_LIB) $(BASE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

# sample-bench and migrate-bench (tests/bench/sample-cost.sh, tests/bench/migrate.sh) link the
# daemon's own numa_ops.c, sample.c and act.c through the core library.
$(BUILD)/bench/sample-bench: $(BUILD)/tests/bench/sample-bench.o $(CORE_LIB) $(PROTO_LIB) $(BASE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -pthread -o $@ $^ $(PKG_LIBS)

$(BUILD)/bench/migrate-bench: $(BUILD)/tests/bench/migrate-bench.o $(CORE_LIB) $(PROTO_LIB) $(BASE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -pthread -o $@ $^ $(PKG_LIBS)
-include $(BUILD)/tests/bench/sample-bench.d $(BUILD)/tests/bench/migrate-bench.d

# The act stage against a long-term pin (io_uring fixed buffers), run inside the proving ground
# (tests/e2e/ground/scenarios.py): it needs two host nodes.
$(BUILD)/tests/longterm-pin: $(BUILD)/tests/e2e/ground/longterm-pin.o $(CORE_LIB) $(PROTO_LIB) $(BASE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) $(shell pkg-config --libs liburing)
-include $(BUILD)/tests/e2e/ground/longterm-pin.d

tests: $(PROGRAMS) $(UNIT_BINS) $(BUILD)/proto-doc $(BUILD)/metrics-doc $(BUILD)/tests/longterm-pin

# Installs what the build and the tests need from Debian, only when missing.
deps:
	@tests/install-deps.sh

check: deps
	@$(MAKE) --no-print-directory -j$(shell nproc) tests
	@BUILD=$(BUILD) tests/run.sh

demo: deps
	@$(MAKE) --no-print-directory all
	@BUILD=$(BUILD) tests/demo.sh

demo-offline: all
	@BUILD=$(BUILD) tests/demo-offline.sh

# What `make install` puts where (docs/operations.md). The configuration file is installed
# only when absent (an operator's edited copy is kept) and uninstalled only when unchanged.
MAN8       := vnumad.8 vnumactl.8 vnuma-agent.8
MAN5       := vnumad.conf.5
UNITS      := vnumad.service vnuma-agent.service
UDEV_RULES := 60-vnuma-agent.rules
PROM_RULES := vnuma-alerts.yml
LOGROTATEDIR ?= $(SYSCONFDIR)/logrotate.d
PROMDIR    := $(DATADIR)/vnuma/prometheus
# the DaemonSet for KubeVirt nodes (docs/fleet.md), an example to edit and apply
K8S_MANIFESTS := vnumad-daemonset.yaml
K8SDIR     := $(DATADIR)/vnuma/kubernetes
# bash-completion's directory for completions loaded on demand (pkg-config bash-completion)
COMPLETIONDIR ?= $(DATADIR)/bash-completion/completions
# libvirt's directory of qemu hooks run after /etc/libvirt/hooks/qemu (libvirt >= 6.5)
HOOKDIR    ?= $(SYSCONFDIR)/libvirt/hooks/qemu.d
CONF       := $(DESTDIR)$(SYSCONFDIR)/vnuma/vnumad.conf
UNIT_SED   := -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g'

install: all
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(SYSTEMDUNITDIR) $(DESTDIR)$(UDEVRULESDIR) \
	    $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(SYSCONFDIR)/vnuma \
	    $(DESTDIR)$(PROMDIR) $(DESTDIR)$(COMPLETIONDIR) $(DESTDIR)$(LOGROTATEDIR) \
	    $(DESTDIR)$(HOOKDIR) $(DESTDIR)$(K8SDIR)
	install -m 0755 $(BUILD)/vnumad $(DESTDIR)$(SBINDIR)/vnumad
	install -m 0755 $(BUILD)/vnumactl $(DESTDIR)$(SBINDIR)/vnumactl
	install -m 0755 $(BUILD)/vnuma-agent $(DESTDIR)$(SBINDIR)/vnuma-agent
	for u in $(UNITS); do \
	    sed $(UNIT_SED) dist/systemd/$$u.in > $(DESTDIR)$(SYSTEMDUNITDIR)/$$u.tmp && \
	    chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/$$u.tmp && \
	    mv $(DESTDIR)$(SYSTEMDUNITDIR)/$$u.tmp $(DESTDIR)$(SYSTEMDUNITDIR)/$$u || exit 1; \
	done
	install -m 0644 $(addprefix dist/udev/,$(UDEV_RULES)) $(DESTDIR)$(UDEVRULESDIR)/
	install -m 0644 $(addprefix man/,$(MAN8)) $(DESTDIR)$(MANDIR)/man8/
	install -m 0644 $(addprefix man/,$(MAN5)) $(DESTDIR)$(MANDIR)/man5/
	install -m 0644 $(addprefix dist/prometheus/,$(PROM_RULES)) $(DESTDIR)$(PROMDIR)/
	install -m 0644 $(addprefix dist/kubernetes/,$(K8S_MANIFESTS)) $(DESTDIR)$(K8SDIR)/
	install -m 0644 dist/bash-completion/vnumactl $(DESTDIR)$(COMPLETIONDIR)/vnumactl
	install -m 0644 dist/logrotate/vnuma $(DESTDIR)$(LOGROTATEDIR)/vnuma
	sed $(UNIT_SED) dist/libvirt/vnuma-hook.in > $(DESTDIR)$(HOOKDIR)/vnuma.tmp && \
	    chmod 0755 $(DESTDIR)$(HOOKDIR)/vnuma.tmp && mv $(DESTDIR)$(HOOKDIR)/vnuma.tmp $(DESTDIR)$(HOOKDIR)/vnuma
	@if [ ! -e $(CONF) ]; then \
	    echo "install -m 0644 dist/vnumad.conf $(CONF)"; \
	    install -m 0644 dist/vnumad.conf $(CONF); \
	elif ! cmp -s dist/vnumad.conf $(CONF); then \
	    echo "note: keeping the existing $(CONF) (see dist/vnumad.conf for the defaults)"; \
	fi

uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/vnumad $(DESTDIR)$(SBINDIR)/vnumactl \
	      $(DESTDIR)$(SBINDIR)/vnuma-agent
	rm -f $(addprefix $(DESTDIR)$(SYSTEMDUNITDIR)/,$(UNITS))
	rm -f $(addprefix $(DESTDIR)$(UDEVRULESDIR)/,$(UDEV_RULES))
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man8/,$(MAN8)) $(addprefix $(DESTDIR)$(MANDIR)/man5/,$(MAN5))
	rm -f $(addprefix $(DESTDIR)$(PROMDIR)/,$(PROM_RULES))
	rm -f $(addprefix $(DESTDIR)$(K8SDIR)/,$(K8S_MANIFESTS))
	rmdir $(DESTDIR)$(PROMDIR) $(DESTDIR)$(K8SDIR) $(DESTDIR)$(DATADIR)/vnuma 2>/dev/null || true
	rm -f $(DESTDIR)$(COMPLETIONDIR)/vnumactl
	rm -f $(DESTDIR)$(LOGROTATEDIR)/vnuma
	rmdir $(DESTDIR)$(LOGROTATEDIR) 2>/dev/null || true
	rm -f $(DESTDIR)$(HOOKDIR)/vnuma
	rmdir $(DESTDIR)$(HOOKDIR) $(DESTDIR)$(SYSCONFDIR)/libvirt/hooks $(DESTDIR)$(SYSCONFDIR)/libvirt 2>/dev/null || true
	@if [ -e $(CONF) ] && ! cmp -s dist/vnumad.conf $(CONF); then \
	    echo "note: keeping $(CONF): it was changed after install"; \
	else \
	    rm -f $(CONF); rmdir $(DESTDIR)$(SYSCONFDIR)/vnuma 2>/dev/null || true; \
	fi

# Every C file of ours; make check fails when one is not as clang-format writes it.
FORMAT_SRCS = $(wildcard lib/*.[ch] host/*.[ch] agent/*.[ch] proto/*.[ch] tests/unit/*.[ch] \
                         tests/fuzz/*.c tests/bench/*.[ch] tests/e2e/ground/*.c vm-images/guest/*.c)
format-check:
	@clang-format --dry-run -Werror $(FORMAT_SRCS)

format:
	clang-format -i $(FORMAT_SRCS)

clean:
	rm -rf $(BUILD)

-include $(LIB_OBJS:.o=.d) $(CORE_OBJS:.o=.d) $(PROTO_OBJS:.o=.d) $(AGENT_OBJS:.o=.d) $(HOST_MAINS:%.c=$(BUILD)/%.d) $(PROTO_MAINS:%.c=$(BUILD)/%.d) $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/unit/%.d)
