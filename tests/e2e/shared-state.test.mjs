// Two real n8n processes share provider state through Redis, and again through Postgres: after
// the first trips the breaker on an always-500 provider, the second sends it zero requests
// until the window ends — counted at the provider.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startProviders } from '../support/providers.mjs';
import { postgresCredential, redisCredential } from '../support/store-credentials.mjs';
import { n8nInstall, n8nInstance, uid } from '../support/n8n.mjs';
import { REDIS_PORT, PG_PORT } from '../support/services.mjs';

const major = Number(process.env.N8N_MAJOR ?? 2);
let providers,
	servers = [];
const id = uid();
const hits = (route, store) =>
	providers.arrivals.filter((a) => a.route === route && a.id === `${id}-${store}`).length;

const creds = [
	redisCredential('rpcRedisCred01', 'test redis', REDIS_PORT),
	postgresCredential('rpcPgCred01', 'test postgres', PG_PORT, { maxConnections: 10 }),
];

function workflow(store, nodeType, port) {
	const base = `http://127.0.0.1:${port}`;
	const cred =
		store === 'redis'
			? { redis: { id: 'rpcRedisCred01', name: 'test redis' } }
			: { postgres: { id: 'rpcPgCred01', name: 'test postgres' } };
	return {
		id: `shared${store}${id}`.slice(0, 21),
		name: `shared ${store}`,
		active: false,
		settings: { executionOrder: 'v1' },
		nodes: [
			{
				id: 'w',
				name: 'Webhook',
				type: 'n8n-nodes-base.webhook',
				typeVersion: 2,
				position: [0, 0],
				webhookId: randomUUID(),
				parameters: {
					httpMethod: 'POST',
					path: `shared-${store}-${id}`,
					responseMode: 'lastNode',
					options: {},
				},
			},
			{
				id: 'c',
				name: 'Chain',
				type: nodeType,
				typeVersion: 1,
				position: [300, 0],
				credentials: cred,
				parameters: {
					providers: {
						provider: [
							{ name: `dead-${id}`, url: `${base}/always500?id=${id}-${store}`, maxAttempts: 1 },
							{ name: `alive-${id}`, url: `${base}/ok?id=${id}-${store}&name=alive` },
						],
					},
					breaker: { threshold: 3, openMs: 600000 },
					stateStore: store,
				},
			},
		],
		connections: { Webhook: { main: [[{ node: 'Chain', type: 'main', index: 0 }]] } },
	};
}

async function post(port, path) {
	for (let i = 0; i < 60; i++) {
		const r = await fetch(`http://127.0.0.1:${port}/webhook/${path}`, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: '{}',
		});
		if (r.status !== 404) return r;
		await new Promise((res) => setTimeout(res, 500));
	}
	throw new Error('webhook never registered');
}

before(async () => {
	providers = await startProviders();
	const install = n8nInstall(major);
	// Both n8n folders hold the same credentials and active workflows: set up once, then copied.
	const first = n8nInstance(install);
	first.importCredentials(creds);
	const workflows = ['redis', 'postgres'].map((store) =>
		workflow(store, first.nodeType, providers.port),
	);
	first.importWorkflow(workflows);
	for (const wf of workflows) first.activate(wf.id);
	const second = n8nInstance(install, { copyOf: first });
	servers = await Promise.all(
		[first, second].map(async (n8n) => {
			const server = await n8n.start();
			return { port: server.port, server };
		}),
	);
});
after(async () => {
	await Promise.all(servers.map((s) => s.server.stop()));
	await providers?.close();
});

for (const store of ['redis', 'postgres']) {
	test(`${store}: the second n8n sends the tripped provider zero requests`, async () => {
		const [a, b] = servers;
		const path = `shared-${store}-${id}`;
		for (let k = 0; k < 3; k++) assert.equal((await post(a.port, path)).status, 200);
		assert.equal(hits('/always500', store), 3, 'n8n A tripped the breaker');
		const before = hits('/always500', store);
		const served = [];
		for (let k = 0; k < 5; k++) served.push((await (await post(b.port, path)).json()).served_by);
		assert.deepEqual(served, Array(5).fill('alive'));
		assert.equal(
			hits('/always500', store) - before,
			0,
			'n8n B: zero requests to the open provider',
		);
	});
}
