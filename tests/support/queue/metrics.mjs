// The figures of one queue-mode run, computed from the vendor's arrival log the way the
// simulator's tally computes them (simulator/src/tally.rs), so the two tables compare.
export function tally(vendor, scenario, { total, lost, unfinished }) {
	const outages = (scenario.vendor.outages ?? []).map((o) => [
		o.from_s * 1000,
		o.to_s == null ? Infinity : o.to_s * 1000,
	]);
	const recovered = vendor.recoveredMs;
	const a = vendor.arrivals;
	const perSecond = new Map();
	for (const x of a)
		if (x.t >= recovered)
			perSecond.set(Math.floor(x.t / 1000), (perSecond.get(Math.floor(x.t / 1000)) ?? 0) + 1);
	const bans = vendor.bans();
	const doneTimes = [...vendor.done.values()];
	return {
		requests: a.length,
		requests_in_outage: a.filter((x) => outages.some(([f, t]) => x.t >= f && x.t < t)).length,
		peak_per_s_after_recovery: perSecond.size ? Math.max(...perSecond.values()) : null,
		over_quota_429: a.filter((x) => x.status === 429).length,
		// Whole bans, as the simulator counts them: a run may end before the vendor lifts one.
		banned_s: bans.reduce((s, [f, u]) => s + (u - f), 0) / 1000,
		last_done_s: doneTimes.length ? Math.max(...doneTimes) / 1000 : null,
		done: vendor.done.size,
		lost,
		unfinished,
		total,
	};
}

/** Executions per worker, from the x-worker tag of the vendor arrivals. */
export function spread(vendor) {
	const by = {};
	for (const x of vendor.arrivals) {
		if (!x.worker) continue;
		(by[x.worker] ??= new Set()).add(x.exec);
	}
	return Object.fromEntries(
		Object.entries(by)
			.sort()
			.map(([w, s]) => [w, s.size]),
	);
}

/** Arrivals per second over time, for the plot. */
export function perSecond(vendor, seconds) {
	const out = new Array(seconds).fill(0);
	for (const x of vendor.arrivals) {
		const s = Math.floor(x.t / 1000);
		if (s < seconds) out[s] += 1;
	}
	return out;
}
