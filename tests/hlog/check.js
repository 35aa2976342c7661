// SPDX-License-Identifier: MIT
// node check.js RUN_DIR: every ARM.hlog of a run decoded by HdrHistogramJS
// (a real HdrHistogram implementation, not ours) and compared, interval by
// interval, with report.json: the same count, max, and p50/p99 within the
// histogram's precision. Prints one summary line; exit 1 on any mismatch.
'use strict';
const fs = require('fs');
const path = require('path');
const hdr = require('hdr-histogram-js');

const dir = process.argv[2];
const rep = JSON.parse(fs.readFileSync(path.join(dir, 'report.json'), 'utf8'));
let lines = 0, bad = 0;
const near = (a, b) => Math.abs(a - b) <= 0.01 * Math.max(a, b) + 1;
for (const arm of rep.arms) {
  const text = fs.readFileSync(path.join(dir, arm.name + '.hlog'), 'utf8').split('\n');
  if (!text[0].startsWith('#[Histogram log format version 1.3]')) { console.log(`${arm.name}: bad header`); bad++; }
  const rows = text.filter(l => l.startsWith('Tag='));
  if (rows.length !== arm.intervals.length) {
    console.log(`${arm.name}: ${rows.length} lines, ${arm.intervals.length} intervals in report.json`);
    bad++;
    continue;
  }
  rows.forEach((row, i) => {
    const [tag, start, len, max, b64] = row.split(',');
    const h = hdr.decodeFromCompressedBase64(b64, 64, false);
    const iv = arm.intervals[i];
    lines++;
    const got = { count: h.totalCount, max: h.maxValue, p50: h.getValueAtPercentile(50), p99: h.getValueAtPercentile(99) };
    if (tag !== 'Tag=' + arm.name || got.count !== iv.count || !near(got.max, iv.max_ns) ||
        !near(got.p50, iv.p50_ns) || !near(got.p99, iv.p99_ns) || !near(+max * 1e6, iv.max_ns) || +len <= 0) {
      console.log(`${arm.name} line ${i}: decoded ${JSON.stringify(got)} vs report ${JSON.stringify({count: iv.count, max: iv.max_ns, p50: iv.p50_ns, p99: iv.p99_ns})} (${tag}, max ${max})`);
      bad++;
    }
  });
}
// the log's own clock, read by HdrHistogramJS's log reader: StartTime is the
// wall clock at the run's t0 (within the run: after "created", before its
// end), so every interval's absolute start is t0_unix_ns plus its offset
let starts = 0;
const created = Date.parse(rep.created) / 1000;
for (const arm of rep.arms) {
  const rd = new hdr.HistogramLogReader(fs.readFileSync(path.join(dir, arm.name + '.hlog'), 'utf8'));
  for (let i = 0, h; (h = rd.nextIntervalHistogram()); i++) {
    const want = rep.t0_unix_ns / 1e6 + (arm.intervals[i].t_start_ns - rep.t0_node_ns) / 1e6;
    if (i === 0 && !(rd.startTimeSec >= created && rd.startTimeSec <= created + rep.duration_s + 1 &&
                     Math.abs(rd.startTimeSec * 1000 - rep.t0_unix_ns / 1e6) < 1.001)) {
      console.log(`${arm.name}: StartTime ${rd.startTimeSec}, created ${rep.created}, t0_unix_ns ${rep.t0_unix_ns}`);
      bad++;
    }
    if (Math.abs(h.startTimeStampMsec - want) > 2) {
      console.log(`${arm.name} interval ${i}: starts at ${h.startTimeStampMsec} ms, report says ${want}`);
      bad++;
    }
    starts++;
  }
}
console.log(`${lines} interval histograms decoded by HdrHistogramJS ${bad ? 'with ' + bad + ' mismatches' : 'and equal to report.json'}; ` +
            `${starts} absolute interval starts from StartTime as report.json has them`);
process.exit(bad || !lines ? 1 : 0);
