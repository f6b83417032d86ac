# Solgate: the only entry point.  `make` builds, `make test` tests,
# `make run` starts the demo gateway, `make deps` installs Debian packages.

SHELL      := /bin/bash
ROOT       := $(abspath .)
BUILD      := $(ROOT)/build
NGX_SRC    := /usr/share/nginx/src
NGINX      ?= /usr/sbin/nginx
VERSION    := 0.1.0

CXX        ?= g++
CC         ?= gcc
CXXFLAGS   ?= -O2 -g
CFLAGS     ?= -O2 -g
WARN       := -Wall -Wextra -Werror

# `make unit-test SANITIZE=1`: libcore and the unit tests with ASan and
# UBSan, built apart (build-sanitize/), any finding fatal.
ifeq ($(SANITIZE),1)
BUILD      := $(ROOT)/build-sanitize
SAN_FLAGS  := -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=undefined -Wno-error=maybe-uninitialized
CXXFLAGS   := -O1 -g $(SAN_FLAGS)
CFLAGS     := -O1 -g $(SAN_FLAGS)
export ASAN_OPTIONS := detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS := print_stacktrace=1:halt_on_error=1
# `make prove SANITIZE=1`: the t/ suites with that module, loaded into
# Debian's nginx with the ASan runtime preloaded (tools/asan-nginx.sh);
# a finding ends its worker and leaves a report in build-sanitize/asan/.
NGX_SAN_CC := $(SAN_FLAGS)
PROVE_NGINX := $(ROOT)/tools/asan-nginx.sh
endif
# `make unit-test SANITIZE=thread`: libcore and the unit tests with TSan
# (build-tsan/), running the tests where threads or processes share
# something: leases, the cache lock's flights, the retrieval queue, the
# key limiter, the key ledger, the cache index, shared texts, the poller
# thread and the commit hand-off.
ifeq ($(SANITIZE),thread)
BUILD      := $(ROOT)/build-tsan
SAN_FLAGS  := -fsanitize=thread -fno-omit-frame-pointer \
	-Wno-error=maybe-uninitialized -Wno-error=tsan
CXXFLAGS   := -O1 -g $(SAN_FLAGS)
CFLAGS     := -O1 -g $(SAN_FLAGS)
TSAN_TESTS := PollerThread.* CommitHandoff.* ShmLeaseStore.* ShmBlockLeases.* \
	ShmTipStore.TwoWorkersMakingOneLaneMeetAtOneSlot \
	BlockFlightsTest.Threads* \
	SharedText.* KeyLimiter.Concurrent* KeyLimiter.SharedAcrossForkedProcesses \
	RetrievalQueue.AKeyLimitHoldsAcrossProcessesAndThreads \
	RetrievalQueue.DeadLockHolderDoesNotWedgeOthers \
	RetrievalQueue.TwoProcessesEnqueueConcurrently \
	KeyLedgerTest.ThreadsNoteWhileFlushing KeyLedgerTest.TwoProcesses* \
	KeyLedgerTest.KillNineLosesNoCommittedCount BlockStoreTest.Two* \
	BlockStoreTest.TempPathsAreUnique \
	BlockStoreTest.ReconcileKeepsTempFilesOfLiveProcesses
space := $(subst ,, )
GTEST_FILTER := $(subst $(space),:,$(TSAN_TESTS))
export TSAN_OPTIONS := halt_on_error=1:second_deadlock_stack=1
endif

# The libraries the module and libcore load at run time (the package's
# Depends, with the nginx ABI; the -dev packages below pull them in too).
RUNTIME_PACKAGES := libyajl2 libuv1 libcurl4 liblmdb0 libhiredis0.14 libssl3

# Debian packages the build, the tests, `make run` and `make deb` need.
DEB_PACKAGES := $(RUNTIME_PACKAGES) build-essential pkg-config nginx nginx-dev \
	libyajl-dev libuv1-dev libcurl4-openssl-dev libssl-dev liblmdb-dev \
	libhiredis-dev redis-server redis-tools \
	libcmocka-dev googletest libgtest-dev \
	libtest-base-perl libwww-perl libjson-pp-perl libio-socket-ssl-perl openssl \
	curl wrk libnginx-mod-http-lua lua-cjson \
	clang libclang-rt-14-dev valgrind chromium \
	debhelper dpkg-dev lintian

CORE_SRCS  := $(wildcard libcore/src/*/*.cpp)
CORE_OBJS  := $(patsubst libcore/src/%.cpp,$(BUILD)/libcore/%.o,$(CORE_SRCS))
# The core library carries its version in its file name and soname: the
# module needs exactly the core it was built with (the C ABI between them
# is private and changes between releases), so a module never loads
# another version's core.  libsolgate_core.so is a link for -lsolgate_core.
CORE_SONAME := libsolgate_core.so.$(VERSION)
CORE_LIB   := $(BUILD)/modules/$(CORE_SONAME)
CORE_FLAGS := -std=c++17 -fPIC -fvisibility=hidden -fvisibility-inlines-hidden \
	-DSOLGATE_BUILDING_CORE -DSOLGATE_VERSION='"$(VERSION)"' \
	-Ilibcore/include -Ilibcore/src $(WARN)

MODULE     := $(BUILD)/modules/ngx_http_solgate_module.so
MODULE_SRCS := $(wildcard ngx_module/src/*.c ngx_module/src/*.h) ngx_module/config \
	ngx_module/rpath.opts ngx_module/ngx_http_solgate_module.map \
	libcore/include/solgate/solgate.h
NGX_BUILD  := $(BUILD)/nginx

SIM        := $(BUILD)/bin/solana-sim
SIM_SRCS   := $(wildcard tools/solana-sim/src/*.cpp tools/solana-sim/src/*.h)

GTEST_BIN  := $(BUILD)/test/libcore_tests
GTEST_SRCS := $(wildcard libcore/test/*/*.cpp)
GTEST_OBJS := $(patsubst libcore/test/%.cpp,$(BUILD)/test/libcore/%.o,$(GTEST_SRCS))
CMOCKA_BIN := $(BUILD)/test/module_tests
CMOCKA_SRCS := $(wildcard ngx_module/test/*.c)

.PHONY: all deps test test-build fuzz-syntax conf-check unit-test sim-test kit-client prove run bench request-cost fuzz soak clean \
	module install uninstall deb

all: $(MODULE) $(SIM)

# --- dependencies ---------------------------------------------------------

deps:
	@missing=""; \
	for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then echo "deps: all Debian packages present"; exit 0; fi; \
	echo "deps: installing$$missing"; \
	if [ "$$(id -u)" != 0 ]; then echo "deps: run 'make deps' as root to install:$$missing" >&2; exit 1; fi; \
	export DEBIAN_FRONTEND=noninteractive; \
	apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends $$missing >/dev/null \
	  || { echo "deps: apt-get install failed" >&2; exit 1; }

$(BUILD)/.deps-ok: Makefile
	@$(MAKE) --no-print-directory deps
	@mkdir -p $(BUILD) && touch $@

# --- libcore --------------------------------------------------------------

# -MMD: each object depends on the headers it includes (the .d files).
$(BUILD)/libcore/%.o: libcore/src/%.cpp | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) $(CORE_FLAGS) -MMD -MP -c $< -o $@

$(CORE_LIB): $(CORE_OBJS)
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -shared -Wl,-soname,$(CORE_SONAME) -Wl,-z,defs -o $@ $^ -lyajl -luv -lcurl -lcrypto -llmdb -lhiredis -lpthread
	ln -sfn $(CORE_SONAME) $(dir $@)libsolgate_core.so

# --- the nginx module -----------------------------------------------------

# Configure once against Debian's nginx sources with the flags its binary
# was built with (--with-compat), out of tree under build/nginx.
$(NGX_BUILD)/Makefile: ngx_module/config ngx_module/rpath.opts Makefile | $(CORE_LIB)
	@mkdir -p $(NGX_BUILD)
	cd $(NGX_SRC) && source ./conf_flags && SOLGATE_CORE_LIB=$(BUILD)/modules ./configure \
	  --with-cc-opt="$$(dpkg-buildflags --get CFLAGS) -fPIC $$(dpkg-buildflags --get CPPFLAGS) -I$(ROOT)/libcore/include $(NGX_SAN_CC)" \
	  --with-ld-opt="$$(dpkg-buildflags --get LDFLAGS) -fPIC $(NGX_SAN_CC)" \
	  "$${NGX_CONF_FLAGS[@]}" \
	  --add-dynamic-module=$(ROOT)/ngx_module \
	  --builddir=$(NGX_BUILD) > $(NGX_BUILD)/configure.log 2>&1 \
	  || { tail -20 $(NGX_BUILD)/configure.log; exit 1; }

$(MODULE): $(NGX_BUILD)/Makefile $(MODULE_SRCS) $(CORE_LIB)
	SOLGATE_CORE_LIB=$(BUILD)/modules $(MAKE) --no-print-directory \
	  -f $(NGX_BUILD)/Makefile -C $(NGX_SRC) modules
	@# a new file, renamed into place: a running nginx keeps the old one mapped
	cp $(NGX_BUILD)/ngx_http_solgate_module.so $@.tmp && mv -f $@.tmp $@

# --- tools ----------------------------------------------------------------

$(SIM): $(SIM_SRCS) | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 $(CXXFLAGS) $(WARN) -o $@ tools/solana-sim/src/*.cpp -luv -lyajl -lpthread

# --- tests ----------------------------------------------------------------

# One object per test file, so a change rebuilds only what it touches.
$(BUILD)/test/libcore/%.o: libcore/test/%.cpp | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -std=c++17 -Ilibcore/include -Ilibcore/src -Ilibcore/test $(WARN) -MMD -MP -c $< -o $@

$(GTEST_BIN): $(GTEST_OBJS) $(CORE_OBJS)
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -o $@ $(GTEST_OBJS) $(CORE_OBJS) \
	  -lgtest -lgtest_main -lyajl -luv -lcurl -lcrypto -llmdb -lhiredis -lpthread

$(CMOCKA_BIN): $(CMOCKA_SRCS) $(wildcard ngx_module/src/*.[ch]) $(NGX_BUILD)/Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Wall -Wextra -Werror -Wno-unused-parameter \
	  -I$(NGX_SRC)/src/core -I$(NGX_SRC)/src/event -I$(NGX_SRC)/src/event/modules \
	  -I$(NGX_SRC)/src/os/unix -I$(NGX_SRC)/src/http -I$(NGX_SRC)/src/http/modules \
	  -I$(NGX_SRC)/src/http/v2 \
	  -I$(NGX_BUILD) -Ingx_module/src -Ilibcore/include \
	  -o $@ $(CMOCKA_SRCS) ngx_module/src/ngx_http_solgate_body.c -lcmocka

-include $(CORE_OBJS:.o=.d) $(GTEST_OBJS:.o=.d)

unit-test: $(GTEST_BIN) $(CMOCKA_BIN)
	$(GTEST_BIN) --gtest_brief=1 $(if $(GTEST_FILTER),--gtest_filter='$(GTEST_FILTER)')
	$(CMOCKA_BIN)

sim-test: $(SIM)
	SOLANA_SIM=$(SIM) tools/solana-sim/test/sim_smoke.sh

prove: all
	$(if $(PROVE_NGINX),rm -rf $(BUILD)/asan && mkdir -p $(BUILD)/asan)
	$(if $(PROVE_NGINX),SOLGATE_ASAN_LOG=$(BUILD)/asan/asan SOLGATE_NGINX=$(NGINX)) \
	TEST_NGINX_BINARY=$(or $(PROVE_NGINX),$(NGINX)) \
	TEST_NGINX_LOAD_MODULES=$(MODULE) \
	TEST_NGINX_SIM=$(SIM) \
	TEST_NGINX_CONF_DIR=$(ROOT)/conf \
	prove -I t/lib -r $(or $(T),t/)
	$(if $(PROVE_NGINX),@if ls $(BUILD)/asan/asan.* >/dev/null 2>&1; then \
	  echo "ASan/UBSan findings:"; head -50 $(BUILD)/asan/asan.*; exit 1; fi)

# The @solana/kit client t/090 runs when node is present; its packages come
# from the npm registry (package-lock.json pins them).
kit-client:
	@if ! command -v npm >/dev/null 2>&1; then \
	  echo "kit-client: npm not found; t/090 skips its @solana/kit check"; \
	elif [ ! -d tools/kit-client/node_modules/@solana/kit ]; then \
	  (cd tools/kit-client && npm ci --no-audit --no-fund --loglevel=error) \
	  || echo "kit-client: npm ci failed; t/090 skips its @solana/kit check"; \
	fi

test: all fuzz-syntax conf-check unit-test sim-test kit-client prove

# conf/solgate_dispatch.conf is solgate_proxy.conf with the dispatcher's
# proxy_pass and headers, written by tools/dispatch-conf.sh: the two must
# not drift.
conf-check:
	@set -o pipefail; tools/dispatch-conf.sh conf/solgate_proxy.conf | diff -u conf/solgate_dispatch.conf - \
	  || { echo "conf/solgate_dispatch.conf is behind conf/solgate_proxy.conf: run tools/dispatch-conf.sh > conf/solgate_dispatch.conf" >&2; exit 1; }

# everything `make test` runs, built (with -j2) but not run
test-build: all $(GTEST_BIN) $(CMOCKA_BIN) fuzz-syntax

# The fuzz harnesses compiled for syntax only, with the unit tests' flags:
# `make test` does not build them (that is `make fuzz`, with clang), so a
# libcore interface change they call would otherwise first fail in CI.
FUZZ_SYNTAX_OKS := $(patsubst fuzz/%.cpp,$(BUILD)/fuzz-syntax/%.ok,$(wildcard fuzz/*_fuzzer.cpp))

fuzz-syntax: $(FUZZ_SYNTAX_OKS)

$(BUILD)/fuzz-syntax/%.ok: fuzz/%.cpp | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -fsyntax-only -Wall -Wextra -Werror \
	  -Ilibcore/include -Ilibcore/src -Ilibcore/test -MMD -MP -MF $@.d -MT $@ $<
	@touch $@

-include $(FUZZ_SYNTAX_OKS:=.d)

# --- running --------------------------------------------------------------

run: all
	SOLGATE_NGINX=$(NGINX) tools/run-demo.sh

bench: all
	rm -rf $(BUILD)/bench/targets
	SOLGATE_NGINX=$(NGINX) tools/bench/run.sh
	SOLGATE_NGINX=$(NGINX) PROFILE_VARIANTS="baseline lua solgate" tools/bench/profile.sh balance 5
	SOLGATE_NGINX=$(NGINX) tools/bench/cached_block.sh
	SOLGATE_NGINX=$(NGINX) tools/bench/region_down.pl
	tools/bench/core_bench.sh
	SOLGATE_NGINX=$(NGINX) tools/bench/policy_cost.sh
	SOLGATE_NGINX=$(NGINX) tools/bench/ws_subscribers.pl
	tools/bench/targets.pl $(BUILD)/bench/targets

# the rest of a forwarded request in libcore, call by call (no port)
request-cost: $(CORE_LIB)
	tools/bench/request_cost.sh

# --- installing and packaging --------------------------------------------

# `make install` (as root, or with DESTDIR for a staging root): the module
# and its core library, stripped, in the directory Debian's nginx loads
# modules from (nginx -V: --modules-path=/usr/lib/nginx/modules), the
# load line in modules-available (enable it by linking it into
# /etc/nginx/modules-enabled/, as the package's postinst does), the
# forwarding snippets as /etc/nginx/snippets/solgate_proxy.conf and
# solgate_dispatch.conf, and the
# README and examples.  build/ keeps its unstripped files.
PREFIX     ?= /usr
SYSCONFDIR ?= /etc
MODULEDIR  ?= $(PREFIX)/lib/nginx/modules
MODCONFDIR ?= $(PREFIX)/share/nginx/modules-available
DOCDIR     ?= $(PREFIX)/share/doc/libnginx-mod-http-solgate
INSTALL    ?= install
# debian/rules sets STRIP=: and leaves it to dh_strip (the -dbgsym package)
STRIP      ?= strip --strip-unneeded --remove-section=.comment --remove-section=.note
# Debian's nginx runs from /usr/share/nginx, where modules/ is MODULEDIR
MODULE_LOAD := $(if $(filter /usr/lib/nginx/modules,$(MODULEDIR)),modules,$(MODULEDIR))
INSTALLED  := $(DESTDIR)$(MODULEDIR)/ngx_http_solgate_module.so \
	$(DESTDIR)$(MODULEDIR)/$(CORE_SONAME) \
	$(DESTDIR)$(MODCONFDIR)/mod-http-solgate.conf \
	$(DESTDIR)$(SYSCONFDIR)/nginx/snippets/solgate_proxy.conf \
	$(DESTDIR)$(SYSCONFDIR)/nginx/snippets/solgate_dispatch.conf \
	$(DESTDIR)$(DOCDIR)/README.md \
	$(DESTDIR)$(DOCDIR)/examples/solgate-production.conf \
	$(DESTDIR)$(DOCDIR)/examples/solgate-fleet.conf

module: $(MODULE)

install: $(MODULE)
	$(INSTALL) -d $(DESTDIR)$(MODULEDIR) $(DESTDIR)$(MODCONFDIR) \
	  $(DESTDIR)$(SYSCONFDIR)/nginx/snippets $(DESTDIR)$(DOCDIR)/examples
	$(INSTALL) -m 0644 $(MODULE) $(CORE_LIB) $(DESTDIR)$(MODULEDIR)/
	$(STRIP) $(DESTDIR)$(MODULEDIR)/ngx_http_solgate_module.so $(DESTDIR)$(MODULEDIR)/$(CORE_SONAME)
	echo 'load_module $(MODULE_LOAD)/ngx_http_solgate_module.so;' \
	  > $(DESTDIR)$(MODCONFDIR)/mod-http-solgate.conf
	$(INSTALL) -m 0644 conf/solgate_proxy.conf conf/solgate_dispatch.conf \
	  $(DESTDIR)$(SYSCONFDIR)/nginx/snippets/
	$(INSTALL) -m 0644 README.md $(DESTDIR)$(DOCDIR)/
	$(INSTALL) -m 0644 conf/solgate-production.conf conf/solgate-fleet.conf \
	  $(DESTDIR)$(DOCDIR)/examples/

# what install put there (a link in modules-enabled is the operator's)
uninstall:
	rm -f $(INSTALLED)

# `make deb`: libnginx-mod-http-solgate_VERSION_ARCH.deb in build/deb/,
# built by debhelper (debian/rules, with Debian's dh_nginx) from the
# module and library `make` built, then checked by lintian (any E: fails).
# debian/rules is run as dpkg-buildpackage runs it, without the source
# package and .changes it would write into the checkout's parent.
DEB_ARCH   := $(shell dpkg --print-architecture 2>/dev/null)
DEB_DIR    := $(BUILD)/deb
DEB        := $(DEB_DIR)/libnginx-mod-http-solgate_$(VERSION)_$(DEB_ARCH).deb
DEB_SRCS   := $(wildcard debian/* debian/source/*) README.md \
	conf/solgate_proxy.conf conf/solgate_dispatch.conf conf/solgate-production.conf \
	conf/solgate-fleet.conf

$(DEB): $(MODULE) $(DEB_SRCS) | $(BUILD)/.deps-ok
	@v=$$(dpkg-parsechangelog -S Version); [ "$$v" = "$(VERSION)" ] || { \
	  echo "deb: debian/changelog is at $$v, the Makefile at $(VERSION): add an entry (dch -v $(VERSION))" >&2; exit 1; }
	dpkg-checkbuilddeps
	rm -rf $(DEB_DIR) && mkdir -p $(DEB_DIR)
	export DEB_RULES_REQUIRES_ROOT=no \
	  SOURCE_DATE_EPOCH=$$(dpkg-parsechangelog -S Timestamp); \
	  DEB_DESTDIR=$(DEB_DIR); export DEB_DESTDIR; \
	  debian/rules build && debian/rules binary && debian/rules clean
	@ls -l $(DEB_DIR)/*.deb

$(DEB_DIR)/lintian.txt: $(DEB)
	lintian --fail-on error --tag-display-limit 0 $< > $@.tmp 2>&1 \
	  || { cat $@.tmp; echo "deb: lintian found errors (E: above)" >&2; exit 1; }
	@cat $@.tmp; mv $@.tmp $@

ifeq ($(SANITIZE),)
deb: $(DEB) $(DEB_DIR)/lintian.txt
else
deb:
	@echo "deb: it packages the normal build (build/); run it without SANITIZE" >&2; exit 1
endif

# --- soak -----------------------------------------------------------------

# Mixed traffic while the gateway reloads, loses workers and its nodes
# fail and come back (tools/soak/soak.pl); fails on any lost request or
# alert.
SOAK_SECONDS ?= 60
soak: all
	SOLGATE_NGINX=$(NGINX) tools/soak/soak.pl $(SOAK_SECONDS)

# --- fuzzing --------------------------------------------------------------

# libFuzzer harnesses (fuzz/*_fuzzer.cpp) over libcore built apart with
# clang, ASan and UBSan; each runs FUZZ_SECONDS from its seed corpus
# (fuzz/corpus/NAME, read only; what it learns goes to build/fuzz/corpus).
FUZZ_SECONDS ?= 30
FUZZ_CXX     ?= clang++
FUZZ_DIR     := $(BUILD)/fuzz
FUZZ_FLAGS   := -O1 -g -std=c++17 -fsanitize=address,undefined \
	-fno-sanitize-recover=undefined -DSOLGATE_BUILDING_CORE \
	-DSOLGATE_VERSION='"$(VERSION)"' -Ilibcore/include -Ilibcore/src
FUZZ_OBJS    := $(patsubst libcore/src/%.cpp,$(FUZZ_DIR)/obj/%.o,$(CORE_SRCS))
FUZZ_NAMES   := $(basename $(notdir $(wildcard fuzz/*_fuzzer.cpp)))
FUZZ_BINS    := $(addprefix $(FUZZ_DIR)/bin/,$(FUZZ_NAMES))

$(FUZZ_DIR)/obj/%.o: libcore/src/%.cpp | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(FUZZ_CXX) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@

$(FUZZ_DIR)/bin/%: fuzz/%.cpp fuzz/fuzz_common.h $(FUZZ_OBJS)
	@mkdir -p $(dir $@)
	@echo "link $@"
	@$(FUZZ_CXX) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_OBJS) \
	  $(FUZZ_LIBS) -lyajl -luv -lcurl -lcrypto -llmdb -lhiredis -lpthread

# the decide path's harness sets its region up with the unit tests' rig
$(FUZZ_DIR)/bin/block_decide_fuzzer: FUZZ_FLAGS += -Ilibcore/test
$(FUZZ_DIR)/bin/block_decide_fuzzer: FUZZ_LIBS := -lgtest

fuzz: $(FUZZ_BINS)
	tools/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_DIR) $(FUZZ_BINS)

# the objects are kept between runs (they are not intermediate files)
.SECONDARY: $(FUZZ_OBJS)
-include $(FUZZ_OBJS:.o=.d)

clean:
	rm -rf $(BUILD) t/servroot
