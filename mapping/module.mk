MAPPING_SRC := $(wildcard mapping/*.c)
$(B)/libmapping.a: $(call objs_of,$(MAPPING_SRC))
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^
all: $(B)/libmapping.a
