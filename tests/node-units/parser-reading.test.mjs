// The chat model's Answer Check under n8n's Structured Output Parser reads an answer as that
// parser will (answerCheck/parserReading.ts): n8n 2's fence lines, n8n 1's split on the first
// fence, the `output` wrapper required from version 1.3 (optional before, where a bare answer is
// handed on as an empty object), version 1's `__structured__output`, and the AI Agent wrapping a
// text answer that is JSON as it is. Each case is what n8n 2.41.1's or 1.123.81's parser does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const { parseAsParser, parserInput } = require('../../dist/lib/answerCheck/parserReading.js');

const n8n2 = { version: 1.3, fence: 'lines', rootWrapsText: false };
const n8n1 = { version: 1.3, fence: 'split', rootWrapsText: false };
const GOOD = { title: 'ok', score: 3 };
const wrapped = JSON.stringify({ output: GOOD });
const taken = (text, r) => {
	const p = parseAsParser(text, r);
	assert.ok(p.ok, `${JSON.stringify(text)}: ${p.error?.message}`);
	return p.value;
};
const rejected = (text, r) => {
	const p = parseAsParser(text, r);
	assert.equal(p.ok, false, `${JSON.stringify(text)} was taken`);
	return p.error.message;
};

test('version 1.3 requires the `output` wrapper: a bare answer is rejected, as the parser rejects it', () => {
	for (const r of [n8n2, n8n1]) {
		assert.deepEqual(taken(wrapped, r), GOOD);
		assert.match(rejected(JSON.stringify(GOOD), r), /no `output` wrapper/);
		assert.match(rejected('[1, 2]', r), /not a JSON object/);
		assert.match(rejected('Sure, a brief.', r), /^not JSON/);
	}
});

test('before 1.3 the wrapper is optional: a bare answer is handed on as an empty object', () => {
	for (const version of [1.1, 1.2]) {
		const r = { ...n8n2, version };
		assert.deepEqual(taken(JSON.stringify(GOOD), r), {});
		assert.deepEqual(taken(wrapped, r), GOOD);
	}
});

test('version 1 reads `__structured__output` and its object or array', () => {
	const r = { ...n8n2, version: 1 };
	const inner = { __structured__output: { __structured__output__object: GOOD } };
	assert.deepEqual(taken(JSON.stringify(inner), r), GOOD);
	const list = { __structured__output: { __structured__output__array: [GOOD] } };
	assert.deepEqual(taken(JSON.stringify(list), r), [GOOD]);
	assert.match(rejected(wrapped, r), /__structured__output/);
});

test("fences: prose around fence lines is taken on both majors; a fence inside one line only by n8n 1's parser", () => {
	const lines = `Here you go:\n\`\`\`json\n${wrapped}\n\`\`\`\nAnything else?`;
	assert.deepEqual(taken(lines, n8n2), GOOD);
	assert.deepEqual(taken(lines, n8n1), GOOD);
	const inline = `Here you go: \`\`\`json ${wrapped} \`\`\` enjoy`;
	assert.deepEqual(taken(inline, n8n1), GOOD);
	assert.match(rejected(inline, n8n2), /^not JSON/);
	// n8n 2 looks for `json` only in lower case, and n8n 1 too: `JSON` is left in the text.
	assert.match(rejected(`\`\`\`JSON\n${wrapped}\n\`\`\``, n8n2), /^not JSON/);
	assert.match(rejected(`\`\`\`JSON\n${wrapped}\n\`\`\``, n8n1), /^not JSON/);
});

test('under the AI Agent a text answer that is JSON as it is gets wrapped by the agent; a fenced one does not', () => {
	const agent = { ...n8n2, rootWrapsText: true };
	assert.deepEqual(taken(parserInput(JSON.stringify(GOOD), agent), agent), GOOD);
	assert.deepEqual(taken(parserInput(wrapped, agent), agent), GOOD);
	const fenced = `\`\`\`json\n${JSON.stringify(GOOD)}\n\`\`\``;
	assert.match(rejected(parserInput(fenced, agent), agent), /no `output` wrapper/);
	// Under a chain nothing wraps it.
	assert.equal(parserInput(JSON.stringify(GOOD), n8n2), JSON.stringify(GOOD));
});
