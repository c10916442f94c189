// Two customers weighted 3:1 sharing a scarce vendor across the workers of real n8n queue mode
// (issue 59, Fair Share Key): one main and two workers x 10 slots (Bull on Redis, n8n's data in
// Postgres). Four executions fired at a webhook at once, two per customer, each a batch of rows
// through Call Chain 2.2 at its defaults on one Redis store, its Fair Share Key the row's customer
// and its weight 3 for `a`, 1 for `b`, against a loopback OpenAI-compatible vendor that takes
// K = 4 requests at once, answers in 300 ms and 429 + Retry-After: 1 above
// (tests/support/tpm-vendor.mjs). Each customer has more work in flight than its part, so a split
// by who asks first would be about half each. The run, shared by its test
// (tests/e2e/fair-share-queue.test.mjs) and its bench (scripts/bench-fair-share-queue.mjs).
import { n8nInstall, uid } from './n8n.mjs';
import { startCluster } from './queue/cluster.mjs';
import { startProviders } from './providers.mjs';
import { startTpmVendor } from './tpm-vendor.mjs';
import { REDIS_PORT } from './services.mjs';
import { redisCredential } from './store-credentials.mjs';
import { link, node, webhook } from './workflow-parts.mjs';
import { split } from './fair-split.mjs';

export const WORKERS = 2;
export const SLOTS = 10;
export const K = 4;
export const LATENCY_MS = 300;
// Two executions per customer: `a` has work for about 32 s at its three quarters, `b` more
// than its quarter meanwhile.
const ROWS = { a: 160, b: 100 };
const EXECUTIONS = ['a', 'b', 'a', 'b'];
// Each execution's calls name a model of their own (`gpt-q<customer>-e<k>`): the split is read
// while every execution still had work.
const model = (customer, exec) => `gpt-q${customer}-${exec}`;

/**
 * One run in n8n `major`: the vendor's split (`fair-split.mjs`), each execution's items by output
 * ({ exec: { out: n } }), whether every deferred item had its retry_at, and how many items went in.
 */
export async function runFairShareQueue(major, log) {
	const id = uid().slice(0, 6);
	const REDIS = { id: `rpcFairQ${id}`.slice(0, 16), name: 'fair share queue redis' };
	const t0 = Date.now();
	const vendor = await startTpmVendor({ tpm: 1e9, delayMs: LATENCY_MS, capacity: K });
	const reports = await startProviders();
	let cluster;
	try {
		cluster = await startCluster(n8nInstall(major), {
			workers: WORKERS,
			concurrency: SLOTS,
			lockMs: 60_000,
		});
		const flow = fairWorkflow({ id, vendor, reports, cluster, REDIS });
		await cluster.start([flow.wf], [redisCredential(REDIS.id, REDIS.name, REDIS_PORT)]);
		log(
			`n8n ${major} queue mode up in ${((Date.now() - t0) / 1000).toFixed(1)} s: main + ${WORKERS} workers x ${SLOTS}`,
		);
		const bodies = EXECUTIONS.map((c, k) => ({
			exec: `e${k}`,
			rows: Array.from({ length: ROWS[c] }, (_, n) => ({ n: n + 1, customer: c, exec: `e${k}` })),
		}));
		const t1 = Date.now();
		const answers = await cluster.postAll(flow.path, bodies, bodies.length);
		if (answers.some((s) => s !== 200)) throw new Error(`n8n answered the webhook ${answers}`);
		// Waits for the event it reads: each execution's reports add up to its rows.
		const left = (by) =>
			bodies.filter(
				(b) => Object.values(by[b.exec] ?? {}).reduce((x, y) => x + y, 0) < b.rows.length,
			);
		for (;;) {
			const { by } = reported(reports, id);
			if (left(by).length === 0) break;
			if (Date.now() - t1 > 300_000)
				throw new Error(
					`${JSON.stringify(by)}; ${cluster.procs.map((p) => `${p.name}: ${p.log.slice(-1500)}`).join('\n')}`,
				);
			await new Promise((r) => setTimeout(r, 500));
		}
		const { by, retryAt } = reported(reports, id);
		return {
			s: split(
				vendor,
				'fairq',
				...['a', 'b'].map((c) =>
					EXECUTIONS.flatMap((x, k) => (x === c ? [model(c, `e${k}`)] : [])),
				),
			),
			by,
			retryAt,
			execs: bodies.map((b) => b.exec),
			items: bodies.reduce((n, b) => n + b.rows.length, 0),
		};
	} finally {
		await cluster?.stop();
		await reports.close();
		await vendor.close();
	}
}

function fairWorkflow({ id, vendor, reports, cluster, REDIS }) {
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
		webhook(path),
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
							// model(customer, exec), as the row says them.
							model: '={{ "gpt-q" + $json.customer + "-" + $json.exec }}',
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

/** The reports by execution: { exec: { out: items } }, and whether every deferred one had its retry_at. */
function reported(reports, id) {
	const by = {};
	let retryAt = true;
	for (const a of reports.arrivals.filter((x) => x.id === `report-${id}`)) {
		const r = JSON.parse(a.body);
		(by[r.exec] ??= {})[r.out] = r.n;
		retryAt &&= r.retryAt;
	}
	return { by, retryAt };
}
