# plugin/mpi/smpi.mk: the SimGrid SMPI variant of the rankmap MPI library, and `make bench-e2e`.
#
# $(B)/plugin/smpi/librankmap_mpi_smpi.a holds plugin/mpi/*.c compiled with smpicc -DRANKMAP_SMPI plus
# the core objects they use (mapping, topo, common, daemon client). An SMPI application links it as
#   smpicc app.c -Wl,--whole-archive librankmap_mpi_smpi.a -Wl,--no-whole-archive -Wl,-Bsymbolic-functions \
#          <hwloc, jansson, ibnetdisc, scotch libraries>
# so that its MPI_Cart_create & co. override SMPI's. --whole-archive is needed because SMPI 3.32's
# smpi.h declares every MPI_ function weak, and a weak reference never pulls a member out of an archive.
# SMPI_NO_OVERRIDE_MALLOC keeps SMPI's shared-malloc interception out of the library: with
# smpi/auto-shared-malloc-thresh, large buffers allocated at one source line would be shared by ranks.
#
# SimGrid is only needed here: `make bench-e2e` installs it (RANKMAP_EXTRA_PKGS=libsimgrid-dev for
# scripts/deps.sh), so `make test` does not pull it in. Nothing in `all` depends on smpicc.

SMPICC ?= smpicc
SMPI_B := $(B)/plugin/smpi
SMPI_SRC := $(wildcard plugin/mpi/*.c)
SMPI_OBJS := $(patsubst plugin/mpi/%.c,$(SMPI_B)/%.o,$(SMPI_SRC))
SMPI_CFLAGS = -O2 -g $(WARN) -std=gnu11 -fPIC -fvisibility=hidden -MMD -MP -DRANKMAP_SMPI \
	-DSMPI_NO_OVERRIDE_MALLOC -Wno-error=format-truncation -DRANKMAP_VERSION=\"$(VERSION)\" \
	$(PMPI_INC) $(PKG_CFLAGS)
# What a program linked with the archive also needs.
SMPI_LIB_DEPS = -Wl,--no-whole-archive -Wl,-Bsymbolic-functions $(PKG_LIBS) $(SCOTCH_LIBS) $(MUNGE_LIBS) -lm -lpthread

$(SMPI_B)/%.o: plugin/mpi/%.c
	@mkdir -p $(dir $@)
	$(SMPICC) $(SMPI_CFLAGS) -c -o $@ $<

# One relocatable object: the library's objects plus the core members they need (ld -r extracts
# archive members as a final link would). --whole-archive then pulls in exactly that, never unused
# core objects with dependencies of their own.
# (Built in the archive's recipe: tests/module.mk's .SECONDARY would let a missing intermediate pass.)
$(SMPI_B)/librankmap_mpi_smpi.a: $(SMPI_OBJS) $(B)/librmclient.a $(CORE_LIBS)
	@mkdir -p $(dir $@)
	rm -f $@ $(SMPI_B)/rankmap_smpi.o
	$(LD) -r -o $(SMPI_B)/rankmap_smpi.o $(SMPI_OBJS) --start-group $(B)/librmclient.a $(CORE_LIBS) --end-group
	$(AR) rcs $@ $(SMPI_B)/rankmap_smpi.o

# The benchmark programs: plain SMPI builds (baselines need no library) and rankmap builds.
E2E_DIR := tests/bench/e2e
E2E_B := $(B)/tests/e2e
E2E_PROGS := cart_bench ring_of_rings
E2E_COMMON := $(E2E_DIR)/e2e_common.c $(E2E_DIR)/e2e_common.h

$(E2E_B)/%: $(E2E_DIR)/%.c $(E2E_COMMON) $(SMPI_B)/librankmap_mpi_smpi.a
	@mkdir -p $(dir $@)
	$(SMPICC) -O2 -Wall -Wextra -Werror -std=gnu11 $(ALL_LDFLAGS) -o $@ $< $(E2E_DIR)/e2e_common.c \
		-Wl,--whole-archive $(SMPI_B)/librankmap_mpi_smpi.a $(SMPI_LIB_DEPS)

.PHONY: smpi-lib bench-e2e-progs bench-e2e
smpi-lib: $(SMPI_B)/librankmap_mpi_smpi.a
bench-e2e-progs: $(addprefix $(E2E_B)/,$(E2E_PROGS))

# E2E_QUICK=1 runs a reduced set (development); E2E_OUT sets the output directory.
bench-e2e:
	@RANKMAP_EXTRA_PKGS=libsimgrid-dev sh scripts/deps.sh
	@$(MAKE) --no-print-directory bench-e2e-progs
	@B=$(B) sh $(E2E_DIR)/run.sh
