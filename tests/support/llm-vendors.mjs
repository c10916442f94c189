// Loopback LLM vendors that speak their vendors' dialects, refuse a request without the auth its vendor
// expects (401) and count every request they receive: the count that matters is taken here.
//   OpenAI-compatible   POST /<id>/v1/chat/completions              Authorization: Bearer <key>
//   OpenAI Responses    POST /<id>/v1/responses                     Authorization: Bearer <key>
//   Anthropic Messages  POST /<id>/v1/messages                      x-api-key: <key> + anthropic-version
//   Gemini              POST /<id>/v1beta/models/<model>:generateContent   x-goog-api-key or ?key=
//                       and, streamed, POST /<id>/v1beta/models/<model>:streamGenerateContent?alt=sse
//   Ollama              POST /<id>/api/chat                          none, or Authorization: Bearer
//                       <keys.ollama> when that key is given (a proxy in front, as n8n's credential
//                       allows)
//   Azure OpenAI        POST /<id>/openai/deployments/<deployment>/chat/completions?api-version=…
//                       api-key: <keys.azure ?? keys.openai>
//   Bedrock Converse    POST /<id>/model/<modelId>/converse          SigV4: Authorization
//                       AWS4-HMAC-SHA256 Credential=<keys.aws>/… (the signature is not checked);
//                       errors as restJson1: the type in x-amzn-ErrorType, { message }; streamed:
//                       POST /<id>/model/<modelId>/converse-stream (an AWS event stream, below)
// Chat completions are also served at /<id>/chat/completions (a base URL without /v1, as
// DeepSeek's) and /<id>/openai/v1/chat/completions (groq-sdk's path under its base URL).
// `<id>` names one vendor instance (its own script and counters), e.g. `primary`, `backup`. The
// id `_model` stands for the request's model: a client whose base URL is set for the whole
// process (groq-sdk's GROQ_BASE_URL) reaches instance `x` at `url('_model')` with model `x`.
// Each instance answers by a script (`vendors.script(id, answers)`), the last answer repeating:
//   'ok'         the dialect's success body, text "<id> says hi", usage 11 in / 7 out
//   'empty'      a success body whose text is empty
//   { delayMs, then? }  the answer `then` (default 'ok') after delayMs; the arrival has `delayMs`
//                and `clientClosed` (true when the client closed the connection before the answer
//                was sent, with `closedAt`: nothing is sent then)
//   'too_long'   400 with the vendor's own "context length exceeded" wording
//   <number>     that status with a JSON error body (429 and 503 carry Retry-After: 1)
//   { status, body?, headers? }   exactly that
//   { tool, args }  a tool call (OpenAI tool_calls or a Responses function_call, Anthropic
//                tool_use, Gemini functionCall, Ollama message.tool_calls, streamed or not) of
//                tool `tool` with `args`; a tool result is read back from OpenAI's role `tool`,
//                Anthropic's tool_result, Gemini's functionResponse and Ollama's role `tool`
//   'echo_tool'  text "<id> read the tool result: <the last tool result in the request>"
//   { tool, args, thenEcho: true }  the tool call to a request without a tool result, 'echo_tool'
//                to one with (each conversation: a tool round, then the answer)
//   { reflect: status, inBody? }  that status with the key it received in Retry-After,
//                X-RateLimit-Reset and X-Echo and (unless inBody is false) in the error body beside
//                its message: a vendor that reflects the secret
//   { stream: { text?, tool?, gapMs?, firstDelayMs?, stallAfterHeaders?, dropAfter?, holdLast? } }
//                a streamed answer, shaped by:
//                text: ['Hel', 'lo']  the text deltas (default: the text of 'ok', "<id> says hi",
//                  in 3 deltas of about equal size)
//                tool: { name, args }  a tool call instead of text, its JSON arguments in 2-3 deltas
//                gapMs  the pause before each delta after the first and after the last (default 0)
//                firstDelayMs  the headers and the preamble (below) at once, then this pause before
//                  the first delta
//                stallAfterHeaders: true  the status and headers, then nothing, never ending, until the
//                  client closes the socket; 'preamble': the same after the preamble
//                stallAfter: N  after N deltas, nothing more (the connection open) until the client
//                  closes it; errorAfter: N  after N deltas, the dialect's error event mid-stream
//                  (OpenAI's `data: {"error":…}`, Anthropic's `event: error` overloaded_error), then
//                  the end of the response; garbageAfter: N  after N deltas, an event whose data
//                  is not JSON (a malformed chunk), then the end of the response
//                dropAfter: N  after N deltas (and the gap that would precede the next one) the
//                  vendor destroys the socket: no terminating event, no [DONE]
//                holdLast: true  everything but the last delta (and the terminating events), then a
//                  wait for vendors.release(id), then the rest
//                continues: true  a continuation: the text the request carries as the answer so far
//                  (OpenAI: its last assistant message; Anthropic: its assistant prefix) is streamed
//                  again first, its last `repeatWords` words, or all of it with `restart: true`,
//                  then `text`; every arrival has `partial`, that text (null for other requests)
//                To a request that is not streamed it answers as 'ok' with the deltas' text joined
//                (or as { tool, args }).
// A streamed request (`stream: true` in the body of a chat completions, Responses or Messages
// request, an Ollama request without `stream: false`, and any request to Gemini's
// streamGenerateContent or Bedrock's converse-stream route) answered 'ok', 'empty', 'echo_tool', { tool,
// args } or { stream } gets 200 text/event-stream and the dialect's own events, as the SDKs that
// n8n ships parse them (openai 6.49 core/streaming.js + @langchain/openai 1.1.3/1.4.4 converters;
// @anthropic-ai/sdk 0.71/0.115 core/streaming.js, which keys on the `event:` name, +
// @langchain/anthropic 1.1.3/1.5.6 utils/message_outputs), after an SSE comment `: keep-alive`;
// "deltas" are the content events ('empty' has none), "preamble" is what precedes the first one:
//   chat completions  data: chat.completion.chunk — preamble: the role-only delta (a tool call's
//                carries the call's id, type and name, arguments ''); deltas: delta.content or
//                delta.tool_calls[{ index, function: { arguments } }]; then an empty delta with
//                finish_reason 'stop' / 'tool_calls', a usage chunk (choices []) when
//                stream_options.include_usage, and data: [DONE]
//   Responses    event: <type> + data with sequence_number — preamble: response.created,
//                response.in_progress, response.output_item.added (a message, or a function_call
//                with arguments ''), response.content_part.added (text only); deltas:
//                response.output_text.delta / response.function_call_arguments.delta; then
//                .output_text.done + .content_part.done (or .function_call_arguments.done),
//                .output_item.done and response.completed (the whole response, usage 11 in / 7 out)
//   Anthropic    event: <type> — preamble: message_start (content [], usage input_tokens 11),
//                content_block_start (text '' or tool_use with input {}), ping; deltas:
//                content_block_delta text_delta / input_json_delta (partial_json); then
//                content_block_stop, message_delta (stop_reason end_turn / tool_use, output_tokens
//                7) and message_stop
//   Ollama       application/x-ndjson, no keep-alive comment, no preamble — deltas: one line each
//                { model, created_at, message: { role: 'assistant', content }, done: false }; end:
//                a last line with content '', done: true, done_reason 'stop', prompt_eval_count 11,
//                eval_count 7 and the durations. Its errors are { error: "<message>" }.
//   Gemini       text/event-stream, no keep-alive comment, no preamble (@google/generative-ai
//                0.21-0.24 reads `data:` lines only) — deltas: data: { candidates: [{ content:
//                { parts: [{ text }], role: 'model' }, index: 0 }], usageMetadata, modelVersion },
//                the last one with finishReason 'STOP' and candidatesTokenCount 7; a functionCall
//                whole in one chunk; no terminating event (an 'empty' answer: one chunk, text '')
//   Bedrock      application/vnd.amazon.eventstream: binary messages (prelude, headers
//                :event-type / :content-type / :message-type, JSON payload, CRC32s), no keep-alive —
//                preamble: messageStart (and a tool call's contentBlockStart { toolUse: { toolUseId,
//                name } }); deltas: contentBlockDelta { delta: { text } } or { delta: { toolUse:
//                { input } } }; then contentBlockStop, messageStop (end_turn / tool_use) and
//                metadata (usage 11 in / 7 out)
// Error answers to a streamed request stay plain JSON errors, before any event, as the APIs do.
// Arrivals record `accepted` (auth as expected), never a key: `keyHash` is sha256, 16 hex digits.
// `streamed` says the request asked for a stream; an arrival answered with one also has `sent`
// (deltas written), `closedAt` (ms, when the response ended or its socket closed, whoever closed
// it) and `clientClosed` (true when the client closed the connection before the vendor ended the
// response; false for a complete stream and for dropAfter, where the vendor closed it).
// `vendors.release(id)` lets instance `id`'s held streams go on; `close()` destroys open sockets.
import http from 'node:http';
import { createHash } from 'node:crypto';

const keyHash = (k) => createHash('sha256').update(String(k)).digest('hex').slice(0, 16);

const DIALECTS = {
	openai: {
		match: (rest) =>
			rest === '/v1/chat/completions' ||
			rest === '/chat/completions' ||
			rest === '/openai/v1/chat/completions',
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
		// The answer a request asks to continue: its last assistant message's text.
		partial: (body) =>
			(body?.messages ?? [])
				.filter((m) => m.role === 'assistant' && !m.tool_calls?.length)
				.map((m) => (typeof m.content === 'string' ? m.content : textParts(m.content)))
				.pop() ?? null,
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
		// The chunks of chat completions' stream: every one an SSE `data:` line, no event names.
		stream(id, model, body, { text, tool, refusal }) {
			const created = Math.floor(Date.now() / 1000);
			const usage = body?.stream_options?.include_usage === true;
			const chunk = (choices, extra = {}) =>
				sse(null, {
					id: `chatcmpl-${id}`,
					object: 'chat.completion.chunk',
					created,
					model,
					system_fingerprint: 'fp_vendor',
					choices,
					...(usage ? { usage: null } : {}),
					...extra,
				});
			const choice = (delta, finish = null) => [
				{ index: 0, delta, logprobs: null, finish_reason: finish },
			];
			// A refusal: its words in `delta.refusal`, the content null (as OpenAI streams one).
			const role = refusal
				? { role: 'assistant', content: null, refusal: '' }
				: { role: 'assistant', content: tool ? null : '', refusal: null };
			const head = tool
				? {
						tool_calls: [
							{
								index: 0,
								id: `call_${id}`,
								type: 'function',
								function: { name: tool.name, arguments: '' },
							},
						],
					}
				: {};
			return {
				preamble: [chunk(choice({ ...role, ...head }))],
				deltas: tool
					? tool.fragments.map((arguments_) =>
							chunk(choice({ tool_calls: [{ index: 0, function: { arguments: arguments_ } }] })),
						)
					: refusal
						? refusal.map((part) => chunk(choice({ refusal: part })))
						: text.map((content) => chunk(choice({ content }))),
				end: [
					chunk(choice({}, tool ? 'tool_calls' : 'stop')),
					...(usage
						? [
								chunk([], {
									usage: {
										prompt_tokens: 11,
										completion_tokens: 7,
										total_tokens: 18,
										prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
										completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0 },
									},
								}),
							]
						: []),
					'data: [DONE]\n\n',
				],
				// OpenAI's error mid-stream: a data line with `error` (the SDK throws an APIError).
				errorEvent: sse(null, {
					error: {
						message: 'The server had an error while processing your request.',
						type: 'server_error',
					},
				}),
			};
		},
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
		// The Responses stream: named events, each data carrying its type and a sequence_number.
		stream(id, model, body, { text, tool }) {
			let seq = 0;
			const ev = (type, data) => sse(type, { type, sequence_number: seq++, ...data });
			const inProgress = { ...response(id, model, []), status: 'in_progress', usage: null };
			const whole = text?.join('') ?? '';
			const args = tool?.fragments.join('') ?? '';
			const item = tool
				? {
						type: 'function_call',
						id: `fc_${id}`,
						call_id: `call_${id}`,
						name: tool.name,
						arguments: '',
						status: 'in_progress',
					}
				: {
						type: 'message',
						id: `msg_${id}`,
						status: 'in_progress',
						role: 'assistant',
						content: [],
					};
			const part = (t) => ({ type: 'output_text', text: t, annotations: [], logprobs: [] });
			const done = tool
				? { ...item, arguments: args, status: 'completed' }
				: { ...item, status: 'completed', content: [part(whole)] };
			const at = { item_id: item.id, output_index: 0 };
			return {
				preamble: [
					ev('response.created', { response: inProgress }),
					ev('response.in_progress', { response: inProgress }),
					ev('response.output_item.added', { output_index: 0, item }),
					...(tool
						? []
						: [ev('response.content_part.added', { ...at, content_index: 0, part: part('') })]),
				],
				deltas: tool
					? tool.fragments.map((delta) =>
							ev('response.function_call_arguments.delta', { ...at, delta }),
						)
					: text.map((delta) =>
							ev('response.output_text.delta', { ...at, content_index: 0, delta, logprobs: [] }),
						),
				end: [
					...(tool
						? [ev('response.function_call_arguments.done', { ...at, arguments: args })]
						: [
								ev('response.output_text.done', {
									...at,
									content_index: 0,
									text: whole,
									logprobs: [],
								}),
								ev('response.content_part.done', { ...at, content_index: 0, part: part(whole) }),
							]),
					ev('response.output_item.done', { output_index: 0, item: done }),
					ev('response.completed', { response: response(id, model, [done]) }),
				],
			};
		},
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
		// The answer a request asks to continue: its assistant prefix (the last message, the
		// assistant's), as Anthropic's Messages API continues it.
		partial: (body) => {
			const last = (body?.messages ?? []).at(-1);
			if (last?.role !== 'assistant') return null;
			return typeof last.content === 'string' ? last.content : textParts(last.content);
		},
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
		// The Messages stream: named events, the data repeating its type.
		stream(id, model, body, { text, tool }) {
			const ev = (type, data = {}) => sse(type, { type, ...data });
			return {
				preamble: [
					ev('message_start', {
						message: {
							id: `msg_${id}`,
							type: 'message',
							role: 'assistant',
							model,
							content: [],
							stop_reason: null,
							stop_sequence: null,
							usage: { input_tokens: 11, output_tokens: 1 },
						},
					}),
					ev('content_block_start', {
						index: 0,
						content_block: tool
							? { type: 'tool_use', id: `toolu_${id}`, name: tool.name, input: {} }
							: { type: 'text', text: '' },
					}),
					ev('ping'),
				],
				deltas: tool
					? tool.fragments.map((partial_json) =>
							ev('content_block_delta', {
								index: 0,
								delta: { type: 'input_json_delta', partial_json },
							}),
						)
					: text.map((t) =>
							ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: t } }),
						),
				end: [
					ev('content_block_stop', { index: 0 }),
					ev('message_delta', {
						delta: { stop_reason: tool ? 'tool_use' : 'end_turn', stop_sequence: null },
						usage: { output_tokens: 7 },
					}),
					ev('message_stop'),
				],
				// Anthropic's error event mid-stream (an overloaded model).
				errorEvent: ev('error', {
					error: { type: 'overloaded_error', message: 'Overloaded' },
				}),
			};
		},
	},
	// Ollama's own API (github.com/ollama/ollama docs/api.md): NDJSON when streamed (its default),
	// one JSON object otherwise; errors { error } with the status, as ollama-js's checkOk reads them.
	ollama: {
		match: (rest) => rest === '/api/chat',
		authorized: (req, keys) =>
			keys.ollama === undefined || req.headers.authorization === `Bearer ${keys.ollama}`,
		unauthorized: { error: 'unauthorized' },
		streamed: (body) => body?.stream !== false,
		ok: (id, model, text) => ({
			...ollamaLine(model, text),
			done: true,
			...ollamaDone,
		}),
		// A tool call as Ollama sends one: message.tool_calls[{ function: { name, arguments } }], the
		// arguments an object (not a JSON string), content ''.
		toolCall: (id, model, name, args) => ({
			...ollamaToolLine(model, name, args),
			done: true,
			...ollamaDone,
		}),
		// A tool's result comes back as a message of role `tool` (ChatOllama's convertToOllamaMessages).
		toolResult: (body) =>
			(body?.messages ?? [])
				.filter((m) => m.role === 'tool')
				.map((m) => String(m.content))
				.pop(),
		tooLong: { error: 'the input length exceeds the context length' },
		error: (status) => ({ error: `upstream ${status}` }),
		stream(id, model, body, { text, tool }) {
			const line = (o) => `${JSON.stringify(o)}\n`;
			return {
				contentType: 'application/x-ndjson',
				keepAlive: '',
				preamble: [],
				// A tool call streams whole, in one line (Ollama does not split its arguments).
				deltas: tool
					? [line({ ...ollamaToolLine(model, tool.name, tool.args), done: false })]
					: text.map((t) => line({ ...ollamaLine(model, t), done: false })),
				end: [line({ ...ollamaLine(model, ''), done: true, ...ollamaDone })],
			};
		},
	},
	// Azure OpenAI's deployment routes (AzureChatOpenAI on a Classic credential with an Endpoint):
	// chat completions' bodies and errors, the key in `api-key`.
	azure: {
		match: (rest) => /^\/openai\/deployments\/[^/]+\/chat\/completions$/.test(rest),
		authorized: (req, keys) => req.headers['api-key'] === (keys.azure ?? keys.openai),
		unauthorized: {
			error: {
				code: '401',
				message:
					'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.',
			},
		},
		ok: (...a) => DIALECTS.openai.ok(...a),
		toolCall: (...a) => DIALECTS.openai.toolCall(...a),
		toolResult: (body) => DIALECTS.openai.toolResult(body),
		get tooLong() {
			return DIALECTS.openai.tooLong;
		},
		error: (status) => DIALECTS.openai.error(status),
		stream: (...a) => DIALECTS.openai.stream(...a),
	},
	// Bedrock's Converse API (ChatBedrockConverse over @aws-sdk/client-bedrock-runtime): the error's
	// type in x-amzn-ErrorType, as the SDK's restJson1 parser reads it, the body { message }.
	bedrock: {
		match: (rest) => /^\/model\/[^/]+\/(converse|converse-stream)$/.test(rest),
		// ConverseStream is its own route; the body says nothing of a stream.
		streamed: (body, rest) => rest.endsWith('/converse-stream'),
		authorized: (req, keys) =>
			String(req.headers.authorization ?? '').startsWith(
				`AWS4-HMAC-SHA256 Credential=${keys.aws}/`,
			),
		unauthorized: { message: 'The security token included in the request is invalid.' },
		errorHeaders: (status) => ({
			'x-amzn-ErrorType':
				{
					400: 'ValidationException',
					403: 'UnrecognizedClientException',
					429: 'ThrottlingException',
					503: 'ServiceUnavailableException',
				}[status] ?? 'InternalServerException',
			'x-amzn-RequestId': `req-${status}`,
		}),
		ok: (id, model, text) => ({
			output: { message: { role: 'assistant', content: [{ text }] } },
			stopReason: 'end_turn',
			usage: { inputTokens: 11, outputTokens: 7, totalTokens: 18 },
			metrics: { latencyMs: 10 },
		}),
		tooLong: {
			message: 'Input is too long for requested model.',
		},
		error: (status) => ({ message: `upstream ${status}` }),
		// ConverseStream: application/vnd.amazon.eventstream, binary messages (below), each an event
		// named by its :event-type header with a JSON payload, as @aws-sdk/client-bedrock-runtime's
		// de_ConverseStreamOutput and @langchain/aws's _streamResponseChunks read them.
		stream(id, model, body, { text, tool }) {
			const ev = (type, payload) => awsEvent(type, payload);
			return {
				contentType: 'application/vnd.amazon.eventstream',
				keepAlive: '',
				preamble: [
					ev('messageStart', { role: 'assistant' }),
					...(tool
						? [
								ev('contentBlockStart', {
									contentBlockIndex: 0,
									start: { toolUse: { toolUseId: `tooluse_${id}`, name: tool.name } },
								}),
							]
						: []),
				],
				deltas: tool
					? tool.fragments.map((input) =>
							ev('contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input } } }),
						)
					: text.map((t) => ev('contentBlockDelta', { contentBlockIndex: 0, delta: { text: t } })),
				end: [
					ev('contentBlockStop', { contentBlockIndex: 0 }),
					ev('messageStop', { stopReason: tool ? 'tool_use' : 'end_turn' }),
					ev('metadata', {
						usage: { inputTokens: 11, outputTokens: 7, totalTokens: 18 },
						metrics: { latencyMs: 10 },
					}),
				],
			};
		},
	},
	gemini: {
		match: (rest) => /^\/v1beta\/models\/[^/]+:(generateContent|streamGenerateContent)$/.test(rest),
		// Streamed by its route (the SDK adds ?alt=sse), not by the body.
		streamed: (body, rest) => rest.endsWith(':streamGenerateContent'),
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
		// A tool call: a `functionCall` part (args an object), as @langchain/google-genai's
		// mapGenerateContentResultToChatResult reads it.
		toolCall: (id, model, name, args) => ({
			candidates: [
				{
					content: { parts: [{ functionCall: { name, args } }], role: 'model' },
					finishReason: 'STOP',
					index: 0,
				},
			],
			usageMetadata: { promptTokenCount: 11, candidatesTokenCount: 7, totalTokenCount: 18 },
			modelVersion: model,
		}),
		// A tool's result: a `functionResponse` part, { name, response: { result } } (an error's
		// { error: { details } }).
		toolResult: (body) =>
			(body?.contents ?? [])
				.flatMap((c) => c.parts ?? [])
				.filter((p) => p.functionResponse)
				.map(({ functionResponse: { response: r } }) =>
					typeof r?.result === 'string' ? r.result : JSON.stringify(r?.result ?? r),
				)
				.pop(),
		// streamGenerateContent?alt=sse (@google/generative-ai 0.21-0.24 processStream): `data:`
		// lines only, no comment, no event names (its parser matches /^data: (.*)\n\n/ at the head of
		// what it has read), each a whole GenerateContentResponse; the last delta carries
		// finishReason STOP and the usage, as Gemini's do. A functionCall comes whole, in one chunk.
		stream(id, model, body, { text, tool }) {
			const chunk = (parts, last) =>
				sse(null, {
					candidates: [
						{
							content: { parts, role: 'model' },
							...(last ? { finishReason: 'STOP' } : {}),
							index: 0,
						},
					],
					usageMetadata: last
						? { promptTokenCount: 11, candidatesTokenCount: 7, totalTokenCount: 18 }
						: { promptTokenCount: 11, totalTokenCount: 11 },
					modelVersion: model,
				});
			const deltas = tool
				? [chunk([{ functionCall: { name: tool.name, args: tool.args ?? {} } }], true)]
				: text.map((t, i) => chunk([{ text: t }], i === text.length - 1));
			return {
				keepAlive: '',
				preamble: [],
				deltas,
				end: deltas.length ? [] : [chunk([{ text: '' }], true)],
			};
		},
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

/** An Ollama /api/chat line (its `done` and the final counts added by the caller). */
const ollamaLine = (model, content) => ({
	model,
	created_at: new Date().toISOString(),
	message: { role: 'assistant', content },
});
/** An Ollama /api/chat line with a tool call (its `done` and the final counts added by the caller). */
const ollamaToolLine = (model, name, args) => ({
	model,
	created_at: new Date().toISOString(),
	message: {
		role: 'assistant',
		content: '',
		tool_calls: [{ function: { name, arguments: args ?? {} } }],
	},
});
const ollamaDone = {
	done_reason: 'stop',
	total_duration: 1_000_000,
	load_duration: 100_000,
	prompt_eval_count: 11,
	prompt_eval_duration: 200_000,
	eval_count: 7,
	eval_duration: 700_000,
};

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
	let c = n;
	for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
	return c >>> 0;
});
const crc32 = (buf) => {
	let c = 0xffffffff;
	for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
	return (c ^ 0xffffffff) >>> 0;
};

/**
 * One AWS event-stream message (application/vnd.amazon.eventstream): total length, headers'
 * length, the prelude's CRC32, the headers (:event-type, :content-type, :message-type, each a
 * string: name length u8, name, type 7, value length u16, value), the JSON payload, the CRC32 of
 * all that.
 */
function awsEvent(type, payload) {
	const headers = Buffer.concat(
		Object.entries({
			':event-type': type,
			':content-type': 'application/json',
			':message-type': 'event',
		}).map(([name, value]) => {
			const n = Buffer.from(name);
			const v = Buffer.from(value);
			const head = Buffer.alloc(1 + n.length + 3);
			head.writeUInt8(n.length, 0);
			n.copy(head, 1);
			head.writeUInt8(7, 1 + n.length);
			head.writeUInt16BE(v.length, 2 + n.length);
			return Buffer.concat([head, v]);
		}),
	);
	const body = Buffer.from(JSON.stringify(payload));
	const total = 12 + headers.length + body.length + 4;
	const prelude = Buffer.alloc(12);
	prelude.writeUInt32BE(total, 0);
	prelude.writeUInt32BE(headers.length, 4);
	prelude.writeUInt32BE(crc32(prelude.subarray(0, 8)), 8);
	const message = Buffer.concat([prelude, headers, body]);
	const crc = Buffer.alloc(4);
	crc.writeUInt32BE(crc32(message), 0);
	return Buffer.concat([message, crc]);
}

/** One server-sent event: `event:` when named, one `data:` line of JSON. */
function sse(event, data) {
	return `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`;
}

/** `s` in `n` pieces of about equal size (fewer when it is shorter), by code point. */
function split(s, n) {
	const chars = Array.from(s);
	const pieces = Math.min(n, chars.length);
	return Array.from({ length: pieces }, (_, i) =>
		chars
			.slice(Math.round((chars.length * i) / pieces), Math.round((chars.length * (i + 1)) / pieces))
			.join(''),
	);
}

function modelOf(dialect, rest, body) {
	if (dialect === 'azure') return decodeURIComponent(rest.split('/')[3]);
	if (dialect === 'bedrock') return decodeURIComponent(rest.split('/')[2]);
	if (dialect === 'gemini') return decodeURIComponent(rest.split('/models/')[1].split(':')[0]);
	return body?.model ?? null;
}

/**
 * Starts the vendors on a free loopback port; `keys`: { openai, anthropic, gemini, ollama?,
 * azure?, aws? } (Ollama without a key takes any request; Azure's defaults to the OpenAI key;
 * aws is the access key id Bedrock's requests are signed with).
 */
export async function startLlmVendors(keys) {
	const arrivals = [];
	const scripts = new Map();
	const served = new Map();
	// holdLast: the streams of each instance waiting for release(id), and releases that came first.
	const held = new Map();
	const released = new Map();
	const hold = (id, wait) => {
		if (released.get(id) > 0) return void released.set(id, released.get(id) - 1);
		return wait((done) => {
			if (!held.has(id)) held.set(id, new Set());
			held.get(id).add(done);
			return () => held.get(id)?.delete(done);
		});
	};
	const releaseAll = () => {
		for (const waiting of held.values()) for (const resolve of waiting) resolve();
		held.clear();
	};
	const server = http.createServer((req, res) => {
		const url = new URL(req.url, 'http://127.0.0.1');
		let raw = '';
		req.on('data', (c) => (raw += c));
		req.on('end', () => {
			const [, path0 = '', ...more] = url.pathname.split('/');
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
			const id = path0 === '_model' ? String(model) : path0;
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
						req.headers['api-key'] ??
						'',
				),
				body,
				status: 0,
				streamed:
					Boolean(d.stream) && (d.streamed ? d.streamed(body, rest) : body?.stream === true),
			};
			// The answer a continuation request carries (none for any other request).
			arrival.partial = d.partial?.(body) ?? null;
			arrivals.push(arrival);
			if (!accepted)
				return send(res, (arrival.status = 401), d.unauthorized, d.errorHeaders?.(403));
			const n = served.get(id) ?? 0;
			served.set(id, n + 1);
			const script = scripts.get(id) ?? ['ok'];
			const scripted = script[Math.min(n, script.length - 1)];
			if (scripted?.delayMs === undefined) return respond(scripted);
			// { delayMs, then }: the answer `then` after a pause; a client that closes the connection
			// first gets nothing (the arrival notes it).
			arrival.delayMs = scripted.delayMs;
			arrival.clientClosed = false;
			const timer = setTimeout(() => respond(scripted.then ?? 'ok'), scripted.delayMs);
			res.on('close', () => {
				if (res.writableEnded) return;
				clearTimeout(timer);
				arrival.clientClosed = true;
				arrival.closedAt = Date.now();
			});
			// The scripted answer, as the vendor sends it.
			function respond(answer) {
				const content = contentOf(answer, id, d, body);
				if (content && arrival.streamed)
					return streamAnswer(
						res,
						arrival,
						d.stream(id, model, body, content),
						content.options,
						(w) => hold(id, w),
					).catch(() => res.destroy());
				if (content?.tool)
					return send(
						res,
						(arrival.status = 200),
						d.toolCall(id, model, content.tool.name, content.tool.args),
					);
				if (content)
					return send(res, (arrival.status = 200), d.ok(id, model, content.text.join('')));
				if (answer === 'too_long')
					return send(res, (arrival.status = 400), d.tooLong, d.errorHeaders?.(400));
				if (typeof answer === 'number') {
					const headers = answer === 429 || answer === 503 ? { 'Retry-After': '1' } : {};
					return send(res, (arrival.status = answer), d.error(answer), {
						...d.errorHeaders?.(answer),
						...headers,
					});
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
				return send(res, answer.status, answer.body ?? d.error(answer.status), {
					...d.errorHeaders?.(answer.status),
					...answer.headers,
				});
			}
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
		/**
		 * Lets the held streams (holdLast) of instance `id` send the rest; when none waits yet, the
		 * next one to reach its hold does not wait.
		 */
		release(id) {
			const waiting = held.get(id);
			held.delete(id);
			if (waiting?.size) for (const resolve of waiting) resolve();
			else released.set(id, (released.get(id) ?? 0) + 1);
		},
		/** Forgets arrivals, scripts and early releases; a stream still held sends the rest. */
		reset() {
			arrivals.length = 0;
			scripts.clear();
			served.clear();
			released.clear();
			releaseAll();
		},
		/** Stops the server, destroying the connections still open (a stalled stream's too). */
		close: () =>
			new Promise((resolve) => {
				server.close(resolve);
				server.closeAllConnections();
			}),
	};
}

/**
 * What a success answer says, or null for an error answer: `text` (its deltas) or `tool`
 * ({ name, args, fragments }), and `options` (the { stream } answer's, else none).
 */
/** The text parts of a content list, joined. */
function textParts(content) {
	return (Array.isArray(content) ? content : [])
		.map((b) => (typeof b === 'string' ? b : b?.type === 'text' ? String(b.text ?? '') : ''))
		.join('');
}

/** The last `n` words of `text`, with the whitespace that follows them. */
function lastWords(text, n) {
	if (!n) return '';
	const words = text.match(/\S+\s*/g) ?? [];
	return words.slice(-n).join('');
}

function contentOf(answer, id, d, body) {
	const said = (text, options = {}) => ({ text: split(text, 3), options });
	if (answer === 'ok') return said(`${id} says hi`);
	if (answer === 'empty') return said('');
	if (answer === 'echo_tool')
		return said(`${id} read the tool result: ${d.toolResult?.(body) ?? 'none'}`);
	const tool = (name, args, options = {}) => ({
		tool: { name, args, fragments: split(JSON.stringify(args ?? {}), 3) },
		options,
	});
	// An agent's round: a tool call first, the tool's result read back once the request has one.
	if (answer?.tool && answer.thenEcho && d.toolResult?.(body) != null)
		return said(`${id} read the tool result: ${d.toolResult(body)}`);
	if (answer?.tool) return tool(answer.tool, answer.args);
	if (!answer?.stream) return null;
	const options = answer.stream;
	// OpenAI's refusal, streamed: `refusal` its parts, no text.
	if (options.refusal) return { text: [], refusal: options.refusal, options };
	if (options.tool) return tool(options.tool.name, options.tool.args, options);
	// A continuation: the answer the request carries, its last words repeated (`repeatWords`) or
	// all of it (`restart`), then `text`.
	if (options.continues) {
		const had = d.partial?.(body) ?? '';
		const again = options.restart ? had : lastWords(had, options.repeatWords ?? 0);
		const text = [...(options.text ?? [' and so on.'])];
		// As a model goes on from text that ends mid-line (Anthropic's prefix has no trailing
		// space): with a space first.
		const tail = again || had;
		if (tail && !/\s$/.test(tail) && text.length && !/^\s/.test(text[0])) text[0] = ` ${text[0]}`;
		return { text: again ? [again, ...text] : text, options };
	}
	return options.text ? { text: options.text, options } : said(`${id} says hi`, options);
}

/**
 * Writes a streamed answer: `events` ({ preamble, deltas, end }: SSE strings) as `o` (the
 * { stream } answer's options) shapes it, keeping `arrival`'s sent / closedAt / clientClosed.
 * `hold(wait)` resolves when the stream may send its last delta (release).
 */
async function streamAnswer(res, arrival, events, o, hold) {
	arrival.status = 200;
	arrival.sent = 0;
	arrival.closedAt = null;
	arrival.clientClosed = false;
	let over = false;
	let dropped = false;
	// What the stream waits for (a pause, a hold, a write, the end of a stall): `start(done)` begins
	// it and may return its cleanup; the response closing ends every wait at once.
	const wake = new Set();
	const wait = (start) =>
		new Promise((resolve) => {
			if (over) return resolve();
			let cleanup;
			const done = () => {
				wake.delete(done);
				cleanup?.();
				resolve();
			};
			wake.add(done);
			cleanup = start?.(done);
		});
	const pause = (ms) =>
		ms > 0
			? wait((done) => {
					const timer = setTimeout(done, ms);
					return () => clearTimeout(timer);
				})
			: undefined;
	const put = (chunk) => (over ? undefined : wait((done) => void res.write(chunk, () => done())));
	res.on('close', () => {
		over = true;
		arrival.closedAt ??= Date.now();
		arrival.clientClosed = !dropped && !res.writableEnded;
		for (const resolve of [...wake]) resolve();
	});
	// Stamped now: the socket's close event may come after the client has seen the drop.
	const drop = () => {
		dropped = true;
		arrival.closedAt = Date.now();
		res.destroy();
	};
	res.writeHead(200, {
		'Content-Type': events.contentType ?? 'text/event-stream; charset=utf-8',
		'Cache-Control': 'no-cache',
		Connection: 'keep-alive',
	});
	if (o.stallAfterHeaders === true) {
		res.flushHeaders();
		return wait();
	}
	if (events.keepAlive !== '') await put(events.keepAlive ?? ': keep-alive\n\n');
	for (const event of events.preamble) await put(event);
	if (o.stallAfterHeaders) return wait();
	await pause(o.firstDelayMs);
	const n = events.deltas.length;
	for (const [i, delta] of events.deltas.entries()) {
		if (i > 0) await pause(o.gapMs);
		if (over) return;
		if (i === o.dropAfter) return drop();
		// A stall mid-answer: nothing more, the connection open, until the client closes it.
		if (i === o.stallAfter) return wait();
		// A malformed chunk mid-answer (an event whose data is not JSON), then the end.
		if (i === o.garbageAfter) {
			await put('data: {"choices": [{"delta": {"content": "broken\n\n');
			return over ? undefined : res.end();
		}
		// The vendor's error event mid-answer (an overloaded model), then the end of the stream.
		if (i === o.errorAfter && events.errorEvent) {
			await put(events.errorEvent);
			return over ? undefined : res.end();
		}
		if (o.holdLast && i === n - 1) await hold(wait);
		await put(delta);
		if (!over) arrival.sent++;
	}
	if (n > 0) await pause(o.gapMs);
	if (over) return;
	if (o.dropAfter >= n) return drop();
	if (o.stallAfter >= n) return wait();
	if (o.garbageAfter >= n) {
		await put('data: {"choices": [{"delta": {"content": "broken\n\n');
		return over ? undefined : res.end();
	}
	if (o.errorAfter >= n && events.errorEvent) {
		await put(events.errorEvent);
		return over ? undefined : res.end();
	}
	if (o.holdLast && n === 0) await hold(wait);
	for (const event of events.end) await put(event);
	if (!over) res.end();
}

function send(res, status, body, headers = {}) {
	res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
	res.end(JSON.stringify(body));
}

export { keyHash };

/** Gemini's 429 as the real API sends it: no header says when, the wait is `retryDelay` of the
 * error body's google.rpc.RetryInfo (beside a QuotaFailure). */
export const geminiQuotaError = (retryDelay) => ({
	error: {
		code: 429,
		message: 'You exceeded your current quota, please check your plan and billing details.',
		status: 'RESOURCE_EXHAUSTED',
		details: [
			{
				'@type': 'type.googleapis.com/google.rpc.QuotaFailure',
				violations: [{ quotaId: 'GenerateRequestsPerMinutePerProjectPerModel-FreeTier' }],
			},
			{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay },
		],
	},
});

/** OpenAI's answer to a prompt it refuses (Chat Completions): no content, `words` under
 * `refusal`, finished with `stop`. */
export const openAiRefusal = (words) => ({
	status: 200,
	body: {
		id: 'chatcmpl-refused',
		object: 'chat.completion',
		created: 1,
		model: 'gpt-4o-mini',
		choices: [
			{
				index: 0,
				message: { role: 'assistant', content: null, refusal: words },
				finish_reason: 'stop',
			},
		],
		usage: { prompt_tokens: 11, completion_tokens: 9, total_tokens: 20 },
	},
});

/** OpenAI's 400 for a request no model would take (a parameter out of range). */
export const openAiBadRequest = () => ({
	status: 400,
	body: {
		error: {
			message: "Invalid value for 'temperature': must be at most 2.",
			type: 'invalid_request_error',
			param: 'temperature',
			code: 'invalid_value',
		},
	},
});
