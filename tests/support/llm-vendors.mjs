// Loopback LLM vendors that speak three dialects, refuse a request without the auth its vendor
// expects (401) and count every request they receive: the count that matters is taken here.
//   OpenAI-compatible   POST /<id>/v1/chat/completions              Authorization: Bearer <key>
//   OpenAI Responses    POST /<id>/v1/responses                     Authorization: Bearer <key>
//   Anthropic Messages  POST /<id>/v1/messages                      x-api-key: <key> + anthropic-version
//   Gemini              POST /<id>/v1beta/models/<model>:generateContent   x-goog-api-key or ?key=
// `<id>` names one vendor instance (its own script and counters), e.g. `primary`, `backup`.
// Each instance answers by a script (`vendors.script(id, answers)`), the last answer repeating:
//   'ok'         the dialect's success body, text "<id> says hi", usage 11 in / 7 out
//   'empty'      a success body whose text is empty
//   'too_long'   400 with the vendor's own "context length exceeded" wording
//   <number>     that status with a JSON error body (429 and 503 carry Retry-After: 1)
//   { status, body?, headers? }   exactly that
//   { tool, args }  a tool call (OpenAI tool_calls or a Responses function_call, Anthropic
//                tool_use) of tool `tool` with `args`
//   'echo_tool'  text "<id> read the tool result: <the last tool result in the request>"
//   { reflect: status, inBody? }  that status with the key it received in Retry-After,
//                X-RateLimit-Reset and X-Echo and (unless inBody is false) in the error body beside
//                its message: a vendor that reflects the secret
// Arrivals record `accepted` (auth as expected), never a key: `keyHash` is sha256, 16 hex digits.
import http from 'node:http';
import { createHash } from 'node:crypto';

const keyHash = (k) => createHash('sha256').update(String(k)).digest('hex').slice(0, 16);

const DIALECTS = {
	openai: {
		match: (rest) => rest === '/v1/chat/completions',
		authorized: (req, keys) => req.headers.authorization === `Bearer ${keys.openai}`,
		unauthorized: {
			error: {
				message: 'Incorrect API key provided',
				type: 'invalid_request_error',
				code: 'invalid_api_key',
			},
		},
		ok: (id, model, text) => ({
			id: `chatcmpl-${id}`,
			object: 'chat.completion',
			created: Math.floor(Date.now() / 1000),
			model,
			choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
			usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
		}),
		toolCall: (id, model, name, args) => ({
			id: `chatcmpl-${id}`,
			object: 'chat.completion',
			created: Math.floor(Date.now() / 1000),
			model,
			choices: [
				{
					index: 0,
					message: {
						role: 'assistant',
						content: null,
						tool_calls: [
							{
								id: `call_${id}`,
								type: 'function',
								function: { name, arguments: JSON.stringify(args) },
							},
						],
					},
					finish_reason: 'tool_calls',
				},
			],
			usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
		}),
		toolResult: (body) =>
			(body?.messages ?? [])
				.filter((m) => m.role === 'tool')
				.map((m) => String(m.content))
				.pop(),
		tooLong: {
			error: {
				message:
					"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens. Please reduce the length of the messages.",
				type: 'invalid_request_error',
				param: 'messages',
				code: 'context_length_exceeded',
			},
		},
		error: (status) => ({
			error: { message: `upstream ${status}`, type: 'server_error', code: status },
		}),
	},
	// The Responses API (n8n's OpenAI Chat Model from its version 1.3): same auth and error bodies
	// as chat completions; the answer is a `response` whose `output` holds a `message` with
	// `output_text` parts (annotations required) or a `function_call` (arguments a JSON string), as
	// @langchain/openai's convertResponsesMessageToAIMessage reads them (1.1.3 and 1.4.4).
	openaiResponses: {
		match: (rest) => rest === '/v1/responses',
		authorized: (req, keys) => req.headers.authorization === `Bearer ${keys.openai}`,
		get unauthorized() {
			return DIALECTS.openai.unauthorized;
		},
		ok: (id, model, text) =>
			response(id, model, [
				{
					type: 'message',
					id: `msg_${id}`,
					status: 'completed',
					role: 'assistant',
					content: [{ type: 'output_text', text, annotations: [] }],
				},
			]),
		toolCall: (id, model, name, args) =>
			response(id, model, [
				{
					type: 'function_call',
					id: `fc_${id}`,
					call_id: `call_${id}`,
					name,
					arguments: JSON.stringify(args),
					status: 'completed',
				},
			]),
		toolResult: (body) =>
			(Array.isArray(body?.input) ? body.input : [])
				.filter((m) => m.type === 'function_call_output')
				.map((m) => (typeof m.output === 'string' ? m.output : JSON.stringify(m.output)))
				.pop(),
		tooLong: {
			error: {
				message:
					'Your input exceeds the context window of this model. Please adjust your input and try again.',
				type: 'invalid_request_error',
				param: 'input',
				code: 'context_length_exceeded',
			},
		},
		error: (status) => DIALECTS.openai.error(status),
	},
	anthropic: {
		match: (rest) => rest === '/v1/messages',
		authorized: (req, keys) =>
			req.headers['x-api-key'] === keys.anthropic && Boolean(req.headers['anthropic-version']),
		unauthorized: {
			type: 'error',
			error: { type: 'authentication_error', message: 'invalid x-api-key or no anthropic-version' },
		},
		ok: (id, model, text) => ({
			id: `msg_${id}`,
			type: 'message',
			role: 'assistant',
			model,
			content: [{ type: 'text', text }],
			stop_reason: 'end_turn',
			stop_sequence: null,
			usage: { input_tokens: 11, output_tokens: 7 },
		}),
		toolCall: (id, model, name, args) => ({
			id: `msg_${id}`,
			type: 'message',
			role: 'assistant',
			model,
			content: [{ type: 'tool_use', id: `toolu_${id}`, name, input: args }],
			stop_reason: 'tool_use',
			stop_sequence: null,
			usage: { input_tokens: 11, output_tokens: 7 },
		}),
		toolResult: (body) =>
			(body?.messages ?? [])
				.flatMap((m) => (Array.isArray(m.content) ? m.content : []))
				.filter((b) => b.type === 'tool_result')
				.map((b) =>
					typeof b.content === 'string'
						? b.content
						: (b.content ?? []).map((c) => c.text ?? '').join(''),
				)
				.pop(),
		tooLong: {
			type: 'error',
			error: {
				type: 'invalid_request_error',
				message: 'prompt is too long: 210000 tokens > 200000 maximum',
			},
		},
		error: (status) => ({
			type: 'error',
			error: { type: 'api_error', message: `upstream ${status}` },
		}),
	},
	gemini: {
		match: (rest) => /^\/v1beta\/models\/[^/]+:generateContent$/.test(rest),
		authorized: (req, keys, url) =>
			req.headers['x-goog-api-key'] === keys.gemini || url.searchParams.get('key') === keys.gemini,
		unauthorized: {
			error: {
				code: 401,
				message: 'API key not valid. Please pass a valid API key.',
				status: 'UNAUTHENTICATED',
			},
		},
		ok: (id, model, text) => ({
			candidates: [
				{ content: { parts: [{ text }], role: 'model' }, finishReason: 'STOP', index: 0 },
			],
			usageMetadata: { promptTokenCount: 11, candidatesTokenCount: 7, totalTokenCount: 18 },
			modelVersion: model,
		}),
		tooLong: {
			error: {
				code: 400,
				message:
					'The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).',
				status: 'INVALID_ARGUMENT',
			},
		},
		error: (status) => ({
			error: { code: status, message: `upstream ${status}`, status: 'UNAVAILABLE' },
		}),
	},
};

/** A completed Responses API `response` with `output` items. */
function response(id, model, output) {
	return {
		id: `resp_${id}`,
		object: 'response',
		created_at: Math.floor(Date.now() / 1000),
		status: 'completed',
		error: null,
		incomplete_details: null,
		model,
		output,
		parallel_tool_calls: true,
		tool_choice: 'auto',
		tools: [],
		usage: {
			input_tokens: 11,
			input_tokens_details: { cached_tokens: 0 },
			output_tokens: 7,
			output_tokens_details: { reasoning_tokens: 0 },
			total_tokens: 18,
		},
	};
}

function modelOf(dialect, rest, body) {
	if (dialect === 'gemini') return decodeURIComponent(rest.split('/models/')[1].split(':')[0]);
	return body?.model ?? null;
}

/** Starts the vendors on a free loopback port; `keys`: { openai, anthropic, gemini }. */
export async function startLlmVendors(keys) {
	const arrivals = [];
	const scripts = new Map();
	const served = new Map();
	const server = http.createServer((req, res) => {
		const url = new URL(req.url, 'http://127.0.0.1');
		let raw = '';
		req.on('data', (c) => (raw += c));
		req.on('end', () => {
			const [, id = '', ...more] = url.pathname.split('/');
			const rest = `/${more.join('/')}`;
			const dialect = Object.keys(DIALECTS).find((d) => DIALECTS[d].match(rest));
			if (!dialect) return send(res, 404, { error: `no vendor route ${url.pathname}` });
			const d = DIALECTS[dialect];
			let body = null;
			try {
				body = raw ? JSON.parse(raw) : null;
			} catch {
				/* kept as null: the arrival still counts */
			}
			const accepted = d.authorized(req, keys, url);
			const model = modelOf(dialect, rest, body);
			const arrival = {
				t: Date.now(),
				id,
				dialect,
				model,
				accepted,
				keyHash: keyHash(
					req.headers.authorization ??
						req.headers['x-api-key'] ??
						req.headers['x-goog-api-key'] ??
						'',
				),
				body,
				status: 0,
			};
			arrivals.push(arrival);
			if (!accepted) return send(res, (arrival.status = 401), d.unauthorized);
			const n = served.get(id) ?? 0;
			served.set(id, n + 1);
			const script = scripts.get(id) ?? ['ok'];
			const answer = script[Math.min(n, script.length - 1)];
			if (answer === 'ok' || answer === 'empty')
				return send(
					res,
					(arrival.status = 200),
					d.ok(id, model, answer === 'ok' ? `${id} says hi` : ''),
				);
			if (answer === 'too_long') return send(res, (arrival.status = 400), d.tooLong);
			if (answer === 'echo_tool')
				return send(
					res,
					(arrival.status = 200),
					d.ok(id, model, `${id} read the tool result: ${d.toolResult?.(body) ?? 'none'}`),
				);
			if (answer?.tool)
				return send(res, (arrival.status = 200), d.toolCall(id, model, answer.tool, answer.args));
			if (typeof answer === 'number') {
				const headers = answer === 429 || answer === 503 ? { 'Retry-After': '1' } : {};
				return send(res, (arrival.status = answer), d.error(answer), headers);
			}
			if (answer.reflect) {
				const key = String(
					req.headers['x-api-key'] ??
						req.headers['x-goog-api-key'] ??
						req.headers.authorization ??
						'',
				);
				// Beside the message, not in it: n8n's own chat model nodes copy a vendor's error message
				// into their run data (`description`), with or without this package's node.
				const body = d.error(answer.reflect);
				if (answer.inBody !== false) {
					body.error.key_seen = key;
					body.echo = key;
				}
				return send(res, (arrival.status = answer.reflect), body, {
					'Retry-After': key,
					'X-RateLimit-Reset': key,
					'X-Echo': key,
				});
			}
			arrival.status = answer.status;
			return send(res, answer.status, answer.body ?? d.error(answer.status), answer.headers ?? {});
		});
	});
	await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address();
	return {
		port,
		/** Base URL of vendor instance `id` (each dialect's path goes after it). */
		url: (id) => `http://127.0.0.1:${port}/${id}`,
		arrivals,
		/** Requests that reached instance `id` with the right auth (what a vendor would bill). */
		accepted: (id) => arrivals.filter((a) => a.id === id && a.accepted).length,
		script(id, answers) {
			scripts.set(id, answers);
			served.set(id, 0);
		},
		reset() {
			arrivals.length = 0;
			scripts.clear();
			served.clear();
		},
		close: () => new Promise((resolve) => server.close(resolve)),
	};
}

function send(res, status, body, headers = {}) {
	res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
	res.end(JSON.stringify(body));
}

export { keyHash };
