// A loopback OpenAI-compatible vendor with a token limit per minute, as OpenAI enforces one: it
// counts every request's tokens its own way (not as the node estimates them: a prompt's tokens
// are its characters / 4 times 0.8 to 1.2, by a hash of the prompt; CJK characters a token
// each), refuses a request whose input and requested maximum do not fit in the last 60 s
// (429, Retry-After and the x-ratelimit-*-tokens headers), charges what a served call used, and
// answers with OpenAI's `usage` and rate-limit headers. Every request is counted here.
//   POST /<id>/v1/chat/completions   (any Authorization, or none); `stream: true` answers
//   server-sent events, the usage in a last chunk when `stream_options.include_usage` is set
//   POST /<id>/v1/messages           Anthropic's Messages API and its limits per direction:
//   input tokens per minute (`itpm`, charged at the request) and output tokens per minute
//   (`otpm`: the request's max_tokens held at the request, charged at what it wrote once served,
//   as Anthropic estimates it), each refused with a 429 (rate_limit_error, Retry-After) and told
//   in anthropic-ratelimit-{input,output}-tokens-{limit,remaining,reset}; `usage` in its answer;
//   with `promptCache`, its system prompt cached as Anthropic's prompt caching does: the first
//   request with a system prompt writes it (`cache_creation_input_tokens`), the later ones read it
//   (`cache_read_input_tokens`), `input_tokens` the rest (`stats(id).cacheWrite`, `.cacheRead`)
// With `capacity: K`, an instance of chat completions takes at most K requests at once (a
// request holds its place until its answer ends or its client goes) and answers 429 +
// Retry-After: 1 above, as a vendor's concurrency limit does; every request is logged with its
// model, its arrival, its end and its status (`stats(id).log`), and `peakAtOnce` is the most held.
// `startTpmVendor({ tpm, itpm, otpm, delayMs, promptCache, capacity })`: `url(id)`, `stats(id)` →
// { requests, served, r429, input, output, peakMinute, peakInputMinute, peakOutputMinute, log,
// peakAtOnce }, `close()`.
import http from 'node:http';

const MINUTE = 60_000;
const DEFAULT_MAX = 256;

/** A prompt's tokens as this vendor counts them. */
export function vendorTokens(text) {
	let hash = 2166136261;
	for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 16777619);
	const factor = 0.8 + ((hash >>> 0) % 401) / 1000; // 0.8 to 1.2
	const cjk = text.match(/[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]/gu)?.length ?? 0;
	return Math.max(1, Math.round(((text.length - cjk) / 4) * factor) + cjk);
}

/** The most tokens `charges` hold in any 60 s (each charge's minute from its time). */
const peak = (charges, of = (c) => c.tokens) =>
	Math.max(
		0,
		...charges.map((c) =>
			charges.filter((d) => d.at >= c.at && d.at < c.at + MINUTE).reduce((n, d) => n + of(d), 0),
		),
	);

export async function startTpmVendor({
	tpm,
	itpm = Infinity,
	otpm = Infinity,
	delayMs = 100,
	promptCache = false,
	capacity = Infinity,
} = {}) {
	const instances = new Map();
	const of = (id) => {
		if (!instances.has(id))
			instances.set(id, {
				charges: [],
				requests: 0,
				served: 0,
				r429: 0,
				input: 0,
				output: 0,
				cached: new Set(),
				cacheWrite: 0,
				cacheRead: 0,
				atOnce: 0,
				peakAtOnce: 0,
				log: [],
			});
		return instances.get(id);
	};
	/** Tokens charged within the minute before `now` (reservations of calls still out included). */
	const used = (v, now, part = (c) => c.tokens) =>
		v.charges.filter((c) => c.at > now - MINUTE).reduce((n, c) => n + part(c), 0);
	const headers = (v, now) => {
		const left = Math.max(0, tpm - used(v, now));
		// OpenAI's reset: the time until the minute is full again (its newest charge has left).
		const newest = v.charges.findLast((c) => c.at > now - MINUTE);
		const resetS = newest ? Math.max(0.001, (newest.at + MINUTE - now) / 1000) : 0.001;
		return {
			'x-ratelimit-limit-tokens': String(tpm),
			'x-ratelimit-remaining-tokens': String(left),
			'x-ratelimit-reset-tokens': `${resetS.toFixed(3)}s`,
		};
	};
	const server = http.createServer((req, res) => {
		const anthropic = /^\/([^/]+)\/v1\/messages$/.exec(req.url ?? '');
		const m = anthropic ?? /^\/([^/]+)\/v1\/chat\/completions$/.exec(req.url ?? '');
		let raw = '';
		req.on('data', (d) => (raw += d));
		req.on('end', () => {
			if (anthropic && req.method === 'POST') return messages(of(anthropic[1]), raw, res);
			if (!m || req.method !== 'POST') {
				res.writeHead(404).end();
				return;
			}
			const v = of(m[1]);
			v.requests++;
			let body;
			try {
				body = JSON.parse(raw);
			} catch {
				res.writeHead(400, { 'content-type': 'application/json' });
				res.end(JSON.stringify({ error: { message: 'bad JSON', type: 'invalid_request_error' } }));
				return;
			}
			const entry = { model: body.model, at: Date.now(), end: 0, status: 200 };
			v.log.push(entry);
			if (v.atOnce >= capacity) {
				v.r429++;
				entry.status = 429;
				entry.end = entry.at;
				res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' });
				res.end(
					JSON.stringify({
						error: {
							message: `Rate limit reached: at most ${capacity} requests at once.`,
							type: 'requests',
							code: 'rate_limit_exceeded',
						},
					}),
				);
				return;
			}
			v.atOnce++;
			v.peakAtOnce = Math.max(v.peakAtOnce, v.atOnce);
			res.on('close', () => {
				v.atOnce--;
				entry.end = Date.now();
			});
			const prompt = (body.messages ?? [])
				.map((x) => (typeof x.content === 'string' ? x.content : JSON.stringify(x.content)))
				.join('\n');
			const input = vendorTokens(prompt);
			const max = body.max_tokens ?? body.max_completion_tokens ?? DEFAULT_MAX;
			const now = Date.now();
			if (used(v, now) + input + max > tpm) {
				v.r429++;
				entry.status = 429;
				res.writeHead(429, {
					'content-type': 'application/json',
					'retry-after': '1',
					...headers(v, now),
				});
				res.end(
					JSON.stringify({
						error: {
							message: `Rate limit reached for tokens per min (TPM): Limit ${tpm}, Used ${used(v, now)}, Requested ${input + max}.`,
							type: 'tokens',
							code: 'rate_limit_exceeded',
						},
					}),
				);
				return;
			}
			// Reserved at the request (input and the maximum), charged at what it used once served.
			const charge = { at: now, tokens: input + max };
			v.charges.push(charge);
			const output = Math.max(1, Math.round(max * (0.3 + (input % 61) / 100)));
			setTimeout(() => {
				charge.tokens = input + output;
				v.served++;
				v.input += input;
				v.output += output;
				const usage = {
					prompt_tokens: input,
					completion_tokens: output,
					total_tokens: input + output,
				};
				const text = `${m[1]} says ${'word '.repeat(Math.min(output, 40)).trim()}`;
				const h = headers(v, Date.now());
				if (body.stream) {
					res.writeHead(200, { 'content-type': 'text/event-stream', ...h });
					const chunk = (delta, finish, extra = {}) =>
						`data: ${JSON.stringify({
							id: 'c1',
							object: 'chat.completion.chunk',
							created: 1,
							model: body.model,
							choices: delta ? [{ index: 0, delta, finish_reason: finish }] : [],
							...extra,
						})}\n\n`;
					res.write(chunk({ role: 'assistant', content: text }, null));
					res.write(chunk({}, 'stop'));
					if (body.stream_options?.include_usage) res.write(chunk(null, null, { usage }));
					res.end('data: [DONE]\n\n');
					return;
				}
				res.writeHead(200, { 'content-type': 'application/json', ...h });
				res.end(
					JSON.stringify({
						id: 'c1',
						object: 'chat.completion',
						created: 1,
						model: body.model,
						choices: [
							{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' },
						],
						usage,
					}),
				);
			}, delayMs);
		});
	});

	/** Anthropic's Messages API with its input and output tokens per minute. */
	function messages(v, raw, res) {
		v.requests++;
		const body = JSON.parse(raw);
		const text = (c) =>
			typeof c === 'string' ? c : (c ?? []).map((b) => b.text ?? JSON.stringify(b)).join('');
		const system = typeof body.system === 'string' ? body.system : text(body.system);
		const prompt = [system, ...(body.messages ?? []).map((x) => text(x.content))].join('\n');
		const input = vendorTokens(prompt);
		const max = body.max_tokens;
		const now = Date.now();
		const left = (t) => ({
			input: Math.max(0, itpm - used(v, t, (c) => c.input)),
			output: Math.max(0, otpm - used(v, t, (c) => c.output)),
		});
		const headers = (t) => {
			const l = left(t);
			// When the minute is full again: its newest charge has left.
			const reset = new Date((v.charges.at(-1)?.at ?? t - MINUTE) + MINUTE).toISOString();
			return Object.fromEntries(
				['input', 'output'].flatMap((d) => [
					[`anthropic-ratelimit-${d}-tokens-limit`, String(d === 'input' ? itpm : otpm)],
					[`anthropic-ratelimit-${d}-tokens-remaining`, String(l[d])],
					[`anthropic-ratelimit-${d}-tokens-reset`, reset],
				]),
			);
		};
		const l = left(now);
		if (input > l.input || max > l.output) {
			v.r429++;
			const which = input > l.input ? 'input' : 'output';
			res.writeHead(429, {
				'content-type': 'application/json',
				'retry-after': '1',
				...headers(now),
			});
			res.end(
				JSON.stringify({
					type: 'error',
					error: {
						type: 'rate_limit_error',
						message: `This request would exceed the rate limit for your organization of ${which === 'input' ? itpm : otpm} ${which} tokens per minute.`,
					},
				}),
			);
			return;
		}
		const charge = { at: now, input, output: max, tokens: input + max };
		v.charges.push(charge);
		const output = Math.max(1, Math.round(max * (0.3 + (input % 61) / 100)));
		setTimeout(() => {
			Object.assign(charge, { output, tokens: input + output });
			v.served++;
			v.input += input;
			v.output += output;
			const said = `${body.model} says ${'word '.repeat(Math.min(output, 40)).trim()}`;
			const usage = { input_tokens: input, output_tokens: output };
			if (promptCache && system) {
				// The system prompt's tokens from the cache, written there by its first request.
				const part = Math.min(input, vendorTokens(system));
				const read = v.cached.has(system);
				v.cached.add(system);
				usage.input_tokens = input - part;
				usage[read ? 'cache_read_input_tokens' : 'cache_creation_input_tokens'] = part;
				v[read ? 'cacheRead' : 'cacheWrite'] += part;
			}
			const h = headers(Date.now());
			if (body.stream) {
				res.writeHead(200, { 'content-type': 'text/event-stream', ...h });
				const ev = (type, data = {}) =>
					`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
				const message = {
					id: 'msg_1',
					type: 'message',
					role: 'assistant',
					model: body.model,
					content: [],
				};
				res.write(
					ev('message_start', {
						message: { ...message, usage: { input_tokens: input, output_tokens: 1 } },
					}),
				);
				res.write(
					ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
				);
				res.write(
					ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: said } }),
				);
				res.write(ev('content_block_stop', { index: 0 }));
				res.write(
					ev('message_delta', {
						delta: { stop_reason: 'end_turn', stop_sequence: null },
						usage: { output_tokens: output },
					}),
				);
				res.end(ev('message_stop'));
				return;
			}
			res.writeHead(200, { 'content-type': 'application/json', ...h });
			res.end(
				JSON.stringify({
					id: 'msg_1',
					type: 'message',
					role: 'assistant',
					model: body.model,
					content: [{ type: 'text', text: said }],
					stop_reason: 'end_turn',
					stop_sequence: null,
					usage,
				}),
			);
		}, delayMs);
	}

	await new Promise((r) => server.listen(0, '127.0.0.1', r));
	const port = server.address().port;
	return {
		url: (id) => `http://127.0.0.1:${port}/${id}`,
		stats(id) {
			const v = of(id);
			return {
				requests: v.requests,
				served: v.served,
				r429: v.r429,
				input: v.input,
				output: v.output,
				peakMinute: peak(v.charges),
				peakInputMinute: peak(v.charges, (c) => c.input ?? 0),
				peakOutputMinute: peak(v.charges, (c) => c.output ?? 0),
				cacheWrite: v.cacheWrite,
				cacheRead: v.cacheRead,
				log: v.log,
				peakAtOnce: v.peakAtOnce,
			};
		},
		close: () => new Promise((r) => server.close(r)),
	};
}
