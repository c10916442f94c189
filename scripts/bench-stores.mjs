#!/usr/bin/env node
// Benchmark (prints figures; asserts nothing): admit+record pairs per second through the node's
// real item loop and stores, against local Redis and Postgres, with 1, 8 and 40 concurrent
// callers; and round trips and writes per call in the healthy steady state. The provider call
// itself is stubbed to an instant answer so the figures are the state path alone.
// Needs: scripts/build-node.sh and eval "$(bash scripts/lib/services.sh start)" (Redis and Postgres).
import { execFileSync } from 'node:child_process';
import {
	engine,
	stores,
	plan,
	runItem,
	FailoverStore,
	quietLogger,
	closeRedisClients,
	closePostgresPools,
	redisClient,
	postgresPool,
	REDIS_PORT,
	PG_CONNECTION,
} from '../tests/support/store-harness.mjs';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const instant = (status) => async () => ({
	outcome: { kind: 'status', status, headers: {} },
	body: { ok: true },
	ms: 0,
});
// 503 then 200, over and over: every call changes the breaker row (a failure is added, then
// cleared), so every call pays a compare-and-set write — the worst case short of a trip.
const alternating = () => {
	let k = 0;
	return async () => ({
		outcome: { kind: 'status', status: k++ % 2 ? 200 : 503, headers: {} },
		body: { ok: true },
		ms: 0,
	});
};

async function pairsPerSecond(kind, callers, status) {
	const scope = `bench-${kind}-${callers}-${status}-${Date.now()}`;
	const store = stores[kind](scope);
	// Threshold 100: interleaved callers can string several 503s together; the breaker must not
	// trip, or items would skip the call and the figure would measure skipping.
	const p = plan(
		[{ name: 'p', url: 'http://127.0.0.1:1/', config: { max_attempts: 1 } }],
		status === 200 ? {} : { threshold: 100 },
		scope,
	);
	const eng = new engine.Engine(p.config);
	const call = status === 200 ? instant(200) : alternating();
	let n = 0;
	const until = Date.now() + SECONDS * 1000;
	await Promise.all(
		Array.from({ length: callers }, async (_, w) => {
			while (Date.now() < until) {
				await runItem({
					call,
					logger: quietLogger,
					engine: eng,
					store: new FailoverStore(store, scope, 5000, false, quietLogger),
					plan: p,
					secrets: {},
					correlationId: `b${w}`,
				});
				n++;
			}
		}),
	);
	eng.free();
	return n / SECONDS;
}

/** The floor: one bare round trip per call (Redis GET, Postgres SELECT 1) with the same callers. */
async function floorPerSecond(kind, callers) {
	const client =
		kind === 'redis'
			? redisClient({ host: '127.0.0.1', port: REDIS_PORT })
			: postgresPool(PG_CONNECTION);
	const once = kind === 'redis' ? () => client.get('bench-floor') : () => client.query('SELECT 1');
	let n = 0;
	const until = Date.now() + SECONDS * 1000;
	await Promise.all(
		Array.from({ length: callers }, async () => {
			while (Date.now() < until) {
				await once();
				n++;
			}
		}),
	);
	return n / SECONDS;
}

const cmdstats = () =>
	Object.fromEntries(
		execFileSync('redis-cli', ['-p', String(REDIS_PORT), 'INFO', 'commandstats'])
			.toString()
			.split('\n')
			.filter((l) => l.startsWith('cmdstat_'))
			.map((l) => [l.slice(8, l.indexOf(':')), Number(/calls=(\d+)/.exec(l)[1])]),
	);

console.log(
	`admit+record pairs per second (${SECONDS} s each; node ${process.version}; 2-core machine)`,
);
console.log(
	`${'store'.padEnd(10)} ${'outcome'.padEnd(22)} ${'1 caller'.padStart(10)} ${'8 callers'.padStart(10)} ${'40 callers'.padStart(11)}`,
);
for (const kind of ['memory', 'redis', 'postgres']) {
	for (const [label, status] of [
		['healthy (no write)', 200],
		['503/200 (write each)', 503],
	]) {
		const row = [];
		for (const callers of [1, 8, 40])
			row.push(Math.round(await pairsPerSecond(kind, callers, status)));
		console.log(
			`${kind.padEnd(10)} ${label.padEnd(22)} ${row.map((v, i) => String(v).padStart(i === 2 ? 11 : 10)).join(' ')}`,
		);
	}
	if (kind !== 'memory') {
		const row = [];
		for (const callers of [1, 8, 40]) row.push(Math.round(await floorPerSecond(kind, callers)));
		console.log(
			`${kind.padEnd(10)} ${'baseline: 1 bare query'.padEnd(22)} ${row.map((v, i) => String(v).padStart(i === 2 ? 11 : 10)).join(' ')}`,
		);
	}
}

// Round trips and writes per healthy call, from Redis' own command counters.
const before = cmdstats();
const N = 1000;
{
	const scope = `bench-rt-${Date.now()}`;
	const store = stores.redis(scope);
	const p = plan([{ name: 'p', url: 'http://127.0.0.1:1/' }], {}, scope);
	const eng = new engine.Engine(p.config);
	for (let i = 0; i < N; i++)
		await runItem({
			call: instant(200),
			logger: quietLogger,
			engine: eng,
			store: new FailoverStore(store, scope, 5000, false, quietLogger),
			plan: p,
			secrets: {},
			correlationId: 'rt',
		});
	eng.free();
}
const after = cmdstats();
const d = (k) => ((after[k] ?? 0) - (before[k] ?? 0)) / N;
console.log(
	`\nredis, healthy steady state, per call: ${d('evalsha') + d('eval')} round trip(s) (script calls), ${d('set')} writes (SET), ${d('get')} GETs inside the read script`,
);
await closeRedisClients();
await closePostgresPools();
