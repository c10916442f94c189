// Reading a streamed n8n response (a Webhook or Chat Trigger in Streaming mode): NDJSON lines
// {"type":"begin"|"item"|"end"|"error", "content"?, "metadata"}, read as they arrive with fetch,
// each stamped with the time it was read; and the root of such a chat.
import { node } from './workflow-parts.mjs';

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
