# daemon/ctl/: rankmapctl. Uses every library module: common/, topo/, topo/report/, order/, mapping/
# and the client library.
CTL_SRC := $(wildcard daemon/ctl/*.c)
$(call objs_of,$(CTL_SRC)): INC := $(INC_common) $(INC_topo) $(INC_report) $(INC_order) $(INC_mapping) \
	$(INC_client) -Idaemon/ctl

$(B)/rankmapctl: $(call objs_of,$(CTL_SRC)) $(B)/libtopo_report.a $(B)/librmclient.a $(CORE_LIBS)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS_ALL)

all: $(B)/rankmapctl

install: install-rankmapctl
INSTALLED += $(BINDIR)/rankmapctl
.PHONY: install-rankmapctl
install-rankmapctl: $(B)/rankmapctl
	install -d $(DESTDIR)$(BINDIR)
	install -m 755 $(B)/rankmapctl $(DESTDIR)$(BINDIR)/rankmapctl
