#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `make docs`: the NetPath library's documentation, as a program that imports NetPath sees it,
# into .build/docs/NetPath.doccarchive (and Network's into .build/docs/Network.doccarchive).
# Symbol graphs come from the debug build's modules (no extra compiler flags, so nothing is
# rebuilt); NetPath's re-exports (Sources/NetPath/Exports.swift) are folded into the NetPath
# module, keeping from a scoped re-export only the named declaration and its members, the
# way build-support/public-surface.sh counts them. Fails on any DocC warning.
set -eu
work=.build/docs/symbol-graphs
rm -rf .build/docs && mkdir -p "$work/NetPath" "$work/Network"
exports=$(build-support/symbol-graphs.sh "$work/raw" -skip-inherited-docs -- Network)
cp "$work/raw"/Network/Network*.symbols.json "$work/Network/"
python3 - "$work" $exports <<'PY'
import json, os, sys
work, exports = sys.argv[1], sys.argv[2:]
whole = {e for e in exports if "." not in e}
scoped = {}
for e in exports:
    if "." in e:
        module, name = e.split(".", 1)
        scoped.setdefault(module, set()).add(name)
raw = os.path.join(work, "raw")
for name, folder in sorted((n, d) for d in os.listdir(raw) for n in os.listdir(os.path.join(raw, d))):
    module = name.split(".")[0].split("@")[0]
    if module == "Network" or (module not in whole and module not in scoped):
        continue
    graph = json.load(open(os.path.join(raw, folder, name)))
    if module in scoped:
        keep = {s["identifier"]["precise"] for s in graph["symbols"] if s["pathComponents"][0] in scoped[module]}
        graph["symbols"] = [s for s in graph["symbols"] if s["identifier"]["precise"] in keep]
        graph["relationships"] = [r for r in graph["relationships"] if r["source"] in keep]
    graph["module"]["name"] = "NetPath"
    for s in graph["symbols"]:
        s["identifier"]["interfaceLanguage"] = "swift"
    suffix = name[len(module):]  # ".symbols.json" or "@Swift.symbols.json"
    out = f"NetPath{suffix}" if module == "NetPath" else f"{module}-as-NetPath{suffix}"
    json.dump(graph, open(os.path.join(work, "NetPath", out), "w"))
PY
for product in NetPath Network; do
    catalog=Sources/$product/$product.docc
    log=.build/docs/$product.log
    docc convert $( [ -d "$catalog" ] && echo "$catalog") --additional-symbol-graph-dir "$work/$product" \
        --output-path ".build/docs/$product.doccarchive" --fallback-display-name "$product" \
        --fallback-bundle-identifier "org.netpath.$product" --warnings-as-errors >"$log" 2>&1 || {
        cat "$log" >&2
        echo "make docs: DocC reported problems in $product's documentation (above)" >&2
        exit 1
    }
    echo "make docs: .build/docs/$product.doccarchive"
done
