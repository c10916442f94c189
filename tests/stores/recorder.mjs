// One process of the cross-process race test: `n` concurrent items failing against one provider.
//   node recorder.mjs <store> <id> <providers port> <n> <process index>
import { engine, stores, plan, runOne, closeRedisClients, closePostgresPools } from './harness.mjs';

const [kind, id, port, n, k] = process.argv.slice(2);
const p = plan([{ name: `dead-${id}`, url: `http://127.0.0.1:${port}/always500?id=${id}`, config: { max_attempts: 1 } }], { threshold: 5, open_ms: 60000 }, `x-${id}`);
const eng = new engine.Engine(p.config);
const store = stores[kind](`x-${id}`);
const results = await Promise.all(Array.from({ length: Number(n) }, (_, i) => runOne(store, p, eng, `p${k}-${i}`, { timeoutMs: 5000 })));
console.log(JSON.stringify({ transitions: results.flatMap((r) => r.transitions), fallbacks: results.filter((r) => r.storeFallback).length }));
await closeRedisClients();
await closePostgresPools();
