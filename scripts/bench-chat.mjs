#!/usr/bin/env node
// What a model call through the Resilient Chat Model costs over the same call on the plain chat
// model, and how fast a chain with a dead Model 1 reaches its last item beside LangChain's
// withFallbacks (what n8n's Enable Fallback Model builds). Outside n8n, as tests/chat/ run it:
// the package installed as n8n's community installer does, n8n's own LangChain clients (ChatOpenAI
// on chat completions), loopback vendors that answer at once.
//   per-call: --calls N (100) healthy calls after --warmup W (10) not counted, each timed alone;
//     plain ChatOpenAI vs this node over [it, a spare], memory store and Redis store (a Redis
//     started here); the median difference, and the first call's cost in this process (the
//     WebAssembly engine's load and, on Redis, the connection); and per call of this node, the
//     store round trips and the crossings into the engine (scripts/lib/call-census.mjs).
//   dead Model 1: --items N (10) calls one after another, Model 1 always 500, breaker threshold
//     3: this node with Fail Over First (the chat model's default) and with it off, beside
//     withFallbacks; requests at Model 1 and the time to the last item, best of --runs R (3).
//   node scripts/bench-chat.mjs [--n8n 2|1] [--calls N] [--warmup W] [--items N] [--runs R]
// Goals (issue 24): <= 2 ms per call (memory), <= 3 ms (Redis); time to the last item within
// 1.2x of withFallbacks'. Printed beside the baseline, never asserted.
import { execFileSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { n8nInstall, uid } from '../tests/support/n8n.mjs';
import { startLlmVendors } from '../tests/support/llm-vendors.mjs';
import {
	loadInstalledChatModel,
	loopbackOpenAI,
	n8nRequire,
	supplyContext,
} from '../tests/chat/support.mjs';
import { callCensus, perCall } from './lib/call-census.mjs';

const { values: opt } = parseArgs({
	options: {
		n8n: { type: 'string', default: '2' },
		calls: { type: 'string', default: '100' },
		warmup: { type: 'string', default: '10' },
		items: { type: 'string', default: '10' },
		runs: { type: 'string', default: '3' },
	},
});
const major = Number(opt.n8n);
const KEYS = { openai: 'sk-bench', anthropic: 'a', gemini: 'g' };
const install = n8nInstall(major);
const loaded = loadInstalledChatModel(install);
const census = callCensus(loaded.pkgDir);
const { ChatOpenAI } = n8nRequire(install)('@langchain/openai');
const vendors = await startLlmVendors(KEYS);
const services = JSON.parse(
	execFileSync(
		'bash',
		[
			'-c',
			'eval "$(bash scripts/lib/services.sh start)" && node -e \'console.log(JSON.stringify({dir: process.env.RPC_SERVICES_DIR, redis: Number(process.env.RPC_REDIS_PORT)}))\'',
		],
		{
			encoding: 'utf8',
			stdio: ['ignore', 'pipe', 'inherit'],
		},
	),
);

const openai = (id) =>
	loopbackOpenAI(ChatOpenAI, vendors, id, { apiKey: KEYS.openai, maxRetries: 0 });

async function resilient(ids, { store = 'memory', retryPolicy = {}, names } = {}) {
	const ctx = supplyContext(
		{
			numberInputs: ids.length,
			providers: {
				provider: (names ?? ids.map((id) => `${id}-${uid()}`)).map((name) => ({ name })),
			},
			breaker: { threshold: 3 },
			retryPolicy,
			stateStore: store,
			stateScope: 'provider',
		},
		ids.map(openai),
	);
	ctx.getCredentials = async (type) => {
		if (type !== 'redis') throw new Error(`no ${type} credential here`);
		return { host: '127.0.0.1', port: services.redis, database: 0, password: '' };
	};
	return (await new loaded.ResilientChatModel().supplyData.call(ctx, 0)).response;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (v) => `${v.toFixed(2)} ms`;

async function timed(model, n) {
	const out = [];
	for (let k = 0; k < n; k++) {
		const t = performance.now();
		await model.invoke(`question ${k}`);
		out.push(performance.now() - t);
	}
	return out;
}

try {
	console.log(`n8n ${install.major} (${install.dir.split('/').pop()}), Node ${process.version}`);
	// The first call in this process: the engine's load (and the store's client) included.
	for (const store of ['memory', 'redis']) {
		const id = `first-${store}`;
		vendors.script(id, ['ok']);
		const model = await resilient([id, `${id}-spare`], { store });
		const [first] = await timed(model, 1);
		const [second] = await timed(model, 1);
		console.log(`first call, ${store} store: ${ms(first)} (the next one ${ms(second)})`);
	}
	console.log(`\nper call, healthy Model 1, ${opt.calls} calls after ${opt.warmup} warm-up:`);
	console.log(
		'store    plain ChatOpenAI   this node   difference (median)   goal      with supplyData per call (as Basic LLM Chain)',
	);
	const crossings = [];
	for (const [store, goal] of [
		['memory', 2],
		['redis', 3],
	]) {
		const id = `healthy-${store}`;
		vendors.script(id, ['ok']);
		const plain = openai(id);
		const ours = await resilient([id, `${id}-spare`], { store });
		await timed(plain, Number(opt.warmup));
		await timed(ours, Number(opt.warmup));
		// Basic LLM Chain asks for its model (the sub-node's supplyData) once per item.
		const names = [`${id}-each`, `${id}-each-spare`];
		const each = {
			invoke: async (q) => (await resilient([id, `${id}-spare`], { store, names })).invoke(q),
		};
		await timed(each, Number(opt.warmup));
		const a = [];
		const b = [];
		const c = [];
		// What this node's calls alone crossed into the engine and asked of the store.
		const crossed = { engine: {}, store: {} };
		const add = (into, from) => {
			for (const [k, n] of Object.entries(from)) into[k] = (into[k] ?? 0) + n;
		};
		// Interleaved, so a busy moment of the machine falls on both.
		for (let k = 0; k < Number(opt.calls); k++) {
			a.push(...(await timed(plain, 1)));
			census.take();
			b.push(...(await timed(ours, 1)));
			const t = census.take();
			add(crossed.engine, t.engine);
			add(crossed.store, t.store);
			c.push(...(await timed(each, 1)));
		}
		const diff = median(b) - median(a);
		console.log(
			`${store.padEnd(8)} ${ms(median(a)).padEnd(18)} ${ms(median(b)).padEnd(11)} ${ms(diff).padEnd(21)} <= ${goal} ms ${diff <= goal ? 'met' : 'MISSED'}   +${ms(median(c) - median(a))}`,
		);
		crossings.push(
			`${store.padEnd(8)} store round trips ${perCall(crossed.store, Number(opt.calls))}; engine crossings ${perCall(crossed.engine, Number(opt.calls))}`,
		);
	}
	console.log(`\nper call of this node (the same ${opt.calls} calls):`);
	for (const line of crossings) console.log(line);

	const items = Number(opt.items);
	console.log(
		`\ndead Model 1 (always 500), ${items} calls in a row, breaker threshold 3, best of ${opt.runs}:`,
	);
	console.log('chain                               requests at Model 1   time to the last item');
	const rows = [
		['withFallbacks (Enable Fallback Model)', null],
		['this node, Fail Over First on', { failOverFirst: true }],
		['this node, Fail Over First off', { failOverFirst: false }],
	];
	const best = {};
	for (const [label, policy] of rows) {
		let fastest = Infinity;
		let dead = 0;
		for (let r = 0; r < Number(opt.runs); r++) {
			const tag = `dead-${uid()}`;
			vendors.script(`${tag}-1`, [500]);
			vendors.script(`${tag}-2`, ['ok']);
			const model = policy
				? await resilient([`${tag}-1`, `${tag}-2`], { retryPolicy: policy })
				: openai(`${tag}-1`).withFallbacks([openai(`${tag}-2`)]);
			const t = performance.now();
			await timed(model, items);
			fastest = Math.min(fastest, performance.now() - t);
			dead = vendors.accepted(`${tag}-1`);
		}
		best[label] = fastest;
		console.log(`${label.padEnd(36)} ${String(dead).padEnd(21)} ${ms(fastest)}`);
	}
	const ratio = best[rows[1][0]] / best[rows[0][0]];
	console.log(`Fail Over First on vs withFallbacks: ${ratio.toFixed(2)}x (goal <= 1.2x)`);
} finally {
	await vendors.close();
	execFileSync('bash', ['scripts/lib/services.sh', 'stop', services.dir], { stdio: 'inherit' });
	process.exit(0);
}
