# tests/fuzz/module.mk: libFuzzer targets for every parser of outside input (tests/fuzz/fuzz_*.c).
#   make fuzz [FUZZ_SECONDS=N]   builds $(B)/fuzz/fuzz_* with clang and runs each target N seconds
#                                (default 30), seeded from tests/data, then replays the regressions of
#                                tests/data/fuzz-regressions/<target>/; prints "N passed, N failed".
#   make fuzz-build              builds only.
# The library sources are compiled again with clang and the fuzz flags into $(B)/fuzz/obj/ (the gcc
# objects of $(B) are not reused), then archived into $(B)/fuzz/librankmap_fuzz.a.
FUZZ_CC ?= clang-14
FUZZ_SECONDS ?= 30
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS = -g -O1 -fno-omit-frame-pointer $(FUZZ_SAN) -fsanitize=fuzzer-no-link -std=gnu11 -Wall -Wextra \
	-Wno-unused-parameter -DRANKMAP_VERSION=\"$(VERSION)\" -MMD -MP $(TEST_INC) $(PKG_CFLAGS)
# Everything is compiled with TEST_INC (tests/module.mk); the module walls are enforced by the gcc build.
FUZZ_LIB_SRC := $(COMMON_SRC) $(TOPO_SRC) $(REPORT_SRC) $(ORDER_SRC) $(MAPPING_SRC) $(CLIENT_SRC) \
	$(filter-out daemon/server/rankmapd.c,$(SRV_SRC))
FUZZ_LIB_OBJS := $(patsubst %.c,$(B)/fuzz/obj/%.o,$(FUZZ_LIB_SRC))
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(B)/fuzz/%,$(FUZZ_SRC))

$(B)/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c -o $@ $<

$(B)/fuzz/librankmap_fuzz.a: $(FUZZ_LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(B)/fuzz/fuzz_%: $(B)/fuzz/obj/tests/fuzz/fuzz_%.o $(B)/fuzz/librankmap_fuzz.a
	$(FUZZ_CC) -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $^ $(LIBS_ALL)

.PHONY: fuzz fuzz-build
fuzz-build: $(FUZZ_BINS)

fuzz: fuzz-build
	@B=$(B) FUZZ_SECONDS=$(FUZZ_SECONDS) sh tests/fuzz/run.sh
