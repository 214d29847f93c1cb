# plugin/spank: the Slurm SPANK plugin spank_rankmap.so (Slurm 22.05 SPANK API, /usr/include/slurm).
# Its pure pieces (ELF/MPI detection, options, CPU lists) also go into libspank_rm.a for the unit tests
# tests/unit/test_spank_*.c.
SPANK_SRC  := $(wildcard plugin/spank/*.c)
SPANK_OBJS := $(call objs_of,$(SPANK_SRC))
SPANK_PURE := $(call objs_of,plugin/spank/spank_elf.c plugin/spank/spank_opts.c plugin/spank/spank_bind.c \
	plugin/spank/spank_pattern.c plugin/spank/spank_gpu.c)
SPANK_SO   := $(B)/spank_rankmap.so

# Uses common/, topo/ (through mapping.h), mapping/ and the client library.
SPANK_INC := $(INC_common) $(INC_topo) $(INC_mapping) $(INC_client) -Iplugin/spank
$(SPANK_OBJS): INC := $(SPANK_INC)
# The library directory is built in (plugstack's libdir= overrides it): rebuilt when LIBDIR changes.
$(SPANK_OBJS) $(B)/tests/unit/test_spank_opts.o: ALL_CFLAGS += -DRANKMAP_LIBDIR=\"$(LIBDIR)/rankmap\"
$(SPANK_OBJS) $(B)/tests/unit/test_spank_opts.o: $(PATHS_STAMP)

$(B)/libspank_rm.a: $(SPANK_PURE)
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^

$(SPANK_SO): $(SPANK_OBJS) $(B)/librmclient.a $(CORE_LIBS) plugin/spank/spank_rankmap.map
	$(CC) $(ALL_LDFLAGS) -shared -Wl,--version-script=plugin/spank/spank_rankmap.map -Wl,--as-needed \
		-o $@ $(SPANK_OBJS) $(B)/librmclient.a $(CORE_LIBS) $(LIBS_ALL)

# Unit tests of the pure pieces link libspank_rm.a ahead of the core libraries.
SPANK_TESTS := $(patsubst tests/unit/%.c,$(B)/tests/%,$(wildcard tests/unit/test_spank_*.c))
$(SPANK_TESTS): $(B)/tests/%: $(B)/tests/unit/%.o $(B)/libspank_rm.a $(TEST_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS_ALL)
$(patsubst $(B)/tests/%,$(B)/tests/unit/%.o,$(SPANK_TESTS)): INC := $(TEST_INC) -Iplugin/spank

all: $(SPANK_SO)

install: install-spank
INSTALLED += $(LIBDIR)/rankmap/spank_rankmap.so
.PHONY: install-spank
install-spank: $(SPANK_SO)
	install -d $(DESTDIR)$(LIBDIR)/rankmap
	install -m 755 $(SPANK_SO) $(DESTDIR)$(LIBDIR)/rankmap/spank_rankmap.so
