/* The schema types of tensorgen's C API, declared once (docs/generated-code.md, "Type
 * mapping"). Both sides read this table:
 *   - tgen compiles it in (codegen/api/api.h, api_types.c): each kind's C type, the suffix of
 *     its boxing helpers, its None and default forms, whether it can be a result; and it
 *     generates from it the boxing helpers of generated/tg_boxing.h (one template per form,
 *     templates/tg_boxing_<form>.h.in), which dispatch/op_glue.h includes;
 *   - the runtime derives the tags of boxed values (tg_ivalue_tag, tg_library.h) and their
 *     names for messages (tg_ivalue_tag_name) from it.
 * A new schema type is one row here (two with its optional), plus the declaration of its C type
 * when it brings a new one (tg_core.h), and its base name in tgen's schema parser when the
 * schema language does not have it yet. Installed: tg_library.h includes it.
 *
 * Pure data: two list macros that call X once per row, and nothing else. */
#ifndef TG_DISPATCH_SCHEMA_TYPES_H
#define TG_DISPATCH_SCHEMA_TYPES_H

/* The tags of boxed values, TG_IV_<tag>, in their order (an operator library's ABI):
 * X(tag, name, member)
 *   name    the schema's name of the type, for messages ("... must be int[], not Tensor")
 *   member  the member of tg_ivalue's union that holds a value of the tag */
#define TG_IVALUE_TAGS(X)                                                        \
    X(NONE, "None", "")      /* an absent optional (Tensor?, int?, ...) */       \
    X(TENSOR, "Tensor", "t") /* the stack owns a reference */                    \
    X(INT, "int", "i")       /* int, SymInt, Stream, DeviceIndex */              \
    X(DOUBLE, "float", "d")  /* float, Scalar (an int or a bool is taken too) */ \
    X(BOOL, "bool", "b")                                                         \
    X(INT_LIST, "int[]", "ints")                                                 \
    X(TENSOR_LIST, "Tensor[]", "tensors")                                        \
    X(DTYPE, "ScalarType", "i") /* .v.i holds a tg_dtype */                      \
    X(DEVICE, "Device", "device")                                                \
    X(STRING, "str", "s")                                                        \
    X(GENERATOR, "Generator", "g")                                               \
    X(LAYOUT, "Layout", "i")                                                     \
    X(MEMORY_FORMAT, "MemoryFormat", "i")                                        \
    X(FLOAT_LIST, "float[]", "floats") /* float[], Scalar[] */                   \
    X(BOOL_LIST, "bool[]", "bools")                                              \
    X(STR_LIST, "str[]", "strs")           /* str[], Dimname[] */                \
    X(STORAGE, "Storage", "p")             /* a borrowed tg_storage * */         \
    X(QUANTIZER, "ConstQuantizerPtr", "p") /* a borrowed tg_quantizer * */       \
    X(QSCHEME, "QScheme", "i")

/* The kinds of arguments and results (tgen's TGA_<kind>):
 * X(kind, spellings, ctype, suffix, form, tag, none, some, error)
 *   spellings  the schema types of the kind, space-separated, written without list sizes
 *              ("int[]" stands for int[2] too); "" for a kind no schema type maps to
 *   ctype      its C type in the generated functions, options structs and kernels
 *   suffix     its boxing helpers' suffix: tg__box_<suffix> pushes an argument,
 *              tg__unbox_<suffix> reads one, and a result kind's tg__push_<suffix> and
 *              tg__boxed_result_<suffix> push and read a result. An optional kind's is
 *              "opt_" and its plain kind's
 *   form       how the helpers are written: "written" by hand (dispatch/op_glue.h), "alias"
 *              (those of the kind `suffix` names), or generated from
 *              templates/tg_boxing_<form>.h.in:
 *                value      a value held in the tag's member
 *                list       a (len, data) or (data, len) list; a NULL .data is the empty list
 *                enum       an enum held in .v.i; its `none` value boxes as None
 *                pointer    a pointer held in the tag's member; NULL boxes as None
 *                opt_sentinel  optional: the plain kind's value in `ctype`, None when it is
 *                           `none`, a value no argument takes (compared bit for bit: float?'s
 *                           is a NaN with a payload of its own)
 *                opt_list   optional: the plain list, None when .data is NULL
 *                opt_same   optional: the plain kind's C type, None when it is `none`
 *                opt_written  optional, its helpers written by hand like "written"
 *   tag        the tag of its boxed values (TG_IV_<tag>)
 *   none       C text of None: the default of an optional argument written `=None`, what
 *              unboxing None gives; for a plain enum, pointer or device, the value that boxes
 *              as None; "" when the kind has none
 *   some       C text of an optional kind's present value, %s standing for the plain value;
 *              "" for a plain kind
 *   error      for a kind an operator may return, the value its function returns on an error;
 *              "" for a kind that cannot be a result
 * The sentinels (TG_NONE_INT, TG_NONE_FLOAT, TG_NONE_BOOL, TG_NONE_LEN) and the optional
 * numbers' C types are declared by hand in the public header (tg_core.h). */
#define TG_SCHEMA_KINDS(X)                                                                         \
    X(TENSOR, "Tensor", "tg_tensor *", "tensor", "written", TENSOR, "NULL", "", "NULL")            \
    X(OPT_TENSOR, "Tensor?", "tg_tensor *", "opt_tensor", "opt_same", TENSOR, "NULL", "%s", "")    \
    X(TENSOR_LIST, "Tensor[]", "tg_tensor_list", "tensor_list", "written", TENSOR_LIST, "", "",    \
      "(tg_tensor_list){ NULL, 0 }")                                                               \
    X(INT, "int SymInt DeviceIndex", "int64_t", "int", "value", INT, "", "", "0")                  \
    X(OPT_INT, "int? SymInt? DeviceIndex?", "tg_opt_int", "opt_int", "opt_sentinel", INT,          \
      "TG_NONE_INT", "%s", "")                                                                     \
    X(INT_LIST, "int[] SymInt[] DeviceIndex[]", "tg_int_list", "int_list", "list", INT_LIST, "",   \
      "", "(tg_int_list){ .len = 0, .data = NULL }")                                               \
    X(OPT_INT_LIST, "int[]? SymInt[]? DeviceIndex[]?", "tg_int_list", "opt_int_list", "opt_list",  \
      INT_LIST, "{ .len = TG_NONE_LEN, .data = NULL }", "%s", "")                                  \
    X(DOUBLE, "Scalar float SymFloat", "double", "double", "written", DOUBLE, "", "", "NAN")       \
    X(OPT_DOUBLE, "Scalar? float? SymFloat?", "tg_opt_float", "opt_double", "opt_sentinel",        \
      DOUBLE, "TG_NONE_FLOAT", "%s", "")                                                           \
    X(BOOL, "bool SymBool", "bool", "bool", "value", BOOL, "", "", "false")                        \
    X(OPT_BOOL, "bool? SymBool?", "tg_opt_bool", "opt_bool", "opt_sentinel", BOOL, "TG_NONE_BOOL", \
      "%s", "")                                                                                    \
    X(DTYPE, "ScalarType", "tg_dtype", "dtype", "enum", DTYPE, "TG_DTYPE_NONE", "",                \
      "TG_DTYPE_NONE")                                                                             \
    X(OPT_DTYPE, "ScalarType?", "tg_dtype", "opt_dtype", "opt_same", DTYPE, "TG_DTYPE_NONE", "%s", \
      "")                                                                                          \
    X(LAYOUT, "Layout", "tg_layout", "layout", "enum", LAYOUT, "TG_LAYOUT_NONE", "", "")           \
    X(OPT_LAYOUT, "Layout?", "tg_layout", "opt_layout", "opt_same", LAYOUT, "TG_LAYOUT_NONE",      \
      "%s", "")                                                                                    \
    X(DEVICE, "Device", "tg_device", "device", "written", DEVICE, "{ TG_DEVICE_NONE, -1 }", "",    \
      "")                                                                                          \
    X(OPT_DEVICE, "Device?", "tg_device", "opt_device", "opt_same", DEVICE,                        \
      "{ TG_DEVICE_NONE, -1 }", "%s", "")                                                          \
    X(MEMORY_FORMAT, "MemoryFormat", "tg_memory_format", "memory_format", "enum", MEMORY_FORMAT,   \
      "TG_MEMORY_FORMAT_NONE", "", "")                                                             \
    X(OPT_MEMORY_FORMAT, "MemoryFormat?", "tg_memory_format", "opt_memory_format", "opt_same",     \
      MEMORY_FORMAT, "TG_MEMORY_FORMAT_NONE", "%s", "")                                            \
    /* A Generator is a pointer either way; NULL (None) means the default generator. */            \
    X(OPT_GENERATOR, "Generator Generator?", "tg_generator *", "opt_generator", "opt_same",        \
      GENERATOR, "NULL", "%s", "")                                                                 \
    X(STR, "str Dimname", "const char *", "str", "pointer", STRING, "NULL", "", "")                \
    X(OPT_STR, "str? Dimname?", "const char *", "opt_str", "opt_same", STRING, "NULL", "%s", "")   \
    /* Tensor?[]: a list whose elements may be NULL (None), not an optional list */                \
    X(OPT_TENSOR_LIST, "Tensor?[]", "tg_tensor_list", "opt_tensor_list", "written", TENSOR_LIST,   \
      "", "", "")                                                                                  \
    /* Tensor[]?, an optional list: None is TG_NO_TENSORS, whose .len is TG_NONE_LEN */            \
    X(TENSOR_LIST_OR_NONE, "Tensor[]?", "tg_tensor_list", "tensor_list_or_none", "opt_written",    \
      TENSOR_LIST, "{ .data = NULL, .len = TG_NONE_LEN }", "%s", "")                               \
    X(FLOAT_LIST, "float[] SymFloat[] Scalar[]", "tg_float_list", "float_list", "list",            \
      FLOAT_LIST, "", "", "")                                                                      \
    X(OPT_FLOAT_LIST, "float[]? SymFloat[]? Scalar[]?", "tg_float_list", "opt_float_list",         \
      "opt_list", FLOAT_LIST, "{ .data = NULL, .len = 0 }", "%s", "")                              \
    X(BOOL_LIST, "bool[] SymBool[]", "tg_bool_list", "bool_list", "list", BOOL_LIST, "", "", "")   \
    X(OPT_BOOL_LIST, "bool[]? SymBool[]?", "tg_bool_list", "opt_bool_list", "opt_list", BOOL_LIST, \
      "{ .data = NULL, .len = 0 }", "%s", "")                                                      \
    X(STR_LIST, "str[] Dimname[]", "tg_str_list", "str_list", "list", STR_LIST, "", "", "")        \
    X(OPT_STR_LIST, "str[]? Dimname[]?", "tg_str_list", "opt_str_list", "opt_list", STR_LIST,      \
      "{ .data = NULL, .len = 0 }", "%s", "")                                                      \
    X(STORAGE, "Storage", "tg_storage *", "storage", "pointer", STORAGE, "NULL", "", "")           \
    X(OPT_STORAGE, "Storage?", "tg_storage *", "opt_storage", "opt_same", STORAGE, "NULL", "%s",   \
      "")                                                                                          \
    /* A stream is its id, boxed as an int */                                                      \
    X(STREAM, "Stream", "tg_stream", "int", "alias", INT, "", "", "")                              \
    X(QSCHEME, "QScheme", "tg_quant_scheme", "qscheme", "enum", QSCHEME, "TG_QSCHEME_NONE", "",    \
      "TG_QSCHEME_NONE")                                                                           \
    X(OPT_QSCHEME, "QScheme?", "tg_quant_scheme", "opt_qscheme", "opt_same", QSCHEME,              \
      "TG_QSCHEME_NONE", "%s", "")                                                                 \
    X(QUANTIZER, "ConstQuantizerPtr", "const tg_quantizer *", "quantizer", "pointer", QUANTIZER,   \
      "NULL", "", "")                                                                              \
    /* Only for Generator?'s helpers (opt_same builds on its plain kind): no schema type */        \
    X(GENERATOR, "", "tg_generator *", "generator", "pointer", GENERATOR, "NULL", "", "")

#endif
