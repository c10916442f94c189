// Reading a streamed n8n response (a Webhook or Chat Trigger in Streaming mode): NDJSON lines
// {"type":"begin"|"item"|"end"|"error", "content"?, "metadata"}, read as they arrive with fetch,
// each stamped with the time it was read; and the root of such a chat.
import { node } from './workflow-parts.mjs';
import { activate, ownerSession } from './trigger/publish.mjs';
import { resilientChatModel } from './chat-workflows.mjs';
import { uid } from './n8n.mjs';

const LC = '@n8n/n8n-nodes-langchain';

/** The root of a streamed chat: a Webhook in Streaming mode at `path`, then n8n's AI Agent (its
 * newest version on this n8n) over the request's `q`. */
export function streamingAgent(path, major) {
	const start = node(
		'Webhook',
		'n8n-nodes-base.webhook',
		2.1,
		0,
		{ httpMethod: 'POST', path, responseMode: 'streaming', options: {} },
		{ webhookId: path },
	);
	const agent = node('Agent', '@n8n/n8n-nodes-langchain.agent', major === 2 ? 3.1 : 3, 300, {
		promptType: 'define',
		text: '={{ $json.body.q }}',
		options: {},
	});
	return { start, agent };
}

/** A public Chat Trigger in Streaming mode (n8n 2) -> n8n's AI Agent reading its chat input. */
function chatTriggerAgent(path) {
	const start = node(
		'When chat message received',
		`${LC}.chatTrigger`,
		1.3,
		0,
		{ public: true, mode: 'hostedChat', options: { responseMode: 'streaming' } },
		{ webhookId: path },
	);
	const agent = node('Agent', `${LC}.agent`, 3.1, 300, { promptType: 'auto', options: {} });
	return { start, agent };
}

/**
 * A Webhook (Streaming), or with `viaChat` a Chat Trigger, -> AI Agent -> a Resilient Chat Model
 * 1.2 at its defaults over the chat model nodes `inputs`. Each model's provider is named
 * `names[i]`, by default its node's name made unique (two flows given the same names share the
 * providers' breakers and rows); `parameters` and `credentials` join the chat model's own (a
 * shared state store).
 */
export function agentFlow(
	major,
	key,
	inputs,
	{ viaChat = false, names, parameters, credentials } = {},
) {
	const id = `p${key.slice(0, 5)}${uid()}`;
	const path = `p-${key}-${uid()}`;
	const { start, agent } = viaChat ? chatTriggerAgent(path) : streamingAgent(path, major);
	const providerNames = names ?? inputs.map((m) => `${m.name}-${uid()}`);
	const chat = resilientChatModel(
		'Resilient Chat Model',
		{
			numberInputs: inputs.length,
			providers: { provider: providerNames.map((name) => ({ name })) },
			...parameters,
		},
		[300, 200],
	);
	chat.typeVersion = 1.2;
	if (credentials) chat.credentials = credentials;
	const connections = {
		[start.name]: { main: [[{ node: 'Agent', type: 'main', index: 0 }]] },
		'Resilient Chat Model': {
			ai_languageModel: [[{ node: 'Agent', type: 'ai_languageModel', index: 0 }]],
		},
	};
	inputs.forEach((m, i) => {
		connections[m.name] = {
			ai_languageModel: [[{ node: 'Resilient Chat Model', type: 'ai_languageModel', index: i }]],
		};
	});
	const wf = {
		id,
		name: id,
		active: false,
		settings: { executionOrder: 'v1' },
		nodes: [start, agent, chat, ...inputs],
		connections,
	};
	return { wf, path, chat: viaChat };
}

/** The URL a flow of `agentFlow` answers at on `base`. */
export const flowUrl = (f, base) => `${base}/webhook/${f.path}${f.chat ? '/chat' : ''}`;

/** One chat message to a flow of `agentFlow`, streamed: `session` keeps the agent's memory apart. */
export const askFlow = (f, base, q, session) =>
	postStreaming(
		flowUrl(f, base),
		f.chat ? { action: 'sendMessage', sessionId: session, chatInput: q } : { q, session },
	);

/** POSTs `body` as JSON to `url`; `onLine(line)` runs on each line as it is read (awaited). */
export async function postStreaming(url, body, { onLine, timeoutMs = 120_000 } = {}) {
	const started = Date.now();
	const res = await fetch(url, {
		method: 'POST',
		headers: { 'Content-Type': 'application/json' },
		body: JSON.stringify(body),
		signal: AbortSignal.timeout(timeoutMs),
	});
	const lines = [];
	const decoder = new TextDecoder();
	let rest = '';
	const take = async (text) => {
		if (!text.trim()) return;
		let line;
		try {
			line = { ...JSON.parse(text), at: Date.now() - started };
		} catch {
			line = { type: 'unparsed', content: text, at: Date.now() - started };
		}
		lines.push(line);
		await onLine?.(line);
	};
	for await (const bytes of res.body) {
		rest += decoder.decode(bytes, { stream: true });
		for (let nl = rest.indexOf('\n'); nl >= 0; nl = rest.indexOf('\n')) {
			await take(rest.slice(0, nl));
			rest = rest.slice(nl + 1);
		}
	}
	await take(rest);
	return { status: res.status, lines, ms: Date.now() - started };
}

/** The `item` lines' text. */
export const items = (lines) => lines.filter((l) => l.type === 'item').map((l) => l.content);

/**
 * Imports and publishes `flows` ({ wf, path?, isChat? }) on `n8n` and starts it: n8n 1 by its CLI
 * in one call, n8n 2 through its REST API once it runs, as the editor's Publish button does (a CLI
 * publish per workflow boots n8n each time). Resolves with the server and its base URL once every
 * flow's webhook (`url(flow, base)`) is registered.
 */
export async function startPublished(n8n, major, flows, url) {
	try {
		n8n.importWorkflow(flows.map((f) => f.wf));
	} catch (e) {
		throw new Error(`import failed: ${String(e.stdout).slice(-1500)}`);
	}
	if (major === 1) n8n.cli(['update:workflow', '--all', '--active=true']);
	const server = await n8n.start();
	const base = `http://127.0.0.1:${server.port}`;
	if (major === 2) {
		const rest = await ownerSession(server.port);
		for (const f of flows) await activate(rest, f.wf.id);
	}
	// n8n 2 registers a published workflow's webhooks a moment after its API is up: a GET to a
	// POST webhook then answers "did you mean POST" instead of "not registered".
	for (const f of flows) {
		for (let tries = 0; ; tries++) {
			// (The Chat Trigger's GET, its setup webhook, may not answer at all once registered.)
			const r = await fetch(url(f, base), { signal: AbortSignal.timeout(2000) }).catch(() => null);
			const text = r ? await r.text().catch(() => '') : '';
			if (!r || r.status !== 404 || /did you mean/i.test(text)) break;
			if (tries > 120) throw new Error(`${url(f, base)} never registered: ${text.slice(0, 300)}`);
			await new Promise((res) => setTimeout(res, 250));
		}
	}
	return { server, base };
}
