// The shared vectors through the compiled pkg/ in Node: outputs must equal the Rust engine's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const engine = require('../../pkg/engine.js');
const vec = (name) => JSON.parse(readFileSync(new URL(`../vectors/${name}`, import.meta.url)));

test('Retry-After and RateLimit-Reset vectors', () => {
	const v = vec('hints.json');
	for (const c of v.cases) {
		assert.deepEqual(engine.serverHint(c.status, c.headers, v.now_ms), c.expect, JSON.stringify(c));
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

function apply(views, w) {
	const v = views[w.provider];
	for (const k of ['breaker', 'gate', 'in_flight']) {
		if (w[k]) {
			if (v[k]) assert.equal(w[k].version, v[k].version + 1, `${k} version rises by one`);
			v[k] = w[k];
		}
	}
}

test('step-machine scenarios are identical to the Rust engine', () => {
	const cases = vec('scenarios.in.json').cases;
	const expected = vec('scenarios.expected.json');
	cases.forEach((c, idx) => {
		engine.seedRandom(c.seed);
		const eng = new engine.Engine(c.config);
		const n = c.config.providers.length;
		const views = Array.from({ length: n }, () => ({}));
		const turn = new Array(n).fill(0);
		let now = c.start_ms;
		const jobs = [];
		for (let job = 0; job < c.jobs; job++) {
			const item = eng.item(now, `job${job}`, []);
			const trace = [];
			for (;;) {
				const poll = item.poll(now, views);
				if (poll.writes) apply(views, poll.writes);
				trace.push({ t: now, step: poll.step, transition: poll.transition });
				if (poll.step.kind === 'call') {
					const p = poll.step.provider;
					const outcome = c.answers[p][turn[p]++ % c.answers[p].length];
					now += c.call_ms;
					const effect = item.onOutcome(now, outcome, false);
					const rec = eng.record(views[p], effect, now);
					if (rec.writes) apply(views, rec.writes);
					trace.push({ t: now, effect, transition: rec.transition });
				} else if (poll.step.kind === 'sleep') {
					now += poll.step.ms;
				} else break;
			}
			jobs.push({ trace, report: item.report() });
			now += c.gap_ms ?? 0;
			item.free();
		}
		const want = expected[idx];
		assert.deepEqual(JSON.parse(JSON.stringify(jobs)), want.jobs, `scenario ${c.name}`);
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
			() => new engine.Engine(cfg),
			(e) => e instanceof Error && e.code === 'invalid_config' && e.field === field,
			field,
		);
	}
});

test('a corrupt state row is an error, not a crash', () => {
	const eng = new engine.Engine({ providers: [{ name: 'a' }] });
	const item = eng.item(0, 'h', []);
	assert.throws(
		() => item.poll(0, [{ breaker: { phase: 'sideways' } }]),
		(e) => e.code === 'corrupt_state',
	);
	assert.throws(
		() => item.onOutcome(0, { kind: 'status', status: 200 }, false),
		(e) => e.code === 'invalid_input',
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
