ORDER_SRC := $(wildcard order/*.c)
$(B)/liborder.a: $(call objs_of,$(ORDER_SRC))
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^
all: $(B)/liborder.a
