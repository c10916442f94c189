// Seed 001 in real n8n, counted at the provider: an always-500 primary, a healthy fallback,
// threshold 3. Without cooldown (n8n's HTTP Request node, Retry On Fail 5 tries): 50 requests.
// With this node: exactly 3, in one execution and across 10 executions of a long-running n8n.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startProviders } from '../support/providers.mjs';
import { n8nInstall, n8nInstance, branchesWorkflow, outputs, uid } from '../support/n8n.mjs';

const major = Number(process.env.N8N_MAJOR ?? 2);
let providers, base, install;
const hits = (route, id) =>
	providers.arrivals.filter((a) => a.route === route && a.id === id).length;

const chain = (id, extra = {}) => ({
	providers: {
		provider: [
			{ name: `primary-${id}`, url: `${base}/always500?id=${id}` },
			{ name: `fallback-${id}`, url: `${base}/ok?id=${id}&name=fallback` },
		],
	},
	breaker: { threshold: 3, openMs: 600000, halfOpenProbes: 0 },
	...extra,
});

before(async () => {
	providers = await startProviders();
	base = `http://127.0.0.1:${providers.port}`;
	install = n8nInstall(major);
});
after(async () => providers?.close());

test('seed 001 in one execution: 10 items cost the dead primary exactly 3 requests (baseline: 50)', async () => {
	const n8n = n8nInstance(install);
	const [a, b, c, d] = [uid(), uid(), uid(), uid()];
	const wf = branchesWorkflow(`seed001${uid()}`, n8n.nodeType, [
		{ name: 'with cooldown', items: 10, parameters: chain(a) },
		{ name: 'concurrency 5', items: 10, parameters: chain(b, { itemConcurrency: 5 }) },
		// Fail Over First (node version 2's Retry Policy): the dead primary is tried once per item
		// without backoff until its breaker opens, then skipped: still the threshold in total.
		{
			name: 'fail over first',
			items: 10,
			typeVersion: 2,
			parameters: {
				...chain(d),
				providers: {
					provider: chain(d).providers.provider.map((p) => ({ ...p, kind: 'custom' })),
				},
				retryPolicy: { failOverFirst: true },
			},
		},
	]);
	// Baseline: n8n's own HTTP Request node with Retry On Fail (5 tries, no wait) on the same provider.
	wf.nodes.push({
		id: 'h',
		name: 'HTTP Request, Retry On Fail',
		type: 'n8n-nodes-base.httpRequest',
		typeVersion: 4.2,
		position: [600, 600],
		parameters: { url: `${base}/always500?id=${c}`, options: {} },
		retryOnFail: true,
		maxTries: 5,
		waitBetweenTries: 0,
		onError: 'continueRegularOutput',
	});
	wf.nodes.push(
		{
			id: 'hs',
			name: 'baseline items',
			type: 'n8n-nodes-base.set',
			typeVersion: 3.4,
			position: [200, 600],
			parameters: { mode: 'raw', jsonOutput: JSON.stringify({ items: [...Array(10).keys()] }) },
		},
		{
			id: 'hp',
			name: 'baseline split',
			type: 'n8n-nodes-base.splitOut',
			typeVersion: 1,
			position: [400, 600],
			parameters: { fieldToSplitOut: 'items' },
		},
	);
	wf.connections.Start.main[0].push({ node: 'baseline items', type: 'main', index: 0 });
	wf.connections['baseline items'] = {
		main: [[{ node: 'baseline split', type: 'main', index: 0 }]],
	};
	wf.connections['baseline split'] = {
		main: [[{ node: 'HTTP Request, Retry On Fail', type: 'main', index: 0 }]],
	};
	n8n.importWorkflow(wf);
	const { run, log } = await n8n.execute(wf.id);
	assert.ok(run, log.slice(-2000));

	assert.equal(hits('/always500', c), 50, "n8n's Retry On Fail: 10 items x 5 tries");
	assert.equal(hits('/always500', a), 3, 'with cooldown: exactly the threshold');
	const [ok, deferred, failed] = outputs(run, 'with cooldown');
	assert.equal(ok.length, 10);
	assert.equal(deferred.length + failed.length, 0);
	assert.ok(
		ok.every(
			(x) => x.json._resilience.provider === `fallback-${a}` && x.json.served_by === 'fallback',
		),
	);
	assert.deepEqual(
		ok[0].json._resilience.transitions.map((t) => t.to),
		['open'],
		'the trip is reported once, on the item that caused it',
	);
	assert.ok(ok.slice(1).every((x) => x.json._resilience.transitions.length === 0));
	assert.equal(hits('/always500', d), 3, 'fail over first: still exactly the threshold');
	const [fofOk, ...fofRest] = outputs(run, 'fail over first');
	assert.equal(fofOk.length, 10);
	assert.equal(fofRest.flat().length, 0);
	assert.ok(
		fofOk.every((x) => x.json._resilience.sleptMs === 0),
		`no item backs off on the dead primary while the fallback can take it: ${JSON.stringify(fofOk.map((x) => x.json._resilience.sleptMs))}`,
	);
	const conc = hits('/always500', b);
	assert.ok(conc >= 3 && conc <= 3 + 4, `item concurrency 5: ${conc} <= threshold + c - 1 = 7`);
	assert.equal(outputs(run, 'concurrency 5')[0].length, 10);
	console.log(
		`n8n ${major}: dead-primary requests - Retry On Fail baseline 50, this node ${hits('/always500', a)}, concurrency 5: ${conc}, fail over first: ${hits('/always500', d)}`,
	);
});

test('seed 001 across 10 executions of one long-running n8n: still 3 in total', async () => {
	const n8n = n8nInstance(install);
	const id = uid();
	const path = `seed001-${id}`;
	const wf = {
		id: `hook${uid()}`,
		name: 'seed001 webhook',
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
				parameters: { httpMethod: 'POST', path, responseMode: 'lastNode', options: {} },
			},
			{
				id: 'c',
				name: 'Chain',
				type: n8n.nodeType,
				typeVersion: 1,
				position: [300, 0],
				parameters: chain(id),
			},
		],
		connections: { Webhook: { main: [[{ node: 'Chain', type: 'main', index: 0 }]] } },
	};
	n8n.importWorkflow(wf);
	n8n.activate(wf.id);
	const server = await n8n.start();
	const { port } = server;
	try {
		const served = [];
		for (let k = 0; k < 10; k++) {
			let r;
			for (let wait = 0; wait < 60; wait++) {
				r = await fetch(`http://127.0.0.1:${port}/webhook/${path}`, {
					method: 'POST',
					headers: { 'content-type': 'application/json' },
					body: JSON.stringify({ job: k }),
				});
				if (r.status !== 404) break; // 2.x registers webhooks a moment after the API is up
				await new Promise((res) => setTimeout(res, 500));
			}
			assert.equal(r.status, 200, await r.clone().text());
			served.push((await r.json()).served_by);
		}
		assert.deepEqual(served, Array(10).fill('fallback'));
		assert.equal(hits('/always500', id), 3, 'the cooldown is remembered across executions');
	} finally {
		await server.stop();
	}
});
