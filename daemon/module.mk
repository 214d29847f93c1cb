# rankmapctl: daemon/rankmapctl.c + daemon/ctl_*.c; rankmapd: daemon/rankmapd.c + daemon/srv_*.c;
# daemon/lib_*.c (protocol, client) is shared by both.
DLIB_SRC := $(wildcard daemon/lib_*.c)
CTL_SRC  := daemon/rankmapctl.c $(wildcard daemon/ctl_*.c)
SRV_SRC  := daemon/rankmapd.c $(wildcard daemon/srv_*.c)

$(B)/libdaemon.a: $(call objs_of,$(DLIB_SRC))
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^

$(B)/rankmapctl: $(call objs_of,$(CTL_SRC)) $(B)/libdaemon.a $(CORE_LIBS)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS_ALL)

$(B)/rankmapd: $(call objs_of,$(SRV_SRC)) $(B)/libdaemon.a $(CORE_LIBS)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS_ALL)

all: $(B)/rankmapctl
ifneq ($(wildcard daemon/rankmapd.c),)
all: $(B)/rankmapd
endif

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SBINDIR)
	install -m 755 $(B)/rankmapctl $(DESTDIR)$(BINDIR)/rankmapctl
	if [ -f $(B)/rankmapd ]; then install -m 755 $(B)/rankmapd $(DESTDIR)$(SBINDIR)/rankmapd; fi
