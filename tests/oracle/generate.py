#!/usr/bin/env python3
"""Writes tests/oracle/generated.jsonl: random expressions for differential testing against
Terraform (record.py --only generated.jsonl asks Terraform for their answers).

    python3 tests/oracle/generate.py [--seed 13] [--count 800] [--out PATH]

The expressions come from a small typed grammar: literals, tuples and objects, arithmetic,
comparison and logical operators (with short-circuit guards), conditionals with mixed result
types, `for` expressions, splats, indexing, string templates with directives and strip markers,
and calls to common functions. About three in four are built to be well-typed; the rest carry
one deliberate type mistake (a wrong-typed operand or argument), so refusals are exercised too.
Nesting stays shallow (depth <= 4) so a failing case is easy to read.

Only the standard library is used and nothing depends on hash order, so the same seed always
gives the same file (Python 3.11).
"""

import argparse
import json
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
MAX_DEPTH = 4

# Kinds of value the generator builds expressions for.
NUM, STR, BOOL = "num", "str", "bool"
LIST_NUM, LIST_STR, LIST_BOOL = "list_num", "list_str", "list_bool"
MAP_NUM, MAP_STR, OBJ = "map_num", "map_str", "obj"
SCALARS = [NUM, STR, BOOL]
LISTS = [LIST_NUM, LIST_STR, LIST_BOOL]
MAPS = [MAP_NUM, MAP_STR]
KINDS = SCALARS + LISTS + MAPS + [OBJ]
ELEM = {LIST_NUM: NUM, LIST_STR: STR, LIST_BOOL: BOOL, MAP_NUM: NUM, MAP_STR: STR}
LIST_OF = {NUM: LIST_NUM, STR: LIST_STR, BOOL: LIST_BOOL}
MAP_OF = {NUM: MAP_NUM, STR: MAP_STR}

# String literal bodies, as written in HCL source (escapes included).
STRINGS = [
    "a", "b", "abc", "hello", "Hello World", "foo-bar", "x_y", "", " ", "  pad  ",
    "a,b,c", "1,2,3", "10", "3.5", "-7", "true", "false", "null", "A1b2", "MiXeD",
    "é", "straße", "日本語", "😀", "ǅ", "İ", "ﬁ", "naïve café", "e\\u0301", "\\u00e9",
    "\\U0001F600", "tab\\there", "line\\nbreak", "quote\\\"d", "back\\\\slash", "$${x}",
    "%%{y}", "50%", "$5", "a.b.c", "/l+/", "hello world foo", "k1", "k2",
]
KEYS = ["a", "b", "c", "k1", "k2", "name", "id", "x"]
REGEXES = ["[a-z]+", "[0-9]+", "^a", "(\\\\w+)", "([a-z])([0-9])", "o", "l+", ".", "(?P<n>[0-9])"]
FORMATS = ["%s", "%d", "%s-%s", "%q", "%5s|", "%-4d|", "%.2f", "%v", "%t", "%03d", "%x", "[%s]"]
CIDRS = ["10.0.0.0/16", "192.168.0.0/24", "172.16.0.0/12", "10.1.0.0/20", "fd00::/64"]
SEPS = [",", "-", "", " ", ", ", "::"]
NUM_TEXTS = ['"12"', '"-3.5"', '"1e2"', '"0"', '"0x1F"', '" 7"', "null"]
BOOL_TEXTS = ['"true"', '"false"', "true", "null", '"yes"']
LIST_FORMATS = ['"%s!"', '"<%s>"', '"%s-%s"', '"%s=%s"']
FAILING = ["[][0]", 'tonumber("x")', "{}.nope", "null.attr", 'regex("[", "")', "[1][5] == 1"]
PATTERNS = ['"a"', '"l"', '"/[aeiou]/"', '"/(\\\\w)(\\\\w)/"', '"."', '""', '"/^/"']
REPLACEMENTS = ['"X"', '""', '"$1"', '"-"', '"$${1}"']
BAD_KEYS = ["0", '"a"', "5", "-1"]


class Gen:
    def __init__(self, rng):
        self.r = rng
        self.scope = []  # (name, kind) of the `for` variables in scope
        self.slips = 0  # type mistakes still to make in the current expression
        self.fresh = 0
        self.quoted = 0  # how many quoted templates the expression being built is inside

    # ------------------------------------------------------------ helpers
    def chance(self, p):
        return self.r.random() < p

    def pick(self, seq):
        return self.r.choice(seq)

    def var(self):
        self.fresh += 1
        return self.pick(["x", "v", "s", "item", "e"]) + str(self.fresh)

    def want(self, kind):
        """The kind to build: the requested one, or, while a slip is due, sometimes another."""
        if self.slips and self.chance(0.25):
            self.slips -= 1
            return self.pick([k for k in KINDS if k != kind] + ["null"])
        return kind

    # ------------------------------------------------------------ literals
    def num_lit(self):
        c = self.r.randrange(10)
        if c < 4:
            return str(self.r.randint(0, 20))
        if c < 6:
            return str(self.r.randint(-100, 100))
        if c == 6:
            return self.pick(["0.5", "1.5", "2.25", "-0.75", "3.14159", "0.1", "10.0", "1e3", "2.5e-3", "1E2"])
        if c == 7:
            return str(self.r.randint(-5, 5))
        if c == 8:
            return self.pick(["9007199254740993", "123456789012345678901234567890", "1e21", "-1e-7", "4294967296"])
        return str(self.r.randint(1, 1000))

    def str_lit(self):
        return '"' + self.pick(STRINGS) + '"'

    def bool_lit(self):
        return self.pick(["true", "false"])

    def literal(self, kind):
        if kind == NUM:
            return self.num_lit()
        if kind == STR:
            return self.str_lit()
        if kind == BOOL:
            return self.bool_lit()
        if kind == "null":
            return "null"
        if kind in LISTS:
            return "[" + ", ".join(self.literal(ELEM[kind]) for _ in range(self.r.randint(0, 3))) + "]"
        if kind in MAPS:
            keys = self.keys(self.r.randint(0, 3))
            return "{" + ", ".join(f"{k} = {self.literal(ELEM[kind])}" for k in keys) + "}"
        # OBJ: mixed attribute types
        keys = self.keys(self.r.randint(1, 3))
        return "{" + ", ".join(f"{k} = {self.literal(self.pick(SCALARS))}" for k in keys) + "}"

    def keys(self, n):
        pool = list(KEYS)
        self.r.shuffle(pool)
        out = []
        for k in pool[:n]:
            out.append(f'"{k}"' if self.chance(0.2) else k)
        return out

    # ------------------------------------------------------------ entry
    def expr(self, kind, depth):
        kind = self.want(kind)
        if kind == "null":
            return "null"
        vars_ = [n for n, k in self.scope if k == kind]
        if vars_ and self.chance(0.5):
            return self.pick(vars_)
        if depth <= 0 or self.chance(0.25):
            return self.literal(kind)
        return self.build(kind, depth - 1)

    def build(self, kind, d):
        """A compound expression of `kind` whose operands have depth at most `d`."""
        build = {
            NUM: self.num_expr, STR: self.str_expr, BOOL: self.bool_expr, OBJ: self.obj_expr,
        }.get(kind)
        if build:
            return build(d)
        if kind in LISTS:
            return self.list_expr(kind, d)
        return self.map_expr(kind, d)

    def cond(self, kind, depth):
        """A conditional; now and then its branches have different (unifiable or not) types."""
        c = self.expr(BOOL, depth)
        a = self.expr(kind, depth)
        if self.chance(0.3):
            b = self.expr(self.pick(KINDS + ["null"]), depth)
        else:
            b = self.expr(kind, depth)
        return f"({c} ? {a} : {b})"

    def try_(self, kind, depth):
        return f"try({self.expr(kind, depth)}, {self.literal(kind)})"

    def index(self, kind, depth):
        """An element of a tuple or object, by index, attribute or key."""
        c = self.r.randrange(4)
        if c == 0:
            items = [self.expr(kind, depth) for _ in range(self.r.randint(1, 3))]
            i = self.r.randint(0, len(items) - 1 + (1 if self.chance(0.1) else 0))
            return f"[{', '.join(items)}][{i}]"
        keys = self.keys(self.r.randint(1, 3))
        obj = "{" + ", ".join(f"{k} = {self.expr(kind, depth)}" for k in keys) + "}"
        k = self.pick(keys).strip('"')
        if c == 1:
            return f"{obj}.{k}"
        if c == 2:
            return f'{obj}["{k}"]'
        return f'lookup({obj}, "{self.pick(KEYS)}", {self.literal(kind)})'

    # ------------------------------------------------------------ numbers
    def num_expr(self, d):
        c = self.r.randrange(22)
        if c < 5:
            op = self.pick(["+", "-", "*", "/", "%", "+", "-", "*"])
            return f"({self.expr(NUM, d)} {op} {self.expr(NUM, d)})"
        if c == 5:
            return f"-{self.expr(NUM, d)}"
        if c == 6:
            return f"length({self.expr(self.pick([STR, LIST_NUM, LIST_STR, MAP_STR, OBJ]), d)})"
        if c == 7:
            f = self.pick(["min", "max"])
            return f"{f}({', '.join(self.expr(NUM, d) for _ in range(self.r.randint(1, 3)))})"
        if c == 8:
            return f"{self.pick(['abs', 'ceil', 'floor'])}({self.expr(NUM, d)})"
        if c == 9:
            return f"sum({self.expr(LIST_NUM, d)})" if self.chance(0.5) else f"sum([{self.expr(NUM, d)}, {self.num_lit()}])"
        if c == 10:
            base, digits = self.pick([(10, "42"), (16, "ff"), (2, "1011"), (8, "17"), (36, "zz"), (16, "-1A"), (10, "x1")])
            return f'parseint("{digits}", {base})'
        if c == 11:
            return f"tonumber({self.pick(NUM_TEXTS + [self.num_lit()])})"
        if c == 12:
            return f"element({self.expr(LIST_NUM, d)}, {self.expr(NUM, d)})"
        if c == 13:
            return f"one([{self.expr(NUM, d)}])"
        if c == 14:
            return self.cond(NUM, d)
        if c == 15:
            return self.try_(NUM, d)
        if c == 16:
            return self.index(NUM, d)
        if c == 17:
            return self.for_count(d)
        if c == 18:
            return f"max({self.expr(LIST_NUM, d)}...)"
        if c == 19:
            return f"length(split({self.sep()}, {self.expr(STR, d)}))"
        if c == 20:
            return f'jsondecode("{self.num_lit()}")'
        return f"{self.expr(NUM, d)}"

    def for_count(self, d):
        v = self.var()
        src = self.expr(LIST_NUM, d)
        return f"length([for {v} in {src} : {v} if {v} > {self.num_lit()}])"

    def sep(self):
        return '"' + self.pick(SEPS) + '"'

    # ------------------------------------------------------------ strings
    def str_expr(self, d):
        c = self.r.randrange(34)
        if c < 3:
            return self.template(d)
        if c == 3:
            return f"{self.pick(['upper', 'lower', 'title', 'trimspace'])}({self.expr(STR, d)})"
        if c == 4:
            fmt = self.pick(FORMATS)
            n = fmt.count("%") - fmt.count("%%")
            args = []
            for spec in fmt.split("%")[1:]:
                if spec[:1] in "d0-x" or spec[:2] == ".2" or spec[:1].isdigit() and "d" in spec:
                    args.append(self.expr(NUM, d))
                elif spec[:1] == "t":
                    args.append(self.expr(BOOL, d))
                else:
                    args.append(self.expr(self.pick([STR, STR, NUM]), d))
            return f'format("{fmt}"{"".join(", " + a for a in args[:max(n, 0)])})'
        if c == 5:
            return f"join({self.sep()}, {self.expr(LIST_STR, d)})"
        if c == 6:
            pat = self.pick(PATTERNS)
            rep = self.pick(REPLACEMENTS)
            return f"replace({self.expr(STR, d)}, {pat}, {rep})"
        if c == 7:
            return f"substr({self.expr(STR, d)}, {self.r.randint(-3, 4)}, {self.r.randint(-1, 4)})"
        if c == 8:
            return f"tostring({self.expr(self.pick([NUM, STR, BOOL]), d)})"
        if c == 9:
            return f"jsonencode({self.expr(self.pick(KINDS), d)})"
        if c == 10:
            return f"base64encode({self.expr(STR, d)})"
        if c == 11:
            return f"base64decode(base64encode({self.expr(STR, d)}))"
        if c == 12:
            return f"urlencode({self.expr(STR, d)})"
        if c == 13:
            return f"yamlencode({self.expr(self.pick(KINDS), d)})"
        if c == 14:
            return f"indent({self.r.randint(0, 4)}, {self.expr(STR, d)})"
        if c == 15:
            return f"element({self.expr(LIST_STR, d)}, {self.r.randint(-2, 4)})"
        if c == 16:
            return f'cidrhost("{self.pick(CIDRS)}", {self.r.randint(-2, 300)})'
        if c == 17:
            return f'cidrsubnet("{self.pick(CIDRS)}", {self.r.randint(0, 9)}, {self.r.randint(0, 20)})'
        if c == 18:
            return f'regex("{self.pick(REGEXES)}", {self.expr(STR, d)})' if self.chance(0.4) else \
                f'try(regex("{self.pick(REGEXES)}", {self.expr(STR, d)}), "no match")'
        if c == 19:
            return f"coalesce({self.expr(STR, d)}, {self.expr(STR, d)})"
        if c == 20:
            return f"one([{self.expr(STR, d)}])"
        if c == 21:
            return self.cond(STR, d)
        if c == 22:
            return self.try_(STR, d)
        if c == 23:
            return self.index(STR, d)
        if c == 24:
            return f"lookup({self.expr(MAP_STR, d)}, {self.str_lit()}, {self.str_lit()})"
        if c == 25:
            return f"jsondecode(jsonencode({self.expr(STR, d)}))"
        if c == 26:
            # A heredoc spans lines, which a quoted template cannot hold.
            return self.heredoc(d) if d >= 1 and not self.quoted else self.template(d)
        if c == 27:
            return f"element(formatlist({self.pick(LIST_FORMATS)}, {self.expr(LIST_STR, d)}, {self.expr(STR, d)}), 0)"
        if c == 28:
            return f"trimspace({self.expr(STR, d)})"
        if c == 29:
            return f"join({self.sep()}, sort({self.expr(LIST_STR, d)}))"
        if c == 30:
            return f"element(keys({self.expr(self.pick([MAP_NUM, MAP_STR, OBJ]), d)}), {self.r.randint(0, 2)})"
        if c == 31:
            return f"{self.expr(STR, d)}"
        if c == 32:
            return f'tostring({self.expr(NUM, d)})'
        return f"lower({self.expr(STR, d)})"

    def template(self, d):
        self.quoted += 1
        parts = []
        for _ in range(self.r.randint(1, 3)):
            c = self.r.randrange(6)
            if c < 2:
                # A space after the text keeps a trailing "%" or "$" from escaping what follows.
                parts.append(self.pick(STRINGS) + " ")
            elif c < 4:
                l = self.pick(["", "~ "])
                rr = self.pick(["", " ~"])
                parts.append("${" + l + self.expr(self.pick([STR, NUM, BOOL]), d) + rr + "}")
            elif c == 4:
                l1, r1 = self.pick(["", "~"]), self.pick(["", "~"])
                body = self.pick(STRINGS)
                other = self.pick(STRINGS)
                cond = self.expr(BOOL, d)
                if self.chance(0.5):
                    parts.append(f"%{{{l1} if {cond} {r1}}}{body}%{{ else }}{other}%{{ endif }}")
                else:
                    parts.append(f"%{{ if {cond} {r1}}} {body} %{{{l1} endif }}")
            else:
                v = self.var()
                src = self.expr(self.pick([LIST_STR, LIST_NUM]), d)
                sep = self.pick(STRINGS[:12])
                strip = self.pick(["", "~"])
                parts.append(f"%{{ for {v} in {src} {strip}}}${{{v}}}{sep}%{{{strip} endfor }}")
            if self.chance(0.3):
                parts.append(" ")
        self.quoted -= 1
        return '"' + "".join(parts) + '"'

    def heredoc(self, d):
        dash = self.pick(["", "-"])
        indent = "  " if dash else self.pick(["", "  "])
        lines = []
        for _ in range(self.r.randint(1, 3)):
            c = self.r.randrange(3)
            if c == 0:
                lines.append(indent + self.pick(["plain", "a b", "x: 1", "  nested", "\\n literal", "$${esc}"]))
            elif c == 1:
                lines.append(indent + "value ${" + self.expr(self.pick([STR, NUM]), d) + "}")
            else:
                v = self.var()
                src = self.expr(LIST_STR, d)
                lines.append(f"{indent}%{{ for {v} in {src} ~}}")
                lines.append(f"{indent}- ${{{v}}}")
                lines.append(f"{indent}%{{ endfor ~}}")
        # A heredoc must end its line, so it is wrapped in a call the closing paren of which
        # goes on the next line.
        fn = self.pick(["trimspace", "chomp", "upper", "tostring"])
        return f"{fn}(<<{dash}EOT\n" + "\n".join(lines) + f"\n{indent}EOT\n)"

    # ------------------------------------------------------------ bools
    def bool_expr(self, d):
        c = self.r.randrange(24)
        if c < 4:
            k = self.pick([NUM, NUM, STR, BOOL, LIST_NUM, OBJ])
            op = self.pick(["==", "!="] if k not in (NUM,) else ["==", "!=", "<", ">", "<=", ">="])
            return f"({self.expr(k, d)} {op} {self.expr(k, d)})"
        if c < 7:
            op = self.pick(["&&", "||"])
            return f"({self.expr(BOOL, d)} {op} {self.expr(BOOL, d)})"
        if c == 7:
            return f"!{self.expr(BOOL, d)}"
        if c == 8:
            # short-circuit: the right operand would fail if it were evaluated
            bad = self.pick(FAILING)
            return self.pick([f"(false && {bad})", f"(true || {bad})", f"({self.expr(BOOL, d)} && {bad})"])
        if c == 9:
            o = self.pick(["null", self.literal(OBJ), f"(false ? {self.literal(OBJ)} : null)", f"(true ? {{a = true}} : null)"])
            return self.pick([f"({o} != null && {o}.a == true)", f"({o} == null || {o}.a == true)"])
        if c == 10:
            return f"contains({self.expr(LIST_STR, d)}, {self.expr(STR, d)})"
        if c == 11:
            f = self.pick(["startswith", "endswith", "strcontains"])
            return f"{f}({self.expr(STR, d)}, {self.expr(STR, d)})"
        if c == 12:
            return f"can({self.expr(self.pick(KINDS), d)})"
        if c == 13:
            return f"{self.pick(['alltrue', 'anytrue'])}({self.expr(LIST_BOOL, d)})"
        if c == 14:
            return self.cond(BOOL, d)
        if c == 15:
            return self.try_(BOOL, d)
        if c == 16:
            return self.index(BOOL, d)
        if c == 17:
            return f"contains({self.expr(LIST_NUM, d)}, {self.expr(NUM, d)})"
        if c == 18:
            return f"can(regex(\"{self.pick(REGEXES)}\", {self.expr(STR, d)}))"
        if c == 19:
            return f"({self.expr(self.pick(KINDS), d)} == null)"
        if c == 20:
            return f"tobool({self.pick(BOOL_TEXTS)})"
        if c == 21:
            return f"(length({self.expr(LIST_STR, d)}) > {self.r.randint(0, 3)})"
        if c == 22:
            return f"anytrue([for {self.loop_pred(d)}])"
        return f"({self.expr(NUM, d)} {self.pick(['<', '>', '<=', '>=', '==', '!='])} {self.expr(NUM, d)})"

    def loop_pred(self, d):
        v = self.var()
        src = self.expr(LIST_NUM, d)
        return f"{v} in {src} : {v} > {self.num_lit()}"

    # ------------------------------------------------------------ lists
    def list_expr(self, kind, d):
        e = ELEM[kind]
        c = self.r.randrange(26)
        if c < 3:
            return "[" + ", ".join(self.expr(e, d) for _ in range(self.r.randint(0, 3))) + "]"
        if c < 6:
            return self.for_list(kind, d)
        if c == 6:
            return f"concat({self.expr(kind, d)}, {self.expr(kind, d)})"
        if c == 7:
            return f"{self.pick(['distinct', 'reverse'])}({self.expr(kind, d)})"
        if c == 8:
            if kind == LIST_STR:
                return f"sort({self.expr(kind, d)})"
            return f"reverse({self.expr(kind, d)})"
        if c == 9:
            a, b = self.r.randint(0, 2), self.r.randint(0, 3)
            return f"slice({self.expr(kind, d)}, {a}, {b})"
        if c == 10:
            return f"flatten([{self.expr(kind, d)}, {self.expr(kind, d)}])"
        if c == 11:
            return f"tolist({self.expr(kind, d)})"
        if c == 12:
            return f"tolist(toset({self.expr(kind, d)}))"
        if c == 13:
            if kind == LIST_STR:
                return f"split({self.sep()}, {self.expr(STR, d)})"
            if kind == LIST_NUM:
                args = self.pick([[self.r.randint(0, 6)], [self.r.randint(-3, 3), self.r.randint(0, 8)],
                                  [self.r.randint(0, 10), self.r.randint(0, 10), self.pick([1, 2, -1, -2, 3])]])
                return f"range({', '.join(map(str, args))})"
            return f"[for {self.loop_pred(d)}]"
        if c == 14:
            if kind == LIST_STR:
                return f"keys({self.expr(self.pick([MAP_NUM, MAP_STR, OBJ]), d)})"
            if kind == LIST_NUM:
                return f"values({self.expr(MAP_NUM, d)})"
            return f"[for k, v in {self.expr(OBJ, d)} : v == null]"
        if c == 15:
            return self.splat(kind, d)
        if c == 16:
            return self.cond(kind, d)
        if c == 17:
            return self.try_(kind, d)
        if c == 18:
            if kind == LIST_STR:
                return f'regexall("{self.pick(REGEXES[:3] + ["[aeiou]"])}", {self.expr(STR, d)})'
            return f"slice({self.expr(kind, d)}, 0, 1)"
        if c == 19:
            if kind == LIST_STR:
                return f"formatlist({self.pick(LIST_FORMATS)}, {self.expr(kind, d)}, {self.expr(STR, d)})"
            return f"flatten(chunklist({self.expr(kind, d)}, {self.r.randint(0, 3)}))"
        if c == 20:
            return f"element(chunklist({self.expr(kind, d)}, {self.r.randint(1, 3)}), 0)"
        if c == 21:
            return f"[for p in setproduct({self.expr(kind, d)}, {self.expr(kind, d)}) : p[0]]"
        if c == 22:
            if kind == LIST_STR:
                return f'lookup(transpose({{a = {self.expr(LIST_STR, d)}, b = ["x", "y"]}}), "x", [])'
            return f"coalescelist({self.expr(kind, d)}, {self.expr(kind, d)})"
        if c == 23:
            return f"jsondecode(jsonencode({self.expr(kind, d)}))"
        if c == 24:
            return f"one([{self.expr(kind, d)}])"
        return f"tolist({self.expr(kind, d)})"

    def for_list(self, kind, d):
        e = ELEM[kind]
        src_kind = self.pick(LISTS + MAPS + [OBJ])
        src = self.expr(src_kind, d)
        if src_kind in LISTS or self.chance(0.3):
            k, v = self.var(), self.var()
            names = [v] if self.chance(0.6) else [k, v]
            vk = ELEM.get(src_kind, STR)
            self.scope.append((v, vk))
            if len(names) == 2:
                self.scope.append((k, NUM if src_kind in LISTS else STR))
        else:
            k, v = self.var(), self.var()
            names = [k, v]
            self.scope.append((v, ELEM.get(src_kind, STR)))
            self.scope.append((k, STR))
        body = self.expr(e, d)
        cond = f" if {self.expr(BOOL, d)}" if self.chance(0.4) else ""
        for _ in names:
            self.scope.pop()
        return f"[for {', '.join(names)} in {src} : {body}{cond}]"

    def splat(self, kind, d):
        e = ELEM[kind]
        n = self.r.randint(0, 3)
        objs = ", ".join("{" + f"a = {self.expr(e, d)}, b = {self.literal(NUM)}" + "}" for _ in range(n))
        src = self.pick([f"[{objs}]", f"tolist([{objs}])" if n else "[]"])
        if self.chance(0.15):
            src = self.pick(["null", f"{{a = {self.expr(e, d)}}}", f"(false ? {{a = {self.literal(e)}}} : null)"])
        form = self.pick(["[*].a", ".*.a", "[*][\"a\"]"]) if not self.chance(0.1) else "[*]"
        if form == "[*]":
            return f"[for o in {src}[*] : o.a]"
        return f"{src}{form}"

    # ------------------------------------------------------------ maps & objects
    def map_expr(self, kind, d):
        e = ELEM[kind]
        c = self.r.randrange(14)
        if c < 3:
            keys = self.keys(self.r.randint(0, 3))
            return "{" + ", ".join(f"{k} = {self.expr(e, d)}" for k in keys) + "}"
        if c < 5:
            return self.for_map(kind, d)
        if c == 5:
            return f"merge({self.expr(kind, d)}, {self.expr(kind, d)})"
        if c == 6:
            return f"zipmap({self.expr(LIST_STR, d)}, {self.expr(LIST_OF[e], d)})"
        if c == 7:
            return f"tomap({self.expr(kind, d)})"
        if c == 8:
            return self.cond(kind, d)
        if c == 9:
            return self.try_(kind, d)
        if c == 10:
            return f"jsondecode(jsonencode({self.expr(kind, d)}))"
        if c == 11:
            return f"{{for k, v in {self.expr(kind, d)} : upper(k) => v}}"
        if c == 12:
            return f"merge({self.expr(kind, d)}, {{{self.pick(KEYS)} = {self.expr(e, d)}}})"
        return self.index(kind, d)

    def for_map(self, kind, d):
        e = ELEM[kind]
        src_kind = self.pick([LIST_STR, LIST_NUM, MAP_STR, MAP_NUM, OBJ])
        src = self.expr(src_kind, d)
        k, v = self.var(), self.var()
        kk = NUM if src_kind in LISTS else STR
        vk = ELEM.get(src_kind, STR)
        self.scope += [(k, kk), (v, vk)]
        key = self.pick([k, f"\"${{{v}}}\"", f"tostring({v})", f"\"k${{{k}}}\""])
        group = self.chance(0.15)
        body = self.expr(e, d)
        cond = f" if {self.expr(BOOL, d)}" if self.chance(0.3) else ""
        self.scope = self.scope[:-2]
        if group:
            return f"{{for {k}, {v} in {src} : {key} => {body}...{cond}}}"
        return f"{{for {k}, {v} in {src} : {key} => {body}{cond}}}"

    def obj_expr(self, d):
        c = self.r.randrange(8)
        if c < 3:
            keys = self.keys(self.r.randint(1, 3))
            return "{" + ", ".join(f"{k} = {self.expr(self.pick(KINDS), d)}" for k in keys) + "}"
        if c == 3:
            return f"merge({self.expr(OBJ, d)}, {self.expr(self.pick([OBJ, MAP_STR]), d)})"
        if c == 4:
            return self.cond(OBJ, d)
        if c == 5:
            return f"jsondecode({json.dumps(json.dumps({'a': 1, 'b': [True, None], 'c': 'x'}))})"
        if c == 6:
            return f'(yamlencode({self.expr(OBJ, d)}) == "" ? {{}} : {self.expr(OBJ, d)})'
        return self.index(OBJ, d)

    # ------------------------------------------------------------ top level
    def top(self):
        self.scope = []
        self.fresh = 0
        well_typed = self.chance(0.75)
        self.slips = 0 if well_typed else 1
        kind = self.pick(KINDS + [STR, NUM, BOOL, LIST_STR])
        depth = self.r.randint(1, MAX_DEPTH)
        e = self.build(kind, depth - 1)  # never a bare literal at the top
        if self.slips:
            # The mistake did not happen on the way down: make it at the top.
            self.slips = 0
            e = self.mistake(e, kind)
        return e

    def mistake(self, e, kind):
        other = self.literal(self.pick([k for k in KINDS if k != kind] + ["null"]))
        return self.pick([
            f"({e} + {other})",
            f"({e} && {other})",
            f"{e}[{self.pick(BAD_KEYS)}]",
            f"{e}.{self.pick(KEYS)}",
            f"upper({e})",
            f"length({e}) + {other}",
            f"concat({e}, {other})",
            f"merge({e}, {other})",
            f"tonumber({e})",
            f"({other} ? {e} : {other})",
            f"[for x in {e} : x]",
            f"keys({e})",
            f"{self.pick(['true', 'false'])} ? {e} : {other}",
            f"\"${{{e}}}\"",
            f"join(\",\", {e})",
        ])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--count", type=int, default=800)
    parser.add_argument("--out", default=str(HERE / "generated.jsonl"))
    args = parser.parse_args()

    gen = Gen(random.Random(args.seed))
    seen, exprs = set(), []
    attempts = 0
    while len(exprs) < args.count:
        attempts += 1
        if attempts > args.count * 50:
            sys.exit("generate.py: could not make enough distinct expressions")
        e = gen.top()
        if e in seen or len(e) > 400:
            continue
        seen.add(e)
        exprs.append(e)

    command = f"python3 tests/oracle/generate.py --seed {args.seed} --count {args.count}"
    lines = [f"// Made by `{command}` (seed {args.seed}, {args.count} cases); do not edit, regenerate."]
    for n, e in enumerate(exprs, 1):
        lines.append(json.dumps({"name": f"gen_{n}", "expr": e}, ensure_ascii=False))
    Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"generate.py: wrote {len(exprs)} cases to {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
