#!/usr/bin/env node
// The real run: a simulator scenario played by a loopback vendor against n8n in queue mode
// (1 main + the scenario's workers, Redis store), every policy as a webhook workflow, and the
// simulator's prediction for the same file printed beside the measurements.
//   node scripts/bench-queue.mjs [scenario.json] [--policies a,b] [--n8n 2|1] [--runs N] [--kill]
//                                [--json out.json] [--svg out.svg]
// --runs N (default 1): N runs, each on a fresh cluster; each cell is then the spread over the
// runs and `agree` says in how many runs the simulator was within the tolerance. --json keeps
// every run; --svg plots the last one.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { compare, table, svg } from '../tests/support/queue/report.mjs';
import { summarize, spreadTable, perRunLines } from '../tests/support/queue/repeats.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
if (args.includes('-h') || args.includes('--help')) {
	console.log(
		readFileSync(fileURLToPath(import.meta.url), 'utf8')
			.split('\n')
			.slice(1, 9)
			.map((l) => l.replace(/^\/\/ ?/, ''))
			.join('\n'),
	);
	process.exit(0);
}
const VALUED = ['--policies', '--n8n', '--runs', '--json', '--svg'];
const opt = (name, dflt) => {
	const i = args.indexOf(name);
	return i >= 0 ? args[i + 1] : dflt;
};
const file =
	args.find((a, i) => !a.startsWith('--') && !VALUED.includes(args[i - 1])) ??
	path.join(ROOT, 'scenarios/queue-compressed.json');
const scenario = JSON.parse(readFileSync(file, 'utf8'));
const policies = (
	opt('--policies') ??
	(
		scenario.policies ?? ['retry_on_fail', 'sleep_loop', 'per_process_breakers', 'shared_store']
	).join(',')
).split(',');
const major = Number(opt('--n8n', 2));
const runs = Number(opt('--runs', 1));
if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs wants a whole number >= 1`);

// Loaded after --help: run.mjs reads the Redis and Postgres ports at import, and help needs neither.
const { queueRun } = await import('../tests/support/queue/run.mjs');
const sim = JSON.parse(
	execFileSync(path.join(ROOT, 'target/release/simulate'), [file, '--json']).toString(),
);
const t0 = Date.now();
const reals = [];
for (let k = 1; k <= runs; k++) {
	const tk = Date.now();
	// The machine's load beside each run: on 2 cores another job slows n8n's dispatch, and with it
	// how many requests a policy makes in the outage; a reader should see which runs were loaded.
	const loadBefore = loadavg()[0];
	// A fresh cluster per run (queueRun starts its own n8n, Postgres database and vendor), so no
	// run inherits another's queue, breaker rows or warm caches.
	const real = await queueRun(scenario, {
		policies,
		major,
		kill: args.includes('--kill'),
		log: (l) => console.error(`[bench-queue] run ${k}/${runs}: ${l}`),
	});
	real.load_avg = { before: loadBefore, after: loadavg()[0] };
	reals.push(real);
	console.log(
		`\nrun ${k} of ${runs}: n8n ${major} queue mode, 1 main + ${real.workers} workers x ${real.concurrency}; ${((Date.now() - tk) / 1000).toFixed(0)} s wall; load average ${real.load_avg.before.toFixed(1)} before, ${real.load_avg.after.toFixed(1)} after`,
	);
	console.log(table(compare(real, sim, policies)));
	for (const p of policies) {
		const r = real.results[p];
		console.log(
			`${p}: executions per worker ${JSON.stringify(r.workers)}; webhook to first request ms ${JSON.stringify(r.dispatch_ms)}${r.lost_errors ? `; failed executions ${JSON.stringify(r.lost_errors)}` : ''}`,
		);
	}
	const crash = real.results.shared_store?.crash;
	if (crash) console.log(`worker crash: ${JSON.stringify(crash)}`);
}
const summary = summarize(reals, sim, policies);
console.log(
	`\n${scenario.name}\nn8n ${major} queue mode: 1 main + ${scenario.workers} workers x ${scenario.concurrency}; measured at the loopback vendor; ${runs} run${runs === 1 ? '' : 's'}, ${((Date.now() - t0) / 1000).toFixed(0)} s wall\n`,
);
console.log(spreadTable(summary));
if (runs > 1) console.log(`\nper run:\n${perRunLines(summary).join('\n')}`);
if (opt('--json'))
	writeFileSync(
		opt('--json'),
		JSON.stringify(
			{
				scenario: file,
				sim,
				runs: reals.map((real) => ({ real, rows: compare(real, sim, policies) })),
				summary,
			},
			null,
			2,
		),
	);
if (opt('--svg')) writeFileSync(opt('--svg'), svg(reals.at(-1), sim, policies, scenario));
const off = summary.filter((s) => s.agreed < runs);
if (off.length)
	console.log(
		`\nsimulator and real run differ by more than 20% on: ${off.map((s) => `${s.policy} (${runs - s.agreed} of ${runs} runs)`).join(', ')}`,
	);
