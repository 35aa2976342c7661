#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Other tools' formats of a run, read the way those tools' users read them.

  check.py nccl-tests FILE REPORT   FILE read with nccl-tests' -J field names
                                    (results[].out_of_place.time/alg_bw/bus_bw/
                                    nwrong, size, count, type, redop, config,
                                    average_bus_bandwidth), its figures checked
                                    against REPORT (report.json) and against
                                    nccl-tests' own definitions (algbw = size /
                                    time, busbw = algbw x 2(n-1)/n for allreduce)
  check.py perftest FILE DIR        FILE (rdmactl p2p --out_json_file) read as
                                    perftest's out_json: the same sections and
                                    keys as the file real perftest 4.5 wrote
                                    for that test (DIR: tests/formats/
                                    perftest-4.5, its files as it wrote them,
                                    read leniently: bare keys, trailing commas),
                                    and figures in order (t_min <= t_typical
                                    <= percentile_99 <= 99.9 <= t_max)
  check.py perfetto FILE REPORT     FILE validated against the strict Trace
                                    Event Format schema, its slices well nested
                                    on every track (as Perfetto's importer
                                    requires), every arm a thread whose slices
                                    hold all its steps, every fault a slice

Prints one summary line; exit 1 with the first problems otherwise.
"""
import json
import os
import sys

import jsonschema

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA = os.path.join(HERE, "..", "..", "schemas", "trace-event.schema.json")


def close(a, b, rel=1e-6):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-12)


def nccl_tests(path, rep):
    d = json.load(open(path))
    bad = []
    if d.get("version") != 2:
        bad.append("version %r, not 2" % d.get("version"))
    n = len(d["config"]["devices"])
    arms = {a["name"]: a for a in rep["arms"]}
    factor = {"allreduce": 2.0 * (n - 1) / n, "broadcast": 1.0}.get(
        rep["profile"]["workload"].get("options", {}).get("op", "allreduce"), (n - 1) / n)
    bws = []
    for row in d["results"]:
        oop = row["out_of_place"]
        t_us, algbw, busbw, nwrong = oop["time"], oop["alg_bw"], oop["bus_bw"], oop["nwrong"]
        arm = arms.get(row["experiment_name"])
        if arm is None:
            bad.append("row %s: no such arm" % row["experiment_name"])
            continue
        if row["type"] != "float" or row["count"] * 4 != row["size"] or row["size"] != arm["size"]:
            bad.append("%s: size %s count %s type %s" % (arm["name"], row["size"], row["count"], row["type"]))
        if not close(t_us * 1e3, arm["time_avg_ns"]):
            bad.append("%s: time %s us, report %s ns" % (arm["name"], t_us, arm["time_avg_ns"]))
        if not close(algbw, row["size"] / 1e9 / (t_us / 1e6), 1e-4):
            bad.append("%s: alg_bw %s is not size/time" % (arm["name"], algbw))
        if not close(busbw, algbw * factor, 1e-4) or not close(busbw * 1e9, arm["busbw_bytes_per_s"], 1e-4):
            bad.append("%s: bus_bw %s (alg_bw %s, factor %s)" % (arm["name"], busbw, algbw, factor))
        if nwrong != arm["wrong"] or row["actual_iterations"] != arm["iters"] or row["in_place"] is not None:
            bad.append("%s: nwrong %s iterations %s" % (arm["name"], nwrong, row["actual_iterations"]))
        bws.append(busbw)
    if len(d["results"]) != len(rep["arms"]):
        bad.append("%d rows for %d arms" % (len(d["results"]), len(rep["arms"])))
    if bws and not close(d["average_bus_bandwidth"]["bandwidth"], sum(bws) / len(bws), 1e-4):
        bad.append("average_bus_bandwidth %s" % d["average_bus_bandwidth"])
    if d["out_of_bounds"]["count"] != sum(a["wrong"] for a in rep["arms"]):
        bad.append("out_of_bounds %s" % d["out_of_bounds"])
    return bad, "%d rows (%s) read by nccl-tests' names: time, alg_bw, bus_bw, nwrong equal to report.json; bus_bw/alg_bw %.3f for %d ranks" % (
        len(d["results"]), ", ".join("%s %.4f GB/s" % (r["experiment_name"], r["out_of_place"]["bus_bw"]) for r in d["results"]), factor, n)


def perfetto(path, rep):
    d = json.load(open(path))
    bad = []
    try:
        jsonschema.validate(d, json.load(open(SCHEMA)))
    except jsonschema.ValidationError as e:
        return ["schema: %s at %s" % (e.message[:200], "/".join(str(p) for p in e.absolute_path))], ""
    ev = d["traceEvents"]
    procs = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
    tracks = {}
    for e in ev:
        if e["ph"] == "X":
            tracks.setdefault((e["pid"], e["tid"]), []).append(e)
    # well nested: a slice starts after the one before ends, or lies inside it
    for key, sl in tracks.items():
        sl.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack = []
        for e in sl:
            while stack and e["ts"] >= stack[-1]["ts"] + stack[-1]["dur"] - 1e-6:
                stack.pop()
            if stack and e["ts"] + e["dur"] > stack[-1]["ts"] + stack[-1]["dur"] + 1e-6:
                bad.append("track %s: %s at %s overlaps %s" % (threads.get(key, key), e["name"], e["ts"], stack[-1]["name"]))
                break
            stack.append(e)
    arm_pid = [p for p, n in procs.items() if n == "arms"]
    fault_pid = [p for p, n in procs.items() if n == "faults"]
    if len(arm_pid) != 1 or len(fault_pid) != 1:
        return bad + ["processes %s" % procs], ""
    steps = 0
    for arm in rep["arms"]:
        tid = [t for (p, t), n in threads.items() if p == arm_pid[0] and n == arm["name"]]
        if len(tid) != 1:
            bad.append("arm %s: %d threads" % (arm["name"], len(tid)))
            continue
        sl = tracks.get((arm_pid[0], tid[0]), [])
        want = sum(i["count"] for i in arm["intervals"])
        got = sum(e["args"]["steps"] for e in sl)
        if got != want or len(sl) != len([i for i in arm["intervals"] if i["count"]]):
            bad.append("arm %s: %d steps in %d slices, report %d in %d intervals" % (arm["name"], got, len(sl), want, len(arm["intervals"])))
        steps += got
        cn = [e for e in ev if e["ph"] == "C" and e["name"] == arm["name"] + " resent packets"]
        if len(cn) != len(arm["intervals"]):
            bad.append("arm %s: %d resent counters for %d intervals" % (arm["name"], len(cn), len(arm["intervals"])))
    for f in rep["faults"]:
        if not any(e["name"] == f["name"] for e in tracks.get((fault_pid[0], next((t for (p, t), n in threads.items() if p == fault_pid[0] and n == f["name"]), -1)), [])):
            bad.append("fault %s: no slice" % f["name"])
    return bad, "%d events valid by the Trace Event Format schema, %d tracks well nested; %d arms' %d steps, %d fault windows, %d counter samples" % (
        len(ev), len(tracks), len(rep["arms"]), steps, len(rep["faults"]), sum(1 for e in ev if e["ph"] == "C"))


def perftest_45(text):
    """perftest 4.5's out_json (bare keys and values, trailing commas) as JSON"""
    import re
    out = []
    for line in text.splitlines():
        s = line.strip()
        m = re.match(r'^([A-Za-z_][A-Za-z0-9_.]*)\s*:\s*(.*?)(,?)$', s)
        if m:
            key, val, comma = m.groups()
            if val not in ("{", "") and not re.match(r'^-?[0-9.]+$', val) and not val.startswith('"'):
                val = '"%s"' % val
            s = '"%s": %s%s' % (key, val, comma)
        out.append(s)
    return json.loads(re.sub(r',(\s*[}\]])', r'\1', "\n".join(out)))


def perftest(path, fixtures):
    ours = json.load(open(path))
    theirs = {}
    for f in sorted(os.listdir(fixtures)):
        d = perftest_45(open(os.path.join(fixtures, f)).read())
        theirs[d["test_info"]["test"]] = (f, d)
    name = ours["test_info"]["test"]
    if name not in theirs:
        return ["test %r: perftest 4.5 has %s" % (name, sorted(theirs))], ""
    f, d = theirs[name]
    bad = []
    for sec in ("test_info", "results"):
        if list(ours[sec]) != list(d[sec]):
            bad.append("%s keys %s, perftest's (%s) %s" % (sec, list(ours[sec]), f, list(d[sec])))
    r = ours["results"]
    if "t_typical" in r and not (r["t_min"] <= r["t_typical"] <= r["percentile_99"] <= r["percentile_99.9"] <= r["t_max"]):
        bad.append("latency figures out of order: %s" % r)
    if "BW_average" in r and not (r["BW_average"] > 0 and r["MsgRate"] > 0):
        bad.append("bandwidth figures: %s" % r)
    return bad, "%s: test_info and results keys in perftest 4.5's order (its %s); %s" % (
        name, f, ", ".join("%s %s" % (k, v) for k, v in r.items()))


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "perftest":
        bad, summary = perftest(sys.argv[2], sys.argv[3])
        print("; ".join(bad[:5]) if bad else summary)
        return 1 if bad else 0
    if len(sys.argv) != 4 or sys.argv[1] not in ("nccl-tests", "perfetto"):
        print(__doc__)
        return 2
    rep = json.load(open(sys.argv[3]))
    try:
        bad, summary = (nccl_tests if sys.argv[1] == "nccl-tests" else perfetto)(sys.argv[2], rep)
    except KeyError as e:
        bad = ["no key %s where %s's format has it" % (e, sys.argv[1])]
    if bad:
        print("; ".join(bad[:5]))
        return 1
    print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
