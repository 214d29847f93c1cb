# daemon/client/: the client library of rankmapd (wire format and calls), one public header rm_client.h.
# Uses common/ only. rankmapd, rankmapctl, the MPI library, the SPANK plugin and the fuzzers link it.
CLIENT_SRC := $(wildcard daemon/client/*.c)
$(call objs_of,$(CLIENT_SRC)): INC := $(INC_common) $(INC_client)
$(B)/librmclient.a: $(call objs_of,$(CLIENT_SRC))
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^
all: $(B)/librmclient.a
