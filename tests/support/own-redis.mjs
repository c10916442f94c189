// A throwaway redis-server on a free loopback port, for tests that stop, stall or restart it
// (never the shared one of scripts/lib/services.sh).
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { freePort } from './ports.mjs';
import { tempDir } from './tmp.mjs';

/** Started and answering a ping; `stop`, `stall`, `resume`, `restart`, `kill`. */
export async function ownRedis() {
	const port = await freePort();
	const dir = tempDir('rpc-redis-');
	const start = () =>
		spawn(
			'redis-server',
			['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--dir', dir],
			{ stdio: 'ignore' },
		);
	let child = start();
	// Up when it answers a ping; not up within 5 s fails the test here, not later.
	const answering = async () => {
		for (const end = Date.now() + 5_000; ;) {
			try {
				execFileSync('redis-cli', ['-p', String(port), 'ping'], { stdio: 'ignore' });
				return;
			} catch {
				assert.ok(Date.now() < end, `redis-server on ${port} does not answer`);
				await new Promise((r) => setTimeout(r, 50));
			}
		}
	};
	await answering();
	return {
		port,
		stop: () =>
			new Promise((r) => {
				child.once('exit', r);
				child.kill('SIGKILL');
			}),
		stall: () => child.kill('SIGSTOP'),
		resume: () => child.kill('SIGCONT'),
		restart: async () => {
			child = start();
			await answering();
		},
		kill: () => child.kill('SIGKILL'),
	};
}
