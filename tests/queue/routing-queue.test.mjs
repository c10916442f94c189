// Routing among healthy providers in real n8n queue mode (issue 29): one n8n main and two workers
// (Bull on Redis, n8n's data in Postgres), every Call Chain (version 2) on one Redis store, the
// loopback provider counting every call (tests/support/providers.mjs). Executions are fired at a
// webhook; each item's call carries its execution, its item number and the worker that ran it
// (RPC_WORKER) in its body, and a report node after the chain says which worker ran the
// execution and how many items came out of each output.
// - weights 3:1 over 20 executions x 100 items = 2000 calls spread over both workers: 75 % ± 3 %
//   on the weight-3 path (the draw is random per item: one standard deviation is 1 %), every
//   item served once, by its first choice;
// - tiers: a1 and a2 (tier 1, weighted 1:1) take every call, b (tier 2) none.
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
const REDIS = { id: `rpcRouteQ${id}`.slice(0, 16), name: 'routing queue redis' };
const WORKERS = 2;
const EXEC = "{{ $('Webhook').first().json.body.exec }}";
let providers, base, cluster, db;

/** Provider row `tag` at /ok, its calls tagged; `options`: Tier and Weight. */
const row = (tag, options = {}) => ({
	name: `${tag}-${id}`,
	url: `${base}/ok?id=${tag}-${id}`,
	bodyJson: `={ "exec": "${EXEC}", "n": {{ $json.n }}, "w": "{{ $env.RPC_WORKER }}" }`,
	options,
});

/** Report node of Call Chain's output `out` (0 served, 1 deferred, 2 failed): once an
 * execution, with the worker and that output's items (their providers and route). */
const report = (name, out) =>
	node(
		name,
		'n8n-nodes-base.httpRequest',
		4.2,
		900,
		{
			method: 'POST',
			url: `${base}/ok?id=report-${id}`,
			sendBody: true,
			specifyBody: 'json',
			jsonBody: `={{ JSON.stringify({ exec: $('Webhook').first().json.body.exec, w: $env.RPC_WORKER, out: ${out}, items: $('Call Chain').all(${out}).map(i => ({ n: i.json.echo ? i.json.echo.n : i.json.n, provider: i.json._resilience && i.json._resilience.provider, routing: i.json._resilience && i.json._resilience.route && i.json._resilience.route.routing, first: i.json._resilience && i.json._resilience.route && i.json._resilience.route.order[0], skipped: i.json._resilience && (i.json._resilience.skipped || []).length })) }) }}`,
			options: {},
		},
		{ executeOnce: true },
	);

/** Webhook `path` → `items` items {n} → Call Chain (version 2, Redis) → a report per output. */
function chainWorkflow(key, items, parameters) {
	const path = `route-q-${key}-${id}`;
	const nodes = [
		webhook(path),
		node('Items', 'n8n-nodes-base.set', 3.4, 150, {
			mode: 'raw',
			jsonOutput: JSON.stringify({
				items: Array.from({ length: items }, (_, i) => ({ n: i + 1 })),
			}),
		}),
		node('Split', 'n8n-nodes-base.splitOut', 1, 300, { fieldToSplitOut: 'items' }),
		node(
			'Call Chain',
			cluster.n8n.nodeType,
			2,
			600,
			{ stateStore: 'redis', stateScope: 'provider', ...parameters },
			{ credentials: { redis: REDIS } },
		),
		report('Served', 0),
		report('Deferred', 1),
		report('Failed', 2),
	];
	return {
		key,
		path,
		items,
		wf: {
			id: `rq${key}${id}`.slice(0, 16),
			name: `routing queue ${key}`,
			active: false,
			settings: { executionOrder: 'v1' },
			nodes,
			connections: link(
				['Webhook', ['Items']],
				['Items', ['Split']],
				['Split', ['Call Chain']],
				['Call Chain', ['Served', 'Deferred', 'Failed']],
			),
		},
	};
}

let FLOWS;

before(async () => {
	const t0 = Date.now();
	providers = await startProviders();
	base = `http://127.0.0.1:${providers.port}`;
	// Nothing is killed: n8n's own 30 s job lock, so a busy worker's job is not run twice.
	cluster = await startCluster(n8nInstall(major), {
		workers: WORKERS,
		concurrency: 4,
		lockMs: 30_000,
	});
	FLOWS = {
		weighted: chainWorkflow('weighted', 100, {
			providers: { provider: [row('w-a', { weight: 3 }), row('w-b', { weight: 1 })] },
			retryPolicy: { routing: 'weighted' },
		}),
		tiers: chainWorkflow('tiers', 50, {
			providers: { provider: [row('t-b', { tier: 2 }), row('t-a1'), row('t-a2')] },
			retryPolicy: { routing: 'weighted' },
		}),
	};
	await cluster.start(
		Object.values(FLOWS).map((f) => f.wf),
		[redisCredential(REDIS.id, REDIS.name, REDIS_PORT)],
	);
	db = new pg.Client({ host: '127.0.0.1', port: PG_PORT, user: 'postgres', database: cluster.db });
	await db.connect();
	console.log(
		`n8n ${major} queue mode up in ${((Date.now() - t0) / 1000).toFixed(1)} s: main + ${WORKERS} workers x 4`,
	);
});

after(async () => {
	await db?.end().catch(() => {});
	await cluster?.stop();
	await providers?.close();
});

/** n8n's status counts of the workflow's executions (successful ones are not kept). */
async function statuses(wid) {
	const r = await db.query(
		'SELECT status, count(*)::int AS n FROM execution_entity WHERE "workflowId" = $1 GROUP BY status',
		[wid],
	);
	return Object.fromEntries(r.rows.map((x) => [x.status, x.n]));
}

/** Calls of provider `tag`, their bodies parsed. */
const callsOf = (tag) =>
	providers.arrivals.filter((a) => a.id === `${tag}-${id}`).map((a) => JSON.parse(a.body));

/** The reports of the executions named `prefix`…: { exec: { w, out: { 0: items, 1: …, 2: … } } }. */
function reports(prefix) {
	const by = {};
	for (const a of providers.arrivals.filter((x) => x.id === `report-${id}`)) {
		const r = JSON.parse(a.body);
		if (!r.exec.startsWith(prefix)) continue;
		const e = (by[r.exec] ??= { w: r.w, out: {}, times: 0 });
		e.out[r.out] = r.items;
		if (r.out === 0) e.times += 1;
	}
	return by;
}

/** Fire `count` executions of `flow` at once; wait until each has reported (or n8n failed it). */
async function runExecutions(flow, count, timeoutMs = 150_000) {
	const t0 = Date.now();
	const prefix = `${flow.key}-`;
	const answers = await Promise.all(
		Array.from({ length: count }, (_, k) => cluster.post(flow.path, { exec: `${prefix}${k}` })),
	);
	assert.deepEqual(
		answers.filter((s) => s !== 200),
		[],
		'n8n accepted every webhook call',
	);
	for (;;) {
		await new Promise((r) => setTimeout(r, 500));
		const done = Object.keys(reports(prefix)).length;
		const s = await statuses(flow.wf.id);
		const failed = (s.error ?? 0) + (s.crashed ?? 0) + (s.canceled ?? 0);
		if (done + failed >= count) {
			assert.equal(failed, 0, `executions failed in n8n: ${JSON.stringify(s)}`);
			break;
		}
		if (Date.now() - t0 > timeoutMs)
			assert.fail(
				`${done}/${count} executions reported after ${timeoutMs} ms; n8n statuses ${JSON.stringify(s)}; ${cluster.procs.map((p) => `${p.name}: ${p.log.slice(-1500)}`).join('\n')}`,
			);
	}
	const secs = (Date.now() - t0) / 1000;
	return { by: reports(prefix), secs };
}

/** Executions per worker and calls per worker, from the reports and the calls' bodies. */
function spread(by, calls) {
	const execs = {},
		perWorker = {};
	for (const e of Object.values(by)) execs[e.w] = (execs[e.w] ?? 0) + 1;
	for (const c of calls) perWorker[c.w] = (perWorker[c.w] ?? 0) + 1;
	return { execs, calls: perWorker };
}

/** Every (execution, item) of `by` served exactly once by output 0, nothing deferred or failed. */
function assertEveryItemServed(by, count, items) {
	assert.equal(Object.keys(by).length, count, 'every execution reported');
	for (const [exec, e] of Object.entries(by)) {
		assert.equal(e.times, 1, `${exec} reported once (not run twice)`);
		assert.equal(e.out[1], undefined, `${exec}: items deferred ${JSON.stringify(e.out[1])}`);
		assert.equal(e.out[2], undefined, `${exec}: items failed ${JSON.stringify(e.out[2])}`);
		assert.deepEqual(
			e.out[0].map((i) => i.n).sort((a, b) => a - b),
			Array.from({ length: items }, (_, i) => i + 1),
			`${exec}: every item on the served output`,
		);
		assert.ok(
			e.out[0].every((i) => i.routing === 'weighted'),
			`${exec}: routing ${e.out[0][0]?.routing}`,
		);
	}
}

/** One call per (execution, item) at the vendor, none missing, none twice. */
function assertOneCallPerItem(calls, count, items) {
	const seen = new Map();
	for (const c of calls) seen.set(`${c.exec}/${c.n}`, (seen.get(`${c.exec}/${c.n}`) ?? 0) + 1);
	assert.equal(seen.size, count * items, 'every item reached the vendor');
	const twice = [...seen].filter(([, n]) => n > 1);
	assert.deepEqual(twice, [], 'no item called twice');
}

test(`n8n ${major} queue mode: weights 3:1 over 20 executions x 100 items on two workers give 75 % ± 3 %`, async () => {
	const flow = FLOWS.weighted;
	const { by, secs } = await runExecutions(flow, 20);
	const [a, b] = [callsOf('w-a'), callsOf('w-b')];
	const share = a.length / (a.length + b.length);
	const s = spread(by, [...a, ...b]);
	const served = Object.values(by).flatMap((e) => e.out[0] ?? []);
	const servedBy = served.reduce((m, i) => ((m[i.provider] = (m[i.provider] ?? 0) + 1), m), {});
	const firstA = served.filter((i) => i.first === `w-a-${id}`).length;
	const offFirst = served.filter((i) => i.provider !== i.first).length;
	const skipped = served.reduce((n, i) => n + (i.skipped ?? 0), 0);
	const perWorker = Object.keys(s.calls)
		.sort()
		.map((w) => `${w} ${((100 * a.filter((c) => c.w === w).length) / s.calls[w]).toFixed(1)} %`);
	console.log(
		`n8n ${major} weighted 3:1 in queue mode: 20 executions x 100 items in ${secs.toFixed(1)} s; ` +
			`calls w-a ${a.length}, w-b ${b.length}: w-a's share ${(100 * share).toFixed(1)} % ` +
			`(per worker: ${perWorker.join(', ')}); executions per worker ${JSON.stringify(s.execs)}, ` +
			`calls per worker ${JSON.stringify(s.calls)}; node's view: served ${JSON.stringify(servedBy)}, ` +
			`w-a drawn first ${firstA}, served off their first choice ${offFirst}, skips ${skipped}`,
	);
	assertEveryItemServed(by, 20, 100);
	assertOneCallPerItem([...a, ...b], 20, 100);
	assert.equal(a.length + b.length, 2000, 'one call per item');
	assert.ok(Math.abs(share - 0.75) <= 0.03, `w-a's share ${share}`);
	assert.equal(servedBy[`w-a-${id}`], a.length, "the node's view agrees with the vendor's");
	assert.equal(offFirst, 0, 'healthy providers: every item served by its first choice');
	assert.ok(Object.keys(s.execs).length >= 2, `executions on both workers: ${JSON.stringify(s)}`);
	for (const w of Object.keys(s.execs))
		assert.equal(
			s.calls[w],
			100 * s.execs[w],
			`each worker's calls are its executions' items: ${JSON.stringify(s)}`,
		);
});

test(`n8n ${major} queue mode: tier 2 takes nothing while tier 1 serves`, async () => {
	const flow = FLOWS.tiers;
	const { by, secs } = await runExecutions(flow, 6);
	const [a1, a2, b] = [callsOf('t-a1'), callsOf('t-a2'), callsOf('t-b')];
	const s = spread(by, [...a1, ...a2, ...b]);
	console.log(
		`n8n ${major} tiers in queue mode: 6 executions x 50 items in ${secs.toFixed(1)} s; ` +
			`calls a1 ${a1.length}, a2 ${a2.length}, b (tier 2) ${b.length}; executions per worker ${JSON.stringify(s.execs)}`,
	);
	assertEveryItemServed(by, 6, 50);
	assertOneCallPerItem([...a1, ...a2, ...b], 6, 50);
	assert.equal(b.length, 0, 'tier 2 untouched');
	assert.ok(a1.length >= 90 && a2.length >= 90, 'a1 and a2 share the load (1:1)');
});
