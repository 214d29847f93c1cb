# plugin/mpi: the PMPI library, built once per MPI implementation from the same sources:
#   $(B)/librankmap_mpi_openmpi.so (mpicc.openmpi) and $(B)/librankmap_mpi_mpich.so (mpicc.mpich),
# each linked with the core static libraries and exporting only MPI_* (plugin/mpi/rankmap_mpi.map; the
# plugin objects keep default visibility because MPICH's mpi.h does not mark MPI_ functions public).
# It links no engine or fabric library: Scotch and libibnetdisc/libibmad (with libibumad and libudev
# under them) are in $(B)/librankmap_local.so, the local mapping helper that the root opens when it maps
# in its own process (plugin/mpi/pmpi_local.c), one for both MPIs (it calls no MPI function).
# MPI test programs (tests/mpi/*.c, tests/bench/pmpi/*.c) are built per MPI into $(B)/tests/mpi/<mpi>/ and
# $(B)/tests/bench/pmpi/<mpi>/ by `make test-progs`.
# The SimGrid SMPI variant (-DRANKMAP_SMPI) is described by plugin/mpi/smpi.mk.
PMPI_SRC := $(wildcard plugin/mpi/*.c)
PMPI_MAP := plugin/mpi/rankmap_mpi.map
LOCAL_MAP := plugin/mpi/rankmap_local.map
# The helper's objects: the only sources of the core libraries that call Scotch or libibnetdisc/libibmad,
# compiled again with default visibility so that the version script can export the three entry points.
# The MPI library defines the same three functions as forwarders (pmpi_local.c), so its link takes none of
# these objects from the archives.
LOCAL_OBJS := $(B)/plugin/local/scotch.o $(B)/plugin/local/target_scotch.o $(B)/plugin/local/net_ib_live.o
LOCAL_CFLAGS = $(filter-out -fvisibility=hidden,$(ALL_CFLAGS))
# Scotch is linked in statically (libscotch-dev's archives are position-independent): its symbols are then
# local to the helper (the version script), so no program's own Scotch, or functions of the same names,
# can take its calls, whatever the dynamic linker's lookup order (it is opened without RTLD_DEEPBIND, so
# that it shares the program's libc and malloc: pmpi_local.c).
LOCAL_LIBS = -l:libscotch.a -l:libscotcherr.a -lz -lbz2 -llzma $(PKG_LIBS) -lm -lpthread
# What the MPI library itself links: no Scotch, no InfiniBand libraries.
PMPI_LIBS = $(shell pkg-config --libs hwloc jansson 2>/dev/null) $(MUNGE_LIBS) -ldl -lm -lpthread
# Uses common/, topo/, mapping/ and the client library.
PMPI_INC := $(INC_common) $(INC_topo) $(INC_mapping) $(INC_client) -Iplugin/mpi
# -fno-plt: the wrappers tail-jump to PMPI_* through the GOT, not through a PLT stub as well.
PMPI_CFLAGS = $(filter-out -fvisibility=hidden,$(ALL_CFLAGS)) -fno-plt $(PMPI_INC)
PMPI_TESTS_SRC := $(wildcard tests/mpi/*.c)
# preload_libs defines functions named as Scotch's and as the library's internals, exported as an application
# linking its own copies would export them.
$(B)/tests/mpi/%/preload_libs: PMPI_PROG_LDFLAGS := -rdynamic
PMPI_BENCH_SRC := $(wildcard tests/bench/pmpi/*.c)
MPICC_openmpi := mpicc.openmpi
MPICC_mpich := mpicc.mpich

define pmpi_variant
$(B)/plugin/$(1)/%.o: plugin/mpi/%.c
	@mkdir -p $$(dir $$@)
	OMPI_CC=$$(CC) MPICH_CC=$$(CC) $$(MPICC_$(1)) $$(PMPI_CFLAGS) -c -o $$@ $$<

$(B)/librankmap_mpi_$(1).so: $(patsubst plugin/mpi/%.c,$(B)/plugin/$(1)/%.o,$(PMPI_SRC)) $(B)/librmclient.a $(CORE_LIBS) $(PMPI_MAP)
	OMPI_CC=$$(CC) MPICH_CC=$$(CC) $$(MPICC_$(1)) -shared $$(ALL_LDFLAGS) -Wl,--version-script=$(PMPI_MAP) \
		-Wl,-z,defs -o $$@ $$(filter %.o,$$^) $(B)/librmclient.a $(CORE_LIBS) $$(PMPI_LIBS)

$(B)/tests/mpi/$(1)/%: tests/mpi/%.c tests/mpi/cases.h tests/mpi/fakeplace.h
	@mkdir -p $$(dir $$@)
	OMPI_CC=$$(CC) MPICH_CC=$$(CC) $$(MPICC_$(1)) -O2 -g -Wall -Wextra -Werror -Wno-stringop-overflow -std=gnu11 $$(PMPI_PROG_LDFLAGS) -o $$@ $$< -lm

$(B)/tests/bench/pmpi/$(1)/%: tests/bench/pmpi/%.c
	@mkdir -p $$(dir $$@)
	OMPI_CC=$$(CC) MPICH_CC=$$(CC) $$(MPICC_$(1)) -O2 -g -Wall -Wextra -Werror -Wno-stringop-overflow -std=gnu11 -o $$@ $$<

all: $(B)/librankmap_mpi_$(1).so $(B)/librankmap_local.so
pmpi-tests: $(patsubst tests/mpi/%.c,$(B)/tests/mpi/$(1)/%,$(PMPI_TESTS_SRC))
pmpi-tests: $(patsubst tests/bench/pmpi/%.c,$(B)/tests/bench/pmpi/$(1)/%,$(PMPI_BENCH_SRC))
endef

$(B)/plugin/local/%.o: mapping/%.c
	@mkdir -p $(dir $@)
	$(CC) $(LOCAL_CFLAGS) $(INC_common) $(INC_topo) $(INC_mapping) $(SCOTCH_CFLAGS) -c -o $@ $<
$(B)/plugin/local/%.o: topo/%.c
	@mkdir -p $(dir $@)
	$(CC) $(LOCAL_CFLAGS) $(INC_common) $(INC_topo) -c -o $@ $<

$(B)/librankmap_local.so: $(LOCAL_OBJS) $(CORE_LIBS) $(LOCAL_MAP)
	$(CC) -shared $(ALL_LDFLAGS) -Wl,--version-script=$(LOCAL_MAP) -Wl,-Bsymbolic -Wl,-z,defs -o $@ \
		$(LOCAL_OBJS) $(CORE_LIBS) $(LOCAL_LIBS)

$(eval $(call pmpi_variant,openmpi))
$(eval $(call pmpi_variant,mpich))

.PHONY: pmpi-tests
test-progs: pmpi-tests

install: install-pmpi
INSTALLED += $(LIBDIR)/rankmap/librankmap_mpi_openmpi.so $(LIBDIR)/rankmap/librankmap_mpi_mpich.so \
	$(LIBDIR)/rankmap/librankmap_local.so
.PHONY: install-pmpi
install-pmpi: $(B)/librankmap_mpi_openmpi.so $(B)/librankmap_mpi_mpich.so $(B)/librankmap_local.so
	install -d $(DESTDIR)$(LIBDIR)/rankmap
	install -m 755 $(B)/librankmap_local.so $(DESTDIR)$(LIBDIR)/rankmap/librankmap_local.so
	install -m 755 $(B)/librankmap_mpi_openmpi.so $(DESTDIR)$(LIBDIR)/rankmap/librankmap_mpi_openmpi.so
	install -m 755 $(B)/librankmap_mpi_mpich.so $(DESTDIR)$(LIBDIR)/rankmap/librankmap_mpi_mpich.so
