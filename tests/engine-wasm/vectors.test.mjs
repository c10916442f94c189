// The shared vectors through the compiled engine in Node: outputs must equal the Rust engine's.
// The replay build (target/pkg-replay: pkg/'s engine plus seedRandom and single decisions) runs
// the vectors; what the package ships (pkg/) is checked to export nothing but the boundary.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const engine = require('../../target/pkg-replay/engine.js');
const shipped = require('../../pkg/engine.js');
/** Row texts joined as the node joins them for one engine call. */
const joined = (rows) => rows.join('\u001e');
const vec = (name) => JSON.parse(readFileSync(new URL(`../vectors/${name}`, import.meta.url)));

test('the shipped engine exports the boundary and nothing test-only', () => {
	assert.deepEqual(Object.keys(shipped).sort(), [
		'Engine',
		'Item',
		'Pool',
		'StreamPace',
		'finishReason',
		'readServes',
		'storeDownMetrics',
		'storeFailed',
	]);
	const methods = (cls) =>
		Object.getOwnPropertyNames(cls.prototype)
			.filter((m) => m !== 'constructor' && m !== 'free' && !m.startsWith('__'))
			.sort();
	assert.deepEqual(methods(shipped.Engine), [
		'answerFails',
		'check',
		'commits',
		'idleSeats',
		'inspect',
		'item',
		'keyRow',
		'leave',
		'metrics',
		'pool',
		'raceLost',
		'report',
		'seam',
	]);
	assert.deepEqual(methods(shipped.Item), [
		'abandon',
		'cancelled',
		'commit',
		'deferNow',
		'hedge',
		'join',
		'onMemory',
		'outcome',
		'poll',
		'prefer',
		'rerecord',
		'stream',
		'tokens',
	]);
});

test("Retry-After, RateLimit-Reset and the vendors' hint vectors", () => {
	const v = vec('hints.json');
	for (const c of v.cases) {
		assert.deepEqual(
			engine.serverHint(c.status, c.headers, v.now_ms, c.body),
			c.expect,
			JSON.stringify(c),
		);
	}
});

test('seed 003 ceilings', () => {
	for (const c of vec('ceilings.json').cases) {
		const got = [...Array(7).keys()].map((n) =>
			engine.backoffDelay(c.strategy, c.base_ms, c.cap_ms, n, 0),
		);
		assert.deepEqual(got, c.expect);
	}
});

/** Row texts as Redis keeps them, written only if versions still match (as tests/vectors.rs). */
const { ROW_KINDS: KINDS } = require('../../dist/lib/engineConstants.js');
function write(rows, w) {
	if (!w) return;
	for (const r of w.rows) {
		const i = w.provider * KINDS.length + KINDS.indexOf(r.kind);
		const stored = rows[i] ? Number(rows[i].slice(0, rows[i].indexOf('|'))) : 0;
		assert.equal(stored, r.expected, 'a write expects the stored version');
		assert.equal(r.version, r.expected + 1, 'version rises by one');
		rows[i] = `${r.version}|${r.json}`;
	}
}

test('step-machine scenarios are identical to the Rust engine', () => {
	const cases = vec('scenarios.in.json').cases;
	const expected = vec('scenarios.expected.json');
	cases.forEach((c, idx) => {
		engine.seedRandom(c.seed);
		const eng = new engine.Engine(c.config);
		const rows = new Array(c.config.providers.length * KINDS.length).fill('');
		const turn = new Array(c.config.providers.length).fill(0);
		let now = c.start_ms;
		const jobs = [];
		for (let job = 0; job < c.jobs; job++) {
			const item = eng.item(now, `job${job}`, '');
			const trace = [];
			let end;
			for (;;) {
				const poll = item.poll(now, joined(rows));
				write(rows, poll.writes);
				trace.push({ t: now, poll });
				if ((end = poll.end)) break;
				if (poll.step.kind === 'call') {
					const p = poll.step.provider;
					const outcome = c.answers[p][turn[p]++ % c.answers[p].length];
					now += c.call_ms;
					const recorded = item.outcome(now, outcome);
					write(rows, recorded.writes);
					trace.push({ t: now, recorded });
					if ((end = recorded.end)) break;
					now += recorded.sleep_ms;
				} else now += poll.step.ms;
			}
			jobs.push({ trace, end });
			now += c.gap_ms ?? 0;
			item.free();
		}
		const want = expected[idx];
		assert.deepEqual(
			JSON.parse(JSON.stringify({ jobs, rows })),
			{ jobs: want.jobs, rows: want.rows },
			`scenario ${c.name}`,
		);
		eng.free();
	});
});

test('invalid configuration is a JS Error with a stable code and the field', () => {
	const bad = [
		[{ providers: [{ name: 'a' }], threshold: 0 }, 'threshold'],
		[{ providers: [{ name: 'a' }], base_ms: 500, cap_ms: 100 }, 'cap_ms'],
		[{ providers: [{ name: 'a' }], strategy: 'bogus' }, 'strategy'],
		[{ providers: [{ name: 'a' }], open_ms: -1 }, 'open_ms'],
		[{ providers: [] }, 'providers'],
		[{ providers: [{ name: 'a' }, { name: 'a' }] }, 'providers[1].name'],
		[{ providers: [{ name: 'a', deadline_ms: -5 }] }, 'providers[0].deadline_ms'],
	];
	for (const [cfg, field] of bad) {
		assert.throws(
			() => new shipped.Engine(cfg),
			(e) => e instanceof Error && e.code === 'invalid_config' && e.field === field,
			field,
		);
	}
});

test('a corrupt state row is an error, not a crash; an outcome without a call is refused', () => {
	const eng = new shipped.Engine({ providers: [{ name: 'a' }] });
	const item = eng.item(0, 'h', '');
	for (const bad of ['{"phase":"sideways"}', '7|{', 'x|{}']) {
		assert.throws(
			() => item.poll(0, joined([bad, ...KINDS.slice(1).map(() => '')])),
			(e) => e.code === 'corrupt_state',
			bad,
		);
	}
	assert.throws(
		() => item.poll(0, joined(['', ''])),
		(e) => e.code === 'invalid_input',
	);
	assert.throws(
		() => item.outcome(0, { kind: 'status', status: 200 }),
		(e) => e.code === 'invalid_input',
	);
	assert.throws(
		() => item.rerecord(0, joined(KINDS.map(() => ''))),
		(e) => e.code === 'invalid_input',
	);
});

test('guard tickets: check hands one out, report records it, a foreign one is refused', () => {
	const eng = new shipped.Engine({ providers: [{ name: 'a' }, { name: 'b' }], threshold: 1 });
	const rows = new Array(2 * KINDS.length).fill('');
	const checked = eng.check(1000, joined(rows), 'lease-1', 'global');
	assert.equal(checked.decision.kind, 'go');
	const ticket = JSON.parse(JSON.stringify(checked.decision.ticket)); // it travels as plain data
	assert.deepEqual(
		[ticket.provider, ticket.name, ticket.lease, ticket.scope],
		[0, 'a', 'lease-1', 'global'],
	);
	const reported = eng.report(
		1001,
		ticket,
		'global',
		{ kind: 'status', status: 500 },
		joined(rows.slice(0, KINDS.length)),
	);
	assert.equal(reported.transition.to, 'open');
	assert.equal(reported.attempt.health, 'failure');
	write(rows, { provider: 0, rows: reported.writes.rows });
	assert.equal(eng.check(1002, joined(rows), 'lease-2', 'global').decision.name, 'b');
	assert.throws(
		() =>
			eng.report(
				1001,
				ticket,
				'wf:9',
				{ kind: 'status', status: 200 },
				joined(rows.slice(0, KINDS.length)),
			),
		(e) => e.code === 'invalid_ticket',
	);
});

test("a guard ticket carries its call's hold on a spend cap through JSON, and its report settles it at the usage reported", () => {
	const eng = new shipped.Engine({
		providers: [{ name: 'a', token_limit: { spend_cap: 0.001, price_input: 5, price_output: 5 } }],
	});
	const rows = new Array(KINDS.length).fill('');
	const checked = eng.check(1000, joined(rows), 'lease-1', 'global');
	const ticket = JSON.parse(JSON.stringify(checked.decision.ticket));
	assert.equal(ticket.held_micros, 5000, 'the output reserve (1000 tokens) at 5 per million');
	write(rows, checked.writes);
	const busy = eng.check(1001, joined(rows), 'lease-2', 'global').decision;
	assert.deepEqual([busy.kind, busy.reason], ['defer', 'spend_cap'], 'held by the call out');
	const reported = eng.report(
		1002,
		ticket,
		'global',
		// The answer reported 20 tokens: 100 millionths spent, the 5,000 held released.
		{ kind: 'facts', answered: true, status: 200, usage: { input: 10, output: 10 } },
		joined(rows),
	);
	write(rows, reported.writes);
	assert.equal(eng.check(1003, joined(rows), 'lease-3', 'global').decision.kind, 'go');
	assert.throws(
		() =>
			eng.report(
				1002,
				{ ...ticket, held_micros: -1 },
				'global',
				{ kind: 'status', status: 200 },
				joined(rows),
			),
		(e) => e.code === 'invalid_ticket',
	);
});

test('full jitter is really random: mean c/2 within 5%, min < 5% c, max > 95% c', () => {
	for (let n = 0; n < 6; n++) {
		const c = Math.min(8000, 300 * 2 ** n);
		const draws = Array.from({ length: 10000 }, () =>
			engine.backoffDelay('full_jitter', 300, 8000, n, 0),
		);
		const mean = draws.reduce((a, b) => a + b, 0) / draws.length;
		assert.ok(Math.abs(mean - c / 2) <= 0.05 * (c / 2), `n=${n} mean ${mean}`);
		assert.ok(Math.min(...draws) < 0.05 * c && Math.max(...draws) > 0.95 * c);
	}
});

test("a failed store through the shipped engine: fail open with the engine's warning, fail closed with its reason", () => {
	assert.deepEqual(shipped.storeFailed(true, 'no answer within 2000 ms'), {
		kind: 'fall_back',
		warning:
			"state store unavailable (no answer within 2000 ms): this item used this process's memory",
	});
	assert.deepEqual(shipped.storeFailed(false, 'connect ECONNREFUSED'), {
		kind: 'defer',
		reason: 'store_unavailable',
		cause: 'connect ECONNREFUSED',
	});
	assert.equal(shipped.readServes(99, 100), true);
	assert.equal(shipped.readServes(100, 100), true);
	assert.equal(shipped.readServes(101, 100), false);
});

test('Item Concurrency Auto through the shipped engine: a full window queues the next item, and its call ending wakes it', () => {
	const engine = new shipped.Engine({ providers: [{ name: 'p', threshold: 1 }] });
	const pool = engine.pool(256);
	const rows = Array(KINDS.length).fill('').join('\u001e');
	const [a, b] = [engine.item(0, 'a', ''), engine.item(0, 'b', '')];
	const [ma, mb] = [a.join(pool), b.join(pool)];
	assert.notEqual(ma, mb);
	assert.equal(a.poll(0, rows).step.kind, 'call');
	const queued = b.poll(0, rows).step;
	assert.deepEqual(
		queued,
		{ kind: 'queue', provider: 0, ms: 60_000 },
		'one call before a first success',
	);
	const rec = a.outcome(10, { kind: 'status', status: 200 });
	assert.deepEqual(rec.wake, [mb], 'the served call frees and grows the window: b polls again');
	assert.equal(rec.end.windows[0], 4, 'slow start: the window grew by three');
	assert.equal(b.poll(10, rows).step.kind, 'call');
});
