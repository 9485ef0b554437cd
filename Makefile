# tensorgen build.
#
#   make            regenerate generated/ if a spec, template or tgen changed; build tgen,
#                   libtensorgen.{a,so} and the examples
#   make gen        force regeneration (tgen rewrites only files whose text changed)
#   make test       build and run the test suite, the docs' code (test-docs), the kernel suites
#                   under each CPU capability
#                   (test-capabilities), the check that baseline objects hold no AVX
#                   (test-isa), then the suite again under ASan+UBSan (leaks fail), in
#                   the build with the CUDA backend on the CPU emulator (test-san, below), then
#                   replay tests/fuzz/regressions/ (test-fuzz-regressions, tests/fuzz/fuzz.mk)
#   make fuzz       fuzz tgen FUZZ_SECONDS (default 60) per harness (clang, libFuzzer;
#                   tests/fuzz/README.md)
#   make bench      print one JSON line per benchmark workload (see bench/README.md)
#   make SELECT=ops.txt  a selective build: libtensorgen with only the listed operators and
#                   what they call, in $(BUILD)/select/, its size against the full one (select.mk)
#   make test-docs  compile and run the code blocks of README.md and docs/*.md, comparing what
#                   they print with the pages (tests/docs/README.md; part of make test);
#                   `make doc-tables` rewrites docs/profiling.md's sample table from a run
#   make format     lay out the hand-written C/C++/CUDA as .clang-format says (clang-format 14);
#                   `make format-check` fails, naming the files, when one is laid out otherwise
#   make install PREFIX=/usr/local
#
# Dependencies (Debian): libyaml-dev, libopenblas-openmp-dev (or libopenblas-dev),
# libcjson-dev (safetensors headers; the tests too), libcriterion-dev (tests only), clang-format
# (make format only), gcc with OpenMP; for `make test-safetensors`, the Python packages safetensors
# and numpy (pip). Optional: the
# CUDA toolkit (nvcc, cuBLAS); when nvcc is found the CUDA backend is built (docs/cuda.md),
# `make CUDA=0` leaves it out.

SHELL    := /bin/bash
PREFIX   ?= /usr/local
BUILD    ?= build
CC       ?= gcc
# The default build runs on any CPU of its architecture (baseline x86-64: SSE2); the hot
# kernels in kernels/cpu/cap/ are built once more per capability and picked at run time
# (CPU_CAPS below, docs/architecture.md). NATIVE=1 tunes everything for this machine instead.
NATIVE   ?= 0
OPT      ?= -O3 $(if $(filter 1,$(NATIVE)),-march=native)
CSTD     := -std=c11 -D_GNU_SOURCE
WARN     := -Wall -Wextra -Wno-unused-parameter -Werror=int-conversion -Werror=incompatible-pointer-types
INCLUDES := -Iruntime -Inn -Igenerated -Ikernels/common -Ikernels/cpu -Ikernels
# cJSON (libcjson-dev) parses safetensors headers (runtime/io/, which alone sees its header
# directory; the aarch64 check passes it too) and is linked into the library.
CJSON_CFLAGS := $(shell pkg-config --cflags libcjson 2>/dev/null || echo -I/usr/include/cjson)
CJSON_LIBS   := $(shell pkg-config --libs libcjson 2>/dev/null || echo -lcjson)
DEPFLAGS  = -MMD -MP

# OpenBLAS: prefer the OpenMP build so BLAS and our kernels share one thread pool (two pools
# on two cores fight, costing PyTorch 3-5x); fall back to whichever libopenblas is installed.
OPENBLAS_OMP_DIR := /usr/lib/x86_64-linux-gnu/openblas-openmp
ifneq ($(wildcard $(OPENBLAS_OMP_DIR)/libopenblas.so),)
  BLAS_CFLAGS := -I/usr/include/x86_64-linux-gnu/openblas-openmp
  BLAS_LIBS   := -L$(OPENBLAS_OMP_DIR) -Wl,-rpath,$(OPENBLAS_OMP_DIR) -lopenblas
else
  BLAS_CFLAGS := $(shell pkg-config --cflags openblas 2>/dev/null)
  BLAS_LIBS   := $(shell pkg-config --libs openblas 2>/dev/null || echo -lopenblas)
endif

# CUDA: built when nvcc is found (CUDA=0 forces it off). Every C file then sees TG_WITH_CUDA and
# the toolkit's headers; kernels/cuda/*.cu compile for sm_90 (H100/H200) plus PTX for newer
# GPUs; the library links cudart and cuBLAS with an rpath to the toolkit.
NVCC ?= $(shell command -v nvcc 2>/dev/null)
ifneq ($(strip $(NVCC)),)
  CUDA ?= 1
else
  CUDA ?= 0
endif
ifeq ($(CUDA),1)
  ifeq ($(strip $(NVCC)),)
    $(error CUDA=1 but nvcc was not found: put it on PATH or pass NVCC=/path/to/nvcc)
  endif
  CUDA_HOME   ?= $(patsubst %/bin/nvcc,%,$(realpath $(NVCC)))
  CUDA_CFLAGS := -DTG_WITH_CUDA -I$(CUDA_HOME)/include
  CUDA_LIBS   := -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcublas -lcudart -lstdc++
  CUDA_ARCH   ?= -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90
  NVCC_FLAGS  := -std=c++17 -O3 -Xcompiler -fPIC $(CUDA_ARCH) -DTG_WITH_CUDA \
                 -Iruntime -Inn -Igenerated -Ikernels/common -Ikernels -Ikernels/cuda \
                 -I$(CUDA_HOME)/include/cccl $(NVCCFLAGS)
  CU_SRC      := $(wildcard kernels/cuda/*.cu generated/ufunc/*_cuda.cu)
  # cuDNN, when the toolkit has it (CUDNN=0 leaves it out): the convolutions' first choice
  # (kernels/cuda/conv_cudnn.cu), with the im2col + cuBLAS path as the fallback.
  CUDNN ?= $(if $(wildcard $(CUDA_HOME)/include/cudnn.h),1,0)
  ifeq ($(CUDNN),1)
    NVCC_FLAGS += -DTG_WITH_CUDNN
    CUDA_LIBS  += -lcudnn
  endif
else ifeq ($(CUDA),emu)
  # The CUDA backend built by g++ against tests/cuda_emu, which runs kernels, streams, the
  # allocator and cuBLAS calls on the CPU (docs/cuda.md, "Testing without a GPU"), under
  # ASan, LeakSanitizer and UBSan.
  EMU_DIR     := tests/cuda_emu
  EMU_SAN     := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
  CORE_SAN    := $(EMU_SAN)
  CUDA_CFLAGS := -DTG_WITH_CUDA -DTG_CUDA_EMU -I$(EMU_DIR)/include $(EMU_SAN)
  CUDA_LIBS   := $(BUILD)/libcudaemu.a -lstdc++ $(EMU_SAN)
  EMU_CXXFLAGS := -std=c++17 -O1 -g -fPIC -Wall -Wno-unused-parameter -Wno-unused-function -Wno-unknown-pragmas $(EMU_SAN) \
                  -DTG_WITH_CUDA -DTG_CUDA_EMU -I$(EMU_DIR)/include -I$(EMU_DIR)
  CU_SRC      := $(wildcard kernels/cuda/*.cu generated/ufunc/*_cuda.cu)
else
  CUDA_CFLAGS :=
  CUDA_LIBS   :=
  CU_SRC      :=
endif

ARCH := $(shell $(CC) -dumpmachine 2>/dev/null)
# SLEEF (Debian's libsleef-dev): the vector math of the x86 capabilities (kernels/cpu/
# vec_sleef.h); other architectures use libm.
X86 := $(filter x86_64% i686% i386%,$(ARCH))
SLEEF_LIBS := $(if $(X86),$(shell pkg-config --libs sleef 2>/dev/null || echo -lsleef))
# Thread-locals through TLS descriptors: cheap in a shared library, and no STATIC_TLS flag, so
# the library can be dlopen'ed (runtime/core/rt_private.h). aarch64 uses them by default.
TLS_FLAGS := $(if $(filter x86_64%,$(ARCH)),-mtls-dialect=gnu2)
CFLAGS   ?=
# In the library, a function with external linkage needs a prototype seen first: a kernel
# file that does not include its operator's generated header (kernels/<op>.h), whose
# prototype the compiler must check its definition against, does not compile.
LIB_WARN   := -Werror=missing-prototypes
# -fno-semantic-interposition: calls between the library's own functions are direct even when
# the callee is exported (it is linked with -Bsymbolic-functions).
LIB_CFLAGS = $(CSTD) $(OPT) $(WARN) $(LIB_WARN) -fPIC -fno-semantic-interposition $(TLS_FLAGS) -fopenmp $(INCLUDES) $(BLAS_CFLAGS) $(CORE_SAN) $(BACKEND_CFLAGS) $(CFLAGS)
# What the core library links: no CUDA library (the backend brings its own). zlib reads the
# gzip'ed digits of nn/data/digits.c.
LIBS       := $(BLAS_LIBS) $(SLEEF_LIBS) $(CJSON_LIBS) -lz -fopenmp -lm -lpthread -ldl
YAML_LIBS  := $(shell pkg-config --libs yaml-0.1 2>/dev/null || echo -lyaml)

# Sanitizer flavour of everything, used by `make test`.
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

# Per-capability kernels: each file of kernels/cpu/cap/ is compiled once per capability with
# -DTG_CPU_CAP=<cap> and that capability's flags (kernels/cpu/cpu_cap.h); only x86 has more
# than the default.
ifneq ($(X86),)
  CPU_CAPS := default avx2 avx512
else
  CPU_CAPS := default
endif
# -fno-math-errno: nothing reads errno after our math, and with it sqrtf vectorises.
CAP_COMMON        := -fno-math-errno
CAP_FLAGS_default :=
CAP_FLAGS_avx2    := -mavx2 -mfma
CAP_FLAGS_avx512  := -mavx2 -mfma -mavx512f -mavx512dq -mavx512vl -mavx512bw
# The generated loops of the pointwise operators (generated/ufunc/*_cap.c, kernels/cpu/ufunc.h)
# are built the same way.
CAP_SRC := $(wildcard kernels/cpu/cap/*.c generated/ufunc/*_cap.c)


# ------------------------------------------------------------------ sources
TGEN_SRC  := $(wildcard codegen/*.c codegen/*/*.c)
# The floor above the operators (nn/: modules, state, optimizers, data; docs/nn.md), written
# with the public API only and built into the same library, as torch.nn ships with torch.
NN_SRC    := $(wildcard nn/*.c nn/*/*.c)
# The core library, libtensorgen: everything but the CUDA backend, the same in every build.
LIB_SRC   := $(filter-out runtime/cuda/%,$(wildcard runtime/*/*.c)) $(wildcard kernels/cpu/*.c) \
             $(wildcard kernels/common/*.c) $(wildcard kernels/composite/*.c) \
             $(filter-out generated/tg_register_cuda.c,$(wildcard generated/*.c)) \
             $(wildcard generated/ufunc/*_cpu.c) $(NN_SRC)
# The CUDA backend, libtensorgen_cuda (docs/cuda.md): its runtime, its kernels and the
# generated table that adds them to the operators' rows when it loads.
CUDA_C_SRC := $(if $(CU_SRC),$(wildcard runtime/cuda/*.c) generated/tg_register_cuda.c)
TEST_SRC  := $(wildcard tests/*/test_*.c)
# tests/fuzz/ holds the fuzz harnesses, built by tests/fuzz/fuzz.mk, not the Criterion suite.
TEST_COMMON := $(filter-out $(TEST_SRC) tests/fuzz/% tests/shared/%,$(wildcard tests/*/*.c tests/*.c))
EX_SRC    := $(wildcard examples/*.c)
BENCH_SRC := $(wildcard bench/*.c)
SPECS     := $(wildcard specs/*.yaml)
TEMPLATES := $(wildcard templates/*.in)
DERIVS    := $(wildcard specs/derivatives.yaml)

# CUDA objects are shared by both flavours (nvcc code is not instrumented by the sanitizers).
CU_OBJ       := $(CU_SRC:%.cu=$(BUILD)/obj/%.o)
CAP_OBJ      := $(foreach c,$(CPU_CAPS),$(CAP_SRC:%.c=$(BUILD)/obj/cap-$(c)/%.o))
CAP_OBJ_SAN  := $(foreach c,$(CPU_CAPS),$(CAP_SRC:%.c=$(BUILD)/san/cap-$(c)/%.o))
LIB_OBJ      := $(LIB_SRC:%.c=$(BUILD)/obj/%.o) $(CAP_OBJ)
LIB_OBJ_SAN  := $(LIB_SRC:%.c=$(BUILD)/san/%.o) $(CAP_OBJ_SAN)
CUDA_OBJ     := $(strip $(CUDA_C_SRC:%.c=$(BUILD)/obj/%.o) $(CU_OBJ))
CUDA_OBJ_SAN := $(strip $(CUDA_C_SRC:%.c=$(BUILD)/san/%.o) $(CU_OBJ))
TGEN_OBJ     := $(TGEN_SRC:%.c=$(BUILD)/obj/%.o)
EXAMPLES     := $(EX_SRC:examples/%.c=$(BUILD)/examples/%)

# Only the CUDA backend's objects see the toolkit (or the emulator's stand-ins for it).
$(CUDA_C_SRC:%.c=$(BUILD)/obj/%.o) $(CUDA_C_SRC:%.c=$(BUILD)/san/%.o): BACKEND_CFLAGS := $(CUDA_CFLAGS)
IO_SRC := $(wildcard runtime/io/*.c)
$(IO_SRC:%.c=$(BUILD)/obj/%.o) $(IO_SRC:%.c=$(BUILD)/san/%.o): BACKEND_CFLAGS := $(CJSON_CFLAGS)

# The shared libraries: libtensorgen.so.$(VERSION) with soname libtensorgen.so.$(SOVERSION),
# and the CUDA backend beside it (loaded when a GPU is asked for, runtime/core/cuda_backend.c).
VERSION   := 0.3.0
SOVERSION := 0
SO        := $(if $(filter emu,$(CUDA)),,$(BUILD)/libtensorgen.so.$(VERSION))
CUDA_SO   := $(if $(and $(SO),$(CUDA_OBJ)),$(BUILD)/libtensorgen_cuda.so.$(VERSION))
CUDA_A    := $(if $(CUDA_OBJ),$(BUILD)/libtensorgen_cuda.a)
# What a program linking the static libraries needs after them: the CUDA backend's archive
# whole (its constructor registers it; nothing references it by name), then the core.
CUDA_WHOLE  = -Wl,--whole-archive $(CUDA_A) -Wl,--no-whole-archive $(CUDA_LIBS)
STATIC_LINK = $(if $(CUDA_A),$(CUDA_WHOLE)) $(BUILD)/libtensorgen.a $(LIBS)
# The same for programs built elsewhere: pkg-config's file for this build tree (print-libs below).
UNINSTALLED_PC := $(BUILD)/tensorgen-uninstalled.pc
comma := ,

.PHONY: test-select test-docs doc-tables test-nn-torch check-aarch64 check-pytorch-specs check-thirdparty-specs check-pointwise-op all gen test test-plain test-shared test-install test-safetensors test-capabilities test-isa test-san test-san-gpu test-cuda-emu bench install uninstall clean check-generated check-rebuild-cost print-libs format format-check
all: $(BUILD)/tgen $(BUILD)/libtensorgen.a $(SO) $(CUDA_A) $(CUDA_SO) $(EXAMPLES) $(UNINSTALLED_PC)

# ------------------------------------------------------------------ tgen and generation
$(BUILD)/tgen: $(TGEN_OBJ)
	$(CC) -o $@ $^ $(YAML_LIBS)

$(BUILD)/obj/codegen/%.o: codegen/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) -O2 -g $(WARN) -Icodegen $(DEPFLAGS) -c $< -o $@

TGEN_ARGS = --gen --native specs/native_functions.yaml --runtime runtime \
            $(if $(DERIVS),--derivatives $(DERIVS)) \
            --templates templates --out generated --docs docs

# The stamp records that generated/ matches the specs, templates and tgen. tgen only touches
# files whose text changed, so an edit of one op recompiles only what depends on it.
$(BUILD)/gen.stamp: $(SPECS) $(TEMPLATES) $(BUILD)/tgen
	@mkdir -p $(BUILD)
	$(BUILD)/tgen $(TGEN_ARGS)
	@touch $@

# Including the stamp makes GNU make bring generated/ up to date before anything else and then
# restart, so the $(wildcard generated/*.c) above sees a file that generation just created. Not
# with clean, nor when every goal is format or format-check (they need neither tgen nor libyaml), print-libs (its output is read by programs) or
# check-rebuild-cost and check-pointwise-op (they build a scratch copy).
ifeq ($(filter clean,$(MAKECMDGOALS)),)
ifneq ($(if $(MAKECMDGOALS),$(filter-out format format-check print-libs check-rebuild-cost check-pointwise-op,$(MAKECMDGOALS)),all),)
-include $(BUILD)/gen.stamp
endif
endif

gen: $(BUILD)/tgen
	$(BUILD)/tgen $(TGEN_ARGS)
	@touch $(BUILD)/gen.stamp

# Fails when generated/ is not what `make gen` produces (CI runs this): a changed file, or a
# new one (an operator's header, generated/ops/ and generated/kernels/) not yet committed; or
# when a generated source is over GEN_MAX_LINES lines (the shards keep them small,
# docs/generated-code.md "Shards").
GEN_MAX_LINES := 10000
check-generated: gen
	@git diff --exit-code --stat -- generated docs/ops.md && \
	  untracked=$$(git ls-files --others --exclude-standard -- generated docs/ops.md) && \
	  { [ -z "$$untracked" ] || { echo "$$untracked"; false; }; } || \
	  { echo "generated/ is stale: run 'make gen' and commit the result" >&2; exit 1; }
	@tests/build/check_gen_sizes.sh generated $(GEN_MAX_LINES)

# Adding an operator recompiles at most 5 translation units and no .cu file
# (tests/build/rebuild_cost.sh: in a scratch copy, builds, adds the example operator of
# docs/adding-an-operator.md, rebuilds and counts). REBUILD_CUDA=1 builds the CUDA objects too
# and counts nvcc runs (needs nvcc; slower); by default the .cu files' dependencies are checked.
REBUILD_CUDA ?= 0
check-rebuild-cost:
	CUDA=$(REBUILD_CUDA) tests/build/rebuild_cost.sh

# A pointwise operator is its spec entry, its scalar function and its derivative: in a scratch
# copy, adds the example of docs/adding-an-operator.md ("A pointwise operator") with the page's
# commands, fails when they write more than 3 files or anything else hand-written changes, and
# runs the page's program on every CPU capability of this machine and on the CUDA emulator
# (tests/build/pointwise_op_check.sh; EMU=0 skips the emulator, whose build starts from
# build/cuda-emu when test-san has left one).
check-pointwise-op:
	CC="$(CC)" CXX="$(CXX)" tests/build/pointwise_op_check.sh

# The library compiles for aarch64 (the default capability's scalar and GCC-vector code, libm
# instead of SLEEF, no x86 flags): every core source through the cross compiler with -Werror,
# objects discarded (nothing links or runs; CI runs it). Needs gcc-aarch64-linux-gnu and
# libc6-dev-arm64-cross (.ci/install-deps); the host's cblas.h stands in for arm64's.
AARCH64_CC ?= aarch64-linux-gnu-gcc
check-aarch64: $(BUILD)/gen.stamp
	@command -v $(AARCH64_CC) >/dev/null || { echo "check-aarch64: $(AARCH64_CC) not found" \
	  "(apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross)" >&2; exit 1; }
	@mkdir -p $(BUILD)/aarch64
	@printf '%s\n' $(LIB_SRC) $(CAP_SRC) | xargs -P2 -I{} sh -c '$(AARCH64_CC) $(CSTD) -O2 \
	  $(WARN) -Werror -fPIC -fopenmp -DTG_CPU_CAP=default $(INCLUDES) $(BLAS_CFLAGS) $(CJSON_CFLAGS) -c {} \
	  -o $(BUILD)/aarch64/$$(echo {} | tr / _).o' || exit 1
	@echo "check-aarch64: $(words $(LIB_SRC) $(CAP_SRC)) files compile for aarch64"

# tgen takes PyTorch's whole spec: --check --strict, --gen, and the generated C compiles
# (tests/codegen/check_pytorch_specs.sh; releases in ../shared/pytorch-*; CI runs it).
check-pytorch-specs: $(BUILD)/tgen
	@tests/codegen/check_pytorch_specs.sh $(BUILD)/tgen $(CC)

# tgen on the spec files of the projects around PyTorch (../shared/thirdparty-specs/): each
# gives what tests/codegen/thirdparty_specs.tsv says, generated and compiled where it passes
# (tests/codegen/check_thirdparty_specs.sh; CI runs it).
check-thirdparty-specs: $(BUILD)/tgen
	@tests/codegen/check_thirdparty_specs.sh $(BUILD)/tgen $(CC)

# ------------------------------------------------------------------ library
# Order-only on the stamp: generation runs first, but only files whose text tgen changed
# (tracked through -MMD) cause recompilation.
$(BUILD)/obj/%.o: %.c | $(BUILD)/gen.stamp
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) $(DEPFLAGS) -c $< -o $@

SAN_LIB_CFLAGS = $(CSTD) -O1 -g $(WARN) $(LIB_WARN) -fPIC $(TLS_FLAGS) -fopenmp $(INCLUDES) $(BLAS_CFLAGS) $(BACKEND_CFLAGS) $(SAN_FLAGS)
$(BUILD)/san/%.o: %.c | $(BUILD)/gen.stamp
	@mkdir -p $(dir $@)
	$(CC) $(SAN_LIB_CFLAGS) $(DEPFLAGS) -c $< -o $@

# One rule per capability for kernels/cpu/cap/*.c (plain and sanitizer flavours).
define CAP_RULES
$$(BUILD)/obj/cap-$(1)/%.o: %.c | $$(BUILD)/gen.stamp
	@mkdir -p $$(dir $$@)
	$$(CC) $$(LIB_CFLAGS) -DTG_CPU_CAP=$(1) $$(CAP_COMMON) $$(CAP_FLAGS_$(1)) $$(DEPFLAGS) -c $$< -o $$@

$$(BUILD)/san/cap-$(1)/%.o: %.c | $$(BUILD)/gen.stamp
	@mkdir -p $$(dir $$@)
	$$(CC) $$(SAN_LIB_CFLAGS) -DTG_CPU_CAP=$(1) $$(CAP_COMMON) $$(CAP_FLAGS_$(1)) $$(DEPFLAGS) -c $$< -o $$@
endef
$(foreach c,$(CPU_CAPS),$(eval $(call CAP_RULES,$(c))))

ifeq ($(CUDA),emu)
# Launches rewritten for g++ (tests/cuda_emu/unchevron.pl); the headers too, beside the sources,
# so that their quoted includes find the rewritten copies first.
EMU_SRC := $(BUILD)/emu-src
EMU_CUH := $(patsubst %,$(EMU_SRC)/%,$(wildcard kernels/cuda/*.cuh))
EMU_OBJ := $(patsubst $(EMU_DIR)/%.cpp,$(BUILD)/emu/%.o,$(wildcard $(EMU_DIR)/*.cpp))

.SECONDARY: $(EMU_CUH) $(patsubst %,$(EMU_SRC)/%,$(CU_SRC))
$(EMU_SRC)/%: % $(EMU_DIR)/unchevron.pl
	@mkdir -p $(dir $@)
	perl $(EMU_DIR)/unchevron.pl $< > $@

$(BUILD)/obj/%.o: $(EMU_SRC)/%.cu $(EMU_CUH) | $(BUILD)/gen.stamp
	@mkdir -p $(dir $@)
	$(CXX) $(EMU_CXXFLAGS) -Iruntime -Inn -Igenerated -Ikernels/common -Ikernels -I$(EMU_SRC)/kernels/cuda -Ikernels/cuda -MMD -MP \
	  -include cuda_runtime.h -x c++ -c $< -o $@

$(BUILD)/emu/%.o: $(EMU_DIR)/%.cpp $(wildcard $(EMU_DIR)/*.h $(EMU_DIR)/include/*.h)
	@mkdir -p $(dir $@)
	$(CXX) $(EMU_CXXFLAGS) -c $< -o $@

$(BUILD)/libcudaemu.a: $(EMU_OBJ)
	@rm -f $@
	ar rcs $@ $^
else
$(BUILD)/obj/%.o: %.cu | $(BUILD)/gen.stamp
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCC_FLAGS) -MMD -MP -MF $(@:.o=.d) -c $< -o $@
endif

$(BUILD)/libtensorgen.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/libtensorgen-san.a: $(LIB_OBJ_SAN)
	@rm -f $@
	ar rcs $@ $^

# The CUDA backend's archives (the emulated build adds the emulator to what links them).
$(BUILD)/libtensorgen_cuda.a: $(CUDA_OBJ) $(if $(EMU_DIR),$(BUILD)/libcudaemu.a)
	@rm -f $@
	ar rcs $@ $(CUDA_OBJ)

$(BUILD)/libtensorgen_cuda-san.a: $(CUDA_OBJ_SAN) $(if $(EMU_DIR),$(BUILD)/libcudaemu.a)
	@rm -f $@
	ar rcs $@ $(CUDA_OBJ_SAN)

# What libtensorgen.so exports (runtime/exports.sh): every function and variable the installed
# headers (PUBLIC_HEADERS) declare, in version node TENSORGEN_$(SOVERSION); and, in node
# TENSORGEN_PRIVATE_$(VERSION), only the internal functions the CUDA backend calls, which no
# other program can bind to (a backend of another version fails to load). Nothing else.
PUBLIC_HEADERS := runtime/tensorgen.h runtime/tg_core.h runtime/tg_backend.h runtime/tg_kernel.h runtime/tg_profiler.h runtime/tg_library.h runtime/tg_io.h runtime/tg_functional.h \
                  $(wildcard nn/tg_nn*.h) runtime/dispatch/dispatch.h runtime/dispatch/op_glue.h runtime/dispatch/schema_types.h \
                  runtime/autograd/autograd.h runtime/autograd/formula_glue.h runtime/autograd/record.h \
                  generated/tg_ops.h generated/tg_op_types.h generated/tg_boxing.h
$(BUILD)/exports/public.txt: runtime/exports.sh $(PUBLIC_HEADERS) $(BUILD)/gen.stamp
	@mkdir -p $(dir $@)
	CC="$(CC)" runtime/exports.sh public $(PUBLIC_HEADERS) > $@

$(BUILD)/exports/private.txt: runtime/exports.sh $(BUILD)/exports/public.txt $(LIB_OBJ) $(CUDA_OBJ)
	@mkdir -p $(dir $@)
	runtime/exports.sh private $(BUILD)/exports/public.txt "$(LIB_OBJ)" "$(CUDA_OBJ)" > $@

$(BUILD)/exports/tensorgen.map: runtime/exports.sh $(BUILD)/exports/public.txt $(BUILD)/exports/private.txt
	runtime/exports.sh map $(SOVERSION) $(VERSION) $(BUILD)/exports/public.txt $(BUILD)/exports/private.txt > $@

# -Bsymbolic-functions: the library's calls to its own exported functions bind inside it.
$(SO): $(LIB_OBJ) $(BUILD)/exports/tensorgen.map
	$(CC) -shared -Wl,--no-undefined -Wl,-soname,libtensorgen.so.$(SOVERSION) -Wl,-Bsymbolic-functions \
	  -Wl,--version-script,$(BUILD)/exports/tensorgen.map -o $@ $(LIB_OBJ) $(LIBS)
	ln -sf libtensorgen.so.$(VERSION) $(BUILD)/libtensorgen.so.$(SOVERSION)
	ln -sf libtensorgen.so.$(SOVERSION) $(BUILD)/libtensorgen.so

# The backend links the core by soname and finds it beside itself ($ORIGIN); it exports
# nothing (its constructor registers it).
$(CUDA_SO): $(CUDA_OBJ) $(SO) $(if $(EMU_DIR),$(BUILD)/libcudaemu.a)
	printf '{ local: *; };\n' > $(BUILD)/exports/tensorgen_cuda.map
	$(CC) -shared -Wl,--no-undefined -Wl,-soname,libtensorgen_cuda.so.$(SOVERSION) \
	  -Wl,--version-script,$(BUILD)/exports/tensorgen_cuda.map -Wl,-rpath,'$$ORIGIN' -o $@ $(CUDA_OBJ) \
	  -L$(BUILD) -l:libtensorgen.so.$(SOVERSION) $(CUDA_LIBS) $(LIBS)
	ln -sf libtensorgen_cuda.so.$(VERSION) $(BUILD)/libtensorgen_cuda.so.$(SOVERSION)
	ln -sf libtensorgen_cuda.so.$(SOVERSION) $(BUILD)/libtensorgen_cuda.so

# What a program linked with $(BUILD)/libtensorgen.a needs after it (the scripts of tests/build/):
# `gcc ... build/libtensorgen.a $$(make -s print-libs)`.
print-libs:
	@echo '$(LIBS)'

# pkg-config's "uninstalled" tensorgen.pc for programs built against this build tree
# (tensorgen-uninstalled.pc.in; docs/c-api.md): `PKG_CONFIG_PATH=build pkg-config --cflags
# --libs --static tensorgen` gives the source tree's headers and STATIC_LINK.
$(UNINSTALLED_PC): tensorgen-uninstalled.pc.in Makefile
	@mkdir -p $(BUILD)
	sed -e 's|@SRCDIR@|$(CURDIR)|g' -e 's|@BUILDDIR@|$(abspath $(BUILD))|g' -e 's|@VERSION@|$(VERSION)|g' \
	  -e 's|@LIBS@|$(LIBS) $(if $(CUDA_A),$(CUDA_LIBS))|g' -e 's|@CUDA_CFLAGS@|$(if $(CUDA_A),$(CUDA_CFLAGS))|g' \
	  -e 's|@CUDA_LIBS@|$(if $(CUDA_A),$(CUDA_LIBS))|g' \
	  -e 's|@CUDA_WHOLE@|$(if $(CUDA_A),-Wl$(comma)--whole-archive $(abspath $(CUDA_A)) -Wl$(comma)--no-whole-archive)|g' $< > $@

# ------------------------------------------------------------------ examples and bench
# The examples use the public API only, and link the shared library as a user's program would
# (rpath to build/; it loads the CUDA backend from beside itself when asked for a GPU). The
# emulated CUDA build has no shared libraries: there they link the static ones.
SHARED_LINK = -L$(BUILD) -l:libtensorgen.so.$(SOVERSION) -Wl,-rpath,$(abspath $(BUILD)) -lm

$(BUILD)/examples/%: examples/%.c $(or $(SO),$(BUILD)/libtensorgen.a $(CUDA_A))
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(OPT) $(WARN) -Iruntime -Inn -Igenerated -o $@ $< $(if $(SO),$(SHARED_LINK),$(STATIC_LINK))

# With CUDA, bench/*.cu (the empty-kernel baseline) is compiled by nvcc into tg_bench.
BENCH_CU_OBJ := $(if $(filter 1 emu,$(CUDA)),$(patsubst %.cu,$(BUILD)/obj/%.o,$(wildcard bench/*.cu)))

# The benchmark binary runs where it is built, and its reference loops (bench/baselines.c:
# STREAM-like add and sum) stand for this machine's limit, so it is tuned for this machine
# (-march=native) whatever the library's build; the library is linked as built.
$(BUILD)/bench/tg_bench: $(BENCH_SRC) $(wildcard bench/*.h) $(BENCH_CU_OBJ) $(BUILD)/libtensorgen.a $(CUDA_A)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) -O3 -march=native $(WARN) -fopenmp $(INCLUDES) $(BLAS_CFLAGS) $(CUDA_CFLAGS) -o $@ $(BENCH_SRC) $(BENCH_CU_OBJ) $(STATIC_LINK)

# The overhead workloads again through the shared library (bench/shared/), when it is built.
BENCH_SHARED := $(if $(SO),$(BUILD)/bench/tg_bench_shared)
$(BUILD)/bench/tg_bench_shared: bench/shared/overhead_shared.c bench/bench_util.c bench/bench.h $(SO)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) -O3 -march=native $(WARN) -Iruntime -Inn -Igenerated -Ibench -o $@ \
	  bench/shared/overhead_shared.c bench/bench_util.c $(SHARED_LINK)

bench: $(BUILD)/bench/tg_bench $(BENCH_SHARED) $(BUILD)/tgen
	@bench/run.sh $(BUILD)

# ------------------------------------------------------------------ tests
# An operator library for the tests (tests/library/testops/): tgen generates it into
# $(BUILD)/testops/ from its spec, with this tree's templates and operator interface; its
# sources link into the suite (its constructor registers it) and into
# $(BUILD)/tests/libtestops.so for tg_load_library (tests/shared/).
TESTOPS      := tests/library/testops
TESTOPS_GEN  := $(BUILD)/testops
TESTOPS_SRC  := $(addprefix $(TESTOPS_GEN)/testops_,ops.c register.c boxed.c structured.c autograd.c \
                register_cuda.c) $(TESTOPS)/testops_kernels.c
$(TESTOPS_GEN)/stamp: $(wildcard $(TESTOPS)/*.yaml) tests/library/counting_backend.yaml $(TEMPLATES) $(BUILD)/tgen $(BUILD)/gen.stamp
	$(BUILD)/tgen --gen --namespace testops --native $(TESTOPS)/testops.yaml \
	  --derivatives $(TESTOPS)/testops_derivatives.yaml --templates templates \
	  --import generated/tensorgen_api.yaml --out $(TESTOPS_GEN) >/dev/null
	$(BUILD)/tgen --gen --backend tests/library/counting_backend.yaml \
	  --native specs/native_functions.yaml --templates templates --out $(TESTOPS_GEN) >/dev/null
	@touch $@
$(filter $(TESTOPS_GEN)/%,$(TESTOPS_SRC)) $(TESTOPS_GEN)/counting_backend_register.c: $(TESTOPS_GEN)/stamp

# Every test file links into one Criterion binary (one summary line); the sanitizer flavour
# links the same tests against the ASan+UBSan library. Leaks fail through LeakSanitizer and
# through each test's tg_live_tensors()/tg_live_storages() check.
#
# Each source of the suite compiles to its own object (-MMD: editing one test recompiles that
# file and relinks), once per flavour: $(BUILD)/tests/obj/ (plain; in the emulated build,
# build/cuda-emu/tests/obj/), obj-san/ (ASan+UBSan) and obj-nocuda/ (no TG_WITH_CUDA, for the
# shared-library suite). The objects are linked as objects, not through an archive: the
# Criterion tests, the coverage names (tg_cover.h) and the case tables (gradcheck.h,
# tests/ops/kt_case.h) live in linker sections of objects nothing references by name, which
# an archive member would not bring in.
TEST_CFLAGS := $(CSTD) -g $(WARN) -fopenmp -I$(TESTOPS_GEN) $(INCLUDES) -Itests $(BLAS_CFLAGS) $(CUDA_CFLAGS)

# cJSON reads the profiler's Chrome traces back (tests/profiler).
TEST_LIBS := -lcriterion -lcjson

TEST_ALL_SRC    := $(TEST_SRC) $(TEST_COMMON) $(filter-out $(TESTOPS_GEN)/%,$(TESTOPS_SRC))
# The counting backend of tests/library/test_backend.c is generated there too, from
# tests/library/counting_backend.yaml (tgen --gen --backend).
TESTOPS_GEN_SRC := $(filter $(TESTOPS_GEN)/%,$(TESTOPS_SRC)) $(TESTOPS_GEN)/counting_backend_register.c
test_objs = $(TEST_ALL_SRC:%.c=$(BUILD)/tests/$(1)/%.o) \
            $(TESTOPS_GEN_SRC:$(TESTOPS_GEN)/%.c=$(BUILD)/tests/$(1)/testops/%.o)
TEST_OBJ        := $(call test_objs,obj)
TEST_OBJ_SAN    := $(call test_objs,obj-san)
TEST_OBJ_NOCUDA := $(call test_objs,obj-nocuda)

TEST_FLAGS_obj        := $(TEST_CFLAGS) -O1
TEST_FLAGS_obj-san    := $(TEST_CFLAGS) -O1 $(SAN_FLAGS)
TEST_FLAGS_obj-nocuda := $(filter-out $(CUDA_CFLAGS),$(TEST_CFLAGS)) -O1

# One pair of rules per flavour: the suite's sources, and the operator library tgen generates
# for it (order-only on its stamp, which follows generated/; -MMD tracks the headers).
define TEST_OBJ_RULES
$$(BUILD)/tests/$(1)/%.o: %.c | $$(TESTOPS_GEN)/stamp
	@mkdir -p $$(dir $$@)
	$$(CC) $$(TEST_FLAGS_$(1)) $$(DEPFLAGS) -c $$< -o $$@

$$(BUILD)/tests/$(1)/testops/%.o: $$(TESTOPS_GEN)/%.c $$(TESTOPS_GEN)/stamp
	@mkdir -p $$(dir $$@)
	$$(CC) $$(TEST_FLAGS_$(1)) $$(DEPFLAGS) -c $$< -o $$@
endef
$(foreach f,obj obj-san obj-nocuda,$(eval $(call TEST_OBJ_RULES,$(f))))

$(BUILD)/tests/tg_tests: $(TEST_OBJ) $(BUILD)/libtensorgen.a $(CUDA_A)
	$(CC) $(TEST_FLAGS_obj) -o $@ $(TEST_OBJ) $(STATIC_LINK) $(TEST_LIBS)

CUDA_WHOLE_SAN = -Wl,--whole-archive $(BUILD)/libtensorgen_cuda-san.a -Wl,--no-whole-archive $(CUDA_LIBS)
$(BUILD)/tests/tg_tests_san: $(TEST_OBJ_SAN) $(BUILD)/libtensorgen-san.a $(if $(CUDA_A),$(BUILD)/libtensorgen_cuda-san.a)
	$(CC) $(TEST_FLAGS_obj-san) -o $@ $(TEST_OBJ_SAN) \
	  $(if $(CUDA_A),$(CUDA_WHOLE_SAN)) $(BUILD)/libtensorgen-san.a $(LIBS) $(TEST_LIBS)

# The shared library as users and bindings load it (tests/shared/run.sh): exports, dlopen after
# other libraries and from python3, operator libraries loaded at run time, and the examples and
# the CPU suite with the CUDA libraries out of reach. The suite links a build of the core from
# the same objects that exports its internals too (the suite calls them): $(NOCUDA).
NOCUDA    := $(BUILD)/tests/nocuda
NOCUDA_SO := $(NOCUDA)/libtensorgen.so.$(SOVERSION)
SHARED_TESTS := $(addprefix $(BUILD)/tests/,tg_tests_shared dlopen_after_deps cuda_hidden \
                libtestops.so libtestops_copy.so libnotops.so tg_tests_nocuda)
$(BUILD)/tests/libtestops.so: $(TESTOPS_SRC) $(SO)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) -O1 -g $(WARN) -Werror -shared -fPIC -Wl,--no-undefined -I$(TESTOPS_GEN) -Iruntime -Inn \
	  -Igenerated -o $@ $(TESTOPS_SRC) $(SHARED_LINK)
$(BUILD)/tests/libtestops_copy.so: $(BUILD)/tests/libtestops.so
	cp $< $@
$(BUILD)/tests/libnotops.so: tests/shared/cuda_hidden.c
	$(CC) $(CSTD) -shared -fPIC -o $@ $<
$(BUILD)/tests/tg_tests_shared: tests/shared/shared_load_library.c $(SO)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) -g $(WARN) -Iruntime -Inn -Igenerated -o $@ $< $(SHARED_LINK) -ldl -lcriterion
$(BUILD)/tests/dlopen_after_deps: tests/shared/dlopen_after_deps.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) -Iruntime -Inn -Igenerated -o $@ $< -ldl
$(BUILD)/tests/cuda_hidden: tests/shared/cuda_hidden.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) -o $@ $< -ldl
$(NOCUDA_SO): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,--no-undefined -Wl,-soname,libtensorgen.so.$(SOVERSION) -o $@ $(LIB_OBJ) $(LIBS)
$(BUILD)/tests/tg_tests_nocuda: $(TEST_OBJ_NOCUDA) $(NOCUDA_SO)
	$(CC) $(TEST_FLAGS_obj-nocuda) -o $@ $(TEST_OBJ_NOCUDA) -L$(NOCUDA) \
	  -l:libtensorgen.so.$(SOVERSION) -Wl,-rpath,$(abspath $(NOCUDA)) $(LIBS) $(TEST_LIBS)

test-shared: $(SO) $(SHARED_TESTS) $(EXAMPLES)
	tests/shared/run.sh $(BUILD) $(SOVERSION) $(VERSION)

# make install into a scratch prefix, examples/visionops built and tested against it with
# pkg-config only, make uninstall (tests/build/install_check.sh).
test-install: all
	tests/build/install_check.sh $(BUILD)

# The API compile test: the public header must compile warning-free with gcc and clang, and the
# option spellings right or wrong as docs/c-api.md says (tests/api/option_spellings.sh).
API_TEST := tests/api/api_compile_check.c
$(BUILD)/api-compile.ok: $(wildcard $(API_TEST)) tests/api/option_spellings.sh $(BUILD)/gen.stamp runtime/tensorgen.h runtime/tg_core.h runtime/tg_functional.h
	@mkdir -p $(BUILD)
	@if [ -f $(API_TEST) ]; then \
	  for cc in gcc clang; do command -v $$cc >/dev/null || continue; \
	    $$cc -std=c11 -Wall -Wextra -Werror -Iruntime -Inn -Igenerated -fsyntax-only $(API_TEST) || exit 1; \
	  done; fi
	@tests/api/option_spellings.sh
	@touch $@

# safetensors files against Hugging Face's `safetensors` package (tests/io/safetensors_interop.py
# with the C side tests/io/interop/st_interop.c): python3 on PATH with safetensors and numpy
# (.ci/install-deps installs them with pip).
ST_INTEROP := $(BUILD)/tests/st_interop
$(ST_INTEROP): tests/io/interop/st_interop.c $(or $(SO),$(BUILD)/libtensorgen.a $(CUDA_A))
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(OPT) $(WARN) -Iruntime -Inn -Igenerated -o $@ $< $(if $(SO),$(SHARED_LINK),$(STATIC_LINK))
test-safetensors: $(ST_INTEROP)
	python3 tests/io/safetensors_interop.py $(ST_INTEROP)

# State dicts against PyTorch (tests/nn/torch_interop.py with the C side
# tests/nn/interop/nn_interop.c): torchvision's resnet18 and a GPT-2 in Hugging Face's layout
# written by PyTorch load into nn/'s modules with PyTorch's outputs, and tensorgen's files load
# into PyTorch strictly. Debian's python3-torch and python3-torchvision (/usr/bin/python3).
NN_INTEROP := $(BUILD)/tests/nn_interop
$(NN_INTEROP): tests/nn/interop/nn_interop.c $(or $(SO),$(BUILD)/libtensorgen.a $(CUDA_A))
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(OPT) $(WARN) -Iruntime -Inn -Igenerated -o $@ $< $(if $(SO),$(SHARED_LINK),$(STATIC_LINK))
test-nn-torch: $(NN_INTEROP)
	/usr/bin/python3 tests/nn/torch_interop.py $(NN_INTEROP)

test: test-plain test-docs test-capabilities test-isa test-shared test-install test-safetensors test-nn-torch test-san test-fuzz-regressions test-select

# The docs are tests (tests/docs/README.md): every C, sh and console block of README.md and
# docs/*.md is built and run against this build (its headers and static libraries, through
# $(UNINSTALLED_PC)) and its output compared with the page's, or is marked with why not; the
# profiler's sample table (docs/profiling.md) and the README's lists of operators, which
# exist and which not yet (against docs/ops.md), are checked too.
DOC_PAGES := README.md $(wildcard docs/*.md)
test-docs: all
	python3 tests/docs/doc_check.py --build $(BUILD) --cc "$(CC)" --cflags "$(CSTD) $(OPT) $(WARN)" $(DOC_PAGES)

# Rewrites docs/profiling.md's sample table from a run of build/examples/train_mlp --profile
# (test-docs then checks that the table still has the rows and columns the profiler prints).
doc-tables: all
	python3 tests/docs/doc_check.py --build $(BUILD) --update docs/profiling.md

# Criterion names skipped tests (the CUDA tests without a GPU) only when verbose: run verbose
# and drop the per-test RUN/PASS lines, keeping SKIP and FAIL lines and the summary; a SKIP line
# repeated by every instance of a parameterized test is shown once.
SHOW_TEST_RESULTS := grep -vE '^\[(RUN |PASS)\]|^\[====\] Running' | awk '!/^\[SKIP\]/ || !seen[$$0]++'

test-plain: all $(BUILD)/tests/tg_tests $(BUILD)/api-compile.ok
	tests/build/nn_api_check.sh
	set -o pipefail; TGEN=$(BUILD)/tgen $(BUILD)/tests/tg_tests -j2 --verbose 2>&1 | $(SHOW_TEST_RESULTS)

# The kernel suites again under each capability this CPU supports (test-plain ran them with
# the best one), forced through TG_CPU_CAPABILITY, so the baseline and AVX2 builds of the
# per-capability kernels (kernels/cpu/cap/) are tested on any machine that runs them.
CAP_TEST_FILTER := @(pointwise|reduce|softmax|nn_ops|vecmath|cpu_capability|activation|activation_lm)/*
cpu_has = grep -qw $(1) /proc/cpuinfo 2>/dev/null
test-capabilities: $(BUILD)/tests/tg_tests
	@set -o pipefail; for cap in $(CPU_CAPS); do \
	  case $$cap in \
	    avx2) $(call cpu_has,avx2) && $(call cpu_has,fma) || continue ;; \
	    avx512) for f in avx512f avx512dq avx512vl avx512bw; do $(call cpu_has,$$f) || continue 2; done ;; \
	  esac; \
	  echo "kernel suites with TG_CPU_CAPABILITY=$$cap"; \
	  TG_CPU_CAPABILITY=$$cap TGEN=$(BUILD)/tgen $(BUILD)/tests/tg_tests -j2 --verbose \
	    --filter '$(CAP_TEST_FILTER)' 2>&1 | grep -v 'Test is disabled' | $(SHOW_TEST_RESULTS) || exit 1; \
	done

# No AVX instruction in the objects built for the baseline (tests/isa/check_baseline_isa.sh).
test-isa: $(BUILD)/libtensorgen.a
	tests/isa/check_baseline_isa.sh $(BUILD)

# The CUDA driver maps memory where ASan keeps its shadow gap: without protect_shadow_gap=0 the
# first CUDA call under ASan fails on a machine with a GPU.
SAN_CUDA_OPTS := $(if $(filter 1,$(CUDA)),:protect_shadow_gap=0)

# Criterion counts a test as passed even when LeakSanitizer reports at its process's exit, so
# any sanitizer report in the log fails the run.
SAN_REPORT := 'ERROR: (Address|Leak)Sanitizer|runtime error:'

# The whole suite under ASan, LeakSanitizer and UBSan, once, in one build that serves the host
# code and the CUDA backend alike: the emulated tree (tests/cuda_emu), whose library, CUDA
# backend and tests are all compiled with the sanitizers. Every test runs; the device ones on
# two emulated devices, without a GPU (the emulator's own SIGSEGV handler explains faults on
# device memory, so ASan leaves SIGSEGV to it). Then the GPU benchmarks run once at toy sizes
# (BENCH_SMOKE=1), so that bench/bench_cuda.c is known to work before a GPU session relies on
# it: any workload it skips fails the run. Its own build tree; needs only g++ and perl.
# test-cuda-emu is the same target under the name docs/cuda.md uses.
EMU_BUILD := $(BUILD)/cuda-emu
EMU_ENV   := ASAN_OPTIONS=detect_leaks=1:handle_segv=0 UBSAN_OPTIONS=print_stacktrace=1
test-san:
	$(MAKE) --no-print-directory CUDA=emu BUILD=$(EMU_BUILD) OPT=-O1 all $(EMU_BUILD)/tests/tg_tests $(EMU_BUILD)/bench/tg_bench
	set -o pipefail; TGEN=$(EMU_BUILD)/tgen $(EMU_ENV) \
	  $(EMU_BUILD)/tests/tg_tests -j2 --verbose 2>&1 | tee $(EMU_BUILD)/tests/san.log | $(SHOW_TEST_RESULTS)
	$(EMU_ENV) BENCH_SMOKE=1 $(EMU_BUILD)/bench/tg_bench --only cuda_,cublas_ >$(EMU_BUILD)/bench/smoke.jsonl 2>>$(EMU_BUILD)/tests/san.log
	@echo "GPU benchmarks on the emulator (smoke): $$(wc -l <$(EMU_BUILD)/bench/smoke.jsonl) JSON lines"
	@if grep -qE $(SAN_REPORT)'|skipped' $(EMU_BUILD)/tests/san.log; then \
	  grep -E 'skipped' $(EMU_BUILD)/tests/san.log >&2; echo "sanitizer reports or skipped workloads: failing the run" >&2; exit 1; fi
test-cuda-emu: test-san

# On a machine with a GPU: the suite under the sanitizers against the real CUDA backend (this
# tree's flavour obj-san/, libtensorgen-san.a). Not part of `make test`, whose test-san covers
# the same host code on the emulator. The CUDA driver maps memory where ASan keeps its shadow
# gap: without protect_shadow_gap=0 the first CUDA call under ASan fails on a GPU.
SAN_CUDA_OPTS := $(if $(filter 1,$(CUDA)),:protect_shadow_gap=0)
test-san-gpu: $(BUILD)/tgen $(BUILD)/tests/tg_tests_san
	set -o pipefail; TGEN=$(BUILD)/tgen ASAN_OPTIONS=detect_leaks=1$(SAN_CUDA_OPTS) UBSAN_OPTIONS=print_stacktrace=1 \
	  $(BUILD)/tests/tg_tests_san -j2 --verbose 2>&1 | tee $(BUILD)/tests/san.log | $(SHOW_TEST_RESULTS)
	@if grep -qE $(SAN_REPORT) $(BUILD)/tests/san.log; then \
	  echo "sanitizer reports above: failing the run" >&2; exit 1; fi

# ------------------------------------------------------------------ selective builds
# make SELECT=<operator list or kernel-library .yaml>: select.mk (docs/generated-code.md,
# "Selective builds"); test-select checks one.
include select.mk

# ------------------------------------------------------------------ fuzzing
include tests/fuzz/fuzz.mk

# ------------------------------------------------------------------ formatting
# One style for the hand-written C, C++ and CUDA: .clang-format at the top. Which files is decided
# in one place, .ci/format-files (tracked *.c *.h *.cu *.cuh *.cpp under runtime/ codegen/
# kernels/ tests/ bench/ examples/; not generated/, not tests/fixtures/). clang-format versions
# other than 14 (Debian 12's, which .ci/install-deps installs) may lay out a few lines differently.
CLANG_FORMAT ?= clang-format
NEED_CLANG_FORMAT = command -v $(CLANG_FORMAT) >/dev/null || \
	{ echo "$(CLANG_FORMAT) not found: install clang-format (.ci/install-deps does)" >&2; exit 1; }

format:
	@$(NEED_CLANG_FORMAT)
	@.ci/format-files | xargs -r $(CLANG_FORMAT) -i

# Fails, naming each file whose text differs from its formatted form (--dry-run --Werror).
format-check:
	@$(NEED_CLANG_FORMAT)
	@files=$$(.ci/format-files) || exit 1; \
	drift=$$(for f in $$files; do \
	  $(CLANG_FORMAT) --dry-run --Werror "$$f" >/dev/null 2>&1 || echo "$$f"; done); \
	if [ -n "$$drift" ]; then \
	  echo "not formatted as .clang-format says (run 'make format'):" >&2; \
	  echo "$$drift" | sed 's/^/  /' >&2; exit 1; fi; \
	echo "format-check: $$(echo "$$files" | wc -l) files formatted as .clang-format says"

# ------------------------------------------------------------------ install
# make install PREFIX=... [DESTDIR=...]: the libraries with their soname links, the public
# headers (PUBLIC_HEADERS, generated/ops/) under include/tensorgen/, tgen, its templates and
# tensorgen's operator interface under share/tensorgen/, and a pkg-config file whose variables
# name them (docs/extending.md). Every path it writes is listed in
# share/tensorgen/install_manifest.txt, which `make uninstall` removes again, with tensorgen's
# own directories (include/tensorgen/, share/tensorgen/) when they are left empty.
LIBDIR   ?= $(PREFIX)/lib
INCDIR   := $(PREFIX)/include/tensorgen
DATADIR  := $(PREFIX)/share/tensorgen
MANIFEST := $(DATADIR)/install_manifest.txt
PC_SUBST := -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' -e 's|@VERSION@|$(VERSION)|g' \
            -e 's|@LIBS@|$(LIBS)|g' -e 's|@CUDA_CFLAGS@|$(if $(CUDA_SO),$(CUDA_CFLAGS))|g' \
            -e 's|@CUDA_LIBS@|$(if $(CUDA_SO),$(CUDA_LIBS))|g'
install: all
	@set -e; root='$(DESTDIR)'; list="$$root$(MANIFEST).tmp"; \
	put() { mode=$$1; dir=$$2; shift 2; install -d "$$root$$dir"; for f in "$$@"; do \
	  install -m $$mode "$$f" "$$root$$dir/"; echo "$$dir/$${f##*/}" >> "$$list"; done; }; \
	link() { ln -sfn "$$1" "$$root$$2"; echo "$$2" >> "$$list"; }; \
	install -d "$$root$(DATADIR)"; : > "$$list"; \
	put 755 $(PREFIX)/bin $(BUILD)/tgen; \
	put 644 $(INCDIR) $(filter-out %/dispatch.h %/op_glue.h %/schema_types.h %/autograd.h %/formula_glue.h %/record.h,$(PUBLIC_HEADERS)); \
	put 644 $(INCDIR)/ops generated/ops/*.h; \
	put 644 $(INCDIR)/dispatch runtime/dispatch/dispatch.h runtime/dispatch/op_glue.h runtime/dispatch/schema_types.h; \
	put 644 $(INCDIR)/autograd runtime/autograd/autograd.h runtime/autograd/formula_glue.h runtime/autograd/record.h; \
	put 644 $(DATADIR)/templates templates/*.in; \
	put 644 $(DATADIR) generated/tensorgen_api.yaml; \
	for lib in libtensorgen $(if $(CUDA_SO),libtensorgen_cuda); do \
	  put 755 $(LIBDIR) $(BUILD)/$$lib.so.$(VERSION); put 644 $(LIBDIR) $(BUILD)/$$lib.a; \
	  link $$lib.so.$(VERSION) $(LIBDIR)/$$lib.so.$(SOVERSION); \
	  link $$lib.so.$(SOVERSION) $(LIBDIR)/$$lib.so; done; \
	install -d "$$root$(LIBDIR)/pkgconfig"; \
	sed $(PC_SUBST) tensorgen.pc.in > "$$root$(LIBDIR)/pkgconfig/tensorgen.pc"; \
	echo "$(LIBDIR)/pkgconfig/tensorgen.pc" >> "$$list"; echo "$(MANIFEST)" >> "$$list"; \
	mv "$$list" "$$root$(MANIFEST)"; \
	echo "installed $$(wc -l < "$$root$(MANIFEST)") files under $$root$(PREFIX) (list: $(MANIFEST))"

uninstall:
	@set -e; root='$(DESTDIR)'; list="$$root$(MANIFEST)"; \
	[ -f "$$list" ] || { echo "uninstall: $$list not found: nothing installed under $$root$(PREFIX)" >&2; exit 1; }; \
	while read -r f; do rm -f "$$root$$f"; done < "$$list"; \
	for d in $(INCDIR)/ops $(INCDIR)/dispatch $(INCDIR)/autograd $(INCDIR) $(DATADIR)/templates $(DATADIR); do \
	  rmdir --ignore-fail-on-non-empty "$$root$$d" 2>/dev/null || true; done; \
	echo "uninstall: removed what was installed under $$root$(PREFIX)"

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
