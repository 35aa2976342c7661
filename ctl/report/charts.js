/* SPDX-License-Identifier: MIT */
/*
 * report.html's charts, drawn with dygraphs (inlined before this script).
 * Every JSON script block (class chart-data) the report
 * writer (ctl/report/html.c) put in a <figure class="chart"> becomes one
 * chart:
 *   {"id", "kind": "line" | "step" | "bar", "gap": s,
 *    "x": {"label", "unit", "log", "categories": [...]},
 *    "y": {"label", "unit", "log", "min", "max"},
 *    "series": [{"name", "arm", "color", "dash", "points": [[x, y], ...]}],
 *    "faults": [{"name", "rule", "from", "to"}],
 *    "views": [{"label", "series": [...]}]}
 * Arms are shown and hidden with the figure's check boxes, hovering shows
 * the exact values (with units) in the figure's .values box, dragging
 * zooms (double-click or "reset zoom" undoes it), and a figure with views
 * (per rank) switches between them with its select box. The page keeps
 * each chart in window.rtbCharts[id] (its dygraph, spec and the series it
 * shows) for tests.
 */
(function () {
	'use strict';

	/* a value as the report has it: up to 6 significant digits */
	function num(v) {
		if (v === null || v === undefined || typeof v !== 'number' || isNaN(v))
			return '-';
		return String(Number(v.toPrecision(6)));
	}

	function withUnit(v, unit) {
		return unit ? num(v) + ' ' + unit : num(v);
	}

	/* tick labels: dygraphs picks round values; print them short */
	function tick(v) {
		return String(Number(v.toPrecision(4)));
	}

	function esc(s) {
		return String(s).replace(/[&<>"']/g, function (c) {
			return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c];
		});
	}

	/*
	 * The rows dygraphs draws: one per distinct x, a column per series;
	 * null where a series has no point there (skipped: its line goes on),
	 * NaN halfway where its x jumps by more than gap (a break: the arms
	 * take turns, no line crosses another arm's turn).
	 */
	function rows(series, gap) {
		var at = new Map(), n = series.length, xs, out = [];

		function put(x, k, y) {
			var r = at.get(x);

			if (!r) {
				r = [x];
				for (var i = 0; i < n; i++)
					r.push(null);
				at.set(x, r);
			}
			r[k + 1] = y;
		}
		series.forEach(function (s, k) {
			s.points.forEach(function (p, i) {
				var prev = i ? s.points[i - 1] : null;

				if (gap > 0 && prev && p[0] - prev[0] > gap)
					put((p[0] + prev[0]) / 2, k, NaN);
				put(p[0], k, p[1]);
			});
		});
		xs = Array.from(at.keys()).sort(function (a, b) { return a - b; });
		xs.forEach(function (x) { out.push(at.get(x)); });
		if (!out.length) {	/* dygraphs wants a row */
			var r = [0];

			series.forEach(function () { r.push(null); });
			out.push(r);
		}
		return out;
	}

	/* the hover box: x, then every shown series' value at x */
	function legend(spec) {
		return function (d) {
			var h = [];

			if (d.x === null || d.x === undefined) {
				h.push(spec.kind === 'bar' ? '<span class="hint">hover a bar for its value</span>' :
				       '<span class="hint">hover a line for its values; drag to zoom, ' +
				       'double-click to reset</span>');
				return h.join('');
			}
			h.push('<span class="hx">' + esc(spec.x.label) + ': ' +
			       esc(spec.x.categories ? spec.x.categories[d.x] || '' :
				   withUnit(d.x, spec.x.unit)) + '</span>');
			d.series.forEach(function (s) {
				if (!s.isVisible || s.y === null || s.y === undefined || isNaN(s.y))
					return;
				h.push(' <span class="hv" data-series="' + esc(s.label) + '" data-value="' +
				       esc(s.y) + '" style="color:' + esc(s.color) + '">' + esc(s.label) +
				       ': ' + esc(withUnit(s.y, spec.y.unit)) + '</span>');
			});
			return h.join('');
		};
	}

	/* bars, one per arm, centred on the arm's x */
	function barPlotter(e) {
		var g = e.dygraph, ctx = e.drawingContext, y0 = g.toDomYCoord(0);
		var w = (g.toDomXCoord(0.35) - g.toDomXCoord(-0.35));

		ctx.fillStyle = e.color;
		e.points.forEach(function (p) {
			if (p.yval === null || isNaN(p.yval))
				return;
			ctx.fillRect(p.canvasx - w / 2, p.canvasy, w, y0 - p.canvasy);
		});
	}

	/* x on the canvas (dygraphs' toDomXCoord ignores a log x axis) */
	function domX(g, area, x) {
		return area.x + g.toPercentXCoord(x) * area.w;
	}

	function faultShading(spec) {
		return function (ctx, area, g) {
			(spec.faults || []).forEach(function (f) {
				var a = domX(g, area, f.from);
				var b = f.to === null ? area.x + area.w : domX(g, area, f.to);

				a = Math.max(a, area.x);
				b = Math.min(b, area.x + area.w);
				if (b <= a)
					return;
				ctx.fillStyle = 'rgba(255, 68, 170, 0.15)';
				ctx.fillRect(a, area.y, b - a, area.h);
			});
		};
	}

	function options(spec, series, values) {
		var o = {
			labels: [spec.x.label].concat(series.map(function (s) { return s.name; })),
			colors: series.map(function (s) { return s.color; }),
			xlabel: spec.x.label + (spec.x.unit ? ' [' + spec.x.unit + ']' : '') +
				(spec.x.log ? ' (log)' : ''),
			ylabel: spec.y.label + (spec.y.unit ? ' [' + spec.y.unit + ']' : '') +
				(spec.y.log ? ' (log)' : ''),
			labelsDiv: values,
			legend: 'always',
			legendFormatter: legend(spec),
			connectSeparatedPoints: true,
			stepPlot: spec.kind === 'step',
			strokeWidth: 2,
			highlightCircleSize: 4,
			series: {},
			axes: {
				x: { logscale: !!spec.x.log, axisLabelFormatter: tick,
				     valueFormatter: function (v) { return withUnit(v, spec.x.unit); } },
				y: { logscale: !!spec.y.log, axisLabelFormatter: tick,
				     valueFormatter: function (v) { return withUnit(v, spec.y.unit); } }
			},
			underlayCallback: faultShading(spec)
		};

		series.forEach(function (s) {
			o.series[s.name] = s.dash ? { strokePattern: [2, 3], strokeWidth: 1.5 } : {};
		});
		if (spec.y.min !== undefined || spec.y.max !== undefined)
			o.valueRange = [spec.y.min === undefined ? null : spec.y.min,
					spec.y.max === undefined ? null : spec.y.max];
		if (spec.kind === 'bar') {
			var cats = spec.x.categories || [];

			o.plotter = barPlotter;
			o.connectSeparatedPoints = false;
			o.dateWindow = [-0.5, cats.length - 0.5];
			o.includeZero = true;
			o.axes.x.ticker = function () {
				return cats.map(function (c, i) { return { v: i, label: esc(c) }; });
			};
			o.axes.x.valueFormatter = function (v) { return cats[v] || ''; };
			o.interactionModel = {};	/* categories: nothing to zoom */
		}
		return o;
	}

	function build(el) {
		var spec = JSON.parse(el.textContent), fig = el.closest('figure');
		var div = fig.querySelector('.graph'), values = fig.querySelector('.values');
		var boxes = fig.querySelectorAll('.arms input[type=checkbox]');
		var series = spec.views && spec.views.length ? spec.views[0].series : spec.series;
		var g = new Dygraph(div, rows(series, spec.gap || 0), options(spec, series, values));
		/* what the page shows, for the boxes, the views and tests */
		var chart = window.rtbCharts[spec.id] = { graph: g, spec: spec, series: series };

		/* the check boxes onto the shown series: an arm's (p50 and max) go together */
		function showArms() {
			boxes.forEach(function (cb) {
				chart.series.forEach(function (s, k) {
					if (s.arm === cb.dataset.arm)
						g.setVisibility(k, cb.checked);
				});
			});
		}
		boxes.forEach(function (cb) { cb.addEventListener('change', showArms); });
		var reset = fig.querySelector('button.reset');

		if (reset)
			reset.addEventListener('click', function () { g.resetZoom(); });
		var sel = fig.querySelector('select.view');

		if (sel)
			sel.addEventListener('change', function () {
				chart.series = spec.views[sel.selectedIndex].series;
				g.updateOptions({ file: rows(chart.series, spec.gap || 0),
						  labels: [spec.x.label].concat(chart.series.map(function (s) {
							  return s.name; })),
						  colors: chart.series.map(function (s) { return s.color; }) });
				showArms();
			});
	}

	window.rtbCharts = {};
	document.querySelectorAll('script.chart-data').forEach(function (el) {
		try {
			build(el);
		} catch (err) {
			var fig = el.closest('figure');

			if (fig)
				fig.querySelector('.graph').textContent = 'this chart could not be drawn: ' + err;
			throw err;
		}
	});
})();
