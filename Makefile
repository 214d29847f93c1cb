# rankmap: non-recursive build. Each module describes itself in <dir>/module.mk.
# Targets: all deps test run bench install uninstall clean fuzz trixie-root test-trixie.  Variables: PREFIX DESTDIR SANITIZE=1.

# Installation directories. What is built records them (conf/module.mk: $(B)/gen/paths.stamp), so that
# `make && make install PREFIX=/usr` rebuilds what embeds one: the SPANK plugin's library directory,
# rankmapd's default configuration, the unit, the examples and the manual pages. SYSCONFDIR is /etc for
# PREFIX=/usr (as distributions install), $(PREFIX)/etc otherwise.
PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
SBINDIR ?= $(PREFIX)/sbin
LIBDIR  ?= $(PREFIX)/lib
MANDIR  ?= $(PREFIX)/share/man
SYSCONFDIR ?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
DATADIR ?= $(PREFIX)/share/rankmap
DOCDIR  ?= $(PREFIX)/share/doc/rankmap
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system

CC      ?= cc
B       := build
# The installation directories as last built (conf/module.mk).
PATHS_STAMP := $(B)/gen/paths.stamp
CFLAGS  ?= -O2 -g
WARN    := -Wall -Wextra -Werror -Wno-unused-parameter
VERSION := 0.1.0
PKGS    := hwloc jansson libibnetdisc libibmad libibumad
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
SCOTCH_CFLAGS := -I/usr/include/scotch
SCOTCH_LIBS   := -lscotch -lscotcherr
# Module walls: there is no global include path. Each module.mk gives its objects INC, the include
# paths of the modules it may use (ARCHITECTURE.md), so that a wrong #include fails the build.
ALL_CFLAGS = $(CFLAGS) $(WARN) -std=gnu11 -DRANKMAP_VERSION=\"$(VERSION)\" -fPIC -fvisibility=hidden -MMD -MP \
             $(INC) $(PKG_CFLAGS) $(EXTRA_CFLAGS)
ALL_LDFLAGS = $(LDFLAGS) $(EXTRA_LDFLAGS)
# libmunge: the client library (daemon/client/client_net.c) authenticates TCP connections with MUNGE, and
# every program here links the client library (rankmapd, rankmapctl, the plugins, tests, fuzzers).
MUNGE_LIBS := -lmunge
LIBS_ALL = $(PKG_LIBS) $(SCOTCH_LIBS) $(MUNGE_LIBS) -lm -lpthread

ifeq ($(SANITIZE),1)
CFLAGS := -O1 -g -fno-omit-frame-pointer
EXTRA_CFLAGS += -fsanitize=address,undefined -fno-sanitize-recover=undefined
EXTRA_LDFLAGS += -fsanitize=address,undefined
# Run-time settings for the suite (tests/FAULTS.md): the PMPI library is preloaded into MPI programs built
# without ASan, so the ASan runtime cannot come first there; a 16 MiB quarantine keeps the daemon's
# memory-growth checks about the daemon, not about ASan's free-list; tests/sanitize/asan.supp: others' bugs.
export ASAN_OPTIONS ?= verify_asan_link_order=0:quarantine_size_mb=16:suppressions=$(CURDIR)/tests/sanitize/asan.supp
export UBSAN_OPTIONS ?= print_stacktrace=1
endif

.PHONY: all deps test run bench install uninstall clean check-format
all:

# Core static libraries, in link order (later ones are used by earlier ones).
CORE_LIBS := $(B)/libmapping.a $(B)/liborder.a $(B)/libtopo.a $(B)/libcommon.a

# Include paths of each module's public headers (INC_<module>), for the INC of the modules that use it.
INC_common  := -Icommon
INC_topo    := -Itopo
INC_report  := -Itopo/report
INC_order   := -Iorder
INC_mapping := -Imapping
INC_client  := -Idaemon/client

define objs_of
$(patsubst %.c,$(B)/%.o,$(1))
endef

include common/module.mk topo/module.mk topo/report/module.mk order/module.mk mapping/module.mk
include daemon/client/module.mk daemon/server/module.mk daemon/ctl/module.mk
include tests/module.mk
include plugin/mpi/module.mk plugin/mpi/smpi.mk plugin/spank/module.mk
include tests/fuzz/module.mk conf/module.mk man/module.mk

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

deps:
	@sh scripts/deps.sh

# make test: builds with TEST_JOBS jobs and runs the suite (tests/run.sh) TEST_JOBS tests at a time
# (default 2, the cores of the CI machine); tests/README.md.
TEST_JOBS ?= 2
test: deps
	@$(MAKE) --no-print-directory -j$(TEST_JOBS) all test-progs
	@RANKMAP_TEST_JOBS=$${RANKMAP_TEST_JOBS:-$(TEST_JOBS)} sh tests/run.sh

run: deps
	@$(MAKE) --no-print-directory all
	@sh scripts/run.sh

bench: all test-progs
	@sh tests/bench/run.sh

clean:
	rm -rf $(B)

# The Debian 13 test root (scripts/trixie.sh; README.md, "Debian 13"): trixie-root makes it (cached in
# RANKMAP_TRIXIE_CACHE, default /var/tmp/rankmap-trixie, kept by `make clean`); test-trixie runs the second
# suite in it alone (`make test` runs it too, as the test debian13, where the root exists).
.PHONY: trixie-root test-trixie
trixie-root: deps
	@sh scripts/trixie.sh build >/dev/null
test-trixie:
	@sh scripts/trixie.sh suite .

check-format:
	clang-format --dry-run --Werror $$(git ls-files '*.c' '*.h')

-include $(shell find $(B) -name '*.d' 2>/dev/null)

# make uninstall: removes what make install installed, with the same PREFIX and DESTDIR. INSTALLED is the
# list of installed paths: each install rule adds the files it writes, beside the rule. Configuration
# under $(SYSCONFDIR) (CONFFILES: shipped file, installed path) goes only when it is the shipped file, as
# a package removal keeps an admin's changes (scripts/install-conf.sh --remove says what it keeps).
# rankmap's own folders go too when empty; shared ones (bin, sbin, man1, ...) stay.
uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	set -- $(CONFFILES); while [ $$# -ge 2 ]; do \
		sh scripts/install-conf.sh --remove "$$1" "$(DESTDIR)$$2" || exit 1; shift 2; done
	rmdir $(addprefix $(DESTDIR),$(LIBDIR)/rankmap $(DATADIR)/examples/plafrim/hwloc \
		$(DATADIR)/examples/plafrim/ib $(DATADIR)/examples/plafrim $(DATADIR)/examples $(DATADIR) \
		$(DOCDIR) $(SYSCONFDIR)/rankmap) 2>/dev/null || true
