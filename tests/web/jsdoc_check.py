"""A static check of the page's modules against the API's JSDoc typedefs.

Types come from every `@typedef` in the modules (`static/types/*.js`, generated from the OpenAPI
schema, and a module's own). A value has a type when it is annotated (`/** @type {RunView} */
const run = ...`, `/** @param {RunRow} r */` before a function, `(/** @type {RunRow} */ r) =>`)
or when it follows from a typed one: `const x = run.header;`, `for (const c of run.cases)`, the
callback of `.map` / `.filter` / `.find` / ... on a typed array, and a module's exported typed
constant in the modules that import it. Every name declared without a type (a parameter, a
`const`) shadows outer ones as untyped, so a type never leaks into a scope it does not reach.

On a typed value, every property read or written along a chain (`run.counts.passed`,
`c?.metrics[0].score`) must be a field of its type: a field no member of a union has is an error,
as is any property of an array but its own (`length`, `map`, ...). A value the API returns
(`const x = await api(...)`, `api(...).then((x) => ...)`) must carry a type.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

# --- tokens ------------------------------------------------------------------------------------

PUNCT = sorted(["?.", "...", "=>", "===", "!==", "==", "!=", "&&", "||", "??", "<=", ">=", "++", "--", "+=",
                "-=", "*=", "/=", "**", "??=", "||=", "&&=", ">>>", ">>", "<<"], key=len, reverse=True)
IDENT = re.compile(r"[A-Za-z_$][\w$]*")
NUMBER = re.compile(r"\d[\w.]*")
REGEX_AFTER = {"(", ",", "=", ":", "[", "!", "&", "|", "?", "{", "}", ";", "&&", "||", "??", "=>", "return",
               "typeof", "case", "===", "!==", "==", "!=", "+", "-", "*", "%", "<", ">", "<=", ">="}


@dataclass
class Tok:
    kind: str  # ident, punct, str, num, doc, regex
    text: str
    line: int


def tokenize(src: str) -> list[Tok]:
    toks: list[Tok] = []
    i, n, line = 0, len(src), 1
    braces: list[str] = []  # "{" or "${" (a template literal's expression)

    def template(i: int) -> int:
        """Scans template text from i to its end or to `${`; returns the index after."""
        nonlocal line
        while i < n:
            c = src[i]
            if c == "\\":
                i += 2
                continue
            if c == "`":
                return i + 1
            if c == "$" and src.startswith("${", i):
                braces.append("${")
                toks.append(Tok("punct", "(", line))  # the expression reads as a parenthesis
                return i + 2
            line += c == "\n"
            i += 1
        return i

    while i < n:
        c = src[i]
        if c == "\n":
            line += 1
            i += 1
        elif c.isspace():
            i += 1
        elif src.startswith("/*", i):
            j = src.index("*/", i + 2) + 2
            if src.startswith("/**", i):
                toks.append(Tok("doc", src[i:j], line))
            line += src.count("\n", i, j)
            i = j
        elif src.startswith("//", i):
            i = src.find("\n", i) if "\n" in src[i:] else n
        elif c in "'\"":
            j = i + 1
            while src[j] != c:
                j += 2 if src[j] == "\\" else 1
            toks.append(Tok("str", src[i:j + 1], line))
            i = j + 1
        elif c == "`":
            toks.append(Tok("str", "`", line))
            i = template(i + 1)
        elif c == "/" and (not toks or toks[-1].text in REGEX_AFTER):
            j, in_class = i + 1, False
            while src[j] != "/" or in_class:
                in_class = (in_class and src[j] != "]") or (not in_class and src[j] == "[")
                j += 2 if src[j] == "\\" else 1
            j += 1
            while j < n and src[j].isalpha():
                j += 1
            toks.append(Tok("regex", src[i:j], line))
            i = j
        elif m := IDENT.match(src, i):
            toks.append(Tok("ident", m.group(), line))
            i = m.end()
        elif m := NUMBER.match(src, i):
            toks.append(Tok("num", m.group(), line))
            i = m.end()
        elif c == "}" and braces and braces[-1] == "${":
            braces.pop()
            toks.append(Tok("punct", ")", line))
            i = template(i + 1)
        else:
            p = next((p for p in PUNCT if src.startswith(p, i)), c)
            if p == "?." and i + 2 < n and src[i + 2].isdigit():
                p = "?"
            if p == "{":
                braces.append("{")
            elif p == "}" and braces:
                braces.pop()
            toks.append(Tok("punct", p, line))
            i += len(p)
    return toks


def matching(toks: list[Tok]) -> dict[int, int]:
    pairs = {"(": ")", "[": "]", "{": "}"}
    out: dict[int, int] = {}
    stack: list[int] = []
    for k, t in enumerate(toks):
        if t.kind == "punct" and t.text in pairs:
            stack.append(k)
        elif t.kind == "punct" and t.text in pairs.values() and stack:
            o = stack.pop()
            out[o], out[k] = k, o
    return out


# --- types -------------------------------------------------------------------------------------

ANY = ("any",)
ARRAY_MEMBERS = {"length", "map", "filter", "find", "findIndex", "some", "every", "forEach", "flatMap",
                 "slice", "sort", "includes", "indexOf", "join", "concat", "reduce", "entries", "keys",
                 "values", "push", "splice", "at", "flat", "reverse", "fill"}
CALLBACKS = {"map", "filter", "find", "findIndex", "some", "every", "forEach", "flatMap", "sort"}
KEEPS_ARRAY = {"filter", "slice", "sort", "concat", "reverse"}
Type = tuple[tuple[str, ...], ...]  # a union of atoms: ("name", N), ("array", T), ("map", T), ("prim",), ANY


def parse_type(text: str) -> Type:
    text = text.strip()
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += (ch in "<({[" and 1) or 0
        depth -= (ch in ">)}]" and 1) or 0
        if ch == "|" and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return tuple(a for p in parts for a in _atom(p.strip()))


def _atom(p: str) -> Type:
    if p.startswith("(") and p.endswith(")"):
        return parse_type(p[1:-1])
    if p.endswith("[]"):
        return (("array", parse_type(p[:-2])),)  # type: ignore[arg-type]
    if m := re.fullmatch(r"Array<(.*)>", p):
        return (("array", parse_type(m.group(1))),)  # type: ignore[arg-type]
    if m := re.fullmatch(r"Object<\s*string\s*,(.*)>", p):
        return (("map", parse_type(m.group(1))),)  # type: ignore[arg-type]
    if p in ("null", "undefined"):
        return (("null",),)
    if p in ("string", "number", "boolean") or re.fullmatch(r'-?[\d.]+|".*"|true|false', p):
        return (("prim",),)
    if IDENT.fullmatch(p) and p not in ("Object", "any"):
        return (("name", p),)
    return (ANY,)


@dataclass
class Types:
    defs: dict[str, dict[str, Type] | Type] = field(default_factory=dict)

    def add_file(self, src: str) -> None:
        for doc in re.findall(r"/\*\*.*?\*/", src, re.S):
            m = re.search(r"@typedef\s+\{(.*?)\}\s+(\w+)", doc)
            if not m:
                continue
            props = {p: parse_type(t) for t, p in re.findall(r"@property\s+\{(.*?)\}\s+\[?(\w+)", doc)}
            self.defs[m.group(2)] = props if m.group(1) in ("Object", "object") else parse_type(m.group(1))

    def expand(self, t: Type, seen: frozenset[str] = frozenset()) -> Type:
        out: list[tuple[str, ...]] = []
        for a in t:
            d = self.defs.get(a[1]) if a[0] == "name" else None
            if isinstance(d, tuple) and a[1] not in seen:
                out += self.expand(d, seen | {a[1]})
            else:
                out.append(a)
        return tuple(out)

    def prop(self, t: Type, name: str) -> Type | str:
        """The type of `.name` on `t`, or the error."""
        out: list[tuple[str, ...]] = []
        found = False
        for a in self.expand(t):
            if a == ANY:
                return (ANY,)
            if a[0] == "name":
                props = self.defs.get(a[1])
                if props is None:
                    return f"unknown type {a[1]}"
                if isinstance(props, dict) and name in props:
                    found = True
                    out += props[name]
            elif a[0] == "array" and name in ARRAY_MEMBERS:
                found = True
                out.append(("prim",) if name == "length" else ANY)
            elif a[0] == "map":
                found = True
                out += a[1]  # type: ignore[arg-type]
            elif a[0] == "prim":
                found = True
                out.append(ANY)
        if not found:
            names = [a[1] if a[0] == "name" else "Array" if a[0] == "array" else a[0]
                     for a in self.expand(t) if a[0] != "null"]
            return f"{' | '.join(names)} has no field {name!r}"
        return tuple(out)

    def element(self, t: Type) -> Type:
        out: list[tuple[str, ...]] = []
        for a in self.expand(t):
            if a[0] in ("array", "map"):
                out += a[1]  # type: ignore[arg-type]
            elif a[0] != "null":
                return (ANY,)
        return tuple(out) or (ANY,)


# --- bindings and checking -----------------------------------------------------------------------

@dataclass
class Binding:
    name: str
    start: int
    end: int
    type: Type


def _doc_types(doc: str) -> tuple[str | None, dict[str, str]]:
    t = re.search(r"@type\s+\{(.*?)\}", doc)
    params = {p: ty for ty, p in re.findall(r"@param\s+\{(.*?)\}\s+\[?(\w+)", doc)}
    return (t.group(1) if t else None), params


class Module:
    """One module's tokens, its bindings, and the errors found walking it."""

    def __init__(self, name: str, src: str, types: Types, exported: dict[str, Type]) -> None:
        self.name, self.types = name, types
        self.toks = tokenize(src)
        self.match = matching(self.toks)
        self.bindings: list[Binding] = []
        self.errors: list[str] = []
        self._declare(exported)

    # scopes
    def _block_end(self, k: int) -> int:
        """The end of the innermost `{...}` around token k (or of the module)."""
        depth = 0
        for j in range(k, len(self.toks)):
            t = self.toks[j].text
            if self.toks[j].kind == "punct" and t in "({[":
                depth += 1
            elif self.toks[j].kind == "punct" and t in ")}]":
                if depth == 0:
                    return j
                depth -= 1
        return len(self.toks)

    def _body_end(self, k: int) -> int:
        """The end of a function body starting at token k: a block, or an expression."""
        if self.toks[k].text == "{":
            return self.match[k]
        depth = 0
        for j in range(k, len(self.toks)):
            t = self.toks[j]
            if t.kind == "punct" and t.text in "([{":
                depth += 1
            elif t.kind == "punct" and t.text in ")]}":
                if depth == 0:
                    return j
                depth -= 1
            elif depth == 0 and t.kind == "punct" and t.text in (",", ";"):
                return j
        return len(self.toks)

    def _params(self, lo: int, hi: int) -> list[tuple[str, str | None, list[str]]]:
        """(name, annotated type, destructured names) of each parameter in tokens lo..hi."""
        out = []
        k = lo
        while k < hi:
            doc = None
            while k < hi and self.toks[k].kind == "doc":
                doc = _doc_types(self.toks[k].text)[0]
                k += 1
            if k < hi and self.toks[k].text == "...":
                k += 1
            if k >= hi:
                break
            t = self.toks[k]
            if t.kind == "ident":
                out.append((t.text, doc, []))
            elif t.text in "{[" and k in self.match:
                inner = [self.toks[j].text for j in range(k + 1, self.match[k])
                         if self.toks[j].kind == "ident" and self.toks[j - 1].text in "{,["
                         and self.toks[j + 1].text in ",}]="]
                out.append(("", doc, inner))
                k = self.match[k]
            depth = 0  # skip to the next top-level comma (past default values)
            while k < hi and not (depth == 0 and self.toks[k].text == ","):
                if self.toks[k].kind == "punct" and self.toks[k].text in "([{":
                    depth += 1
                elif self.toks[k].kind == "punct" and self.toks[k].text in ")]}":
                    depth -= 1
                k += 1
            k += 1
        return out

    def _bind_params(self, lo: int, hi: int, body: int, docs: dict[str, str]) -> None:
        end = self._body_end(body)
        for name, doc, inner in self._params(lo, hi):
            ty = doc or docs.get(name)
            if name:
                self.bindings.append(Binding(name, lo, end, parse_type(ty) if ty else (ANY,)))
            self.bindings += [Binding(n, lo, end, (ANY,)) for n in inner]

    def _declare(self, exported: dict[str, Type]) -> None:
        toks, last_doc = self.toks, None
        for k, t in enumerate(toks):
            if t.kind == "doc":
                last_doc = (k, t.text)
                continue
            doc = last_doc[1] if last_doc and last_doc[0] == k - 1 else None
            doc2 = last_doc[1] if last_doc and last_doc[0] in (k - 1, k - 2, k - 3) else None
            if t.text == "import" and k + 1 < len(toks) and toks[k + 1].text == "{":
                for j in range(k + 2, self.match[k + 1]):
                    if toks[j].kind == "ident" and toks[j].text in exported:
                        self.bindings.append(Binding(toks[j].text, 0, len(toks), exported[toks[j].text]))
            if t.text in ("const", "let", "var") and k + 1 < len(toks):
                typed, _ = _doc_types(doc) if doc else (None, {})
                nxt = toks[k + 1]
                end = self._block_end(k)
                if k >= 2 and toks[k - 1].text == "(" and toks[k - 2].text == "for":  # the loop's body
                    end = self._body_end(self.match[k - 1] + 1)
                if nxt.kind == "ident":
                    ty = parse_type(typed) if typed else (ANY,)
                    self.bindings.append(Binding(nxt.text, k + 1, end, ty))
                    # more declarators of the same statement: `const a = x, b = y;`
                    j = k + 2
                    while j < end and toks[j].text != ";":
                        if toks[j].kind == "punct" and toks[j].text in "([{" and j in self.match:
                            j = self.match[j]
                        elif toks[j].text == "," and j + 2 < end and toks[j + 1].kind == "ident" \
                                and toks[j + 2].text == "=":
                            self.bindings.append(Binding(toks[j + 1].text, j + 1, end, (ANY,)))
                        j += 1
                elif nxt.text in "{[":
                    for name, _, inner in self._params(k + 1, self.match[k + 1] + 1):
                        self.bindings += [Binding(n, k + 1, end, (ANY,)) for n in inner or [name]]
            if t.text == "function":
                j = k + 1 + (toks[k + 1].kind == "ident")
                _, params = _doc_types(doc2) if doc2 else (None, {})
                self._bind_params(j + 1, self.match[j], self.match[j] + 1, params)
            if t.text == "=>":
                _, params = (None, {})
                if toks[k - 1].text == ")":
                    lo = self.match[k - 1]
                    before = toks[lo - 1 - (toks[lo - 1].text == "async")]
                    if lo >= 2 and before.text == "=":
                        d = next((x for x in reversed(toks[max(0, lo - 6):lo]) if x.kind == "doc"), None)
                        _, params = _doc_types(d.text) if d else (None, {})
                    self._bind_params(lo + 1, k - 1, k + 1, params)
                elif toks[k - 1].kind == "ident":
                    self.bindings.append(Binding(toks[k - 1].text, k - 1, self._body_end(k + 1), (ANY,)))

    def binding(self, name: str, k: int) -> Binding | None:
        best = None
        for b in self.bindings:
            if b.name == name and b.start <= k < b.end and (best is None or b.start >= best.start):
                best = b
        return best

    def _upgrade(self, name: str, start: int, ty: Type) -> None:
        for b in self.bindings:
            if b.name == name and b.start == start and b.type == (ANY,):
                b.type = ty

    def _callback(self, open_paren: int, element: Type, count: int) -> None:
        """Types the first `count` parameters of an arrow function passed at `open_paren`."""
        toks, k = self.toks, open_paren + 1
        if toks[k].text == "async":
            k += 1
        if toks[k].kind == "ident" and toks[k + 1].text == "=>":
            self._upgrade(toks[k].text, k, element)
        elif toks[k].text == "(" and toks[self.match[k] + 1].text == "=>":
            for name, _, _ in self._params(k + 1, self.match[k])[:count]:
                if name:
                    self._upgrade(name, k + 1, element)

    def _walk(self, k: int, ty: Type) -> tuple[int, Type]:
        """Follows the chain of property reads from the value at token k; returns where it ends
        and the type there."""
        toks, j = self.toks, k + 1
        while j + 1 < len(toks):
            t = toks[j]
            if t.text in (".", "?.") and toks[j + 1].kind == "ident":
                name = toks[j + 1].text
                found = self.types.prop(ty, name)
                if isinstance(found, str):
                    self.errors.append(f"{self.name}:{toks[j + 1].line}: {found}")
                    return j + 2, (ANY,)
                j += 2
                if toks[j].text == "(":
                    is_array = any(a[0] == "array" for a in self.types.expand(ty))
                    if not is_array:
                        return j, (ANY,)
                    element = self.types.element(ty)
                    if name in CALLBACKS:
                        self._callback(j, element, 2 if name == "sort" else 1)
                    if name in KEEPS_ARRAY:
                        ty, j = ty, self.match[j] + 1
                        continue
                    if name == "find":
                        ty, j = element, self.match[j] + 1
                        continue
                    return j, (ANY,)
                ty = found
            elif t.text == "[" or (t.text == "?." and toks[j + 1].text == "["):
                j += t.text == "?."
                ty, j = self.types.element(ty), self.match[j] + 1
            else:
                break
        return j, ty

    def check(self) -> list[str]:
        toks = self.toks
        for k, t in enumerate(toks):
            if t.kind != "ident" or (k and toks[k - 1].text in (".", "?.")):
                continue
            if k + 1 < len(toks) and toks[k + 1].text == ":" and toks[k - 1].text in ("{", ","):
                continue  # an object literal's key
            if t.text in ("api", "apiPage") and toks[k + 1].text == "(" and toks[k - 1].text != "function":
                self._api_result(k)
            b = self.binding(t.text, k)
            if b is None or b.type == (ANY,) or b.start == k:
                continue
            end, ty = self._walk(k, b.type)
            if k >= 3 and toks[k - 1].text == "=" and toks[k - 2].kind == "ident" \
                    and toks[end].text in (";", ",", ")", "}"):
                self._upgrade(toks[k - 2].text, k - 2, ty)
            if k >= 4 and toks[k - 1].text == "of" and toks[k - 3].text in ("const", "let"):
                self._upgrade(toks[k - 2].text, k - 2, self.types.element(ty))
        return self.errors

    def _api_result(self, k: int) -> None:
        """A value the API returns must be typed where it is kept."""
        toks = self.toks
        at = k - 1  # `const x = await api(...)`
        if toks[at].text == "await" and toks[at - 1].text == "=" and toks[at - 2].kind == "ident" \
                and toks[at - 3].text in ("const", "let"):
            b = self.binding(toks[at - 2].text, at - 1)
            if b is None or b.type == (ANY,):
                self.errors.append(f"{self.name}:{toks[k].line}: {toks[at - 2].text} keeps an API result "
                                   "without a @type")
        end = self.match[k + 1] + 1
        if toks[end].text == "." and toks[end + 1].text == "then":
            p = end + 2
            q = p + 1 + (toks[p + 1].text == "async")
            j = next(j for j in range(q, len(toks)) if toks[j].kind == "ident")
            b = self.binding(toks[j].text, j)
            if b is None or b.type == (ANY,):
                self.errors.append(f"{self.name}:{toks[k].line}: the API result passed to then() "
                                   "is not typed")


def check_modules(sources: dict[str, str]) -> list[str]:
    """Errors of every module in `sources` (name → text), against every typedef among them."""
    types = Types()
    for src in sources.values():
        types.add_file(src)
    exported: dict[str, Type] = {}
    for src in sources.values():
        for ty, name in re.findall(r"/\*\*\s*@type\s+\{(.*?)\}\s*\*/\s*export\s+const\s+(\w+)", src):
            exported[name] = parse_type(ty)
    errors: list[str] = []
    for name, src in sources.items():
        errors += Module(name, src, types, exported).check()
    for name, d in types.defs.items():  # a type named in a typedef exists
        for ty in d.values() if isinstance(d, dict) else [d]:
            errors += [f"typedef {name} names unknown type {a[1]}" for a in _names(ty)
                       if a[1] not in types.defs]
    return errors


def _names(ty: Type) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for a in ty:
        if a[0] == "name":
            out.append(a)
        elif a[0] in ("array", "map"):
            out += _names(a[1])  # type: ignore[arg-type]
    return out


def read_modules(static: Path) -> dict[str, str]:
    return {p.relative_to(static).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted(static.rglob("*.js"))}
