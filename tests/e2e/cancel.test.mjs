// Cancel: an execution stopped (n8n's REST "stop", as the editor's Stop button does) while the
// node sleeps out a 12 s Retry-After ends promptly, and the provider gets no further call; one
// stopped while its call is out gives back that call's Max In Flight slot at once, so the next
// execution calls without waiting for the slot's lease to end.
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
/** Polls `ok` until it holds, failing after `ms`. */
const until = async (what, ok, ms = 30_000) => {
	const end = Date.now() + ms;
	for (;;) {
		const v = await ok();
		if (v) return v;
		assert.ok(Date.now() < end, `timed out waiting for ${what}`);
		await sleep(100);
	}
};
const calls = (of = id) => providers.arrivals.filter((a) => a.id === of);
/** A new execution; a marker's call goes to an id of its own and is answered 200 at once. */
const fire = (marker = false, path = 'cancel') =>
	fetch(`http://127.0.0.1:${port}/webhook/${path}-${id}`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify(marker ? { m: 1 } : {}),
	});

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
								url: `=http://127.0.0.1:${providers.port}/ra?status=429&n={{ $json.body.m ? 0 : 1 }}&v=${HINT_S}&id=${id}{{ $json.body.m ? '-m' : '' }}`,
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
	// One call at a time to a vendor answering in 8 s: a cancel while it is out.
	const capped = structuredClone(wf);
	capped.id = `cancelcap${id}`;
	capped.name = 'cancel while a call is out';
	capped.nodes[0].webhookId = randomUUID();
	capped.nodes[0].parameters.path = `cancelcap-${id}`;
	capped.nodes[1].parameters.providers.provider[0] = {
		name: `capped-${id}`,
		url: `=http://127.0.0.1:${providers.port}/ok?delay={{ $json.body.m ? 0 : 8000 }}&id=${id}-cap{{ $json.body.m ? '-m' : '' }}`,
		maxInFlight: 1,
	};
	n8n.importWorkflow(capped);
	n8n.activate(capped.id);
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
	const r = await until('the webhook', async () => {
		const res = await fire();
		await res.arrayBuffer();
		return res.status !== 404 && res;
	});
	assert.equal(r.status, 200);
	const first = await until('the first call (429 + Retry-After)', () => calls()[0]);
	// The node is now sleeping out the hint: its execution runs.
	const running = await until('the running execution', async () => {
		const list = (await rest('GET', '/executions')).json.data;
		const found = (list.results ?? list).filter((e) => e.status === 'running');
		return found.length > 0 && found;
	});
	assert.equal(
		running.length,
		1,
		`one running execution: ${JSON.stringify(running).slice(0, 500)}`,
	);
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
	// Markers, one new execution at a time: each is deferred while the gate the 429 closed for
	// every execution stays shut, as long as the stopped execution's own wait would have run. The first marker the
	// vendor sees came once that wait was over; a second one, later still, bounds the window in
	// which the stopped execution would have called.
	await until(
		'two markers at the vendor',
		async () => {
			if (calls(`${id}-m`).length >= 2) return true;
			await (await fire(true)).arrayBuffer();
			return false;
		},
		HINT_S * 1000 + 30_000,
	);
	assert.ok(calls(`${id}-m`)[0].t >= first.t + HINT_S * 1000 - 50, 'the gate held the markers');
	assert.equal(
		calls().length,
		1,
		'no call after the stop, not even when the hint ran out: only the markers came',
	);
});

test('stopping the execution while its call is out gives back its Max In Flight slot at once', async () => {
	const r = await until('the webhook', async () => {
		const res = await fire(false, 'cancelcap');
		await res.arrayBuffer();
		return res.status !== 404 && res;
	});
	assert.equal(r.status, 200);
	await until('the call out at the vendor', () => calls(`${id}-cap`)[0]);
	const running = await until('the running execution', async () => {
		const list = (await rest('GET', '/executions')).json.data;
		const found = (list.results ?? list).filter(
			(e) => e.status === 'running' && e.workflowId === `cancelcap${id}`,
		);
		return found.length > 0 && found;
	});
	const t0 = Date.now();
	await rest('POST', `/executions/${running[0].id}/stop`);
	await until('the stopped execution', async () => {
		const e = (await rest('GET', `/executions/${running[0].id}`)).json.data;
		return e.status !== 'running' && e.stoppedAt;
	});
	// A new execution now: its one call goes out at once, though the stopped call's lease (the
	// probe lease: at least the deadline + 5 s) has not ended.
	await (await fire(true, 'cancelcap')).arrayBuffer();
	const marker = await until(
		'the next execution at the vendor',
		() => calls(`${id}-cap-m`)[0],
		30_000,
	);
	const ms = marker.t - t0;
	console.log(`n8n ${major}: the next execution's call came ${ms} ms after the stop`);
	assert.ok(ms < 4000, `the slot was given back at the stop (${ms} ms), not when its lease ended`);
});
