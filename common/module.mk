COMMON_SRC := $(wildcard common/*.c)
$(B)/libcommon.a: $(call objs_of,$(COMMON_SRC))
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^
all: $(B)/libcommon.a
