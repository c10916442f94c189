// Store tests drive the node's real item loop (dist/lib/itemLoop.js) and its real stores against
// real Redis and Postgres servers (scripts/lib/services.sh, ports in tests/support/services.mjs) and loopback providers; HTTP goes
// through Node's fetch here instead of n8n's helper (the node's HTTP path is tested in tests/e2e).
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { before, after } from 'node:test';
import { startProviders } from './providers.mjs';
import path from 'node:path';

const require = createRequire(import.meta.url);
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const engine = require(path.join(ROOT, 'dist/engine/engine.js'));
export const { runItem } = require(path.join(ROOT, 'dist/lib/itemLoop.js'));
export const { MemoryStore } = require(path.join(ROOT, 'dist/lib/store/memory.js'));
export const { RedisStore, redisClient, closeRedisClients } = require(
	path.join(ROOT, 'dist/lib/store/redis.js'),
);
export const { PostgresStore, postgresPool, closePostgresPools } = require(
	path.join(ROOT, 'dist/lib/store/postgres.js'),
);
export const { FailoverStore } = require(path.join(ROOT, 'dist/lib/store/failover.js'));
export const { ROW_KINDS, ROW_SEPARATOR, MAX_CAS_RACES } = require(
	path.join(ROOT, 'dist/lib/engineConstants.js'),
);
const { CounterDeltas } = require(path.join(ROOT, 'dist/lib/counters.js'));

/** The items' counters written as the node writes them: summed per scope, one checked write. */
export async function writeCounters(store, p, results) {
	const deltas = new CounterDeltas();
	for (const r of results)
		deltas.add(
			p.scope,
			p.requests.map((q) => q.name),
			r.counters,
			r.committed,
		);
	const warnings = await deltas.write(() => store);
	if (warnings.length) throw new Error(warnings.join('; '));
}
import { REDIS_PORT, PG_PORT, PG_CONNECTION } from './services.mjs';
export { REDIS_PORT, PG_PORT, PG_CONNECTION };

export const quietLogger = { info() {}, warn() {}, error() {}, debug() {} };

export async function fetchCall(req, headers, deadlineMs) {
	const started = Date.now();
	const ctl = new AbortController();
	const timer = setTimeout(() => ctl.abort(), deadlineMs);
	try {
		const res = await fetch(req.url, {
			method: req.method,
			headers,
			body: req.body === undefined ? undefined : JSON.stringify(req.body),
			signal: ctl.signal,
		});
		const text = await res.text();
		const h = {};
		for (const k of [
			'retry-after',
			'ratelimit-reset',
			'x-ratelimit-reset',
			'ratelimit-remaining',
			'x-ratelimit-remaining',
		])
			if (res.headers.get(k) !== null) h[k] = res.headers.get(k);
		let body = text;
		try {
			body = JSON.parse(text);
		} catch {
			/* text */
		}
		return {
			outcome: { kind: 'status', status: res.status, headers: h },
			body,
			ms: Date.now() - started,
		};
	} catch (e) {
		return {
			outcome: {
				kind: 'error',
				code: ctl.signal.aborted ? 'TIMEOUT' : (e.cause?.code ?? 'EUNKNOWN'),
			},
			ms: Date.now() - started,
		};
	} finally {
		clearTimeout(timer);
	}
}

/** A plan as readItemPlan makes it, for a chain of {name, url} providers. */
export function plan(providers, config = {}, scope = 'test') {
	return {
		config: {
			providers: providers.map((p) => ({
				name: p.name,
				method: p.method ?? 'GET',
				...(p.config ?? {}),
			})),
			...config,
		},
		requests: providers.map((p) => ({
			name: p.name,
			method: p.method ?? 'GET',
			url: p.url,
			qs: {},
			headers: {},
			body: undefined,
			secretName: '',
			secretHeader: 'Authorization',
			requiredPath: '',
		})),
		keys: providers.map(() => null),
		scope,
		onExhaustion: 'deferred',
		defaultValue: {},
	};
}

export function runOne(store, p, eng, correlationId = 'c', opts = {}) {
	return runItem({
		call: fetchCall,
		logger: quietLogger,
		engine: eng,
		store: new FailoverStore(
			store,
			p.scope,
			opts.timeoutMs ?? 2000,
			opts.failOpen ?? true,
			quietLogger,
		),
		plan: p,
		secrets: {},
		correlationId,
	});
}

export const stores = {
	memory: (scope) => new MemoryStore(scope, new Map()),
	redis: (scope) => new RedisStore(redisClient({ host: '127.0.0.1', port: REDIS_PORT }), scope),
	postgres: (scope) => new PostgresStore(postgresPool(PG_CONNECTION), scope),
};

const inspector = new engine.Engine({ providers: [{ name: 'inspector' }] });
/** What the engine reads in provider `i`'s rows of a snapshot (state, trips, recent_failures …):
 * tests ask the engine, as Get Provider State does, rather than parse rows. */
export function stateOf(snap, i = 0) {
	const n = ROW_KINDS.length;
	return inspector.inspect(snap.rows.slice(i * n, i * n + n).join(ROW_SEPARATOR), snap.now);
}

/** Waits until provider `name`'s open window is over on the store's own clock (the clock the
 * engine decides by), however long a loaded machine took to get here. */
export async function untilOpenWindowEnds(store, name) {
	for (;;) {
		const snap = await store.read([name]);
		const left = (stateOf(snap).open_until_ms ?? 0) - snap.now;
		if (left < 0) return;
		await new Promise((r) => setTimeout(r, left + 1));
	}
}

/** A store test file's loopback providers: started before its tests; closed after them, with the
 * pooled Redis and Postgres clients. `hits(route, id)` counts a provider's arrivals. */
export function fileProviders() {
	const p = {
		providers: undefined,
		base: '',
		hits: (route, id) =>
			p.providers.arrivals.filter((a) => a.route === route && a.id === id).length,
	};
	before(async () => {
		p.providers = await startProviders();
		p.base = `http://127.0.0.1:${p.providers.port}`;
	});
	after(async () => {
		await p.providers.close();
		await closeRedisClients();
		await closePostgresPools();
	});
	return p;
}

/** A fresh id, so a test's rows and arrivals are its own. */
export const uid = () => Math.random().toString(36).slice(2, 10);
