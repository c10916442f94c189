// The facts the node hands the engine for token limits: the usage each vendor's answer reports,
// in one shape (OpenAI, Anthropic, Gemini, Ollama, LangChain's message and stream chunks), and
// a request's size (CJK apart) and output maximum. What they cost and settle is the engine's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { usageOf, addUsage } = require('../../dist/lib/tokens/usage.js');
const { bodyFacts, textFacts } = require('../../dist/lib/tokens/requestFacts.js');

test("each vendor's usage in one shape: output with its reasoning, cached input within input", () => {
	const openAi = {
		usage: {
			prompt_tokens: 120,
			completion_tokens: 30,
			prompt_tokens_details: { cached_tokens: 100 },
			completion_tokens_details: { reasoning_tokens: 10 },
		},
	};
	assert.deepEqual(usageOf(openAi), { input: 120, output: 30, cached_input: 100, reasoning: 10 });
	const anthropic = {
		usage: {
			input_tokens: 20,
			output_tokens: 7,
			cache_read_input_tokens: 100,
			cache_creation_input_tokens: 5,
		},
	};
	// Anthropic's cache write is input too, priced above plain input by the engine.
	assert.deepEqual(usageOf(anthropic), {
		input: 125,
		output: 7,
		cached_input: 100,
		cache_write: 5,
	});
	const cachedMessage = {
		usage_metadata: {
			input_tokens: 2100,
			output_tokens: 30,
			input_token_details: { cache_read: 1500, cache_creation: 500 },
		},
	};
	assert.deepEqual(usageOf(cachedMessage), {
		input: 2100,
		output: 30,
		cached_input: 1500,
		reasoning: 0,
		cache_write: 500,
	});
	const gemini = {
		usageMetadata: { promptTokenCount: 50, candidatesTokenCount: 20, thoughtsTokenCount: 15 },
	};
	assert.deepEqual(usageOf(gemini), { input: 50, output: 35, cached_input: 0, reasoning: 15 });
	assert.deepEqual(usageOf({ prompt_eval_count: 9, eval_count: 4 }), { input: 9, output: 4 });
	const message = { usage_metadata: { input_tokens: 11, output_tokens: 3, total_tokens: 14 } };
	assert.deepEqual(usageOf(message), { input: 11, output: 3, cached_input: 0, reasoning: 0 });
	assert.equal(usageOf({ choices: [] }), undefined, 'no usage reported');
	assert.equal(usageOf('text'), undefined);
	assert.equal(usageOf({ usage: { prompt_tokens: -1, completion_tokens: 2 } }), undefined);
});

test("a stream's usage is the sum of its chunks' (Anthropic reports input first, output last)", () => {
	const start = usageOf({ usage_metadata: { input_tokens: 40, output_tokens: 0 } });
	const end = usageOf({ usage_metadata: { input_tokens: 0, output_tokens: 25 } });
	assert.deepEqual(addUsage(addUsage(undefined, start), end), {
		input: 40,
		output: 25,
		cached_input: 0,
		reasoning: 0,
	});
	assert.equal(addUsage(undefined, undefined), undefined);
});

test("a request's size counts CJK characters apart, and its output maximum by each vendor's name", () => {
	assert.deepEqual(textFacts('héllo 世界'), { chars: 8, cjkChars: 2 });
	assert.equal(bodyFacts({ messages: [], max_tokens: 500 }).maxOutput, 500);
	assert.equal(bodyFacts({ generationConfig: { maxOutputTokens: 64 } }).maxOutput, 64);
	assert.equal(bodyFacts({ max_completion_tokens: 99 }).maxOutput, 99);
	assert.equal(bodyFacts({ messages: [] }).maxOutput, undefined, 'none asked: the reserve');
	const body = { messages: [{ role: 'user', content: 'x'.repeat(4000) }] };
	assert.equal(bodyFacts(body).chars, JSON.stringify(body).length);
});

test("a streamed answer's outcome carries the usage its chunks reported, summed", async () => {
	const { AIMessageChunk } = require('@langchain/core/messages');
	const { streamAttempt } = require('../../dist/lib/chat/streamAttempt.js');
	// Anthropic's way: the input in the first chunk, the output in the last.
	const chunks = [
		new AIMessageChunk({
			content: 'Hel',
			usage_metadata: { input_tokens: 40, output_tokens: 0, total_tokens: 40 },
		}),
		new AIMessageChunk({ content: 'lo' }),
		new AIMessageChunk({
			content: '',
			usage_metadata: { input_tokens: 0, output_tokens: 25, total_tokens: 25 },
		}),
	];
	const model = {
		async stream() {
			return (async function* () {
				yield* chunks;
			})();
		},
	};
	const delivered = [];
	const result = await streamAttempt({
		model,
		messages: [],
		options: {},
		limits: { first_chunk_ms: 1_000, idle_ms: 1_000, total_ms: 5_000 },
		commits: (f) => f.text_chars > 0,
		deliver: (c) => delivered.push(c),
		failed: () => {},
	});
	assert.deepEqual(result.outcome.usage, { input: 40, output: 25, cached_input: 0, reasoning: 0 });
	assert.equal(delivered.length, 3);
});
