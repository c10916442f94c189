// Cancel: an execution stopped (n8n's REST "stop", as the editor's Stop button does) while the
// node sleeps out a 12 s Retry-After ends promptly, and the provider gets no further call.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startProviders } from '../support/providers.mjs';
import { n8nInstall, n8nInstance, uid } from '../support/n8n.mjs';

const major = Number(process.env.N8N_MAJOR ?? 2);
const HINT_S = 12;
let providers, server, port, cookie;
const id = uid();
const BROWSER = 'e2e-cancel';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function rest(method, path, body) {
	const r = await fetch(`http://127.0.0.1:${port}/rest${path}`, {
		method,
		headers: {
			'content-type': 'application/json',
			'browser-id': BROWSER,
			...(cookie ? { cookie } : {}),
		},
		body: body ? JSON.stringify(body) : undefined,
	});
	const text = await r.text();
	if (!r.ok) throw new Error(`${method} /rest${path}: ${r.status} ${text.slice(0, 300)}`);
	return { json: text ? JSON.parse(text) : null, headers: r.headers };
}

before(async () => {
	providers = await startProviders();
	const n8n = n8nInstance(n8nInstall(major));
	const wf = {
		id: `cancel${id}`,
		name: 'cancel while sleeping',
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
					path: `cancel-${id}`,
					responseMode: 'onReceived',
					options: {},
				},
			},
			{
				id: 'c',
				name: 'Chain',
				type: n8n.nodeType,
				typeVersion: 1,
				position: [300, 0],
				parameters: {
					providers: {
						provider: [
							{
								name: `sleepy-${id}`,
								url: `http://127.0.0.1:${providers.port}/ra?n=1&v=${HINT_S}&id=${id}`,
							},
						],
					},
				},
			},
		],
		connections: { Webhook: { main: [[{ node: 'Chain', type: 'main', index: 0 }]] } },
	};
	n8n.importWorkflow(wf);
	n8n.activate(wf.id);
	server = await n8n.start();
	port = server.port;
	const setup = await rest('POST', '/owner/setup', {
		email: 'owner@example.com',
		firstName: 'E2e',
		lastName: 'Owner',
		password: 'Passw0rd-e2e',
	});
	cookie = setup.headers.get('set-cookie').split(';')[0];
});
after(async () => {
	await server?.stop();
	await providers?.close();
});

test('stopping the execution while the node sleeps out a Retry-After ends it promptly', async () => {
	// Webhooks of active workflows register a moment after the REST API answers.
	let r;
	for (let i = 0; i < 60; i++) {
		r = await fetch(`http://127.0.0.1:${port}/webhook/cancel-${id}`, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: '{}',
		});
		if (r.status !== 404) break;
		await sleep(500);
	}
	assert.equal(r.status, 200);
	for (let i = 0; i < 100 && !providers.arrivals.some((a) => a.id === id); i++) await sleep(100);
	const first = providers.arrivals.find((a) => a.id === id);
	assert.ok(first, 'the provider got the first call (503 + Retry-After)');
	await sleep(1000); // the node is now sleeping out the hint
	const list = (await rest('GET', '/executions')).json.data;
	const running = (list.results ?? list).filter((e) => e.status === 'running');
	assert.equal(running.length, 1, `one running execution: ${JSON.stringify(list).slice(0, 500)}`);
	const t0 = Date.now();
	await rest('POST', `/executions/${running[0].id}/stop`);
	let ended;
	for (let i = 0; i < 100; i++) {
		const e = (await rest('GET', `/executions/${running[0].id}`)).json.data;
		if (e.status !== 'running' && e.stoppedAt) {
			ended = e;
			break;
		}
		await sleep(100);
	}
	const ms = Date.now() - t0;
	console.log(
		`n8n ${major}: stopped ${ms} ms after the stop request, ${((Date.now() - first.t) / 1000).toFixed(1)} s into a ${HINT_S} s Retry-After; status ${ended?.status}`,
	);
	assert.ok(ended, 'the execution ended');
	assert.ok(ms < 3000, `ended promptly (${ms} ms), not after the ${HINT_S} s sleep`);
	assert.match(ended.status, /canceled|cancelled|crashed|error/);
	await sleep(HINT_S * 1000 - (Date.now() - first.t) + 1500);
	assert.equal(
		providers.arrivals.filter((a) => a.id === id).length,
		1,
		'no call after the stop, not even when the hint ran out',
	);
});
