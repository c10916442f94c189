// One real queue-mode run of a scenario: the vendor on loopback plays the scenario, one n8n main
// and `workers` n8n workers execute a webhook workflow per policy, executions are fired at the
// webhook on the scenario's schedule, and every request is counted at the vendor.
import pg from 'pg';
import Redis from 'ioredis';
import { createRequire } from 'node:module';
import path from 'node:path';
import { n8nInstall, uid } from '../n8n.mjs';
import { REDIS_PORT, PG_PORT } from '../services.mjs';
import { startVendor } from './vendor.mjs';
import { startCluster } from './cluster.mjs';
import { workflow } from './workflows.mjs';
import { tally, spread, perSecond } from './metrics.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const LOST = ['error', 'crashed', 'canceled'];

/** When each execution is fired, in ms from t = 0 (the simulator's `arrivals()`). */
export function schedule(ex) {
	const times = Array(ex.queued ?? 0).fill(0);
	for (let k = 0; k < (ex.count ?? 0); k++)
		times.push(Math.round(((ex.start_s ?? 0) + k / ex.per_s) * 1000));
	return times;
}

/**
 * Run `policies` one after another on one cluster. `kill`: in the shared_store run, leave the
 * first request after the vendor recovers (the half-open probe) unanswered and SIGKILL the
 * worker that sent it. `log(line)` reports progress.
 */
export async function queueRun(scenario, { policies, major = 2, kill = false, log = () => {} }) {
	const vendor = await startVendor(scenario);
	const base = `http://127.0.0.1:${vendor.port}`;
	const tag = uid().slice(0, 6);
	const install = n8nInstall(major);
	const cluster = await startCluster(install, {
		workers: scenario.workers,
		concurrency: scenario.concurrency,
	});
	const redisCred = { id: `rpcQRedis${tag}`.slice(0, 16), name: 'queue redis' };
	const flows = Object.fromEntries(
		policies.map((p) => [
			p,
			workflow(p, { base, tag, scenario, nodeType: cluster.n8n.nodeType, redisCred }),
		]),
	);
	const db = new pg.Client({
		host: '127.0.0.1',
		port: PG_PORT,
		user: 'postgres',
		database: cluster.db,
	});
	const results = {};
	try {
		const t0 = Date.now();
		log(
			`importing ${policies.length} workflows into a fresh Postgres database, starting n8n ${install.major}`,
		);
		await cluster.start(
			Object.values(flows).map((f) => f.wf),
			[
				{
					...redisCred,
					type: 'redis',
					data: { host: '127.0.0.1', port: REDIS_PORT, database: 0, password: '' },
				},
			],
		);
		log(
			`n8n ${install.major} queue mode up in ${((Date.now() - t0) / 1000).toFixed(1)} s: main + ${scenario.workers} workers x ${scenario.concurrency}`,
		);
		await db.connect();
		for (const policy of policies) {
			results[policy] = await runPolicy(policy, flows[policy], {
				scenario,
				vendor,
				cluster,
				db,
				kill: kill && policy === 'shared_store',
				log,
			});
			log(
				`${policy}: ${JSON.stringify(results[policy].figures)} n8n statuses ${JSON.stringify(results[policy].statuses)}, webhook answers not 200: ${results[policy].webhook_not_200} (${results[policy].webhook_answers.join(', ')})`,
			);
		}
	} finally {
		await db.end().catch(() => {});
		await cluster.stop();
		await vendor.close();
	}
	return {
		results,
		workers: scenario.workers,
		concurrency: scenario.concurrency,
		major: install.major,
	};
}

async function statuses(db, workflowId) {
	const r = await db.query(
		'SELECT status, count(*)::int AS n FROM execution_entity WHERE "workflowId" = $1 GROUP BY status',
		[workflowId],
	);
	return Object.fromEntries(r.rows.map((x) => [x.status, x.n]));
}

async function runPolicy(policy, { path, wf }, { scenario, vendor, cluster, db, kill, log }) {
	const times = schedule(scenario.executions);
	const total = times.length;
	const horizonMs = (scenario.horizon_s ?? 120) * 1000;
	const crash = {};
	if (kill) {
		vendor.hangFirst((t) => t >= vendor.recoveredMs);
		vendor.server.once('hung', (a) => {
			crash.probe = a;
			crash.worker = a.worker;
			crash.atMs = vendor.now();
			// The lease the probe holds, as the store has it (written before the call went out, so
			// the row already holds it): the next probe must not come before it ends, however late
			// a loaded machine delivered the hung request.
			crash.row = breakerRow(wf).catch((e) => ({ error: e.message }));
			cluster.kill(a.worker);
			log(
				`${policy}: the probe at ${(a.t / 1000).toFixed(2)} s from ${a.worker} hangs; ${a.worker} SIGKILLed`,
			);
		});
	}
	vendor.begin();
	const fired = [];
	const firedAt = new Map();
	const firing = (async () => {
		for (let k = 0; k < total; k++) {
			const wait = times[k] - vendor.now();
			if (wait > 0) await sleep(wait);
			firedAt.set(`${policy}-${k}`, vendor.now());
			fired.push(cluster.post(path, { exec: `${policy}-${k}` }).catch((e) => `error ${e.message}`));
		}
	})();
	// A webhook call n8n did not accept (an overloaded main answers 5xx or times out) never became
	// an execution: it is counted as refused, and the run waits only for the accepted ones.
	let answers;
	let s = {};
	const given = () => LOST.reduce((n, k) => n + (s[k] ?? 0), 0) + vendor.failed.size;
	for (;;) {
		await sleep(500);
		if (!answers && fired.length === total) answers = await Promise.all(fired);
		s = await statuses(db, wf.id);
		const accepted = answers ? answers.filter((x) => x === 200).length : Infinity;
		if (vendor.done.size + given() >= accepted || vendor.now() > horizonMs) break;
	}
	await firing;
	answers ??= await Promise.all(fired);
	const refused = answers.filter((x) => x !== 200).length;
	// Lost: n8n failed the execution or refused it, or the node gave the item up (failed output).
	const lost = given() + refused;
	const figures = tally(vendor, scenario, {
		total,
		lost,
		unfinished: Math.max(0, total - vendor.done.size - lost),
	});
	const result = {
		policy,
		figures,
		statuses: s,
		webhook_not_200: refused,
		webhook_answers: [...new Set(answers.map(String))],
		workers: spread(vendor),
		per_s: perSecond(vendor, Math.ceil(vendor.now() / 1000)),
	};
	result.dispatch_ms = dispatch(vendor, firedAt);
	result.gave_up = vendor.failed.size;
	if (lost) result.lost_errors = await lostErrors(db, wf.id, cluster.install);
	if (kill) result.crash = crashFigures(vendor, crash, await crash.row);
	if (policy === 'shared_store') result.breaker = await breakerRow(wf);
	return result;
}

/** Time from firing the webhook to the execution's first request at the vendor (queue + start). */
function dispatch(vendor, firedAt) {
	const first = new Map();
	for (const a of vendor.arrivals) if (!first.has(a.exec)) first.set(a.exec, a.t);
	const d = [...first].map(([e, t]) => t - (firedAt.get(e) ?? t)).sort((x, y) => x - y);
	const q = (f) =>
		d.length ? Math.round(d[Math.min(d.length - 1, Math.floor(f * d.length))]) : null;
	return {
		min: d.length ? Math.round(d[0]) : null,
		p50: q(0.5),
		p90: q(0.9),
		max: d.length ? Math.round(d[d.length - 1]) : null,
	};
}

/** Why n8n counted executions as failed: the error messages in their saved data. */
async function lostErrors(db, workflowId, install) {
	// n8n saves run data in flatted form; read it with n8n's own copy of flatted.
	const { parse } = createRequire(path.join(install.dir, 'node_modules/n8n/package.json'))(
		'flatted',
	);
	const r = await db.query(
		`SELECT e.status, e."stoppedAt", d.data FROM execution_entity e LEFT JOIN execution_data d ON d."executionId" = e.id
    WHERE e."workflowId" = $1 AND e.status <> 'success'`,
		[workflowId],
	);
	const counts = {};
	for (const row of r.rows) {
		let why = 'no run data saved';
		try {
			const d = row.data ? parse(row.data) : null;
			const err = d?.resultData?.error;
			if (d)
				why = `${d.resultData?.lastNodeExecuted ?? '?'}: ${String(err?.message ?? 'no error').slice(0, 160)}`;
		} catch (e) {
			why = `unreadable run data (${e.message})`;
		}
		const key = `${row.status}: ${why}`;
		counts[key] = (counts[key] ?? 0) + 1;
	}
	return counts;
}

/** The shared breaker row of the run's provider, read from Redis after the run. */
async function breakerRow(wf) {
	const provider = wf.nodes.find((n) => n.name === 'Chain').parameters.providers.provider[0].name;
	const redis = new Redis({ host: '127.0.0.1', port: REDIS_PORT, lazyConnect: true });
	try {
		await redis.connect();
		const keys = (await redis.keys('rpc:*')).filter(
			(k) => k.includes(provider) && k.endsWith(':breaker'),
		);
		if (keys.length !== 1) return { keys };
		const v = await redis.get(keys[0]);
		const row = JSON.parse(v.slice(v.indexOf('|') + 1));
		return {
			key: keys[0],
			phase: row.phase,
			trips: row.trips,
			probes_held: row.probes?.length ?? 0,
			probe_until_ms: (row.probes ?? []).map((l) => l.until_ms),
		};
	} finally {
		redis.disconnect();
	}
}

/** What happened after the probe holder died: who probed next, when, and whose items finished. */
function crashFigures(vendor, crash, row) {
	if (!crash.probe) return { happened: false };
	// The store's clock is this machine's (Redis TIME): in the scenario's clock, t = 0 at t0.
	const t0 = Date.now() - vendor.now();
	const until = row?.probe_until_ms?.length === 1 ? row.probe_until_ms[0] : null;
	const after = vendor.arrivals.filter((a) => a.t > crash.probe.t && a.kind !== 'hung');
	const next = after[0] ?? null;
	const killedExecs = new Set(
		vendor.arrivals.filter((a) => a.worker === crash.worker).map((a) => a.exec),
	);
	const others = new Set(
		vendor.arrivals.filter((a) => a.worker !== crash.worker).map((a) => a.exec),
	);
	const othersNotDone = [...others].filter((e) => !killedExecs.has(e) && !vendor.done.has(e));
	return {
		happened: true,
		killed: crash.worker,
		probe_at_s: crash.probe.t / 1000,
		lease_until_s: until === null ? null : (until - t0) / 1000,
		lease_row: until === null ? row : undefined,
		next_probe_at_s: next ? next.t / 1000 : null,
		next_probe_worker: next?.worker ?? null,
		next_probe_status: next?.status ?? null,
		killed_worker_execs: killedExecs.size,
		killed_worker_execs_done: [...killedExecs].filter((e) => vendor.done.has(e)).length,
		other_execs_not_done: othersNotDone.length,
	};
}
