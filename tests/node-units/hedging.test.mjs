// Hedged requests (issue 30) through the node's item loop and the WASM engine, against two real
// loopback HTTP servers: a slow first call gets a hedge to the next provider after the hedge
// delay, the hedge's answer serves the item, and the slow call's connection is closed (the server
// sees it go before it answered). A call that is not safe to repeat, and a provider whose Max In
// Flight is reached, get no hedge. The n8n lanes prove the same in real n8n (tests/e2e/hedging).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const { Engine } = require('../../dist/engine/engine.js');
const { runItem } = require('../../dist/lib/itemLoop.js');
const { MemoryStore } = require('../../dist/lib/store/memory.js');
const { FailoverStore } = require('../../dist/lib/store/failover.js');
const { Cancelled } = require('../../dist/lib/transport.js');

/** A vendor answering 200 after `delayMs(n)` for its n-th request; it notes requests whose
 * connection closed before the answer, and `closedEarly(n)` resolves once n have (a test waits
 * for the close it asserts on, failing after 10 s). */
function vendor(delayMs) {
	const seen = { requests: 0, closedEarly: 0 };
	const waiting = [];
	const server = http.createServer((req, res) => {
		const n = seen.requests++;
		const timer = setTimeout(() => res.end(JSON.stringify({ served: n })), delayMs(n));
		res.on('close', () => {
			if (!res.writableEnded) {
				seen.closedEarly++;
				clearTimeout(timer);
				for (const w of waiting.splice(0)) w();
			}
		});
	});
	const closedEarly = async (n) => {
		const deadline = Date.now() + 10_000;
		while (seen.closedEarly < n) {
			assert.ok(Date.now() < deadline, `${seen.closedEarly} of ${n} connections closed early`);
			await new Promise((r) => {
				waiting.push(r);
				setTimeout(r, 1_000).unref();
			});
		}
	};
	return { server, seen, closedEarly };
}

let slow, fast;
before(async () => {
	slow = vendor(() => 2_000);
	fast = vendor(() => 20);
	for (const v of [slow, fast]) await new Promise((r) => v.server.listen(0, '127.0.0.1', r));
});
after(() => {
	for (const v of [slow, fast]) v.server.close();
});

const url = (v) => `http://127.0.0.1:${v.server.address().port}/`;

/** A real HTTP attempt (as the node's transport: its deadline and the cancel signal abort it). */
async function call(req, _headers, deadlineMs, cancel) {
	const signal = AbortSignal.any([AbortSignal.timeout(deadlineMs), ...(cancel ? [cancel] : [])]);
	try {
		const res = await fetch(req.url, { method: req.method, signal });
		return {
			outcome: { kind: 'status', status: res.status, headers: {} },
			body: await res.json(),
			ms: 1,
		};
	} catch (error) {
		if (cancel?.aborted) throw new Cancelled();
		return {
			outcome: { kind: 'error', code: error.name === 'TimeoutError' ? 'TIMEOUT' : 'ECONNRESET' },
			ms: 1,
		};
	}
}

async function runOne(config, providers, tag) {
	const scope = `hedging-${tag}-${process.pid}`;
	const store = new FailoverStore(new MemoryStore(scope), scope, 1000, true);
	const quiet = { info() {}, warn() {}, error() {}, debug() {} };
	const requests = providers.map(([name, v, method = 'GET']) => ({ name, url: url(v), method }));
	const plan = {
		config: { providers: requests.map((r) => ({ name: r.name, method: r.method })), ...config },
		requests,
		keys: requests.map(() => null),
		scope,
	};
	const started = Date.now();
	const result = await runItem({
		call,
		logger: quiet,
		engine: new Engine(plan.config),
		store,
		plan,
		secrets: {},
		correlationId: tag,
	});
	return { result, ms: Date.now() - started };
}

const HEDGE = { hedge: 'fixed', hedge_delay_ms: 100 };

test("a slow call gets a hedge after the delay; the hedge's answer serves, the slow call's connection is closed", async () => {
	const before = { slow: { ...slow.seen }, fast: { ...fast.seen } };
	const { result, ms } = await runOne(
		HEDGE,
		[
			['slow', slow],
			['fast', fast],
		],
		'wins',
	);
	console.log(
		`hedged item: ${ms} ms, attempts ${JSON.stringify(result.attempts.map((a) => [a.name, a.outcome, !!a.hedge]))}`,
	);
	assert.equal(result.end.kind, 'done');
	assert.equal(result.end.name, 'fast');
	assert.deepEqual(result.body, { served: before.fast.requests });
	assert.ok(ms < 1_000, `served by the hedge in ${ms} ms, not after the slow call's 2 s`);
	assert.deepEqual(
		result.attempts.map((a) => [a.name, a.outcome, a.hedge === true]),
		[
			['fast', '200', true],
			['slow', 'abandoned', false],
		],
	);
	assert.equal(slow.seen.requests - before.slow.requests, 1);
	assert.equal(fast.seen.requests - before.fast.requests, 1);
	// Closed before it answered: the vendor sees the connection go (and no other).
	await slow.closedEarly(before.slow.closedEarly + 1);
	assert.equal(slow.seen.closedEarly - before.slow.closedEarly, 1, 'the loser was aborted');
	const [s, f] = result.counters;
	assert.deepEqual([s.calls, s.failures, f.calls, f.hedges, f.hedge_wins], [1, 0, 1, 1, 1]);
});

test('a fast answer needs no hedge', async () => {
	const before = slow.seen.requests;
	const { result } = await runOne(
		HEDGE,
		[
			['fast', fast],
			['slow', slow],
		],
		'fast',
	);
	assert.equal(result.end.name, 'fast');
	assert.equal(result.attempts.length, 1);
	assert.equal(slow.seen.requests, before, 'no hedge went out');
});

test('a POST without an Idempotency-Key is not hedged', async () => {
	const before = fast.seen.requests;
	const { result, ms } = await runOne(
		{ ...HEDGE, deadline_ms: 3_000 },
		[
			['slow', slow, 'POST'],
			['fast', fast, 'POST'],
		],
		'post',
	);
	assert.equal(result.end.name, 'slow');
	assert.ok(ms >= 1_900, `waited for the slow answer (${ms} ms)`);
	assert.equal(fast.seen.requests, before, 'no hedge went out');
});

test('with every Max In Flight reached no hedge is sent', async () => {
	const before = fast.seen.requests;
	// One slot each: the slow call holds the slow provider's; the fast one's is taken by a
	// concurrent item of the same store scope... here simply a cap of 1 on one provider chain.
	const { result } = await runOne(
		{ ...HEDGE, providers: [{ name: 'slow', max_in_flight: 1 }] },
		[['slow', slow]],
		'capped',
	);
	assert.equal(result.end.name, 'slow');
	assert.equal(result.attempts.length, 1, 'the only provider is at its cap: the hedge is skipped');
	assert.equal(fast.seen.requests, before);
});

/** A streamed attempt as the chat model's (lib/chat/streamAttempt.ts) runs it: its first text
 * after `firstChunkMs`, claimed before it reaches the caller (a lost claim hands nothing over). */
function streamedCall(firstChunkMs, delivered) {
	return (req, _headers, _deadlineMs, cancel, _stream, claim) =>
		new Promise((resolve, reject) => {
			const timer = setTimeout(() => {
				if (claim && !claim(firstChunkMs(req.name))) return reject(new Cancelled());
				delivered.push(req.name);
				resolve({ outcome: { kind: 'status', status: 200, headers: {} }, ms: 1 });
			}, firstChunkMs(req.name));
			cancel?.addEventListener('abort', () => {
				clearTimeout(timer);
				reject(new Cancelled());
			});
		});
}

test('a streamed call is hedged until a chunk commits: the first to commit reaches the caller, the other none', async () => {
	const requests = ['slow', 'fast'].map((name) => ({
		name,
		url: 'http://x.invalid',
		method: 'POST',
	}));
	const config = {
		providers: requests.map((r) => ({ name: r.name, idempotent: true })),
		streams: true,
		hedge: 'fixed',
		hedge_delay_ms: 100,
	};
	const scope = `hedging-stream-${process.pid}`;
	const delivered = [];
	const result = await runItem({
		call: streamedCall((name) => (name === 'slow' ? 1_000 : 20), delivered),
		logger: { info() {}, warn() {}, error() {}, debug() {} },
		engine: new Engine(config),
		store: new FailoverStore(new MemoryStore(scope), scope, 1000, true),
		plan: { config, requests, keys: [null, null], scope },
		secrets: {},
		correlationId: 'stream',
		streamed: true,
	});
	assert.equal(result.end.name, 'fast');
	assert.deepEqual(delivered, ['fast'], "only the hedge's chunks reached the caller");
	assert.deepEqual(
		result.attempts.map((a) => [a.name, a.outcome, a.hedge === true]),
		[
			['slow', 'abandoned', false],
			['fast', '200', true],
		],
		'the slow call was aborted when the hedge committed, before the hedge ended',
	);
});

test("a streamed call's time to its first chunk is its provider's sample, kept apart from answers' latency", async () => {
	const { providerState } = require('../../dist/lib/operations.js');
	const requests = [{ name: 'streamer', url: 'http://x.invalid', method: 'POST' }];
	const config = {
		providers: [{ name: 'streamer', idempotent: true }],
		streams: true,
		routing: 'latency',
	};
	const scope = `first-chunk-${process.pid}`;
	const memory = new MemoryStore(scope);
	const engine = new Engine(config);
	const plan = { config, requests, keys: [null], scope };
	// Its first text after 150 ms; the stream itself ends later (the fake resolves then).
	const result = await runItem({
		call: streamedCall(() => 150, []),
		logger: { info() {}, warn() {}, error() {}, debug() {} },
		engine,
		store: new FailoverStore(memory, scope, 1000, true),
		plan,
		secrets: {},
		correlationId: 'first-chunk',
		streamed: true,
	});
	assert.equal(result.end.kind, 'done');
	const [state] = await providerState(engine, memory, plan, 'memory');
	assert.equal(state.json.latency_p50_ms, null, "answers' lane: nothing");
	assert.equal(
		state.json.first_chunk_p50_ms,
		160,
		'the 150 ms first chunk, in its bucket (113..160 ms)',
	);
});
