#!/usr/bin/env python3
"""tests/bench/tiers.sh's table, from /results/tiers.json (tests/bench/tiers/inside.py)."""
import datetime, json, sys


def mib(pages):
    return pages * 4096 >> 20


def main(path):
    j = json.load(open(path))
    c = j["config"]
    tier = str(c["tier"])
    print(f"tiers {c['tiers']}; cell 0 {c['cell_mib']} MiB: filler {c['cold_mib']} MiB written once, "
          f"hot set {c['hot_mib']} MiB in a loop; home room {c['room_mib']} MiB above vnumad's reserve; "
          f"{c['seconds']} s per run\n")
    print("| run | domain | start | hot set home start -> end | hot set 99% home at | cell 0 at the end (MiB per node) "
          "| migrated (MiB) | hinting faults | pages moved twice | passes that ordered moves until 99% |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, r in j["runs"].items():
        if "error" in r:
            print(f"| {name} | {r.get('domain', '-')} | {r.get('start', '-')} | error: {r['error'].splitlines()[-1][:80]} | | | | | | |")
            continue
        s = r["samples"]
        home = str(j["config"]["domains"][r["domain"]]["home"])
        at = next((x["t"] for x in s if x["hot_home"] is not None and x["hot_home"] >= 0.99), None)
        end = s[-1]
        cell = ", ".join(f"{n}: {mib(v)}" for n, v in end["cell0"].items() if int(n) >= 0)
        passes = "-"
        if "journal" in r:
            def t_of(x):  # the record's time, seconds after t=0
                w = datetime.datetime.fromisoformat(x["time"].replace("Z", "+00:00")).timestamp()
                return w - r["t0_wall"]
            # passes that ordered moves: a new decision ("acted"), or a new plan for the same
            # targets ("moving" with bytes planned; one that only goes on with the last has none)
            acts = [t_of(x) for x in r["journal"] if x.get("domain") == r["domain"] and x.get("mode") == "auto"
                    and (x.get("action") == "acted" or
                         (x.get("action") == "moving" and any(c.get("bytes_planned") for c in x.get("cells", []))))]
            passes = str(sum(1 for t in acts if 0 <= t <= (at if at is not None else 1e9)))
        start_hot = s[0]["hot_home"] if s else None
        print(f"| {name} | {r['domain']} | hot set on {'the tier' if r.get('start') == 'tier' else 'node ' + str(j['config']['domains'][r['domain']]['near'])} | {start_hot * 100:.0f}% -> {end['hot_home'] * 100:.1f}% | "
              f"{'%.0f s' % at if at is not None else 'never'} | {cell} (home {home}, tier {tier}) | "
              f"{mib(end['vmstat'].get('pgmigrate_success', 0))} | {end['vmstat'].get('numa_hint_faults', 0)} | "
              f"{r['moved_twice_pages']} ({r['hot_moved_twice_pages']} hot) | {passes} |")


if __name__ == "__main__":
    main(sys.argv[1])
