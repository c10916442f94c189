// Answer Check's reading of an answer: the schema checked against the meta-schema before use,
// a fenced or bare JSON answer, the final-answer tool call's arguments, the validator's errors
// kept to the leaves. What a failed check means is the engine's (tests/vectors, src/verdict/outcome.rs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const { readSchema } = require('../../dist/lib/answerCheck/schema.js');
const { answerJson, finalAnswerArgs } = require('../../dist/lib/answerCheck/answerJson.js');
const { answerFacts } = require('../../dist/lib/answerCheck/facts.js');
const { responseFacts } = require('../../dist/lib/responseCheck.js');
const { presetAnswer } = require('../../dist/lib/presets/index.js');
const { Engine } = require('../../dist/engine/engine.js');

const BRIEF = {
	type: 'object',
	required: ['title', 'words'],
	additionalProperties: false,
	properties: {
		title: { type: 'string', minLength: 3 },
		words: { type: 'integer', minimum: 1 },
		author: { type: 'object', required: ['email'], properties: { email: { type: 'string' } } },
	},
};

test('a schema that is not JSON Schema is refused with what is wrong, before any item', () => {
	assert.throws(() => readSchema('{"type": 12}'), /not a valid JSON Schema/);
	assert.throws(
		() => readSchema({ type: 'object', properties: { a: { minimum: 'x' } } }),
		/\/properties\/a\/minimum/,
	);
	assert.throws(() => readSchema('{ nope'), /is not JSON/);
	assert.throws(() => readSchema('[1]'), /must be a JSON object/);
	assert.throws(() => readSchema({ $ref: '#/definitions/missing' }), /points nowhere/);
	assert.throws(
		() => readSchema({ type: 'object', properties: { a: { $ref: '#/$defs/missing' } } }),
		/"#\/\$defs\/missing" points nowhere/,
		'a nested $ref to nowhere, found before any answer reaches it',
	);
	assert.ok(
		readSchema({ $defs: { s: { type: 'string' } }, properties: { a: { $ref: '#/$defs/s' } } }),
	);
	assert.equal(readSchema(''), undefined, 'empty: no schema');
	assert.ok(readSchema(JSON.stringify(BRIEF)));
});

test('an answer off the schema gives each leaf error with its JSON pointer, none of the summaries', () => {
	const s = readSchema(BRIEF);
	assert.deepEqual(s.check({ title: 'Hello', words: 300 }), []);
	const errors = s.check({ title: 'Hi', words: 'many', author: {}, extra: 1 });
	const paths = errors.map((e) => e.path).sort();
	assert.deepEqual(paths, ['', '/author', '/title', '/words'], JSON.stringify(errors));
	assert.ok(
		errors.every((e) => !/does not match schema\.$/.test(e.message)),
		JSON.stringify(errors),
	);
});

test("a model's JSON is read fenced or bare; anything else is an error at the root", () => {
	assert.deepEqual(answerJson('```json\n{"a":1}\n```'), { ok: true, value: { a: 1 } });
	assert.deepEqual(answerJson('Here it is:\n```\n[1,2]\n```\nThanks'), { ok: true, value: [1, 2] });
	assert.deepEqual(answerJson(' {"a":2} '), { ok: true, value: { a: 2 } });
	const bad = answerJson('{"a":');
	assert.equal(bad.ok, false);
	assert.equal(bad.error.path, '');
	assert.match(bad.error.message, /^not JSON/);
	assert.deepEqual(finalAnswerArgs({ output: { a: 1 } }), { a: 1 }, 'output parser 1.3+');
	assert.deepEqual(finalAnswerArgs({ __structured__output: { a: 1 } }), { a: 1 }, 'parser 1');
	assert.deepEqual(finalAnswerArgs({ a: 1, b: 2 }), { a: 1, b: 2 });
});

test('the facts handed to the engine say what the answer was, not what to do', () => {
	const schema = readSchema(BRIEF);
	const good = answerFacts(
		{ text: '{"title":"Hello","words":3}', toolCalls: 0, finish: 'stop', refusal: false },
		schema,
	);
	assert.deepEqual(good.facts, {
		empty: false,
		finish: 'stop',
		refusal: false,
		schema_checked: true,
	});
	assert.deepEqual(good.parsed, { title: 'Hello', words: 3 });
	const empty = answerFacts({ text: '  ', toolCalls: 0, finish: 'stop', refusal: false });
	assert.equal(empty.facts.empty, true);
	const tool = answerFacts({ text: '', toolCalls: 1, finish: 'tool_calls', refusal: false });
	assert.equal(tool.facts.empty, false, 'a tool call is an answer');
});

test('Call Chain: a preset answer is checked only as its version and Answer Check say', () => {
	const req = { name: 'a', preset: 'openAiChat', requiredPath: '' };
	const body = (content, finish = 'stop', refusal) => ({
		choices: [{ message: { content, refusal }, finish_reason: finish }],
	});
	// Version 2.0 with nothing added: the preset's own check (empty_text), as before; the facts
	// go as they came, and the engine's switches (check_empty, check_finish off) leave them unread.
	const v20 = { checkFinish: false, checkEmpty: false };
	assert.equal(responseFacts(req, body(''), v20).failed_check, 'empty_text');
	assert.equal(responseFacts(req, body('cut', 'length'), v20).failed_check, undefined);
	assert.equal(responseFacts(req, body('cut', 'length'), v20).answer.finish, 'length');
	// Version 2.1: the engine checks empty answers itself; no preset check beside it.
	const v21 = { checkFinish: true, checkEmpty: true };
	assert.equal(responseFacts(req, body(''), v21).failed_check, undefined);
	assert.equal(responseFacts(req, body(''), v21).answer.empty, true);
	// Anthropic's and Gemini's words as they came (the engine reads them; the answer shows them
	// in the shared vocabulary).
	const anthropic = { content: [{ type: 'text', text: 'cut' }], stop_reason: 'max_tokens' };
	const claude = { ...req, preset: 'anthropicMessages' };
	assert.equal(responseFacts(claude, anthropic, v21).answer.finish, 'max_tokens');
	assert.equal(presetAnswer('anthropicMessages', anthropic, 'c').finish_reason, 'length');
	assert.equal(
		responseFacts(req, body('cut', 'length'), { checkFinish: true }).answer.finish,
		'length',
	);
	assert.equal(
		responseFacts(req, body(null, 'stop', 'I cannot help with that'), { checkFinish: true }).answer
			.refusal,
		true,
	);
	const schema = readSchema(BRIEF);
	const miss = responseFacts(req, body('{"title":"x"}'), { checkFinish: true, schema });
	assert.ok(miss.answer.schema_errors.length >= 2, JSON.stringify(miss));
	const fine = body('```json\n{"title":"Hello","words":2}\n```');
	assert.equal(
		responseFacts(req, fine, { checkFinish: true, schema }).answer.schema_errors,
		undefined,
	);
	assert.deepEqual(responseFacts(req, fine, { checkFinish: true, schema }).parsed, {
		title: 'Hello',
		words: 2,
	});
	// Any other provider: its body is the answer.
	const http = { name: 'h', requiredPath: '' };
	assert.equal(
		responseFacts(http, { title: 'Hello', words: 1 }, { schema }).answer.schema_errors,
		undefined,
	);
	assert.ok(responseFacts(http, '{"title":1}', { schema }).answer.schema_errors.length > 0);
	assert.deepEqual(responseFacts(http, { any: 1 }, { checkFinish: true }), {});
});

test("the repair round's turn: the model's answer, then the errors, in each preset's dialect", () => {
	const { repairBody, repairPrompt } = require('../../dist/lib/answerCheck/repair.js');
	const miss = { text: 'not json', errors: [{ path: '/title', message: 'is required' }] };
	const prompt = repairPrompt(miss.errors);
	assert.match(prompt, /- \/title: is required/);
	const openai = repairBody('openAiChat', { messages: [{ role: 'user', content: 'q' }] }, miss);
	assert.deepEqual(openai.messages.slice(1), [
		{ role: 'assistant', content: 'not json' },
		{ role: 'user', content: prompt },
	]);
	const gemini = repairBody('geminiGenerateContent', { contents: [{ role: 'user' }] }, miss);
	assert.deepEqual(gemini.contents[1], { role: 'model', parts: [{ text: 'not json' }] });
});

test('a check the chain does not keep is off in the engine, its facts handed over all the same', () => {
	const cut = { empty: false, finish: 'length', refusal: false };
	const empty = { empty: true, finish: 'stop', refusal: false };
	const engine = (extra) => new Engine({ providers: [{ name: 'a' }], ...extra });
	assert.equal(engine({}).answerFails(cut), 'cut');
	assert.equal(engine({ check_finish: false }).answerFails(cut), undefined);
	// Finish words off, an empty answer still fails (the chat model 1.1 with the option off).
	assert.equal(engine({ check_finish: false }).answerFails(empty), 'empty');
	assert.equal(engine({ check_finish: false, check_empty: false }).answerFails(empty), undefined);
});
