// LLM presets: each builds its vendor's request (auth left to n8n's credentials, added here as the
// credential would) and reads whichever vendor served into one answer shape.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { startLlmVendors } from '../support/llm-vendors.mjs';
const require = createRequire(import.meta.url);
const {
	presetRequest,
	presetAnswer,
	presetFailedCheck,
	EMPTY_TEXT_CHECK,
	PRESET_KINDS,
	PresetInputError,
	ANTHROPIC_DEFAULT_MAX_TOKENS,
} = require('../../dist/lib/presets/index.js');

const KEYS = { openai: 'sk-open', anthropic: 'sk-ant', gemini: 'g-key' };
let vendors;
before(async () => (vendors = await startLlmVendors(KEYS)));
after(() => vendors.close());

// What each n8n credential adds, and where each preset's base URL points on the loopback vendor.
const PRESETS = {
	openAiChat: {
		base: (id) => `${vendors.url(id)}/v1`,
		auth: { authorization: `Bearer ${KEYS.openai}` },
	},
	anthropicMessages: { base: (id) => vendors.url(id), auth: { 'x-api-key': KEYS.anthropic } },
	geminiGenerateContent: {
		base: (id) => vendors.url(id),
		auth: { 'x-goog-api-key': KEYS.gemini },
	},
};

const FIELDS = {
	model: 'm-1',
	systemPrompt: 'Be brief.',
	userMessage: 'Say hi',
	temperature: 0.2,
	maxTokens: 64,
};

async function send(req, auth) {
	const res = await fetch(req.url, {
		method: req.method,
		headers: { ...req.headers, ...auth },
		body: JSON.stringify(req.body),
	});
	return { status: res.status, body: await res.json() };
}

for (const kind of Object.keys(PRESETS)) {
	test(`${kind}: the vendor accepts the request with its auth and answers in the one shape`, async () => {
		const id = `ok-${kind}`;
		vendors.script(id, ['ok']);
		const req = presetRequest(kind, { ...FIELDS, baseUrl: PRESETS[kind].base(id) });
		assert.equal(req.method, 'POST');
		const res = await send(req, PRESETS[kind].auth);
		assert.equal(res.status, 200);
		assert.equal(vendors.accepted(id), 1);
		const answer = presetAnswer(kind, res.body, 'primary');
		assert.deepEqual(answer, {
			text: `${id} says hi`,
			provider: 'primary',
			model: 'm-1',
			usage: { input_tokens: 11, output_tokens: 7 },
			finish_reason: 'stop',
		});
		assert.equal(presetFailedCheck(answer), undefined);
	});

	test(`${kind}: without its auth the vendor refuses (the preset adds none itself)`, async () => {
		const id = `noauth-${kind}`;
		const req = presetRequest(kind, { ...FIELDS, baseUrl: PRESETS[kind].base(id) });
		const res = await send(req, {});
		assert.equal(res.status, 401);
		assert.equal(vendors.accepted(id), 0);
	});

	test(`${kind}: an empty text fails the default check as ${EMPTY_TEXT_CHECK}`, async () => {
		const id = `empty-${kind}`;
		vendors.script(id, ['empty']);
		const req = presetRequest(kind, { ...FIELDS, baseUrl: PRESETS[kind].base(id) });
		const res = await send(req, PRESETS[kind].auth);
		assert.equal(res.status, 200);
		const answer = presetAnswer(kind, res.body, 'primary');
		assert.equal(answer.text, '');
		assert.equal(presetFailedCheck(answer), 'empty_text');
	});

	test(`${kind}: odd bodies never throw; they read as no text`, () => {
		const odd = [
			undefined,
			null,
			'',
			'not json',
			42,
			[],
			{},
			{ choices: 'x', content: 5, candidates: [null] },
			{ choices: [{ message: null }], content: [null, 7], candidates: [{ content: { parts: 3 } }] },
			{ usage: { prompt_tokens: 'many', input_tokens: -1 }, usageMetadata: null },
		];
		for (const body of odd) {
			const a = presetAnswer(kind, body, 'p');
			assert.equal(a.text, '', JSON.stringify(body));
			assert.equal(a.provider, 'p');
			assert.deepEqual(a.usage, { input_tokens: null, output_tokens: null });
			assert.equal(presetFailedCheck(a), 'empty_text');
		}
	});
}

test('every preset kind is covered here', () => {
	assert.deepEqual([...PRESET_KINDS].sort(), Object.keys(PRESETS).sort());
});

test('empty base URL means the vendor public API, in its own path shape', () => {
	const f = { ...FIELDS, baseUrl: '' };
	assert.equal(presetRequest('openAiChat', f).url, 'https://api.openai.com/v1/chat/completions');
	assert.equal(presetRequest('anthropicMessages', f).url, 'https://api.anthropic.com/v1/messages');
	assert.equal(
		presetRequest('geminiGenerateContent', { ...f, model: 'models/gemini-2.0-flash' }).url,
		'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash:generateContent',
	);
	assert.equal(
		presetRequest('openAiChat', { ...f, baseUrl: 'https://api.groq.com/openai/v1/' }).url,
		'https://api.groq.com/openai/v1/chat/completions',
	);
});

test('bodies are in each vendor shape; optional fields are left out when not set', () => {
	const bare = { baseUrl: '', model: 'm', userMessage: 'u' };
	assert.deepEqual(presetRequest('openAiChat', bare).body, {
		model: 'm',
		messages: [{ role: 'user', content: 'u' }],
	});
	assert.deepEqual(presetRequest('openAiChat', { ...FIELDS, baseUrl: '' }).body, {
		model: 'm-1',
		messages: [
			{ role: 'system', content: 'Be brief.' },
			{ role: 'user', content: 'Say hi' },
		],
		temperature: 0.2,
		max_tokens: 64,
	});
	// OpenAI's reasoning models take max_completion_tokens; other vendors of the dialect max_tokens.
	assert.equal(
		presetRequest('openAiChat', { ...bare, model: 'o3-mini', maxTokens: 9 }).body
			.max_completion_tokens,
		9,
	);
	assert.equal(
		presetRequest('openAiChat', {
			...bare,
			baseUrl: 'http://127.0.0.1:11434/v1',
			model: 'o3-mini',
			maxTokens: 9,
		}).body.max_tokens,
		9,
	);
	const anthropic = presetRequest('anthropicMessages', bare);
	assert.equal(anthropic.headers['anthropic-version'], '2023-06-01');
	assert.deepEqual(anthropic.body, {
		model: 'm',
		max_tokens: ANTHROPIC_DEFAULT_MAX_TOKENS,
		messages: [{ role: 'user', content: 'u' }],
	});
	assert.deepEqual(presetRequest('anthropicMessages', { ...FIELDS, baseUrl: '' }).body, {
		model: 'm-1',
		max_tokens: 64,
		messages: [{ role: 'user', content: 'Say hi' }],
		system: 'Be brief.',
		temperature: 0.2,
	});
	assert.deepEqual(presetRequest('geminiGenerateContent', bare).body, {
		contents: [{ role: 'user', parts: [{ text: 'u' }] }],
	});
	assert.deepEqual(presetRequest('geminiGenerateContent', { ...FIELDS, baseUrl: '' }).body, {
		contents: [{ role: 'user', parts: [{ text: 'Say hi' }] }],
		systemInstruction: { parts: [{ text: 'Be brief.' }] },
		generationConfig: { temperature: 0.2, maxOutputTokens: 64 },
	});
	for (const kind of PRESET_KINDS) {
		const h = presetRequest(kind, bare).headers;
		for (const name of Object.keys(h))
			assert.ok(!/authorization|api-key|key/i.test(name), `${kind} sends no auth header: ${name}`);
	}
});

test('finish reasons read in one vocabulary; whitespace alone fails the check', () => {
	assert.equal(
		presetAnswer('anthropicMessages', { content: [], stop_reason: 'max_tokens' }, 'p')
			.finish_reason,
		'length',
	);
	assert.equal(
		presetAnswer('geminiGenerateContent', { candidates: [{ finishReason: 'SAFETY' }] }, 'p')
			.finish_reason,
		'content_filter',
	);
	const thinking = presetAnswer(
		'geminiGenerateContent',
		{ candidates: [{ content: { parts: [{ text: 'hmm', thought: true }, { text: 'hi' }] } }] },
		'p',
	);
	assert.equal(thinking.text, 'hi');
	const blank = presetAnswer('openAiChat', { choices: [{ message: { content: ' \n' } }] }, 'p');
	assert.equal(presetFailedCheck(blank), 'empty_text');
	const asText = presetAnswer(
		'openAiChat',
		JSON.stringify({ choices: [{ message: { content: 'x' } }] }),
		'p',
	);
	assert.equal(asText.text, 'x');
});

test('bad fields are refused, naming the field', () => {
	const ok = { baseUrl: '', model: 'm', userMessage: 'u' };
	const bad = [
		[{ ...ok, model: ' ' }, 'model'],
		[{ ...ok, userMessage: '' }, 'userMessage'],
		[{ ...ok, temperature: Number.NaN }, 'temperature'],
		[{ ...ok, maxTokens: 0 }, 'maxTokens'],
		[{ ...ok, maxTokens: 1.5 }, 'maxTokens'],
		[{ ...ok, baseUrl: 'api.openai.com' }, 'baseUrl'],
	];
	for (const kind of PRESET_KINDS)
		for (const [fields, field] of bad)
			assert.throws(
				() => presetRequest(kind, fields),
				(e) => e instanceof PresetInputError && e.field === field && e.message.startsWith(field),
			);
	assert.throws(() => presetRequest('custom', ok), /Unknown LLM preset kind "custom"/);
});
