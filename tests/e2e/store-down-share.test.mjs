// The shared store goes down mid-run (issue 59, the safe share), in real n8n (N8N_MAJOR=2:
// 2.41.1; 1: 1.123.81), counted at a loopback OpenAI-compatible vendor that takes K = 4 requests
// at once, answers in 300 ms and 429 + Retry-After: 1 above (tests/support/tpm-vendor.mjs). Two
// processes (`n8n execute` each) run a Call Chain 2.2 batch at its defaults on one Redis (a
// throwaway server of this test), the same provider: the fleet's limit is learned and split
// between them. Once the vendor has served both, Redis is stopped. Each item falls back to its
// process's memory (On Store Failure: fail open, the default), where each process would learn the
// vendor's whole limit as if alone; it keeps to the share it last read from the fleet's row
// instead (src/limits/fleet_limit.rs, `Seat::safe`). Held: every item leaves served or deferred
// with its retry_at, none failed; the items after the stop say they fell back; and the vendor
// answers few 429s after it: at most 2 % of the requests since (the processes' safe shares add up
// to what the vendor takes, give or take the call one of them was probing with; before, each
// process's memory started at the breaker's threshold and probed the vendor on its own: 24 of 544
// requests answered 429 on n8n 2; with the safe share 2 of 519 on both majors).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { n8nInstall, n8nInstance, outputs, uid } from '../support/n8n.mjs';
import { startOwnRedis } from '../support/own-redis.mjs';
import { redisCredential } from '../support/store-credentials.mjs';
import { startTpmVendor } from '../support/tpm-vendor.mjs';
import { redisBatch } from '../support/batch-workflow.mjs';
import { installLikeN8n } from './clean-checkout.mjs';
import { packWorktree } from '../chat/support.mjs';

const major = Number(process.env.N8N_MAJOR ?? 2);
const tag = uid().slice(0, 8);
const REDIS = { id: `rpcDown${tag}`.slice(0, 16), name: 'store down redis' };
const K = 4;
const LATENCY_MS = 300;
const ITEMS = 300;
/** Served calls before the stop: the fleet's limit learned, both processes holding shares. */
const SERVED_BEFORE_KILL = 80;
let vendor, redis, first, second;

before(async () => {
	vendor = await startTpmVendor({ tpm: 1e9, delayMs: LATENCY_MS, capacity: K });
	redis = await startOwnRedis();
	first = n8nInstance(n8nInstall(major), { extensions: null });
	installLikeN8n(packWorktree(), first.home);
	first.importCredentials([redisCredential(REDIS.id, REDIS.name, redis.port)]);
	second = n8nInstance(n8nInstall(major), { extensions: null, copyOf: first });
});
after(async () => {
	await vendor?.close();
	await redis?.stop();
});

/** Resolves once `check()` holds, looked at every 20 ms, failing after `ms`. */
async function until(what, check, ms = 120_000) {
	for (const end = Date.now() + ms; !check();) {
		assert.ok(Date.now() < end, `waited ${ms} ms for ${what}`);
		await new Promise((r) => setTimeout(r, 20));
	}
}

test(`n8n ${major}: with the store down, two processes keep to the shares of the vendor they last knew`, async (t) => {
	const batch = (n8n, id, model) => {
		const wf = redisBatch(n8n, id, {
			provider: `down-${tag}`,
			model,
			baseUrl: `${vendor.url('down')}/v1`,
			items: ITEMS,
			redis: REDIS,
		});
		n8n.importWorkflow(wf);
		return wf;
	};
	const a = batch(first, `downA${tag}`, 'gpt-a');
	const b = batch(second, `downB${tag}`, 'gpt-b');
	const runs = Promise.all([
		first.execute(a.id, { timeoutMs: 300_000 }),
		second.execute(b.id, { timeoutMs: 300_000 }),
	]);
	const log = () => vendor.stats('down').log;
	const served = (model) => log().filter((e) => e.model === model && e.status === 200 && e.end);
	await until(
		`${SERVED_BEFORE_KILL} calls served, both processes among them`,
		() =>
			served('gpt-a').length + served('gpt-b').length >= SERVED_BEFORE_KILL &&
			served('gpt-a').length > 0 &&
			served('gpt-b').length > 0,
	);
	const stoppedAt = Date.now();
	await redis.stop();
	const done = await runs;
	for (const r of done) assert.ok(r.run, r.log.slice(-2000));
	const since = log().filter((e) => e.at >= stoppedAt);
	const r429 = since.filter((e) => e.status === 429).length;
	let fellBack = 0;
	for (const [k, r] of done.entries()) {
		const [ok, deferred, failed] = outputs(r.run, 'batch');
		const all = [...(ok ?? []), ...(deferred ?? []), ...(failed ?? [])];
		fellBack += all.filter((i) => i.json._resilience?.storeFallback).length;
		t.diagnostic(
			`batch ${k ? 'B' : 'A'}: ${ok?.length ?? 0} served, ${deferred?.length ?? 0} deferred, ${failed?.length ?? 0} failed`,
		);
		assert.equal(failed?.length ?? 0, 0, 'none failed');
		assert.equal(all.length, ITEMS, 'every item leaves');
		for (const d of deferred ?? []) assert.ok(d.json._resilience?.retry_at, JSON.stringify(d.json));
	}
	t.diagnostic(
		`n8n ${major}: Redis stopped after ${log().length - since.length} requests; since: ${since.length} requests, ${r429} answered 429, ${fellBack} items fell back to memory`,
	);
	assert.ok(fellBack > 0, 'items after the stop fell back to their process memory');
	assert.ok(since.length >= ITEMS, `${since.length} requests after the stop`);
	assert.ok(r429 <= 0.02 * since.length, `${r429} of ${since.length} answered 429 after the stop`);
});
