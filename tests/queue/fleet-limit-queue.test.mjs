// The fleet's learned limit in real n8n queue mode: one main and two workers x 10 slots (Bull on
// Redis, n8n's data in Postgres), 400 executions of one item each fired at a webhook, every Call
// Chain (version 2.1 at its defaults) on one Redis store, against a loopback vendor that takes 4
// calls at once and answers 429 + Retry-After: 1 above (it counts every request in flight, a 429
// included). No execution sees more than its one item: only the limit on the store bounds the 20
// slots. All served, at most 10 % of requests answered 429, at most K + 2 in flight at any moment.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { n8nInstall, uid } from '../support/n8n.mjs';
import { startCluster } from '../support/queue/cluster.mjs';
import { startProviders } from '../support/providers.mjs';
import { REDIS_PORT, PG_PORT } from '../support/services.mjs';
import { redisCredential } from '../support/store-credentials.mjs';
import { link, node, webhook } from '../support/workflow-parts.mjs';

const major = Number(process.env.N8N_MAJOR ?? 2);
const id = uid().slice(0, 6);
const REDIS = { id: `rpcFleetQ${id}`.slice(0, 16), name: 'fleet queue redis' };
const WORKERS = 2;
const SLOTS = 10;
const K = 4;
const EXECUTIONS = 400;
let providers, base, cluster, db, flow;

function fleetWorkflow() {
	const path = `fleet-q-${id}`;
	const nodes = [
		webhook(path),
		node(
			'Call Chain',
			cluster.n8n.nodeType,
			2.1,
			300,
			{
				stateStore: 'redis',
				stateScope: 'provider',
				providers: { provider: [{ name: `k4-${id}`, url: `${base}/cap?k=${K}&id=k4-${id}` }] },
			},
			{ credentials: { redis: REDIS } },
		),
		// One report per execution and output: which output its item left by.
		...[0, 1, 2].map((out) =>
			node('Out ' + out, 'n8n-nodes-base.httpRequest', 4.2, 600, {
				method: 'POST',
				url: `${base}/ok?id=report-${id}`,
				sendBody: true,
				specifyBody: 'json',
				jsonBody: `={{ JSON.stringify({ exec: $('Webhook').first().json.body.exec, out: ${out}, reason: $json._resilience && $json._resilience.reason }) }}`,
				options: {},
			}),
		),
	];
	return {
		path,
		wf: {
			id: `fq${id}`.slice(0, 16),
			name: 'fleet limit queue',
			active: false,
			settings: { executionOrder: 'v1' },
			nodes,
			connections: link(['Webhook', ['Call Chain']], ['Call Chain', ['Out 0', 'Out 1', 'Out 2']]),
		},
	};
}

before(async () => {
	const t0 = Date.now();
	providers = await startProviders();
	base = `http://127.0.0.1:${providers.port}`;
	cluster = await startCluster(n8nInstall(major), {
		workers: WORKERS,
		concurrency: SLOTS,
		lockMs: 60_000,
	});
	flow = fleetWorkflow();
	await cluster.start([flow.wf], [redisCredential(REDIS.id, REDIS.name, REDIS_PORT)]);
	db = new pg.Client({ host: '127.0.0.1', port: PG_PORT, user: 'postgres', database: cluster.db });
	await db.connect();
	console.log(
		`n8n ${major} queue mode up in ${((Date.now() - t0) / 1000).toFixed(1)} s: main + ${WORKERS} workers x ${SLOTS}`,
	);
});

after(async () => {
	await db?.end().catch(() => {});
	await cluster?.stop();
	await providers?.close();
});

/** The reports by execution: { exec: [outputs its item left by] }. */
function reports() {
	const by = {};
	for (const a of providers.arrivals.filter((x) => x.id === `report-${id}`)) {
		const r = JSON.parse(a.body);
		(by[r.exec] ??= []).push(r);
	}
	return by;
}

test(`n8n ${major} queue mode: ${EXECUTIONS} one-item executions on ${WORKERS} workers x ${SLOTS} against a vendor taking ${K} at once: all served, <= 10 % 429s, at most K + 2 in flight`, async () => {
	const t0 = Date.now();
	const answers = await cluster.postAll(
		flow.path,
		Array.from({ length: EXECUTIONS }, (_, k) => ({ exec: `e${k}` })),
	);
	assert.deepEqual(
		answers.filter((s) => s !== 200),
		[],
		'n8n accepted every webhook call',
	);
	// Waits for the event it asserts on: every execution's report at the loopback server.
	for (;;) {
		const done = Object.keys(reports()).length;
		const r = await db.query(
			`SELECT count(*)::int AS n FROM execution_entity WHERE "workflowId" = $1 AND status IN ('error','crashed','canceled')`,
			[flow.wf.id],
		);
		assert.equal(r.rows[0].n, 0, 'no execution failed in n8n');
		if (done >= EXECUTIONS) break;
		assert.ok(
			Date.now() - t0 < 400_000,
			`${done}/${EXECUTIONS} reported; ${cluster.procs.map((p) => `${p.name}: ${p.log.slice(-1500)}`).join('\n')}`,
		);
		await new Promise((r) => setTimeout(r, 500));
	}
	const secs = (Date.now() - t0) / 1000;
	const by = reports();
	const outs = Object.values(by).map((rs) => rs.map((x) => x.out));
	const s = providers.capacity('/cap', `k4-${id}`);
	console.log(
		`n8n ${major} queue mode: ${EXECUTIONS} executions in ${secs.toFixed(1)} s; ${s.calls} requests, ${s.r429} answered 429 (${((100 * s.r429) / s.calls).toFixed(1)} %); at most ${s.peak} in flight at the vendor (K = ${K}, ${WORKERS * SLOTS} slots)`,
	);
	const notServed = Object.entries(by).filter(([, rs]) => rs.length !== 1 || rs[0].out !== 0);
	assert.deepEqual(notServed.slice(0, 3), [], `every item served once: ${outs.length}`);
	assert.ok(s.r429 <= 0.1 * s.calls, `${s.r429} of ${s.calls} answered 429`);
	assert.ok(s.peak <= K + 2, `${s.peak} in flight at the vendor`);
});
