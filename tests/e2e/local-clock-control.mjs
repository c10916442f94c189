// Negative control for the clock-skew test: the node's real item loop and Redis store, except
// that time comes from this (skewed) process's own clock instead of Redis TIME.
import { createRequire } from 'node:module';
import {
	engine,
	plan,
	runOne,
	RedisStore,
	redisClient,
	closeRedisClients,
	REDIS_PORT,
} from '../support/store-harness.mjs';
void createRequire;

class LocalClockRedisStore extends RedisStore {
	async read(keys) {
		const snap = await super.read(keys);
		return { ...snap, now: Date.now() };
	}
	async now() {
		return Date.now();
	}
}

const [port, id] = process.argv.slice(2);
const p = plan(
	[
		{
			name: `skewed-${id}`,
			url: `http://127.0.0.1:${port}/always500?id=${id}`,
			config: { max_attempts: 1 },
		},
	],
	{ threshold: 1, open_ms: 28_000 }, // as OPEN_MS in clock-skew.test.mjs
	'global',
);
const store = new LocalClockRedisStore(
	redisClient({ host: '127.0.0.1', port: REDIS_PORT }),
	'global',
);
const r = await runOne(store, p, new engine.Engine(p.config), 'control');
console.log(JSON.stringify({ end: r.end.kind, attempts: r.attempts.length }));
await closeRedisClients();
