# pqvault build.  `make` builds build/libpqvault.a and build/pqvault;
# `make test` builds and runs every test; `make SAN=1 test` does the same
# under AddressSanitizer and UndefinedBehaviorSanitizer in build-san/.
#
# Two builds of the library:
#   $(BUILD)/libpqvault.a       what ships: compiled with -fvisibility=hidden,
#                               linked into one object whose non-API symbols
#                               are made local, so only the pqv_* API of
#                               include/pqvault/ is global (tests/symbols.sh);
#   $(BUILD)/libpqvault-test.a  the same modules, internal symbols visible,
#                               and the test hooks compiled in (-DPQV_TEST_HOOKS:
#                               fault injection and kill points in util/io.c,
#                               kernel-forcing switches in crypto/); the unit
#                               tests, benchmarks and $(BUILD)/pqvault-test link it.

CC ?= cc
PREFIX ?= /usr/local
DESTDIR ?=
SAN ?= 0
VERSION = 0.2.0

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
ALL_CFLAGS = -std=c11 -D_GNU_SOURCE -DPQV_VERSION_STRING='"$(VERSION)"' $(WARN) -Iinclude -Isrc \
	-pthread -fvisibility=hidden $(SANFLAGS) $(CFLAGS)
LIB_LDLIBS = -lcrypto -lzstd -lcurl -lexpat -lpthread
LDLIBS = $(LIB_LDLIBS)
ALL_LDFLAGS = -pthread $(SANFLAGS) $(LDFLAGS)

LIB_SRCS = $(sort $(wildcard src/util/*.c src/crypto/*.c src/keys/*.c src/storage/*.c src/vault/*.c))
CLI_SRCS = $(sort $(wildcard src/cli/*.c))
TEST_SRCS = $(sort $(wildcard tests/test_*.c))
BENCH_SRCS = $(sort $(wildcard bench/bench_*.c))
# Modules with test hooks: built a second time with -DPQV_TEST_HOOKS.
HOOK_SRCS = src/util/io.c src/crypto/cpu.c src/crypto/argon2id.c src/vault/inbox.c \
	src/storage/storage_s3.c src/storage/storage_local.c src/vault/mount_file.c

# libfuse3 for `pqvault mount` (src/cli/cmd_mount.c, the program only: the
# library's view, include/pqvault/mount.h, needs none).  Without it
# (pkg-config fuse3 fails, or FUSE=0) everything else builds and mount says
# it is not available.
FUSE ?= $(shell pkg-config --exists fuse3 2>/dev/null && echo 1 || echo 0)
ifeq ($(FUSE),1)
FUSE_CFLAGS = -DPQV_HAVE_FUSE $(patsubst -I%,-isystem %,$(shell pkg-config --cflags fuse3))
CLI_LDLIBS = $(shell pkg-config --libs fuse3)
endif

LIB_OBJS = $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)
TEST_LIB_OBJS = $(filter-out $(HOOK_SRCS:%.c=$(BUILD)/obj/%.o),$(LIB_OBJS)) \
	$(HOOK_SRCS:%.c=$(BUILD)/obj-hooks/%.o)
CLI_OBJS = $(CLI_SRCS:%.c=$(BUILD)/obj/%.o)
TEST_BINS = $(TEST_SRCS:tests/%.c=$(BUILD)/tests/%)
BENCH_BINS = $(BENCH_SRCS:bench/%.c=$(BUILD)/bench/%)

LIB = $(BUILD)/libpqvault.a
TEST_LIB = $(BUILD)/libpqvault-test.a
BIN = $(BUILD)/pqvault
TEST_BIN = $(BUILD)/pqvault-test

# Instruction-set specific kernels: compiled with their own flags and
# selected at run time (the portable code is always built).
$(BUILD)/obj/%_avx2.o: ALL_CFLAGS += -mavx2
$(BUILD)/obj/%_avx512.o: ALL_CFLAGS += -mavx512f -mavx512bw -mavx512vl -mavx2
$(BUILD)/obj/%_vaes.o: ALL_CFLAGS += -mavx512f -mvaes -maes

.PHONY: all test check clang-build check-tests clean install static bench bench-compare bench-real bench-s3 bench-mount bench-mount-cp bench-import demo ct fuzz \
	fuzz-build fuzz-ci symbols

all: $(LIB) $(BIN)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/obj-hooks/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DPQV_TEST_HOOKS -MMD -MP -c $< -o $@

# One relocatable object, internal (hidden) symbols made local.
$(LIB): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(LD) -r -o $(BUILD)/pqvault.o $^
	objcopy --localize-hidden $(BUILD)/pqvault.o
	rm -f $@
	ar rcs $@ $(BUILD)/pqvault.o

$(TEST_LIB): $(TEST_LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/obj/src/cli/cmd_mount.o $(BUILD)/obj/src/cli/mount_fuse.o $(BUILD)/obj/src/cli/mount_fuse_names.o \
    $(BUILD)/obj/src/cli/mount_fuse_read.o: ALL_CFLAGS += $(FUSE_CFLAGS)

$(BIN): $(CLI_OBJS) $(LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $(CLI_OBJS) $(LIB) $(LDLIBS) $(CLI_LDLIBS)

$(TEST_BIN): $(CLI_OBJS) $(TEST_LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $(CLI_OBJS) $(TEST_LIB) $(LDLIBS) $(CLI_LDLIBS)

# Only the tests and benchmarks that compare with Debian's libargon2 link it.
$(BUILD)/tests/test_argon2id $(BUILD)/bench/bench_argon2id: LDLIBS += -largon2

$(BUILD)/tests/%: tests/%.c $(TEST_LIB) tests/harness.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DPQV_TEST_HOOKS -Itests -o $@ $< $(TEST_LIB) $(ALL_LDFLAGS) $(LDLIBS)

# The crash and fault tests share tests/vaultcheck.h and, with the
# corruption test, tests/vault_fixture.h; the crash test links the crash
# simulator (tests/crashsim.c).
$(BUILD)/tests/test_crash: tests/test_crash.c tests/crashsim.c tests/crashsim.h tests/vaultcheck.h tests/vault_fixture.h $(TEST_LIB) tests/harness.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DPQV_TEST_HOOKS -Itests -o $@ tests/test_crash.c tests/crashsim.c $(TEST_LIB) $(ALL_LDFLAGS) $(LDLIBS)

# The S3 tests' driver of the storage backend (needs a server: started by
# tests/cli/s3_*.sh, not by run.sh).
S3_LIVE = $(BUILD)/tests/s3_live
$(S3_LIVE): tests/s3_live.c $(TEST_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DPQV_TEST_HOOKS -o $@ tests/s3_live.c $(TEST_LIB) $(ALL_LDFLAGS) $(LDLIBS)

$(BUILD)/tests/test_faults: tests/vaultcheck.h tests/vault_fixture.h
$(BUILD)/tests/test_corruption: tests/vault_fixture.h
$(BUILD)/tests/test_readahead $(BUILD)/tests/test_segment_cache: tests/vault_fixture.h tests/storage_wrap.h
$(BUILD)/tests/test_mount $(BUILD)/tests/test_mount_cache: tests/mount_fixture.h tests/vault_fixture.h tests/storage_wrap.h
$(BUILD)/tests/test_entry $(BUILD)/tests/test_segment $(BUILD)/tests/test_add_plan \
	$(BUILD)/tests/test_state_under $(BUILD)/tests/test_import_names: tests/entry_fixture.h

$(BUILD)/bench/%: bench/%.c $(TEST_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(TEST_LIB) $(ALL_LDFLAGS) $(LDLIBS)

check-tests: $(TEST_BINS) $(BIN) $(TEST_BIN) $(S3_LIVE)

test: $(TEST_BINS) $(BIN) $(TEST_BIN) $(S3_LIVE)
	BUILD=$(BUILD) PQV_SAN=$(SAN) sh tests/run.sh

# The shipped library exports the API and nothing else; each module
# exports only its own names (tests/symbols.sh).
symbols: $(LIB) $(LIB_OBJS)
	BUILD=$(BUILD) sh tests/symbols.sh

# Everything CI runs: the suite plain (gcc), under ASan+UBSan, built with
# clang, the symbol check, the constant-time check under valgrind, and an
# install round trip.
check:
	sh tests/check.sh

clang-build: $(LIB) $(BIN) $(TEST_BINS) $(TEST_BIN) $(S3_LIVE)

# Constant-time checks (tests/ct/): built here with the project's flags,
# run under valgrind by tests/ct/run.sh.  The modules holding verdicts are
# recompiled with -DPQV_CT_DECLASSIFY and linked ahead of the library.
CT_FLAGS = -std=c11 -D_GNU_SOURCE $(WARN) -Iinclude -Isrc -pthread -O1 -g
CT_DECLASSIFY_SRCS = src/crypto/aead.c src/vault/config.c src/keys/keyfile.c src/keys/recovery.c
CT_DECLASSIFY_OBJS = $(CT_DECLASSIFY_SRCS:%.c=build/ct/%.o)
build/ct/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CT_FLAGS) -DPQV_CT_DECLASSIFY -c $< -o $@
build/ct/ct_frodo: tests/ct/ct_frodo.c build/libpqvault-test.a
	@mkdir -p build/ct
	$(CC) $(CT_FLAGS) -o $@ $< build/libpqvault-test.a $(LIB_LDLIBS)
build/ct/ct_misc: tests/ct/ct_misc.c $(CT_DECLASSIFY_OBJS) build/libpqvault-test.a
	$(CC) $(CT_FLAGS) -o $@ $< $(CT_DECLASSIFY_OBJS) build/libpqvault-test.a $(LIB_LDLIBS)
ct: build/ct/ct_frodo build/ct/ct_misc
	sh tests/ct/run.sh

# libFuzzer targets (fuzz/fuzz_*.c, seeds in fuzz/corpus/NAME/), built with
# clang under ASan+UBSan in build-fuzz/.  `make fuzz` runs each for
# FUZZ_SECONDS; `make fuzz-ci` replays the committed seeds, then fuzzes each
# for FUZZ_CI_SECONDS.  New inputs go to build-fuzz/corpus/NAME/, crashes to
# build-fuzz/crash-NAME-*.
FUZZ_TARGETS = keyfile config record stream recovery args s3 match recipient batch chunks mount
FUZZ_SECONDS ?= 60
FUZZ_CI_SECONDS ?= 20
FUZZ_CFLAGS = -O1 -g -fsanitize=fuzzer-no-link
FUZZ_LINK = clang -std=c11 -D_GNU_SOURCE -Iinclude -Isrc -pthread -O1 -g \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_RUN = -close_fd_mask=3 -timeout=20 -rss_limit_mb=2048
# The argument parser's fuzzer links the parser and the command tables only.
FUZZ_ARGS_SRCS = src/cli/args.c src/cli/commands.c

build-fuzz/fuzz_args: fuzz/fuzz_args.c build-fuzz/libpqvault-test.a $(FUZZ_ARGS_SRCS) src/cli/cli.h
	$(FUZZ_LINK) -o $@ fuzz/fuzz_args.c $(FUZZ_ARGS_SRCS) build-fuzz/libpqvault-test.a $(LIB_LDLIBS)

build-fuzz/fuzz_%: fuzz/fuzz_%.c build-fuzz/libpqvault-test.a
	$(FUZZ_LINK) -o $@ $< build-fuzz/libpqvault-test.a $(LIB_LDLIBS)

fuzz-build:
	$(MAKE) SAN=1 CC=clang BUILD=build-fuzz CFLAGS="$(FUZZ_CFLAGS)" build-fuzz/libpqvault-test.a
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
	@if [ "$(BENCH_COMPARE)" = 1 ]; then echo; PQVAULT=$(BIN) sh bench/compare.sh; fi

# Side by side with restic, borg and tar + age (bench/compare.sh, about
# 16 minutes; RUNS, BIG_MB, LARGE_N), then the real-data scenarios
# (bench-real, below), and over S3 with rclone and restic
# against a local Ceph RGW (bench/compare_s3.sh, about 17 minutes with
# format 1, 6 with LIST_N=2000).  Not part of make check; docs/BENCHMARKS.md.
bench-compare: $(BIN)
	PQVAULT=$(BIN) sh bench/compare.sh
	@echo
	$(MAKE) bench-real

# Real-data scenarios beside restic 0.14 and borg 1.2 (docs/BENCHMARKS.md):
# a Linux kernel tree (bench/kernel.sh), a version series of it
# (bench/versions.sh), five steps of a 200 MiB file (bench/steps.sh) and 60
# daily snapshots (bench/history.sh).  Each script runs alone too; RUNS,
# KERNEL_SUBSET, TREE, BIG_MB, DAYS as in their headers.
bench-real: $(BIN)
	PQVAULT=$(BIN) sh bench/kernel.sh
	@echo
	PQVAULT=$(BIN) sh bench/versions.sh
	@echo
	PQVAULT=$(BIN) sh bench/steps.sh
	@echo
	PQVAULT=$(BIN) sh bench/history.sh

# History at scale (issue 20's targets): log, get --at and list of 1,000
# snapshots of a 100,000-entry vault (bench/history_scale.sh, about 15
# minutes to build).
bench-history-scale: $(BIN)
	PQVAULT=$(BIN) sh bench/history_scale.sh

bench-s3: $(BIN)
	PQVAULT=$(BIN) sh bench/compare_s3.sh

# pqvault mount beside restic mount and borg mount (bench/mount.sh: the
# tree /usr/share/doc and a 1 GiB random file; as root with /dev/fuse).
bench-mount: $(BIN)
	PQVAULT=$(BIN) sh bench/mount.sh

# cp -a out of the mount part by part against get (bench/mount_cp.sh).
bench-mount-cp: $(BIN)
	PQVAULT=$(BIN) sh bench/mount_cp.sh

# Import against the entries of one batch (bench/import_scale.sh; SIZES,
# RUNS): linear since issue 17.
bench-import: $(BIN)
	PQVAULT=$(BIN) sh bench/import_scale.sh

# A fully static binary against Debian's static libcrypto and libzstd.
# Without the S3 backend: Debian's libcurl needs static libraries it does
# not ship (GSSAPI, LDAP, ...), so s3:// locations are refused there; and
# without mount (FUSE=0: fusermount3 and the kernel module are the system's).
STATIC_CFLAGS = -Os -ffunction-sections -fdata-sections -DPQV_NO_S3
static:
	$(MAKE) BUILD=build-static CFLAGS="$(STATIC_CFLAGS)" build-static/libpqvault.a
	$(MAKE) BUILD=build-static FUSE=0 CFLAGS="$(STATIC_CFLAGS)" $(CLI_OBJS:$(BUILD)/%=build-static/%)
	$(CC) -static -pthread -Wl,--gc-sections -s -o build-static/pqvault $(CLI_OBJS:$(BUILD)/%=build-static/%) build-static/libpqvault.a $(filter-out -lcurl -lexpat,$(LDLIBS))
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

-include $(LIB_OBJS:.o=.d) $(CLI_OBJS:.o=.d) $(HOOK_SRCS:%.c=$(BUILD)/obj-hooks/%.d)
