// The chat model 1.2 at its defaults in real n8n (N8N_MAJOR=2: 2.41.1; 1: 1.123.81) on
// `n8n start`, the package installed as n8n's community installer does: a Webhook in Streaming
// mode -> n8n's AI Agent -> the Resilient Chat Model over n8n's own chat model nodes on loopback
// vendors that stream as the real APIs do and count every request (issue 58):
//   - recovery in seconds: Model 1 down for 60 s, then healthy, a message every 4 s;
//   - learned deadlines: a quick stream that goes silent, also after its third chunk once the
//     model's last answers showed its pace, a quick model whose first token suddenly takes 20 s;
//   - an input too long for Model 1 (OpenAI's, Anthropic's and Gemini's forms) goes to Model 2.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { n8nInstall, n8nInstance, uid } from '../support/n8n.mjs';
import { startLlmVendors } from '../support/llm-vendors.mjs';
import {
	anthropicCredential,
	anthropicModel,
	geminiCredential,
	geminiModel,
	openAiCredential,
	openAiModel,
} from '../support/chat-workflows.mjs';
import { agentFlow, askFlow, flowUrl, items, startPublished } from '../support/chat-stream.mjs';
import { installLikeN8n } from './clean-checkout.mjs';
import { packWorktree } from '../chat/support.mjs';

const major = Number(process.env.N8N_MAJOR ?? 2);
const KEYS = {
	openai: `sk-pace-${uid()}`,
	anthropic: `sk-ant-pace-${uid()}`,
	gemini: `g-${uid()}`,
};
let vendors, server, base;
const cred = {};
const flows = {};
const chatFlow = (key, inputs, viaChat = false) => agentFlow(major, key, inputs, { viaChat });

const openai = (id) => openAiModel(id, cred[id], [0, 0]);
/** The streaming roots: a Webhook on both majors, a Chat Trigger on n8n 2 (n8n 1's does not stream). */
const VIA = major === 2 ? ['Hook', 'Chat'] : ['Hook'];

before(async () => {
	vendors = await startLlmVendors(KEYS);
	const n8n = n8nInstance(n8nInstall(major), { extensions: null });
	installLikeN8n(packWorktree(), n8n.home);
	const perVia = VIA.flatMap((via) =>
		['sStall', 'sCont', 'qQuick', 'qSpare'].map((id) => `${id}${via}`),
	);
	for (const id of ['rDown', 'rUp', 'tlOpenai', 'tlSpare', 'fStall', 'fCont', ...perVia])
		cred[id] = openAiCredential(vendors, id, KEYS.openai);
	cred.tlClaude = anthropicCredential(vendors, 'tlClaude', KEYS.anthropic);
	cred.tlGemini = geminiCredential(vendors, 'tlGemini', KEYS.gemini);
	n8n.importCredentials(Object.values(cred));
	flows.recovery = chatFlow('recovery', [openai('rDown'), openai('rUp')]);
	for (const via of VIA) {
		flows[`stall${via}`] = chatFlow(
			`stall${via}`,
			[openai(`sStall${via}`), openai(`sCont${via}`)],
			via === 'Chat',
		);
		flows[`quick${via}`] = chatFlow(
			`quick${via}`,
			[openai(`qQuick${via}`), openai(`qSpare${via}`)],
			via === 'Chat',
		);
	}
	flows.fleetStall = chatFlow('fstall', [openai('fStall'), openai('fCont')]);
	flows.tlOpenai = chatFlow('tlopenai', [openai('tlOpenai'), openai('tlSpare')]);
	flows.tlClaude = chatFlow('tlclaude', [
		anthropicModel('tlClaude', cred.tlClaude, [0, 0]),
		openai('tlSpare'),
	]);
	flows.tlGemini = chatFlow('tlgemini', [
		geminiModel('tlGemini', cred.tlGemini, [0, 0]),
		openai('tlSpare'),
	]);
	({ server, base } = await startPublished(n8n, major, Object.values(flows), flowUrl));
});
after(async () => {
	await server?.stop();
	await vendors?.close();
});

const ask = (f, q, session) => askFlow(f, base, q, session);
const requestsTo = (id) => vendors.arrivals.filter((a) => a.id === id && a.accepted);
const show = (r) => JSON.stringify(r.lines.map(({ at, ...l }) => l)).slice(0, 1500);
const sleepUntil = (t) => new Promise((r) => setTimeout(r, Math.max(0, t - Date.now())));

test(
	'Model 1 down 60 s then healthy, a message every 4 s: all 20 answered, Model 1 used again within 10 s of its recovery, at most 10 requests to it during the outage',
	{ timeout: 240_000 },
	async (t) => {
		vendors.script('rDown', [503]);
		vendors.script('rUp', [{ stream: { text: ['model 2 ', 'answers'] } }]);
		const started = Date.now();
		let switchedAt;
		const served = [];
		for (let k = 0; k < 20; k++) {
			await sleepUntil(started + 4_000 * k);
			// Its recovery: from the first message at or after 60 s on, Model 1 answers.
			if (switchedAt === undefined && Date.now() >= started + 60_000) {
				vendors.script('rDown', [{ stream: { text: ['model 1 ', 'is back'] } }]);
				switchedAt = Date.now();
			}
			const r = await ask(flows.recovery, `message ${k}`, `r${uid()}`);
			const text = items(r.lines).join('');
			assert.ok(text === 'model 2 answers' || text === 'model 1 is back', show(r));
			served.push(text.startsWith('model 1') ? 1 : 2);
		}
		const during = requestsTo('rDown').filter((a) => a.t < switchedAt).length;
		const back = requestsTo('rDown').find((a) => a.t >= switchedAt);
		t.diagnostic(
			`n8n ${major}: served by ${served.join('')}; requests to Model 1 during the outage: ${during}; used again ${back ? back.t - switchedAt : 'never'} ms after its recovery`,
		);
		assert.ok(during <= 10, `${during} requests to Model 1 during the outage`);
		assert.ok(back, 'Model 1 used again');
		assert.ok(back.t - switchedAt <= 10_000, `used again ${back.t - switchedAt} ms after`);
		assert.equal(served.at(-1), 1, 'the last messages are Model 1 again');
	},
);

const ROOT_NAME = { Hook: 'Webhook', Chat: 'Chat Trigger' };
for (const via of VIA) {
	test(`${ROOT_NAME[via]}: a model streaming every 50 ms goes silent after 20 chunks on its first message: the next model finishes the answer within 5 s`, async (t) => {
		const words = Array.from({ length: 30 }, (_, i) => `w${i} `);
		vendors.script(`sStall${via}`, [{ stream: { text: words, gapMs: 50, stallAfter: 20 } }]);
		vendors.script(`sCont${via}`, [{ stream: { continues: true, text: ['and the rest.'] } }]);
		const r = await ask(flows[`stall${via}`], 'tell me', `s${uid()}`);
		const lines = r.lines.filter((l) => l.type === 'item' && l.content);
		const stalled = lines.find((l) => l.content.includes('w19'));
		const resumed = lines.find((l) => l.content.includes('the rest'));
		assert.ok(stalled && resumed, show(r));
		t.diagnostic(
			`n8n ${major}, ${ROOT_NAME[via]}: the continuation reached the caller ${resumed.at - stalled.at} ms after the stall`,
		);
		assert.ok(resumed.at - stalled.at < 5_000, `${resumed.at - stalled.at} ms`);
		assert.equal(requestsTo(`sCont${via}`).length, 1);
	});

	test(`${ROOT_NAME[via]}: a quick model whose first token suddenly takes 20 s: the next model answers within 5 s`, async (t) => {
		const quick = { stream: { text: ['quick ', 'answer'] } };
		vendors.script(`qQuick${via}`, [
			quick,
			quick,
			quick,
			{ stream: { firstDelayMs: 20_000, text: ['late'] } },
		]);
		vendors.script(`qSpare${via}`, [{ stream: { text: ['spare ', 'answer'] } }]);
		for (let k = 0; k < 3; k++) {
			const r = await ask(flows[`quick${via}`], `q${k}`, `q${uid()}`);
			assert.deepEqual(
				items(r.lines).filter((x) => x),
				['quick ', 'answer'],
				show(r),
			);
		}
		const r = await ask(flows[`quick${via}`], 'q3', `q${uid()}`);
		const first = r.lines.find((l) => l.type === 'item' && l.content);
		t.diagnostic(
			`n8n ${major}, ${ROOT_NAME[via]}: the first chunk reached the caller after ${first?.at} ms`,
		);
		assert.deepEqual(
			items(r.lines).filter((x) => x),
			['spare ', 'answer'],
			show(r),
		);
		assert.ok(first.at < 5_000, `${first.at} ms`);
	});
}

test('a model whose last three answers streamed every 50 ms goes silent after its third chunk: the next model finishes the answer within 5 s', async (t) => {
	const words = (n) => Array.from({ length: n }, (_, i) => `f${i} `);
	const whole = { stream: { text: words(12), gapMs: 50 } };
	vendors.script('fStall', [
		whole,
		whole,
		whole,
		{ stream: { text: words(12), gapMs: 50, stallAfter: 3 } },
	]);
	vendors.script('fCont', [{ stream: { continues: true, text: ['and the rest.'] } }]);
	for (let k = 0; k < 3; k++) {
		const r = await ask(flows.fleetStall, `f${k}`, `f${uid()}`);
		assert.equal(items(r.lines).join(''), words(12).join(''), show(r));
	}
	const r = await ask(flows.fleetStall, 'f3', `f${uid()}`);
	const lines = r.lines.filter((l) => l.type === 'item' && l.content);
	const stalled = lines.find((l) => l.content.includes('f2'));
	const resumed = lines.find((l) => l.content.includes('the rest'));
	assert.ok(stalled && resumed, show(r));
	t.diagnostic(
		`n8n ${major}: after its third chunk, the continuation reached the caller ${resumed.at - stalled.at} ms after the stall`,
	);
	assert.ok(resumed.at - stalled.at < 5_000, `${resumed.at - stalled.at} ms`);
});

for (const [key, id] of [
	['tlOpenai', 'tlOpenai'],
	['tlClaude', 'tlClaude'],
	['tlGemini', 'tlGemini'],
])
	test(`an input too long for Model 1 (${id}): one request to it, the answer from Model 2`, async () => {
		vendors.script(id, ['too_long']);
		vendors.script('tlSpare', [{ stream: { text: ['a larger ', 'window'] } }]);
		const before = requestsTo('tlSpare').length;
		const r = await ask(flows[key], 'a very long question', `t${uid()}`);
		assert.deepEqual(
			items(r.lines).filter((x) => x),
			['a larger ', 'window'],
			show(r),
		);
		assert.equal(requestsTo(id).length, 1, 'one request to Model 1: not retried');
		assert.equal(requestsTo('tlSpare').length, before + 1);
	});
