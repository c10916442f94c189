// A broken stream's continuation, the node's part: the seam that cuts what the continuing model
// repeats (its last words, or the whole answer started over), the messages that ask it to go on
// (Anthropic's assistant prefix, or an instruction), and the streamed attempt that holds tool-call
// deltas whole and says how much of the answer the caller had when the stream broke.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { AIMessageChunk, HumanMessage } = require('@langchain/core/messages');
const { Seam, chunkText } = require('../../dist/lib/chat/seam.js');
const { Engine } = require('../../dist/engine/engine.js');
// The engine reads the seam (src/facts/seam.rs); the node holds and cuts the chunks.
const engine = new Engine({ providers: [{ name: 'a' }] });
const read = (h, n, e) => engine.seam(h, n, e);
const {
	continuationMessages,
	CONTINUE_INSTRUCTION,
} = require('../../dist/lib/chat/continuation.js');
const { streamAttempt } = require('../../dist/lib/chat/streamAttempt.js');

const chunk = (text) => new AIMessageChunk({ content: text });
/** What the caller reads when `had` is continued by `parts` through a seam. */
function joined(had, parts) {
	const seam = new Seam(had, read);
	const out = [...parts.flatMap((p) => seam.push(chunk(p))), ...seam.end()];
	return had + out.map(chunkText).join('');
}

test('the seam cuts the last words repeated, an answer started over, a doubled space; nothing else', () => {
	const had = 'The quick brown fox jumps over ';
	assert.equal(
		joined(had, ['fox jumps over ', 'the lazy dog, ', 'and then it sleeps for a long while.']),
		'The quick brown fox jumps over the lazy dog, and then it sleeps for a long while.',
	);
	assert.equal(
		joined(had, [
			'The quick brown ',
			'fox jumps over ',
			'the lazy dog and sleeps a long while now.',
		]),
		'The quick brown fox jumps over the lazy dog and sleeps a long while now.',
	);
	assert.equal(
		joined('Hello there ', [' world, it is a fine day to be streaming text.']),
		'Hello there world, it is a fine day to be streaming text.',
	);
	assert.equal(
		joined('It is', [' a sunny day; the forecast says so for the whole week.']),
		'It is a sunny day; the forecast says so for the whole week.',
	);
	assert.equal(
		engine.seam('so the ca', 'cat sat', true),
		0,
		'two letters may be the answer itself',
	);
	assert.equal(joined(had, ['The quick']), had, 'only its beginning again: nothing new');
});

test('the continuation asks Anthropic (thinking off) to go on from its prefix, any other model by an instruction', () => {
	const asked = [new HumanMessage('Tell me a story')];
	const anthropic = { _llmType: () => 'anthropic' };
	const prefixed = continuationMessages(asked, 'Once upon a time ', anthropic);
	assert.equal(prefixed.length, 2);
	assert.equal(prefixed[1].content, 'Once upon a time', 'no trailing whitespace in a prefix');
	const thinking = { _llmType: () => 'anthropic', thinking: { type: 'enabled' } };
	const openai = { _llmType: () => 'openai' };
	for (const m of [thinking, openai]) {
		const told = continuationMessages(asked, 'Once upon a time ', m);
		assert.equal(told.length, 3);
		assert.equal(told[1].content, 'Once upon a time ');
		assert.equal(told[2].content, CONTINUE_INSTRUCTION);
	}
});

/** A model whose stream yields `chunks`, then throws `error` if given. */
const model = (chunks, error) => ({
	async stream() {
		return (async function* () {
			yield* chunks;
			if (error) throw error;
		})();
	},
});

const run = (m, extra = {}) => {
	const delivered = [];
	const limits = { first_chunk_ms: 1_000, idle_ms: 1_000, total_ms: 5_000 };
	return streamAttempt({
		model: m,
		messages: [],
		options: {},
		limits,
		commits: (f) => f.text_chars > 0 || f.tool_call_chunks > 0,
		deliver: (c) => delivered.push(c),
		failed: () => {},
		...extra,
	}).then((r) => ({ ...r, delivered }));
};

test('a stream broken after text reached the caller says how much; its held tool-call delta never does', async () => {
	const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
	const tool = new AIMessageChunk({
		content: '',
		tool_call_chunks: [{ name: 'calc', args: '{"in', id: 't1', index: 0 }],
	});
	const answer = { text: '' };
	const r = await run(model([chunk('Let me '), chunk('compute. '), tool], reset), { answer });
	assert.equal(r.outcome.kind, 'broken');
	assert.equal(r.outcome.delivered_chars, 'Let me compute. '.length);
	assert.equal(answer.text, 'Let me compute. ');
	assert.ok(
		r.delivered.every((c) => !c.tool_call_chunks?.length),
		'half a tool call never reaches the caller',
	);

	// Only a tool call, broken inside it: nothing reached the caller, an ordinary failure.
	const only = await run(model([tool], reset));
	assert.notEqual(only.outcome.kind, 'broken');
	assert.equal(only.delivered.length, 0);

	// Whole: the tool call reaches the caller at the stream's end, after the text.
	const whole = await run(model([chunk('Computing. '), tool]));
	assert.equal(whole.delivered.length, 2);
	assert.equal(whole.delivered[1].tool_call_chunks.length, 1);
});

test("a continuation's chunks meet the answer at the seam and add to it", async () => {
	const answer = { text: 'The quick brown fox jumps over ' };
	const parts = ['jumps over ', 'the lazy dog ', 'while the sun sets slowly behind the hills.'];
	const r = await run(model(parts.map(chunk)), { answer, seam: new Seam(answer.text, read) });
	assert.equal(r.outcome.answered, true);
	assert.equal(
		answer.text,
		'The quick brown fox jumps over the lazy dog while the sun sets slowly behind the hills.',
	);
});

test('a model with tools bound is read through its binding', () => {
	const bound = { bound: { _llmType: () => 'anthropic' } };
	assert.equal(continuationMessages([], 'Hi ', bound).length, 1);
});
