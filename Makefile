# vnuma: one Makefile for the host daemon, its CLI, the guest agent and the tests.
#
#   make            build vnumad, vnumactl, vnuma-agent into build/
#   make check      install missing Debian dependencies, build, run the whole suite
#   make demo       run the built-in demo (README)
#   make install    PREFIX=/usr/local DESTDIR=
#   make format     clang-format every C file

PREFIX   ?= /usr/local
BINDIR   ?= $(PREFIX)/bin
SBINDIR  ?= $(PREFIX)/sbin
DATADIR  ?= $(PREFIX)/share
DESTDIR  ?=

CC       ?= cc
BUILD    ?= build
PKGS     := hwloc json-c libvirt libxml-2.0

CFLAGS_BASE := -std=gnu11 -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wno-format-nonliteral \
               -Wmissing-prototypes -Wstrict-prototypes -O2 -g -D_GNU_SOURCE -Ihost -Iproto
ifeq ($(SANITIZE),1)
CFLAGS_BASE += -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
LDFLAGS     += -fsanitize=address,undefined
endif
PKG_CFLAGS   = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS     = $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lvirt-qemu -lnuma -lm
override CFLAGS := $(CFLAGS_BASE) $(PKG_CFLAGS) $(CFLAGS)

# Everything in host/ except the programs' main files is the core library.
HOST_MAINS := host/vnumad.c host/vnumactl.c
CORE_SRCS  := $(filter-out $(HOST_MAINS),$(wildcard host/*.c))
CORE_OBJS  := $(CORE_SRCS:%.c=$(BUILD)/%.o)
CORE_LIB   := $(BUILD)/libvnuma-core.a

AGENT_SRCS := $(wildcard agent/*.c)
AGENT_OBJS := $(AGENT_SRCS:%.c=$(BUILD)/%.o)

UNIT_SRCS  := $(wildcard tests/unit/test-*.c)
UNIT_BINS  := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)

PROGRAMS   := $(BUILD)/vnumad $(BUILD)/vnumactl $(BUILD)/vnuma-agent

.PHONY: all check deps tests demo install uninstall clean format
all: $(PROGRAMS)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(CORE_LIB): $(CORE_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/vnumad: $(BUILD)/host/vnumad.o $(CORE_LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

$(BUILD)/vnumactl: $(BUILD)/host/vnumactl.o $(CORE_LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

$(BUILD)/vnuma-agent: $(AGENT_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^

$(BUILD)/tests/%: $(BUILD)/tests/unit/%.o $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

tests: $(PROGRAMS) $(UNIT_BINS)

# Installs what the build and the tests need from Debian, only when missing.
deps:
	@tests/install-deps.sh

check: deps
	@$(MAKE) --no-print-directory tests
	@BUILD=$(BUILD) tests/run.sh

demo: deps
	@$(MAKE) --no-print-directory all
	@BUILD=$(BUILD) tests/demo.sh

install: all
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(BINDIR)
	install -m 0755 $(BUILD)/vnumad $(DESTDIR)$(SBINDIR)/vnumad
	install -m 0755 $(BUILD)/vnumactl $(DESTDIR)$(SBINDIR)/vnumactl
	install -m 0755 $(BUILD)/vnuma-agent $(DESTDIR)$(SBINDIR)/vnuma-agent

uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/vnumad $(DESTDIR)$(SBINDIR)/vnumactl \
	      $(DESTDIR)$(SBINDIR)/vnuma-agent

format:
	clang-format -i $(wildcard host/*.[ch] agent/*.[ch] proto/*.[ch] tests/unit/*.[ch])

clean:
	rm -rf $(BUILD)

-include $(CORE_OBJS:.o=.d) $(AGENT_OBJS:.o=.d) $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/unit/%.d)
