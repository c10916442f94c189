// The short queue-mode run of the test command: real n8n (1 main + 3 workers, Redis store,
// Postgres database), a loopback vendor playing scenarios/queue-smoke.json. The half-open probe
// after the blip hangs and its worker is SIGKILLed: another worker must probe once the lease
// ends, the breaker must close, and no other worker's execution may be lost. The full run with
// every policy is scripts/bench-queue.mjs.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { ROOT } from '../support/n8n.mjs';
import { queueRun } from '../support/queue/run.mjs';
import { agrees, compare, table } from '../support/queue/report.mjs';
import { createRequire } from 'node:module';

// The engine's default threshold, where the scenario sets none (the generated constants).
const { ENGINE_DEFAULTS } = createRequire(import.meta.url)('../../dist/lib/engineConstants.js');

const major = Number(process.env.N8N_MAJOR ?? 2);
const file = path.join(ROOT, 'scenarios/queue-smoke.json');
const scenario = JSON.parse(readFileSync(file, 'utf8'));
let real, sim, rows;

before(async () => {
	execFileSync(
		'cargo',
		['build', '--quiet', '--release', '--locked', '-p', 'resilient-simulator'],
		{
			cwd: ROOT,
			stdio: 'inherit',
		},
	);
	sim = JSON.parse(
		execFileSync(path.join(ROOT, 'target/release/simulate'), [file, '--json']).toString(),
	);
	real = await queueRun(scenario, {
		policies: scenario.policies,
		major,
		kill: true,
		log: (l) => console.log(l),
	});
	rows = compare(real, sim, scenario.policies);
	console.log(table(rows));
	console.log(
		'crash:',
		JSON.stringify(real.results.shared_store.crash),
		'breaker:',
		JSON.stringify(real.results.shared_store.breaker),
	);
	console.log('executions per worker:', JSON.stringify(real.results.shared_store.workers));
});

test('executions are spread over the three workers', () => {
	const per = real.results.retry_on_fail.workers;
	assert.deepEqual(Object.keys(per), ['w1', 'w2', 'w3'], JSON.stringify(per));
	for (const n of Object.values(per))
		assert.ok(n >= 3, `every worker ran executions: ${JSON.stringify(per)}`);
});

test('a worker SIGKILLed holding the probe lease: another worker probes after the lease, the breaker closes', () => {
	const c = real.results.shared_store.crash;
	assert.ok(c.happened, 'the probe after the blip was held and its worker killed');
	assert.notEqual(c.next_probe_worker, c.killed, 'the next probe comes from a live worker');
	// Lease = max(2 x deadline, deadline + 5 s) = 7 s with the scenario's 2 s deadline, from the
	// probe's admission. The next probe is admitted once the lease the store holds has ended: its
	// arrival is compared with that end (the same machine's clock), not with the lost probe's
	// arrival, which a loaded machine delivers late (CI beside a CPU hog: 0.7 s).
	assert.ok(c.lease_until_s !== null, `one probe lease in the row: ${JSON.stringify(c.lease_row)}`);
	const lease = c.lease_until_s - c.probe_at_s;
	assert.ok(
		lease > 4 && lease <= 7.05,
		`the lease ends ${lease.toFixed(2)} s after the probe arrived`,
	);
	const gap = c.next_probe_at_s - c.probe_at_s;
	assert.ok(
		c.next_probe_at_s >= c.lease_until_s - 0.01 && gap < 20,
		`next probe ${gap.toFixed(2)} s after the lost one, its lease ending at ${lease.toFixed(2)} s`,
	);
	assert.equal(c.next_probe_status, 200);
	const b = real.results.shared_store.breaker;
	assert.equal(b.phase, 'closed', `the breaker did not stick in half-open: ${JSON.stringify(b)}`);
	assert.equal(b.probes_held, 0);
	assert.equal(c.other_execs_not_done, 0, 'no execution of a live worker was disturbed');
});

test("this product: no 429, no ban; only the killed worker's executions fail (n8n drops a dead worker's jobs)", () => {
	const p = real.results.shared_store;
	assert.equal(
		p.figures.done + p.figures.lost,
		p.figures.total,
		`every execution ended: ${JSON.stringify(p.figures)} ${JSON.stringify(p.statuses)}`,
	);
	for (const why of Object.keys(p.lost_errors ?? {}))
		assert.match(
			why,
			/failed to be processed too many times/,
			`a failure other than the crash: ${why}`,
		);
	assert.ok(p.figures.lost <= scenario.concurrency, "at most the killed worker's slots");
	assert.equal(p.figures.over_quota_429, 0);
	assert.equal(p.figures.banned_s, 0);
});

// What n8n's own Retry On Fail does is timing: on a busy machine its 5 x 1 s retries outlast the
// blip or meet the ban at other moments (seen: 51 to 126 requests against the simulator's 95),
// and with both cores taken by other work its executions barely reach the vendor during the blip
// (seen: 7). Its agreement with the simulator is the benchmark's to show, as a spread over three
// runs (scripts/bench-queue.mjs --runs 3). The test command holds what does not depend on load:
// this product sends the blip at most what its breaker lets through before it opens (the
// threshold, plus a request per execution slot already past admission), and fewer than Retry On
// Fail whenever Retry On Fail sent more than that.
test('into the blip, this product sent no more than its breaker lets through, and fewer than n8n Retry On Fail', () => {
	const ours = real.results.shared_store.figures.requests_in_outage;
	const theirs = real.results.retry_on_fail.figures.requests_in_outage;
	const threshold = scenario.engine.threshold ?? ENGINE_DEFAULTS.threshold;
	const ceiling = threshold + scenario.workers * scenario.concurrency;
	assert.ok(ours <= ceiling, `${ours} requests into the blip > ${ceiling}\n${table(rows)}`);
	if (theirs > ceiling) assert.ok(ours < theirs, table(rows));
	else
		console.log(`Retry On Fail sent only ${theirs} into the blip (a busy machine): not compared`);
});

// The requests into the blip are timing too for this product: how many executions are past
// admission when the breaker opens depends on how fast the workers run (seen beside a loaded CI
// machine: 9 against the simulator's 6, within the bound above). The whole run's count is not:
// it is the breaker's, the backoff's and the deferrals', and the simulator must predict it.
test("the simulator predicted this product's requests within 20%", () => {
	const r = rows.find((x) => x.policy === 'shared_store');
	assert.ok(agrees(r.real.requests, r.sim.requests), table(rows));
});
