#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Counts the public and open declarations of the library products: what a program reaches through
# `import NetPath` (NetPath's own, and those of what Sources/NetPath/Exports.swift re-exports: a
# whole module, or one declaration of it and its members), and the Network and NetPathTesting
# modules' own. Symbol graphs leave re-exported modules out, so each is extracted on its own.
# Declarations the compiler synthesises (Codable's, a protocol's default implementations
# inherited) are not counted. Tests/CLITests/PublicSurfaceTests.swift compares the counts with
# CHANGELOG.md's. Run after `swift build`:
#   build-support/public-surface.sh            one line per product: the count, and how many lack a ///
#   VERBOSE=1 build-support/public-surface.sh  and the undocumented ones, by file and line
#   LIST=1 build-support/public-surface.sh     and every declaration, by product
set -eu
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
exports=$(build-support/symbol-graphs.sh "$out" -- Network NetPathTesting)
python3 - "$out" $exports <<'PY'
import collections, json, os, sys
out, exports = sys.argv[1], sys.argv[2:]
whole = {e for e in exports if "." not in e}
scoped = {}
for e in exports:
    if "." in e:
        module, name = e.split(".", 1)
        scoped.setdefault(module, set()).add(name)

def declarations(module, keep=lambda s: True):
    found = {}
    for name in os.listdir(os.path.join(out, module)):
        # Extensions of other modules' types (Module@Swift.symbols.json) belong to the module too.
        graph = json.load(open(os.path.join(out, module, name)))
        for s in graph["symbols"]:
            if "sourceOrigin" in s or not s.get("location") or not keep(s):
                continue
            found[s["identifier"]["precise"]] = s
    return found

products = collections.OrderedDict()
netpath = {}
for module in sorted(whole | set(scoped)):
    if module in whole:
        netpath.update(declarations(module))
    else:
        netpath.update(declarations(module, lambda s, m=module: s["pathComponents"][0] in scoped[m]))
products["NetPath"] = netpath
products["Network"] = declarations("Network")
products["NetPathTesting"] = declarations("NetPathTesting")

for product, symbols in products.items():
    undocumented = sorted(
        (s for s in symbols.values() if not s.get("docComment")),
        key=lambda s: (s["location"]["uri"], s["location"]["position"]["line"]))
    print(f"{product}: {len(symbols)} public declarations, {len(undocumented)} without a /// comment")
    if os.environ.get("BYTYPE"):
        counts = collections.Counter(
            s["location"]["uri"].split("/Sources/")[-1].split("/")[0] + " " + s["pathComponents"][0]
            for s in symbols.values())
        for k, n in counts.most_common():
            print(f"  {n:4} {k}")
    if os.environ.get("VERBOSE"):
        for s in undocumented:
            uri, line = s["location"]["uri"], s["location"]["position"]["line"] + 1
            print(f"  {uri.split('/Sources/')[-1]}:{line} {'.'.join(s['pathComponents'])}")
    if os.environ.get("LIST"):
        for path in sorted(".".join(s["pathComponents"]) for s in symbols.values()):
            print(f"  {path}")
PY
