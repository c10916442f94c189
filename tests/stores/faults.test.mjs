// Store faults and the healthy steady state, against real servers. Faults (stop, stall, restart,
// a hostile writer) only ever hit throwaway servers this file starts, never the shared ones.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { readFileSync, chownSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import {
	ROOT,
	engine,
	stores,
	plan,
	runOne,
	MemoryStore,
	RedisStore,
	PostgresStore,
	redisClient,
	closePostgresPools,
	postgresPool,
	REDIS_PORT,
	PG_CONNECTION,
	stateOf,
	untilOpenWindowEnds,
	fileProviders,
	uid,
	MAX_CAS_RACES,
} from '../support/store-harness.mjs';
import { freePort } from '../support/ports.mjs';
import { tempDir } from '../support/tmp.mjs';

const require = createRequire(path.join(ROOT, 'package.json'));
const Redis = require('ioredis');
const pg = require('pg');

const loop = fileProviders();
const { hits } = loop;
const cmdstat = (port) =>
	Object.fromEntries(
		execFileSync('redis-cli', ['-p', String(port), 'INFO', 'commandstats'])
			.toString()
			.split('\n')
			.filter((l) => l.startsWith('cmdstat_'))
			.map((l) => [l.slice(8, l.indexOf(':')), Number(/calls=(\d+)/.exec(l)[1])]),
	);

test('redis steady state: one round trip and no write per healthy call', async () => {
	// A throwaway server: the shared one's commandstats also count everyone else's commands.
	const r = await ownRedis();
	const id = uid();
	const store = new RedisStore(redisClient({ host: '127.0.0.1', port: r.port }), `h-${id}`);
	const p = plan([{ name: `ok-${id}`, url: `${loop.base}/ok?id=${id}` }], {}, `h-${id}`);
	const eng = new engine.Engine(p.config);
	await runOne(store, p, eng, 'warm'); // loads the scripts
	const before = cmdstat(r.port);
	for (let i = 0; i < 100; i++) await runOne(store, p, eng, `i${i}`);
	const after = cmdstat(r.port);
	const delta = (k) => (after[k] ?? 0) - (before[k] ?? 0);
	console.log(
		`redis, 100 healthy calls: evalsha ${delta('evalsha')}, eval ${delta('eval')}, get ${delta('get')}, set ${delta('set')}`,
	);
	assert.equal(delta('set'), 0, 'no write');
	assert.equal(delta('evalsha') + delta('eval'), 100, 'one script call (the read) per call');
	eng.free();
	r.kill();
});

test('postgres steady state: no write per healthy call', async () => {
	const id = uid();
	const store = stores.postgres(`h-${id}`);
	const p = plan(
		[{ name: `ok-${id}`, url: `${loop.base}/ok?id=${id}`, config: { max_attempts: 2 } }],
		{ base_ms: 1, cap_ms: 1 },
		`h-${id}`,
	);
	const eng = new engine.Engine(p.config);
	// One failure writes a row; the success after it clears it; from then on nothing changes.
	loop.providers.arrivals.length = 0;
	await runOne(
		store,
		plan(
			[{ name: `ok-${id}`, url: `${loop.base}/status/503?id=${id}`, config: { max_attempts: 1 } }],
			{},
			`h-${id}`,
		),
		new engine.Engine(p.config),
		'fail',
	);
	await runOne(store, p, eng, 'heal');
	const pool = postgresPool(PG_CONNECTION);
	const row = async () =>
		(
			await pool.query(
				'SELECT version, updated_at FROM resilient_provider_state WHERE scope = $1 AND kind = $2',
				[`h-${id}`, 'breaker'],
			)
		).rows[0];
	const r0 = await row();
	for (let i = 0; i < 50; i++) await runOne(store, p, eng, `i${i}`);
	const r1 = await row();
	assert.deepEqual(r1, r0, 'the breaker row was not rewritten');
	eng.free();
});

async function ownRedis() {
	const port = await freePort();
	const dir = tempDir('rpc-redis-');
	const start = () =>
		spawn(
			'redis-server',
			['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--dir', dir],
			{ stdio: 'ignore' },
		);
	let child = start();
	// Up when it answers a ping; not up within 5 s fails the test here, not later.
	const answering = async () => {
		for (const end = Date.now() + 5_000; ;) {
			try {
				execFileSync('redis-cli', ['-p', String(port), 'ping'], { stdio: 'ignore' });
				return;
			} catch {
				assert.ok(Date.now() < end, `redis-server on ${port} does not answer`);
				await new Promise((r) => setTimeout(r, 50));
			}
		}
	};
	await answering();
	return {
		port,
		stop: () =>
			new Promise((r) => {
				child.once('exit', r);
				child.kill('SIGKILL');
			}),
		stall: () => child.kill('SIGSTOP'),
		resume: () => child.kill('SIGCONT'),
		restart: async () => {
			child = start();
			await answering();
		},
		kill: () => child.kill('SIGKILL'),
	};
}

/** The store's own client is connected again (ioredis reconnects on its own schedule). */
async function reconnected(client) {
	for (const end = Date.now() + 10_000; client.status !== 'ready';) {
		assert.ok(Date.now() < end, `ioredis did not reconnect (status ${client.status})`);
		await new Promise((r) => setTimeout(r, 50));
	}
}

for (const failOpen of [true, false]) {
	test(`redis stopped, stalled and restarted mid-run (${failOpen ? 'fail-open' : 'fail-closed'}): no item lost`, async () => {
		const r = await ownRedis();
		const id = uid();
		const client = redisClient({ host: '127.0.0.1', port: r.port });
		const store = new RedisStore(client, `f-${id}`);
		const p = plan([{ name: `ok-${id}`, url: `${loop.base}/ok?id=${id}` }], {}, `f-${id}`);
		const eng = new engine.Engine(p.config);
		const results = [];
		const run = async (n) => {
			for (let i = 0; i < n; i++)
				results.push(
					await runOne(store, p, eng, `i${results.length}`, { timeoutMs: 300, failOpen }),
				);
		};
		await run(5);
		await r.stop();
		await run(5);
		await r.restart();
		await reconnected(client);
		await run(5);
		r.stall();
		const t0 = Date.now();
		await run(3);
		const stalledMs = Date.now() - t0;
		r.resume();
		await run(2);
		r.kill();
		assert.equal(results.length, 20, 'every item came back');
		const kinds = results.map((x) =>
			x.storeFallback
				? x.end.kind === 'done'
					? 'fallback-done'
					: x.end.kind
				: x.end.kind === 'defer'
					? `defer:${x.end.reason}`
					: x.end.kind,
		);
		console.log(
			`${failOpen ? 'fail-open' : 'fail-closed'}: ${kinds.join(' ')}; 3 items during a stall took ${stalledMs} ms`,
		);
		assert.deepEqual(kinds.slice(0, 5), Array(5).fill('done'));
		assert.deepEqual(
			kinds.slice(5, 10),
			Array(5).fill(failOpen ? 'fallback-done' : 'defer:store_unavailable'),
		);
		assert.deepEqual(
			kinds.slice(10, 15),
			Array(5).fill('done'),
			'shared state resumes after the restart',
		);
		assert.deepEqual(
			kinds.slice(15, 18),
			Array(3).fill(failOpen ? 'fallback-done' : 'defer:store_unavailable'),
		);
		assert.ok(
			stalledMs < 3 * 2 * 300 + 1500,
			`the per-operation timeout bounds a stall (${stalledMs} ms)`,
		);
		eng.free();
	});
}

// ---- Postgres: a throwaway cluster (initdb as the postgres user, a free loopback port) ----
const PG_BIN = process.env.RPC_PG_BIN ?? '/usr/lib/postgresql/15/bin';

async function ownPostgres() {
	const dir = tempDir('rpc-pg-');
	const data = path.join(dir, 'data');
	chownSync(
		dir,
		Number(execFileSync('id', ['-u', 'postgres']).toString()),
		Number(execFileSync('id', ['-g', 'postgres']).toString()),
	);
	const asPostgres = (bin, ...args) =>
		execFileSync('runuser', ['-u', 'postgres', '--', path.join(PG_BIN, bin), ...args], {
			stdio: ['ignore', 'pipe', 'pipe'],
		});
	asPostgres('initdb', '-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync');
	const port = await freePort();
	const start = () =>
		asPostgres(
			'pg_ctl',
			'start',
			'-w',
			'-t',
			'20',
			'-D',
			data,
			'-l',
			path.join(dir, 'log'),
			'-o',
			`-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50`,
		);
	start();
	// The postmaster and every backend and helper it forked: a stall must freeze open connections too.
	const tree = () => {
		const pid = Number(readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
		let kids = [];
		try {
			kids = execFileSync('ps', ['--ppid', String(pid), '-o', 'pid='])
				.toString()
				.split(/\s+/)
				.filter(Boolean)
				.map(Number);
		} catch {
			/* none */
		}
		return [pid, ...kids];
	};
	let frozen = [];
	const resume = () => {
		for (const p of frozen)
			try {
				process.kill(p, 'SIGCONT');
			} catch {
				/* gone */
			}
		frozen = [];
	};
	return {
		port,
		start,
		stop: () => asPostgres('pg_ctl', 'stop', '-w', '-D', data, '-m', 'immediate'),
		stall: () => {
			frozen = tree();
			for (const p of frozen) process.kill(p, 'SIGSTOP');
			return frozen.length;
		},
		resume,
		destroy: () => {
			resume();
			try {
				asPostgres('pg_ctl', 'stop', '-w', '-D', data, '-m', 'immediate');
			} catch {
				/* already down */
			}
			rmSync(dir, { recursive: true, force: true });
		},
	};
}

const kindOf = (x) =>
	x.storeFallback
		? x.end.kind === 'done'
			? 'fallback-done'
			: x.end.kind
		: x.end.kind === 'defer'
			? `defer:${x.end.reason}`
			: x.end.kind;

for (const failOpen of [true, false]) {
	test(`postgres stopped, restarted and stalled mid-run (${failOpen ? 'fail-open' : 'fail-closed'}): no item lost, the pool reconnects`, async () => {
		const pgs = await ownPostgres();
		try {
			const id = uid();
			const pool = postgresPool({
				host: '127.0.0.1',
				port: pgs.port,
				database: 'postgres',
				user: 'postgres',
			});
			const store = new PostgresStore(pool, `f-${id}`);
			const p = plan([{ name: `ok-${id}`, url: `${loop.base}/ok?id=${id}` }], {}, `f-${id}`);
			const eng = new engine.Engine(p.config);
			const results = [];
			const phaseMs = [];
			const run = async (n) => {
				const t0 = Date.now();
				for (let i = 0; i < n; i++)
					results.push(
						await runOne(store, p, eng, `i${results.length}`, { timeoutMs: 300, failOpen }),
					);
				phaseMs.push(Date.now() - t0);
			};
			const startedAt = async () =>
				(await pool.query('SELECT pg_postmaster_start_time()::text AS t')).rows[0].t;
			await run(5);
			const before = await startedAt();
			pgs.stop();
			await run(5);
			pgs.start(); // pg_ctl -w: accepting connections again
			await run(5);
			const afterRestart = await startedAt();
			const frozen = pgs.stall();
			await run(3);
			pgs.resume();
			await run(2);
			// Shared state really resumed: a failure after the stall is written to the restarted server.
			const failPlan = plan(
				[{ name: `ok-${id}`, url: `${loop.base}/always500?id=${id}`, config: { max_attempts: 1 } }],
				{},
				`f-${id}`,
			);
			const failEng = new engine.Engine(failPlan.config);
			const fail = await runOne(store, failPlan, failEng, 'after', { timeoutMs: 2000, failOpen });
			failEng.free();
			const row = (
				await pool.query(
					'SELECT data FROM resilient_provider_state WHERE scope = $1 AND provider = $2 AND kind = $3',
					[`f-${id}`, `ok-${id}`, 'breaker'],
				)
			).rows[0];
			assert.equal(results.length, 20, 'every item came back');
			const kinds = results.map(kindOf);
			console.log(
				`postgres ${failOpen ? 'fail-open' : 'fail-closed'}: ${kinds.join(' ')}; phases (up, stopped, restarted, stalled, resumed) took ${phaseMs.join(', ')} ms; ` +
					`${frozen} server processes frozen; the pool talks to the server started at ${afterRestart} (before: ${before}); pool total ${pool.totalCount}, idle ${pool.idleCount}`,
			);
			assert.notEqual(afterRestart, before, 'the same pool reconnected to the restarted server');
			assert.deepEqual(kinds.slice(0, 5), Array(5).fill('done'));
			assert.deepEqual(
				kinds.slice(5, 10),
				Array(5).fill(failOpen ? 'fallback-done' : 'defer:store_unavailable'),
			);
			assert.deepEqual(
				kinds.slice(10, 15),
				Array(5).fill('done'),
				'the pool reconnected and shared state resumed after the restart',
			);
			assert.deepEqual(
				kinds.slice(15, 18),
				Array(3).fill(failOpen ? 'fallback-done' : 'defer:store_unavailable'),
			);
			assert.deepEqual(
				kinds.slice(18, 20),
				Array(2).fill('done'),
				'shared state resumed after the stall',
			);
			assert.ok(
				phaseMs[1] < 5 * 2 * 300 + 1000,
				`a stopped server costs at most the per-operation timeout (${phaseMs[1]} ms for 5 items)`,
			);
			assert.ok(
				phaseMs[3] < 3 * 2 * 300 + 1500,
				`the per-operation timeout bounds a stall (${phaseMs[3]} ms for 3 items)`,
			);
			assert.equal(fail.storeFallback, undefined);
			assert.equal(row?.data.failures.length, 1, 'the failure reached the restarted server');
			eng.free();
		} finally {
			await closePostgresPools();
			pgs.destroy();
		}
	});
}

// ---- Compare-and-set retries exhausted: a hostile writer always gets in first ----
// The hostile writer bumps the provider's breaker row (same content, version + 1) through its
// own connection between every read of the item and its compare-and-set, so the item never wins.
function hostile(store, bump) {
	const h = {
		writes: 0,
		read: (k) => store.read(k),
		write: async (k, w) => {
			h.writes++;
			await bump();
			return store.write(k, w);
		},
		now: () => store.now(),
		reset: (k) => store.reset(k),
		addCounters: (d) => store.addCounters(d),
		readCounters: (k) => store.readCounters(k),
	};
	return h;
}

const hostileStores = {
	redis: async (scope, provider) => {
		const store = stores.redis(scope);
		const key = store.key(provider, 'breaker');
		const own = new Redis({
			host: '127.0.0.1',
			port: REDIS_PORT,
			lazyConnect: true,
		});
		await own.connect();
		const bump = async () => {
			const cur = await own.get(key);
			assert.ok(cur, 'the breaker row exists');
			const row = JSON.parse(cur.slice(cur.indexOf('|') + 1));
			row.version += 1;
			await own.set(key, `${row.version}|${JSON.stringify(row)}`, 'KEEPTTL');
		};
		return { store, bump, close: () => own.quit() };
	},
	postgres: async (scope, provider) => {
		const store = stores.postgres(scope);
		const own = new pg.Client(PG_CONNECTION);
		await own.connect();
		const bump = async () => {
			const r = await own.query(
				`UPDATE resilient_provider_state SET version = version + 1, data = jsonb_set(data, '{version}', to_jsonb(version + 1))
        WHERE scope = $1 AND provider = $2 AND kind = 'breaker'`,
				[scope, provider],
			);
			assert.equal(r.rowCount, 1, 'the breaker row exists');
		};
		return { store, bump, close: () => own.end() };
	},
};

for (const kind of ['redis', 'postgres']) {
	for (const failOpen of [true, false]) {
		const mode = failOpen ? 'fail-open' : 'fail-closed';
		test(`${kind}: compare-and-set retries exhausted by a hostile writer (${mode}): the item ends, bounded, no exception`, async () => {
			const id = uid();
			const scope = `cas-${id}`;
			const name = `p-${id}`;
			const cfg = { threshold: 1, open_ms: 300, defer_spread_ms: 0 };
			const h = await hostileStores[kind](scope, name);
			try {
				// 1. Admission: the breaker is due for its half-open probe, so the item must win the
				//    probe lease (a compare-and-set on the breaker row) before it may call.
				const trip = plan(
					[{ name, url: `${loop.base}/always500?id=${id}`, config: { max_attempts: 1 } }],
					cfg,
					scope,
				);
				const eng = new engine.Engine(trip.config);
				await runOne(h.store, trip, eng, 'trip', { failOpen });
				await untilOpenWindowEnds(h.store, name);
				const probe = plan(
					[{ name, url: `${loop.base}/ok?id=${id}`, config: { max_attempts: 1 } }],
					cfg,
					scope,
				);
				const hs = hostile(h.store, h.bump);
				let t0 = Date.now();
				const a = await runOne(hs, probe, eng, 'probe', { failOpen });
				const aMs = Date.now() - t0;
				const aCalls = hits('/ok', id);

				// 2. Recording: an outcome (a failure) must be written to the breaker row after the call.
				const id2 = uid();
				const scope2 = `cas2-${id2}`;
				const name2 = `q-${id2}`;
				const h2 = await hostileStores[kind](scope2, name2);
				const rec = plan(
					[{ name: name2, url: `${loop.base}/always500?id=${id2}`, config: { max_attempts: 1 } }],
					{ threshold: 100, defer_spread_ms: 0 },
					scope2,
				);
				const eng2 = new engine.Engine(rec.config);
				await runOne(h2.store, rec, eng2, 'first', { failOpen }); // writes the row: one failure
				const hs2 = hostile(h2.store, h2.bump);
				t0 = Date.now();
				const b = await runOne(hs2, rec, eng2, 'record', { failOpen });
				const bMs = Date.now() - t0;
				const memory = stateOf(await new MemoryStore(`fallback:${scope2}`).read([name2]));
				const shared = stateOf(await h2.store.read([name2]));
				await h2.close();

				console.log(
					`${kind} ${mode}, hostile writer: probe admission ${a.casRetries} CAS lost of ${hs.writes} attempts on the shared store in ${aMs} ms -> ${kindOf(a)} (${a.storeFallback ?? 'no fallback'}), ${aCalls} call; ` +
						`recording ${b.casRetries} CAS lost of ${hs2.writes} in ${bMs} ms -> ${kindOf(b)}; failures in memory ${memory.recent_failures}, in the store ${shared.recent_failures}`,
				);
				for (const [r, writes, ms] of [
					[a, hs.writes, aMs],
					[b, hs2.writes, bMs],
				]) {
					assert.equal(
						r.casRetries,
						MAX_CAS_RACES + 1,
						`${MAX_CAS_RACES} lost races are retried, the next gives up: bounded, no livelock`,
					);
					assert.equal(writes, MAX_CAS_RACES + 1, 'no further compare-and-set on the shared store');
					// Every jittered wait at its ceiling (256 ms past the 8th race), plus the round trips.
					assert.ok(ms < MAX_CAS_RACES * 256 + 2000, `bounded time (${ms} ms)`);
				}
				if (failOpen) {
					assert.equal(a.end.kind, 'done', "decided with this process's memory");
					assert.match(
						a.storeFallback,
						/compare-and-set races lost/,
						'the reason travels with the item (the node puts it in _resilience.warnings)',
					);
					assert.equal(aCalls, 1);
					assert.match(b.storeFallback, /compare-and-set races lost/);
					assert.equal(b.end.kind, 'defer');
					assert.notEqual(b.end.reason, 'store_unavailable');
					assert.equal(
						memory.recent_failures,
						1,
						"failing open, the failure is recorded in this process's memory",
					);
				} else {
					assert.deepEqual([a.end.kind, a.end.reason], ['defer', 'store_unavailable']);
					assert.equal(aCalls, 0, 'failing closed, no call without the probe lease');
					assert.deepEqual([b.end.kind, b.end.reason], ['defer', 'store_unavailable']);
					assert.equal(memory.recent_failures, 0, 'failing closed, nothing recorded in memory');
				}
				assert.equal(
					shared.recent_failures,
					1,
					"the hostile writer kept the row's content: the lost item wrote nothing",
				);
				eng.free();
				eng2.free();
			} finally {
				await h.close().catch(() => undefined);
			}
		});
	}
}
