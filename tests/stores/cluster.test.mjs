// Redis Cluster: three masters on loopback ports. The scope's keys share one slot (hash tag),
// that slot is served by a master other than the seed node, and the breaker works through MOVED.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import path from 'node:path';
import { startProviders } from '../support/providers.mjs';
import { freePorts } from '../support/ports.mjs';
import {
	engine,
	plan,
	runOne,
	RedisStore,
	redisClient,
	closeRedisClients,
	ROW_KINDS,
} from '../support/store-harness.mjs';
import { tempDir } from '../support/tmp.mjs';

// Each master needs a client port and a cluster bus port (by default port + 10000, which may be
// taken or beyond 65535): all six chosen free.
const chosen = await freePorts(6);
const ports = chosen.slice(0, 3);
const busPorts = chosen.slice(3);
const children = [];
let providers;
const cli = (port, ...args) =>
	execFileSync('redis-cli', ['-p', String(port), ...args], { stdio: ['ignore', 'pipe', 'ignore'] })
		.toString()
		.trim();

before(async () => {
	providers = await startProviders();
	for (const [k, port] of ports.entries()) {
		const dir = tempDir(`rpc-cluster-${port}-`);
		children.push(
			spawn(
				'redis-server',
				[
					'--bind',
					'127.0.0.1',
					'--port',
					String(port),
					'--cluster-port',
					String(busPorts[k]),
					'--cluster-enabled',
					'yes',
					'--cluster-config-file',
					path.join(dir, 'nodes.conf'),
					'--save',
					'',
					'--dir',
					dir,
				],
				{ stdio: 'ignore' },
			),
		);
	}
	// Each node up when it answers a ping; one that does not within 5 s fails here, loudly.
	for (const port of ports)
		for (let i = 0; ; i++) {
			try {
				cli(port, 'ping');
				break;
			} catch {
				assert.ok(i < 50, `redis cluster node on ${port} does not answer`);
				await new Promise((r) => setTimeout(r, 100));
			}
		}
	execFileSync(
		'redis-cli',
		[
			'--cluster',
			'create',
			...ports.map((p) => `127.0.0.1:${p}`),
			'--cluster-replicas',
			'0',
			'--cluster-yes',
		],
		{ stdio: 'ignore' },
	);
	for (let i = 0; i < 100 && !cli(ports[0], 'cluster', 'info').includes('cluster_state:ok'); i++)
		await new Promise((r) => setTimeout(r, 100));
});
after(async () => {
	await closeRedisClients();
	for (const c of children) c.kill('SIGKILL');
	await providers?.close();
});

test('cluster: one slot per scope on a master other than the seed; the breaker trips once through MOVED', async () => {
	const seedId = cli(ports[0], 'cluster', 'myid');
	const owner = (slot) => {
		for (const [lo, hi, master] of JSON.parse(cli(ports[0], '--json', 'cluster', 'slots')))
			if (slot >= lo && slot <= hi) return master;
	};
	// Pick a scope whose slot lives on another master than the seed node.
	let scope, slot;
	for (let i = 0; ; i++) {
		scope = `tenant-${i}`;
		slot = Number(cli(ports[0], 'cluster', 'keyslot', `rpc:{${scope}}:x:breaker`));
		if (owner(slot)[2] !== seedId) break;
	}
	const client = redisClient({ host: '127.0.0.1', port: ports[0], cluster: true });
	const store = new RedisStore(client, scope);
	const names = ['primary', 'fallback'];
	const keys = names.flatMap((n) => ROW_KINDS.map((k) => store.key(n, k)));
	const slots = new Set(keys.map((k) => Number(cli(ports[0], 'cluster', 'keyslot', k))));
	assert.deepEqual([...slots], [slot], 'every key of the scope in one slot');
	console.log(
		`scope ${scope}: slot ${slot}, served by port ${owner(slot)[1]}, seed node port ${ports[0]}`,
	);

	const id = Math.random().toString(36).slice(2, 8);
	const p = plan(
		[
			{
				name: 'primary',
				url: `http://127.0.0.1:${providers.port}/always500?id=${id}`,
				config: { max_attempts: 1 },
			},
			{ name: 'fallback', url: `http://127.0.0.1:${providers.port}/ok?id=${id}` },
		],
		{ threshold: 3, open_ms: 60000 },
		scope,
	);
	const eng = new engine.Engine(p.config);
	const results = [];
	for (let i = 0; i < 8; i++) results.push(await runOne(store, p, eng, `c${i}`));
	assert.equal(providers.arrivals.filter((a) => a.route === '/always500' && a.id === id).length, 3);
	assert.deepEqual(
		results.flatMap((r) => r.transitions.map((t) => t.to)),
		['open'],
	);
	assert.ok(results.every((r) => r.end.kind === 'done' && !r.storeFallback));
	eng.free();
});
