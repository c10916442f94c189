// The read-ahead store's rule without a server: a read ahead answers the next read of the same
// keys only if no write began or ended since it began, and only for as long after the read as
// it was told, and reads again while a call is out once the rows are older than it was told
// (the engine's poll says both: `read_ahead`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { ReadAheadStore } = require('../../dist/lib/store/readAhead.js');
/** This process's clock as the read-ahead store sees it, moved by the tests (no waiting). */
const clock = { t: 1_000_000, now: () => clock.t };
const aheadOf = (s) => new ReadAheadStore(s, clock.now);
/** What the engine's poll hands out for a plain call (src/rows/read_ahead.rs). */
const GRANT = { serves_ms: 100, read_again_ms: 50 };

/** A store whose rows are one version number, and whose writes finish when the test says. */
function slowStore() {
	const s = { version: 0, reads: 0, finish: [] };
	s.read = async () => (s.reads++, { now: Date.now(), rows: [String(s.version)] });
	s.write = () =>
		new Promise((resolve) =>
			s.finish.push(() => {
				s.version++;
				resolve(true);
			}),
		);
	s.now = async () => Date.now();
	return s;
}

test('the next read of the same keys takes the read ahead: one round trip', async () => {
	const s = slowStore();
	const r = aheadOf(s);
	r.readAhead(['a'], GRANT);
	assert.deepEqual((await r.read(['a'])).rows, ['0']);
	assert.equal(s.reads, 1);
	assert.deepEqual(r.tally, { used: 1, expired: 0, discarded: 0 });
});

test('a read of other keys does not take it', async () => {
	const s = slowStore();
	const r = aheadOf(s);
	r.readAhead(['a'], GRANT);
	await r.read(['a', 'b']);
	assert.equal(s.reads, 2);
	assert.deepEqual(r.tally, { used: 0, expired: 0, discarded: 1 });
});

test('a write that began before the read ahead and ended after it: the next read is fresh', async () => {
	const s = slowStore();
	const r = aheadOf(s);
	const writing = r.write('a', []);
	r.readAhead(['a'], GRANT); // may miss the write (a Postgres pool runs them on two connections)
	s.finish.shift()();
	await writing;
	assert.deepEqual((await r.read(['a'])).rows, ['1'], 'the write is seen');
	assert.deepEqual(r.tally, { used: 0, expired: 0, discarded: 1 });
});

test('a write after the read ahead: the next read is fresh', async () => {
	const s = slowStore();
	const r = aheadOf(s);
	r.readAhead(['a'], GRANT);
	const writing = r.write('a', []);
	s.finish.shift()();
	await writing;
	assert.deepEqual((await r.read(['a'])).rows, ['1']);
});

test('a read ahead is not decided on once past the time the engine gave it', async () => {
	const s = slowStore();
	const r = aheadOf(s);
	r.readAhead(['a'], { serves_ms: 30, read_again_ms: 15 });
	await new Promise((settled) => setImmediate(settled)); // the read ahead came back (at clock.t)
	clock.t += 50;
	await r.read(['a']);
	assert.equal(s.reads, 2);
	assert.deepEqual(r.tally, { used: 0, expired: 1, discarded: 1 });
});

test('a failed read ahead is no read: the item reads afresh and meets the failure there', async () => {
	const s = slowStore();
	let fail = true;
	const read = s.read;
	s.read = async (k) => {
		if (fail) throw new Error('ECONNRESET');
		return read(k);
	};
	const r = aheadOf(s);
	r.readAhead(['a'], GRANT);
	fail = false;
	assert.deepEqual((await r.read(['a'])).rows, ['0']);
});

test('rows already read serve the next reads while each is granted: no round trip', async () => {
	const s = slowStore();
	const r = aheadOf(s);
	await r.read(['a']); // the first item's own read
	for (let i = 0; i < 5; i++) {
		r.readAhead(['a'], GRANT); // its poll handed out a call and granted the rows
		await r.read(['a']);
	}
	assert.equal(s.reads, 1);
	assert.deepEqual(r.tally, { used: 5, expired: 0, discarded: 0 });
});

test("each grant serves one read: without the engine's word the next read goes to the store", async () => {
	const s = slowStore();
	const r = aheadOf(s);
	await r.read(['a']);
	r.readAhead(['a'], GRANT);
	await r.read(['a']);
	await r.read(['a']); // e.g. after a probe: its poll granted nothing
	assert.equal(s.reads, 2);
});

test('rows older than read_again_ms when a call goes out are read again while it is out', async () => {
	const s = slowStore();
	const r = aheadOf(s);
	await r.read(['a']);
	clock.t += 50;
	r.readAhead(['a'], { serves_ms: 500, read_again_ms: 40 }); // 50 ms old: read again, in the background
	assert.equal(s.reads, 2);
	assert.deepEqual((await r.read(['a'])).rows, ['0']);
	assert.equal(s.reads, 2, 'the read ahead served');
});

test("served rows carry the store's clock moved on by the time since they were read", async () => {
	const s = slowStore();
	const r = aheadOf(s);
	const first = await r.read(['a']);
	r.readAhead(['a'], GRANT);
	clock.t += 40;
	const again = await r.read(['a']);
	assert.equal(again.now - first.now, 40);
});

test('rows younger than read_again_ms when a call goes out serve it: no read while it is out', async () => {
	const s = slowStore();
	const r = aheadOf(s);
	await r.read(['a']);
	clock.t += 50;
	r.readAhead(['a'], { serves_ms: 500, read_again_ms: 400 }); // 50 ms old: young enough
	assert.equal(s.reads, 1);
	await r.read(['a']);
	assert.equal(s.reads, 1, 'the rows already read served');
});

test("a hedge's read (not granted) goes to the store and leaves the grant to the next item", async () => {
	const s = slowStore();
	const r = aheadOf(s);
	await r.read(['a']); // the item's own read
	r.readAhead(['a'], GRANT); // its poll handed out a hedging call
	await r.read(['a'], false); // the hedge decides on fresh rows
	assert.equal(s.reads, 2);
	await r.read(['a']); // the next item
	assert.equal(s.reads, 2, 'the rows already read served the next item');
	assert.deepEqual(r.tally, { used: 1, expired: 0, discarded: 0 });
});
