// The test command on a busy machine: other processes hold n8n's, Redis's and Postgres's default
// ports (5678, 5679, 6379, 5432; here plain listeners of this test). The port guard leaves them
// alone, this run's servers start on other ports and are gone after a failed or interrupted run,
// n8n runs on ports of its own, and the processes on the default ports never hear from any of it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { ROOT, n8nInstall, n8nInstance, uid } from '../support/n8n.mjs';
import { freePort } from '../support/ports.mjs';
import { tempDir } from '../support/tmp.mjs';

const DEFAULT_PORTS = [5678, 5679, 6379, 5432];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const alive = (pid) => {
	try {
		process.kill(pid, 0);
		return true;
	} catch {
		return false;
	}
};

/** The other processes: each default port held, every connection to it counted. */
const holders = [];
before(async () => {
	for (const port of DEFAULT_PORTS) {
		const holder = { port, connections: 0, ours: false };
		const server = net.createServer((socket) => {
			holder.connections++;
			socket.destroy();
		});
		// A port some real server already holds stays with it: it is taken either way.
		holder.ours = await new Promise((resolve) => {
			server.once('error', () => resolve(false));
			server.listen(port, '127.0.0.1', () => resolve(true));
		});
		holder.server = server;
		holders.push(holder);
	}
});
after(() =>
	Promise.all(holders.filter((h) => h.ours).map((h) => new Promise((r) => h.server.close(r)))),
);

/** Spawns a command; resolves its output lines as they come, and its end. */
function run(cmd, args, opts = {}) {
	const child = spawn(cmd, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], ...opts });
	let out = '';
	child.stdout.on('data', (d) => (out += d));
	child.stderr.on('data', (d) => (out += d));
	const ended = new Promise((resolve) =>
		child.on('exit', (code, signal) => resolve({ code, signal, out })),
	);
	const line = async (re) => {
		for (let i = 0; i < 2400; i++) {
			const m = out.match(re);
			if (m) return m;
			if (child.exitCode !== null) break;
			await sleep(50);
		}
		throw new Error(`no line matching ${re} in: ${out}`);
	};
	return { child, ended, line, output: () => out };
}

test('the port guard leaves the taken default ports alone, holds a free one and records who reached it', async () => {
	const record = path.join(tempDir('rpc-guard-test-'), 'connections');
	const spare = await freePort();
	const guard = run('node', [
		'scripts/lib/port-guard.mjs',
		record,
		...DEFAULT_PORTS.map(String),
		String(spare),
	]);
	try {
		await guard.line(/^ready$/m);
		for (const port of DEFAULT_PORTS)
			assert.match(guard.output(), new RegExp(`^left alone ${port} \\(in use\\)$`, 'm'));
		assert.match(guard.output(), new RegExp(`^holding ${spare}$`, 'm'));
		await new Promise((resolve) =>
			net
				.connect(spare, '127.0.0.1')
				.on('close', resolve)
				.on('error', () => {}),
		);
		await sleep(100);
		const lines = readFileSync(record, 'utf8').trim().split('\n');
		assert.equal(lines.length, 1, `one connection recorded: ${lines}`);
		assert.match(lines[0], new RegExp(`port ${spare}: connection from`));
	} finally {
		guard.child.kill();
		await guard.ended;
	}
});

// A test command in miniature, with the same libraries as scripts/test.sh: start this run's
// servers, print where they are, then run `body` as its failing or interrupted step.
const miniTestCommand = (body) => `
source scripts/lib/common.sh
source scripts/lib/cleanup.sh
source scripts/lib/run-services.sh
services_up
redis-cli -p "$RPC_REDIS_PORT" ping >/dev/null && "$RPC_PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$RPC_PG_PORT" \\
  && echo "servers redis=$RPC_REDIS_PORT pg=$RPC_PG_PORT pids=$(cat "$RPC_SERVICES_DIR/redis.pid"),$(head -1 "$RPC_SERVICES_DIR/pg/data/postmaster.pid") dir=$RPC_SERVICES_DIR"
${body}`;

async function serversOf(cmd) {
	const m = await cmd.line(/^servers redis=(\d+) pg=(\d+) pids=(\d+),(\d+) dir=(\S+)$/m);
	const [redis, pg] = [Number(m[1]), Number(m[2])];
	const pids = [Number(m[3]), Number(m[4])];
	const dir = m[5];
	for (const port of [redis, pg])
		assert.ok(!DEFAULT_PORTS.includes(port), `port ${port} is not a default`);
	for (const pid of pids) assert.ok(alive(pid), `server ${pid} runs`);
	return { pids, dir };
}

async function assertGone({ pids, dir }) {
	for (let i = 0; i < 100 && pids.some(alive); i++) await sleep(100);
	for (const pid of pids) assert.ok(!alive(pid), `server ${pid} stopped`);
	assert.ok(!existsSync(dir), `run directory ${dir} removed`);
}

test('Redis and Postgres start on ports of their own and are stopped when a test fails', async () => {
	const cmd = run('bash', [
		'-c',
		miniTestCommand(`step node -e 'process.exit(1)' || die "simulated failing test"`),
	]);
	const servers = await serversOf(cmd);
	const { code, out } = await cmd.ended;
	assert.equal(code, 1, out);
	assert.match(out, /simulated failing test/);
	await assertGone(servers);
});

test('Redis, Postgres and the running step are stopped when the test command is interrupted', async () => {
	const cmd = run('bash', ['-c', miniTestCommand(`step bash -c 'echo "step $$"; sleep 120'`)]);
	const servers = await serversOf(cmd);
	const stepPid = Number((await cmd.line(/^step (\d+)$/m))[1]);
	cmd.child.kill('SIGTERM');
	const { code, out } = await cmd.ended;
	assert.equal(code, 143, out);
	await assertGone(servers);
	for (let i = 0; i < 50 && alive(stepPid); i++) await sleep(100);
	assert.ok(!alive(stepPid), 'the interrupted step ended');
});

test('lanes running side by side are stopped when the test command is interrupted, one that ignores the signal too', async () => {
	const dir = tempDir('rpc-lanes-test-');
	// Lane three stands for an n8n shutting down gracefully: it outlives the TERM.
	const cmd = run('bash', [
		'-c',
		miniTestCommand(
			`lanes one 'echo $$ >"${dir}/one.pid"; sleep 120' two 'echo $$ >"${dir}/two.pid"; sleep 120' three 'trap "" TERM; echo $$ >"${dir}/three.pid"; while :; do sleep 0.2; done'`,
		),
	]);
	const servers = await serversOf(cmd);
	const lanePid = async (name) => {
		const file = path.join(dir, `${name}.pid`);
		for (let i = 0; i < 100 && !existsSync(file); i++) await sleep(100);
		return Number(readFileSync(file, 'utf8'));
	};
	const pids = [await lanePid('one'), await lanePid('two'), await lanePid('three')];
	for (const pid of pids) assert.ok(alive(pid), `lane ${pid} runs`);
	cmd.child.kill('SIGTERM');
	const { code, out } = await cmd.ended;
	assert.equal(code, 143, out);
	await assertGone(servers);
	for (let i = 0; i < 150 && pids.some(alive); i++) await sleep(100);
	for (const pid of pids) assert.ok(!alive(pid), `lane ${pid} ended`);
});

test('n8n executes and serves on ports of its own while the default ports are taken', async () => {
	const n8n = n8nInstance(n8nInstall(2));
	const id = `ports${uid()}`;
	n8n.importWorkflow({
		id,
		name: id,
		active: false,
		settings: { executionOrder: 'v1' },
		nodes: [
			{
				id: 'start',
				name: 'Start',
				type: 'n8n-nodes-base.manualTrigger',
				typeVersion: 1,
				position: [0, 0],
				parameters: {},
			},
		],
		connections: {},
	});
	// `execute` opens a task broker (default 5679) in n8n 2: the failure this guards against.
	const { run: result, log } = await n8n.execute(id, { timeoutMs: 120_000 });
	assert.ok(result && !result.data.resultData.error, `n8n execute ran: ${log.slice(-2000)}`);
	const server = await n8n.start();
	try {
		assert.ok(!DEFAULT_PORTS.includes(server.port));
		assert.equal((await fetch(`http://127.0.0.1:${server.port}/healthz`)).status, 200);
	} finally {
		await server.stop();
	}
});

test('the processes on the default ports received no connection', (t) => {
	for (const h of holders.filter((x) => x.ours))
		assert.equal(h.connections, 0, `connections to the process on ${h.port}`);
	// On a machine whose own servers hold them all, theirs are the holders: nothing to count here.
	const others = holders.filter((h) => !h.ours).map((h) => h.port);
	if (others.length) t.diagnostic(`held by processes already running here: ${others.join(', ')}`);
});
