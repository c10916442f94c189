// Counts, in an installed copy of the package, the calls that cross into the WebAssembly engine
// and the round trips to a state store, so a benchmark can print them per model call. It wraps
// the methods of the engine's exported classes and of the leaf stores (memory, Redis, Postgres:
// one method call is one round trip) in the module instances the node itself requires, so the
// node runs unchanged. For benchmarks only.
import { createRequire } from 'node:module';
import path from 'node:path';

const STORES = {
	memory: ['dist/lib/store/memory.js', 'MemoryStore'],
	redis: ['dist/lib/store/redis.js', 'RedisStore'],
	postgres: ['dist/lib/store/postgres.js', 'PostgresStore'],
};

// A store's round trips: the methods of its interface (n8n-node/lib/store/types.ts) that go to
// the server; not `now()` (the store's clock as of its last answer, local arithmetic) nor its
// private helpers.
const ROUND_TRIPS = new Set(['read', 'write', 'reset', 'addCounters', 'readCounters']);

function wrapMethods(proto, tally, prefix, only) {
	for (const name of Object.getOwnPropertyNames(proto)) {
		const d = Object.getOwnPropertyDescriptor(proto, name);
		if (name === 'constructor' || name.startsWith('__') || typeof d.value !== 'function') continue;
		if (only && !only.has(name)) continue;
		const original = d.value;
		proto[name] = function (...args) {
			tally[`${prefix}.${name}`] = (tally[`${prefix}.${name}`] ?? 0) + 1;
			return original.apply(this, args);
		};
	}
}

/** Installs the counters into the package at `pkgDir`; returns { take() } (counts since the last take). */
export function callCensus(pkgDir) {
	const req = createRequire(path.join(pkgDir, 'package.json'));
	const engineTally = {};
	const storeTally = {};
	const engine = req(path.join(pkgDir, 'dist/engine/engine.js'));
	for (const [name, value] of Object.entries(engine)) {
		if (typeof value !== 'function') continue;
		if (value.prototype && Object.getOwnPropertyNames(value.prototype).length > 1)
			wrapMethods(value.prototype, engineTally, name);
	}
	for (const [kind, [file, cls]] of Object.entries(STORES)) {
		const mod = req(path.join(pkgDir, file));
		if (mod[cls]) wrapMethods(mod[cls].prototype, storeTally, kind, ROUND_TRIPS);
	}
	const drain = (tally) => {
		const out = { ...tally };
		for (const k of Object.keys(tally)) delete tally[k];
		return out;
	};
	return {
		/** { engine: {Class.method: n}, store: {kind.method: n} } since the last take. */
		take: () => ({ engine: drain(engineTally), store: drain(storeTally) }),
	};
}

/** "12.0 (Item.poll 4, Engine.item 1, …)": the total per call and its largest parts. */
export function perCall(tally, calls) {
	const total = Object.values(tally).reduce((a, b) => a + b, 0);
	const parts = Object.entries(tally)
		.sort((a, b) => b[1] - a[1])
		.map(([k, n]) => `${k} ${+(n / calls).toFixed(2)}`);
	return `${+(total / calls).toFixed(2)} (${parts.join(', ') || 'none'})`;
}
