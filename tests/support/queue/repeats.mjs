// The real run repeated: one run's table hides how much n8n's own timing moves a policy (the sleep
// loop made 903 requests in one run and 604 in another), so each cell is the spread over the runs
// beside the simulator's single value (it is deterministic for the scenario's seed), and `agree`
// counts the runs that were within the tolerance rather than judging one of them.
import { FIELDS, compare, fmt } from './report.mjs';

/** One entry per policy: every run's figures, the simulator's, and how many runs agreed. */
export function summarize(reals, sim, policies) {
	const perRun = reals.map((real) => compare(real, sim, policies));
	return policies.map((policy, i) => {
		const rows = perRun.map((rs) => rs[i]);
		return {
			policy,
			label: rows[0].label,
			sim: rows[0].sim,
			runs: rows.map((r) => r.real),
			agree: rows.map((r) => r.agree),
			agreed: rows.filter((r) => r.agree).length,
			// How long an execution waited in n8n's queue before its first request: when n8n cannot
			// keep up with the arrivals, executions reach the vendor late and miss the outage.
			dispatch_p50_ms: reals.map((real) => real.results[policy].dispatch_ms?.p50 ?? null),
			spread: Object.fromEntries(FIELDS.map(([, k]) => [k, stats(rows.map((r) => r.real[k]))])),
		};
	});
}

/** min, median, max of one figure over the runs; `missing` counts runs without it (nothing done). */
export function stats(values) {
	const v = values.filter((x) => x != null).sort((a, b) => a - b);
	if (!v.length) return { min: null, median: null, max: null, missing: values.length };
	const mid = v.length >> 1;
	const median = v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
	return { min: v[0], median, max: v[v.length - 1], missing: values.length - v.length };
}

/** `127` when every run gave the same, `604–903` otherwise; `or -` when some run had none. */
export function range({ min, max, missing }) {
	if (min == null) return '-';
	const r = min === max ? fmt(min) : `${fmt(min)}–${fmt(max)}`;
	return missing ? `${r} or -` : r;
}

export function spreadTable(summary) {
	const n = summary[0]?.runs.length ?? 0;
	const head = ['policy', ...FIELDS.map(([h]) => h), 'agree'];
	const body = summary.map((s) => [
		s.label,
		...FIELDS.map(([, k]) => `${range(s.spread[k])} / ${fmt(s.sim[k])}`),
		`${s.agreed} of ${n}`,
	]);
	const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
	const line = (cells) =>
		cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
	return [
		`each cell: real n8n over ${n} run${n === 1 ? '' : 's'} (min–max) / simulator; agree = runs with requests and in-outage requests within 20% of the simulator (within 2 under 10)`,
		line(head),
		widths.map((w) => '-'.repeat(w)).join('  '),
		...body.map(line),
	].join('\n');
}

/**
 * Run by run: the two figures `agree` judges, the ban, and the median wait from webhook to first
 * request, so the spread reads back to its runs and to how fast n8n dispatched them.
 */
export function perRunLines(summary) {
	const each = (s, k) => s.runs.map((r) => fmt(r[k])).join(', ');
	return summary.map(
		(s) =>
			`${s.label}: requests ${each(s, 'requests')}; in outage ${each(s, 'requests_in_outage')}; banned s ${each(s, 'banned_s')}; webhook to first request p50 ms ${s.dispatch_p50_ms.join(', ')}; agree ${s.agree.map((a) => (a ? 'yes' : 'no')).join(', ')}`,
	);
}
