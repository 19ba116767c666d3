#!/usr/bin/env python3
"""The oldest Rust the locked dependency graph of kiln's published crates builds
with: the highest `rust-version` among the locked packages those crates reach
through normal and build dependencies, with every feature on and on every
target platform (dependencies behind custom cfg flags such as `loom` aside), compared with the `rust-version` the workspace declares.

Only one toolchain is at hand in CI, so this reads the dependencies' own
claims rather than building with an old compiler; clippy's
`incompatible_msrv` lint (on in `cargo clippy`) checks kiln's own use of the
standard library against the declared version.

Usage: .ci/msrv.py [--list N]   exits 1 when the declared version is lower
than a dependency needs, or higher than any of them needs (then it is not
"the oldest that builds").
"""
import json
import re
import subprocess
import sys

PUBLISHED = ["kiln-core", "kiln-cpu", "kiln-cuda", "kiln-wgpu", "kiln-kernels", "kiln"]


def cfg_can_hold(expr):
    """Whether a `cfg(...)` target of a dependency can hold on some platform
    without custom flags: platform predicates (`unix`, `target_os = "..."`)
    may go either way; any other bare name (`loom`, `docsrs`, `test`) is a
    flag rustc does not set for a dependency, so it is false."""
    tokens = re.findall(r'[A-Za-z_][A-Za-z0-9_]*|"[^"]*"|[(),=]', expr)
    pos = 0

    def parse():  # three-valued: True, False or None (either way)
        nonlocal pos
        name = tokens[pos]
        pos += 1
        if name in ("any", "all", "not") and pos < len(tokens) and tokens[pos] == "(":
            pos += 1
            args = []
            while tokens[pos] != ")":
                args.append(parse())
                if tokens[pos] == ",":
                    pos += 1
            pos += 1
            if name == "not":
                return None if args[0] is None else not args[0]
            if name == "any":
                return True if True in args else (None if None in args else False)
            return False if False in args else (None if None in args else True)
        if pos < len(tokens) and tokens[pos] == "=":
            pos += 2
            return None
        return None if name in ("unix", "windows") else False

    inner = expr.strip()
    if not inner.startswith("cfg("):
        return True  # a target triple: some platform
    tokens = tokens[2:-1]
    return parse() is not False


def version(text):
    parts = [int(p) for p in text.split(".")]
    return tuple(parts + [0] * (3 - len(parts)))


def show(v):
    return ".".join(str(p) for p in (v if v[2] else v[:2]))


def main():
    listed = int(sys.argv[sys.argv.index("--list") + 1]) if "--list" in sys.argv else 5
    meta = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--locked", "--all-features"],
            check=True,
            stdout=subprocess.PIPE,
        ).stdout
    )
    packages = {p["id"]: p for p in meta["packages"]}
    nodes = {n["id"]: n for n in meta["resolve"]["nodes"]}
    roots = [i for i, p in packages.items() if p["name"] in PUBLISHED and i in meta["workspace_members"]]
    if len(roots) != len(PUBLISHED):
        sys.exit(f"msrv.py: found {sorted(packages[i]['name'] for i in roots)}, expected {PUBLISHED}")
    # Walk normal and build edges only (dev-dependencies are not built by a
    # crate's dependents), on any platform, but not those behind custom cfg
    # flags (spindle's `cfg(loom)` test dependency).
    seen, todo = set(roots), list(roots)
    while todo:
        for dep in nodes[todo.pop()]["deps"]:
            built = any(
                k["kind"] in (None, "build") and (k["target"] is None or cfg_can_hold(k["target"]))
                for k in dep["dep_kinds"]
            )
            if built and dep["pkg"] not in seen:
                seen.add(dep["pkg"])
                todo.append(dep["pkg"])
    declared = {version(packages[i]["rust_version"]) for i in roots if packages[i].get("rust_version")}
    if len(declared) != 1:
        sys.exit(f"msrv.py: the published crates declare {sorted(map(show, declared))}, not one rust-version")
    declared = declared.pop()
    needs = sorted(
        ((version(packages[i]["rust_version"]), packages[i]["name"], packages[i]["version"])
         for i in seen - set(roots) if packages[i].get("rust_version")),
        reverse=True,
    )
    print(f"{len(seen) - len(roots)} locked dependencies of {', '.join(PUBLISHED)}; "
          f"{len(needs)} state a rust-version; the highest:")
    for v, name, ver in needs[:listed]:
        print(f"  {show(v):<7} {name} {ver}")
    oldest = needs[0][0] if needs else (1, 0, 0)
    print(f"declared rust-version {show(declared)}; the locked graph needs {show(oldest)}")
    if declared != oldest:
        sys.exit(f"msrv.py: set rust-version = \"{show(oldest)}\" in [workspace.package]")


if __name__ == "__main__":
    main()
