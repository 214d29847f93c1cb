# daemon/server/: rankmapd. Uses common/, topo/, topo/report/, order/, mapping/ and the client library.
SRV_SRC := $(wildcard daemon/server/*.c)
SRV_INC := $(INC_common) $(INC_topo) $(INC_report) $(INC_order) $(INC_mapping) $(INC_client) -Idaemon/server
$(call objs_of,$(SRV_SRC)): INC := $(SRV_INC)
# Without --config rankmapd reads $(SYSCONFDIR)/rankmap/rankmapd.conf: rebuilt when SYSCONFDIR changes.
$(B)/daemon/server/rankmapd.o: ALL_CFLAGS += -DRANKMAP_DEFAULT_CONFIG=\"$(SYSCONFDIR)/rankmap/rankmapd.conf\"
$(B)/daemon/server/rankmapd.o: $(PATHS_STAMP)

$(B)/rankmapd: $(call objs_of,$(SRV_SRC)) $(B)/libtopo_report.a $(B)/librmclient.a $(CORE_LIBS)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS_ALL)

all: $(B)/rankmapd

install: install-rankmapd
INSTALLED += $(SBINDIR)/rankmapd
.PHONY: install-rankmapd
install-rankmapd: $(B)/rankmapd
	install -d $(DESTDIR)$(SBINDIR)
	install -m 755 $(B)/rankmapd $(DESTDIR)$(SBINDIR)/rankmapd
