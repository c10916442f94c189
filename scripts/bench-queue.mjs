#!/usr/bin/env node
// The real run: a simulator scenario played by a loopback vendor against n8n in queue mode
// (1 main + the scenario's workers, Redis store), every policy as a webhook workflow, and the
// simulator's prediction for the same file printed beside the measurements.
//   node scripts/bench-queue.mjs [scenario.json] [--policies a,b] [--n8n 2|1] [--kill]
//                                [--json out.json] [--svg out.svg]
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { queueRun } from '../tests/support/queue/run.mjs';
import { compare, table, svg } from '../tests/support/queue/report.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
if (args.includes('-h') || args.includes('--help')) {
	console.log(
		readFileSync(fileURLToPath(import.meta.url), 'utf8')
			.split('\n')
			.slice(1, 6)
			.map((l) => l.replace(/^\/\/ ?/, ''))
			.join('\n'),
	);
	process.exit(0);
}
const opt = (name, dflt) => {
	const i = args.indexOf(name);
	return i >= 0 ? args[i + 1] : dflt;
};
const file =
	args.find(
		(a, i) =>
			!a.startsWith('--') && !['--policies', '--n8n', '--json', '--svg'].includes(args[i - 1]),
	) ?? path.join(ROOT, 'scenarios/queue-compressed.json');
const scenario = JSON.parse(readFileSync(file, 'utf8'));
const policies = (
	opt('--policies') ??
	(
		scenario.policies ?? ['retry_on_fail', 'sleep_loop', 'per_process_breakers', 'shared_store']
	).join(',')
).split(',');
const major = Number(opt('--n8n', 2));

const sim = JSON.parse(
	execFileSync(path.join(ROOT, 'target/release/simulate'), [file, '--json']).toString(),
);
const t0 = Date.now();
const real = await queueRun(scenario, {
	policies,
	major,
	kill: args.includes('--kill'),
	log: (l) => console.error(`[bench-queue] ${l}`),
});
const rows = compare(real, sim, policies);
console.log(
	`\n${scenario.name}\nn8n ${major} queue mode: 1 main + ${real.workers} workers x ${real.concurrency}; measured at the loopback vendor; ${((Date.now() - t0) / 1000).toFixed(0)} s wall\n`,
);
console.log(table(rows));
for (const p of policies) {
	const r = real.results[p];
	console.log(
		`${p}: executions per worker ${JSON.stringify(r.workers)}; webhook to first request ms ${JSON.stringify(r.dispatch_ms)}${r.lost_errors ? `; failed executions ${JSON.stringify(r.lost_errors)}` : ''}`,
	);
}
const crash = real.results.shared_store?.crash;
if (crash) console.log(`worker crash: ${JSON.stringify(crash)}`);
if (opt('--json'))
	writeFileSync(opt('--json'), JSON.stringify({ scenario: file, real, sim, rows }, null, 2));
if (opt('--svg')) writeFileSync(opt('--svg'), svg(real, sim, policies, scenario));
const off = rows.filter((r) => !r.agree);
if (off.length)
	console.log(
		`\nsimulator and real run differ by more than 20% on: ${off.map((r) => r.policy).join(', ')}`,
	);
