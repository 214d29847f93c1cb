# topo/: the model of the machine (hwloc nodes, InfiniBand fabric, torus, cost model, targets).
# Uses common/. Its views live in topo/report/ (topo/report/module.mk).
TOPO_SRC := $(wildcard topo/*.c)
$(call objs_of,$(TOPO_SRC)): INC := $(INC_common) $(INC_topo)
$(B)/libtopo.a: $(call objs_of,$(TOPO_SRC))
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^
all: $(B)/libtopo.a
