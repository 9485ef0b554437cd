# Fuzzing tgen (tests/fuzz/README.md), included by the top Makefile.
#
#   make fuzz [FUZZ_SECONDS=60] [FUZZ_ONLY="schema gen"]
#       build every harness with clang's libFuzzer, ASan and UBSan into $(BUILD)/fuzz/, write
#       the seed corpora (make_corpus.py) and run each harness FUZZ_SECONDS seconds with the
#       dictionary; fails on any finding (libFuzzer's exit status, or a crash-*, leak-*,
#       timeout-* or oom-* file in $(BUILD)/fuzz/artifacts/<harness>/).
#   make test-fuzz-regressions
#       (part of `make test`) every harness built with $(CC) under ASan + UBSan and a plain
#       main() (replay_main.c), run once on each file of tests/fuzz/regressions/<harness>/, each
#       in its own process: a crash, sanitizer report, leak, or an oracle's abort fails it.
#       An aborted run leaves its scratch directory in $(BUILD)/fuzz-replay/tmp/.

FUZZ_HARNESSES := schema native derivs template gen extends
FUZZ_ONLY      ?= $(FUZZ_HARNESSES)
FUZZ_SECONDS   ?= 60
FUZZ_CC        ?= clang
FUZZ_DIR       := $(BUILD)/fuzz
FUZZ_SAN       := -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
                  -fno-sanitize-recover=undefined
FUZZ_COMMON    := tests/fuzz/fuzz_common.c
FUZZ_HDRS      := tests/fuzz/fuzz_common.h $(wildcard codegen/*.h codegen/*/*.h)
# The root is compiled in so that a harness finds specs/, templates/ and runtime/ from any
# directory ($TG_FUZZ_ROOT overrides it).
FUZZ_DEFS      := -Icodegen -DTG_FUZZ_ROOT='"$(CURDIR)"'
# Every codegen object but main.o: the harnesses call tgen_main (cli.c) themselves.
FUZZ_TGEN_SRC  := $(filter-out codegen/main.c,$(TGEN_SRC))

# The libFuzzer flavour: clang only.
FUZZ_OBJ := $(FUZZ_TGEN_SRC:%.c=$(FUZZ_DIR)/obj/%.o)
$(FUZZ_DIR)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CSTD) $(FUZZ_SAN) -fsanitize=fuzzer-no-link -Icodegen $(DEPFLAGS) -c $< -o $@

$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_COMMON) $(FUZZ_HDRS) $(FUZZ_OBJ)
	$(FUZZ_CC) $(CSTD) $(FUZZ_SAN) -fsanitize=fuzzer $(FUZZ_DEFS) -o $@ $< $(FUZZ_COMMON) \
	  $(FUZZ_OBJ) $(YAML_LIBS)

# The replay flavour: the default compiler, the test suite's sanitizer flags.
REPLAY_DIR := $(BUILD)/fuzz-replay
REPLAY_OBJ := $(FUZZ_TGEN_SRC:%.c=$(REPLAY_DIR)/obj/%.o)
$(REPLAY_DIR)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) -g -O1 $(WARN) $(SAN_FLAGS) -Icodegen $(DEPFLAGS) -c $< -o $@

$(REPLAY_DIR)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/replay_main.c $(FUZZ_COMMON) $(FUZZ_HDRS) $(REPLAY_OBJ)
	$(CC) $(CSTD) -g -O1 $(WARN) $(SAN_FLAGS) $(FUZZ_DEFS) -o $@ $< tests/fuzz/replay_main.c \
	  $(FUZZ_COMMON) $(REPLAY_OBJ) $(YAML_LIBS)

# Objects made by pattern rules only for the harnesses: keep them (make would delete them as
# intermediates and rebuild all of codegen on every run).
.SECONDARY: $(FUZZ_OBJ) $(REPLAY_OBJ)

.PHONY: fuzz fuzz-build fuzz-corpus test-fuzz-regressions
fuzz-build: $(FUZZ_ONLY:%=$(FUZZ_DIR)/fuzz_%)

fuzz-corpus:
	python3 tests/fuzz/make_corpus.py $(FUZZ_DIR)/seeds

# Each harness: its own growing corpus (work/<h>, kept between runs) first, where libFuzzer
# adds what it finds, then the seeds. -close_fd_mask=3 silences tgen's diagnostics (libFuzzer
# and the sanitizers still report on the original stderr). The spec harnesses take inputs up
# to 16 KB (a few dozen entries), the others 4 KB. A finding stops that harness; the others
# still run, and the target fails at the end naming them.
FUZZ_OPTS := -max_total_time=$(FUZZ_SECONDS) -dict=tests/fuzz/spec.dict -close_fd_mask=3 \
             -timeout=20 -rss_limit_mb=2048 -print_final_stats=1

fuzz: fuzz-build fuzz-corpus
	@failed=; for h in $(FUZZ_ONLY); do \
	  case $$h in schema|template) maxlen=4096;; *) maxlen=16384;; esac; \
	  art=$(FUZZ_DIR)/artifacts/$$h; mkdir -p $(FUZZ_DIR)/work/$$h $$art; \
	  echo "== fuzz_$$h for $(FUZZ_SECONDS) s"; \
	  $(FUZZ_DIR)/fuzz_$$h $(FUZZ_OPTS) -max_len=$$maxlen -artifact_prefix=$$art/ \
	    $(FUZZ_DIR)/work/$$h $(FUZZ_DIR)/seeds/$$h >$(FUZZ_DIR)/fuzz_$$h.log 2>&1; \
	  rc=$$?; \
	  grep -E '^#[0-9]+[[:space:]]' $(FUZZ_DIR)/fuzz_$$h.log | tail -1; \
	  grep -E '^Done|^stat::average_exec_per_sec|ERROR:|SUMMARY|fuzz oracle|Test unit written' \
	    $(FUZZ_DIR)/fuzz_$$h.log | head -20; \
	  found=$$(cd $$art && ls | grep -E '^(crash|leak|timeout|oom)-' || true); \
	  if [ $$rc -ne 0 ] || [ -n "$$found" ]; then failed="$$failed $$h"; \
	    echo "fuzz_$$h: finding (exit $$rc) $$found: see $(FUZZ_DIR)/fuzz_$$h.log and $$art/" >&2; fi; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzzing found problems in:$$failed" >&2; exit 1; fi; \
	echo "fuzz: no findings in $(FUZZ_ONLY) ($(FUZZ_SECONDS) s each)"

test-fuzz-regressions: $(FUZZ_HARNESSES:%=$(REPLAY_DIR)/fuzz_%)
	@failed=0; total=0; log=$(REPLAY_DIR)/last.log; tmp=$(REPLAY_DIR)/tmp; \
	rm -rf $$tmp; mkdir -p $$tmp; \
	for h in $(FUZZ_HARNESSES); do \
	  for f in tests/fuzz/regressions/$$h/*; do [ -f "$$f" ] || continue; \
	    total=$$((total+1)); ok=1; \
	    (TMPDIR=$$tmp ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	      $(REPLAY_DIR)/fuzz_$$h "$$f"; exit $$?) >$$log 2>&1 || ok=0; \
	    grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' $$log && ok=0; \
	    if [ $$ok = 0 ]; then failed=$$((failed+1)); echo "FAIL $$f" >&2; \
	      grep -E 'ERROR:|SUMMARY|runtime error|fuzz oracle' $$log | head -4 | sed 's/^/    /' >&2; \
	    fi; \
	  done; done; \
	echo "fuzz regressions: $$((total-failed)) of $$total inputs replay cleanly"; \
	[ $$failed -eq 0 ]
