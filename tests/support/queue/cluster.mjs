// n8n in queue mode on loopback: one `n8n start` (webhooks, enqueues) and N `n8n worker`
// processes (run the executions), Bull on Redis, n8n's own data in a fresh Postgres database.
// Each worker gets RPC_WORKER=w<k> in its env so a workflow can tag its requests with it.
import { spawn, execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { n8nInstance, n8nPorts, uid } from '../n8n.mjs';
import { REDIS_PORT, PG_PORT } from '../services.mjs';

function psql(sql) {
	execFileSync(
		'psql',
		['-h', '127.0.0.1', '-p', String(PG_PORT), '-U', 'postgres', '-d', 'postgres', '-qc', sql],
		{ stdio: ['ignore', 'pipe', 'pipe'] },
	);
}

/**
 * Every POST webhook of these workflows answers a GET with "not registered for GET … Did you mean
 * to make a POST request?" once it is registered, and "… is not registered." before.
 */
async function webhooksRegistered(port, workflows) {
	for (const wf of workflows) {
		for (const n of wf.nodes.filter((x) => x.type === 'n8n-nodes-base.webhook')) {
			const method = n.parameters.httpMethod ?? 'GET';
			const r = await fetch(`http://127.0.0.1:${port}/webhook/${n.parameters.path}`, {
				method: 'GET',
			}).catch(() => null);
			const text = r ? await r.text() : '';
			if (method === 'GET' ? r?.status !== 200 : !/Did you mean/.test(text)) return false;
		}
	}
	return true;
}

function readyWorkflow(id) {
	return {
		id: `ready${id}`.slice(0, 16),
		name: 'ready',
		active: false,
		settings: { executionOrder: 'v1' },
		nodes: [
			{
				id: randomUUID(),
				name: 'Webhook',
				type: 'n8n-nodes-base.webhook',
				typeVersion: 2,
				position: [0, 0],
				webhookId: randomUUID(),
				parameters: {
					httpMethod: 'GET',
					path: `ready-${id}`,
					responseMode: 'onReceived',
					options: {},
				},
			},
		],
		connections: {},
	};
}

/** `lockMs`: how long a worker holds a job without renewing its lock before Bull hands the job to
 * another worker (run again, same execution). Short (5 s) where a test SIGKILLs a worker; n8n's
 * 30 s default where a job run twice would count twice and nothing is killed: on a loaded 2-core
 * machine a worker can miss a 2 s renewal. */
export async function startCluster(
	install,
	{ workers = 3, concurrency = 4, port: wanted, lockMs = 5_000 } = {},
) {
	// Every process's listeners on free ports (main: HTTP and task broker; workers: task broker
	// and health server), none on n8n's defaults.
	const mainPorts = await n8nPorts(wanted);
	const port = Number(mainPorts.N8N_PORT);
	const id = uid();
	const db = `n8n_queue_${id}`;
	psql(`CREATE DATABASE ${db}`);
	const n8n = n8nInstance(install, {
		env: {
			DB_TYPE: 'postgresdb',
			DB_POSTGRESDB_HOST: '127.0.0.1',
			DB_POSTGRESDB_PORT: String(PG_PORT),
			DB_POSTGRESDB_DATABASE: db,
			DB_POSTGRESDB_USER: 'postgres',
			DB_POSTGRESDB_PASSWORD: '',
			EXECUTIONS_MODE: 'queue',
			QUEUE_BULL_REDIS_HOST: '127.0.0.1',
			QUEUE_BULL_REDIS_PORT: String(REDIS_PORT),
			QUEUE_BULL_PREFIX: `bull${id}`,
			// A SIGKILLed worker's jobs are noticed within seconds when lockMs is short.
			QUEUE_WORKER_LOCK_DURATION: String(lockMs),
			QUEUE_WORKER_LOCK_RENEW_TIME: String(Math.round(lockMs / 2.5)),
			QUEUE_WORKER_STALLED_INTERVAL: String(lockMs),
			QUEUE_WORKER_MAX_STALLED_COUNT: '3',
			// The workflows tag requests with {{ $env.RPC_WORKER }}.
			N8N_BLOCK_ENV_ACCESS_IN_NODE: 'false',
			// Less bookkeeping per execution on 2 cores: keep failed executions only.
			EXECUTIONS_DATA_SAVE_ON_SUCCESS: 'none',
			EXECUTIONS_DATA_SAVE_ON_PROGRESS: 'false',
			N8N_RUNNERS_ENABLED: 'false',
		},
	});
	const procs = [];
	const spawnN8n = (name, args, env = {}) => {
		const child = spawn(install.nodeBin, [install.n8nBin, ...args], {
			env: { ...n8n.env, ...env },
			stdio: ['ignore', 'pipe', 'pipe'],
		});
		const p = { name, child, log: '' };
		child.stdout.on('data', (d) => (p.log += d));
		child.stderr.on('data', (d) => (p.log += d));
		procs.push(p);
		return p;
	};
	return {
		n8n,
		install,
		port,
		db,
		procs,
		workers: () => procs.filter((p) => p.name.startsWith('w')),
		/** Import and switch on workflows first (webhooks register at start), then start. */
		async start(workflows, creds = []) {
			if (creds.length) n8n.importCredentials(creds);
			// Webhooks register a while after the REST API is up: a workflow of our own tells when.
			const ready = readyWorkflow(id);
			for (const wf of [...workflows, ready]) {
				n8n.importWorkflow(wf);
				n8n.activate(wf.id);
			}
			const main = spawnN8n('main', ['start'], { ...mainPorts, N8N_LISTEN_ADDRESS: '127.0.0.1' });
			for (let k = 1; k <= workers; k++)
				spawnN8n(`w${k}`, ['worker', `--concurrency=${concurrency}`], {
					...(await n8nPorts()),
					RPC_WORKER: `w${k}`,
				});
			const deadline = Date.now() + 180_000;
			for (;;) {
				const dead = procs.find((p) => p.child.exitCode !== null);
				if (dead) throw new Error(`n8n ${dead.name} exited: ${dead.log.slice(-3000)}`);
				const up = await fetch(`http://127.0.0.1:${port}/rest/settings`).then(
					(r) => r.ok,
					() => false,
				);
				// A worker is ready once it says so on its log (both majors print "n8n worker is now ready").
				const hooked = up && (await webhooksRegistered(port, [...workflows, ready]));
				if (
					hooked &&
					this.workers().every((w) => /worker is now ready|Worker started|ready/i.test(w.log))
				)
					break;
				if (Date.now() > deadline)
					throw new Error(
						`queue mode did not come up in 180 s: ${procs.map((p) => `${p.name}: ${p.log.slice(-800)}`).join('\n')}`,
					);
				await new Promise((r) => setTimeout(r, 500));
			}
		},
		async post(path, body) {
			const r = await fetch(`http://127.0.0.1:${port}/webhook/${path}`, {
				method: 'POST',
				headers: { 'content-type': 'application/json' },
				body: JSON.stringify(body),
				signal: AbortSignal.timeout(60_000),
			});
			await r.arrayBuffer();
			return r.status;
		},
		/**
		 * Posts every body to the webhook, `inFlight` at a time, and returns the statuses in order.
		 * A burst of hundreds at once can keep a busy main from answering some within the timeout on
		 * a 2-core machine shared with other lanes; the workers' queue is what the tests load.
		 */
		async postAll(path, bodies, inFlight = 25) {
			const statuses = new Array(bodies.length);
			let next = 0;
			const sender = async () => {
				while (next < bodies.length) {
					const k = next++;
					statuses[k] = await this.post(path, bodies[k]);
				}
			};
			await Promise.all(Array.from({ length: Math.min(inFlight, bodies.length) }, sender));
			return statuses;
		},
		kill(name) {
			const p = procs.find((q) => q.name === name);
			p.child.kill('SIGKILL');
			return p;
		},
		async stop() {
			await Promise.all(
				procs.map(
					(p) =>
						new Promise((resolve) => {
							if (p.child.exitCode !== null || p.child.signalCode) return resolve();
							p.child.on('exit', resolve);
							p.child.kill('SIGTERM');
							setTimeout(() => p.child.kill('SIGKILL'), 10_000).unref();
						}),
				),
			);
			try {
				psql(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
			} catch {
				/* best effort */
			}
		},
	};
}
