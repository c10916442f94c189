// Loopback providers that play scripted behaviours and log every arrival: the count that
// matters is taken here, at the provider, never from n8n.
//   node providers.mjs <port> <log.jsonl>     (or import { startProviders })
// Routes (per route counters; ?id= separates counters of separate scenarios):
//   /ok?delay=ms        200 {"ok":true,"served_by":...} (after delay ms)
//   /always500          500
//   /status/<code>      that status
//   /flaky-ra?n=2       first n answers 429 Retry-After: 1, then 200
//   /flaky-date?n=1     first n answers 503 Retry-After: <HTTP-date 2 s ahead>, then 200
//   /hint3600           503 Retry-After: 3600
//   /fail-then-ok?n=1   first n answers 503, then 200
//   /drip               200 that sends one byte a second, forever
//   /garbage-ra         503 with Retry-After: -5
//   /__log              the arrival log as JSON;  /__reset clears it
import http from 'node:http';
import { appendFileSync } from 'node:fs';

export function startProviders(port = 0, logFile = null) {
  const arrivals = [];
  const counters = new Map();
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    const route = url.pathname;
    if (route === '/__log') return send(res, 200, arrivals);
    if (route === '/__reset') { arrivals.length = 0; counters.clear(); return send(res, 200, { ok: true }); }
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const key = `${route}?${url.searchParams.get('id') ?? ''}`;
      const seen = (counters.get(key) ?? 0) + 1;
      counters.set(key, seen);
      const arrival = { t: Date.now(), method: req.method, route, id: url.searchParams.get('id'), n: seen,
        idempotencyKey: req.headers['idempotency-key'] ?? null, auth: req.headers.authorization ? 'present' : null, body };
      arrivals.push(arrival);
      if (logFile) appendFileSync(logFile, JSON.stringify(arrival) + '\n');
      const n = Number(url.searchParams.get('n') ?? 1);
      if (route === '/ok') {
        const reply = () => send(res, 200, { ok: true, served_by: url.searchParams.get('name') ?? 'ok', echo: body ? JSON.parse(body) : null });
        const delay = Number(url.searchParams.get('delay') ?? 0);
        return delay ? setTimeout(reply, delay) : reply();
      }
      if (route === '/always500') return send(res, 500, { error: 'down' });
      if (route.startsWith('/status/')) return send(res, Number(route.slice(8)), { status: Number(route.slice(8)) });
      if (route === '/flaky-ra') return seen <= n ? send(res, 429, { error: 'slow down' }, { 'Retry-After': '1' }) : send(res, 200, { ok: true, after: seen - 1 });
      if (route === '/flaky-date') {
        const at = new Date(Math.ceil((Date.now() + 2000) / 1000) * 1000).toUTCString();
        return seen <= n ? send(res, 503, { error: 'busy' }, { 'Retry-After': at }) : send(res, 200, { ok: true });
      }
      if (route === '/hint3600') return send(res, 503, { error: 'maintenance' }, { 'Retry-After': '3600' });
      if (route === '/fail-then-ok') return seen <= n ? send(res, 503, { error: 'flaky' }) : send(res, 200, { ok: true, attempts: seen });
      if (route === '/garbage-ra') return send(res, 503, { error: 'x' }, { 'Retry-After': '-5' });
      if (route === '/drip') {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        const timer = setInterval(() => res.write(' '), 1000);
        res.on('close', () => clearInterval(timer));
        return;
      }
      send(res, 404, { error: 'no such route' });
    });
  });
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve({ server, port: server.address().port, arrivals, close: () => new Promise((r) => { server.closeAllConnections?.(); server.close(r); }) })));
}

function send(res, status, body, headers = {}) {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const p = await startProviders(Number(process.argv[2] ?? 0), process.argv[3] ?? null);
  console.log(JSON.stringify({ port: p.port }));
}
