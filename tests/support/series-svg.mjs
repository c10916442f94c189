// A picture of Prometheus series, drawn here (Grafana is not installable on this machine): stacked
// panels of lines over one time axis, each series in its own colour with a legend. Plain SVG.

const COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#17becf'];
const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * `panels`: [{ title, unit?, steps?: true, ticks?: [[value, label]], series: [{ name, points: [[t, v]] }] }]
 * (t in seconds, as Prometheus's query_range gives it); `marks`: [{ t, label }] drawn across all.
 */
export function seriesSvg(panels, { width = 900, panelHeight = 170, marks = [] } = {}) {
	const all = panels.flatMap((p) => p.series.flatMap((s) => s.points.map(([t]) => t)));
	const [t0, t1] = [Math.min(...all), Math.max(...all)];
	const left = 70;
	const right = 20;
	const top = 30;
	const gap = 80;
	const w = width - left - right;
	const height = top + panels.length * (panelHeight + gap);
	const x = (t) => left + ((t - t0) / Math.max(1, t1 - t0)) * w;
	const out = [
		`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="12">`,
		`<rect width="${width}" height="${height}" fill="white"/>`,
	];
	panels.forEach((p, k) => {
		const y0 = top + k * (panelHeight + gap);
		const values = p.series.flatMap((s) => s.points.map(([, v]) => v));
		const max = p.max ?? Math.max(1e-9, ...values);
		const y = (v) => y0 + panelHeight - (v / max) * panelHeight;
		out.push(
			`<text x="${left}" y="${y0 - 10}" font-size="14" font-weight="bold">${esc(p.title)}</text>`,
		);
		out.push(
			`<rect x="${left}" y="${y0}" width="${w}" height="${panelHeight}" fill="none" stroke="#bbb"/>`,
		);
		const ticks = p.ticks ?? [0, max / 2, max].map((v) => [v, `${+v.toFixed(2)}${p.unit ?? ''}`]);
		for (const [v, label] of ticks) {
			out.push(`<line x1="${left}" x2="${left + w}" y1="${y(v)}" y2="${y(v)}" stroke="#eee"/>`);
			out.push(`<text x="${left - 6}" y="${y(v) + 4}" text-anchor="end">${esc(label)}</text>`);
		}
		for (const m of marks.filter((m) => m.t >= t0 && m.t <= t1)) {
			out.push(
				`<line x1="${x(m.t)}" x2="${x(m.t)}" y1="${y0}" y2="${y0 + panelHeight}" stroke="#999" stroke-dasharray="4 3"/>`,
			);
			if (k === 0)
				out.push(`<text x="${x(m.t) + 3}" y="${y0 + 12}" fill="#666">${esc(m.label)}</text>`);
		}
		p.series.forEach((s, i) => {
			const c = COLOURS[i % COLOURS.length];
			const pts = [];
			s.points.forEach(([t, v], j) => {
				if (p.steps && j > 0) pts.push(`${x(t).toFixed(1)},${y(s.points[j - 1][1]).toFixed(1)}`);
				pts.push(`${x(t).toFixed(1)},${y(v).toFixed(1)}`);
			});
			out.push(`<polyline fill="none" stroke="${c}" stroke-width="2" points="${pts.join(' ')}"/>`);
			// Legends in rows of five.
			const lx = left + 10 + (i % 5) * 150;
			const ly = y0 + panelHeight + 19 + Math.floor(i / 5) * 16;
			out.push(`<rect x="${lx}" y="${ly - 5}" width="12" height="3" fill="${c}"/>`);
			out.push(`<text x="${lx + 16}" y="${ly}">${esc(s.name)}</text>`);
		});
	});
	out.push(
		`<text x="${left}" y="${height - 8}" fill="#666">time (s since the run began): 0 to ${Math.round(t1 - t0)}</text>`,
	);
	out.push('</svg>');
	return `${out.join('\n')}\n`;
}
