// The presets and the engine's context rule together: a chain OpenAI → Anthropic → Gemini over
// the loopback vendors, through the node's item loop. Each vendor's own "too long" 400 is
// recognised by the engine; whichever vendor serves, the answer has one shape.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { startLlmVendors } from '../support/llm-vendors.mjs';
const require = createRequire(import.meta.url);
const { Engine } = require('../../dist/engine/engine.js');
const { runItem } = require('../../dist/lib/itemLoop.js');
const { MemoryStore } = require('../../dist/lib/store/memory.js');
const { FailoverStore } = require('../../dist/lib/store/failover.js');
const { presetRequest, presetAnswer } = require('../../dist/lib/presets/index.js');

const KEYS = { openai: 'sk-o', anthropic: 'sk-a', gemini: 'g-k' };
const quiet = { info() {}, warn() {}, error() {}, debug() {} };
let vendors;
before(async () => (vendors = await startLlmVendors(KEYS)));
after(() => vendors.close());

/** Chain entries: provider name, preset kind, base URL suffix, auth a credential would add. */
const CHAIN = [
	['gpt', 'openAiChat', '/v1', { authorization: `Bearer ${KEYS.openai}` }],
	['claude', 'anthropicMessages', '', { 'x-api-key': KEYS.anthropic }],
	['gemini', 'geminiGenerateContent', '', { 'x-goog-api-key': KEYS.gemini }],
];

async function runChain(tag, extraConfig, chain = CHAIN) {
	const requests = chain.map(([name, kind, suffix, auth]) => ({
		name,
		kind,
		method: 'POST',
		auth,
		...presetRequest(kind, {
			baseUrl: `${vendors.url(`${tag}-${name}`)}${suffix}`,
			model: `${name}-model`,
			userMessage: 'a very long prompt',
		}),
	}));
	const scope = `preset-chain-${tag}-${process.pid}`;
	const r = await runItem({
		call: async (req) => {
			const res = await fetch(req.url, {
				method: req.method,
				headers: { ...req.headers, ...req.auth },
				body: JSON.stringify(req.body),
			});
			return {
				outcome: { kind: 'status', status: res.status, headers: {} },
				body: await res.json(),
				ms: 1,
			};
		},
		logger: quiet,
		engine: new Engine({ providers: chain.map(([name]) => ({ name })), ...extraConfig }),
		store: new FailoverStore(new MemoryStore(scope), scope, 1000, true),
		plan: { requests, keys: requests.map(() => null), scope },
		secrets: {},
		correlationId: tag,
	});
	return { r, requests };
}

test('option on: OpenAI and Anthropic say "too long" in their words, Gemini serves in the one shape', async () => {
	vendors.script('on-gpt', ['too_long']);
	vendors.script('on-claude', ['too_long']);
	vendors.script('on-gemini', ['ok']);
	const { r, requests } = await runChain('on', { next_provider_when_input_too_long: true });
	assert.equal(r.end.kind, 'done');
	assert.equal(r.end.name, 'gemini');
	assert.deepEqual(
		['gpt', 'claude', 'gemini'].map((n) => vendors.accepted(`on-${n}`)),
		[1, 1, 1],
		'each too-long answer is not repeated on its provider',
	);
	assert.deepEqual(presetAnswer(requests[r.end.provider].kind, r.body, r.end.name), {
		text: 'on-gemini says hi',
		provider: 'gemini',
		model: 'gemini-model',
		usage: { input_tokens: 11, output_tokens: 7 },
		finish_reason: 'stop',
	});
	assert.deepEqual(
		r.counters.map((c) => c.failures),
		[0, 0, 0],
	);
});

test('option off: the first "too long" ends the item with context_too_long', async () => {
	vendors.script('off-gpt', ['too_long']);
	const { r } = await runChain('off', {});
	assert.deepEqual(r.end, { kind: 'fail', reason: 'context_too_long' });
	assert.deepEqual(
		['gpt', 'claude', 'gemini'].map((n) => vendors.accepted(`off-${n}`)),
		[1, 0, 0],
	);
});

test('each vendor wording alone ends the item (Anthropic, Gemini first in the chain)', async () => {
	for (const first of ['claude', 'gemini']) {
		const tag = `solo-${first}`;
		vendors.script(`${tag}-${first}`, ['too_long']);
		const { r } = await runChain(tag, {}, [CHAIN.find(([n]) => n === first)]);
		assert.deepEqual(r.end, { kind: 'fail', reason: 'context_too_long' }, first);
		assert.equal(vendors.accepted(`${tag}-${first}`), 1);
	}
});
