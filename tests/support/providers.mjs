// Loopback providers that play scripted behaviours and log every arrival: the count that
// matters is taken here, at the provider, never from n8n.
//   node providers.mjs <port> <log.jsonl>     (or import { startProviders })
// Routes (per route counters; ?id= separates counters of separate scenarios):
//   /ok?delay=ms        200 {"ok":true,"served_by":...} (after delay ms); &usage=1 adds OpenAI's
//                       usage (12 prompt tokens, 5 completion tokens)
//   /always500          500
//   /storm?pct=30       pct of every 100 arrivals answer 503 (spread: arrival n fails when
//                       37n mod 100 < pct), the rest 200
//   /tail?slow=5&ms=1500&fast=20  200 after `fast` ms, or after `ms` for `slow` of every 100
//                       arrivals (spread as /storm); an arrival whose connection closed before
//                       its answer records `closed: true` (a hedge's loser, aborted)
//   /status/<code>      that status
//   /flaky-ra?n=2       first n answers 429 Retry-After: 1, then 200
//   /flaky-date?n=1     first n answers 503 Retry-After: <HTTP-date 2 s ahead>, then 200
//   /hint3600           503 Retry-After: 3600
//   /fail-then-ok?n=1   first n answers 503, then 200
//   /drip               200 that sends one byte a second, forever
//   /garbage-ra         503 with Retry-After: -5
//   /healthy            200 after a random 200-300 ms
//   /cap?k=K            at most K calls at once, each 200 after 250 ms; above, 429 + Retry-After: 1
//   /dead               500 after a random 0-300 ms
//   (the three count the most calls held at once: `capacity(route, id)`; /cap also the most in
//   flight at the vendor counting the one arriving, whatever it is answered: `peak`)
//   /cap?...&hold=<ms>  the same, each 200 after that many ms
//   /ra?v=<value>&n=1   first n answers 503 (or ?status=) with Retry-After: <value> (any text), then 200;
//                       ?big=<bytes> sends a Retry-After of that many '9's instead
//   /not-json?ct=<type> 200 whose body is not JSON (<html>…), Content-Type <type> (text/html)
//   /reset-mid-body     200, Content-Length 1000, 10 bytes, then the socket is destroyed
//   /hang               never answers (no status line)
//   /never-ends         200 and half a body, then silence, forever
//   /redirect-loop      302 to itself, forever
//   /echo-auth          200 {"you_sent": <the Authorization header>}: a provider that reflects keys
//   /echo-token         200 {"nested":[{"token": <the last word of the Authorization header>}]}
//   /echo-auth-fail?status=500  that status, the Authorization header in the error body (as a
//                       key and a value) and in Retry-After, X-RateLimit-Reset and X-Echo
//   /garbage            in turn: 200 non-JSON, 503 Retry-After: abc, socket destroyed, 502 bad JSON
//   /need-auth/<scheme> 200 {"ok":true,"scheme"} when the request carries the auth set by
//                       `expectAuth` for that scheme (header, bearer, query, basic), else 401;
//                       the arrival records `accepted`
//   /echo-all?status=200  that status with every request header and the query string in the body
//                       (and in X-Echo): a provider that reflects whatever auth it got
//   /__log              the arrival log as JSON;  /__reset clears it
// Each arrival records `auth: 'present'` and `authHash` (sha256 of the Authorization header, 16
// hex digits), so a test can check that its exact secret arrived without the log holding it.
import http from 'node:http';
import { createHash } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { BRIEF } from './brief20.mjs';

export function startProviders(port = 0, logFile = null) {
	const arrivals = [];
	const counters = new Map();
	/** Calls being answered now, and the most at once, per route and id (the capacity routes). */
	const atOnce = new Map();
	const expected = {};
	const server = http.createServer((req, res) => {
		const url = new URL(req.url, 'http://127.0.0.1');
		const route = url.pathname;
		if (route === '/__log') return send(res, 200, arrivals);
		if (route === '/__reset') {
			arrivals.length = 0;
			counters.clear();
			return send(res, 200, { ok: true });
		}
		let body = '';
		req.on('data', (c) => (body += c));
		req.on('end', () => {
			const key = `${route}?${url.searchParams.get('id') ?? ''}`;
			const seen = (counters.get(key) ?? 0) + 1;
			counters.set(key, seen);
			const arrival = {
				t: Date.now(),
				method: req.method,
				route,
				id: url.searchParams.get('id'),
				n: seen,
				idempotencyKey: req.headers['idempotency-key'] ?? null,
				auth: req.headers.authorization ? 'present' : null,
				authHash: req.headers.authorization ? authHash(req.headers.authorization) : null,
				body,
			};
			arrivals.push(arrival);
			if (logFile) appendFileSync(logFile, JSON.stringify(arrival) + '\n');
			const n = Number(url.searchParams.get('n') ?? 1);
			if (route.startsWith('/need-auth/')) {
				const scheme = route.slice('/need-auth/'.length);
				arrival.accepted = authorized(scheme, expected[scheme], req, url);
				return arrival.accepted
					? send(res, 200, { ok: true, scheme })
					: send(res, 401, { error: `${scheme} auth required` });
			}
			if (route === '/echo-all') {
				const echo = JSON.stringify({ headers: req.headers, query: url.search });
				return send(
					res,
					Number(url.searchParams.get('status') ?? 200),
					{ ok: true, headers: req.headers, query: url.search },
					{ 'X-Echo': encodeURIComponent(echo) },
				);
			}
			// Item Concurrency's vendors: how many calls at once they hold, and the most ever.
			const hold = (ms, status) => {
				const c = atOnce.get(key) ?? { now: 0, most: 0 };
				atOnce.set(key, c);
				c.most = Math.max(c.most, ++c.now);
				arrival.status = status;
				setTimeout(() => {
					c.now--;
					send(res, status, { ok: status === 200 });
				}, ms);
			};
			if (route === '/healthy') return hold(200 + Math.random() * 100, 200);
			if (route === '/dead') return hold(Math.random() * 300, 500);
			if (route === '/cap') {
				const c = atOnce.get(key) ?? { now: 0, most: 0 };
				atOnce.set(key, c);
				// In flight at the vendor as this one arrives, a 429 included (answered at once).
				c.peak = Math.max(c.peak ?? 0, c.now + 1);
				if (c.now >= Number(url.searchParams.get('k'))) {
					arrival.status = 429;
					return send(res, 429, { error: 'busy' }, { 'Retry-After': '1' });
				}
				return hold(Number(url.searchParams.get('hold') ?? 250), 200);
			}
			if (route === '/ok') {
				const reply = () =>
					send(res, 200, {
						ok: true,
						served_by: url.searchParams.get('name') ?? 'ok',
						echo: body ? JSON.parse(body) : null,
						...(url.searchParams.get('usage')
							? { usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 } }
							: {}),
					});
				const delay = Number(url.searchParams.get('delay') ?? 0);
				return delay ? setTimeout(reply, delay) : reply();
			}
			// Answer Check's vendors, in OpenAI's chat completions dialect (an LLM preset's base URL
			// /answers/<mode>/<id>): `badjson3` answers text that is not JSON on every third arrival,
			// `cut4` an answer cut at its token limit (finish_reason length) on every fourth,
			// `valid` a fenced JSON brief always; `policy400` a content-policy 400, `refusal` OpenAI's
			// refusal, `empty` no text. Each arrival records what it was answered.
			if (route.startsWith('/answers/')) {
				const [, , mode, id] = route.split('/');
				const n = seen; // per route: per mode and id
				arrival.id = id;
				const brief = `\`\`\`json\n${JSON.stringify({ title: `Brief ${n}`, words: 100 + n, tags: ['a'], by: id })}\n\`\`\``;
				const chat = (content, finish = 'stop', refusal = null) =>
					send(res, 200, {
						id: `chatcmpl-${id}-${n}`,
						object: 'chat.completion',
						model: 'gpt-4o-mini',
						choices: [
							{ index: 0, message: { role: 'assistant', content, refusal }, finish_reason: finish },
						],
						usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
					});
				// `repairable`: not JSON, unless the request is a repair round (its last turn quotes
				// the validation errors); then the brief.
				const repairRound = /does not satisfy the required JSON Schema/.test(body);
				arrival.repairRound = repairRound;
				const answer =
					mode === 'repairable' && !repairRound
						? 'bad'
						: mode === 'badjson3' && n % 3 === 1
							? 'bad'
							: mode === 'cut4' && n % 4 === 1
								? 'cut'
								: ['policy400', 'refusal', 'empty'].includes(mode)
									? mode
									: 'ok';
				arrival.answered = answer;
				if (answer === 'bad') return chat('Sure! Here is the brief: {"title": "Brief", words: 12');
				if (answer === 'cut') return chat('```json\n{"title": "Brief", "wor', 'length');
				if (answer === 'policy400')
					return send(res, 400, {
						error: {
							message: 'Your request was rejected as a result of our safety system.',
							type: 'invalid_request_error',
							code: 'content_policy_violation',
						},
					});
				if (answer === 'refusal') return chat(null, 'stop', "I'm sorry, I can't help with that.");
				if (answer === 'empty') return chat('');
				return chat(brief);
			}
			// A 20-field answer satisfying BRIEF_SCHEMA (Answer Check's cost in bench-overhead).
			if (route === '/brief20') return send(res, 200, BRIEF);
			if (route === '/always500') return send(res, 500, { error: 'down' });
			// A storm: `pct` of every 100 arrivals (of this route and id) answer 503, spread.
			if (route === '/storm') {
				const pct = Number(url.searchParams.get('pct') ?? 30);
				const failing = (seen * 37) % 100 < pct;
				return failing ? send(res, 503, { error: 'storm' }) : send(res, 200, { ok: true });
			}
			// A slow tail: `slow` of every 100 arrivals answer late; an aborted one is noted.
			if (route === '/tail') {
				const late = (seen * 37) % 100 < Number(url.searchParams.get('slow') ?? 5);
				const ms = Number(url.searchParams.get(late ? 'ms' : 'fast') ?? (late ? 1500 : 20));
				arrival.late = late;
				const timer = setTimeout(() => send(res, 200, { ok: true, late }), ms);
				res.on('close', () => {
					if (res.writableEnded) return;
					arrival.closed = true;
					clearTimeout(timer);
				});
				return;
			}
			if (route.startsWith('/status/'))
				return send(res, Number(route.slice(8)), { status: Number(route.slice(8)) });
			if (route === '/flaky-ra')
				return seen <= n
					? send(res, 429, { error: 'slow down' }, { 'Retry-After': '1' })
					: send(res, 200, { ok: true, after: seen - 1 });
			if (route === '/flaky-date') {
				const at = new Date(Math.ceil((Date.now() + 2000) / 1000) * 1000).toUTCString();
				return seen <= n
					? send(res, 503, { error: 'busy' }, { 'Retry-After': at })
					: send(res, 200, { ok: true });
			}
			if (route === '/hint3600')
				return send(res, 503, { error: 'maintenance' }, { 'Retry-After': '3600' });
			if (route === '/fail-then-ok')
				return seen <= n
					? send(res, 503, { error: 'flaky' })
					: send(res, 200, { ok: true, attempts: seen });
			if (route === '/garbage-ra') return send(res, 503, { error: 'x' }, { 'Retry-After': '-5' });
			if (route === '/ra') {
				const v = url.searchParams.has('big')
					? '9'.repeat(Number(url.searchParams.get('big')))
					: (url.searchParams.get('v') ?? '');
				const status = Number(url.searchParams.get('status') ?? 503);
				return seen <= n
					? send(res, status, { error: 'busy' }, { 'Retry-After': v })
					: send(res, 200, { ok: true, after: seen - 1 });
			}
			if (route === '/not-json') {
				res.writeHead(200, { 'Content-Type': url.searchParams.get('ct') ?? 'text/html' });
				return res.end('<html><body>not json {"half":</body></html>');
			}
			if (route === '/reset-mid-body') {
				// The socket held now: by the timer, the request's and the response's may both be
				// detached (null), and the client would wait for the other 990 bytes forever (seen
				// twice beside a CPU hog: a guard test's `n8n execute` hung 300 s).
				const socket = req.socket;
				res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': '1000' });
				res.write('{"partial":');
				return setTimeout(() => socket.destroy(), 50);
			}
			if (route === '/hang') return; // the socket stays open, nothing is ever sent
			if (route === '/never-ends') {
				res.writeHead(200, { 'Content-Type': 'application/json' });
				return res.write('{"started":true,');
			}
			if (route === '/redirect-loop') return send(res, 302, { to: 'self' }, { Location: req.url });
			if (route === '/echo-auth')
				return send(res, 200, { ok: true, you_sent: req.headers.authorization ?? null });
			if (route === '/echo-token')
				return send(res, 200, {
					ok: true,
					nested: [
						{
							token: String(req.headers.authorization ?? '')
								.split(' ')
								.pop(),
						},
					],
				});
			if (route === '/echo-auth-fail') {
				const auth = String(req.headers.authorization ?? '');
				return send(
					res,
					Number(url.searchParams.get('status') ?? 500),
					{ error: `invalid key ${auth}`, [auth]: auth },
					{ 'Retry-After': auth, 'X-RateLimit-Reset': auth, 'X-Echo': auth },
				);
			}
			if (route === '/garbage') {
				const turn = (seen - 1) % 4;
				if (turn === 0) {
					res.writeHead(200, { 'Content-Type': 'text/plain' });
					return res.end('\u0000<<garbage>>\uffff');
				}
				if (turn === 1) return send(res, 503, { error: 'x' }, { 'Retry-After': 'abc' });
				if (turn === 2) return req.socket.destroy();
				res.writeHead(502, { 'Content-Type': 'application/json' });
				return res.end('{"error": "bad gateway",,,');
			}
			if (route === '/drip') {
				res.writeHead(200, { 'Content-Type': 'application/json' });
				const timer = setInterval(() => res.write(' '), 1000);
				res.on('close', () => clearInterval(timer));
				return;
			}
			send(res, 404, { error: 'no such route' });
		});
	});
	return new Promise((resolve) =>
		server.listen(port, '127.0.0.1', () =>
			resolve({
				server,
				port: server.address().port,
				arrivals,
				/** A capacity route's figures for `id`: calls, 429s, the most calls at once. */
				capacity: (route, id) => {
					const seen = arrivals.filter((a) => a.route === route && a.id === id);
					return {
						calls: seen.length,
						r429: seen.filter((a) => a.status === 429).length,
						most: atOnce.get(`${route}?${id}`)?.most ?? 0,
						peak: atOnce.get(`${route}?${id}`)?.peak ?? 0,
					};
				},
				/** The auth each /need-auth/<scheme> route accepts: { header: { name, value },
				 * bearer: token, query: { name, value }, basic: { user, password } }. */
				expectAuth: (auth) => Object.assign(expected, auth),
				close: () =>
					new Promise((r) => {
						server.closeAllConnections?.();
						server.close(r);
					}),
			}),
		),
	);
}

function authorized(scheme, want, req, url) {
	if (want === undefined) return false;
	const auth = req.headers.authorization;
	if (scheme === 'header') return req.headers[want.name.toLowerCase()] === want.value;
	if (scheme === 'bearer') return auth === `Bearer ${want}`;
	if (scheme === 'query') return url.searchParams.get(want.name) === want.value;
	if (scheme === 'basic')
		return auth === `Basic ${Buffer.from(`${want.user}:${want.password}`).toString('base64')}`;
	return false;
}

function authHash(value) {
	return createHash('sha256').update(String(value)).digest('hex').slice(0, 16);
}
export { authHash };

function send(res, status, body, headers = {}) {
	res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
	res.end(JSON.stringify(body));
}

if (import.meta.url === `file://${process.argv[1]}`) {
	const p = await startProviders(Number(process.argv[2] ?? 0), process.argv[3] ?? null);
	console.log(JSON.stringify({ port: p.port }));
}
