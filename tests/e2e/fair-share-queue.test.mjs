// Two customers weighted 3:1 share a scarce vendor across the workers of real n8n queue mode
// (issue 59, Fair Share Key): one main and two workers x 10 slots (Bull on Redis, n8n's data in
// Postgres), N8N_MAJOR=2: 2.41.1, 1: 1.123.81. Four executions fired at a webhook at once, two
// per customer, each a batch of rows through Call Chain 2.2 at its defaults on one Redis store,
// its Fair Share Key the row's customer and its weight 3 for `a`, 1 for `b`, against a loopback
// OpenAI-compatible vendor that takes K = 4 requests at once, answers in 300 ms and 429 +
// Retry-After: 1 above (tests/support/tpm-vendor.mjs). Each customer has more work in flight
// than its part, on whichever workers Bull hands the executions to, so a split by who asks first
// would be about half each: `a` gets 75 ± 10 % of the vendor's calls in every 5-second window
// while both have work (after the first 5 s), 75 ± 5 % over them; every item leaves served or
// deferred with its retry_at, none failed; at most 10 % of the requests answered 429.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { n8nInstall, uid } from '../support/n8n.mjs';
import { startCluster } from '../support/queue/cluster.mjs';
import { startProviders } from '../support/providers.mjs';
import { startTpmVendor } from '../support/tpm-vendor.mjs';
import { REDIS_PORT } from '../support/services.mjs';
import { redisCredential } from '../support/store-credentials.mjs';
import { link, node } from '../support/workflow-parts.mjs';
import { split, holdSplit, perWindow } from '../support/fair-split.mjs';

const major = Number(process.env.N8N_MAJOR ?? 2);
const id = uid().slice(0, 6);
const REDIS = { id: `rpcFairQ${id}`.slice(0, 16), name: 'fair share queue redis' };
const WORKERS = 2;
const SLOTS = 10;
const K = 4;
const LATENCY_MS = 300;
// Two executions per customer: `a` has work for about 32 s at its three quarters, `b` more
// than its quarter meanwhile.
const ROWS = { a: 160, b: 100 };
const EXECUTIONS = ['a', 'b', 'a', 'b'];
const MODEL = { a: 'gpt-qa', b: 'gpt-qb' };
let vendor, reports, cluster, flow;

function fairWorkflow() {
	const path = `fair-q-${id}`;
	const report = (out) =>
		node(
			`Out ${out}`,
			'n8n-nodes-base.httpRequest',
			4.2,
			900,
			{
				method: 'POST',
				url: `http://127.0.0.1:${reports.port}/ok?id=report-${id}`,
				sendBody: true,
				specifyBody: 'json',
				jsonBody: `={{ JSON.stringify({ exec: $('Webhook').first().json.body.exec, out: ${out}, n: $input.all().length, retryAt: $input.all().every((i) => ${out} !== 1 || (i.json._resilience || {}).retry_at) }) }}`,
				options: {},
			},
			// One report per output an execution's items left by, with how many.
			{ executeOnce: true },
		);
	const nodes = [
		node(
			'Webhook',
			'n8n-nodes-base.webhook',
			2,
			0,
			{ httpMethod: 'POST', path, responseMode: 'onReceived', options: {} },
			{ webhookId: randomUUID() },
		),
		node('Rows', 'n8n-nodes-base.splitOut', 1, 300, { fieldToSplitOut: 'body.rows' }),
		node(
			'Call Chain',
			cluster.n8n.nodeType,
			2.2,
			600,
			{
				providers: {
					provider: [
						{
							name: `fair-q-${id}`,
							kind: 'openAiChat',
							model: `={{ $json.customer === "a" ? "${MODEL.a}" : "${MODEL.b}" }}`,
							userMessage: '={{ "row " + $json.n }}',
							authentication: 'none',
							openAiChatOptions: { baseUrl: `${vendor.url('fairq')}/v1`, maxTokens: 20 },
						},
					],
				},
				retryPolicy: {
					fairShareKey: '={{ "customer-" + $json.customer }}',
					fairShareWeight: '={{ $json.customer === "a" ? 3 : 1 }}',
				},
				stateStore: 'redis',
				stateScope: 'provider',
			},
			{ credentials: { redis: REDIS } },
		),
		...[0, 1, 2].map(report),
	];
	return {
		path,
		wf: {
			id: `fairq${id}`.slice(0, 16),
			name: 'fair share queue',
			active: false,
			settings: { executionOrder: 'v1' },
			nodes,
			connections: link(
				['Webhook', ['Rows']],
				['Rows', ['Call Chain']],
				['Call Chain', ['Out 0', 'Out 1', 'Out 2']],
			),
		},
	};
}

before(async () => {
	const t0 = Date.now();
	vendor = await startTpmVendor({ tpm: 1e9, delayMs: LATENCY_MS, capacity: K });
	reports = await startProviders();
	cluster = await startCluster(n8nInstall(major), {
		workers: WORKERS,
		concurrency: SLOTS,
		lockMs: 60_000,
	});
	flow = fairWorkflow();
	await cluster.start([flow.wf], [redisCredential(REDIS.id, REDIS.name, REDIS_PORT)]);
	console.log(
		`n8n ${major} queue mode up in ${((Date.now() - t0) / 1000).toFixed(1)} s: main + ${WORKERS} workers x ${SLOTS}`,
	);
});

after(async () => {
	await cluster?.stop();
	await reports?.close();
	await vendor?.close();
});

/** The reports by execution: { exec: { out: items } }, and whether every deferred one had its retry_at. */
function reported() {
	const by = {};
	let retryAt = true;
	for (const a of reports.arrivals.filter((x) => x.id === `report-${id}`)) {
		const r = JSON.parse(a.body);
		(by[r.exec] ??= {})[r.out] = r.n;
		retryAt &&= r.retryAt;
	}
	return { by, retryAt };
}

test(`n8n ${major} queue mode: two customers weighted 3:1 on ${WORKERS} workers get three quarters and one quarter of a vendor taking ${K} at once`, async (t) => {
	const bodies = EXECUTIONS.map((c, k) => ({
		exec: `e${k}`,
		rows: Array.from({ length: ROWS[c] }, (_, n) => ({ n: n + 1, customer: c })),
	}));
	const t0 = Date.now();
	const answers = await cluster.postAll(flow.path, bodies, bodies.length);
	assert.deepEqual(
		answers.filter((s) => s !== 200),
		[],
		'n8n accepted every webhook call',
	);
	// Waits for the event it asserts on: each execution's reports add up to its rows.
	const left = (by) =>
		bodies.filter(
			(b) => Object.values(by[b.exec] ?? {}).reduce((x, y) => x + y, 0) < b.rows.length,
		);
	for (;;) {
		const { by } = reported();
		if (left(by).length === 0) break;
		assert.ok(
			Date.now() - t0 < 300_000,
			`${JSON.stringify(by)}; ${cluster.procs.map((p) => `${p.name}: ${p.log.slice(-1500)}`).join('\n')}`,
		);
		await new Promise((r) => setTimeout(r, 500));
	}
	const { by, retryAt } = reported();
	const s = split(vendor, 'fairq', MODEL.a, MODEL.b);
	const ran = cluster.workers().map((w) => w.name);
	t.diagnostic(
		`n8n ${major} queue mode (${ran.join(', ')}): customer a (weight 3) per 5 s window while both had work: ${perWindow(s)}; ${s.sa.length} + ${s.sb.length} served, ${s.r429} of ${s.requests} answered 429, at most ${vendor.stats('fairq').peakAtOnce} at once; outputs by execution ${JSON.stringify(by)}`,
	);
	for (const b of bodies) {
		const outs = by[b.exec];
		assert.equal(outs[2] ?? 0, 0, `${b.exec}: none failed`);
		assert.equal(
			(outs[0] ?? 0) + (outs[1] ?? 0),
			b.rows.length,
			`${b.exec}: every item leaves once`,
		);
		assert.ok((outs[1] ?? 0) <= b.rows.length / 50, `${b.exec}: ${outs[1]} deferred`);
	}
	assert.ok(retryAt, 'every deferred item has its retry_at');
	holdSplit(s, 0.75, { k: K, latencyMs: LATENCY_MS });
});
