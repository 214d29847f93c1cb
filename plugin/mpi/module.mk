# plugin/mpi: the PMPI library, built once per MPI implementation from the same sources:
#   $(B)/librankmap_mpi_openmpi.so (mpicc.openmpi) and $(B)/librankmap_mpi_mpich.so (mpicc.mpich),
# each linked with the core static libraries and exporting only MPI_* (plugin/mpi/rankmap_mpi.map; the
# plugin objects keep default visibility because MPICH's mpi.h does not mark MPI_ functions public).
# MPI test programs (tests/mpi/*.c, tests/bench/pmpi/*.c) are built per MPI into $(B)/tests/mpi/<mpi>/ and
# $(B)/tests/bench/pmpi/<mpi>/ by `make test-progs`.
# The SimGrid SMPI variant (-DRANKMAP_SMPI) is described by plugin/mpi/smpi.mk.
PMPI_SRC := $(wildcard plugin/mpi/*.c)
PMPI_MAP := plugin/mpi/rankmap_mpi.map
# Uses common/, topo/, mapping/ and the client library.
PMPI_INC := $(INC_common) $(INC_topo) $(INC_mapping) $(INC_client) -Iplugin/mpi
# -fno-plt: the wrappers tail-jump to PMPI_* through the GOT, not through a PLT stub as well.
PMPI_CFLAGS = $(filter-out -fvisibility=hidden,$(ALL_CFLAGS)) -fno-plt $(PMPI_INC)
PMPI_TESTS_SRC := $(wildcard tests/mpi/*.c)
PMPI_BENCH_SRC := $(wildcard tests/bench/pmpi/*.c)
MPICC_openmpi := mpicc.openmpi
MPICC_mpich := mpicc.mpich

define pmpi_variant
$(B)/plugin/$(1)/%.o: plugin/mpi/%.c
	@mkdir -p $$(dir $$@)
	OMPI_CC=$$(CC) MPICH_CC=$$(CC) $$(MPICC_$(1)) $$(PMPI_CFLAGS) -c -o $$@ $$<

$(B)/librankmap_mpi_$(1).so: $(patsubst plugin/mpi/%.c,$(B)/plugin/$(1)/%.o,$(PMPI_SRC)) $(B)/librmclient.a $(CORE_LIBS) $(PMPI_MAP)
	OMPI_CC=$$(CC) MPICH_CC=$$(CC) $$(MPICC_$(1)) -shared $$(ALL_LDFLAGS) -Wl,--version-script=$(PMPI_MAP) \
		-Wl,-z,defs -o $$@ $$(filter %.o,$$^) $(B)/librmclient.a $(CORE_LIBS) $$(LIBS_ALL)

$(B)/tests/mpi/$(1)/%: tests/mpi/%.c tests/mpi/cases.h tests/mpi/fakeplace.h
	@mkdir -p $$(dir $$@)
	OMPI_CC=$$(CC) MPICH_CC=$$(CC) $$(MPICC_$(1)) -O2 -g -Wall -Wextra -Werror -Wno-stringop-overflow -std=gnu11 -o $$@ $$< -lm

$(B)/tests/bench/pmpi/$(1)/%: tests/bench/pmpi/%.c
	@mkdir -p $$(dir $$@)
	OMPI_CC=$$(CC) MPICH_CC=$$(CC) $$(MPICC_$(1)) -O2 -g -Wall -Wextra -Werror -Wno-stringop-overflow -std=gnu11 -o $$@ $$<

all: $(B)/librankmap_mpi_$(1).so
pmpi-tests: $(patsubst tests/mpi/%.c,$(B)/tests/mpi/$(1)/%,$(PMPI_TESTS_SRC))
pmpi-tests: $(patsubst tests/bench/pmpi/%.c,$(B)/tests/bench/pmpi/$(1)/%,$(PMPI_BENCH_SRC))
endef

$(eval $(call pmpi_variant,openmpi))
$(eval $(call pmpi_variant,mpich))

.PHONY: pmpi-tests
test-progs: pmpi-tests

install: install-pmpi
INSTALLED += $(LIBDIR)/rankmap/librankmap_mpi_openmpi.so $(LIBDIR)/rankmap/librankmap_mpi_mpich.so
.PHONY: install-pmpi
install-pmpi: $(B)/librankmap_mpi_openmpi.so $(B)/librankmap_mpi_mpich.so
	install -d $(DESTDIR)$(LIBDIR)/rankmap
	install -m 755 $(B)/librankmap_mpi_openmpi.so $(DESTDIR)$(LIBDIR)/rankmap/librankmap_mpi_openmpi.so
	install -m 755 $(B)/librankmap_mpi_mpich.so $(DESTDIR)$(LIBDIR)/rankmap/librankmap_mpi_mpich.so
