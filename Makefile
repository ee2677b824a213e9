# pqvault build.  `make` builds build/libpqvault.a and build/pqvault;
# `make test` builds and runs every test; `make SAN=1 test` does the same
# under AddressSanitizer and UndefinedBehaviorSanitizer in build-san/.

CC ?= cc
PREFIX ?= /usr/local
DESTDIR ?=
SAN ?= 0
VERSION = 0.1.0

ifeq ($(SAN),1)
BUILD ?= build-san
SANFLAGS = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
OPT = -O1
else
BUILD ?= build
SANFLAGS =
OPT = -O2
endif

CFLAGS ?= $(OPT) -g
WARN = -Wall -Wextra -Werror -Wshadow -Wpointer-arith -Wstrict-prototypes -Wmissing-prototypes
ALL_CFLAGS = -std=c11 -D_GNU_SOURCE $(WARN) -Iinclude -Isrc -pthread $(SANFLAGS) $(CFLAGS)
LDLIBS = -lcrypto -largon2 -lcurl -lexpat -lpthread
ALL_LDFLAGS = -pthread $(SANFLAGS) $(LDFLAGS)

LIB_SRCS = $(sort $(wildcard src/util/*.c src/crypto/*.c src/keys/*.c src/storage/*.c src/vault/*.c))
CLI_SRCS = $(sort $(wildcard src/cli/*.c))
TEST_SRCS = $(sort $(wildcard tests/test_*.c))
BENCH_SRCS = $(sort $(wildcard bench/bench_*.c))

LIB_OBJS = $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)
CLI_OBJS = $(CLI_SRCS:%.c=$(BUILD)/obj/%.o)
TEST_BINS = $(TEST_SRCS:tests/%.c=$(BUILD)/tests/%)
BENCH_BINS = $(BENCH_SRCS:bench/%.c=$(BUILD)/bench/%)

LIB = $(BUILD)/libpqvault.a
BIN = $(BUILD)/pqvault

# Instruction-set specific kernels: compiled with their own flags and
# selected at run time (the portable code is always built).
$(BUILD)/obj/%_avx2.o: ALL_CFLAGS += -mavx2
$(BUILD)/obj/%_avx512.o: ALL_CFLAGS += -mavx512f -mavx512bw -mavx512vl -mavx2

.PHONY: all test check clang-build check-tests clean install static bench demo ct fuzz fuzz-build fuzz-ci

all: $(LIB) $(BIN)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(LIB): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

$(BIN): $(CLI_OBJS) $(LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $(CLI_OBJS) $(LIB) $(LDLIBS)

$(BUILD)/tests/%: tests/%.c $(LIB) tests/harness.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests -o $@ $< $(LIB) $(ALL_LDFLAGS) $(LDLIBS)

# The crash and fault tests share tests/vaultcheck.h and, with the
# corruption test, tests/vault_fixture.h; the crash test links the crash
# simulator (tests/crashsim.c).
$(BUILD)/tests/test_crash: tests/test_crash.c tests/crashsim.c tests/crashsim.h tests/vaultcheck.h tests/vault_fixture.h $(LIB) tests/harness.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests -o $@ tests/test_crash.c tests/crashsim.c $(LIB) $(ALL_LDFLAGS) $(LDLIBS)

# The S3 tests' driver of the storage backend (needs a server: started by
# tests/cli/s3_*.sh, not by run.sh).
S3_LIVE = $(BUILD)/tests/s3_live
$(S3_LIVE): tests/s3_live.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ tests/s3_live.c $(LIB) $(ALL_LDFLAGS) $(LDLIBS)

$(BUILD)/tests/test_faults: tests/vaultcheck.h tests/vault_fixture.h
$(BUILD)/tests/test_corruption: tests/vault_fixture.h

$(BUILD)/bench/%: bench/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LIB) $(ALL_LDFLAGS) $(LDLIBS)

check-tests: $(TEST_BINS) $(BIN) $(S3_LIVE)

test: $(TEST_BINS) $(BIN) $(S3_LIVE)
	BUILD=$(BUILD) PQV_SAN=$(SAN) sh tests/run.sh

# Everything CI runs: the suite plain (gcc), under ASan+UBSan, built with
# clang, the constant-time check under valgrind, and an install round trip.
check:
	sh tests/check.sh

clang-build: $(LIB) $(BIN) $(TEST_BINS) $(S3_LIVE)

ct: $(LIB)
	sh tests/ct/run.sh

# libFuzzer targets (fuzz/fuzz_*.c, seeds in fuzz/corpus/NAME/), built with
# clang under ASan+UBSan in build-fuzz/.  `make fuzz` runs each for
# FUZZ_SECONDS; `make fuzz-ci` replays the committed seeds, then fuzzes each
# for FUZZ_CI_SECONDS.  New inputs go to build-fuzz/corpus/NAME/, crashes to
# build-fuzz/crash-NAME-*.
FUZZ_TARGETS = keyfile config record stream recovery args s3
FUZZ_SECONDS ?= 60
FUZZ_CI_SECONDS ?= 20
FUZZ_CFLAGS = -O1 -g -fsanitize=fuzzer-no-link
FUZZ_LINK = clang -std=c11 -D_GNU_SOURCE -Iinclude -Isrc -pthread -O1 -g \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_RUN = -close_fd_mask=3 -timeout=20 -rss_limit_mb=2048

build-fuzz/fuzz_args: fuzz/fuzz_args.c build-fuzz/libpqvault.a $(CLI_SRCS) src/cli/cli.h
	$(FUZZ_LINK) -Dmain=pqvault_cli_main -o $@ fuzz/fuzz_args.c $(CLI_SRCS) build-fuzz/libpqvault.a $(LDLIBS)

build-fuzz/fuzz_%: fuzz/fuzz_%.c build-fuzz/libpqvault.a
	$(FUZZ_LINK) -o $@ $< build-fuzz/libpqvault.a $(LDLIBS)

fuzz-build:
	$(MAKE) SAN=1 CC=clang BUILD=build-fuzz CFLAGS="$(FUZZ_CFLAGS)" build-fuzz/libpqvault.a
	$(MAKE) $(FUZZ_TARGETS:%=build-fuzz/fuzz_%)

fuzz: fuzz-build
	@for t in $(FUZZ_TARGETS); do \
		mkdir -p build-fuzz/corpus/$$t; \
		echo "== fuzz_$$t for $(FUZZ_SECONDS) s"; \
		build-fuzz/fuzz_$$t $(FUZZ_RUN) -max_total_time=$(FUZZ_SECONDS) \
			-artifact_prefix=build-fuzz/crash-$$t- build-fuzz/corpus/$$t fuzz/corpus/$$t \
			2>&1 | grep -E '^#[0-9]+ +DONE|^Done|ERROR|SUMMARY|crash-' ; \
		ls build-fuzz/crash-$$t-* >/dev/null 2>&1 && { echo "fuzz_$$t: crash found"; exit 1; }; \
	done; echo "fuzz: no crash"

fuzz-ci: fuzz-build
	@for t in $(FUZZ_TARGETS); do \
		echo "== fuzz_$$t: replay fuzz/corpus/$$t"; \
		build-fuzz/fuzz_$$t $(FUZZ_RUN) -runs=0 fuzz/corpus/$$t >build-fuzz/replay-$$t.log 2>&1 || \
			{ cat build-fuzz/replay-$$t.log; exit 1; }; \
	done
	$(MAKE) fuzz FUZZ_SECONDS=$(FUZZ_CI_SECONDS)

demo: $(BIN)
	sh scripts/demo.sh $(BIN)

bench: $(BIN) $(BENCH_BINS)
	sh bench/run.sh

# A fully static binary against Debian's static libcrypto and libargon2.
# Without the S3 backend: Debian's libcurl needs static libraries it does
# not ship (GSSAPI, LDAP, ...), so s3:// locations are refused there.
STATIC_CFLAGS = -Os -ffunction-sections -fdata-sections -DPQV_NO_S3
static:
	$(MAKE) BUILD=build-static CFLAGS="$(STATIC_CFLAGS)" build-static/libpqvault.a
	$(MAKE) BUILD=build-static CFLAGS="$(STATIC_CFLAGS)" $(CLI_OBJS:$(BUILD)/%=build-static/%)
	$(CC) -static -pthread -Wl,--gc-sections -s -o build-static/pqvault $(CLI_OBJS:$(BUILD)/%=build-static/%) build-static/libpqvault.a $(filter-out -lcurl,$(LDLIBS))
	@ls -l build-static/pqvault

install: $(LIB) $(BIN)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig \
		$(DESTDIR)$(PREFIX)/include/pqvault $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/pqvault
	install -m 0644 $(LIB) $(DESTDIR)$(PREFIX)/lib/libpqvault.a
	install -m 0644 include/pqvault/*.h $(DESTDIR)$(PREFIX)/include/pqvault/
	install -m 0644 docs/pqvault.1 $(DESTDIR)$(PREFIX)/share/man/man1/pqvault.1
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' pqvault.pc.in \
		>$(DESTDIR)$(PREFIX)/lib/pkgconfig/pqvault.pc

clean:
	rm -rf build build-san build-clang build-static build-fuzz

-include $(LIB_OBJS:.o=.d) $(CLI_OBJS:.o=.d)
