#!/usr/bin/env node
// Benchmark (prints figures; asserts nothing): the cost of one decision through the WASM engine
// from Node, beside the same decision written in plain JS (seed 003's backoff function plus a
// consecutive-failure breaker) as the baseline, and beside the figures of the earlier boundary
// (serde-wasm-bindgen objects, five crossings per attempt), measured on this machine.
import { createRequire } from 'node:module';
import { statSync } from 'node:fs';
const require = createRequire(import.meta.url);
const engine = require('../pkg/engine.js');
const N = Number(process.env.BENCH_N ?? 100000);

function bench(label, fn) {
	for (let i = 0; i < 2000; i++) fn(i); // warm-up
	const runs = [];
	for (let r = 0; r < 5; r++) {
		const t0 = process.hrtime.bigint();
		for (let i = 0; i < N; i++) fn(i);
		runs.push(Number(process.hrtime.bigint() - t0) / N / 1000);
	}
	runs.sort((a, b) => a - b);
	return { label, us: runs[2] };
}

// Plain JS baseline: what seed 003 shows, plus a consecutive breaker (cockatiel-style).
const backoff = (n) => Math.random() * Math.min(8000, 300 * 2 ** n);
const jsBreaker = { failures: 0, openUntil: 0 };
const jsAdmit = (now) => now >= jsBreaker.openUntil;
const jsRecord = (ok, now) => {
	if (ok) jsBreaker.failures = 0;
	else if (++jsBreaker.failures >= 5) {
		jsBreaker.openUntil = now + 30000;
		jsBreaker.failures = 0;
	}
};

const eng = new engine.Engine({ providers: [{ name: 'a' }, { name: 'b' }] });
const fresh = ['', '', '', '', '', ''].join('\u001e'); // row texts, joined as the node does
const ok = { kind: 'status', status: 200, headers: {} };
const bad = { kind: 'status', status: 503, headers: {} };
let sink = 0;
const results = [
	[
		bench('step: poll -> call (WASM)', (i) => {
			const it = eng.item(i, 'h', '');
			sink += it.poll(i, fresh).step.provider;
			it.free();
		}),
		bench('step: backoff + admit (plain JS)', (i) => {
			sink += backoff(i % 6) + (jsAdmit(i) ? 1 : 0);
		}),
	],
	[
		bench('attempt: item + poll + outcome (WASM)', (i) => {
			const it = eng.item(i, 'h', '');
			it.poll(i, fresh);
			const r = it.outcome(i + 1, i % 7 ? ok : bad);
			sink += r.sleep_ms + (r.writes ? 1 : 0);
			it.free();
		}),
		bench('admit + record (plain JS)', (i) => {
			sink += jsAdmit(i) ? 1 : 0;
			jsRecord(i % 7 !== 0, i);
		}),
	],
];
const wasmKb = (statSync(new URL('../pkg/engine_bg.wasm', import.meta.url)).size / 1024).toFixed(1);
// The earlier boundary on this machine (README before the two-call boundary): step 2.98 us on
// Node 20, 2.57 us on Node 24; an attempt was poll + onOutcome + lastAttempt + finished + record.
const BEFORE = { 20: { step: 2.98, attempt: 5.87 }, 24: { step: 2.57, attempt: 4.83 } };
const before = BEFORE[process.versions.node.split('.')[0]] ?? {};
console.log(
	`Node ${process.version}, ${N} iterations x 5 runs, median per decision (target <= 5 us)`,
);
console.log(
	`${'decision'.padEnd(34)} ${'WASM engine'.padStart(12)} ${'before'.padStart(10)} ${'plain JS'.padStart(12)}`,
);
const was = [before.step, before.attempt];
results.forEach(([w, j], k) =>
	console.log(
		`${w.label.replace(' (WASM)', '').padEnd(34)} ${(w.us.toFixed(2) + ' us').padStart(12)} ${(was[k] ? was[k].toFixed(2) + ' us' : '-').padStart(10)} ${(j.us.toFixed(3) + ' us').padStart(12)}`,
	),
);
console.log(`engine_bg.wasm: ${wasmKb} KB (target <= 150 KB)${sink === -1 ? '' : ''}`);
