# common/: error struct, host lists, text helpers. Uses no other module.
COMMON_SRC := $(wildcard common/*.c)
$(call objs_of,$(COMMON_SRC)): INC := $(INC_common)
$(B)/libcommon.a: $(call objs_of,$(COMMON_SRC))
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^
all: $(B)/libcommon.a
