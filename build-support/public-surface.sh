#!/bin/sh
# Counts the public and open declarations a program reaches through `import NetPath`: NetPath's
# own, and those of what Sources/NetPath/Exports.swift re-exports (a whole module, or one
# declaration of it and its members). Symbol graphs leave re-exported modules out, so each is
# extracted on its own. Declarations the compiler synthesises (Codable's, a protocol's default
# implementations inherited) are not counted. Run after `swift build`:
#   build-support/public-surface.sh            the count, and how many lack a /// comment
#   VERBOSE=1 build-support/public-surface.sh  and the undocumented ones, by file and line
set -eu
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
exports=$(build-support/symbol-graphs.sh "$out")
python3 - "$out" $exports <<'PY'
import json, os, sys
out, exports = sys.argv[1], sys.argv[2:]
whole = {e for e in exports if "." not in e}
scoped = {}
for e in exports:
    if "." in e:
        module, name = e.split(".", 1)
        scoped.setdefault(module, set()).add(name)
symbols = {}
for module in sorted(set(whole) | set(scoped)):
    for name in os.listdir(os.path.join(out, module)):
        graph = json.load(open(os.path.join(out, module, name)))
        for s in graph["symbols"]:
            if "sourceOrigin" in s or not s.get("location"):
                continue
            if module not in whole and s["pathComponents"][0] not in scoped[module]:
                continue
            symbols[s["identifier"]["precise"]] = s
if os.environ.get("BYTYPE"):
    import collections
    for k, n in collections.Counter(s["location"]["uri"].split("/Sources/")[-1].split("/")[0] + " " + s["pathComponents"][0] for s in symbols.values()).most_common():
        print(f"{n:4} {k}")
undocumented = sorted(
    (s for s in symbols.values() if not s.get("docComment")),
    key=lambda s: (s["location"]["uri"], s["location"]["position"]["line"]))
print(f"import NetPath: {len(symbols)} public declarations, {len(undocumented)} without a /// comment")
if os.environ.get("VERBOSE"):
    for s in undocumented:
        uri, line = s["location"]["uri"], s["location"]["position"]["line"] + 1
        print(f"  {uri.split('/Sources/')[-1]}:{line} {'.'.join(s['pathComponents'])}")
PY
