// A refusal over Chat Completions with the real LangChain clients of n8n's install (ChatOpenAI
// with the Responses API off, AzureChatOpenAI), answered and streamed: LangChain's converters
// drop OpenAI's `refusal`, so without the node the answer reads as empty text (a model fault);
// taken over by the node, the refusal reaches the engine, which reads it as content_policy (never
// counted against the model). The Responses API path kept it already and still does.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { createRequire } from 'node:module';
import { n8nInstall, ROOT } from '../support/n8n.mjs';
import { openAiRefusal, startLlmVendors } from '../support/llm-vendors.mjs';
import { n8nRequire } from './support.mjs';
import { readAs } from '../node-units/engine-reading.mjs';

const major = Number(process.env.N8N_MAJOR ?? 2);
const KEYS = { openai: 'sk-refuse', anthropic: 'unused', gemini: 'unused' };
const WORDS = "I'm sorry, but I can't help with that.";
let vendors, req, takeOver, chatAnswerParts, answerFacts;

before(async () => {
	req = n8nRequire(n8nInstall(major));
	const dist = createRequire(import.meta.url);
	({ takeOver } = dist(path.join(ROOT, 'dist/lib/chat/takeOver.js')));
	({ chatAnswerParts } = dist(path.join(ROOT, 'dist/lib/chat/answerParts.js')));
	({ answerFacts } = dist(path.join(ROOT, 'dist/lib/answerCheck/facts.js')));
	vendors = await startLlmVendors(KEYS);
});
after(async () => vendors?.close());

/** OpenAI's answer to a prompt it refuses: no content, its words under `refusal`. */
const refused = openAiRefusal(WORDS);
const streamedRefusal = { stream: { refusal: ["I'm sorry, but ", "I can't help ", 'with that.'] } };

const clients = {
	openai: (id) =>
		new (req('@langchain/openai').ChatOpenAI)({
			apiKey: KEYS.openai,
			model: 'gpt-4o-mini',
			maxRetries: 0,
			configuration: { baseURL: `${vendors.url(id)}/v1` },
		}),
	azure: (id) =>
		new (req('@langchain/openai').AzureChatOpenAI)({
			azureOpenAIApiKey: KEYS.openai,
			azureOpenAIApiDeploymentName: 'gpt-4o-mini',
			azureOpenAIApiVersion: '2024-10-21',
			azureOpenAIBasePath: `${vendors.url(id)}/openai/deployments`,
			maxRetries: 0,
		}),
};

/** The model's answer, invoked or streamed (the chunks merged as the node merges them). */
async function answer(model, streamed) {
	if (!streamed) return model.invoke('Tell me something I should not know.');
	let whole;
	for await (const chunk of await model.stream('Tell me something I should not know.'))
		whole = whole ? whole.concat(chunk) : chunk;
	return whole;
}

/** What the engine reads the answer as: the check it fails and the model's health. */
const engineReading = (message) =>
	readAs({ kind: 'facts', answered: true, answer: answerFacts(chatAnswerParts(message)).facts });

for (const [name, make] of Object.entries(clients))
	for (const streamed of [false, true])
		test(`${name}, Chat Completions ${streamed ? 'streamed' : 'answered'}: the refusal reaches the engine as content_policy, never counted`, async (t) => {
			const id = `${name}-${streamed ? 's' : 'a'}`;
			vendors.script(id, [streamed ? streamedRefusal : refused]);
			// Without the node: LangChain drops the refusal; the answer reads as empty text.
			const plain = await answer(make(id), streamed);
			assert.equal(chatAnswerParts(plain).refusal, false, 'LangChain kept the refusal itself');
			const before = engineReading(plain);
			assert.deepEqual([before.outcome, before.health], ['check_failed:empty', 'failure']);
			// Taken over by the node: the vendor's words, the engine's content_policy, neutral.
			const message = await answer(takeOver(make(id)), streamed);
			assert.equal(message.additional_kwargs.refusal, WORDS);
			const after = engineReading(message);
			assert.deepEqual([after.outcome, after.health], ['check_failed:content_policy', 'neutral']);
			assert.equal(after.retried, false, 'the same model is not asked again');
			// Routed as n8n's own chat-model nodes route it (Azure's deployment path included).
			assert.ok(vendors.arrivals.filter((a) => a.id === id).every((a) => a.accepted));
			t.diagnostic(`n8n ${major}: ${name} ${streamed ? 'streamed' : 'answered'} refusal read`);
		});
