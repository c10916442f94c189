// The Resilient Chat Model's Answer Check (version 1.1) in a real n8n, counted at loopback OpenAI
// vendors: under a Basic LLM Chain with n8n's Structured Output Parser, a model answering text
// that is not JSON is failed over and the parser gets valid JSON; under an AI Agent with a
// required output format, a final-answer tool call off the schema is failed over; a model
// answering empty text opens its breaker after its threshold. Schema misses are the workflow's:
// they never open the shared breaker.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { n8nInstall, n8nInstance, uid } from '../support/n8n.mjs';
import { openAiRefusal, startLlmVendors } from '../support/llm-vendors.mjs';
import {
	aiAgent,
	chatWorkflow,
	llmChain,
	openAiCredential,
	openAiModel,
	resilientOver,
} from '../support/chat-workflows.mjs';
import { installLikeN8n } from './clean-checkout.mjs';
import { packWorktree } from '../chat/support.mjs';

const major = Number(process.env.N8N_MAJOR ?? 2);
const KEYS = { openai: `sk-check-${uid()}`, anthropic: 'unused', gemini: 'unused' };
const ITEMS = 6;
const THRESHOLD = 3;
const BRIEF = {
	type: 'object',
	required: ['title', 'words'],
	properties: { title: { type: 'string', minLength: 3 }, words: { type: 'integer' } },
};
const GOOD = { title: 'A good brief', words: 120 };
let n8n, vendors;
const cred = {};
const built = {};

/** An OpenAI chat completion whose text is `content`. */
const says = (content) => ({
	status: 200,
	body: {
		id: 'chatcmpl-check',
		object: 'chat.completion',
		created: 1,
		model: 'gpt-4o-mini',
		choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
		usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
	},
});

const parser = (name, position) => ({
	id: name.replace(/\W/g, ''),
	name,
	type: '@n8n/n8n-nodes-langchain.outputParserStructured',
	typeVersion: 1.3,
	position,
	parameters: { schemaType: 'manual', inputSchema: JSON.stringify(BRIEF) },
});

function chatParameters(names, extra = {}) {
	return {
		numberInputs: names.length,
		providers: { provider: names.map((name) => ({ name })) },
		breaker: { threshold: THRESHOLD },
		...extra,
	};
}

/** A Resilient Chat Model 1.1 over two OpenAI models (vendors `a` and `b`) feeding `root`. */
function chatOver(root, a, b, x, extra) {
	const names = [`${a}-${uid()}`, `${b}-${uid()}`];
	const sub = resilientOver(`${root} model`, chatParameters(names, extra), [x, 200], root, [
		openAiModel(`${root} first`, cred[a], [x - 100, 400]),
		openAiModel(`${root} second`, cred[b], [x + 100, 400]),
	]);
	sub.nodes[0].typeVersion = 1.1;
	return { ...sub, names };
}

before(async () => {
	vendors = await startLlmVendors(KEYS);
	n8n = n8nInstance(n8nInstall(major), { extensions: null });
	installLikeN8n(packWorktree(), n8n.home);
	for (const id of [
		'notJson',
		'json',
		'empty',
		'backup',
		'offSchema',
		'onSchema',
		'mend',
		'spare',
		'policy',
		'other',
		'refuser',
		'answerer',
		'bare',
		'wrapped',
		'inline',
		'fenceBackup',
	])
		cred[id] = openAiCredential(vendors, id, KEYS.openai);
	n8n.importCredentials(Object.values(cred));
	const schema = { answerCheck: { jsonSchema: JSON.stringify(BRIEF) } };

	const chain = chatOver('Parsed chain', 'notJson', 'json', 700, schema);
	built.parsed = {
		names: chain.names,
		wf: chatWorkflow(`parsed${uid()}`, {
			items: ITEMS,
			roots: ['Parsed chain'],
			nodes: [
				llmChain('Parsed chain', [700, 0], { hasOutputParser: true }),
				parser('Parser', [900, 200]),
				...chain.nodes,
			],
			models: [...chain.models, ['Parser', 'Parsed chain', 0, 'ai_outputParser']],
		}),
	};
	const empty = chatOver('Empty chain', 'empty', 'backup', 700, {});
	built.empty = {
		names: empty.names,
		wf: chatWorkflow(`empty${uid()}`, {
			items: ITEMS * 2,
			roots: ['Empty chain'],
			nodes: [llmChain('Empty chain', [700, 0]), ...empty.nodes],
			models: empty.models,
		}),
	};
	const agent = chatOver('Agent', 'offSchema', 'onSchema', 700, schema);
	const agentNode = aiAgent('Agent', [700, 0], major);
	agentNode.parameters.hasOutputParser = true;
	built.agent = {
		names: agent.names,
		wf: chatWorkflow(`agentcheck${uid()}`, {
			items: [{ q: 'Write a brief.' }],
			roots: ['Agent'],
			nodes: [agentNode, parser('Agent parser', [900, 200]), ...agent.nodes],
			models: [...agent.models, ['Agent parser', 'Agent', 0, 'ai_outputParser']],
		}),
	};
	const repair = chatOver('Repair chain', 'mend', 'spare', 700, {
		answerCheck: { jsonSchema: JSON.stringify(BRIEF), repairRound: true },
	});
	built.repair = {
		names: repair.names,
		wf: chatWorkflow(`repair${uid()}`, {
			items: 1,
			roots: ['Repair chain'],
			nodes: [
				llmChain('Repair chain', [700, 0], { hasOutputParser: true }),
				parser('Repair parser', [900, 200]),
				...repair.nodes,
			],
			models: [...repair.models, ['Repair parser', 'Repair chain', 0, 'ai_outputParser']],
		}),
	};
	const policy = chatOver('Policy chain', 'policy', 'other', 700, {});
	built.policy = {
		names: policy.names,
		wf: chatWorkflow(`policy${uid()}`, {
			items: ITEMS,
			roots: ['Policy chain'],
			nodes: [llmChain('Policy chain', [700, 0]), ...policy.nodes],
			models: policy.models,
		}),
	};
	const refusal = chatOver('Refusal chain', 'refuser', 'answerer', 700, {});
	built.refusal = {
		names: refusal.names,
		wf: chatWorkflow(`refusal${uid()}`, {
			items: ITEMS,
			roots: ['Refusal chain'],
			nodes: [llmChain('Refusal chain', [700, 0]), ...refusal.nodes],
			models: refusal.models,
		}),
	};
	// Basic LLM Chains with the Structured Output Parser 1.3 and the same schema on the check.
	for (const [key, first, second] of [
		['bare', 'bare', 'wrapped'],
		['inline', 'inline', 'fenceBackup'],
	]) {
		const root = `${key} parsed chain`;
		const sub = chatOver(root, first, second, 700, schema);
		built[key] = {
			names: sub.names,
			wf: chatWorkflow(`${key}${uid()}`, {
				items: ITEMS,
				roots: [root],
				nodes: [
					llmChain(root, [700, 0], { hasOutputParser: true }),
					parser(`${key} parser`, [900, 200]),
					...sub.nodes,
				],
				models: [...sub.models, [`${key} parser`, root, 0, 'ai_outputParser']],
			}),
		};
	}
	n8n.importWorkflow(Object.values(built).map((b) => b.wf));
});
after(async () => vendors?.close());

const rootItems = (run, name) => run.data.resultData.runData[name][0].data.main[0] ?? [];
const modelRuns = (run, name) =>
	(run.data.resultData.runData[name] ?? []).map((r) => r.data?.ai_languageModel?.[0]?.[0]?.json);

test('Basic LLM Chain + Structured Output Parser: a model answering text that is not JSON is failed over, the parser gets valid JSON, and its breaker stays closed', async () => {
	vendors.script('notJson', [says('Sure, here is your brief: a good one.')]);
	vendors.script('json', [says('```json\n' + JSON.stringify({ output: GOOD }) + '\n```')]);
	const { run, log } = await n8n.execute(built.parsed.wf.id);
	assert.ok(run, log.slice(-3000));
	const items = rootItems(run, 'Parsed chain');
	assert.equal(items.length, ITEMS, JSON.stringify(items[0]?.json ?? null).slice(0, 600));
	for (const i of items) assert.deepEqual(i.json.output, GOOD);
	// Not the provider's fault: every item asked it, none was refused by an open breaker.
	assert.equal(vendors.accepted('notJson'), ITEMS);
	assert.equal(vendors.accepted('json'), ITEMS);
	const entries = modelRuns(run, 'Parsed chain model');
	assert.ok(entries.every((e) => e.provider === built.parsed.names[1] && e.fallback));
	const first = entries[0].attempts[0];
	assert.equal(first.check, 'schema');
	assert.equal(first.health, 'neutral');
	assert.match(first.errors[0].message, /^not JSON/);
	assert.deepEqual(entries[0].checks, ['not_empty', 'not_cut', 'not_refused', 'schema']);
});

test('a model answering empty text opens its breaker after its threshold (version 1.1 checks it by default)', async () => {
	vendors.script('empty', ['empty']);
	vendors.script('backup', ['ok']);
	const { run, log } = await n8n.execute(built.empty.wf.id);
	assert.ok(run, log.slice(-3000));
	const items = rootItems(run, 'Empty chain');
	assert.equal(items.length, ITEMS * 2);
	for (const i of items) assert.equal(i.json.text, 'backup says hi');
	console.log(`n8n ${major}: empty model got ${vendors.accepted('empty')} of ${ITEMS * 2} calls`);
	assert.equal(vendors.accepted('empty'), THRESHOLD);
});

test("AI Agent with a required output format: a final-answer tool call off the schema is failed over; the agent's parser gets the valid one", async () => {
	vendors.script('offSchema', [
		{ tool: 'format_final_json_response', args: { output: { title: 'x', words: 'many' } } },
	]);
	vendors.script('onSchema', [{ tool: 'format_final_json_response', args: { output: GOOD } }]);
	const { run, log } = await n8n.execute(built.agent.wf.id);
	assert.ok(run, log.slice(-3000));
	const [item] = rootItems(run, 'Agent');
	assert.deepEqual(item?.json.output, GOOD, JSON.stringify(item?.json ?? null).slice(0, 600));
	const [entry] = modelRuns(run, 'Agent model');
	assert.equal(entry.provider, built.agent.names[1]);
	const miss = entry.attempts.find((a) => a.check === 'schema');
	assert.ok(miss, JSON.stringify(entry.attempts));
	assert.deepEqual(miss.errors.map((e) => e.path).sort(), ['/title', '/words']);
});

test('Repair Round: the model that answered off the schema is asked once more with its answer and the errors, and its second answer reaches the parser', async () => {
	vendors.script('mend', [
		says('Here you go: title A good brief'),
		says('```json\n' + JSON.stringify({ output: GOOD }) + '\n```'),
	]);
	vendors.script('spare', ['ok']);
	const { run, log } = await n8n.execute(built.repair.wf.id);
	assert.ok(run, log.slice(-3000));
	const [item] = rootItems(run, 'Repair chain');
	assert.deepEqual(item?.json.output, GOOD, JSON.stringify(item?.json ?? null).slice(0, 600));
	const calls = vendors.arrivals.filter((a) => a.id === 'mend');
	assert.equal(calls.length, 2);
	const [assistant, user] = calls[1].body.messages.slice(-2);
	assert.deepEqual(assistant, { role: 'assistant', content: 'Here you go: title A good brief' });
	assert.match(user.content, /does not satisfy the required JSON Schema/);
	assert.equal(vendors.accepted('spare'), 0);
	const [entry] = modelRuns(run, 'Repair chain model');
	assert.equal(entry.provider, built.repair.names[0]);
	assert.equal(entry.fallback, false);
});

test('a content-policy 400 moves the call to the next model, every time, never counted against the model (no breaker opens)', async () => {
	vendors.script('policy', [
		{
			status: 400,
			body: {
				error: {
					message: 'Your request was rejected as a result of our safety system.',
					type: 'invalid_request_error',
					code: 'content_policy_violation',
				},
			},
		},
	]);
	vendors.script('other', ['ok']);
	const { run, log } = await n8n.execute(built.policy.wf.id);
	assert.ok(run, log.slice(-3000));
	const items = rootItems(run, 'Policy chain');
	assert.equal(items.length, ITEMS);
	for (const i of items) assert.equal(i.json.text, 'other says hi');
	// A 400 the chain would end on (a bad request) moves on as content policy; every item asks the
	// model again: nothing counted against it, so its breaker (threshold 3) never opens.
	assert.equal(vendors.accepted('policy'), ITEMS);
	const [entry] = modelRuns(run, 'Policy chain model');
	assert.equal(entry.attempts[0].check, 'content_policy');
	assert.equal(entry.attempts[0].health, 'neutral');
});

test('a model refusing over Chat Completions (content null, its words under `refusal`) is content_policy: asked every time, never counted, the next model answers', async () => {
	vendors.script('refuser', [openAiRefusal("I'm sorry, I can't help with that.")]);
	vendors.script('answerer', ['ok']);
	const { run, log } = await n8n.execute(built.refusal.wf.id);
	assert.ok(run, log.slice(-3000));
	const items = rootItems(run, 'Refusal chain');
	assert.equal(items.length, ITEMS);
	for (const i of items) assert.equal(i.json.text, 'answerer says hi');
	// Never counted against the model: its breaker (threshold 3) stays closed, every item asks it.
	assert.equal(vendors.accepted('refuser'), ITEMS);
	for (const entry of modelRuns(run, 'Refusal chain model')) {
		assert.equal(entry.provider, built.refusal.names[1]);
		assert.deepEqual(
			[entry.attempts[0].outcome, entry.attempts[0].health],
			['check_failed:content_policy', 'neutral'],
		);
		assert.ok(!entry.transitions.length, JSON.stringify(entry.transitions));
		// It waits for nothing: no `until` on the skip.
		for (const s of entry.skipped) assert.equal(s.until, undefined, JSON.stringify(s));
	}
});

test('Structured Output Parser 1.3: a model answering bare JSON (no `output` wrapper, which the parser requires) is failed over and the parser gets what it takes', async () => {
	vendors.script('bare', [says(JSON.stringify(GOOD))]);
	vendors.script('wrapped', [says(JSON.stringify({ output: GOOD }))]);
	const { run, log } = await n8n.execute(built.bare.wf.id);
	assert.ok(run, log.slice(-3000));
	const items = rootItems(run, 'bare parsed chain');
	assert.equal(items.length, ITEMS, JSON.stringify(items[0]?.json ?? null).slice(0, 600));
	for (const i of items) assert.deepEqual(i.json.output, GOOD);
	assert.equal(vendors.accepted('bare'), ITEMS, 'a miss of the workflow: its breaker stays closed');
	const [entry] = modelRuns(run, 'bare parsed chain model');
	assert.equal(entry.provider, built.bare.names[1]);
	assert.equal(entry.attempts[0].check, 'schema');
	assert.match(entry.attempts[0].errors[0].message, /no `output` wrapper/);
});

test("a fence inside one line (prose, the fence, the wrapped JSON, the fence, prose) is taken exactly where that major's parser takes it (n8n 1's, not n8n 2's)", async () => {
	vendors.script('inline', [
		says('Here you go: ```json ' + JSON.stringify({ output: GOOD }) + ' ``` enjoy'),
	]);
	vendors.script('fenceBackup', [says(JSON.stringify({ output: GOOD }))]);
	const { run, log } = await n8n.execute(built.inline.wf.id);
	assert.ok(run, log.slice(-3000));
	const items = rootItems(run, 'inline parsed chain');
	assert.equal(items.length, ITEMS, JSON.stringify(items[0]?.json ?? null).slice(0, 600));
	for (const i of items) assert.deepEqual(i.json.output, GOOD);
	const backup = vendors.accepted('fenceBackup');
	console.log(
		`n8n ${major}: the one-line fence went to the next model ${backup} of ${ITEMS} times`,
	);
	assert.equal(backup, major >= 2 ? ITEMS : 0);
	assert.equal(vendors.accepted('inline'), ITEMS);
});
