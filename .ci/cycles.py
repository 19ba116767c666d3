#!/usr/bin/env python3
"""No import cycle between the modules of any crate of the workspace.

For each crate root of each package (`src/lib.rs`, `src/main.rs`,
`src/bin/*.rs`, `src/bin/*/main.rs`), this follows the `mod` declarations
(`#[path]` included) to the crate's module files, where a module is a file
(`foo.rs` or `foo/mod.rs`; an inline `mod x { ... }` counts as part of its
file), and draws an edge from file A to file B when code in A names an item
of B through a path: `use crate::...`, `use super::...`, `use self::...`,
use trees (`use crate::a::{b, c::D}`), and paths in code such as
`crate::a::f()`, `super::x::Y` or `child::Z` (a module declared in A).

A path is resolved by walking its leading segments down the module tree for
as long as they name modules; the file of the last module reached is the
target. So an item that a `mod.rs` re-exports from a child (`use
super::Foo`, where `foo.rs` defines `Foo` and `mod.rs` has `pub use
foo::Foo`) resolves to that `mod.rs`, not to `foo.rs`: simple, since it
needs no name resolution, and conservative about what a re-export hides.
A module's paths to its own ancestors (`super::X`, `crate::X` from below)
or descendants (`mod x;`, `x::Y`, `pub use x::Y`) are no edges: a parent
and the children it is made of are one unit. So the cycles found are
between siblings and cousins: files that name each other's items, directly
or through others.

Ignored: comments (doc comments included), string and char literals,
`#[cfg(test)]` modules (inline `mod tests { ... }` blocks and the files of
`#[cfg(test)] mod tests;`), `pub(in path)` visibilities, paths with a
leading `::` and paths through external crates. Integration tests,
examples and build scripts are not in any `src/` tree and not read.

Every strongly connected component of more than one file is printed, with
the edges inside it and where each is first named.

Usage: .ci/cycles.py   exits 1 when any crate has an import cycle.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def tokenize(text):
    """Tokens of Rust source as (kind, value, line): kind is 'id' (an
    identifier or keyword), 'str' (a string literal's contents), or 'p'
    (punctuation; `::` is one token). Comments, numbers, chars and lifetimes
    are dropped."""
    toks = []
    i, n, line = 0, len(text), 1
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif c.isspace():
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    line += text[i] == "\n"
                    i += 1
        elif (m := re.compile(r'(?:b|c)?r(#*)"').match(text, i)) and (
            i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")
        ):
            end = '"' + m.group(1)
            j = text.find(end, m.end())
            j = n if j < 0 else j
            toks.append(("str", text[m.end() : j], line))
            line += text.count("\n", i, j)
            i = j + len(end)
        elif c == '"' or (c in "bc" and text.startswith('"', i + 1)):
            j = i + (1 if c == '"' else 2)
            start = j
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            toks.append(("str", text[start:j], line))
            line += text.count("\n", i, j)
            i = j + 1
        elif c == "'" or (c == "b" and text.startswith("'", i + 1)):
            j = i + (1 if c == "'" else 2)
            if text.startswith("\\", j):
                k = text.find("'", j + 2)
                i = n if k < 0 else k + 1
            elif j + 1 < n and text[j + 1] == "'":
                i = j + 2
            else:  # a lifetime or label
                m = re.compile(r"[A-Za-z0-9_]*").match(text, j)
                i = m.end()
        elif c.isalpha() or c == "_":
            m = re.compile(r"(?:r#)?[A-Za-z0-9_]+").match(text, i)
            word = m.group(0)
            toks.append(("id", word[2:] if word.startswith("r#") else word, line))
            i = m.end()
        elif c.isdigit():
            m = re.compile(r"[0-9][A-Za-z0-9_]*(?:\.[0-9][A-Za-z0-9_]*)?").match(text, i)
            i = m.end()
        elif text.startswith("::", i):
            toks.append(("p", "::", line))
            i += 2
        else:
            toks.append(("p", c, line))
            i += 1
    return toks


class Module:
    def __init__(self, name, file, parent, inline):
        self.name, self.file, self.parent, self.inline = name, file, parent, inline
        self.children = {}


def attribute(toks, i):
    """The attribute starting at toks[i] (`#` or `#!`): (index after its `]`,
    whether it is a cfg that needs `test`, its `path = "..."` if any)."""
    j = i + 1
    if toks[j][1] == "!":
        j += 1
    start, depth = j, 0
    while j < len(toks):
        v = toks[j][1]
        if toks[j][0] == "p" and v in "[(":
            depth += 1
        elif toks[j][0] == "p" and v in "])":
            depth -= 1
            if depth == 0:
                break
        j += 1
    body = toks[start + 1 : j]
    ids = [t[1] for t in body if t[0] == "id"]
    is_test = bool(ids) and ids[0] == "cfg" and "test" in ids and "not" not in ids
    path = None
    if len(body) == 3 and body[0][1] == "path" and body[1][1] == "=" and body[2][0] == "str":
        path = body[2][1]
    return j + 1, is_test, path


def skip_block(toks, i):
    """Index after the `}` closing the `{` at toks[i]."""
    depth = 0
    while i < len(toks):
        if toks[i][0] == "p":
            if toks[i][1] == "{":
                depth += 1
            elif toks[i][1] == "}":
                depth -= 1
                if depth == 0:
                    return i + 1
        i += 1
    return i


def walk(toks, top, on_mod_file=None, on_token=None):
    """Walk a file's tokens with the module each token is in (the file's
    module, or an inline module inside it), skipping `#[cfg(test)]` modules.
    `on_mod_file(module, name, path_attr)` is called for each `mod x;` and
    `on_token(i, module)` for every other token, which returns the index to
    continue from."""
    stack = []  # per open brace: the inline module it opens, or None
    current = top
    is_test, path = False, None
    i = 0
    while i < len(toks):
        kind, v, _ = toks[i]
        if kind == "p" and v == "#" and i + 1 < len(toks) and toks[i + 1][1] in "[!":
            i, t, p = attribute(toks, i)
            is_test, path = is_test or t, p or path
            continue
        if kind == "id" and v == "mod" and i + 2 < len(toks) and toks[i + 1][0] == "id":
            name, nxt = toks[i + 1][1], toks[i + 2][1]
            if nxt == ";":
                if not is_test and on_mod_file:
                    on_mod_file(current, name, path)
                i += 3
                is_test, path = False, None
                continue
            if nxt == "{":
                if is_test:
                    i = skip_block(toks, i + 2)
                else:
                    child = current.children.get(name)
                    if child is None:
                        child = Module(name, current.file, current, True)
                        current.children[name] = child
                    current = child
                    stack.append(child)
                    i += 3
                is_test, path = False, None
                continue
        if kind == "p" and v in "{;}":
            is_test, path = False, None
            if v == "{":
                stack.append(None)
            elif v == "}" and stack:
                if stack.pop() is not None:
                    current = current.parent
        if on_token:
            i = on_token(i, current)
        else:
            i += 1


def load_tree(root_file):
    """The module tree of the crate whose root is `root_file`, and each
    file's tokens."""
    files = {}
    top = Module("crate", root_file, None, False)

    def load(module, mod_rs):
        with open(module.file, encoding="utf-8") as f:
            toks = tokenize(f.read())
        files[module.file] = (module, toks)

        def on_mod_file(parent, name, path_attr):
            # The directory a file module's children live in: inline modules
            # nest inside it.
            inline = []
            m = parent
            while m.inline:
                inline.append(m.name)
                m = m.parent
            here = os.path.dirname(module.file)
            if not mod_rs:
                here = os.path.join(here, os.path.splitext(os.path.basename(module.file))[0])
            base = os.path.join(here, *reversed(inline))
            if path_attr:
                if inline:
                    cand = [os.path.join(base, path_attr)]
                else:
                    cand = [os.path.join(os.path.dirname(module.file), path_attr)]
            else:
                cand = [os.path.join(base, name + ".rs"), os.path.join(base, name, "mod.rs")]
            found = next((c for c in cand if os.path.isfile(c)), None)
            if found is None:
                print(f"cycles.py: {rel(module.file)}: no file for `mod {name};`", file=sys.stderr)
                return
            child = Module(name, os.path.normpath(found), parent, False)
            parent.children[name] = child
            is_mod_rs = bool(path_attr) or os.path.basename(found) == "mod.rs"
            load(child, is_mod_rs)

        walk(toks, module, on_mod_file=on_mod_file)

    load(top, True)
    return top, files


def use_paths(toks, i):
    """The full paths of the use tree starting at toks[i] (after `use`), each
    with the name it brings into scope (None for a glob), and the index after
    its `;`. A `self` in braces names the prefix itself."""
    out = []

    def tree(i, prefix):
        segs = []
        while True:
            kind, v, _ = toks[i]
            if kind == "id" and v != "as":
                segs.append(v)
                i += 1
            elif kind == "p" and v == "::":
                i += 1
            elif kind == "p" and v == "*":
                out.append((prefix + segs, None))
                return i + 1
            elif kind == "p" and v == "{":
                i += 1
                while toks[i][1] != "}":
                    if toks[i][1] == ",":
                        i += 1
                        continue
                    i = tree(i, prefix + segs)
                return i + 1
            else:
                break
        if segs and segs[-1] == "self":
            segs = segs[:-1]
        full = prefix + segs
        name = full[-1] if full else None
        if toks[i][1] == "as":
            name = toks[i + 1][1]
            i += 2
        out.append((full, name))
        return i

    if toks[i][1] == "::":  # `use ::extern_crate`
        while toks[i][1] != ";":
            i += 1
        return [], i + 1
    i = tree(i, [])
    while i < len(toks) and toks[i][1] != ";":
        i += 1
    return out, i + 1


def resolve(segs, module):
    """The module file a path from `module` names an item of, or None when it
    does not start at this crate (`crate`, `super`, `self` or a child): the
    leading segments are walked down the module tree while they name
    modules, and the file of the last module reached is the target."""
    if not segs:
        return None
    head = segs[0]
    if head == "crate":
        m = module
        while m.parent:
            m = m.parent
    elif head in ("super", "self"):
        m = module
    elif head in module.children:
        m = module
    else:
        return None
    for k, s in enumerate(segs):
        if s == "crate" and k == 0:
            continue
        if s == "super":
            if m.parent is None:
                return None
            m = m.parent
        elif s == "self":
            continue
        elif s in m.children:
            m = m.children[s]
        else:
            break
    return m.file


def edges_of(file, module, toks, lineage):
    """Edges from `file`: {target file: (line, path text)}, first naming.
    Paths to the file's own ancestors or descendants are no edges."""
    edges = {}

    def add(segs, line, m):
        target = resolve(segs, m)
        if target and target not in lineage[file] and target not in edges:
            edges[target] = (line, "::".join(segs))

    def on_token(i, m):
        kind, v, line = toks[i]
        if kind == "id" and v == "use":
            paths, j = use_paths(toks, i + 1)
            for p, _ in paths:
                add(p, line, m)
            return j
        if kind == "id" and v == "pub" and i + 1 < len(toks) and toks[i + 1][1] == "(":
            j = i + 1
            while toks[j][1] != ")":
                j += 1
            return j + 1
        if kind == "id" and i + 1 < len(toks) and toks[i + 1][1] == "::" and (
            i == 0 or toks[i - 1][1] != "::"
        ):
            segs = [v]
            j = i + 1
            while j + 1 < len(toks) and toks[j][1] == "::" and toks[j + 1][0] == "id":
                segs.append(toks[j + 1][1])
                j += 2
            add(segs, line, m)
            return j
        return i + 1

    walk(toks, module, on_token=on_token)
    return edges


def related(module):
    """The files of a file module, its ancestors and its descendants."""
    out = set()
    m = module
    while m:
        out.add(m.file)
        m = m.parent
    todo = [module]
    while todo:
        m = todo.pop()
        out.add(m.file)
        todo.extend(m.children.values())
    return out


def sccs(graph):
    """Strongly connected components of `graph` (Tarjan's, iterative)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(sorted(comp))
    return out


def rel(path):
    return os.path.relpath(path, ROOT)


def crate_roots():
    """Each package's crate roots, from the workspace's members and itself."""
    with open(os.path.join(ROOT, "Cargo.toml"), encoding="utf-8") as f:
        manifest = f.read()
    m = re.search(r"^members\s*=\s*\[([^\]]*)\]", manifest, re.M)
    members = ["."] + (re.findall(r'"([^"]+)"', m.group(1)) if m else [])
    roots = []
    for member in members:
        src = os.path.normpath(os.path.join(ROOT, member, "src"))
        for name in ("lib.rs", "main.rs"):
            if os.path.isfile(os.path.join(src, name)):
                roots.append(os.path.join(src, name))
        bins = os.path.join(src, "bin")
        if os.path.isdir(bins):
            for entry in sorted(os.listdir(bins)):
                p = os.path.join(bins, entry)
                if entry.endswith(".rs"):
                    roots.append(p)
                elif os.path.isfile(os.path.join(p, "main.rs")):
                    roots.append(os.path.join(p, "main.rs"))
    return roots


def main():
    cycles, nfiles = [], 0
    roots = crate_roots()
    for root in roots:
        _, files = load_tree(root)
        nfiles += len(files)
        lineage = {f: related(m) for f, (m, _) in files.items()}
        graph = {f: edges_of(f, m, t, lineage) for f, (m, t) in files.items()}
        for comp in sccs(graph):
            if len(comp) > 1:
                cycles.append((root, comp, graph))
    if not cycles:
        print(f"cycles.py: no import cycle between modules ({len(roots)} crates, {nfiles} files)")
        return 0
    print(f"cycles.py: {len(cycles)} import cycle(s) between modules:")
    for n, (root, comp, graph) in enumerate(cycles, 1):
        print(f"\n{n}. in {rel(root)}, {len(comp)} files:")
        for f in comp:
            print(f"   {rel(f)}")
        print("   edges (where first named):")
        for f in comp:
            for t, (line, path) in sorted(graph[f].items()):
                if t in comp:
                    print(f"     {rel(f)}:{line} -> {rel(t)}  ({path})")
    return 1


if __name__ == "__main__":
    sys.exit(main())
