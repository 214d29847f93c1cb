# mapping/: communication graphs and the mapping engines (TreeMatch, Scotch, ...). Uses common/ and
# topo/; the only module that includes scotch.h (mapping/target_scotch.c builds Scotch targets).
MAPPING_SRC := $(wildcard mapping/*.c)
$(call objs_of,$(MAPPING_SRC)): INC := $(INC_common) $(INC_topo) $(INC_mapping) $(SCOTCH_CFLAGS)
$(B)/libmapping.a: $(call objs_of,$(MAPPING_SRC))
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^
all: $(B)/libmapping.a
