#!/usr/bin/env node
// Where a real n8n's CPU goes while Call Chain (at its defaults) runs a batch against a loopback
// vendor answering in 200-300 ms (issue 56: the first run of 1000 items on n8n 1). One `n8n
// execute` with a small warm-up branch, then the batch, sampled by V8's profiler
// (scripts/lib/cpu-profile-hook.cjs); prints the batch's seconds by part (idle, this package's
// TypeScript, the engine's WASM and its glue, n8n's HTTP helper, Node's own) and the costliest
// functions, and keeps the .cpuprofile (Chrome DevTools opens it).
//   node scripts/profile-call-chain.mjs [--n8n 1|2] [--items 1000] [--version 2.2]
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startProviders } from '../tests/support/providers.mjs';
import { n8nInstall, n8nInstance, uid, branchesWorkflow } from '../tests/support/n8n.mjs';

const args = process.argv.slice(2);
const arg = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const major = Number(arg('--n8n', 1));
const items = Number(arg('--items', 1000));
const typeVersion = Number(arg('--version', 2.2));
const hook = path.join(path.dirname(fileURLToPath(import.meta.url)), 'lib', 'cpu-profile-hook.cjs');
const dir = mkdtempSync(path.join(os.tmpdir(), 'rpc-profile-'));

const providers = await startProviders();
const tag = uid().slice(0, 6);
const rpc = (name, id, n) => ({
	name,
	items: n,
	typeVersion,
	parameters: {
		providers: {
			provider: [
				{ name: `${name}-${tag}`, url: `http://127.0.0.1:${providers.port}/healthy?id=${id}` },
			],
		},
	},
});
const inst = n8nInstance(n8nInstall(major));
const wf = branchesWorkflow(`profile${tag}`, inst.nodeType, [
	rpc('warm', `warm-${tag}`, 5),
	rpc('batch', `batch-${tag}`, items),
]);
inst.importWorkflow(wf);
const { run, log } = await inst.execute(wf.id, {
	timeoutMs: 600_000,
	env: { NODE_OPTIONS: `--require ${hook}`, RPC_CPU_PROFILE_DIR: dir },
});
const arrivals = providers.arrivals.filter((a) => a.id === `batch-${tag}`).map((a) => a.t);
await providers.close();
if (!run) {
	console.error(log.slice(-3000));
	process.exit(1);
}
const file = path.join(
	dir,
	readdirSync(dir).find((f) => f.endsWith('.cpuprofile')),
);
const profile = JSON.parse(readFileSync(file, 'utf8'));

// The batch's span: from its first request at the vendor to its last, plus one answer's time.
const from = Math.min(...arrivals);
const to = Math.max(...arrivals) + 300;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const part = (url, name) => {
	if (name === '(idle)') return 'idle (waiting on the vendor)';
	if (name === '(garbage collector)') return 'garbage collector';
	if (url.startsWith('wasm://')) return "the engine's WASM";
	if (/\/dist\/engine\//.test(url)) return "the engine's glue (wasm-bindgen)";
	if (/\/dist\/(lib|nodes)\//.test(url)) return "this package's TypeScript";
	if (/axios|follow-redirects|proxy-from-env|request-helper/.test(url))
		return "n8n's HTTP helper (axios)";
	if (url.startsWith('node:') || url === '') return "Node's own (sockets, timers, microtasks)";
	return 'n8n and other modules';
};
const parts = new Map();
const fns = new Map();
let t = profile.startTime;
let total = 0;
// Sample times are the profiler's clock (µs, monotonic); the vendor's are wall ms: lined up by
// the instant the hook read both clocks at.
const clocks = JSON.parse(readFileSync(file.replace(/\.cpuprofile$/, '.clocks.json'), 'utf8'));
const shift = clocks.monoUs / 1000 - clocks.wallMs;
for (let i = 0; i < profile.samples.length; i++) {
	t += profile.timeDeltas[i];
	const wall = t / 1000 - shift;
	if (wall < from || wall > to) continue;
	const { url, functionName, lineNumber } = byId.get(profile.samples[i]).callFrame;
	const ms = profile.timeDeltas[i] / 1000;
	total += ms;
	const p = part(url, functionName);
	parts.set(p, (parts.get(p) ?? 0) + ms);
	const f = `${functionName || '(anonymous)'} ${url.replace(/.*node_modules\//, '').replace(/^file:\/\/.*\/dist\//, 'dist/')}:${lineNumber + 1}`;
	fns.set(f, (fns.get(f) ?? 0) + ms);
}
const top = (m, k) =>
	[...m]
		.sort((a, b) => b[1] - a[1])
		.slice(0, k)
		.map(
			([name, ms]) =>
				`${ms.toFixed(0).padStart(7)} ms  ${((100 * ms) / total).toFixed(1).padStart(5)} %  ${name}`,
		)
		.join('\n');
console.log(
	`\nn8n ${major}, Call Chain ${typeVersion} at its defaults, ${items} items: ${(to - from).toFixed(0)} ms from first request to last answer, ${(total / items).toFixed(2)} ms sampled per item\n`,
);
console.log(top(parts, 12));
console.log('\nthe costliest functions (self time):');
console.log(top(fns, 20));
console.log(`\nprofile: ${file}`);
