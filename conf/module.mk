# conf/: the service unit, the configuration installed under $(SYSCONFDIR), the examples.
#
# $(B)/gen/paths.stamp records the installation directories; it changes (and what depends on it is
# rebuilt) only when one of them does, so `make && make install PREFIX=/usr` installs a SPANK plugin,
# a rankmapd, a unit, examples and manual pages made for /usr. Files named *.in here get the directories
# substituted for @PREFIX@, @SBINDIR@, @LIBDIR@, @SYSCONFDIR@... into $(B)/conf/.
PATH_VARS := PREFIX BINDIR SBINDIR LIBDIR MANDIR SYSCONFDIR DATADIR DOCDIR SYSTEMDUNITDIR
.PHONY: FORCE
$(PATHS_STAMP): FORCE
	@mkdir -p $(dir $@)
	@printf '%s\n' $(foreach v,$(PATH_VARS),'$(v)=$($(v))') >$@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv -f $@.tmp $@; \
		echo "installation directories: PREFIX=$(PREFIX) SYSCONFDIR=$(SYSCONFDIR) (rebuilding what embeds them)"; fi

SUBST_PATHS = sed $(foreach v,$(PATH_VARS),-e 's|@$(v)@|$($(v))|g')
CONF_GEN := $(B)/conf/rankmapd.service $(B)/conf/plugstack.conf.example $(B)/conf/cluster.conf.example
$(CONF_GEN): $(B)/conf/%: conf/%.in $(PATHS_STAMP)
	@mkdir -p $(dir $@)
	$(SUBST_PATHS) $< >$@.tmp
	@if grep -n '@[A-Z_]*@' $@.tmp; then echo "$<: unknown @PLACEHOLDER@" >&2; rm -f $@.tmp; exit 1; fi
	@mv -f $@.tmp $@

all: $(CONF_GEN)

# Installed configuration (conffiles): scripts/install-conf.sh never replaces a file an admin has: an
# existing file that differs from the shipped one is kept and the shipped one goes beside it as FILE.new.
# The examples (and the example cluster, PlaFRIM's hwloc and fabric data) go to $(DATADIR)/examples.
install: install-conf
INSTALLED += $(SYSTEMDUNITDIR)/rankmapd.service \
	$(addprefix $(DATADIR)/examples/,rankmapd.conf torus.conf.example plugstack.conf.example \
		cluster.conf.example rankmapd.default gpu-links-mi250x.conf plafrim/ib/ib-subnet0.txt plafrim/README) \
	$(addprefix $(DATADIR)/examples/plafrim/hwloc/,$(notdir $(wildcard tests/data/plafrim/hwloc/*.xml))) \
	$(addprefix $(DOCDIR)/,README.md ARCHITECTURE.md PROTOCOL.md FAULTS.md COST-GPU.md) $(DATADIR)/rankmap.schema.json
CONFFILES += conf/rankmapd.conf $(SYSCONFDIR)/rankmap/rankmapd.conf \
	$(B)/conf/cluster.conf.example $(SYSCONFDIR)/rankmap/cluster.conf.example \
	conf/rankmapd.default $(SYSCONFDIR)/default/rankmapd
.PHONY: install-conf
install-conf: $(CONF_GEN) conf/rankmapd.conf conf/rankmapd.default conf/torus.conf.example
	install -d $(DESTDIR)$(SYSTEMDUNITDIR) $(DESTDIR)$(DATADIR)/examples/plafrim/hwloc \
		$(DESTDIR)$(DATADIR)/examples/plafrim/ib $(DESTDIR)$(DOCDIR) $(DESTDIR)$(SYSCONFDIR)/rankmap \
		$(DESTDIR)$(SYSCONFDIR)/default
	install -m 644 $(B)/conf/rankmapd.service $(DESTDIR)$(SYSTEMDUNITDIR)/rankmapd.service
	install -m 644 conf/rankmapd.conf conf/torus.conf.example $(B)/conf/plugstack.conf.example \
		$(B)/conf/cluster.conf.example conf/gpu-links-mi250x.conf $(DESTDIR)$(DATADIR)/examples/
	install -m 644 conf/rankmapd.default $(DESTDIR)$(DATADIR)/examples/rankmapd.default
	install -m 644 tests/data/plafrim/hwloc/*.xml $(DESTDIR)$(DATADIR)/examples/plafrim/hwloc/
	install -m 644 tests/data/plafrim/ib/ib-subnet0.txt $(DESTDIR)$(DATADIR)/examples/plafrim/ib/
	install -m 644 tests/data/plafrim/README $(DESTDIR)$(DATADIR)/examples/plafrim/README
	sh scripts/install-conf.sh conf/rankmapd.conf $(DESTDIR)$(SYSCONFDIR)/rankmap/rankmapd.conf
	sh scripts/install-conf.sh $(B)/conf/cluster.conf.example $(DESTDIR)$(SYSCONFDIR)/rankmap/cluster.conf.example
	sh scripts/install-conf.sh conf/rankmapd.default $(DESTDIR)$(SYSCONFDIR)/default/rankmapd
	install -m 644 README.md ARCHITECTURE.md daemon/PROTOCOL.md tests/FAULTS.md topo/COST-GPU.md $(DESTDIR)$(DOCDIR)/
	install -m 644 daemon/rankmap.schema.json $(DESTDIR)$(DATADIR)/
