// The package's timers without Node's timer globals (lib/timers.ts, for n8n's package scanner):
// every Watch of the process shares one pending timeout, and still fires on time, in due order,
// never when stopped, later when restarted; the helpers built on it keep their promises.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import net from 'node:net';
import { spawn } from 'node:child_process';

const require = createRequire(import.meta.url);
const {
	Watch,
	every,
	withinDeadline,
	settledBy,
	sleepUnlessAborted,
} = require('../../dist/lib/timers.js');
const { AttemptAbort } = require('../../dist/lib/attemptAbort.js');
const waitFor = (ms) => new Promise((r) => setTimeout(r, ms));
// The shared timeout does not hold the process open (in n8n, what is waited on does: a socket, a
// server): here nothing else would, so the test holds it.
const open = setInterval(() => {}, 1000);
after(() => clearInterval(open));

test('watches fire in due order, whatever order they were armed in; a stopped one never fires', async () => {
	const fired = [];
	const t0 = Date.now();
	for (const ms of [120, 40, 80, 10, 60]) new Watch(ms, () => fired.push([ms, Date.now() - t0]));
	const stopped = new Watch(30, () => fired.push(['stopped']));
	stopped.stop();
	await waitFor(200);
	assert.deepEqual(
		fired.map(([ms]) => ms),
		[10, 40, 60, 80, 120],
	);
	for (const [ms, at] of fired) assert.ok(at >= ms - 1, `${ms} ms watch fired at ${at} ms`);
});

test('a restart moves the due time from now; restarted again and again, it fires once, after the last', async () => {
	let fired = 0;
	const t0 = Date.now();
	const idle = new Watch(60, () => fired++);
	for (let i = 0; i < 4; i++) {
		await waitFor(30);
		idle.restart();
	}
	const lastRestart = Date.now();
	await waitFor(150);
	assert.equal(fired, 1);
	assert.ok(lastRestart - t0 >= 120, 'kept alive past its first due time');
});

test('withinDeadline, settledBy, every and sleepUnlessAborted', async () => {
	await assert.rejects(withinDeadline(new Promise(() => {}), 30), /no answer within 30 ms/);
	assert.equal(await withinDeadline(Promise.resolve(7), 1000), 7);
	const t0 = Date.now();
	await settledBy(new Promise(() => {}), Date.now() + 40);
	assert.ok(Date.now() - t0 >= 39, 'settledBy waited for its deadline');
	let ticks = 0;
	const ticker = every(20, () => ticks++);
	await waitFor(110);
	ticker.stop();
	const seen = ticks;
	await waitFor(60);
	assert.ok(seen >= 3 && ticks === seen, `${seen} ticks, none after stop`);
	const cancel = new AbortController();
	const sleeping = sleepUnlessAborted(10_000, cancel.signal, () => new Error('cancelled'));
	cancel.abort();
	await assert.rejects(sleeping, /cancelled/);
});

/** An answer from another process (this one's stall must not hold it back), asked for while this
 * process stalls past the deadline: `ask(answer)` arms what is tested around the answer. */
async function stalledPastDeadline(rounds, ask) {
	const server = spawn(process.execPath, [
		'-e',
		"require('net').createServer((s) => s.on('data', () => s.write('pong'))).listen(0, '127.0.0.1', function () { console.log(this.address().port) })",
	]);
	const port = await new Promise((r) => server.stdout.once('data', (d) => r(Number(String(d)))));
	const socket = net.connect(port, '127.0.0.1');
	await new Promise((r) => socket.once('connect', r));
	try {
		for (let round = 0; round < rounds; round++) {
			const checked = ask(new Promise((r) => socket.once('data', (d) => r(String(d)))));
			socket.write('ping');
			const until = Date.now() + 200;
			while (Date.now() < until); // stalled 200 ms: the answer arrives, the 50 ms deadline passes
			await checked(round);
		}
	} finally {
		socket.destroy();
		server.kill();
	}
}

test("a store's answer that came while this process was stalled past the deadline is taken, not timed out", async () => {
	// n8n's token estimate builds its encoder on the event loop (~1 s of CPU, more on a loaded
	// machine): the deadline and the answer are then due in the same turn. The store did answer,
	// so the item must not fail open over it.
	await stalledPastDeadline(3, (answer) => {
		const answered = withinDeadline(answer, 50);
		return async (round) => assert.equal(await answered, 'pong', `round ${round}`);
	});
	// A store that stays silent still times out.
	await assert.rejects(withinDeadline(new Promise(() => {}), 50), /no answer within 50 ms/);
});

test('an attempt answered while this process was stalled past its deadline ends answered: no timeout charged to the provider', async () => {
	await stalledPastDeadline(3, (answer) => {
		const abort = new AttemptAbort();
		abort.after(50, 'deadline');
		const ended = answer.then((body) => (abort.dispose(), body));
		return async (round) => {
			assert.equal(await ended, 'pong');
			await waitFor(5);
			assert.equal(abort.fired, undefined, `round ${round}`);
			assert.equal(abort.signal.aborted, false);
		};
	});
	// A stream's idle timer restarted by a chunk that came during the stall runs again: it ends the
	// stream only once no chunk comes for its whole time.
	await stalledPastDeadline(2, (chunk) => {
		const abort = new AttemptAbort();
		const idle = abort.after(50, 'idle');
		const seen = chunk.then(() => idle.restart());
		return async (round) => {
			await seen;
			await waitFor(5);
			assert.equal(abort.signal.aborted, false, `round ${round}: the chunk restarted it`);
			await new Promise((r) => abort.signal.addEventListener('abort', r));
			assert.equal(abort.fired, 'idle');
		};
	});
	// An attempt left unanswered is still aborted at its deadline, as its deadline.
	const abort = new AttemptAbort();
	abort.after(30, 'deadline');
	await new Promise((r) => abort.signal.addEventListener('abort', r));
	assert.equal(abort.fired, 'deadline');
});

test('ten thousand watches armed at once each fire once, in due order, on one pending timeout', async () => {
	const fired = [];
	const dues = Array.from({ length: 10_000 }, (_, i) => 20 + ((i * 7919) % 50));
	const t0 = performance.now();
	const watches = dues.map((ms, i) => new Watch(ms, () => fired.push(i)));
	const perWatchUs = ((performance.now() - t0) * 1000) / watches.length;
	watches[0].stop();
	await waitFor(150);
	assert.equal(fired.length, dues.length - 1, 'each once, the stopped one never');
	assert.equal(new Set(fired).size, fired.length);
	for (let k = 1; k < fired.length; k++)
		assert.ok(watches[fired[k - 1]].dueAt <= watches[fired[k]].dueAt, 'in due order');
	console.log(
		`  ${perWatchUs.toFixed(2)} µs per watch armed (one AbortSignal.timeout each: ~40 µs)`,
	);
});
