// One process of the cross-process race test: `n` concurrent items failing against one provider.
//   node recorder.mjs <store> <id> <providers port> <n> <process index> [start at, ms epoch]
// With a start time, the process connects first and then waits for it, so that all processes'
// items race at once instead of one process finishing before the next one has loaded.
import {
	writeCounters,
	engine,
	stores,
	plan,
	runOne,
	closeRedisClients,
	closePostgresPools,
} from '../support/store-harness.mjs';

const [kind, id, port, n, k, startAt] = process.argv.slice(2);
const p = plan(
	[
		{
			name: `dead-${id}`,
			url: `http://127.0.0.1:${port}/always500?id=${id}`,
			config: { max_attempts: 1 },
		},
	],
	{ threshold: 5, open_ms: 60000 },
	`x-${id}`,
);
const eng = new engine.Engine(p.config);
const store = stores[kind](`x-${id}`);
await store.read([`dead-${id}`]); // connected (and, for Postgres, the table exists)
if (startAt) await new Promise((r) => setTimeout(r, Math.max(0, Number(startAt) - Date.now())));
const started = Date.now();
const results = await Promise.all(
	Array.from({ length: Number(n) }, (_, i) =>
		runOne(store, p, eng, `p${k}-${i}`, { timeoutMs: 5000 }),
	),
);
// Counters as the node writes them: summed over this process's items, one write.
await writeCounters(store, p, results);
console.log(
	JSON.stringify({
		transitions: results.flatMap((r) => r.transitions),
		fallbacks: results.filter((r) => r.storeFallback).length,
		casRetries: results.map((r) => r.casRetries),
		started,
	}),
);
await closeRedisClients();
await closePostgresPools();
