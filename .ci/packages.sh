#!/usr/bin/env bash
# The published crates as crates.io would take them: `cargo package` packs
# all six together (each one's dependencies on the others resolve to the
# packages beside it, not to crates.io, where unrelated `kiln` and
# `kiln-core` crates exist) and builds each from its package alone, as
# `cargo publish --dry-run` does. Then each package's file list is held to
# what a user needs: sources, README, licenses; no results, CI scripts,
# workspace tests or data; and 2 MB unpacked at most.
set -euo pipefail
cd "$(dirname "$0")/.."

published=(kiln-core kiln-cpu kiln-cuda kiln-wgpu kiln-kernels kiln)
budget=$((2 * 1024 * 1024))

rm -f target/package/*.crate
# Cargo unpacks each package it verifies against into its home's
# registry/src/<local registry>/, a folder named after the path of
# target/package/tmp-registry and kept across runs; where one exists it is
# used as it is, so a clone at the same path would build against the
# packages of an earlier run. Those unpacked copies of the six go first.
version=$(cargo metadata --format-version 1 --no-deps --locked |
    python3 -c 'import json, sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "kiln"))')
for p in "${published[@]}"; do
    rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/"$p-$version"
done
# Arguments go to cargo (`--no-verify`, `--allow-dirty` while editing).
# Run from outside the repository, so that .cargo/config.toml (the debug
# builds' per-package optimisation) is not read: each package builds as a
# user's `cargo publish` would build it, and `kiln`'s verification reuses the
# dependencies the five before it compiled.
root=$(pwd)
(cd "$(mktemp -d)" && cargo package --manifest-path "$root/Cargo.toml" --locked "$@" "${published[@]/#/-p}")

status=0
for p in "${published[@]}"; do
    crate="target/package/$p-$version.crate"
    # Sizes of the files inside, unpacked; paths without the `name-version/` prefix.
    listing=$(tar -tvzf "$crate")
    unpacked=$(awk '{ s += $3 } END { print s }' <<<"$listing")
    files=$(awk '{ print $6 }' <<<"$listing" | sed "s|^$p-$version/||")
    printf '%-13s %4d files, %8d bytes unpacked, %7d bytes packed\n' \
        "$p" "$(wc -l <<<"$files")" "$unpacked" "$(stat -c %s "$crate")"
    if [ "$unpacked" -gt "$budget" ]; then
        echo ".ci/packages.sh: $p is $unpacked bytes unpacked, over the budget of $budget" >&2
        status=1
    fi
    if stray=$(grep -E '^(\.ci|tests|benches|results|examples/data)/|(^|/)results/|\.(json|csv|svg|png|jpe?g|npy|zst|sh|py)$' <<<"$files" |
        grep -vx 'Cargo.toml.orig\|.cargo_vcs_info.json'); then
        echo ".ci/packages.sh: $p packs files a user does not need:" >&2
        sed 's/^/    /' <<<"$stray" >&2
        status=1
    fi
    for needed in Cargo.toml README.md LICENSE-MIT LICENSE-APACHE src/lib.rs; do
        grep -qx "$needed" <<<"$files" || { echo ".ci/packages.sh: $p lacks $needed" >&2; status=1; }
    done
done
exit $status
