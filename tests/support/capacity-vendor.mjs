// Loopback vendors for Item Concurrency, counted per `id`: calls, 429s, the most calls at once.
//   /healthy   200 after a random 200-300 ms
//   /cap?k=K   at most K calls at once, each 200 after 250 ms; above that 429 + Retry-After: 1
//   /dead      500 after a random 0-300 ms
import http from 'node:http';

export async function startCapacityVendor() {
	const seen = new Map();
	const of = (id) => {
		if (!seen.has(id)) seen.set(id, { calls: 0, r429: 0, now: 0, most: 0 });
		return seen.get(id);
	};
	const rand = (lo, hi) => lo + Math.random() * (hi - lo);
	const server = http.createServer((req, res) => {
		const url = new URL(req.url, 'http://x');
		const s = of(url.searchParams.get('id'));
		s.calls++;
		const answer = (status, headers = {}) => {
			res.writeHead(status, { 'content-type': 'application/json', ...headers });
			res.end(JSON.stringify({ ok: status === 200 }));
		};
		const hold = (ms, status) => {
			s.now++;
			s.most = Math.max(s.most, s.now);
			setTimeout(() => {
				s.now--;
				answer(status);
			}, ms);
		};
		if (url.pathname === '/healthy') return hold(rand(200, 300), 200);
		if (url.pathname === '/dead') return hold(rand(0, 300), 500);
		if (url.pathname === '/cap') {
			if (s.now >= Number(url.searchParams.get('k'))) {
				s.r429++;
				return answer(429, { 'retry-after': '1' });
			}
			return hold(250, 200);
		}
		answer(404);
	});
	await new Promise((r) => server.listen(0, '127.0.0.1', r));
	return {
		base: `http://127.0.0.1:${server.address().port}`,
		of,
		close: () => new Promise((r) => server.close(r)),
	};
}
