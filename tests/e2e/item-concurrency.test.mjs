// Item Concurrency Auto (Call Chain 2.1 at its defaults) in a real n8n, counted at loopback
// vendors: a vendor that takes 4 calls at once and answers 429 + Retry-After: 1 above that has
// every item served and none deferred, with few 429s; a healthy vendor gets many calls at once; a
// dead one gets exactly the breaker's threshold whatever the timing of its failures. Version 2
// keeps what it had: one item at a time, and no waiting in line. Counts only: the wall times are
// scripts/bench-concurrency.mjs's.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { n8nInstall, n8nInstance, branchesWorkflow, outputs, uid } from '../support/n8n.mjs';
import { startProviders } from '../support/providers.mjs';

const major = Number(process.env.N8N_MAJOR ?? 2);
const tag = uid().slice(0, 8);
let providers, base, run;

const chain = (name, path, items, typeVersion = 2.1, extra = {}) => ({
	name,
	items,
	typeVersion,
	parameters: {
		providers: { provider: [{ name: `${name}-${tag}`, url: `${base}${path}` }] },
		...extra,
	},
});

/** Get Provider State or Get Metrics after a branch, on the branch's provider. */
const then = (name, operation, of) => ({
	name,
	typeVersion: 2.1,
	parameters: { operation, providers: { provider: [{ name: `${of}-${tag}` }] } },
});

before(async () => {
	providers = await startProviders();
	base = `http://127.0.0.1:${providers.port}`;
	const n8n = n8nInstance(n8nInstall(major));
	const wf = branchesWorkflow(`itemconc${tag}`, n8n.nodeType, [
		{
			...chain('capacity 4', `/cap?k=4&id=k4-${tag}`, 120),
			then: [then('capacity 4 state', 'getState', 'capacity 4')],
		},
		{
			...chain('healthy', `/healthy?id=ok-${tag}`, 60),
			then: [then('healthy metrics', 'getMetrics', 'healthy')],
		},
		chain('dead', `/dead?id=dead-${tag}`, 30),
		chain('healthy v2', `/healthy?id=ok2-${tag}`, 6, 2),
		chain('capacity 4 v2', `/cap?k=4&id=k4v2-${tag}`, 20, 2, { itemConcurrency: 10 }),
	]);
	n8n.importWorkflow(wf);
	const done = await n8n.execute(wf.id, { timeoutMs: 600_000 });
	assert.ok(done.run, done.log.slice(-4000));
	run = done.run;
});
after(async () => providers?.close());

const placed = (name) => outputs(run, name).map((o) => (o ?? []).map((i) => i.json));

test('a vendor taking 4 calls at once (429 + Retry-After: 1 above): every item served, none deferred, at most 10 % of requests answered 429', () => {
	const [served, deferred, failed] = placed('capacity 4');
	const s = providers.capacity('/cap', `k4-${tag}`);
	console.log(
		`n8n ${major}: ${served.length} served, ${deferred.length} deferred; ${s.calls} requests, ${s.r429} answered 429`,
	);
	assert.equal(
		served.length,
		120,
		JSON.stringify(deferred[0]?._resilience ?? failed[0] ?? null).slice(0, 800),
	);
	assert.equal(deferred.length + failed.length, 0);
	assert.ok(s.r429 <= 0.1 * s.calls, `${s.r429} of ${s.calls} requests answered 429`);
	// The items that waited say so: a wait in line, not a deferral.
	const waits = served.flatMap((j) => j._resilience.attempts.map((a) => a.wait_cause));
	assert.ok(waits.includes('retry_after'), 'the 429s were waited out');
});

test('a healthy vendor gets many calls at once: the window grows past the threshold, and the run data shows it', () => {
	const [served] = placed('healthy');
	const s = providers.capacity('/healthy', `ok-${tag}`);
	console.log(`n8n ${major}: healthy vendor saw at most ${s.most} calls at once`);
	assert.equal(served.length, 60);
	assert.ok(s.most > 5, `at most ${s.most} at once`);
	const last = served.map((j) => j._resilience.concurrency[`healthy-${tag}`]);
	assert.ok(Math.max(...last) > 5, `the window in the run data: ${last.slice(-5)}`);
});

test('a dead vendor failing after a random 0-300 ms gets exactly the threshold (5); every item leaves deferred, the items that never called it saying circuit_open', () => {
	const [served, deferred, failed] = placed('dead');
	assert.equal(providers.capacity('/dead', `dead-${tag}`).calls, 5);
	assert.equal(served.length, 0);
	assert.equal(deferred.length + failed.length, 30);
	// The items that never called it skip it as its open breaker, as at Item Concurrency 1.
	const skippedOnly = [...deferred, ...failed]
		.map((i) => i._resilience)
		.filter((r) => r.attempts.length === 0);
	assert.ok(skippedOnly.length >= 25, `${skippedOnly.length} items made no call`);
	for (const r of skippedOnly) {
		assert.deepEqual(
			r.skipped.map((k) => k.reason),
			['circuit_open'],
			JSON.stringify(r.skipped),
		);
		assert.ok(Date.parse(r.skipped[0].until) > Date.now() - 60_000, r.skipped[0].until);
	}
});

test('version 2 keeps what it had: one item at a time, and a 429 defers the items behind it', () => {
	assert.equal(providers.capacity('/healthy', `ok2-${tag}`).most, 1, 'Item Concurrency 1');
	const [served, deferred] = placed('capacity 4 v2');
	assert.ok(deferred.length > 0, `${served.length} served, ${deferred.length} deferred`);
	assert.equal(deferred[0]._resilience.reason, 'rate_limited');
	assert.equal(served[0]._resilience.concurrency, undefined);
});

test("the window the fleet learned is on the store: Get Provider State shows it near K with its congestion, Get Metrics' gauge shows the healthy vendor's", () => {
	const [[state]] = placed('capacity 4 state');
	console.log(
		`n8n ${major}: learned ${state.concurrency} at K = 4, congested at ${state.concurrency_congested_at}`,
	);
	assert.ok(state.concurrency >= 2 && state.concurrency <= 6, JSON.stringify(state));
	assert.ok(state.concurrency_congested_at, 'it met congestion');
	const [[{ metrics }]] = placed('healthy metrics');
	const line = metrics
		.split('\n')
		.find((l) =>
			l.startsWith(
				`resilient_provider_concurrency_limit{scope="global",provider="healthy-${tag}"}`,
			),
		);
	assert.ok(line && Number(line.split(' ').at(-1)) > 5, line);
});
