# topo/report/: views of the model (the cluster report, the SVG pictures, Slurm's topology.conf).
# Uses common/ and topo/'s public headers (topo.h, topo_gpu.h, topo_view.h) only.
REPORT_SRC := $(wildcard topo/report/*.c)
$(call objs_of,$(REPORT_SRC)): INC := $(INC_common) $(INC_topo) $(INC_report)
$(B)/libtopo_report.a: $(call objs_of,$(REPORT_SRC))
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^
all: $(B)/libtopo_report.a
