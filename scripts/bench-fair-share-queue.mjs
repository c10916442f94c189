#!/usr/bin/env node
// Two customers weighted 3:1 sharing a scarce vendor across the workers of real n8n queue mode
// (issue 59, Fair Share Key; held by tests/e2e/fair-share-queue.test.mjs, this prints the figures
// beside the goals): one main and two workers x 10 slots (Bull on Redis, n8n's
// data in Postgres). Four executions fired at a webhook at once, two per customer, each a batch
// of rows through Call Chain 2.2 at its defaults on one Redis store, its Fair Share Key the row's
// customer and its weight 3 for `a`, 1 for `b`, against a loopback OpenAI-compatible vendor that
// takes K = 4 requests at once, answers in 300 ms and 429 + Retry-After: 1 above
// (tests/support/tpm-vendor.mjs). Each customer has more work in flight than its part, so a
// split by who asks first would be about half each. Goals: `a` gets 75 +- 10 % of the vendor's
// calls in every 5-second window while both have work (after the first 5 s) where the vendor
// served at least two thirds of what it takes, 75 +- 5 % over them; every item served or deferred
// with its retry_at, none failed; at most 10 % of the requests answered 429.
//   (eval "$(bash scripts/lib/services.sh start)"; node scripts/bench-fair-share-queue.mjs --n8n 1;
//    bash scripts/lib/services.sh stop "$RPC_SERVICES_DIR")
// Prints each figure beside its goal; exits 0 when it measured, 1 if a run went wrong.
import {
	runFairShareQueue,
	K,
	LATENCY_MS,
	WORKERS,
	SLOTS,
} from '../tests/support/fair-share-queue.mjs';
import { perWindow, WINDOW_MS } from '../tests/support/fair-split.mjs';

const args = process.argv.slice(2);
const major = Number(args.includes('--n8n') ? args[args.indexOf('--n8n') + 1] : 2);
const log = (l) => console.error(`[bench-fair-share-queue] ${l}`);

try {
	print(await runFairShareQueue(major, log));
} catch (error) {
	console.error(error);
	process.exitCode = 1;
}

function print({ s, by, retryAt, execs, items }) {
	const row = (what, value, goal, met) =>
		console.log(
			`${what.padEnd(62)} ${String(value).padStart(22)}   ${goal.padEnd(16)} ${met ? 'met' : 'MISSED'}`,
		);
	console.log(
		`\nTwo customers weighted 3:1, n8n ${major} queue mode (${WORKERS} workers x ${SLOTS}), a vendor taking ${K} at once\n`,
	);
	console.log(`customer a's share per 5 s window while both had work: ${perWindow(s)}`);
	const full = (K * WINDOW_MS) / LATENCY_MS;
	const counted = s.shares.filter((w) => w.calls >= (2 * full) / 3);
	const worst = counted.reduce(
		(m, w) => (Math.abs(w.a - 0.75) > Math.abs(m - 0.75) ? w.a : m),
		0.75,
	);
	row(
		'customer a over the time both had work',
		`${(100 * s.overall).toFixed(1)} %`,
		'75 +- 5 %',
		Math.abs(s.overall - 0.75) <= 0.05,
	);
	row(
		`the window furthest from 75 % (of ${counted.length} at >= 2/3 of K's calls)`,
		`${(100 * worst).toFixed(1)} %`,
		'75 +- 10 %',
		counted.length >= 3 && Math.abs(worst - 0.75) <= 0.1,
	);
	const count = (out) => execs.reduce((n, e) => n + (by[e][out] ?? 0), 0);
	row(
		'items served / deferred / failed',
		`${count(0)}/${count(1)}/${count(2)} of ${items}`,
		'all leave, none failed',
		count(0) + count(1) === items && count(2) === 0 && retryAt,
	);
	row('requests answered 429', `${s.r429} of ${s.requests}`, '<= 10 %', s.r429 <= 0.1 * s.requests);
}
