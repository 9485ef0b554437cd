/* The formula parser: recursive descent over C's expression grammar, restricted to what a
 * derivative formula needs (docs/generated-code.md, "Autograd"). From loosest to tightest:
 *
 *   cond     := or ('?' cond ':' cond)?
 *   or       := and ('||' and)*
 *   and      := bitor ('&&' bitor)*
 *   bitor    := bitand ('|' bitand)*
 *   bitand   := equality ('&' equality)*
 *   equality := relation (('==' | '!=') relation)?      one comparison, not a chain
 *   relation := sum (('<' | '<=' | '>' | '>=') sum)?     idem
 *   sum      := product (('+' | '-') product)*
 *   product  := unary (('*' | '/') unary)*
 *   unary    := ('-' | '+' | '!' | '*') unary | postfix
 *   postfix  := primary ( '(' args ')' | ('.' | '->') name '(' args ')' | '[' cond ']' )*
 *   primary  := number | string | true | false | name | template '(' args ')'
 *             | '(' cond ')' | '{' args '}' | lambda
 *   name     := '::'? ident ('::' ident)*
 *   template := name '<' targ (',' targ)* '>'          only for the class and function
 *                                                       templates in `templates` below
 *   targ     := int | name ('<' targ (',' targ)* '>')?
 *   lambda   := '[' ']' '(' targ ident ')' '{' 'return' cond ';' '}'
 *
 * Comparisons do not chain: `a < b > c` is almost always a C++ template, and refusing it
 * makes a template this parser does not know fail to parse instead of parsing as nonsense.
 * `<` after a name starts template arguments only for the names listed in `templates`. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "formula/formula.h"
#include "base/strbuf.h"

typedef struct parser {
    tgm_arena *a;
    tgf_lexer lex;
    tgf_token tok;   /* the current token */
    size_t prev_end; /* end of the last consumed token */
    tgf_syntax_error *err;
    bool failed;
    int nesting; /* parse_cond / parse_unary calls in progress, at most TGF_MAX_DEPTH */
} parser;

static bool fail(parser *p, size_t off, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool fail(parser *p, size_t off, const char *fmt, ...)
{
    if (p->failed) return false;
    p->failed = true;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err->msg, sizeof p->err->msg, fmt, ap);
    va_end(ap);
    p->err->offset = off;
    return false;
}

static bool advance(parser *p)
{
    if (p->failed) return false;
    p->prev_end = p->tok.offset + p->tok.len;
    if (!tgf_lex(&p->lex, &p->tok, p->err)) {
        p->failed = true;
        return false;
    }
    return true;
}

static bool is_punct(const parser *p, const char *s)
{
    return p->tok.kind == TGF_TOK_PUNCT && !strcmp(p->tok.text, s);
}

static bool accept(parser *p, const char *s) { return is_punct(p, s) && advance(p); }

/* What the current token is, for messages. */
static const char *tok_desc(parser *p)
{
    switch (p->tok.kind) {
    case TGF_TOK_EOF: return "the end of the formula";
    case TGF_TOK_STR: return "a string";
    default: return tgs_fmt(p->a, "'%.*s'", (int)p->tok.len, p->lex.src + p->tok.offset);
    }
}

static bool expect(parser *p, const char *s, const char *what)
{
    if (accept(p, s)) return true;
    return fail(p, p->tok.offset, "expected '%s' %s, found %s", s, what, tok_desc(p));
}

static tgm_expr *node(parser *p, tgm_expr_kind kind, size_t offset)
{
    tgm_expr *e = tgm_alloc(p->a, sizeof *e);
    e->kind = kind;
    e->offset = offset;
    return e;
}

static bool too_deep(parser *p, size_t off)
{
    return fail(p, off, "the formula nests more than %d levels deep", TGF_MAX_DEPTH);
}

/* Sets the node's span and height once its children are in place. A left-associative chain
 * (`a + b + c ...`) deepens the tree without deepening the parser's recursion, so the height
 * is checked here too; the error points at the operand that went past the limit. */
static void finish(parser *p, tgm_expr *e)
{
    e->len = p->prev_end > e->offset ? p->prev_end - e->offset : 0;
    e->height = 1;
    for (int i = 0; i < e->nargs; i++)
        if (e->args[i]->height >= e->height) e->height = e->args[i]->height + 1;
    if (e->height > TGF_MAX_DEPTH)
        too_deep(p, e->nargs ? e->args[e->nargs - 1]->offset : e->offset);
}

/* Entering one more level of recursion; false (after an error) past the limit. */
static bool enter(parser *p)
{
    if (++p->nesting <= TGF_MAX_DEPTH) return true;
    return too_deep(p, p->tok.offset);
}

static void add_arg(parser *p, tgm_expr *e, tgm_expr *arg, int *cap)
{
    *TGS_PUSH(p->a, e->args, e->nargs, *cap) = arg;
}

static tgm_expr *parse_cond(parser *p);
static tgm_expr *parse_cond_at(parser *p);

/* `(` already consumed (or `{`): comma-separated expressions up to `close`. */
static bool parse_args(parser *p, tgm_expr *e, int *cap, const char *close, const char *what)
{
    if (accept(p, close)) return true;
    for (;;) {
        tgm_expr *arg = parse_cond(p);
        if (!arg) return false;
        add_arg(p, e, arg, cap);
        if (accept(p, close)) return true;
        if (!accept(p, ","))
            return fail(p, p->tok.offset, "expected ',' or '%s' in %s, found %s", close, what,
                        tok_desc(p));
    }
}

/* The C++ templates PyTorch's formulas use: `name<...>` is their argument list, never a
 * comparison. */
static const char *const templates[] = {
    "std::get",      "std::tuple",           "std::vector",           "std::optional",
    "c10::optional", "at::OptionalArrayRef", "c10::OptionalArrayRef", "OptionalArrayRef",
    "std::array",    "at::ArrayRef",         "c10::ArrayRef",         "ArrayRef",
    "std::complex", /* PyTorch 1.5's angle and imag: parsed, so that the error says what it is */
};

static bool is_template(const char *name)
{
    for (size_t i = 0; i < sizeof templates / sizeof templates[0]; i++)
        if (!strcmp(name, templates[i])) return true;
    return false;
}

/* One template argument as text: an int, or a (qualified, possibly templated) type name.
 * Returns NULL after an error. */
static const char *parse_targ(parser *p, int depth)
{
    if (depth > 8) {
        fail(p, p->tok.offset, "template arguments nest more than 8 levels deep");
        return NULL;
    }
    if (p->tok.kind == TGF_TOK_INT) {
        const char *t = tgs_fmt(p->a, "%lld", (long long)p->tok.i);
        advance(p);
        return t;
    }
    accept(p, "::");
    if (p->tok.kind != TGF_TOK_IDENT) {
        fail(p, p->tok.offset, "expected a type or an integer as a template argument, found %s",
             tok_desc(p));
        return NULL;
    }
    const char *t = p->tok.text;
    advance(p);
    while (accept(p, "::")) {
        if (p->tok.kind != TGF_TOK_IDENT) {
            fail(p, p->tok.offset, "expected a name after '::', found %s", tok_desc(p));
            return NULL;
        }
        t = tgs_fmt(p->a, "%s::%s", t, p->tok.text);
        advance(p);
    }
    if (accept(p, "<")) {
        const char *inner = NULL;
        do {
            const char *a = parse_targ(p, depth + 1);
            if (!a) return NULL;
            inner = inner ? tgs_fmt(p->a, "%s, %s", inner, a) : a;
        } while (accept(p, ","));
        if (!expect(p, ">", "to close the template arguments")) return NULL;
        t = tgs_fmt(p->a, "%s<%s>", t, inner);
    }
    return p->failed ? NULL : t;
}

/* `<` already consumed: the template arguments of e, up to `>`. */
static bool parse_targs(parser *p, tgm_expr *e)
{
    int cap = 0;
    do {
        const char *t = parse_targ(p, 0);
        if (!t) return false;
        *TGS_PUSH(p->a, e->targs, e->ntargs, cap) = t;
    } while (accept(p, ","));
    return expect(p, ">", "to close the template arguments");
}

static tgm_expr *parse_name(parser *p)
{
    tgm_expr *e = node(p, TGM_EXPR_NAME, p->tok.offset);
    /* `::std::nullopt`: the global qualifier changes nothing here. */
    if (accept(p, "::") && p->tok.kind != TGF_TOK_IDENT) {
        fail(p, p->tok.offset, "expected a name after '::', found %s", tok_desc(p));
        return NULL;
    }
    e->name_offset = p->tok.offset;
    const char *name = p->tok.text;
    advance(p);
    while (is_punct(p, "::")) {
        advance(p);
        if (p->tok.kind != TGF_TOK_IDENT) {
            fail(p, p->tok.offset, "expected a name after '::', found %s", tok_desc(p));
            return NULL;
        }
        name = tgs_fmt(p->a, "%s::%s", name, p->tok.text);
        advance(p);
    }
    if (!strcmp(name, "true") || !strcmp(name, "True") || !strcmp(name, "false") ||
        !strcmp(name, "False")) {
        e->kind = TGM_EXPR_BOOL;
        e->b = name[0] == 't' || name[0] == 'T';
    }
    e->name = name;
    if (is_template(name) && accept(p, "<")) {
        if (!parse_targs(p, e)) return NULL;
        /* std::vector<int64_t>{a, b}: C++'s list initialization, which is the list {a, b} */
        if (!strcmp(name, "std::vector") && accept(p, "{")) {
            int cap = 0;
            e->kind = TGM_EXPR_LIST;
            if (!parse_args(p, e, &cap, "}", "a list")) return NULL;
            finish(p, e);
            return e;
        }
        if (is_punct(p, "{")) {
            fail(p, p->tok.offset,
                 "'%s<...>{...}' (C++'s list initialization) is not part of the formula "
                 "language%s",
                 name, !strcmp(name, "std::complex") ? " (nor are complex numbers)" : "");
            return NULL;
        }
        if (!is_punct(p, "(")) {
            fail(p, p->tok.offset, "expected '(' after the template '%s<...>', found %s", name,
                 tok_desc(p));
            return NULL;
        }
        e->kind = strcmp(name, "std::get") ? TGM_EXPR_CTOR : TGM_EXPR_GET;
    }
    finish(p, e);
    return e;
}

/* `[` already consumed: `](type name){ return body; }`. */
static tgm_expr *parse_lambda(parser *p, size_t start)
{
    tgm_expr *e = node(p, TGM_EXPR_LAMBDA, start);
    if (!expect(p, "]", "(lambdas capture nothing)") || !expect(p, "(", "after '[]'")) return NULL;
    const char *type = parse_targ(p, 0);
    if (!type) return NULL;
    if (p->tok.kind != TGF_TOK_IDENT) {
        fail(p, p->tok.offset, "expected the lambda's parameter name, found %s", tok_desc(p));
        return NULL;
    }
    e->str = type;
    e->name = p->tok.text;
    e->name_offset = p->tok.offset;
    advance(p);
    if (!expect(p, ")", "after the lambda's one parameter") ||
        !expect(p, "{", "to open the lambda's body"))
        return NULL;
    if (p->tok.kind != TGF_TOK_IDENT || strcmp(p->tok.text, "return")) {
        fail(p, p->tok.offset, "a lambda's body must be 'return expression;', found %s",
             tok_desc(p));
        return NULL;
    }
    advance(p);
    tgm_expr *body = parse_cond(p);
    if (!body || !expect(p, ";", "after the lambda's return value") ||
        !expect(p, "}", "to close the lambda's body"))
        return NULL;
    e->nargs = 1;
    e->args = tgm_alloc(p->a, sizeof *e->args);
    e->args[0] = body;
    finish(p, e);
    return e;
}

static tgm_expr *parse_primary(parser *p)
{
    size_t start = p->tok.offset;
    tgm_expr *e;
    switch (p->tok.kind) {
    case TGF_TOK_INT:
    case TGF_TOK_FLOAT:
        e = node(p, p->tok.kind == TGF_TOK_INT ? TGM_EXPR_INT : TGM_EXPR_FLOAT, start);
        e->i = p->tok.i;
        e->f = p->tok.f;
        advance(p);
        finish(p, e);
        return e;
    case TGF_TOK_STR:
        e = node(p, TGM_EXPR_STR, start);
        e->str = p->tok.text;
        advance(p);
        finish(p, e);
        return e;
    case TGF_TOK_IDENT: return parse_name(p);
    default: break;
    }
    if (is_punct(p, "::")) return parse_name(p);
    if (accept(p, "[")) return parse_lambda(p, start);
    if (accept(p, "(")) {
        e = parse_cond(p);
        if (!e || !expect(p, ")", "to close '('")) return NULL;
        return e; /* parentheses keep the inner node (and its span) */
    }
    if (accept(p, "{")) {
        int cap = 0;
        e = node(p, TGM_EXPR_LIST, start);
        if (!parse_args(p, e, &cap, "}", "a list")) return NULL;
        finish(p, e);
        return e;
    }
    fail(p, start, "expected an expression, found %s", tok_desc(p));
    return NULL;
}

static tgm_expr *parse_postfix(parser *p)
{
    tgm_expr *e = parse_primary(p);
    while (e && !p->failed) {
        size_t at = p->tok.offset;
        if (accept(p, "(")) {
            bool templ = (e->kind == TGM_EXPR_GET || e->kind == TGM_EXPR_CTOR) && !e->nargs;
            if (e->kind != TGM_EXPR_NAME && !templ) {
                fail(p, at, "only a name can be called");
                return NULL;
            }
            int cap = 0;
            if (!templ) e->kind = TGM_EXPR_CALL;
            if (!parse_args(p, e, &cap, ")", tgs_fmt(p->a, "the arguments of '%s'", e->name)))
                return NULL;
            finish(p, e);
        } else if (is_punct(p, ".") || is_punct(p, "->")) {
            bool arrow = is_punct(p, "->");
            advance(p);
            if (p->tok.kind != TGF_TOK_IDENT) {
                fail(p, p->tok.offset, "expected a method name after '.', found %s", tok_desc(p));
                return NULL;
            }
            tgm_expr *m = node(p, TGM_EXPR_METHOD, e->offset);
            m->arrow = arrow;
            m->name = p->tok.text;
            m->name_offset = p->tok.offset;
            advance(p);
            if (!is_punct(p, "(")) {
                fail(p, p->tok.offset,
                     "expected '(' after '.%s' (fields are not supported, only "
                     "method calls)",
                     m->name);
                return NULL;
            }
            advance(p);
            int cap = 0;
            add_arg(p, m, e, &cap);
            if (!parse_args(p, m, &cap, ")", tgs_fmt(p->a, "the arguments of '%s'", m->name)))
                return NULL;
            finish(p, m);
            e = m;
        } else if (accept(p, "[")) {
            tgm_expr *ix = node(p, TGM_EXPR_INDEX, e->offset);
            int cap = 0;
            add_arg(p, ix, e, &cap);
            tgm_expr *i = parse_cond(p);
            if (!i || !expect(p, "]", "to close '['")) return NULL;
            add_arg(p, ix, i, &cap);
            finish(p, ix);
            e = ix;
        } else {
            break;
        }
    }
    return p->failed ? NULL : e;
}

static tgm_expr *unary(parser *p, tgm_expr_op op, size_t start)
{
    tgm_expr *e = node(p, TGM_EXPR_UNARY, start);
    e->op = op;
    e->nargs = 1;
    e->args = tgm_alloc(p->a, sizeof *e->args);
    return e;
}

static tgm_expr *parse_unary(parser *p)
{
    size_t start = p->tok.offset;
    tgm_expr_op op = is_punct(p, "-")   ? TGM_EOP_NEG
                     : is_punct(p, "+") ? TGM_EOP_PLUS
                     : is_punct(p, "!") ? TGM_EOP_NOT
                     : is_punct(p, "*") ? TGM_EOP_DEREF
                                        : TGM_EOP_NONE;
    if (op == TGM_EOP_NONE) return parse_postfix(p);
    advance(p);
    if (!enter(p)) return NULL;
    tgm_expr *operand = parse_unary(p);
    p->nesting--;
    if (!operand) return NULL;
    tgm_expr *e = unary(p, op, start);
    e->args[0] = operand;
    finish(p, e);
    return e;
}

typedef struct binop {
    const char *tok;
    tgm_expr_op op;
} binop;

static tgm_expr_op match(parser *p, const binop *ops)
{
    for (; ops->tok; ops++)
        if (is_punct(p, ops->tok)) return ops->op;
    return TGM_EOP_NONE;
}

static tgm_expr *binary(parser *p, tgm_expr_op op, tgm_expr *l, tgm_expr *r)
{
    tgm_expr *e = node(p, TGM_EXPR_BINARY, l->offset);
    e->op = op;
    e->nargs = 2;
    e->args = tgm_alloc(p->a, 2 * sizeof *e->args);
    e->args[0] = l;
    e->args[1] = r;
    finish(p, e);
    return e;
}

static const binop level_or[] = { { "||", TGM_EOP_OR }, { NULL, 0 } };
static const binop level_and[] = { { "&&", TGM_EOP_AND }, { NULL, 0 } };
static const binop level_bitor[] = { { "|", TGM_EOP_BITOR }, { NULL, 0 } };
static const binop level_bitand[] = { { "&", TGM_EOP_BITAND }, { NULL, 0 } };
static const binop level_eq[] = { { "==", TGM_EOP_EQ }, { "!=", TGM_EOP_NE }, { NULL, 0 } };
static const binop level_rel[] = { { "<", TGM_EOP_LT },
                                   { "<=", TGM_EOP_LE },
                                   { ">", TGM_EOP_GT },
                                   { ">=", TGM_EOP_GE },
                                   { NULL, 0 } };
static const binop level_sum[] = { { "+", TGM_EOP_ADD }, { "-", TGM_EOP_SUB }, { NULL, 0 } };
static const binop level_prod[] = { { "*", TGM_EOP_MUL }, { "/", TGM_EOP_DIV }, { NULL, 0 } };
static const binop *const levels[] = { level_or, level_and, level_bitor, level_bitand,
                                       level_eq, level_rel, level_sum,   level_prod };
enum { NLEVELS = sizeof levels / sizeof levels[0] };

static tgm_expr *parse_level(parser *p, int level)
{
    if (level == NLEVELS) return parse_unary(p);
    tgm_expr *l = parse_level(p, level + 1);
    bool comparison = levels[level] == level_eq || levels[level] == level_rel;
    while (l) {
        tgm_expr_op op = match(p, levels[level]);
        if (op == TGM_EOP_NONE) break;
        advance(p);
        tgm_expr *r = parse_level(p, level + 1);
        if (!r) return NULL;
        l = binary(p, op, l, r);
        if (comparison && (match(p, level_eq) || match(p, level_rel))) {
            fail(p, p->tok.offset,
                 "comparisons cannot be chained; add parentheses (C++ templates "
                 "such as get<0>(t) are not part of the language)");
            return NULL;
        }
    }
    if (l && is_punct(p, "%")) {
        fail(p, p->tok.offset, "'%%' is not an operator of the formula language");
        return NULL;
    }
    return p->failed ? NULL : l;
}

static tgm_expr *parse_cond(parser *p)
{
    if (!enter(p)) return NULL;
    tgm_expr *e = parse_cond_at(p);
    p->nesting--;
    return e;
}

static tgm_expr *parse_cond_at(parser *p)
{
    tgm_expr *c = parse_level(p, 0);
    if (!c || !is_punct(p, "?")) return c;
    advance(p);
    tgm_expr *a = parse_cond(p);
    if (!a || !expect(p, ":", "between the branches of '?:'")) return NULL;
    tgm_expr *b = parse_cond(p);
    if (!b) return NULL;
    tgm_expr *e = node(p, TGM_EXPR_COND, c->offset);
    e->nargs = 3;
    e->args = tgm_alloc(p->a, 3 * sizeof *e->args);
    e->args[0] = c;
    e->args[1] = a;
    e->args[2] = b;
    finish(p, e);
    return p->failed ? NULL : e;
}

bool tgf_parse_formula(tgm_arena *a, tgm_formula *f, tgf_syntax_error *err)
{
    parser p = { .a = a, .lex = { a, f->text, 0 }, .err = err };
    memset(err, 0, sizeof *err);
    if (!tgf_lex(&p.lex, &p.tok, err)) return false;
    tgm_expr *e = parse_cond(&p);
    /* One `;` may end the formula: PyTorch's generator pasted formulas into C++ statements, so
     * `unsqueeze_to(grad, self.sizes());` compiled there (PyTorch 1.5 era files have them). */
    if (e && is_punct(&p, ";")) advance(&p);
    if (e && p.tok.kind != TGF_TOK_EOF) {
        fail(&p, p.tok.offset, "unexpected %s after the formula", tok_desc(&p));
        e = NULL;
    }
    if (!e || p.failed) return false;
    f->expr = e;
    return true;
}

tgm_loc tgf_loc(const tgm_formula *f, size_t offset)
{
    return tgm_text_loc(f->loc, f->span, f->text, offset);
}
