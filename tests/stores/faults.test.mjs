// Store faults and the healthy steady state, against real servers.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startProviders } from '../e2e/providers.mjs';
import { engine, stores, plan, runOne, RedisStore, redisClient, closeRedisClients, closePostgresPools, postgresPool, REDIS_PORT } from './harness.mjs';

let providers, base;
const uid = () => Math.random().toString(36).slice(2, 10);
const cmdstat = (port) => Object.fromEntries(execFileSync('redis-cli', ['-p', String(port), 'INFO', 'commandstats']).toString()
  .split('\n').filter((l) => l.startsWith('cmdstat_')).map((l) => [l.slice(8, l.indexOf(':')), Number(/calls=(\d+)/.exec(l)[1])]));
before(async () => { providers = await startProviders(); base = `http://127.0.0.1:${providers.port}`; });
after(async () => { await providers.close(); await closeRedisClients(); await closePostgresPools(); });

test('redis steady state: one round trip and no write per healthy call', async () => {
  const id = uid();
  const store = stores.redis(`h-${id}`);
  const p = plan([{ name: `ok-${id}`, url: `${base}/ok?id=${id}` }], {}, `h-${id}`);
  const eng = new engine.Engine(p.config);
  await runOne(store, p, eng, 'warm'); // loads the scripts
  const before = cmdstat(REDIS_PORT);
  for (let i = 0; i < 100; i++) await runOne(store, p, eng, `i${i}`);
  const after = cmdstat(REDIS_PORT);
  const delta = (k) => (after[k] ?? 0) - (before[k] ?? 0);
  console.log(`redis, 100 healthy calls: evalsha ${delta('evalsha')}, eval ${delta('eval')}, get ${delta('get')}, set ${delta('set')}`);
  assert.equal(delta('set'), 0, 'no write');
  assert.equal(delta('evalsha') + delta('eval'), 100, 'one script call (the read) per call');
  eng.free();
});

test('postgres steady state: no write per healthy call', async () => {
  const id = uid();
  const store = stores.postgres(`h-${id}`);
  const p = plan([{ name: `ok-${id}`, url: `${base}/ok?id=${id}`, config: { max_attempts: 2 } }], { base_ms: 1, cap_ms: 1 }, `h-${id}`);
  const eng = new engine.Engine(p.config);
  // One failure writes a row; the success after it clears it; from then on nothing changes.
  providers.arrivals.length = 0;
  await runOne(store, plan([{ name: `ok-${id}`, url: `${base}/status/503?id=${id}`, config: { max_attempts: 1 } }], {}, `h-${id}`), new engine.Engine(p.config), 'fail');
  await runOne(store, p, eng, 'heal');
  const pool = postgresPool({ host: '127.0.0.1', port: Number(process.env.RPC_PG_PORT ?? 15432), database: 'rpc', user: 'postgres' });
  const row = async () => (await pool.query('SELECT version, updated_at FROM resilient_provider_state WHERE scope = $1 AND kind = $2', [`h-${id}`, 'breaker'])).rows[0];
  const r0 = await row();
  for (let i = 0; i < 50; i++) await runOne(store, p, eng, `i${i}`);
  const r1 = await row();
  assert.deepEqual(r1, r0, 'the breaker row was not rewritten');
  eng.free();
});

async function ownRedis() {
  const port = 17000 + Math.floor(Math.random() * 2000);
  const dir = mkdtempSync(path.join(tmpdir(), 'rpc-redis-'));
  const start = () => spawn('redis-server', ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--dir', dir], { stdio: 'ignore' });
  let child = start();
  for (let i = 0; i < 50; i++) { try { execFileSync('redis-cli', ['-p', String(port), 'ping'], { stdio: 'ignore' }); break; } catch { await new Promise((r) => setTimeout(r, 100)); } }
  return {
    port,
    stop: () => new Promise((r) => { child.once('exit', r); child.kill('SIGKILL'); }),
    stall: () => child.kill('SIGSTOP'),
    resume: () => child.kill('SIGCONT'),
    restart: async () => { child = start(); await new Promise((r) => setTimeout(r, 300)); },
    kill: () => child.kill('SIGKILL'),
  };
}

for (const failOpen of [true, false]) {
  test(`redis stopped, stalled and restarted mid-run (${failOpen ? 'fail-open' : 'fail-closed'}): no item lost`, async () => {
    const r = await ownRedis();
    const id = uid();
    const store = new RedisStore(redisClient({ host: '127.0.0.1', port: r.port }), `f-${id}`);
    const p = plan([{ name: `ok-${id}`, url: `${base}/ok?id=${id}` }], {}, `f-${id}`);
    const eng = new engine.Engine(p.config);
    const results = [];
    const run = async (n) => { for (let i = 0; i < n; i++) results.push(await runOne(store, p, eng, `i${results.length}`, { timeoutMs: 300, failOpen })); };
    await run(5);
    await r.stop();
    await run(5);
    await r.restart();
    await new Promise((res) => setTimeout(res, 1500)); // ioredis reconnects
    await run(5);
    r.stall();
    const t0 = Date.now();
    await run(3);
    const stalledMs = Date.now() - t0;
    r.resume();
    await run(2);
    r.kill();
    assert.equal(results.length, 20, 'every item came back');
    const kinds = results.map((x) => (x.storeFallback ? (x.end.kind === 'done' ? 'fallback-done' : x.end.kind) : x.end.kind === 'defer' ? `defer:${x.end.reason}` : x.end.kind));
    console.log(`${failOpen ? 'fail-open' : 'fail-closed'}: ${kinds.join(' ')}; 3 items during a stall took ${stalledMs} ms`);
    assert.deepEqual(kinds.slice(0, 5), Array(5).fill('done'));
    assert.deepEqual(kinds.slice(5, 10), Array(5).fill(failOpen ? 'fallback-done' : 'defer:store_unavailable'));
    assert.deepEqual(kinds.slice(10, 15), Array(5).fill('done'), 'shared state resumes after the restart');
    assert.deepEqual(kinds.slice(15, 18), Array(3).fill(failOpen ? 'fallback-done' : 'defer:store_unavailable'));
    assert.ok(stalledMs < 3 * 2 * 300 + 1500, `the per-operation timeout bounds a stall (${stalledMs} ms)`);
    eng.free();
  });
}
