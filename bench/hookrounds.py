#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0

"""Pools the hook phase's rounds (bench/run.sh, HOOK_ROUNDS).

In each round all hook runners run at once on fresh namespaces, their links changed in rotation
(bench/hooks.py); the rounds repeat that on fresh namespaces, the rotation's order reversed every
other round. For each runner this reads RESULTS/hooks-RUNNER-rK.json (K = 1..ROUNDS,
bench/hooks.py's output), pools their toggles into RESULTS/hooks-RUNNER.json (the shape
bench/report.py reads; the samples in round order, so that two runners' samples of the same
rotation stay at the same index, and each round's order of changes under "orders"), and writes
RESULTS/hook-rounds.json: each round's medians, and for each round the netpathd runners' medians
over netplug's in that round (paired: the same seconds). (Results from before the rotation, when
the runners took turns in each round, pool the same way.)

    hookrounds.py RESULTS ROUNDS RUNNER...
"""

import json
import os
import sys

from common import median
from hooks import by_direction
from latency import summarize


def pool(parts):
    """One runner's rounds as one bench/hooks.py result."""
    merged = dict(parts[0])
    merged["count"] = sum(p["count"] for p in parts)
    merged["batches"] = sum(p.get("batches", 0) for p in parts)
    if any("order" in p for p in parts):
        merged["orders"] = [p.get("order") for p in parts]
    merged["listeners"] = {}
    for name in parts[0]["listeners"]:
        rounds = [p["listeners"][name] for p in parts]
        loads = [r["machine_load"] for r in rounds]
        per = {"machine_load": {"busy_pct": sum(l["busy_pct"] for l in loads) / len(loads),
                                "loadavg_before": loads[0]["loadavg_before"],
                                "loadavg_after": loads[-1]["loadavg_after"]},
               "kinds": {}}
        for kind in rounds[0]["kinds"]:
            kinds = [r["kinds"][kind] for r in rounds]
            samples = [sample for k in kinds for sample in k["samples"]]
            latencies = [lat for _, lat, _ in samples]
            s = summarize(latencies)
            s["median_by_direction_us"] = by_direction([(0, 0, state) for state, _, _ in samples], latencies)
            firsts = {}
            for k in kinds:
                for key, count in k["first_event"].items():
                    firsts[key] = firsts.get(key, 0) + count
            s["first_event"] = firsts
            s["hook_runs_per_toggle"] = (sum(k["hook_runs_per_toggle"] * len(k["samples"]) for k in kinds)
                                         / max(1, len(samples)))
            if "event_logged" in kinds[0]:
                logged = [log for _, _, log in samples]
                s["event_logged"] = summarize(logged)
                s["logged_to_hook_median_us"] = median(sorted(
                    (h - e) / 1000.0 for h, e in zip(latencies, logged) if h is not None and e is not None))
            s["samples"] = samples
            per["kinds"][kind] = s
        merged["listeners"][name] = per
    return merged


def main():
    results, rounds, runners = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    parts = {runner: [json.load(open(os.path.join(results, f"hooks-{runner}-r{k}.json")))
                      for k in range(1, rounds + 1)] for runner in runners}
    for runner, runner_parts in parts.items():
        with open(os.path.join(results, f"hooks-{runner}.json"), "w") as f:
            json.dump(pool(runner_parts), f, indent=2)
    # Each round's medians, and the netpathd runners over netplug's in the same round.
    per_round = []
    for k in range(rounds):
        medians = {}
        for runner_parts in parts.values():
            for name, per in runner_parts[k]["listeners"].items():
                medians[name] = {kind: s["median_us"] for kind, s in per["kinds"].items()}
        per_round.append(medians)
    paired = {}
    for name in (n for n in per_round[0] if n.startswith("netpathd")):
        paired[name] = {}
        for kind in per_round[0][name]:
            ratios = sorted(r[name][kind] / r["netplug"][kind] for r in per_round
                            if "netplug" in r and r[name].get(kind) and r["netplug"].get(kind))
            paired[name][kind] = {"ratios": ratios, "median_ratio": median(ratios)}
    with open(os.path.join(results, "hook-rounds.json"), "w") as f:
        json.dump({"rounds": rounds, "medians": per_round, "over_netplug": paired}, f, indent=2)


if __name__ == "__main__":
    main()
