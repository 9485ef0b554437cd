# Selective builds (docs/generated-code.md, "Selective builds"), included by the Makefile:
#
#   make SELECT=ops.txt [SELECT_AUTOGRAD=0]     (or make select SELECT=...)
#
# builds $(BUILD)/select/libtensorgen.{a,so} with only the operators SELECT names (a plain
# list, one name per line, or a kernel-library .yaml file) and what they call, and prints
# their sizes against the full library's. How:
#   1. the full build's runtime objects (always linked) and kernel objects (linked when needed)
#      are compiled as usual (ccache makes this cheap), then `nm -o` lists their symbols;
#   2. tgen --gen --select computes the closure (spec: delegates, functional siblings,
#      derivative formulas, the autograd engine's operators; objects: what the kernels and the
#      runtime call, as a linker resolves an archive) and generates only that into
#      $(BUILD)/select/gen/ (never generated/), writing the objects to link to
#      selected_objects.txt;
#   3. the generated sources are compiled against $(BUILD)/select/gen/ headers (and 1-2 run
#      again with their objects among the linked, until the objects to link settle), archived
#      and linked (-Wl,--no-undefined: anything the closure missed is a link error naming it)
#      with the selected objects.
# nn/ (modules, optimizers, data) is left out: it is written over the whole operator set. The
# CUDA backend is left out too. The shared library exports every global symbol (no version
# script: runtime/exports.sh reads the full headers).
SEL_DIR   := $(BUILD)/select
SEL_GEN   := $(SEL_DIR)/gen
SELECT_AUTOGRAD ?= 1
SEL_LINKED := $(filter $(BUILD)/obj/runtime/%,$(LIB_OBJ))
SEL_CANDIDATES := $(filter $(BUILD)/obj/kernels/% $(BUILD)/obj/cap-%,$(LIB_OBJ))
SEL_CANDIDATES := $(filter-out $(foreach c,$(CPU_CAPS),$(BUILD)/obj/cap-$(c)/generated/%),$(SEL_CANDIDATES))
SEL_TGEN_ARGS = --gen --select $(SELECT) --select-objects $(SEL_DIR)/objects.nm \
                --native specs/native_functions.yaml --runtime runtime \
                $(if $(and $(DERIVS),$(filter 1,$(SELECT_AUTOGRAD))),--derivatives $(DERIVS)) \
                --templates templates --out $(SEL_GEN)
SEL_INCLUDES := -Iruntime -I$(SEL_GEN) -Ikernels/common -Ikernels/cpu -Ikernels
SEL_CFLAGS    = $(subst -Igenerated ,-I$(SEL_GEN) ,$(subst -Inn ,,$(LIB_CFLAGS)))

.PHONY: select select-lib select-objs
ifdef SELECT
.DEFAULT_GOAL := select
endif

# Generation runs every time (tgen writes only files whose text changed); the library is then
# built by a second make, whose wildcards see what tgen wrote. The generated sources need
# helpers too (a pointwise kernel calls tg__ufunc_cpu_run, in kernels/cpu/ufunc.o), which their
# objects say only once compiled: so the closure is computed again with those objects among
# the linked ones, until the objects to link no longer change (two passes, unless the helpers
# pulled in call operators the first pass did not select).
SEL_NM = { echo '\# linked'; nm -o $(SEL_LINKED) $$(cat $(SEL_DIR)/gen_objects.txt 2>/dev/null); \
           echo '\# candidates'; nm -o $(SEL_CANDIDATES); } > $(SEL_DIR)/objects.nm
select: $(BUILD)/tgen $(SEL_LINKED) $(SEL_CANDIDATES) $(BUILD)/libtensorgen.a $(SO)
	@test -n "$(SELECT)" || { echo "make select: give SELECT=<operator list or kernel-library .yaml>" >&2; exit 2; }
	@mkdir -p $(SEL_DIR)
	@rm -f $(SEL_DIR)/gen_objects.txt
	@for pass in 1 2 3 4 5 6; do \
	  $(SEL_NM); \
	  cat $(SEL_DIR)/gen_objects.txt $(SEL_GEN)/selected_objects.txt > $(SEL_DIR)/before.txt 2>/dev/null; \
	  $(BUILD)/tgen $(SEL_TGEN_ARGS) | grep -v '^tgen: wrote' > $(SEL_DIR)/tgen.log || { cat $(SEL_DIR)/tgen.log; exit 1; }; \
	  $(MAKE) --no-print-directory select-objs SELECT=$(SELECT) || exit 1; \
	  cat $(SEL_DIR)/gen_objects.txt $(SEL_GEN)/selected_objects.txt | cmp -s - $(SEL_DIR)/before.txt && break; \
	done; cat $(SEL_DIR)/tgen.log
	@$(MAKE) --no-print-directory select-lib SELECT=$(SELECT)

# tensorgen's sources only (tg_*): a kernel-library file's custom operators are generated
# beside them as operator libraries of their own (<ns>_*.c), which the user builds with the
# kernels they name.
SEL_C   = $(filter-out %/tg_register_cuda.c,$(wildcard $(SEL_GEN)/tg_*.c)) $(wildcard $(SEL_GEN)/ufunc/*_cpu.c)
SEL_CAP = $(wildcard $(SEL_GEN)/ufunc/*_cap.c)
SEL_OBJ = $(SEL_C:$(SEL_GEN)/%.c=$(SEL_DIR)/obj/%.o) \
          $(foreach c,$(CPU_CAPS),$(SEL_CAP:$(SEL_GEN)/%.c=$(SEL_DIR)/obj/cap-$(c)/%.o))
SEL_LINK_OBJ = $(sort $(SEL_OBJ) $(shell cat $(SEL_GEN)/selected_objects.txt 2>/dev/null))

$(SEL_DIR)/obj/%.o: $(SEL_GEN)/%.c
	@mkdir -p $(dir $@)
	$(CC) $(SEL_CFLAGS) $(DEPFLAGS) -c $< -o $@

define SEL_CAP_RULE
$$(SEL_DIR)/obj/cap-$(1)/%.o: $$(SEL_GEN)/%.c
	@mkdir -p $$(dir $$@)
	$$(CC) $$(SEL_CFLAGS) -DTG_CPU_CAP=$(1) $$(CAP_COMMON) $$(CAP_FLAGS_$(1)) $$(DEPFLAGS) -c $$< -o $$@
endef
$(foreach c,$(CPU_CAPS),$(eval $(call SEL_CAP_RULE,$(c))))

# The generated sources' objects, and their list for the next pass's symbol table.
select-objs: $(SEL_OBJ)
	@printf '%s\n' $(SEL_OBJ) > $(SEL_DIR)/gen_objects.txt

$(SEL_DIR)/libtensorgen.a: $(SEL_OBJ) $(SEL_GEN)/selected_objects.txt
	@rm -f $@
	ar rcs $@ $(SEL_LINK_OBJ)

SEL_SO := $(SEL_DIR)/libtensorgen.so.$(VERSION)
$(SEL_SO): $(SEL_OBJ) $(SEL_GEN)/selected_objects.txt
	$(CC) -shared -Wl,--no-undefined -Wl,-soname,libtensorgen.so.$(SOVERSION) -Wl,-Bsymbolic-functions \
	  -o $@ $(SEL_LINK_OBJ) $(LIBS)
	ln -sf libtensorgen.so.$(VERSION) $(SEL_DIR)/libtensorgen.so.$(SOVERSION)
	ln -sf libtensorgen.so.$(SOVERSION) $(SEL_DIR)/libtensorgen.so

# The sizes, selected against full (text + data + bss of the archive's members; the files).
sel_size = $$(size -t $(1) 2>/dev/null | awk 'END { print $$4 }')
select-lib: $(SEL_DIR)/libtensorgen.a $(SEL_SO)
	@echo "selective build ($(SELECT)): $(SEL_DIR)/libtensorgen.{a,so}"
	@printf '  %-22s %12s %12s\n' '' selected full
	@printf '  %-22s %12s %12s\n' 'libtensorgen.a (size)' "$(call sel_size,$(SEL_DIR)/libtensorgen.a)" "$(call sel_size,$(BUILD)/libtensorgen.a)"
	@printf '  %-22s %12s %12s\n' 'libtensorgen.a (file)' "$$(stat -c %s $(SEL_DIR)/libtensorgen.a)" "$$(stat -c %s $(BUILD)/libtensorgen.a)"
	@printf '  %-22s %12s %12s\n' 'libtensorgen.so (size)' "$(call sel_size,$(SEL_SO))" "$(if $(SO),$(call sel_size,$(SO)),-)"
	@printf '  %-22s %12s %12s\n' 'libtensorgen.so (file)' "$$(stat -c %s $(SEL_SO))" "$(if $(SO),$$(stat -c %s $(SO)),-)"

# The test: select tests/build/select/ops.txt, build, run a program using those operators
# (forward and backward), and check that an operator outside the closure is absent
# (tests/build/select_check.sh).
test-select: $(BUILD)/tgen $(SEL_LINKED) $(SEL_CANDIDATES) $(BUILD)/libtensorgen.a $(SO)
	CC="$(CC)" MAKE="$(MAKE)" tests/build/select_check.sh $(BUILD) "$(CUDA)"

