// How a scarce vendor's calls split between two callers (issue 59, fair share), read from the
// loopback vendor's log (tests/support/tpm-vendor.mjs, `stats(route).log`): each caller's served
// calls by model, in 5-second windows while both had work. The fair-share tests' one reading.
import assert from 'node:assert/strict';

export const WINDOW_MS = 5_000;

/** The share of `sa` in the calls served in each whole 5-second window from `from` to `to`. */
function windows(sa, sb, from, to) {
	const shares = [];
	for (let w = from; w + WINDOW_MS <= to; w += WINDOW_MS) {
		const n = (s) => s.filter((e) => e.end >= w && e.end < w + WINDOW_MS).length;
		const [na, nb] = [n(sa), n(sb)];
		shares.push({ a: na / Math.max(1, na + nb), calls: na + nb });
	}
	return shares;
}

/**
 * The vendor's calls for models `a` and `b` (a model, or a list: one per execution of the caller)
 * while both had work: from the later first answer to the earliest last one of any model (every
 * execution still had work: one that ran out asks for less than its part, and max-min rightly
 * gives the rest away), whole windows only, after the later one's first 5 s (its ramp: the other
 * gives back as its calls end; one run had 39 % of 51 calls there).
 */
export function split(vendor, route, a, b) {
	const log = vendor.stats(route).log;
	const [ma, mb] = [[a].flat(), [b].flat()];
	const served = (models) => log.filter((e) => models.includes(e.model) && e.status === 200);
	const [sa, sb] = [served(ma), served(mb)];
	const from = Math.max(sa[0].end, sb[0].end) + WINDOW_MS;
	const to = Math.min(...[...ma, ...mb].map((m) => served([m]).at(-1).end));
	const within = (s) => s.filter((e) => e.end >= from && e.end < to).length;
	return {
		sa,
		sb,
		from,
		to,
		shares: windows(sa, sb, from, to),
		overall: within(sa) / (within(sa) + within(sb)),
		r429: log.filter((e) => e.status === 429).length,
		requests: log.length,
	};
}

/**
 * `a`'s part held: `target` ± 5 % over the time both had work, ± 10 % in every window where the
 * vendor (taking `k` at once, answering in `latencyMs`) served at least two thirds of what it
 * takes (a window where a 429 closed the provider's gate for every worker, a second of
 * Retry-After, serves half its calls or fewer, tilted by who calls first once it opens: printed,
 * not held), at most 10 % of the requests answered 429.
 */
export function holdSplit(s, target, { k, latencyMs }) {
	assert.ok(s.shares.length >= 3, `both had work together for ${s.to - s.from} ms`);
	assert.ok(Math.abs(s.overall - target) <= 0.05, `a: ${(100 * s.overall).toFixed(1)} %`);
	const full = (k * WINDOW_MS) / latencyMs;
	for (const w of s.shares.filter((w) => w.calls >= (2 * full) / 3))
		assert.ok(Math.abs(w.a - target) <= 0.1, JSON.stringify(s.shares));
	assert.ok(s.r429 <= 0.1 * s.requests, `${s.r429} of ${s.requests} answered 429`);
}

/** Each window's share of `a`, for a test's diagnostic. */
export const perWindow = (s) =>
	s.shares.map((w) => `${(100 * w.a).toFixed(0)} % of ${w.calls}`).join(', ');
