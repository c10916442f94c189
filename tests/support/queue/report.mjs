// The real run beside the simulator's prediction: one row per policy, and a plot.
export const FIELDS = [
	['requests', 'requests'],
	['in outage', 'requests_in_outage'],
	['peak/s after', 'peak_per_s_after_recovery'],
	['429s', 'over_quota_429'],
	['banned s', 'banned_s'],
	['last done s', 'last_done_s'],
	['done', 'done'],
	['lost', 'lost'],
	['unfinished', 'unfinished'],
];

/** Counts agree when within 20% of the prediction; under 10 requests, within 2 (one probe more is 17%). */
export function agrees(real, sim) {
	if (real == null || sim == null) return real === sim;
	return Math.abs(real - sim) <= Math.max(0.2 * Math.max(sim, real), sim < 10 ? 2 : 0);
}

export function compare(real, sim, policies) {
	return policies.map((policy) => {
		const r = real.results[policy].figures;
		const s = sim.policies.find((p) => p.policy === policy);
		if (!s) throw new Error(`the simulator has no policy ${policy}`);
		return {
			policy,
			label: s.label,
			real: r,
			sim: s,
			agree: agrees(r.requests, s.requests) && agrees(r.requests_in_outage, s.requests_in_outage),
		};
	});
}

export const fmt = (v) =>
	v == null ? '-' : typeof v === 'number' && !Number.isInteger(v) ? v.toFixed(1) : String(v);

export function table(rows) {
	const head = ['policy', ...FIELDS.map(([h]) => h), 'agree'];
	const body = rows.map((r) => [
		r.label,
		...FIELDS.map(([, k]) => `${fmt(r.real[k])} / ${fmt(r.sim[k])}`),
		r.agree ? 'yes' : 'NO',
	]);
	const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
	const line = (cells) =>
		cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
	return [
		'each cell: real n8n / simulator; agree = requests and in-outage requests within 20% (within 2 under 10)',
		line(head),
		widths.map((w) => '-'.repeat(w)).join('  '),
		...body.map(line),
	].join('\n');
}

const COLORS = {
	retry_on_fail: '#d62728',
	sleep_loop: '#ff7f0e',
	jitter_only: '#9467bd',
	per_process_breakers: '#1f77b4',
	shared_store: '#2ca02c',
};

/** Arrivals per second at the vendor in the real run (solid) and the simulator's policy labels. */
export function svg(real, sim, policies, scenario) {
	const W = 900,
		H = 360,
		L = 50,
		B = 40,
		T = 30;
	const seconds = Math.max(...policies.map((p) => real.results[p].per_s.length), 1);
	const peak = Math.max(5, ...policies.flatMap((p) => real.results[p].per_s));
	const x = (s) => L + (s / seconds) * (W - L - 20);
	const y = (v) => H - B - (v / peak) * (H - B - T);
	const parts = [
		`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="12">`,
		`<rect width="100%" height="100%" fill="white"/>`,
	];
	parts.push(
		`<text x="${L}" y="18">${esc(scenario.name)}: arrivals per second at the vendor, real n8n queue mode</text>`,
	);
	for (const o of scenario.vendor.outages ?? [])
		parts.push(
			`<rect x="${x(o.from_s)}" y="${T}" width="${x(Math.min(o.to_s ?? seconds, seconds)) - x(o.from_s)}" height="${H - B - T}" fill="#eee"/>`,
		);
	if (scenario.vendor.quota) {
		const q = (scenario.vendor.quota.requests * 1000) / (scenario.vendor.quota.period_ms ?? 1000);
		parts.push(
			`<line x1="${L}" x2="${W - 20}" y1="${y(q)}" y2="${y(q)}" stroke="#999" stroke-dasharray="4 3"/><text x="${W - 120}" y="${y(q) - 4}" fill="#666">vendor quota</text>`,
		);
	}
	parts.push(
		`<line x1="${L}" y1="${H - B}" x2="${W - 20}" y2="${H - B}" stroke="black"/><line x1="${L}" y1="${T}" x2="${L}" y2="${H - B}" stroke="black"/>`,
	);
	for (let s = 0; s <= seconds; s += Math.max(1, Math.round(seconds / 10)))
		parts.push(`<text x="${x(s)}" y="${H - B + 16}" text-anchor="middle">${s}s</text>`);
	for (let v = 0; v <= peak; v += Math.max(1, Math.round(peak / 5)))
		parts.push(`<text x="${L - 6}" y="${y(v) + 4}" text-anchor="end">${v}</text>`);
	policies.forEach((p, i) => {
		const pts = real.results[p].per_s
			.map((v, s) => `${x(s + 0.5).toFixed(1)},${y(v).toFixed(1)}`)
			.join(' ');
		const label = sim.policies.find((q) => q.policy === p)?.label ?? p;
		parts.push(
			`<polyline fill="none" stroke="${COLORS[p] ?? '#000'}" stroke-width="1.6" points="${pts}"/>`,
		);
		parts.push(
			`<text x="${W - 300}" y="${T + 16 + 15 * i}" fill="${COLORS[p] ?? '#000'}">${esc(label)}</text>`,
		);
	});
	parts.push('</svg>');
	return parts.join('\n');
}

const esc = (s) =>
	String(s).replace(
		/[&<>"]/g,
		(c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c],
	);
