#!/usr/bin/env node
// Item Concurrency Auto in a real n8n, counted at loopback vendors, beside n8n's HTTP Request node
// in the same execution (each node warmed by a small branch first):
//   - a healthy vendor answering in 200-300 ms: 100 and 1000 items, Call Chain 2.1 at its
//     defaults against the HTTP Request node (goals: <= 3x its wall time at 100, <= 2x at 1000),
//     and 1000 again on the same provider (the window the fleet learned, on the store);
//   - vendors taking K = 4 and K = 16 calls at once, 429 + Retry-After: 1 above that, 250 ms a
//     call: 400 items each (goals: all served, none deferred, <= 10 % of requests answered 429,
//     wall time <= 2x the ideal items x latency / K);
//   - a dead vendor failing after a random 0-300 ms: 50 items (goal: exactly the threshold, 5).
//   node scripts/bench-concurrency.mjs [--n8n 2|1] [--version 2.1] [--max-items N] [--timeline]
// --timeline: also the 1000-item branches' requests at the vendor per 100 ms from their first.
// Prints each figure beside its goal; exits 0 when it measured (a missed goal is printed), 1 if a
// run went wrong.
import { startProviders } from '../tests/support/providers.mjs';
import {
	n8nInstall,
	n8nInstance,
	branchesWorkflow,
	outputs,
	uid,
	VERSIONS,
} from '../tests/support/n8n.mjs';

const args = process.argv.slice(2);
const arg = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const major = Number(arg('--n8n', 2));
// Call Chain's version (at its defaults), and a Max Item Concurrency to try instead of its own.
const typeVersion = Number(arg('--version', 2.1));
const maxItems = arg('--max-items', undefined);
if (!VERSIONS[major]) {
	console.error('--n8n must be 1 or 2');
	process.exit(2);
}
const log = (l) => console.error(`[bench-concurrency] ${l}`);
const providers = await startProviders();
const base = `http://127.0.0.1:${providers.port}`;
const tag = uid().slice(0, 6);

/** Call Chain at its defaults (`--version`, default 2.1); `provider`: its provider's name (its shared state's key). */
const rpc = (name, path, items, provider = name) => ({
	name,
	items,
	typeVersion,
	parameters: {
		providers: { provider: [{ name: `${provider}-${tag}`, url: `${base}${path}` }] },
		...(maxItems === undefined ? {} : { maxItemConcurrency: Number(maxItems) }),
	},
});
const httpNode = (name, path, items) => ({
	name,
	items,
	type: 'n8n-nodes-base.httpRequest',
	typeVersion: 4.2,
	parameters: { url: `${base}${path}`, options: {} },
});
const SCENARIOS = [
	httpNode('warm HTTP', `/healthy?id=warm-http-${tag}`, 5),
	rpc('warm RPC', `/healthy?id=warm-rpc-${tag}`, 5),
	httpNode('HTTP 100', `/healthy?id=h100-${tag}`, 100),
	rpc('RPC 100', `/healthy?id=r100-${tag}`, 100),
	httpNode('HTTP 1000', `/healthy?id=h1000-${tag}`, 1000),
	rpc('RPC 1000', `/healthy?id=r1000-${tag}`, 1000),
	// The same provider again, as a workflow's next execution meets it: the window the fleet
	// learned is on the store.
	rpc('RPC 1000 again', `/healthy?id=r1000b-${tag}`, 1000, 'RPC 1000'),
	rpc('RPC K4', `/cap?k=4&id=k4-${tag}`, 400),
	rpc('RPC K16', `/cap?k=16&id=k16-${tag}`, 400),
	rpc('RPC dead', `/dead?id=dead-${tag}`, 50),
];

const inst = n8nInstance(n8nInstall(major));
const wf = branchesWorkflow(`benchconc${tag}`, inst.nodeType, SCENARIOS);
inst.importWorkflow(wf);
log(`n8n ${VERSIONS[major]}: one execution, ${SCENARIOS.length} branches`);
const { run, log: out } = await inst.execute(wf.id, { timeoutMs: 900_000 });
await providers.close();
if (!run) {
	console.error(out.slice(-4000));
	process.exit(1);
}
const data = run.data.resultData.runData;
const ms = (name) => data[name][0].executionTime;
const count = (name) => outputs(run, name).map((o) => o?.length ?? 0);
const row = (what, value, goal, met) =>
	console.log(
		`${what.padEnd(58)} ${String(value).padStart(12)}   ${goal.padEnd(30)} ${met ? 'met' : 'MISSED'}`,
	);

console.log(
	`\nItem Concurrency Auto, n8n ${VERSIONS[major]} (Call Chain ${typeVersion} at its defaults${maxItems === undefined ? '' : `, Max Item Concurrency ${maxItems}`})\n`,
);
console.log(`${'measure'.padEnd(58)} ${'value'.padStart(12)}   ${'goal'.padEnd(30)}`);
for (const n of [100, 1000]) {
	const [h, r] = [ms(`HTTP ${n}`), ms(`RPC ${n}`)];
	const [ok] = count(`RPC ${n}`);
	const s = providers.capacity('/healthy', `r${n}-${tag}`);
	row(`healthy vendor, ${n} items: HTTP Request node`, `${h} ms`, '(baseline)', true);
	row(
		`healthy vendor, ${n} items: Call Chain (at most ${s.most} at once)`,
		`${r} ms`,
		`<= ${n === 100 ? 3 : 2}x: ${(r / h).toFixed(2)}x`,
		r <= (n === 100 ? 3 : 2) * h && ok === n,
	);
}
{
	const [h, r] = [ms('HTTP 1000'), ms('RPC 1000 again')];
	const s = providers.capacity('/healthy', `r1000b-${tag}`);
	row(
		`the same provider again, 1000 items (at most ${s.most} at once)`,
		`${r} ms`,
		`<= 2x: ${(r / h).toFixed(2)}x`,
		r <= 2 * h && count('RPC 1000 again')[0] === 1000,
	);
}
for (const k of [4, 16]) {
	const name = `RPC K${k}`;
	const [ok, deferred, failed] = count(name);
	const s = providers.capacity('/cap', `k${k}-${tag}`);
	const ideal = (400 * 250) / k;
	const share = (100 * s.r429) / s.calls;
	row(
		`K=${k}: served / deferred / failed of 400`,
		`${ok}/${deferred}/${failed}`,
		'all served, none deferred',
		ok === 400,
	);
	row(
		`K=${k}: requests answered 429 (of ${s.calls})`,
		`${share.toFixed(1)} %`,
		'<= 10 %',
		share <= 10,
	);
	row(
		`K=${k}: wall time (ideal ${ideal} ms)`,
		`${ms(name)} ms`,
		`<= 2x: ${(ms(name) / ideal).toFixed(2)}x`,
		ms(name) <= 2 * ideal,
	);
}
if (args.includes('--timeline')) {
	for (const [name, id] of [
		['HTTP 1000', `h1000-${tag}`],
		['RPC 1000', `r1000-${tag}`],
		['RPC 1000 again', `r1000b-${tag}`],
	]) {
		const t = providers.arrivals.filter((a) => a.id === id).map((a) => a.t);
		const per = new Array(Math.floor((Math.max(...t) - Math.min(...t)) / 100) + 1).fill(0);
		for (const x of t) per[Math.floor((x - Math.min(...t)) / 100)]++;
		console.log(`${name}: requests per 100 ms from its first: ${per.join(' ')}`);
	}
}
const dead = providers.capacity('/dead', `dead-${tag}`);
const [, dDeferred, dFailed] = count('RPC dead');
row(
	'dead vendor (0-300 ms), 50 items: requests at it',
	dead.calls,
	'exactly the threshold, 5',
	dead.calls === 5,
);
row(
	'dead vendor: items deferred or failed',
	dDeferred + dFailed,
	'all 50',
	dDeferred + dFailed === 50,
);
