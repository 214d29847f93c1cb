# order/: torus node orderings, the allocation simulator and its JSON form. Uses common/ and topo/.
ORDER_SRC := $(wildcard order/*.c)
$(call objs_of,$(ORDER_SRC)): INC := $(INC_common) $(INC_topo) $(INC_order)
$(B)/liborder.a: $(call objs_of,$(ORDER_SRC))
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^
all: $(B)/liborder.a
