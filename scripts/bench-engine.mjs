#!/usr/bin/env node
// Benchmark (prints figures; asserts nothing): the cost of one decision through the WASM engine
// from Node, beside the same decision written in plain JS (seed 003's backoff function plus a
// consecutive-failure breaker) as the baseline.
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

const eng = new engine.Engine({ providers: [{ name: 'a' }] });
const views = [{}];
const row = {};
let sink = 0;
const results = [
	[
		bench('step: poll -> call (WASM)', (i) => {
			const it = eng.item(i, 'h', []);
			sink += it.poll(i, views).step.provider;
			it.free();
		}),
		bench('step: backoff + admit (plain JS)', (i) => {
			sink += backoff(i % 6) + (jsAdmit(i) ? 1 : 0);
		}),
	],
	[
		bench('admit + record (WASM)', (i) => {
			const a = eng.admit(0, row, i, 'h');
			const r = eng.record(
				{ breaker: row },
				{
					provider: 0,
					health: i % 7 ? 'success' : 'failure',
					holder: 'h',
					label: '503',
					gate_close_until_ms: null,
					release_in_flight: false,
				},
				i,
			);
			sink += a.decision.kind.length + (r.writes ? 1 : 0);
		}),
		bench('admit + record (plain JS)', (i) => {
			sink += jsAdmit(i) ? 1 : 0;
			jsRecord(i % 7 !== 0, i);
		}),
	],
	[
		bench('backoff delay (WASM)', (i) => {
			sink += engine.backoffDelay('full_jitter', 300, 8000, i % 6, 0);
		}),
		bench('backoff delay (plain JS)', (i) => {
			sink += backoff(i % 6);
		}),
	],
];
const wasmKb = (statSync(new URL('../pkg/engine_bg.wasm', import.meta.url)).size / 1024).toFixed(1);
console.log(
	`Node ${process.version}, ${N} iterations x 5 runs, median per decision (target <= 5 us)`,
);
console.log(`${'decision'.padEnd(34)} ${'WASM engine'.padStart(12)} ${'plain JS'.padStart(12)}`);
for (const [w, j] of results)
	console.log(
		`${w.label.replace(' (WASM)', '').padEnd(34)} ${(w.us.toFixed(2) + ' us').padStart(12)} ${(j.us.toFixed(3) + ' us').padStart(12)}`,
	);
console.log(`engine_bg.wasm: ${wasmKb} KB (target <= 150 KB)${sink === -1 ? '' : ''}`);
