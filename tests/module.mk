# Unit tests: every tests/unit/test_*.c becomes build/tests/test_*, linked with all core libraries.
UNIT_SRC  := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(B)/tests/%,$(UNIT_SRC))
BENCH_SRC := $(wildcard tests/bench/bench_*.c)
BENCH_BINS := $(patsubst tests/bench/%.c,$(B)/tests/%,$(BENCH_SRC))

$(B)/tests/%: $(B)/tests/unit/%.o $(B)/libdaemon.a $(CORE_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS_ALL)

$(B)/tests/bench_%: $(B)/tests/bench/bench_%.o $(B)/libdaemon.a $(CORE_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS_ALL)

.PHONY: test-progs
test-progs: $(UNIT_BINS) $(BENCH_BINS)

# Keep the objects of test programs (they are intermediate files of the pattern rules above).
.SECONDARY:

# libFuzzer targets (make fuzz), owned by tests/fuzz/module.mk.
-include tests/fuzz/module.mk
