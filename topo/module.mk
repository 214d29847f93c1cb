TOPO_SRC := $(wildcard topo/*.c)
$(B)/libtopo.a: $(call objs_of,$(TOPO_SRC))
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^
all: $(B)/libtopo.a
