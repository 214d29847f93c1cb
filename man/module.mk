# Manual pages: man/<page>.<section>.in, made into $(B)/man/<page>.<section> by man/mkman.py, which
# takes from the programs and files themselves what they already say (--help's usage, options, file
# size caps and commands; rankmapd's configuration keys and defaults; the plugin's arguments), so that
# the pages, --help and the documented files cannot drift; paths are the installation directories.
MAN_SRC   := $(wildcard man/*.in)
MAN_PAGES := $(patsubst man/%.in,$(B)/man/%,$(MAN_SRC))
MKMAN = python3 man/mkman.py $< $@ --paths $(PATHS_STAMP) --prog rankmapd=$(B)/rankmapd \
	--prog rankmapctl=$(B)/rankmapctl --file rankmapd.conf=conf/rankmapd.conf \
	--file plugstack.conf=$(B)/conf/plugstack.conf.example --file cluster.conf=$(B)/conf/cluster.conf.example

$(MAN_PAGES): $(B)/man/%: man/%.in man/mkman.py $(PATHS_STAMP) $(B)/rankmapd $(B)/rankmapctl conf/rankmapd.conf \
		$(B)/conf/plugstack.conf.example $(B)/conf/cluster.conf.example
	@mkdir -p $(dir $@)
	$(MKMAN)

all: $(MAN_PAGES)

install: install-man
INSTALLED += $(MANDIR)/man1/rankmapctl.1 $(MANDIR)/man5/rankmapd.conf.5 $(MANDIR)/man8/rankmapd.8 \
	$(MANDIR)/man8/spank_rankmap.8 $(MANDIR)/man7/rankmap.7
.PHONY: install-man
install-man: $(MAN_PAGES)
	install -d $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man7 $(DESTDIR)$(MANDIR)/man8
	for p in $(MAN_PAGES); do s=$${p##*.}; install -m 644 $$p $(DESTDIR)$(MANDIR)/man$$s/ || exit 1; done
