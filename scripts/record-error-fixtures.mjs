// Records what n8n's own chat-model clients throw, as fixtures for the unit tests of the functions
// that hand a thrown error to the engine (tests/node-units/recorded-errors.test.mjs). For each
// n8n major, n8n's ChatOpenAI and ChatAnthropic (the classes from its install, client retries
// off) call loopback vendors that answer as the real APIs do: 500, 503 and 429 with each vendor's
// own wait hint, a 400 "context too long", a 401, a refused connection, and a hostname during a
// resolver outage (this script again, in a mount namespace whose DNS server is absent: EAI_AGAIN).
// Each error is kept as the client built it: the fields down its cause chain, headers included.
// Then n8n's HTTP Request node, in a real `n8n execute` of each major, with On Error "Continue
// (using error output)", its full-response option off and on: what it puts in the item for 408,
// 429, 529, 500, a 503 with Retry-After, a connection reset, a refused connection and a 200,
// kept as n8n ran it (the item and the output it left on), as Report Outcome reads it.
//   node scripts/record-error-fixtures.mjs [--n8n 1|2] [--out FILE]
// (after bash scripts/lib/n8n-install.sh 1 and 2). Needs root for the namespace (unshare, mount).
import { execFileSync } from 'node:child_process';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { n8nInstall, n8nInstance } from '../tests/support/n8n.mjs';
import { startProviders } from '../tests/support/providers.mjs';
import { closedPort } from '../tests/support/ports.mjs';
import { n8nRequire } from '../tests/chat/support.mjs';
import { startLlmVendors } from '../tests/support/llm-vendors.mjs';

const SELF = fileURLToPath(import.meta.url);
const ROOT = path.resolve(path.dirname(SELF), '..');
const args = process.argv.slice(2);
const opt = (name, fallback) => {
	const i = args.indexOf(name);
	return i < 0 ? fallback : args[i + 1];
};
if (args.includes('--help')) {
	console.log('node scripts/record-error-fixtures.mjs [--n8n 1|2] [--out FILE]');
	process.exit(0);
}
const KEYS = { openai: 'sk-record', anthropic: 'sk-ant-record', gemini: 'unused' };
const UNRESOLVABLE = 'api.vendor-resolver-outage.example';

/** Only what an error reader may look at, down the cause chain; headers as their entries. */
function keep(e, depth = 0) {
	if (e === null || typeof e !== 'object' || depth > 6)
		return e === undefined ? undefined : { value: String(e) };
	const out = { class: e.constructor?.name, name: e.name, message: e.message };
	for (const k of [
		'code',
		'errno',
		'syscall',
		'hostname',
		'status',
		'httpCode',
		'lc_error_code',
		'type',
	])
		if (e[k] !== undefined) out[k] = e[k];
	if (e.error !== undefined) out.error = JSON.parse(JSON.stringify(e.error));
	if (e.headers && typeof e.headers.entries === 'function')
		out.headers = { kind: 'Headers', entries: [...e.headers.entries()] };
	else if (e.headers && typeof e.headers === 'object')
		out.headers = { kind: 'object', entries: Object.entries(e.headers) };
	if (e.cause !== undefined) out.cause = keep(e.cause, depth + 1);
	return out;
}

async function clientsOf(major) {
	const req = n8nRequire(n8nInstall(major));
	return {
		ChatOpenAI: req('@langchain/openai').ChatOpenAI,
		ChatAnthropic: req('@langchain/anthropic').ChatAnthropic,
	};
}

const model = {
	openai: (C, url) =>
		new C.ChatOpenAI({
			model: 'gpt-4o-mini',
			apiKey: KEYS.openai,
			maxRetries: 0,
			configuration: { baseURL: `${url}/v1` },
		}),
	anthropic: (C, url) =>
		new C.ChatAnthropic({
			model: 'claude-sonnet-4-5-20250929',
			apiKey: KEYS.anthropic,
			maxRetries: 0,
			anthropicApiUrl: url,
		}),
};

async function thrown(m) {
	try {
		await m.invoke('hi');
	} catch (e) {
		return keep(e);
	}
	throw new Error('the call did not fail');
}

/** The DNS case alone, run in the namespace: prints its fixtures as JSON. */
async function dnsOnly(major) {
	const C = await clientsOf(major);
	const out = {};
	for (const client of Object.keys(model))
		out[`${client}/resolver outage`] = await thrown(model[client](C, `http://${UNRESOLVABLE}`));
	process.stdout.write(JSON.stringify(out));
}

async function record(major) {
	const C = await clientsOf(major);
	const vendors = await startLlmVendors(KEYS);
	const out = {};
	try {
		const cases = {
			500: [500],
			'503 with its wait hint': [
				{
					status: 503,
					headers: { 'retry-after': '2' },
					body: { error: { message: 'overloaded' } },
				},
			],
			'429 with its wait hint': {
				openai: [
					{
						status: 429,
						headers: {
							'retry-after-ms': '1500',
							'x-ratelimit-remaining-requests': '0',
							'x-ratelimit-reset-requests': '1.5s',
						},
						body: {
							error: {
								message: 'Rate limit reached',
								type: 'requests',
								code: 'rate_limit_exceeded',
							},
						},
					},
				],
				anthropic: [
					{
						status: 429,
						headers: {
							'retry-after': '2',
							'anthropic-ratelimit-requests-remaining': '0',
							'anthropic-ratelimit-requests-reset': new Date(Date.now() + 2000).toISOString(),
						},
						body: {
							type: 'error',
							error: {
								type: 'rate_limit_error',
								message: 'Number of request tokens has exceeded your per-minute rate limit',
							},
						},
					},
				],
			},
			'400 context too long': ['too_long'],
			401: [401],
		};
		for (const client of Object.keys(model))
			for (const [name, script] of Object.entries(cases)) {
				const id = `${client}-${name.replace(/\W+/g, '-')}`;
				vendors.script(id, Array.isArray(script) ? script : script[client]);
				out[`${client}/${name}`] = await thrown(model[client](C, vendors.url(id)));
			}
		const refused = `http://127.0.0.1:${await closedPort()}`;
		for (const client of Object.keys(model))
			out[`${client}/connection refused`] = await thrown(model[client](C, refused));
	} finally {
		await vendors.close();
	}
	const conf = path.join(mkdtempSync(path.join(tmpdir(), 'rpc-resolv-')), 'resolv.conf');
	writeFileSync(conf, 'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n');
	const dns = execFileSync(
		'unshare',
		[
			'--mount',
			'sh',
			'-c',
			'mount --bind "$1" /etc/resolv.conf && shift && exec "$@"',
			'sh',
			conf,
			process.execPath,
			SELF,
			'--dns-only',
			String(major),
		],
		{ maxBuffer: 1 << 24 },
	);
	return { ...out, ...JSON.parse(String(dns)) };
}

/** The HTTP Request node's cases: a route of the loopback providers (tests/support/providers.mjs),
 * or `refused` (a port nothing listens on). */
const HTTP_CASES = {
	408: '/status/408',
	'429 with Retry-After': '/flaky-ra?n=1000',
	529: '/status/529',
	500: '/always500',
	'503 with Retry-After': '/ra?v=2&n=1000',
	'connection reset': '/reset-mid-body',
	'connection refused': 'refused',
	200: '/ok',
};

/** One HTTP Request node per case and full-response setting, each straight after the trigger. */
function httpWorkflow(base, refused) {
	const nodes = [];
	const connections = { Start: { main: [[]] } };
	for (const [name, route] of Object.entries(HTTP_CASES))
		for (const full of [false, true]) {
			const node = `${name}${full ? ' full response' : ''}`;
			nodes.push({
				id: node.replace(/\W/g, ''),
				name: node,
				type: 'n8n-nodes-base.httpRequest',
				typeVersion: 4.2,
				position: [0, 0],
				parameters: {
					url: route === 'refused' ? `${refused}/ok` : `${base}${route}`,
					options: full ? { response: { response: { fullResponse: true } } } : {},
				},
				onError: 'continueErrorOutput',
			});
			connections.Start.main[0].push({ node, type: 'main', index: 0 });
		}
	return {
		id: 'recordhttp',
		name: 'recordhttp',
		active: false,
		settings: { executionOrder: 'v1' },
		nodes: [
			{
				id: 'Start',
				name: 'Start',
				type: 'n8n-nodes-base.manualTrigger',
				typeVersion: 1,
				position: [0, 0],
				parameters: {},
			},
			...nodes,
		],
		connections,
	};
}

/** What each HTTP Request node put out, as `{ fromOutput, item }` (the item's json and error). */
async function recordHttpRequest(major) {
	const providers = await startProviders(0);
	const n8n = n8nInstance(n8nInstall(major), { extensions: null });
	try {
		n8n.importWorkflow(
			httpWorkflow(`http://127.0.0.1:${providers.port}`, `http://127.0.0.1:${await closedPort()}`),
		);
		const { run, log } = await n8n.execute('recordhttp');
		if (!run)
			throw new Error(`n8n ${major}: the HTTP Request workflow did not run: ${log.slice(-3000)}`);
		const out = {};
		for (const [node, runs] of Object.entries(run.data.resultData.runData)) {
			if (node === 'Start') continue;
			const main = runs[0].data.main;
			const from = main.findIndex((o) => o?.length);
			if (from < 0) throw new Error(`n8n ${major}: node ${node} put out no item`);
			// The stack is n8n's install path and line numbers: nothing a reader may look at.
			const { json, error } = JSON.parse(
				JSON.stringify(main[from][0], (k, v) => (k === 'stack' ? undefined : v)),
			);
			out[`http-request/${node}`] = { fromOutput: from, item: error ? { json, error } : { json } };
		}
		return out;
	} finally {
		await providers.close();
	}
}

if (args[0] === '--dns-only') {
	await dnsOnly(Number(args[1]));
} else {
	const majors = opt('--n8n') ? [Number(opt('--n8n'))] : [2, 1];
	const file = opt('--out', path.join(ROOT, 'tests/node-units/fixtures/client-errors.json'));
	const fixtures = {};
	for (const major of majors) {
		const recorded = { ...(await record(major)), ...(await recordHttpRequest(major)) };
		for (const [k, v] of Object.entries(recorded)) fixtures[`n8n ${major}/${k}`] = v;
		console.error(`n8n ${major}: ${Object.keys(recorded).length} errors recorded`);
	}
	writeFileSync(
		file,
		`${JSON.stringify({ recorded: new Date().toISOString().slice(0, 10), by: 'scripts/record-error-fixtures.mjs', fixtures }, null, '\t')}\n`,
	);
	console.error(`wrote ${path.relative(ROOT, file)}`);
}
