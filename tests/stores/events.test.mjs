// Transition events at the store level, on real Redis and Postgres: an event exists iff its
// transition committed (written in the compare-and-set's own script / transaction), two
// consumers of one workflow get it once in total, a consumer that was off gets what it missed
// once, and a transition decided in fail-open memory is not the fleet's (no event).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';
import {
	ROOT,
	engine,
	plan,
	runOne,
	stores,
	closeRedisClients,
	closePostgresPools,
	redisClient,
	postgresPool,
	REDIS_PORT,
	PG_CONNECTION,
	untilOpenWindowEnds,
} from '../support/store-harness.mjs';
import { startProviders } from '../support/providers.mjs';

const require = createRequire(import.meta.url);
const { RedisEventSource } = require(path.join(ROOT, 'dist/lib/trigger/redisEvents.js'));
const { PostgresEventSource } = require(path.join(ROOT, 'dist/lib/trigger/postgresEvents.js'));
const { MemoryEventSource } = require(path.join(ROOT, 'dist/lib/trigger/memoryEvents.js'));

const sources = {
	redis: (scope, consumer) =>
		new RedisEventSource(
			redisClient({ host: '127.0.0.1', port: REDIS_PORT }),
			stores.redis(scope).eventsKey(),
			consumer,
		),
	postgres: (scope, consumer) =>
		new PostgresEventSource(
			postgresPool(PG_CONNECTION),
			PG_CONNECTION,
			'resilient_provider_state',
			scope,
			consumer,
		),
	memory: (scope) => new MemoryEventSource(scope),
};
const open = [];
after(async () => {
	await Promise.all(open.map((s) => s.close()));
	await closeRedisClients();
	await closePostgresPools();
});

async function collect(kind, scope, consumer) {
	const got = [];
	const s = sources[kind](scope, consumer);
	open.push(s);
	await s.start(
		(e) => got.push(JSON.parse(e)),
		(e) => assert.fail(e),
	);
	return { got, close: () => s.close() };
}

const until = async (what, ok, ms = 10_000) => {
	const end = Date.now() + ms;
	while (!ok()) {
		if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
		await new Promise((r) => setTimeout(r, 50));
	}
};

/** A marker event written after the events under test, on a key of its own: events reach a
 * workflow's consumers in the order they were written, so once the marker is in, anything the
 * events under test would bring (a duplicate, a lost write's event) is in too. It bounds the
 * window that proves nothing more comes, instead of a fixed time. */
let markers = 0;
async function marked(store, ...consumers) {
	const n = ++markers;
	const row = { kind: 'breaker', expected: 0, version: 1, json: '{"version":1}' };
	assert.equal(await store.write(`marker-${n}`, [row], JSON.stringify({ marker: n })), true);
	const seen = () => consumers.flatMap((c) => c.got).some((e) => e.marker === n);
	await until(`marker ${n}`, seen);
}
/** A consumer's events but the markers (a consumer that was off gets those it missed too). */
const real = (c) => c.got.filter((e) => e.marker === undefined);

for (const kind of ['redis', 'postgres']) {
	test(`${kind}: one event per transition, claimed once by two consumers of a workflow; a consumer that was off gets it once`, async (t) => {
		const prov = await startProviders();
		t.after(() => prov.close());
		const dead = { url: `http://127.0.0.1:${prov.port}/status/503` };
		const ok = { url: `http://127.0.0.1:${prov.port}/ok` };
		const scope = `ev-${kind}-${Date.now()}`;
		const a = await collect(kind, scope, 'wf-1');
		const b = await collect(kind, scope, 'wf-1');
		const late = await collect(kind, scope, 'wf-2');
		await late.close(); // wf-2 is registered, then off during the transitions
		const p = plan(
			[{ name: 'weird "name" \\ x', url: dead.url }],
			{
				threshold: 2,
				max_attempts: 1,
				open_ms: 300,
				half_open_probes: 1,
			},
			scope,
		);
		const eng = new engine.Engine(p.config);
		const store = stores[kind](scope);
		for (let i = 0; i < 6; i++) await runOne(store, p, eng, `c${i}`);
		await until('the opening', () => a.got.length + b.got.length >= 1);
		// Recovery: after the open window (on the store's clock) a probe succeeds and closes it.
		await untilOpenWindowEnds(store, p.requests[0].name);
		const p2 = { ...p, requests: [{ ...p.requests[0], url: ok.url }] };
		await runOne(store, p2, eng, 'probe');
		await until('the closing', () => a.got.length + b.got.length >= 3);
		await marked(store, a, b); // nothing more may come before it
		const all = [...real(a), ...real(b)].sort((x, y) => x.at_ms - y.at_ms);
		assert.deepEqual(
			all.map((e) => `${e.from}>${e.to}`),
			['closed>open', 'open>half_open', 'half_open>closed'],
		);
		assert.equal(all[0].provider, 'weird "name" \\ x');
		assert.equal(all[0].trips, 1);
		assert.equal(all[0].last_failure, '503');
		// wf-2 comes back: it gets the three it missed, once.
		const back = await collect(kind, scope, 'wf-2');
		await until('the missed events', () => real(back).length >= 3);
		await marked(store, back);
		assert.equal(real(back).length, 3);
		eng.free();
	});

	test(`${kind}: a lost compare-and-set writes no event`, async () => {
		const scope = `ev-race-${kind}-${Date.now()}`;
		const a = await collect(kind, scope, 'wf-race');
		const store = stores[kind](scope);
		const row = { kind: 'breaker', expected: 0, version: 1, json: '{"version":1}' };
		assert.equal(await store.write('p', [row]), true);
		assert.equal(await store.write('p', [row], '{"to":"open","lost":true}'), false);
		const won = { ...row, expected: 1, version: 2, json: '{"version":2}' };
		assert.equal(await store.write('p', [won], '{"to":"open","won":true}'), true);
		await until('the committed event', () => a.got.length >= 1);
		await marked(store, a);
		assert.deepEqual(real(a), [{ to: 'open', won: true }]);
	});

	// Deactivating a workflow closes its trigger; an event it is handing to n8n at that moment
	// must be acknowledged (Redis XACK; Postgres: the claim) before the connection goes, or it
	// stays pending and the group's take-over fires it a second time 30 s later.
	test(`${kind}: a trigger closed while handing an event over settles it: nothing fires again; close waits at most 2 s`, async () => {
		const scope = `ev-close-${kind}-${Date.now()}`;
		const store = stores[kind](scope);
		// A trigger of workflow wf-close whose hand-over of each event to n8n takes `ms`; resolves
		// `handed` when the first one begins.
		const slowTrigger = async (ms) => {
			let handing;
			const handed = new Promise((r) => (handing = r));
			const got = [];
			const s = sources[kind](scope, 'wf-close');
			open.push(s);
			await s.start(
				async (e) => {
					got.push(JSON.parse(e).n);
					handing();
					await new Promise((r) => setTimeout(r, ms).unref());
				},
				(e) => assert.fail(e),
			);
			return { s, got, handed };
		};
		// n8n's emit is quick; a slower hand-over makes the close land inside it every time.
		const { s, got, handed } = await slowTrigger(300);
		const row = (v) => ({ kind: 'breaker', expected: v - 1, version: v, json: `{"version":${v}}` });
		assert.equal(await store.write('p', [row(1)], '{"to":"open","n":1}'), true);
		await handed;
		await s.close();
		assert.deepEqual(got, [1]);
		if (kind === 'redis') {
			// What a take-over would fire: the group's pending entries, however short their idle.
			const r = redisClient({ host: '127.0.0.1', port: REDIS_PORT });
			const stream = store.eventsKey();
			const [, pending] = await r.xautoclaim(stream, 'wf-close', 'probe', 0, '0-0');
			assert.deepEqual(pending, [], 'the event handed over is acknowledged');
		}
		// The workflow comes back: the event is not delivered again.
		const back = await collect(kind, scope, 'wf-close');
		await marked(store, back);
		assert.deepEqual(real(back), []);
		await back.close();
		// A hand-over that never ends does not hold the deactivation: close gives up after 2 s.
		const { s: s2, handed: handed2 } = await slowTrigger(60_000);
		assert.equal(await store.write('p', [row(2)], '{"to":"closed","n":2}'), true);
		await handed2;
		const t0 = Date.now();
		await s2.close();
		const took = Date.now() - t0;
		assert.ok(took >= 1_900 && took < 3_000, `close took ${took} ms`);
	});
}

test('memory: in-process events; a transition decided in fail-open memory is not emitted', async (t) => {
	const prov = await startProviders();
	t.after(() => prov.close());
	const dead = { url: `http://127.0.0.1:${prov.port}/status/503` };
	const scope = `ev-mem-${Date.now()}`;
	const a = await collect('memory', scope);
	const p = plan([{ name: 'm', url: dead.url }], { threshold: 2, max_attempts: 1 }, scope);
	const eng = new engine.Engine(p.config);
	const { MemoryStore } = require(path.join(ROOT, 'dist/lib/store/memory.js'));
	for (let i = 0; i < 3; i++) await runOne(new MemoryStore(scope), p, eng, `m${i}`);
	assert.deepEqual(
		a.got.map((e) => e.to),
		['open'],
	);
	// A store that never answers: fail-open to memory, the breaker opens there, no event anywhere.
	const down = { read: () => new Promise(() => {}), now: async () => Date.now() };
	const other = `ev-down-${Date.now()}`;
	const b = await collect('memory', other);
	const q = { ...p, scope: other };
	const results = [];
	for (let i = 0; i < 3; i++) results.push(await runOne(down, q, eng, `d${i}`, { timeoutMs: 50 }));
	assert.ok(
		results.some((r) => r.transitions.some((x) => x.to === 'open')),
		'opened in memory',
	);
	assert.ok(results.every((r) => r.storeFallback));
	assert.deepEqual(b.got, []);
	eng.free();
});
