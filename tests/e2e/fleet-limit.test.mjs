// The fleet's learned limit (Call Chain 2.1 at its defaults) across two real `n8n execute`
// processes on one Redis store, counted at a loopback vendor that takes 4 calls at once and
// answers 429 + Retry-After: 1 above (it counts every request in flight, a 429 included):
// - 400 items, 200 per process, the second started once the first's calls reached the vendor:
//   all served, at most 10 % of requests answered 429, at most K + 2 = 6 in flight at any moment,
//   and the second process started from the limit the first had learned;
// - a process SIGKILLed while its calls are out: its share of the limit comes back within the
//   share's lease (the probe lease: twice the 2 s deadline, at least the deadline + 5 s).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { n8nInstall, n8nInstance, branchesWorkflow, outputs, uid } from '../support/n8n.mjs';
import { startProviders } from '../support/providers.mjs';
import { REDIS_PORT } from '../support/services.mjs';
import { redisCredential } from '../support/store-credentials.mjs';
import { redisRow } from '../support/redis-rows.mjs';

const require = createRequire(import.meta.url);
const Redis = require('ioredis');

const major = Number(process.env.N8N_MAJOR ?? 2);
const tag = uid().slice(0, 8);
const REDIS = { id: `rpcFleet${tag}`.slice(0, 16), name: 'fleet limit redis' };
const K = 4;
let providers, base, a, b, redis;

/** A workflow of `items` items through Call Chain 2.1 on Redis, then Get Provider State. */
function fleetWorkflow(id, provider, url, items, extra = {}) {
	const wf = branchesWorkflow(id, a.nodeType, [
		{
			name: 'chain',
			items,
			typeVersion: 2.1,
			parameters: {
				providers: { provider: [{ name: provider, url }] },
				stateStore: 'redis',
				stateScope: 'provider',
				...extra,
			},
			then: [
				{
					name: 'state',
					typeVersion: 2.1,
					parameters: {
						operation: 'getState',
						stateStore: 'redis',
						stateScope: 'provider',
						providers: { provider: [{ name: provider }] },
					},
				},
			],
		},
	]);
	for (const n of wf.nodes.filter((x) => x.name === 'chain' || x.name === 'state'))
		n.credentials = { redis: REDIS };
	return wf;
}

/** The limit row of `provider` as the store holds it. */
function limitRow(provider) {
	return redisRow(redis, provider, 'limit');
}

/** Resolves once `check()` is true, looking each `everyMs`; fails after `ms`. */
async function until(what, check, ms, everyMs = 100) {
	const end = Date.now() + ms;
	for (;;) {
		const v = await check();
		if (v) return v;
		assert.ok(Date.now() < end, `${what}: not within ${ms} ms`);
		await new Promise((r) => setTimeout(r, everyMs));
	}
}

before(async () => {
	providers = await startProviders();
	base = `http://127.0.0.1:${providers.port}`;
	redis = new Redis({ host: '127.0.0.1', port: REDIS_PORT, lazyConnect: false });
	a = n8nInstance(n8nInstall(major));
	a.importCredentials([redisCredential(REDIS.id, REDIS.name, REDIS_PORT)]);
	b = n8nInstance(n8nInstall(major), { copyOf: a });
});
after(async () => {
	await redis?.quit().catch(() => {});
	await providers?.close();
});

test('two n8n processes, 400 items, one vendor taking 4 at once: all served, <= 10 % 429s, at most K + 2 in flight, the second starting from the first limit learned', async () => {
	const provider = `k4-${tag}`;
	const url = `${base}/cap?k=${K}&id=${provider}`;
	const wa = fleetWorkflow(`fleetA${tag}`, provider, url, 200);
	const wb = fleetWorkflow(`fleetB${tag}`, provider, url, 200);
	a.importWorkflow(wa);
	b.importWorkflow(wb);
	const first = a.execute(wa.id, { timeoutMs: 300_000 });
	// The second process starts once the first has called the vendor 40 times (it learned).
	await until(
		'the first process calls',
		() => providers.capacity('/cap', provider).calls >= 40,
		120_000,
	);
	const learned = await limitRow(provider);
	const second = b.execute(wb.id, { timeoutMs: 300_000 });
	const [ra, rb] = await Promise.all([first, second]);
	assert.ok(ra.run && rb.run, `${ra.log.slice(-2000)}\n${rb.log.slice(-2000)}`);
	const [servedA, deferredA, failedA] = outputs(ra.run, 'chain');
	const [servedB, deferredB, failedB] = outputs(rb.run, 'chain');
	const s = providers.capacity('/cap', provider);
	const [[stateA]] = outputs(ra.run, 'state');
	console.log(
		`n8n ${major}: two processes, ${servedA.length} + ${servedB.length} served; ${s.calls} requests, ${s.r429} answered 429 (${((100 * s.r429) / s.calls).toFixed(1)} %); at most ${s.peak} in flight at the vendor (K = ${K}); the second started at the limit ${learned?.limit} the first learned; at the first's end: limit ${stateA.json.concurrency}, ${stateA.json.concurrency_in_flight} held`,
	);
	assert.equal(
		servedA.length + servedB.length,
		400,
		JSON.stringify(
			(deferredA ?? deferredB ?? failedA ?? failedB)?.[0]?.json?._resilience ?? null,
		).slice(0, 600),
	);
	assert.ok(s.r429 <= 0.1 * s.calls, `${s.r429} of ${s.calls} answered 429`);
	assert.ok(s.peak <= K + 2, `${s.peak} in flight at the vendor`);
	assert.ok(learned && learned.limit >= 1 && learned.limit <= K + 2, JSON.stringify(learned));
});

test('a process SIGKILLed while its calls are out: its share of the limit comes back within the lease', async () => {
	const provider = `slow-${tag}`;
	// Calls held 1.5 s; a 2 s deadline: the share's lease is 7 s (the deadline + 5 s).
	const url = `${base}/cap?k=100&hold=1500&id=${provider}`;
	const wf = fleetWorkflow(`fleetK${tag}`, provider, url, 20, {
		retryPolicy: { deadlineMs: 2000 },
	});
	a.importWorkflow(wf);
	let child;
	const run = a.execute(wf.id, { timeoutMs: 120_000, spawned: (c) => (child = c) });
	await until(
		'calls out at the vendor',
		() => providers.capacity('/cap', provider).calls >= 3,
		120_000,
	);
	const held = (row) =>
		(row?.shares ?? []).filter((x) => x.until_ms > Date.now()).reduce((n, x) => n + x.slots, 0);
	const before = await limitRow(provider);
	child.kill('SIGKILL');
	const killedAt = Date.now();
	const heldAtKill = held(before);
	await run;
	assert.ok(heldAtKill > 0, `the process held a share: ${JSON.stringify(before)}`);
	const lease = Math.max(...before.shares.map((x) => x.until_ms)) - killedAt;
	// The share's lease ends on the store's clock (this machine's, on loopback): it comes back then.
	await until(
		'the share back',
		async () => held(await limitRow(provider)) === 0,
		7_000 + 2_000,
		200,
	);
	const back = Date.now() - killedAt;
	console.log(
		`n8n ${major}: SIGKILLed holding ${heldAtKill} slots; back after ${(back / 1000).toFixed(1)} s (lease left at the kill: ${(lease / 1000).toFixed(1)} s, lease 7 s)`,
	);
	// Another process is served at once afterwards: nothing of the dead one's part is left.
	const wf2 = fleetWorkflow(`fleetL${tag}`, provider, url, 5, {
		retryPolicy: { deadlineMs: 2000 },
	});
	b.importWorkflow(wf2);
	const after = await b.execute(wf2.id, { timeoutMs: 120_000 });
	assert.equal(outputs(after.run, 'chain')[0].length, 5);
});
