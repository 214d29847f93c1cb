# C tests: every tests/unit/test_*.c (units, in process) and every tests/integration/test_*.c (C tests
# that start a real rankmapd, beside the daemon's other tests there; tests/integration/test_daemon_util.h)
# becomes build/tests/test_*, linked with all core libraries; tests/run.sh runs them all by that name.
# Tests may reach a module's internals (a test_topo_* test includes topo's private headers, the daemon
# tests and fuzzers rankmapd's srv.h): TEST_INC holds every module's folder and the top of the tree
# (for "tests/harness.h", "daemon/server/srv.h"). tests/integration/module_walls.sh checks that only
# tests/ use this exemption.
UNIT_SRC  := $(wildcard tests/unit/test_*.c)
DTEST_SRC := $(wildcard tests/integration/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(B)/tests/%,$(UNIT_SRC)) $(patsubst tests/integration/%.c,$(B)/tests/%,$(DTEST_SRC))
BENCH_SRC := $(wildcard tests/bench/bench_*.c) tests/bench/mapping/bench_quality.c
BENCH_BINS := $(patsubst tests/bench/%.c,$(B)/tests/%,$(wildcard tests/bench/bench_*.c)) $(B)/tests/mapping/bench_quality
TEST_INC := -I. $(INC_common) $(INC_topo) $(INC_report) $(INC_order) $(INC_mapping) $(INC_client) \
	$(SCOTCH_CFLAGS)
TEST_LIBS := $(B)/libtopo_report.a $(B)/librmclient.a $(CORE_LIBS)
$(call objs_of,$(UNIT_SRC) $(DTEST_SRC) $(BENCH_SRC)): INC := $(TEST_INC)

$(B)/tests/%: $(B)/tests/unit/%.o $(TEST_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS_ALL)

$(patsubst tests/integration/%.c,$(B)/tests/%,$(DTEST_SRC)): $(B)/tests/%: $(B)/tests/integration/%.o $(TEST_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS_ALL)

$(B)/tests/bench_%: $(B)/tests/bench/bench_%.o $(TEST_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS_ALL)

# tests/bench/mapping/run.sh runs it on gen_instances.py's files (so its name is not build/tests/bench_*, which tests/bench/run.sh runs bare).
$(B)/tests/mapping/bench_quality: $(B)/tests/bench/mapping/bench_quality.o $(TEST_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS_ALL)

.PHONY: test-progs
test-progs: $(UNIT_BINS) $(BENCH_BINS)

# Keep the objects of test programs (they are intermediate files of the pattern rules above).
.SECONDARY:
