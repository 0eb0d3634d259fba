#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0

"""Waits until the machine is quiet: all CPUs together under --max-busy percent over a --window.

The machine is shared; latency measured while other builds run says more about them than about
the listeners. Gives up after --timeout and lets the benchmark run anyway: every phase records
how busy the machine was, and the report prints it.
"""

import argparse
import sys
import time

from common import MachineLoad


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--max-busy", type=float, default=25.0)
    ap.add_argument("--window", type=float, default=2.0)
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--what", default="the next phase")
    args = ap.parse_args()
    deadline = time.monotonic() + args.timeout
    said = False
    while True:
        load = MachineLoad().start()
        time.sleep(args.window)
        busy = load.stop()["busy_pct"]
        if busy <= args.max_busy:
            if said:
                print(f"   quiet now ({busy:.0f}% busy)", file=sys.stderr)
            return
        if time.monotonic() > deadline:
            print(f"   still {busy:.0f}% busy after {args.timeout:.0f} s; running {args.what} anyway", file=sys.stderr)
            return
        if not said:
            print(f"   machine {busy:.0f}% busy; waiting up to {args.timeout:.0f} s for it to drop under "
                  f"{args.max_busy:.0f}% before {args.what}", file=sys.stderr)
            said = True


if __name__ == "__main__":
    main()
