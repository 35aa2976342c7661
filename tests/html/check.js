#!/usr/bin/env node
// SPDX-License-Identifier: MIT
/*
 * report.html in headless Chromium (Debian's, driven by playwright-core),
 * checked through the page's DOM as a user would look at it:
 *   node check.js REPORT.html --charts id,id,... [--screenshot F.png]
 * - the page loads with no console error and no script error;
 * - every chart named is drawn (its canvas has ink) and holds report.json's
 *   data (the step-time line's points are the intervals' p50 and max, the
 *   CDF ends at 1);
 * - ticks are round values (a 1, 2, 2.5 or 5 step on linear axes, 1-9
 *   times a power of ten on log axes, at most 4 significant digits), and
 *   the axis labels carry the units the chart has;
 * - hovering a point shows its exact value (6 significant digits) with its
 *   unit in the chart's value box;
 * - a legend check box hides and shows its arm;
 * - dragging on the time plot zooms in, "reset zoom" undoes it;
 * - a per-rank select box switches the chart to that rank's data;
 * - the fault window is shaded where the profile has one.
 * Prints one line of what it saw; exit 1 with the reasons otherwise.
 */
'use strict';
const fs = require('fs');
const path = require('path');
const { chromium } = require('playwright-core');

function usage() {
	console.error('usage: check.js REPORT.html --charts id,id,... [--screenshot F.png]');
	process.exit(2);
}

const args = process.argv.slice(2);
let file = null, charts = null, shot = null;
for (let i = 0; i < args.length; i++) {
	if (args[i] === '--charts') charts = (args[++i] || '').split(',').filter(Boolean);
	else if (args[i] === '--screenshot') shot = args[++i];
	else if (!file) file = args[i];
	else usage();
}
if (!file || !charts) usage();
const report = JSON.parse(fs.readFileSync(path.join(path.dirname(file), 'report.json'), 'utf8'));

const bad = [];
const seen = [];
function check(ok, what) {
	if (!ok) bad.push(what);
	return ok;
}

function fmt(v) {
	return String(Number(v.toPrecision(6)));
}

/* round tick values: evenly stepped by 1, 2, 2.5 or 5 times a power of ten
 * (linear), or 1..9 times one (log); short labels */
function niceTicks(labels, log) {
	const v = labels.map(Number);
	if (v.some((x) => !isFinite(x))) return 'not numbers: ' + labels.join(' ');
	if (labels.some((l) => l.replace(/^-|\.|e.*$/g, '').replace(/^0+/, '').replace(/0+$/, '').length > 4))
		return 'long labels: ' + labels.join(' ');
	if (log) {
		for (const x of v) {
			if (x <= 0) return 'log tick <= 0';
			const m = x / Math.pow(10, Math.floor(Math.log10(x) + 1e-9));
			if (Math.abs(m - Math.round(m)) > 1e-6) return 'log tick ' + x;
		}
		return null;
	}
	if (v.length < 2) return null;
	const step = v[1] - v[0];
	for (let i = 2; i < v.length; i++)
		if (Math.abs(v[i] - v[i - 1] - step) > Math.abs(step) * 1e-6) return 'uneven ticks ' + labels.join(' ');
	const m = step / Math.pow(10, Math.floor(Math.log10(step) + 1e-9));
	if (![1, 2, 2.5, 5, 10].some((n) => Math.abs(m - n) < 1e-6)) return 'step ' + step;
	if (v.some((x) => Math.abs(x / step - Math.round(x / step)) > 1e-6)) return 'ticks off the step: ' + labels.join(' ');
	return null;
}

(async () => {
	const browser = await chromium.launch({
		executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
		args: ['--no-sandbox', '--disable-gpu'],
	});
	const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
	const errors = [];
	page.on('console', (m) => { if (m.type() === 'error') errors.push('console: ' + m.text()); });
	page.on('pageerror', (e) => errors.push('script: ' + e.message));
	/* the page must open offline: anything it would fetch is refused here
	 * (nothing leaves the machine) and fails the check */
	await page.route((u) => u.protocol !== 'file:' && u.protocol !== 'data:', (route) => {
		errors.push('fetched ' + route.request().url());
		route.abort();
	});
	await page.goto('file://' + path.resolve(file));
	await page.waitForFunction(() => window.rtbCharts !== undefined, null, { timeout: 20000 }).catch(() => {});

	const have = await page.evaluate(() => Object.keys(window.rtbCharts || {}));
	check(JSON.stringify(have.slice().sort()) === JSON.stringify(charts.slice().sort()),
	      `charts drawn [${have}] != [${charts}]`);

	for (const id of charts) {
		if (!have.includes(id)) continue;
		const fig = `figure#${id}`;
		await page.locator(fig).scrollIntoViewIfNeeded();
		/* ink on the chart's canvas */
		const ink = await page.evaluate((id) => {
			const c = window.rtbCharts[id].graph.hidden_;
			const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
			let n = 0;
			for (let i = 3; i < d.length; i += 4) n += d[i] > 0;
			return n;
		}, id);
		check(ink > 500, `${id}: canvas nearly empty (${ink} pixels)`);
		/* ticks and units */
		const info = await page.evaluate((id) => {
			const f = document.querySelector('figure#' + id);
			const t = (sel) => Array.from(f.querySelectorAll(sel)).map((e) => e.textContent.trim()).filter((l) => l !== '');
			const s = window.rtbCharts[id].spec;
			return { x: t('.dygraph-axis-label-x'), y: t('.dygraph-axis-label-y'),
				 xl: t('.dygraph-xlabel').join(''), yl: t('.dygraph-ylabel').join(''), spec: s };
		}, id);
		const spec = info.spec;
		if (spec.kind === 'bar') {
			check(JSON.stringify(info.x) === JSON.stringify(spec.x.categories), `${id}: x ticks ${info.x} are not the arms`);
		} else {
			check(info.x.length >= 3, `${id}: ${info.x.length} x ticks`);
			const e = niceTicks(info.x, spec.x.log);
			check(!e, `${id}: x ticks: ${e}`);
		}
		check(info.y.length >= 3, `${id}: ${info.y.length} y ticks`);
		const ey = niceTicks(info.y, spec.y.log);
		check(!ey, `${id}: y ticks: ${ey}`);
		for (const [a, l] of [['x', info.xl], ['y', info.yl]])
			check(l.startsWith(spec[a].label) && (!spec[a].unit || l.includes('[' + spec[a].unit + ']')),
			      `${id}: ${a} label '${l}' lacks '${spec[a].label} [${spec[a].unit}]'`);

		/* hover: a point with no other row within 3 px, its value in the box
		 * (x on the page from toPercentXCoord: dygraphs' toDomXCoord ignores
		 * a log x axis). On a long run the rows of a time plot can all sit
		 * closer than that: zoomed in around a point, as a user would (a
		 * linear x axis: up to three times, to an eighth each) */
		const target = await page.evaluate((id) => {
			const { graph: g, spec: s, series } = window.rtbCharts[id];
			const find = () => {
				const area = g.getArea();
				const domX = (x) => area.x + g.toPercentXCoord(x) * area.w;
				const xs = [];
				for (let r = 0; r < g.numRows(); r++) xs.push(domX(g.getValue(r, 0)));
				const r = g.canvas_.getBoundingClientRect();
				for (const pass of [1, 0])
					for (const se of series) {
						const pts = se.points;
						for (let j = 0; j < pts.length; j++) {
							const p = pts[(j + Math.floor(pts.length / 2)) % pts.length];
							const dx = domX(p[0]), dy = g.toDomYCoord(p[1]);
							if (pass && p[1] === 0 && s.kind !== 'bar') continue;
							if (dx < area.x + 2 || dx > area.x + area.w - 2 || dy < area.y || dy > area.y + area.h) continue;
							if (s.kind !== 'bar' && xs.filter((x) => Math.abs(x - dx) < 3).length !== 1) continue;
							return { name: se.name, x: p[0], y: p[1], px: r.left + dx, py: r.top + dy };
						}
					}
				return null;
			};
			let t = find(), zoomed = 0;
			const lin = s.kind !== 'bar' && !s.x.log && !s.x.categories;
			for (; !t && lin && zoomed < 3; zoomed++) {
				const se = series.find((se) => se.points.some((p) => p[1] !== 0)) || series[0];
				const p = se && se.points[Math.floor(se.points.length / 2)];
				if (!p) break;
				const [x0, x1] = g.xAxisRange(), h = (x1 - x0) / 16;
				g.updateOptions({ dateWindow: [p[0] - h, p[0] + h] });
				t = find();
			}
			return t && Object.assign(t, { zoomed: zoomed > 0 });
		}, id);
		if (check(target, `${id}: no point to hover`)) {
			await page.mouse.move(target.px, target.py - 3);
			await page.mouse.move(target.px, target.py);
			const shown = await page.evaluate(([id, name]) => {
				const f = document.querySelector('figure#' + id);
				const v = Array.from(f.querySelectorAll('.values .hv')).find((e) => e.dataset.series === name);
				const x = f.querySelector('.values .hx');
				return { v: v ? v.textContent : null, x: x ? x.textContent : null };
			}, [id, target.name]);
			const want = `${target.name}: ${fmt(target.y)}${spec.y.unit ? ' ' + spec.y.unit : ''}`;
			const wantx = spec.x.categories ? spec.x.categories[target.x] : fmt(target.x) + (spec.x.unit ? ' ' + spec.x.unit : '');
			check(shown.v === want, `${id}: hovering ${target.name} at (${target.x}, ${target.y}) shows '${shown.v}', not '${want}'`);
			check(shown.x && shown.x.endsWith(': ' + wantx), `${id}: hover x '${shown.x}', not '${wantx}'`);
			if (id === charts[0] || spec.kind !== 'line') seen.push(`${id} hover '${shown.v}' at ${shown.x}`);
			await page.mouse.move(5, 5);
			if (target.zoomed) await page.evaluate((id) => window.rtbCharts[id].graph.resetZoom(), id);
		}

		/* a legend check box hides its arm's series, and shows them again */
		const boxes = await page.$$(`${fig} .arms input[type=checkbox]`);
		if (check(boxes.length >= 1, `${id}: no arm check boxes`)) {
			const box = boxes[boxes.length > 1 ? 1 : 0];
			const arm = await box.getAttribute('data-arm');
			const vis = () => page.evaluate(([id, arm]) => {
				const { graph: g, series } = window.rtbCharts[id];
				return series.map((se, k) => [se.arm === arm, g.visibility()[k]]);
			}, [id, arm]);
			await box.click();
			const off = await vis();
			await box.click();
			const on = await vis();
			check(off.every(([mine, v]) => v === !mine) && off.some(([mine]) => mine),
			      `${id}: unticking ${arm} left visibility ${JSON.stringify(off)}`);
			check(on.every(([, v]) => v), `${id}: ticking ${arm} again left ${JSON.stringify(on)}`);
		}

		/* the data: the timeline's p50 and max lines are report.json's intervals */
		if (id === 'timeline') {
			const t0 = report.t0_node_ns;
			for (const arm of report.arms) {
				const p50 = spec.series.find((s) => s.name === arm.name + ' p50');
				const mx = spec.series.find((s) => s.name === arm.name + ' max');
				const iv = arm.intervals || [];
				const same = (s, key) => s && s.points.length === iv.length && iv.every((e, k) =>
					Math.abs(s.points[k][0] - (e.t_ns - t0) / 1e9) < 1e-6 &&
					Math.abs(s.points[k][1] - e[key] / 1e6) <= 1e-6 * Math.max(1, e[key] / 1e6));
				check(same(p50, 'p50_ns') && same(mx, 'max_ns'), `timeline: ${arm.name}'s lines are not its intervals`);
			}
			/* the fault window shaded: pink under the lines at its middle */
			const f = (spec.faults || [])[0];
			if (f) {
				const pink = await page.evaluate(([id, f]) => {
					const g = window.rtbCharts[id].graph, a = g.getArea();
					const [r0, r1] = g.xAxisRange();
					const from = Math.max(f.from, r0), to = Math.min(f.to === null ? r1 : f.to, r1);
					const x = Math.round(g.toDomXCoord((from + to) / 2));
					const ctx = g.hidden_.getContext('2d'), r = window.devicePixelRatio || 1;
					let n = 0;
					for (let y = a.y + 5; y < a.y + a.h - 5; y += 7) {
						const d = ctx.getImageData(x * r, y * r, 1, 1).data;
						n += d[0] > d[1] + 20 && d[2] > d[1] + 20;
					}
					return n;
				}, [id, f]);
				check(pink >= 3, `timeline: fault window ${f.name} not shaded (${pink} pink samples)`);
				seen.push(`fault window '${f.name}' shaded`);
			}
			/* zoom: a drag over the middle third narrows the x range; reset restores it */
			const box = await page.evaluate((id) => {
				const g = window.rtbCharts[id].graph, a = g.getArea(), r = g.canvas_.getBoundingClientRect();
				return { x0: r.left + a.x + a.w / 3, x1: r.left + a.x + 2 * a.w / 3, y: r.top + a.y + a.h / 2, range: g.xAxisRange() };
			}, id);
			await page.mouse.move(box.x0, box.y);
			await page.mouse.down();
			await page.mouse.move((box.x0 + box.x1) / 2, box.y, { steps: 5 });
			await page.mouse.move(box.x1, box.y, { steps: 5 });
			await page.mouse.up();
			const zoomed = await page.evaluate((id) => window.rtbCharts[id].graph.xAxisRange(), id);
			const w0 = box.range[1] - box.range[0], w1 = zoomed[1] - zoomed[0];
			check(w1 < w0 * 0.5 && zoomed[0] > box.range[0], `timeline: dragging left the x range ${zoomed} (was ${box.range})`);
			await page.click(`${fig} button.reset`);
			const back = await page.evaluate((id) => window.rtbCharts[id].graph.xAxisRange(), id);
			check(Math.abs(back[0] - box.range[0]) < 1e-9 && Math.abs(back[1] - box.range[1]) < 1e-9,
			      `timeline: reset zoom left ${back}`);
			seen.push(`zoom ${w0.toFixed(2)} s -> ${w1.toFixed(2)} s and back`);
		}
		if (id === 'cdf') {
			const ends = spec.series.map((s) => s.points.length ? s.points[s.points.length - 1][1] : 0);
			check(spec.series.length === report.arms.filter((a) => a.count > 0).length && ends.every((e) => Math.abs(e - 1) < 1e-9),
			      `cdf: ${spec.series.length} series ending at ${ends}`);
		}
		/* views: the select box switches to another rank's data */
		const sel = await page.$(`${fig} select.view`);
		if (sel) {
			const n = spec.views.length;
			await sel.selectOption({ index: n - 1 });
			const now = await page.evaluate(([id, n]) => {
				const { graph: g, spec: s } = window.rtbCharts[id];
				const want = s.views[n - 1].series;
				let pts = 0, found = 0;
				for (const se of want)
					for (const p of se.points) {
						pts++;
						for (let r = 0; r < g.numRows(); r++)
							if (g.getValue(r, 0) === p[0]) { found += g.getValue(r, want.indexOf(se) + 1) === p[1]; break; }
					}
				return { pts, found, label: document.querySelector('figure#' + id + ' select.view').value };
			}, [id, n]);
			check(now.pts > 0 && now.found === now.pts, `${id}: view '${now.label}' shows ${now.found} of its ${now.pts} points`);
			seen.push(`${id} view '${now.label}' ${now.found} points`);
			await sel.selectOption({ index: 0 });
		}
	}
	if (shot) await page.screenshot({ path: shot, fullPage: true });
	for (const e of errors) check(false, e);
	await browser.close();
	if (bad.length) {
		console.log('FAIL ' + bad.join('; '));
		process.exit(1);
	}
	console.log(`${charts.length} charts drawn with round ticks and units; ${seen.join('; ')}; no console errors`);
})().catch((e) => {
	console.log('FAIL ' + (e && e.stack || e));
	process.exit(1);
});
