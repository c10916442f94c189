// README's AI Agent example (n8n-node/examples/resilient-chat-model-agent.json) in real n8n
// (N8N_MAJOR=2: 2.41.1; 1: 1.123.81), the package installed as n8n's community installer does,
// its OpenAI and Anthropic credentials on the loopback vendors. The story it is built for, whole:
// round one finds both vendors rate-limited (429, Retry-After: 3 s), every model cools, the
// agent's call fails at once with retry_at and leaves on the agent's error output; the Wait node
// holds it until retry_at and sends the question back; in round two OpenAI answers the first turn
// with a Calculator call and fails the second, and Anthropic finishes the conversation with the
// tool's result.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { n8nInstall, n8nInstance, ROOT, uid } from '../support/n8n.mjs';
import { startLlmVendors } from '../support/llm-vendors.mjs';
import { anthropicCredential, openAiCredential } from '../support/chat-workflows.mjs';
import { installLikeN8n } from './clean-checkout.mjs';
import { packWorktree } from '../chat/support.mjs';

const major = Number(process.env.N8N_MAJOR ?? 2);
const KEYS = { openai: `sk-oa-${uid()}`, anthropic: `sk-ant-${uid()}`, gemini: 'unused' };
const EXAMPLE = path.join(ROOT, 'n8n-node/examples/resilient-chat-model-agent.json');
const HINT_S = 3;
let vendors, run, log, names, started, finished;

before(async () => {
	vendors = await startLlmVendors(KEYS);
	const limited = { status: 429, headers: { 'Retry-After': String(HINT_S) } };
	// OpenAI: rate-limited (round one), a Calculator call (round two, turn one), then down: 503
	// without a hint, so the engine's retry policy alone decides how often it is asked (once:
	// Fail Over First is on by default and Anthropic can take the call).
	vendors.script('agentOpenai', [
		limited,
		{ tool: 'Calculator', args: { input: '17 * 23.5' } },
		{ status: 503 },
	]);
	// Anthropic: rate-limited (round one), then it answers with the tool result it was sent.
	vendors.script('agentClaude', [limited, 'echo_tool']);
	const n8n = n8nInstance(n8nInstall(major), { extensions: null });
	installLikeN8n(packWorktree(), n8n.home);
	const openai = openAiCredential(vendors, 'agentOpenai', KEYS.openai);
	const claude = anthropicCredential(vendors, 'agentClaude', KEYS.anthropic);
	n8n.importCredentials([openai, claude]);

	const wf = JSON.parse(readFileSync(EXAMPLE, 'utf8'));
	wf.id = `agentEx${uid()}`;
	const node = (name) => wf.nodes.find((n) => n.name === name);
	// The user's step after importing: their credentials chosen in the two chat models.
	node('OpenAI Chat Model').credentials.openAiApi = { id: openai.id, name: openai.name };
	node('Anthropic Chat Model').credentials.anthropicApi = { id: claude.id, name: claude.name };
	const rcm = node('Resilient Chat Model').parameters;
	// Provider names key state in n8n's memory: unique per run so no earlier run's state leaks in.
	names = [`openai-${uid()}`, `anthropic-${uid()}`];
	rcm.providers.provider = names.map((name) => ({ name }));
	// Short backoff so the test takes seconds, and hints above 1 s close the provider instead of
	// being slept in place (the example keeps the defaults: a 60 s cap).
	rcm.retryPolicy = { baseMs: 20, capMs: 50, retryAfterCapMs: 1000 };
	n8n.importWorkflow(wf);
	started = Date.now();
	({ run, log } = await n8n.execute(wf.id, { timeoutMs: 120_000 }));
	finished = Date.now();
	assert.ok(run, `n8n produced run data: ${log.slice(-3000)}`);
});
after(() => vendors?.close());

const runsOf = (name) => run.data.resultData.runData[name] ?? [];
/** The Resilient Chat Model's run-data entries: one per model call. */
const modelCalls = () =>
	runsOf('Resilient Chat Model').map((t) => t.data?.ai_languageModel?.[0]?.[0]?.json);

test('round one: both vendors rate-limited, the agent fails at once with retry_at and leaves on its error output', () => {
	const [first] = runsOf('AI Agent');
	const [served, failed] = first.data.main.map((o) => o ?? []);
	assert.equal(served.length, 0);
	assert.equal(failed.length, 1, JSON.stringify(first.data.main));
	assert.match(failed[0].json.error, /No connected model can answer now \(.+\); retry_at \d{4}-/);
	const [call] = modelCalls();
	assert.equal(call.outcome, 'deferred', JSON.stringify(call));
	assert.deepEqual(
		call.attempts.map((a) => [a.name, a.outcome]),
		[
			[names[0], '429'],
			[names[1], '429'],
		],
	);
});

test('the Wait node holds the question until retry_at and sends it back: round two starts after it', () => {
	assert.equal(runsOf('Wait until retry_at').length, 1);
	assert.equal(runsOf('The question again').length, 1);
	const retryAt = Date.parse(modelCalls()[0].retry_at);
	assert.ok(retryAt >= started + HINT_S * 1000 - 500, 'retry_at follows the vendors’ hint');
	const agentRuns = runsOf('AI Agent');
	assert.ok(agentRuns.length >= 2, 'the agent ran again after the Wait');
	assert.ok(
		agentRuns[1].startTime >= retryAt,
		`round two started at ${new Date(agentRuns[1].startTime).toISOString()}, retry_at ${modelCalls()[0].retry_at}`,
	);
});

test('round two: OpenAI calls the Calculator, fails the next turn; Anthropic finishes with the tool result', () => {
	const last = runsOf('AI Agent').at(-1);
	const [served, failed] = last.data.main.map((o) => o ?? []);
	assert.equal(failed.length, 0, JSON.stringify(failed));
	assert.equal(served.length, 1);
	// The vendor echoes the last tool result it was sent: 17 × 23.5 = 399.5, from the Calculator.
	assert.match(served[0].json.output, /^agentClaude read the tool result: .*\b399\.5\b/);
	const calls = modelCalls();
	assert.deepEqual(
		calls.map((c) => [c.outcome, c.provider]),
		[
			['deferred', null],
			['success', names[0]],
			['success', names[1]],
		],
		JSON.stringify(calls.map((c) => c.attempts)),
	);
	assert.ok(runsOf('Calculator').length >= 1, 'the tool ran');
});

test('requests at each vendor, exactly: OpenAI 1 + 1 + 1, Anthropic 1 + 1', () => {
	const attempts = modelCalls().flatMap((c) => c.attempts);
	const at = (name) => attempts.filter((a) => a.name === name).length;
	console.log(
		`n8n ${major}: openai ${vendors.accepted('agentOpenai')}, anthropic ${vendors.accepted('agentClaude')} requests; ` +
			`${finished - started} ms for the execution`,
	);
	// OpenAI: round one's 429; round two's tool call; then one 503: the chat model fails over
	// first (its default), so Anthropic, admissible then, takes the turn at once.
	assert.equal(vendors.accepted('agentOpenai'), 1 + 1 + 1);
	// Anthropic: round one's 429; round two's last turn, answered.
	assert.equal(vendors.accepted('agentClaude'), 1 + 1);
	// Every request the vendors counted is an attempt the sub-node reported, and none more.
	assert.equal(at(names[0]), vendors.accepted('agentOpenai'));
	assert.equal(at(names[1]), vendors.accepted('agentClaude'));
	assert.ok(
		vendors.arrivals.every((a) => a.accepted),
		'every request carried its credential',
	);
});
