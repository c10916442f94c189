// A vendor's "context too long" 400 reaches the engine through the item loop: the loop offers the
// body's start, the engine reads it only for a 400 (and a 429's or 503's hint; a success body is
// never serialised), and the engine alone decides: fail the item with context_too_long, or move on
// when the chain says so.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { geminiQuotaError } from '../support/llm-vendors.mjs';
const require = createRequire(import.meta.url);
const { Engine } = require('../../dist/engine/engine.js');
const { runItem } = require('../../dist/lib/itemLoop.js');
const { MemoryStore } = require('../../dist/lib/store/memory.js');
const { FailoverStore } = require('../../dist/lib/store/failover.js');
const { bodyExcerpt } = require('../../dist/lib/transport.js');
const { BODY_LIMIT: BODY_EXCERPT_CHARS } = require('../../dist/lib/engineConstants.js');

const quiet = { info() {}, warn() {}, error() {}, debug() {} };

// Anthropic's answer to an over-long prompt, as the loopback vendor (tests/support/llm-vendors.mjs) sends it.
const ANTHROPIC_TOO_LONG = {
	type: 'error',
	error: {
		type: 'invalid_request_error',
		message: 'prompt is too long: 210000 tokens > 200000 maximum',
	},
};

/** A body that counts how often it is serialised. */
function watched(value, seen) {
	return { ...value, toJSON: () => (seen.n++, value) };
}

async function run(config, answers) {
	const names = config.providers.map((p) => p.name);
	const scope = `ctl-${process.pid}-${Math.random()}`;
	const called = [];
	const r = await runItem({
		call: async (req) => {
			called.push(req.name);
			const { status, body } = answers[req.name];
			return { outcome: { kind: 'status', status, headers: {} }, body, ms: 1 };
		},
		logger: quiet,
		engine: new Engine(config),
		store: new FailoverStore(new MemoryStore(scope), scope, 1000, true),
		plan: {
			requests: names.map((name) => ({ name, url: `http://127.0.0.1/${name}`, method: 'POST' })),
			keys: names.map(() => null),
			scope,
		},
		secrets: {},
		correlationId: 'c',
	});
	return { r, called };
}

test('option off: the item fails context_too_long, the next provider is never called', async () => {
	const seen = { n: 0 };
	const { r, called } = await run(
		{ providers: [{ name: 'small' }, { name: 'large' }] },
		{
			small: { status: 400, body: watched(ANTHROPIC_TOO_LONG, seen) },
			large: { status: 200, body: { ok: true } },
		},
	);
	assert.deepEqual(r.end, { kind: 'fail', reason: 'context_too_long' });
	assert.deepEqual(called, ['small']);
	assert.equal(r.counters[0].failures, 0, 'never counted against the provider');
	assert.equal(seen.n, 1, "the 400's body was read once");
});

test('option on: the chain moves on; a success body is never serialised for the engine', async () => {
	const seen = { n: 0 };
	const { r, called } = await run(
		{ providers: [{ name: 'small' }, { name: 'large' }], next_provider_when_input_too_long: true },
		{
			small: { status: 400, body: JSON.stringify(ANTHROPIC_TOO_LONG) },
			large: { status: 200, body: watched({ text: 'hi' }, seen) },
		},
	);
	assert.equal(r.end.kind, 'done');
	assert.equal(r.end.name, 'large');
	assert.deepEqual(called, ['small', 'large']);
	assert.equal(seen.n, 0);
});

test('any other 400 keeps its rule: the chain moves on even with the option off', async () => {
	const { r, called } = await run(
		{ providers: [{ name: 'a' }, { name: 'b' }] },
		{
			a: { status: 400, body: { error: { message: "Invalid model 'x'" } } },
			b: { status: 200, body: {} },
		},
	);
	assert.equal(r.end.kind, 'done');
	assert.deepEqual(called, ['a', 'b']);
});

test('the excerpt is text, at most 4 KB, from any body the transport returns', () => {
	assert.equal(bodyExcerpt(undefined), '');
	assert.equal(bodyExcerpt('abc'), 'abc');
	assert.equal(bodyExcerpt(Buffer.from('{"a":1}')), '{"a":1}');
	assert.equal(bodyExcerpt({ a: 1 }), '{"a":1}');
	assert.equal(bodyExcerpt('x'.repeat(10_000)).length, BODY_EXCERPT_CHARS);
	const cyclic = {};
	cyclic.self = cyclic;
	assert.equal(bodyExcerpt(cyclic), '');
});

// Gemini's 429 carries its hint in the body only (google.rpc.RetryInfo, its shape trimmed): the
// loop offers a 429's body too, and the engine waits it.
const GEMINI_429 = geminiQuotaError('0.25s');

test("a 429's body is read for Gemini's retryDelay, and the item waits it", async () => {
	const seen = { n: 0 };
	let first = true;
	const scope = `ctl-${process.pid}-${Math.random()}`;
	const calledAt = [];
	const r = await runItem({
		call: async () => {
			calledAt.push(Date.now());
			const answer = first
				? { status: 429, body: watched(GEMINI_429, seen) }
				: { status: 200, body: { ok: true } };
			first = false;
			return {
				outcome: { kind: 'status', status: answer.status, headers: {} },
				body: answer.body,
				ms: 1,
			};
		},
		logger: quiet,
		engine: new Engine({ providers: [{ name: 'gemini' }] }),
		store: new FailoverStore(new MemoryStore(scope), scope, 1000, true),
		plan: {
			requests: [{ name: 'gemini', url: 'http://127.0.0.1/gemini', method: 'POST' }],
			keys: [null],
			scope,
		},
		secrets: {},
		correlationId: 'c',
	});
	assert.equal(r.end.kind, 'done');
	assert.equal(seen.n, 1, "the 429's body was read once");
	assert.equal(r.attempts[0].wait_ms, 250);
	assert.equal(r.attempts[0].wait_cause, 'retry_after');
	assert.equal(r.attempts[0].retry_after, true);
	assert.ok(calledAt[1] - calledAt[0] >= 240, `waited ${calledAt[1] - calledAt[0]} ms`);
});
