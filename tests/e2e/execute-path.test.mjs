// The node's execute path inside a real n8n (N8N_MAJOR=2: 2.41.1 on Node 24; 1: 1.123.81 on
// Node 20), against real loopback providers. Every scenario is a branch of one workflow, run by
// one `n8n execute`; every count is taken at the provider.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startProviders } from '../support/providers.mjs';
import { n8nInstall, n8nInstance, branchesWorkflow, outputs, uid } from '../support/n8n.mjs';

const major = Number(process.env.N8N_MAJOR ?? 2);
let providers, n8n, run, base;
const at = (route, id) => providers.arrivals.filter((a) => a.route === route && a.id === id);
const fast = { baseMs: 50, capMs: 200 };

// name -> { parameters, items }
const S = {};
function scenario(name, items, providerList, extra = {}) {
	S[name] = { name, items, providerList, extra };
}
const id = (name) => `${name}-${uid()}`;

scenario('retry 503 then success', 1, [{ name: 'flaky503', route: '/fail-then-ok', q: 'n=1' }], {
	retryPolicy: fast,
});
scenario('422 not retried nor counted', 3, [{ name: 'strict422', route: '/status/422' }], {
	breaker: { threshold: 1 },
});
scenario('retry-after seconds', 1, [{ name: 'ra-seconds', route: '/flaky-ra', q: 'n=1' }]);
scenario('retry-after date', 1, [{ name: 'ra-date', route: '/flaky-date', q: 'n=1' }]);
scenario('3600 s hint moves on', 3, [
	{ name: 'maint', route: '/hint3600' },
	{ name: 'backup', route: '/ok' },
]);
scenario(
	'POST without key',
	1,
	[{ name: 'post-nokey', route: '/fail-then-ok', q: 'n=5', method: 'POST', bodyJson: '{"a":1}' }],
	{ retryPolicy: { ...fast, addIdempotencyKey: false } },
);
scenario(
	'POST with key',
	1,
	[{ name: 'post-key', route: '/fail-then-ok', q: 'n=2', method: 'POST', bodyJson: '{"a":1}' }],
	{ retryPolicy: fast },
);
scenario('slow drip cut at deadline', 1, [
	{ name: 'drip', route: '/drip', deadlineMs: 1500, maxAttempts: 1 },
	{ name: 'after-drip', route: '/ok' },
]);
scenario(
	'deferred when all cooling',
	6,
	[{ name: 'dead-only', route: '/always500', maxAttempts: 1 }],
	{ breaker: { threshold: 1, openMs: 60000 }, retryPolicy: { deferSpreadMs: 10000 } },
);
scenario(
	'policy lives in the engine',
	4,
	[
		{ name: 'dead-uncounted', route: '/always500', maxAttempts: 1 },
		{ name: 'fb2', route: '/ok' },
	],
	{ breaker: { threshold: 1 }, retryPolicy: { healthStatuses: '408' } },
);
scenario(
	'state after a trip',
	4,
	[
		{ name: 'tripme', route: '/always500', maxAttempts: 1 },
		{ name: 'spare', route: '/ok' },
	],
	{ breaker: { threshold: 2 } },
);
scenario('bad parameter names the field', 1, [{ name: 'bad', route: '/ok' }], {
	breaker: { threshold: -3 },
});

before(async () => {
	providers = await startProviders();
	base = `http://127.0.0.1:${providers.port}`;
	n8n = n8nInstance(n8nInstall(major));
	const branches = Object.values(S).map((s) => {
		s.id = id(s.providerList[0].name);
		return {
			name: s.name,
			items: s.items,
			parameters: {
				providers: {
					provider: s.providerList.map((p) => ({
						name: `${p.name}-${s.id}`,
						url: `${base}${p.route}?id=${s.id}${p.q ? `&${p.q}` : ''}`,
						...(p.method ? { method: p.method } : {}),
						...(p.bodyJson ? { bodyJson: p.bodyJson } : {}),
						...(p.deadlineMs ? { deadlineMs: p.deadlineMs } : {}),
						...(p.maxAttempts ? { maxAttempts: p.maxAttempts } : {}),
					})),
				},
				...s.extra,
			},
			nodeSettings: s.name.startsWith('bad') ? { onError: 'continueRegularOutput' } : {},
			then:
				s.name === 'state after a trip'
					? [
							{
								name: 'get state',
								parameters: {
									operation: 'getState',
									providers: {
										provider: s.providerList.map((p) => ({
											name: `${p.name}-${s.id}`,
											url: `${base}${p.route}`,
										})),
									},
								},
							},
							{
								name: 'reset',
								parameters: {
									operation: 'reset',
									resetProviders: `tripme-${s.id}`,
									providers: {
										provider: s.providerList.map((p) => ({
											name: `${p.name}-${s.id}`,
											url: `${base}${p.route}`,
										})),
									},
								},
							},
							{
								name: 'state after reset',
								parameters: {
									operation: 'getState',
									providers: {
										provider: s.providerList.map((p) => ({
											name: `${p.name}-${s.id}`,
											url: `${base}${p.route}`,
										})),
									},
								},
							},
						]
					: [],
		};
	});
	const wf = branchesWorkflow(`execpath${uid()}`, n8n.nodeType, branches);
	n8n.importWorkflow(wf);
	const t0 = Date.now();
	({ run } = await n8n.execute(wf.id));
	console.log(
		`n8n ${major}: one execution of ${branches.length} scenarios took ${Date.now() - t0} ms`,
	);
	assert.ok(run, 'n8n produced run data');
});
after(async () => providers?.close());

const out = (name) => outputs(run, name);
const route = (name, k = 0) => S[name].providerList[k].route;

test('every input item leaves on exactly one output, with its pairedItem', () => {
	for (const s of Object.values(S)) {
		const o = out(s.name);
		const paired = o
			.flat()
			.map((x) => x.pairedItem.item)
			.sort((a, b) => a - b);
		assert.deepEqual(paired, [...Array(s.items).keys()], s.name);
	}
});

test('a 503 is retried and then succeeds', () => {
	assert.equal(at(route('retry 503 then success'), S['retry 503 then success'].id).length, 2);
	assert.equal(out('retry 503 then success')[0].length, 1);
});

test('a 422 is neither retried nor counted against the provider', () => {
	const hits = at(route('422 not retried nor counted'), S['422 not retried nor counted'].id);
	assert.equal(hits.length, 3, 'one call per item, threshold 1 never tripped');
	const [ok, deferred, failed] = out('422 not retried nor counted');
	assert.equal(failed.length, 3);
	assert.equal(failed[0].json.reason, 'non_retryable');
	assert.ok(failed[0].json._resilience, 'failed items carry more than error/message');
});

test('Retry-After in seconds and as an HTTP-date is respected, measured at the server', () => {
	const s = at('/flaky-ra', S['retry-after seconds'].id);
	assert.equal(s.length, 2);
	assert.ok(s[1].t - s[0].t >= 1000, `gap ${s[1].t - s[0].t} ms`);
	const d = at('/flaky-date', S['retry-after date'].id);
	assert.equal(d.length, 2);
	assert.ok(d[1].t - d[0].t >= 1000, `date gap ${d[1].t - d[0].t} ms`);
	assert.equal(out('retry-after date')[0][0].json._resilience.attempts[0].retry_after, true);
});

test('a 3600 s hint moves on at once and the provider gets no further call', () => {
	assert.equal(at('/hint3600', S['3600 s hint moves on'].id).length, 1);
	const [ok] = out('3600 s hint moves on');
	assert.equal(ok.length, 3);
	assert.ok(ok.every((x) => x.json._resilience.fallback));
	assert.ok(
		ok[0].json._resilience.totalMs < 2000,
		`first item took ${ok[0].json._resilience.totalMs} ms`,
	);
});

test('POST without an idempotency key is not retried; with one it is retried with the same key', () => {
	const nokey = at('/fail-then-ok', S['POST without key'].id);
	assert.equal(nokey.length, 1);
	assert.equal(nokey[0].idempotencyKey, null);
	const keyed = at('/fail-then-ok', S['POST with key'].id);
	assert.equal(keyed.length, 3);
	assert.ok(
		keyed[0].idempotencyKey && keyed.every((a) => a.idempotencyKey === keyed[0].idempotencyKey),
	);
});

test('a slow-drip response is cut at the per-attempt deadline', () => {
	const [ok] = out('slow drip cut at deadline');
	const meta = ok[0].json._resilience;
	assert.equal(meta.attempts[0].outcome, 'TIMEOUT');
	assert.ok(meta.totalMs < 4000, `took ${meta.totalMs} ms`);
	assert.equal(meta.provider, `after-drip-${S['slow drip cut at deadline'].id}`);
});

test('deferred when every provider is cooling, with jittered retry_at', () => {
	const [ok, deferred] = out('deferred when all cooling');
	assert.equal(deferred.length, 6);
	assert.equal(
		at('/always500', S['deferred when all cooling'].id).length,
		1,
		'tripped at once, then skipped',
	);
	const retryAt = deferred.map((x) => Date.parse(x.json.retry_at));
	assert.ok(new Set(retryAt).size >= 5, `distinct retry_at: ${new Set(retryAt).size}`);
	assert.ok(deferred.slice(1).every((x) => x.json.reason === 'circuit_open'));
	assert.equal(deferred[0].json.n, 1, 'the input item json travels with it');
});

test('policy lives in the engine: 500 no longer counting against health keeps the provider in use', () => {
	assert.equal(
		at('/always500', S['policy lives in the engine'].id).length,
		4,
		'never tripped: each item tries it',
	);
});

test('Get Provider State shows the open breaker and the counters; Reset Provider clears them', () => {
	const [state] = out('get state');
	const [trip, spare] = state.map((x) => x.json);
	assert.equal(trip.state, 'open');
	assert.equal(trip.state_gauge, 2);
	assert.equal(trip.trips, 1);
	assert.deepEqual(trip.counters, {
		calls: 2,
		failures: 2,
		rejections: 2,
		transitions: 1,
		retries: 0,
		rate_limited_429: 0,
		give_ups: 0,
		// The spare served every item: none was deferred.
		deferrals: 0,
		retry_budget_exhausted: 0,
		hedges: 0,
		hedge_wins: 0,
		// No token limits or prices: nothing counted in tokens or money.
		tokens_input: 0,
		tokens_output: 0,
		tokens_estimated: 0,
		spend: 0,
		token_limited: 0,
	});
	assert.equal(spare.state_gauge, 0);
	assert.equal(spare.counters.calls, 4);
	assert.deepEqual(
		out('reset')[0].map((x) => x.json.provider),
		[`tripme-${S['state after a trip'].id}`],
	);
	const [after] = out('state after reset');
	assert.equal(after[0].json.state_gauge, 0);
	assert.equal(after[0].json.counters.calls, 0);
	assert.equal(after[1].json.counters.calls, 4, 'only the named provider was reset');
});

test('a bad parameter is a clear error naming the field', () => {
	const [ok, deferred, failed] = out('bad parameter names the field');
	const all = [...ok, ...deferred, ...failed];
	assert.equal(all.length, 1);
	assert.match(JSON.stringify(all[0].json), /threshold/);
});
