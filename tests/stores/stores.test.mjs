// The engine's breaker, probe and rate-gate cases through each store, and 40 concurrent
// recorders against one provider: counters exact, exactly one transition, exactly one probe.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
	writeCounters,
	engine,
	stores,
	plan,
	runOne,
	REDIS_PORT,
	PG_PORT,
	stateOf,
	untilOpenWindowEnds,
	fileProviders,
	uid,
} from '../support/store-harness.mjs';

// The node's own counter aggregation (one checked write per scope per execution).
/** CAS retries per item: the largest and the sum. */
const casFigures = (retries) => ({
	max: Math.max(0, ...retries),
	total: retries.reduce((a, b) => a + b, 0),
});

const loop = fileProviders();
const { hits } = loop;

for (const kind of ['memory', 'redis', 'postgres']) {
	test(`${kind}: five failures open the breaker, the next item is skipped, then exactly one probe`, async () => {
		const id = uid();
		const store = stores[kind](`s-${id}`);
		const p = plan(
			[{ name: `dead-${id}`, url: `${loop.base}/always500?id=${id}`, config: { max_attempts: 1 } }],
			{ threshold: 5, open_ms: 1500, defer_spread_ms: 0 },
			`s-${id}`,
		);
		const eng = new engine.Engine(p.config);
		const results = [];
		for (let i = 0; i < 7; i++) results.push(await runOne(store, p, eng, `item${i}`));
		assert.equal(hits('/always500', id), 5, 'two items skipped without a call');
		assert.deepEqual(
			results.map((r) => r.end.kind),
			Array(7).fill('defer'),
		);
		assert.deepEqual(
			results.flatMap((r) => r.transitions.map((t) => t.to)),
			['open'],
			'one transition',
		);
		assert.equal(results[6].end.reason, 'circuit_open');
		await untilOpenWindowEnds(store, `dead-${id}`);
		// 40 concurrent items when the window ends: exactly one probe reaches the provider.
		const wave = await Promise.all(
			Array.from({ length: 40 }, (_, i) => runOne(store, p, eng, `w${i}`)),
		);
		assert.equal(hits('/always500', id), 6, 'one probe fleet-wide');
		assert.equal(wave.filter((r) => r.attempts.some((a) => a.probe)).length, 1);
		assert.equal(wave.filter((r) => r.storeFallback).length, 0, 'no store fallback');
		eng.free();
	});

	test(`${kind}: a 429 with a long Retry-After closes the gate for every item`, async () => {
		const id = uid();
		const store = stores[kind](`g-${id}`);
		const p = plan(
			[
				{ name: `busy-${id}`, url: `${loop.base}/hint3600?id=${id}` },
				{ name: `ok-${id}`, url: `${loop.base}/ok?id=${id}` },
			],
			{},
			`g-${id}`,
		);
		const eng = new engine.Engine(p.config);
		const results = [];
		for (let i = 0; i < 5; i++) results.push(await runOne(store, p, eng, `i${i}`));
		assert.equal(hits('/hint3600', id), 1);
		assert.equal(hits('/ok', id), 5);
		assert.ok(results.slice(1).every((r) => r.skipped.some((s) => s.reason === 'rate_limited')));
		eng.free();
	});
}

for (const kind of ['redis', 'postgres']) {
	test(`${kind}: 40 concurrent recorders failing against one provider (async tasks)`, async () => {
		const id = uid();
		const store = stores[kind](`c-${id}`);
		const p = plan(
			[{ name: `dead-${id}`, url: `${loop.base}/always500?id=${id}`, config: { max_attempts: 1 } }],
			{ threshold: 5, open_ms: 60000 },
			`c-${id}`,
		);
		const eng = new engine.Engine(p.config);
		const t0 = Date.now();
		const results = await Promise.all(
			Array.from({ length: 40 }, (_, i) => runOne(store, p, eng, `r${i}`, { timeoutMs: 5000 })),
		);
		const ms = Date.now() - t0;
		const calls = hits('/always500', id);
		const transitions = results.flatMap((r) => r.transitions);
		// Counters reach the store as the node writes them: summed per execution, one write.
		await writeCounters(store, p, results);
		const counters = (await store.readCounters([`dead-${id}`]))[`dead-${id}`];
		const cas = casFigures(results.map((r) => r.casRetries));
		console.log(
			`${kind}: 40 concurrent recorders in ${ms} ms, ${calls} calls reached the provider, transitions ${transitions.length}; ` +
				`stored counters ${JSON.stringify(counters)}; CAS retries per item max ${cas.max}, total ${cas.total}`,
		);
		assert.equal(transitions.filter((t) => t.to === 'open').length, 1, 'exactly one closed->open');
		assert.equal(results.filter((r) => r.storeFallback).length, 0, 'CAS retries never ran out');
		assert.ok(cas.max <= 20, `CAS retry bounded per write (max ${cas.max})`);
		assert.equal(counters.calls, calls, 'stored calls == calls that reached the provider');
		assert.equal(counters.failures, calls, 'stored failures == 500s answered');
		assert.equal(counters.transitions, 1, 'stored transitions: one');
		assert.equal(
			(counters.calls ?? 0) + (counters.rejections ?? 0),
			40,
			'every item either called or was rejected',
		);
		const snap = await store.read([`dead-${id}`]);
		assert.equal(stateOf(snap).state, 'open');
		assert.equal(stateOf(snap).trips, 1);
		eng.free();
	});

	test(`${kind}: 40 recorders in 4 separate Node processes`, async () => {
		const id = uid();
		const script = new URL('./recorder.mjs', import.meta.url).pathname;
		const startAt = Date.now() + 2500; // every process loaded and connected by then: the 40 items race at once
		const outs = await Promise.all(
			[0, 1, 2, 3].map(
				(k) =>
					new Promise((resolve, reject) => {
						const child = execFileSync;
						void child;
						import('node:child_process').then(({ execFile }) =>
							execFile(
								process.execPath,
								[script, kind, id, String(loop.providers.port), '10', String(k), String(startAt)],
								{
									env: {
										...process.env,
										RPC_REDIS_PORT: String(REDIS_PORT),
										RPC_PG_PORT: String(PG_PORT),
									},
								},
								(err, stdout, stderr) =>
									err ? reject(new Error(stderr || err.message)) : resolve(JSON.parse(stdout)),
							),
						);
					}),
			),
		);
		const opens = outs.flatMap((o) => o.transitions).filter((t) => t.to === 'open').length;
		const calls = hits('/always500', id);
		const store = stores[kind](`x-${id}`);
		const counters = (await store.readCounters([`dead-${id}`]))[`dead-${id}`];
		const cas = casFigures(outs.flatMap((o) => o.casRetries));
		const snap = await store.read([`dead-${id}`]);
		const spread =
			Math.max(...outs.map((o) => o.started)) - Math.min(...outs.map((o) => o.started));
		console.log(
			`${kind}: 40 recorders in 4 processes (started within ${spread} ms of each other), ${calls} calls reached the provider, closed->open ${opens}; stored counters ${JSON.stringify(counters)}; ` +
				`CAS retries per item max ${cas.max}, total ${cas.total} (per process: ${outs.map((o) => casFigures(o.casRetries).total).join('/')})`,
		);
		assert.equal(opens, 1, `exactly one closed->open across processes (got ${opens})`);
		assert.equal(
			outs.reduce((a, o) => a + o.fallbacks, 0),
			0,
		);
		assert.equal(
			outs.reduce((a, o) => a + o.casRetries.length, 0),
			40,
			'every item came back',
		);
		assert.ok(cas.max <= 20, `CAS retry bounded per write (max ${cas.max})`);
		assert.equal(counters.calls, calls, 'stored calls == calls that reached the provider');
		assert.equal(counters.failures, calls, 'stored failures == 500s answered');
		assert.equal(counters.transitions, 1, 'stored transitions: one');
		assert.equal(
			(counters.calls ?? 0) + (counters.rejections ?? 0),
			40,
			'every item either called or was rejected',
		);
		assert.equal(stateOf(snap).trips, 1);
	});
}
