// The read-ahead store's rule without a server: a read ahead answers the next read of the same
// keys only if no write began or ended since it began, and only while young.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { ReadAheadStore } = require('../../dist/lib/store/readAhead.js');
const { READ_AHEAD_MAX_AGE_MS } = require('../../dist/lib/engineConstants.js');

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
	const r = new ReadAheadStore(s);
	r.readAhead(['a']);
	assert.deepEqual((await r.read(['a'])).rows, ['0']);
	assert.equal(s.reads, 1);
	assert.deepEqual(r.tally, { used: 1, discarded: 0 });
});

test('a read of other keys does not take it', async () => {
	const s = slowStore();
	const r = new ReadAheadStore(s);
	r.readAhead(['a']);
	await r.read(['a', 'b']);
	assert.equal(s.reads, 2);
	assert.deepEqual(r.tally, { used: 0, discarded: 1 });
});

test('a write that began before the read ahead and ended after it: the next read is fresh', async () => {
	const s = slowStore();
	const r = new ReadAheadStore(s);
	const writing = r.write('a', []);
	r.readAhead(['a']); // may miss the write (a Postgres pool runs them on two connections)
	s.finish.shift()();
	await writing;
	assert.deepEqual((await r.read(['a'])).rows, ['1'], 'the write is seen');
	assert.deepEqual(r.tally, { used: 0, discarded: 1 });
});

test('a write after the read ahead: the next read is fresh', async () => {
	const s = slowStore();
	const r = new ReadAheadStore(s);
	r.readAhead(['a']);
	const writing = r.write('a', []);
	s.finish.shift()();
	await writing;
	assert.deepEqual((await r.read(['a'])).rows, ['1']);
});

test(`a read ahead older than ${READ_AHEAD_MAX_AGE_MS} ms is not decided on`, async () => {
	const s = slowStore();
	const r = new ReadAheadStore(s);
	r.readAhead(['a']);
	await new Promise((done) => setTimeout(done, READ_AHEAD_MAX_AGE_MS + 20));
	await r.read(['a']);
	assert.equal(s.reads, 2);
	assert.deepEqual(r.tally, { used: 0, discarded: 1 });
});

test('a failed read ahead is no read: the item reads afresh and meets the failure there', async () => {
	const s = slowStore();
	let fail = true;
	const read = s.read;
	s.read = async (k) => {
		if (fail) throw new Error('ECONNRESET');
		return read(k);
	};
	const r = new ReadAheadStore(s);
	r.readAhead(['a']);
	fail = false;
	assert.deepEqual((await r.read(['a'])).rows, ['0']);
});
