#!/usr/bin/env node
// The main job: the demo workflow in a real n8n (in-memory store) against three loopback
// providers — one down, one flaky with Retry-After, one healthy — and a table of what each
// provider received, taken from the providers' own request logs. Exits non-zero when those
// logs disagree with n8n's run data.
//   node scripts/demo.mjs            run the demo
//   node scripts/demo.mjs --editor   start the n8n editor (127.0.0.1:5678 when free) with it imported
import net from 'node:net';
import { startProviders } from '../tests/support/providers.mjs';
import { n8nInstall, n8nInstance, outputs } from '../tests/support/n8n.mjs';
import { DEMO_NODE, DEMO_ROUTES, demoWorkflow } from '../tests/support/demo-workflow.mjs';

const args = process.argv.slice(2);
if (args.includes('--help')) {
	console.log(
		'Usage: scripts/demo.sh [--editor] [--n8n 1|2]\n  --editor  start the n8n editor (http://127.0.0.1:5678, or a free port when taken) with the node and the demo workflow\n  --n8n N   n8n major version (2 = 2.41.1 on Node 24, default; 1 = 1.123.81 on Node 20)',
	);
	process.exit(0);
}
const major = Number(args[args.indexOf('--n8n') + 1] || 2) || 2;
const providers = await startProviders(); // a free port, written into the workflow below
const n8n = n8nInstance(n8nInstall(major));
const wf = demoWorkflow(providers.port, n8n.nodeType);
n8n.importWorkflow(wf);

if (args.includes('--editor')) {
	// The editor's usual address when free; beside another n8n, a free port (printed).
	const server = await n8n.start((await isFree(5678)) ? 5678 : undefined);
	console.log(
		`n8n editor: http://127.0.0.1:${server.port}  (workflow "${wf.name}" imported; providers on 127.0.0.1:${providers.port}; Ctrl-C stops)`,
	);
	process.on('SIGINT', async () => {
		await server.stop();
		process.exit(0);
	});
	await new Promise(() => {});
}

console.log(`Running "${wf.name}" in n8n ${major === 2 ? '2.41.1' : '1.123.81'} (10 items)...`);
const { run, log } = await n8n.execute(wf.id);
await providers.close();
if (!run) {
	console.error(log.slice(-3000));
	process.exit(1);
}
const [ok, deferred, failed] = outputs(run, DEMO_NODE);

const names = DEMO_ROUTES;
const atProvider = {};
for (const a of providers.arrivals) {
	const p = (atProvider[names[a.route]] ??= { requests: 0, statuses: {} });
	p.requests++;
}
const fromN8n = {};
for (const item of [...ok, ...deferred, ...failed]) {
	for (const at of item.json._resilience.attempts) {
		const p = (fromN8n[at.name] ??= { requests: 0, statuses: {} });
		p.requests++;
		p.statuses[at.outcome] = (p.statuses[at.outcome] ?? 0) + 1;
	}
}
const served = {};
for (const item of ok)
	served[item.json._resilience.provider] = (served[item.json._resilience.provider] ?? 0) + 1;
const skipped = {};
for (const item of [...ok, ...deferred, ...failed])
	for (const s of item.json._resilience.skipped)
		skipped[`${s.provider}:${s.reason}`] = (skipped[`${s.provider}:${s.reason}`] ?? 0) + 1;

console.log(
	'\nprovider   requests (provider log)   requests (n8n run data)   answers seen by n8n        items served',
);
let disagree = false;
for (const name of ['down', 'flaky', 'healthy']) {
	const a = atProvider[name]?.requests ?? 0;
	const b = fromN8n[name]?.requests ?? 0;
	disagree ||= a !== b;
	const st =
		Object.entries(fromN8n[name]?.statuses ?? {})
			.map(([k, v]) => `${v}x ${k}`)
			.join(', ') || '-';
	console.log(
		`${name.padEnd(10)} ${String(a).padStart(8)} ${String(b).padStart(25)}   ${st.padEnd(26)} ${String(served[name] ?? 0).padStart(8)}`,
	);
}
console.log(
	`\noutputs: success ${ok.length}, deferred ${deferred.length}, failed ${failed.length}`,
);
console.log(
	`skips: ${
		Object.entries(skipped)
			.map(([k, v]) => `${v}x ${k}`)
			.join(', ') || 'none'
	}`,
);
const transitions = ok.flatMap((i) => i.json._resilience.transitions);
console.log(
	`breaker transitions: ${transitions.map((t) => `${t.provider} ${t.from}->${t.to}`).join(', ') || 'none'}`,
);
console.log(
	"(without this node, n8n's Retry On Fail would send the down provider 10 items x its tries)",
);
if (disagree) {
	console.error("\nFAIL: the providers' logs disagree with n8n's run data");
	process.exit(1);
}
if (ok.length + deferred.length + failed.length !== 10) {
	console.error('FAIL: an item was lost');
	process.exit(1);
}

function isFree(port) {
	return new Promise((resolve) => {
		const probe = net.createServer().once('error', () => resolve(false));
		probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
	});
}
