// The scripted vendor of a simulator scenario, as a real loopback HTTP server: the same rules as
// simulator/src/vendor.rs (banned? -> in an outage? -> over the quota? -> served), on the
// wall clock from `begin()`. Every arrival is logged with its time, the worker it came from
// (`x-worker`, set by the workflow from the worker's env) and what it was answered.
//   /api?exec=<n>   the vendor;   /done?exec=<n>&policy=<p>   an execution finished (not counted)
//   /failed?exec=<n>  an execution gave its item up (the node's failed output; not counted)
import http from 'node:http';

export function startVendor(spec) {
	const v = spec.vendor;
	const outages = (v.outages ?? []).map((o) => ({
		from: o.from_s * 1000,
		to: o.to_s == null ? Infinity : o.to_s * 1000,
		status: o.status ?? 503,
		latency: o.latency_ms,
	}));
	const quota = v.quota
		? {
				requests: v.quota.requests,
				period: v.quota.period_ms ?? 1000,
				retryAfter: v.quota.retry_after_s,
			}
		: null;
	const ban = v.ban
		? {
				overS: v.ban.over_quota_s,
				forMs: v.ban.for_s * 1000,
				status: v.ban.status ?? 403,
				latency: v.ban.latency_ms,
			}
		: null;
	let t0 = null,
		state,
		hangNext = null;
	const arrivals = [],
		done = new Map(),
		failed = new Map(),
		hung = [];
	const reset = () => {
		state = { window: -1, used: 0, lastOverS: null, streak: 0, bannedUntil: 0, bans: [] };
	};
	reset();

	const latency = (fixed) =>
		(fixed ?? v.latency_ms ?? 0) + Math.random() * (v.latency_jitter_ms ?? 0);
	function meter(now) {
		if (!quota) return null;
		const window = Math.floor(now / quota.period);
		if (window !== state.window) {
			state.window = window;
			state.used = 0;
		}
		if (++state.used <= quota.requests) return null;
		const second = Math.floor(now / 1000);
		if (state.lastOverS === second) {
			/* same second */
		} else if (state.lastOverS === second - 1) state.streak += 1;
		else state.streak = 1;
		state.lastOverS = second;
		if (ban && state.streak >= ban.overS) {
			state.bannedUntil = now + ban.forMs;
			state.bans.push([now, state.bannedUntil]);
			state.streak = 0;
			state.lastOverS = null;
		}
		const leftMs = (window + 1) * quota.period - now;
		const seconds = quota.retryAfter ?? Math.max(1, Math.ceil(leftMs / 1000));
		return {
			status: 429,
			kind: 'over_quota',
			headers: { 'Retry-After': String(seconds) },
			latency: latency(),
		};
	}
	function answer(now) {
		if (now < state.bannedUntil)
			return { status: ban.status, kind: 'banned', latency: latency(ban.latency) };
		const outage = outages.find((o) => o.from <= now && now < o.to);
		if (!outage || v.limiter_during_outage) {
			const r = meter(now);
			if (r) return r;
		}
		if (outage) return { status: outage.status, kind: 'outage', latency: latency(outage.latency) };
		return { status: 200, kind: 'served', latency: latency() };
	}

	const server = http.createServer((req, res) => {
		const url = new URL(req.url, 'http://x');
		const now = t0 === null ? 0 : Date.now() - t0;
		const exec = url.searchParams.get('exec');
		if (url.pathname === '/done' || url.pathname === '/failed') {
			(url.pathname === '/done' ? done : failed).set(exec, now);
			res.writeHead(200, { 'content-type': 'application/json' });
			return res.end('{"ok":true}');
		}
		if (url.pathname !== '/api') {
			res.writeHead(404);
			return res.end();
		}
		// The scenario clock starts at the first request the vendor receives, not when the harness
		// fires the first webhook: on a loaded machine n8n's queue takes seconds to start the first
		// execution, and an outage timed from the firing would be over before any traffic met it.
		if (t0 === null) t0 = Date.now();
		const worker = req.headers['x-worker'] ?? null;
		if (hangNext && hangNext(now)) {
			// Never answered: the harness kills the worker that sent it (a probe lost with its worker).
			hangNext = null;
			const a = { t: now, exec, worker, status: null, kind: 'hung' };
			arrivals.push(a);
			hung.push(a);
			server.emit('hung', a);
			return;
		}
		const r = answer(now);
		arrivals.push({ t: now, exec, worker, status: r.status, kind: r.kind });
		setTimeout(() => {
			res.writeHead(r.status, { 'content-type': 'application/json', ...(r.headers ?? {}) });
			res.end(JSON.stringify(r.status === 200 ? { ok: true, exec } : { error: r.kind }));
		}, r.latency);
	});
	return new Promise((resolve) =>
		server.listen(0, '127.0.0.1', () =>
			resolve({
				port: server.address().port,
				server,
				arrivals,
				done,
				failed,
				hung,
				/** A clean log; the scenario clock (t = 0) starts at the next request. */
				begin() {
					t0 = null;
					arrivals.length = 0;
					hung.length = 0;
					done.clear();
					failed.clear();
					reset();
				},
				now: () => (t0 === null ? 0 : Date.now() - t0),
				recoveredMs: Math.max(0, ...outages.map((o) => o.to)),
				bans: () => state.bans,
				/** Leave the first request for which `pred(t)` holds unanswered. */
				hangFirst(pred) {
					hangNext = pred;
				},
				close: () =>
					new Promise((r) => {
						server.closeAllConnections?.();
						server.close(r);
					}),
			}),
		),
	);
}
