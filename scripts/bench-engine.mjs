#!/usr/bin/env node
// Benchmark (prints figures; asserts nothing): the engine's cost per step and per attempt through
// the WASM boundary, the current pkg/ beside the earlier boundary (pkg/ at commit 2013465: objects
// through serde-wasm-bindgen, five crossings per attempt), both loaded into this same Node process
// and run on the same workload, interleaved; and beside the same decisions in plain JS.
//   node scripts/bench-engine.mjs            (BENCH_N=iterations per run, default 100000)
// The earlier pkg/ is taken from git (`git show 2013465:pkg/...`) into a temporary directory.
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BEFORE_COMMIT = '2013465';
const N = Number(process.env.BENCH_N ?? 100000);
const RUNS = 5;

/** The earlier boundary's pkg/, as committed then (fails loudly without the git history). */
function loadEarlier() {
	const dir = mkdtempSync(path.join(tmpdir(), 'rpc-engine-before-'));
	try {
		for (const file of ['engine.js', 'engine_bg.wasm'])
			writeFileSync(
				path.join(dir, file),
				execFileSync('git', ['show', `${BEFORE_COMMIT}:pkg/${file}`], {
					cwd: ROOT,
					maxBuffer: 1 << 24,
				}),
			);
		return require(path.join(dir, 'engine.js')); // instantiated here: the files can go
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

const now = require(path.join(ROOT, 'pkg/engine.js'));
const before = loadEarlier();
const SEP = '\u001e'; // ROW_SEPARATOR
// The row kinds the engine reads per provider (src/rows/row_text.rs's ROW_KINDS).
const { ROW_KINDS } = require(path.join(ROOT, 'dist/lib/engineConstants.js'));
const config = { providers: [{ name: 'a' }, { name: 'b' }] };
const ok = { kind: 'status', status: 200, headers: {} };
const bad = { kind: 'status', status: 503, headers: {} };
let sink = 0;

// Each workload is one attempt of an item on a two-provider chain, against rows kept the way the
// node's memory store keeps them (objects for the earlier boundary, texts for the current one):
// every 7th call answers 503, which writes the breaker row; the others answer 200 and end the
// item. Both boundaries see the same sequence of outcomes and the same rows.
function earlier(E) {
	const eng = new E.Engine(config);
	const views = [{}, {}];
	const keep = (w) => {
		for (const kind of ['breaker', 'gate', 'in_flight'])
			if (w[kind]) views[w.provider][kind] = w[kind];
	};
	return {
		step(i) {
			const it = eng.item(i, 'h', []);
			sink += it.poll(i, views).step.provider;
			it.free();
		},
		// What itemLoop.ts did per attempt then: item, poll, onOutcome, lastAttempt, record,
		// finished, and at the item's end report + counters.
		attempt(i) {
			const it = eng.item(i, 'h', []);
			const poll = it.poll(i, views);
			if (poll.writes) keep(poll.writes);
			const effect = it.onOutcome(i + 1, i % 7 ? ok : bad, false);
			sink += it.lastAttempt().attempt;
			const rec = eng.record(views[effect.provider], effect, i + 1);
			if (rec.writes) keep({ ...rec.writes, provider: effect.provider });
			if (it.finished()) sink += it.report().attempts.length + it.counters().length;
			it.free();
		},
	};
}

function current(E) {
	const eng = new E.Engine(config);
	// Every row kind of each provider, in the engine's order ("" for a fresh row).
	const rows = config.providers.flatMap(() => ROW_KINDS.map(() => ''));
	const keep = (w) => {
		for (const r of w.rows)
			rows[w.provider * ROW_KINDS.length + ROW_KINDS.indexOf(r.kind)] = r.json;
	};
	return {
		step(i) {
			const it = eng.item(i, 'h', '');
			sink += it.poll(i, rows.join(SEP)).step.provider;
			it.free();
		},
		// What itemLoop.ts does per attempt: item, poll, outcome (the end comes with it).
		attempt(i) {
			const it = eng.item(i, 'h', '');
			const poll = it.poll(i, rows.join(SEP));
			if (poll.writes) keep(poll.writes);
			const rec = it.outcome(i + 1, i % 7 ? ok : bad);
			sink += rec.attempt.attempt;
			if (rec.writes) keep(rec.writes);
			if (rec.end) sink += rec.end.report.attempts.length + rec.end.counters.length;
			it.free();
		},
	};
}

// Plain JS: a backoff function plus a consecutive-failure breaker (cockatiel-style).
const backoff = (n) => Math.random() * Math.min(8000, 300 * 2 ** n);
const jsBreaker = { failures: 0, openUntil: 0 };
const jsAdmit = (t) => t >= jsBreaker.openUntil;
const plainJs = {
	step(i) {
		sink += backoff(i % 6) + (jsAdmit(i) ? 1 : 0);
	},
	attempt(i) {
		sink += jsAdmit(i) ? 1 : 0;
		if (i % 7) jsBreaker.failures = 0;
		else if (++jsBreaker.failures >= 5) jsBreaker.openUntil = i + 30000;
	},
};

/** µs per call of each contender, median of RUNS runs. Each run is CHUNKS chunks, and within a
 * chunk every contender runs N / CHUNKS iterations in turn (the order rotating), so a busy moment
 * of a shared machine falls on all of them alike. */
const CHUNKS = 10;
function measure(contenders, kind) {
	for (const c of contenders) for (let i = 0; i < 20000; i++) c[kind](i); // warm-up (JIT, heap)
	const runs = contenders.map(() => []);
	const per = Math.max(1, Math.floor(N / CHUNKS));
	for (let r = 0; r < RUNS; r++) {
		const ns = contenders.map(() => 0);
		for (let chunk = 0; chunk < CHUNKS; chunk++)
			for (let j = 0; j < contenders.length; j++) {
				const k = (j + chunk) % contenders.length;
				const from = (r * CHUNKS + chunk) * per;
				const t0 = process.hrtime.bigint();
				for (let i = from; i < from + per; i++) contenders[k][kind](i);
				ns[k] += Number(process.hrtime.bigint() - t0);
			}
		ns.forEach((v, k) => runs[k].push(v / (per * CHUNKS) / 1000));
	}
	return runs.map((r) => r.sort((a, b) => a - b)[RUNS >> 1]);
}

const contenders = [current(now), earlier(before), plainJs];
const rows = [
	['step: item + poll -> call', measure(contenders, 'step')],
	['attempt: item + poll + outcome', measure(contenders, 'attempt')],
];
const us = (v, d = 2) => `${v.toFixed(d)} us`;
console.log(
	`Node ${process.version}, ${N} iterations x ${RUNS} runs (interleaved in ${CHUNKS} chunks), median; current pkg/ vs pkg/ at ${BEFORE_COMMIT}`,
);
console.log(
	`${'per'.padEnd(32)} ${'current'.padStart(10)} ${'before'.padStart(10)} ${'ratio'.padStart(7)} ${'plain JS'.padStart(10)}`,
);
for (const [label, [cur, was, js]] of rows)
	console.log(
		`${label.padEnd(32)} ${us(cur).padStart(10)} ${us(was).padStart(10)} ${(cur / was).toFixed(2).padStart(7)} ${us(js, 3).padStart(10)}${cur <= was * 1.1 ? '' : '  (over before +10 %)'}`,
	);
const wasm = statSync(path.join(ROOT, 'pkg/engine_bg.wasm')).size;
console.log(
	`engine_bg.wasm: ${wasm} bytes (${(wasm / 1024).toFixed(1)} KB, target <= 150 KB)${sink === -1 ? '' : ''}`,
);
